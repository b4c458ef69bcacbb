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

/* The chosen head's map (SaccadeCliKindMore; @data the head). */
static void
norms_more (GString *more, const SaccadeStudy *s, const char *const *labels, gpointer data)
{
  saccade_norms_text_map (more, s->result, labels, *(const int *) data);
}

int
saccade_cmd_norms (int argc, char **argv)
{
  g_auto (SaccadeCliKindOptions) o = { 0 };
  int layer = -1, head = -1, top = 10, rc;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN - norm-based attention "
                                                         "(weight times value norm)");
  g_autoptr (GError) error = NULL;
  ScNormParams params;
  ScModel *model = NULL;
  const GOptionEntry entries[] = {
    { "layer", 0, 0, G_OPTION_ARG_INT, &layer,
      "the layer whose value norms and maps are shown (default: the middle one)", "L" },
    { "head", 0, 0, G_OPTION_ARG_INT, &head, "also print this head's map (default: the "
      "layer's only)", "H" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "heads listed by their weight-norm gap (10)", "N" },
    { NULL },
  };

  if (!saccade_cli_kind_parse (ctx, &o, entries, "norms", &argc, &argv))
    return 2;
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (head < -1 || head >= (int) sc_model_info (model)->n_heads)
    {
      fprintf (stderr, "saccade: --head %d is outside 0..%u\n", head,
               sc_model_info (model)->n_heads - 1);
      rc = 2;
    }
  else
    {
      params.layer = layer;
      rc = saccade_cli_kind_print (&sc_study_kind_norms, &params, model, &o, top,
                                   head >= 0 ? norms_more : NULL, &head);
    }
  sc_model_free (model);
  return rc;
}
