/* saccade-cli-store.c — the helpers every verb of the capture store shares
 * (saccade-cli-store.h): the verbs themselves are capture (saccade-cli-capture.c), runs and rm
 * (saccade-cli-runs.c), show (saccade-cli-show.c), export (saccade-cli-export.c) and merge
 * (saccade-cli-merge.c). Every verb takes --db FILE (default
 * $XDG_DATA_HOME/saccade/captures.sqlite) and prints human text, or JSON with --json.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"
#include "engine/store/sc-store-heads.h"

#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-dataset.h"
#include "app/core/saccade-observer-tee.h"
#include "engine/forward/sc-predict.h"
#include "ui/figures/saccade-token-label.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* Shared                                                                                */

int
saccade_store_cli_fail (const ScError *err)
{
  fprintf (stderr, "saccade: %s\n", err->message[0] != '\0' ? err->message
                                                          : sc_status_name (err->status));
  return 1;
}

gboolean
saccade_store_cli_run_id (const char *s, gint64 *id)
{
  guint64 v = 0;

  if (s == NULL || !g_ascii_string_to_unsigned (s, 10, 1, G_MAXINT64, &v, NULL))
    {
      fprintf (stderr, "saccade: '%s' is not a run id (a positive number, as `saccade runs` "
                       "lists them)\n", s != NULL ? s : "");
      return FALSE;
    }
  *id = (gint64) v;
  return TRUE;
}

gboolean
saccade_store_cli_parse_run (GOptionContext *ctx, int *argc, char ***argv, const char *verb,
                             gint64 *run)
{
  if (!saccade_cli_parse_options (ctx, argc, argv))
    return FALSE;
  if (*argc != 2)
    {
      fprintf (stderr, "saccade: %s takes one run id (see `saccade runs`)\n", verb);
      return FALSE;
    }
  return saccade_store_cli_run_id ((*argv)[1], run);
}

/* Prints @s left-aligned in @width terminal columns. */
void
saccade_store_cli_print_padded (const char *s, int width)
{
  g_autoptr (GString) out = g_string_new (NULL);

  saccade_format_padded (out, s, width);
  fputs (out->str, stdout);
}

/* "1.2 MB" style sizes (SI units, like `saccade info`). */
char *
saccade_store_cli_bytes (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_DEFAULT);
}
