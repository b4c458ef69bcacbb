/* saccade-cli-attribute.c — `saccade attribute RUN`: gradient attributions of a stored run
 * (saliency, gradient × input, integrated gradients, gradient-weighted rollout;
 * engine/study/sc-attribution.h) beside the run's last-layer attention and token
 * leave-one-out. Parse -> the study's verb (saccade_cli_study_face: app/core/
 * saccade-attribution.h computes or reuses the stored studies, app/core/studies/
 * saccade-attribution-outputs.c prints its text or JSON, with --csv one row per token and
 * with -o the figure, the Attribution page's). Definitions: docs/metrics.md, "Gradient
 * attributions". */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"
#include "app/core/saccade-attribution.h"

typedef struct {
  SaccadeCliFaceOptions face;   /* --db, --recompute, --csv, -o, the common ones */
  SaccadeCliTarget target;
  char *method, *rule, *baseline;
  int position, steps;
} AttrOptions;

/* --method: one of the engine's ids or "all"; several may be given with commas. */
static gboolean
parse_methods (const char *text, unsigned *out, GError **error)
{
  g_auto (GStrv) parts = NULL;

  *out = 0;
  if (text == NULL || strcmp (text, "all") == 0)
    return TRUE;
  parts = g_strsplit (text, ",", -1);
  for (int i = 0; parts[i] != NULL; i++)
    {
      ScAttrMethod m;
      if (!sc_attr_method_from_id (g_strstrip (parts[i]), &m))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--method is saliency, gradxinput, ig, grad-rollout or all (or a "
                       "comma-separated list), not '%s'", parts[i]);
          return FALSE;
        }
      *out |= 1u << m;
    }
  return TRUE;
}

static gboolean
parse_params (ScModel *model, const AttrOptions *o, ScAttrParams *p, GError **error)
{
  saccade_attribution_params_init (p);
  if (!parse_methods (o->method, &p->methods, error))
    return FALSE;
  if (o->steps < 0 || o->steps > SC_ATTR_MAX_STEPS)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--steps is 1 to %d points, not %d", SC_ATTR_MAX_STEPS, o->steps);
      return FALSE;
    }
  p->steps = o->steps > 0 ? o->steps : SC_ATTR_DEFAULT_STEPS;
  if (o->position < -1)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--position is a token index from 0, not %d", o->position);
      return FALSE;
    }
  p->position = o->position;
  if (o->rule != NULL && !sc_attr_rule_from_id (o->rule, &p->rule))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--rule is adaptive, gauss-legendre or midpoint, not '%s'", o->rule);
      return FALSE;
    }
  if (o->baseline != NULL && strcmp (o->baseline, "zero") == 0)
    p->baseline = SC_ATTR_BASELINE_ZERO;
  else if (o->baseline != NULL && strcmp (o->baseline, "eos") != 0)
    {
      int id;
      if (!g_str_has_prefix (o->baseline, "token:"))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--baseline is eos, zero or token:ID, not '%s'", o->baseline);
          return FALSE;
        }
      if (!saccade_parse_token (model, "--baseline token:", o->baseline + strlen ("token:"),
                                    &id, error))
        return FALSE;
      p->baseline = SC_ATTR_BASELINE_TOKEN;
      p->baseline_token = id;
    }
  return saccade_cli_target_parse (model, &o->target, &p->target, &p->contrast, error);
}

int
saccade_cmd_attribute (int argc, char **argv)
{
  AttrOptions o = { .position = -1 };
  GOptionEntry entries[] = {
    { "method", 0, 0, G_OPTION_ARG_STRING, &o.method,
      "saliency, gradxinput, ig, grad-rollout or all (default; or a comma-separated list)",
      "METHOD" },
    SACCADE_CLI_TARGET_OPTIONS (&o.target, "whose log-probability is attributed"),
    { "position", 0, 0, G_OPTION_ARG_INT, &o.position,
      "the position whose next token is measured (default: the last)", "I" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &o.steps, "ig: integration points (50)", "N" },
    { "rule", 0, 0, G_OPTION_ARG_STRING, &o.rule,
      "ig: adaptive (default), gauss-legendre or midpoint", "RULE" },
    { "baseline", 0, 0, G_OPTION_ARG_STRING, &o.baseline,
      "ig: zero (default) or token:ID (every position that token's embedding)", "BASELINE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - gradient attributions of a stored run's tokens, beside attention and "
    "leave-one-out");
  g_autoptr (GError) error = NULL;
  ScAttrParams p;
  ScModel *model;
  unsigned methods;
  gint64 run = 0;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_face_parse (ctx, &o.face, &saccade_attribution_outputs,
                               "compute the attribution even if stored", "attribute", &argc,
                               &argv, &run))
    rc = 2;
  /* Refused before the model loads and the study runs. */
  else if (!parse_methods (o.method, &methods, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error)) + 1;
  else if ((model = saccade_cli_face_load_model (&o.face, &rc)) != NULL)
    {
      /* --target and --baseline name tokens: checked against the model's vocabulary */
      if (!parse_params (model, &o, &p, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error)) + 1;
      else
        rc = saccade_cli_study_face (&saccade_attribution_outputs, &p, model, &o.face, run);
    }
  saccade_cli_face_options_clear (&o.face); /* and the model */
  g_free (o.method);
  saccade_cli_target_clear (&o.target);
  g_free (o.rule);
  g_free (o.baseline);
  return rc;
}
