/* saccade-attribution.c — compute or reuse the gradient attribution study of a run, with
 * leave-one-out and attention beside it (header); its CSV, figure, texts and JSON are
 * studies/saccade-attribution-outputs.c's. */
#define G_LOG_DOMAIN "saccade-attribution"

#include "app/core/saccade-attribution.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-format.h"
#include "app/core/saccade-paths.h"
#include "engine/store/sc-store-heads.h"

void
saccade_attribution_free (SaccadeAttribution *a)
{
  if (a == NULL)
    return;
  saccade_study_face_base_clear (&a->base);
  sc_attr_result_free (a->result);
  g_free (a->attention);
  g_free (a->loo);
  g_free (a);
}

void
saccade_attribution_params_init (ScAttrParams *p)
{
  *p = (ScAttrParams) { .methods = 0, .target = -1, .contrast = -1, .position = -1,
                        .steps = SC_ATTR_DEFAULT_STEPS, .rule = SC_ATTR_RULE_ADAPTIVE,
                        .baseline = SC_ATTR_BASELINE_TOKEN,
                        .baseline_token = SACCADE_ATTRIBUTION_BASELINE_EOS };
}

const char *
saccade_attribution_method_name (ScAttrMethod m)
{
  switch (m)
    {
    /* Translators: gradient attribution methods (Simonyan 2014; Shrikumar 2016;
     * Sundararajan 2017; Chefer et al. 2021). */
    case SC_ATTR_SALIENCY: return _("saliency");
    case SC_ATTR_GRADXINPUT: return _("gradient × input");
    case SC_ATTR_IG: return _("integrated gradients");
    case SC_ATTR_GRAD_ROLLOUT: return _("gradient rollout");
    default: return "?";
    }
}

/* ------------------------------------------------------------------------------------ */
/* The run                                                                               */

/* The query row of @position averaged over the last layer's heads the run kept. */
static void
read_attention (const char *db_path, const ScModelInfo *info, SaccadeAttribution *a)
{
  const int n = a->base.n_tokens, pos = a->result->position;
  g_autofree float *row = g_new (float, n);
  ScStore *store = saccade_store_open (db_path, FALSE, NULL);

  a->attention = g_new (double, n);
  for (int j = 0; j < n; j++)
    a->attention[j] = 0;
  for (uint32_t h = 0; store != NULL && h < info->n_heads; h++)
    if (sc_store_read_head_rows (store, a->base.run.id, (int) info->n_layers - 1, (int) h,
                                 (uint32_t) pos, (uint32_t) pos + 1, row, NULL, NULL) == SC_OK)
      {
        for (int j = 0; j < n; j++)
          a->attention[j] += row[j];
        a->attention_heads++;
      }
  for (int j = 0; j < n; j++)
    a->attention[j] = a->attention_heads > 0 ? a->attention[j] / a->attention_heads : NAN;
  sc_store_close (store);
}

/* ------------------------------------------------------------------------------------ */
/* The study                                                                             */

/* The attribution's share of the progress bar. In forward-pass units: a backward costs
 * about two forwards, so saliency, gradxinput and rollout take 3, ig 3 per point plus one
 * forward for the baseline; leave-one-out masks and drops each of the n − 1 tokens. */
static double
attr_share (const ScAttrParams *p, int n, gboolean loo_stored)
{
  const unsigned m = p->methods != 0 ? p->methods : (1u << SC_ATTR_N_METHODS) - 1;
  const double attr = 3.0 + ((m & (1u << SC_ATTR_IG)) ? 3.0 * p->steps + 1 : 0);
  const double loo = loo_stored ? 0 : 2.0 * (n - 1);

  return attr / (attr + loo);
}

static gboolean
get_attribution (ScModel *model, const ScStoreModel *ident, ScSession *session,
                 const char *db_path, SaccadeAttribution *a, SaccadeStudyFlags flags,
                 SaccadeProgressPart *prog, char **store_warning, GError **error)
{
  g_autoptr (SaccadeStudy) s = NULL;

  if (a->params.baseline == SC_ATTR_BASELINE_TOKEN
      && a->params.baseline_token == SACCADE_ATTRIBUTION_BASELINE_EOS)
    {
      /* the default baseline: every position the end-of-text token's embedding (zero
       * embeddings overflow SmolLM2's gradient: docs/gradients.md) */
      const ScTokenizer *tok = sc_model_tokenizer (model);
      const int32_t eos = tok != NULL ? sc_tokenizer_eos (tok) : -1;
      if (eos >= 0)
        a->params.baseline_token = eos;
      else
        a->params.baseline = SC_ATTR_BASELINE_ZERO;
    }
  s = saccade_study_get (&sc_study_kind_attribution, &a->params, model, ident, session, db_path,
                         a->base.run.id, flags, saccade_progress_part_report, prog,
                         prog->cancellable, store_warning, error);
  if (s == NULL)
    return FALSE;
  a->result = saccade_study_face_base_take (&a->base, s);
  return TRUE;
}

