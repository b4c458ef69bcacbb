/* saccade-cli-mixing.c — `saccade mixing RUN [--method value-zeroing|alti] [--layer L]
 * [--rollout]`: context mixing of a stored run per layer and rolled out (value zeroing,
 * Mohebbi 2023; ALTI, Ferrando 2022; engine/study/sc-mixing-study.h, docs/metrics.md). The
 * study is the kind `mixing` (read back when stored with the same method, else computed and
 * stored), printed by its outputs file as `saccade study mixing` prints it — every layer's
 * mixing ratio and the last token's top source there, the rollout's top sources and map —
 * then the chosen layer's (default: the middle one; --rollout: none). --json is the study's
 * JSON, which holds every layer's map and the rollout's. */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"

#include <stdio.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "app/core/saccade-paths.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "engine/study/sc-mixing-study.h"

int
saccade_cmd_mixing (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  g_autofree char *db = NULL, *db_path = NULL, *warning = NULL, *method = NULL;
  gboolean recompute = FALSE, rollout_only = FALSE;
  int layer = -1, top = 10, L;
  gint64 run_id = 0;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN - context mixing per layer and "
                                                         "rolled out (value zeroing, ALTI)");
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeStudyRun) run = NULL;
  g_autoptr (SaccadeStudy) s = NULL;
  g_auto (GStrv) labels = NULL;
  ScMixingParams params = { SC_MIXING_VALUE_ZEROING };
  g_autoptr (GString) more = NULL;
  ScStoreModel sm;
  ScModel *model = NULL;
  ScError err = { 0 };
  int rc = 0;
  const GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&recompute),
    { "method", 0, 0, G_OPTION_ARG_STRING, &method,
      "value-zeroing (default: each key's values zeroed, the layer run again) or alti (the "
      "attention block split by source token)", "M" },
    { "layer", 0, 0, G_OPTION_ARG_INT, &layer,
      "also show this layer's top sources and map (default: the middle one)", "L" },
    { "rollout", 0, 0, G_OPTION_ARG_NONE, &rollout_only,
      "show the rollout only (no layer's map)", NULL },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "sources listed for the last token (10)", "N" },
    { NULL },
  };

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "mixing", &run_id))
    return 2;
  if (method != NULL
      && sc_study_option_set (&sc_study_kind_mixing, &params, "method", method, 0, &err)
             != SC_OK)
    {
      fprintf (stderr, "saccade: %s\n", err.message);
      return 2;
    }
  db_path = saccade_db_path (db);
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  L = (int) sc_model_info (model)->n_layers;
  if (layer < -1 || layer >= L)
    {
      fprintf (stderr, "saccade: --layer %d is outside 0..%d\n", layer, L - 1);
      rc = 2;
      goto out;
    }
  s = saccade_cli_study_of_run (&sc_study_kind_mixing, &params, model, &common, db_path,
                                run_id, recompute, &sm, &run, &warning, &error);
  if (s == NULL)
    {
      rc = saccade_cli_fail (g_steal_pointer (&error));
      goto out;
    }
  labels = saccade_token_labels_for_store (run->tokens, (gsize) run->n_tokens);
  if (!rollout_only && !common.json)
    saccade_mixing_text_map (more = g_string_new (NULL), s->result,
                             (const char *const *) labels, layer < 0 ? L / 2 : layer, top);
  saccade_cli_study_print (s, model, run, (const char *const *) labels, NULL, &common, db_path,
                           warning, top, more != NULL ? more->str : NULL);
out:
  sc_model_free (model);
  return rc;
}
