/* hostile-stores-main.c — writes every hostile store of hostile-stores.c into a folder, as
 * KIND.sqlite, and prints one line per kind: the file, what was done to it, and what
 * reading it must yield. The CLI's reading verbs (runs, show, export ...) can then be run
 * over the same files.
 *
 * Usage: hostile-stores FOLDER   ($SC_HOSTILE_HUGE_BYTES sizes the huge text cell;
 *                                 300 MB by default)
 * Exit status: 0, or 1 when a store could not be written.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "tests/store/hostile-stores.h"

static const char *
where_name (HostileWhere w)
{
  switch (w)
    {
    case HOSTILE_OK: return "reads fine";
    case HOSTILE_AT_OPEN: return "refused at open";
    case HOSTILE_AT_RUN: return "listing and getting the runs fail";
    case HOSTILE_AT_TOKENS: return "reading the tokens fails";
    case HOSTILE_AT_HEAD: return "reading one head fails";
    case HOSTILE_AT_HEADS: return "reading every head fails";
    case HOSTILE_HIDDEN: return "the runs are not there";
    case HOSTILE_SOMEWHERE: return "each reading path reads fine or fails cleanly";
    default: return "?";
    }
}

int
main (int argc, char **argv)
{
  g_autofree char *base = NULL, *every = NULL;
  const HostileKind *kinds;
  gsize n, i;
  int status = 0;

  if (argc != 2)
    {
      fprintf (stderr, "usage: hostile-stores FOLDER\n");
      return 2;
    }
  if (g_mkdir_with_parents (argv[1], 0755) != 0)
    {
      fprintf (stderr, "hostile-stores: cannot create %s\n", argv[1]);
      return 1;
    }
  base = g_build_filename (argv[1], "base.sqlite", NULL);
  g_unlink (base);
  hostile_base (base);
  printf ("%s\tthe store every other one starts from: 3 runs (4, 6, 5 tokens), 4 x 3 heads\n",
          base);
  every = g_build_filename (argv[1], "base-every.sqlite", NULL);
  g_unlink (every);
  hostile_base_every (every);
  printf ("%s\tthe store the every-* ones start from: a row in every table (3 runs, studies, "
          "a manifest)\n", every);
  kinds = hostile_kinds (&n);
  for (i = 0; i < n; i++)
    {
      g_autofree char *file = g_strconcat (kinds[i].name, ".sqlite", NULL);
      g_autofree char *path = g_build_filename (argv[1], file, NULL);
      g_autofree char *why = NULL;
      char runs[16] = "";
      int r, o = 0;

      g_unlink (path);
      if (!hostile_build (&kinds[i], hostile_base_of (&kinds[i], base, every), path, &why))
        {
          printf ("%s\tskipped: %s\n", path, why);
          continue;
        }
      for (r = 1; r <= HOSTILE_RUNS; r++)
        if ((kinds[i].bad_runs >> r) & 1)
          o += g_snprintf (runs + o, sizeof runs - (gsize) o, "%s%d", o ? "," : " run ", r);
      printf ("%s\t%s\t%s%s%s%s%s\n", path, kinds[i].what, where_name (kinds[i].where), runs,
              kinds[i].needle != NULL ? " (" : "", kinds[i].needle != NULL
                ? sc_status_name (kinds[i].status) : "", kinds[i].needle != NULL ? ")" : "");
      if (kinds[i].needle != NULL)
        printf ("\tmessage holds: %s\n", kinds[i].needle);
    }
  return status;
}
