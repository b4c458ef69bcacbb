/* saccade-cli-adversarial.c — `saccade adversarial RUN`: adversarial attention of a stored
 * run (Jain & Wallace 2019, 4.2; engine/study/sc-adversarial.h): how far a head's (or a
 * layer's) attention row can move, in JSD, while the next-token distribution moves less
 * than ε in TVD. Parse -> the study's verb (saccade_cli_study_face: app/core/
 * saccade-adversarial.h computes or reuses the stored study, app/core/studies/
 * saccade-adversarial-outputs.c prints its text or JSON, with --csv one row per ε and with -o
 * the figure, the Attribution page's). Definition: docs/metrics.md, "Adversarial attention". */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"
#include "app/core/saccade-adversarial.h"

typedef struct {
  SaccadeCliFaceOptions face;   /* --db, --recompute, --csv, -o, the common ones */
  char *head, *row, *epsilon;
  int layer, iterations;
  gint64 seed;
} AdvOptions;

static gboolean G_GNUC_PRINTF (2, 3)
bad (GError **error, const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_propagate_error (error, g_error_new_valist (G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                                                format, ap));
  va_end (ap);
  return FALSE;
}

/* The options as study parameters (@eps holds the ε values), checked for what needs no
 * model; the layer, head and row against the model and run are the core's. */
static gboolean
parse_params (const AdvOptions *o, ScAdvParams *p, double *eps, GError **error)
{
  char *end;

  saccade_adversarial_params_init (p);
  if (o->layer < 0)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--layer L is required (a layer index from 0)");
      return FALSE;
    }
  p->layer = o->layer;
  if (o->head != NULL && strcmp (o->head, "all") != 0)
    {
      long h = strtol (o->head, &end, 10);
      if (*o->head == '\0' || *end != '\0' || h < 0 || h > G_MAXINT)
        return bad (error, "--head is a head index from 0 or 'all', not '%s'", o->head);
      p->head = (int) h;
    }
  if (o->row != NULL && strcmp (o->row, "all") == 0)
    p->row = SC_ADV_ALL_ROWS;
  else if (o->row != NULL && strcmp (o->row, "last") != 0)
    {
      long r = strtol (o->row, &end, 10);
      if (*o->row == '\0' || *end != '\0' || r < 1 || r > G_MAXINT)
        return bad (error, "--row is a query row from 1 (row 0 sees a single key and cannot "
                    "move), 'last' or 'all', not '%s'", o->row);
      p->row = (int) r;
    }
  if (o->epsilon != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (o->epsilon, ",", -1);
      const int n = (int) g_strv_length (parts);
      if (n < 1 || n > SC_ADV_MAX_EPSILONS)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--epsilon takes 1 to %d values, not %d", SC_ADV_MAX_EPSILONS, n);
          return FALSE;
        }
      for (int k = 0; k < n; k++)
        {
          const char *t = g_strstrip (parts[k]);
          eps[k] = g_ascii_strtod (t, &end);
          if (*t == '\0' || *end != '\0' || !(eps[k] > 0 && eps[k] <= 1))
            return bad (error, "--epsilon values are in (0, 1] (the output's total variation "
                        "distance allowed), not '%s'", t);
        }
      p->epsilons = eps;
      p->n_epsilons = n;
    }
  if (o->iterations < 0 || o->iterations > 100000)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--iterations is 1 to 100000 Adam steps per ε, not %d", o->iterations);
      return FALSE;
    }
  p->iterations = o->iterations > 0 ? o->iterations : SC_ADV_DEFAULT_ITERATIONS;
  if (o->seed < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--seed is 0 or more, not %" G_GINT64_FORMAT, o->seed);
      return FALSE;
    }
  p->seed = (uint64_t) o->seed;
  return TRUE;
}

int
saccade_cmd_adversarial (int argc, char **argv)
{
  AdvOptions o = { .layer = -1 };
  GOptionEntry entries[] = {
    { "layer", 0, 0, G_OPTION_ARG_INT, &o.layer, "the layer searched (required)", "L" },
    { "head", 0, 0, G_OPTION_ARG_STRING, &o.head,
      "one head, or all (default: every head of the layer at once)", "H" },
    { "row", 0, 0, G_OPTION_ARG_STRING, &o.row,
      "the query row: an index from 1, last (default) or all", "I" },
    { "epsilon", 0, 0, G_OPTION_ARG_STRING, &o.epsilon,
      "the output's allowed total variation distance: values in (0, 1], comma-separated "
      "(default 0.001,0.005,0.01,0.02,0.05,0.1)", "E[,E...]" },
    { "iterations", 0, 0, G_OPTION_ARG_INT, &o.iterations, "Adam steps per epsilon (100)",
      "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "the start's noise seed (0)", "S" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - how far attention can move while the next-token distribution stays within "
    "epsilon (Jain & Wallace 2019)");
  g_autoptr (GError) error = NULL;
  double eps[SC_ADV_MAX_EPSILONS];
  ScAdvParams p;
  ScModel *model;
  gint64 run = 0;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_face_parse (ctx, &o.face, &saccade_adversarial_outputs,
                               "search even if a study is stored", "adversarial", &argc, &argv,
                               &run))
    rc = 2;
  /* Refused before the model loads and the study runs. */
  else if (!parse_params (&o, &p, eps, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error)) + 1;
  else if ((model = saccade_cli_face_load_model (&o.face, &rc)) != NULL)
    rc = saccade_cli_study_face (&saccade_adversarial_outputs, &p, model, &o.face, run);
  saccade_cli_face_options_clear (&o.face); /* and the model */
  g_free (o.head);
  g_free (o.row);
  g_free (o.epsilon);
  return rc;
}