/* Leave-one-out through saccade-ablation.h: its TOKENS study, read back or computed. FALSE
 * with @error when it was cancelled or failed (a STORED_ONLY lookup that finds none is not a
 * failure: the numbers stay NaN). */
static gboolean
get_loo (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
         SaccadeAttribution *a, SaccadeStudyFlags flags, SaccadeProgressPart *prog,
         char **store_warning, GError **error)
{
  const SaccadeAblationParams ap = { .target = a->params.target, .contrast = -1 };
  g_autoptr (SaccadeAblation) loo = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *warning = NULL;

  a->loo = g_new (double, a->base.n_tokens);
  for (int j = 0; j < a->base.n_tokens; j++)
    a->loo[j] = NAN;
  /* It measures the next token after the last position only. */
  if (a->result->position != a->base.n_tokens - 1)
    return TRUE;
  loo = saccade_ablation_get (model, ident, session, db_path, a->base.run.id,
                              SACCADE_ABLATION_TOKENS, &ap,
                              flags & SACCADE_STUDY_STORED_ONLY, saccade_progress_part_report, prog,
                              prog->cancellable, &warning, &local);
  if (loo == NULL)
    {
      if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED)
          || !(flags & SACCADE_STUDY_STORED_ONLY))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      return TRUE; /* STORED_ONLY: the attribution is shown without it */
    }
  if (warning != NULL && store_warning != NULL && *store_warning == NULL)
    *store_warning = g_steal_pointer (&warning);
  a->loo_reused = loo->reused;
  a->loo_study_id = loo->study_id;
  if (loo->tokens->n_tokens == a->base.n_tokens && (loo->tokens->kinds & SC_LOO_MASK))
    for (int j = 0; j < a->base.n_tokens; j++)
      a->loo[j] = loo->tokens->mask[j].next.tv;
  return TRUE;
}

static gpointer
attribution_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                 const char *db_path, gpointer data, SaccadeStudyFlags flags,
                 SaccadeProgress progress, gpointer user_data, GCancellable *cancellable,
                 char **store_warning, GError **error)
{
  const SaccadeStudyGetData *d = data;
  const ScAttrParams *params = d->params;
  const gint64 run_id = d->run_id;
  const ScModelInfo *info;
  g_autoptr (SaccadeAttribution) a = g_new0 (SaccadeAttribution, 1);
  SaccadeProgressPart prog = { progress, user_data, cancellable, 0, 1 };
  const gint64 t0 = g_get_monotonic_time ();
  gint64 t1;

  g_return_val_if_fail (model != NULL && ident != NULL, NULL);
  info = sc_model_info (model);
  if (params != NULL)
    a->params = *params;
  else
    saccade_attribution_params_init (&a->params);
  if (a->params.steps <= 0)
    a->params.steps = SC_ATTR_DEFAULT_STEPS;
  if (!saccade_study_check_call ("attribution", db_path, session, flags, error))
    return NULL;
  if (!saccade_study_read_run_into (db_path, ident, info, run_id, &a->base, error))
    return NULL;
  if (a->params.position >= a->base.n_tokens)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Position %d is outside run %lld, whose tokens are 0 to %d"),
                   a->params.position, (long long) run_id, a->base.n_tokens - 1);
      return NULL;
    }
  {
    /* The bar: the attribution, then leave-one-out, by their estimated cost. */
    const gboolean loo_needed = a->params.position < 0
                                || a->params.position == a->base.n_tokens - 1;
    prog.span = attr_share (&a->params, a->base.n_tokens, !loo_needed);
  }
  if (!get_attribution (model, ident, session, db_path, a, flags, &prog, store_warning, error))
    return NULL;
  t1 = g_get_monotonic_time ();
  a->attr_seconds = (double) (t1 - t0) / G_USEC_PER_SEC;
  prog.base = a->base.reused ? 0 : prog.span;
  prog.span = 1 - prog.base;
  if (!get_loo (model, ident, session, db_path, a, flags, &prog, store_warning, error))
    return NULL;
  a->loo_seconds = (double) (g_get_monotonic_time () - t1) / G_USEC_PER_SEC;
  read_attention (db_path, info, a);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  a->base.seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&a);
}

const SaccadeStudyFace saccade_attribution_face = {
  .kind = &sc_study_kind_attribution,
  .get = attribution_get,
  .result_free = (GDestroyNotify) saccade_attribution_free,
};

