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

/* The chosen layer's top sources and map (SaccadeCliKindMore; @data the layer). */
static void
mixing_more (GString *more, const SaccadeStudy *s, const char *const *labels, gpointer data)
{
  const int *layer_top = data; /* { layer, top } */

  saccade_mixing_text_map (more, s->result, labels, layer_top[0], layer_top[1]);
}

int
saccade_cmd_mixing (int argc, char **argv)
{
  g_auto (SaccadeCliKindOptions) o = { 0 };
  g_autofree char *method = NULL;
  gboolean rollout_only = FALSE;
  int layer = -1, top = 10, L, rc;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN - context mixing per layer and "
                                                         "rolled out (value zeroing, ALTI)");
  g_autoptr (GError) error = NULL;
  ScMixingParams params = { SC_MIXING_VALUE_ZEROING };
  ScModel *model = NULL;
  ScError err = { 0 };
  const GOptionEntry entries[] = {
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

  if (!saccade_cli_kind_parse (ctx, &o, entries, "mixing", &argc, &argv))
    return 2;
  if (method != NULL
      && sc_study_option_set (&sc_study_kind_mixing, &params, "method", method, 0, &err)
             != SC_OK)
    {
      fprintf (stderr, "saccade: %s\n", err.message);
      return 2;
    }
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  L = (int) sc_model_info (model)->n_layers;
  if (layer < -1 || layer >= L)
    {
      fprintf (stderr, "saccade: --layer %d is outside 0..%d\n", layer, L - 1);
      rc = 2;
    }
  else
    {
      int layer_top[2] = { layer < 0 ? L / 2 : layer, top };
      rc = saccade_cli_kind_print (&sc_study_kind_mixing, &params, model, &o, top,
                                   rollout_only ? NULL : mixing_more, layer_top);
    }
  sc_model_free (model);
  return rc;
}
