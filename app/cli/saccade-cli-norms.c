/* saccade-cli-norms.c — `saccade norms RUN [--layer L] [--head H]`: norm-based attention of
 * a stored run (Kobayashi 2020; engine/study/sc-norm-study.h, docs/metrics.md "Norm-based
 * attention"). The study is the kind `norms` (read back when stored with the same layer,
 * else computed and stored), printed by its outputs file as `saccade study norms` prints it;
 * --head adds that head's map to the layer's. --json is the study's JSON, which holds every
 * head's map of the layer already. */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"

#include <stdio.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "app/core/saccade-paths.h"
#include "engine/study/sc-norm-study.h"

int
saccade_cmd_norms (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  g_autofree char *db = NULL, *db_path = NULL, *warning = NULL;
  gboolean recompute = FALSE;
  int layer = -1, head = -1, top = 10;
  gint64 run_id = 0;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN - norm-based attention "
                                                         "(weight times value norm)");
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeStudyRun) run = NULL;
  g_autoptr (SaccadeStudy) s = NULL;
  g_auto (GStrv) labels = NULL;
  ScNormParams params;
  g_autoptr (GString) more = NULL;
  ScStoreModel sm;
  ScModel *model = NULL;
  int rc = 0;
  const GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&recompute),
    { "layer", 0, 0, G_OPTION_ARG_INT, &layer,
      "the layer whose value norms and maps are shown (default: the middle one)", "L" },
    { "head", 0, 0, G_OPTION_ARG_INT, &head, "also print this head's map (default: the "
      "layer's only)", "H" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "heads listed by their weight-norm gap (10)", "N" },
    { NULL },
  };

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "norms", &run_id))
    return 2;
  db_path = saccade_db_path (db);
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (head < -1 || head >= (int) sc_model_info (model)->n_heads)
    {
      fprintf (stderr, "saccade: --head %d is outside 0..%u\n", head,
               sc_model_info (model)->n_heads - 1);
      rc = 2;
      goto out;
    }
  params.layer = layer;
  s = saccade_cli_study_of_run (&sc_study_kind_norms, &params, model, &common, db_path, run_id,
                                recompute, &sm, &run, &warning, &error);
  if (s == NULL)
    {
      rc = saccade_cli_fail (g_steal_pointer (&error));
      goto out;
    }
  labels = saccade_token_labels_for_store (run->tokens, (gsize) run->n_tokens);
  if (head >= 0 && !common.json)
    saccade_norms_text_map (more = g_string_new (NULL), s->result,
                            (const char *const *) labels, head);
  saccade_cli_study_print (s, model, run, (const char *const *) labels, NULL, &common, db_path,
                           warning, top, more != NULL ? more->str : NULL);
out:
  sc_model_free (model);
  return rc;
}
