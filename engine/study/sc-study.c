/* sc-study.c — the table of study kinds and what the study files share (sc-study.h).
 *
 * The table lists the descriptors each study file ends with; nothing else here knows a
 * kind. The helpers are the ones every ablation-like study needs: the effect of an
 * intervention against the clean run of the same ids, and reading an integer back from a
 * canonical params text.
 */
#include "study/sc-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/sc-ablation-study.h"
#include "study/sc-adversarial.h"
#include "study/sc-attribution.h"
#include "study/sc-dla.h"
#include "study/sc-erasure-study.h"
#include "study/sc-faithfulness.h"
#include "study/sc-head-means.h"
#include "study/sc-permutation-study.h"

/* The order `saccade` lists them in: the ablations of a run first, then the attributions,
 * then what is not a run's. */
static const ScStudyKind *const KINDS[] = {
  &sc_study_kind_heads,
  &sc_study_kind_heads_mean,
  &sc_study_kind_tokens,
  &sc_study_kind_permute,
  &sc_study_kind_erasure,
  &sc_study_kind_dla,
  &sc_study_kind_faithfulness,
  &sc_study_kind_attribution,
  &sc_study_kind_adversarial,
  &sc_study_kind_head_means,
  NULL,
};

const ScStudyKind *const *
sc_study_kinds (size_t *n)
{
  if (n != NULL)
    *n = sizeof KINDS / sizeof KINDS[0] - 1;
  return KINDS;
}

const ScStudyKind *
sc_study_kind_find (const char *name)
{
  if (name == NULL)
    return NULL;
  for (size_t i = 0; KINDS[i] != NULL; i++)
    if (strcmp (KINDS[i]->name, name) == 0)
      return KINDS[i];
  for (size_t i = 0; KINDS[i] != NULL; i++)
    if (strcmp (KINDS[i]->id, name) == 0)
      return KINDS[i];
  return NULL;
}

void *
sc_study_params_dup_default (const ScStudyKind *kind)
{
  void *p;

  if (kind == NULL || (p = malloc (kind->params_size > 0 ? kind->params_size : 1)) == NULL)
    return NULL;
  memcpy (p, kind->params_default, kind->params_size);
  return p;
}

/* The needs of @kind that @ctx lacks, as SC_ERR_INVALID_ARG naming the first. */
static ScStatus
check_needs (const ScStudyKind *kind, const ScStudyCtx *ctx, ScError *err)
{
  const unsigned needs = kind->needs;

  if (ctx == NULL || ctx->model == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no model", kind->name);
  if ((needs & SC_STUDY_NEEDS_RUN) && (ctx->ids == NULL || ctx->n_tokens < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no run to study", kind->name);
  if ((needs & SC_STUDY_NEEDS_MEANS) && ctx->means_set == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no reference set named",
                         kind->name);
  if ((needs & SC_STUDY_NEEDS_SENTENCES)
      && (ctx->sentences == NULL || ctx->sentence_lengths == NULL || ctx->n_sentences < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no reference sentences",
                         kind->name);
  return SC_OK;
}

ScStatus
sc_study_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                      char *buf, size_t size, ScError *err)
{
  ScStatus st;

  if (kind == NULL || buf == NULL || size == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study: no kind or no buffer");
  if ((st = check_needs (kind, ctx, err)) != SC_OK)
    return st;
  if (params == NULL)
    params = kind->params_default;
  if (kind->params_json (kind, params, ctx, buf, size, err) < 0)
    {
      if (err != NULL && err->status == SC_OK)
        sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: parameters out of range",
                      kind->name);
      return err != NULL ? err->status : SC_ERR_INVALID_ARG;
    }
  return SC_OK;
}

ScStatus
sc_study_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
              ScError *err)
{
  ScStatus st;

  if (kind == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study: no kind or no result pointer");
  *out = NULL;
  if ((st = check_needs (kind, ctx, err)) != SC_OK)
    return st;
  if ((kind->needs & SC_STUDY_NEEDS_SESSION) && ctx->session == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no session to run on",
                         kind->name);
  if ((kind->needs & SC_STUDY_NEEDS_BACKWARD) && ctx->grad == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no backward pass to run on",
                         kind->name);
  if ((kind->needs & SC_STUDY_NEEDS_MEANS) && ctx->head_mean == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no head means", kind->name);
  if ((kind->needs & SC_STUDY_NEEDS_RUN) && ctx->n_tokens < kind->min_tokens)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: %d tokens, it needs %d",
                         kind->name, ctx->n_tokens, kind->min_tokens);
  return kind->run (kind, ctx, params != NULL ? params : kind->params_default, out, err);
}

bool
sc_study_report (const ScStudyCtx *ctx, double fraction)
{
  return ctx == NULL || ctx->progress == NULL || ctx->progress (ctx->progress_user, fraction);
}

ScStatus
sc_study_same_ids_effect (const float *clean, const float *ablated, const int32_t *ids, int n,
                          int V, int target, double *losses, ScAblationEffect *e, ScError *err)
{
  const size_t last = (size_t) (n - 1) * V;
  ScStatus st;

  if ((st = sc_effect_next_token (clean + last, ablated + last, V, target, &e->next, err))
      != SC_OK)
    return st;
  e->delta_loss = NAN;
  if (n >= 2)
    {
      double *la = losses + (n - 1);
      if ((st = sc_token_losses (ablated, ids, n, V, la, err)) != SC_OK)
        return (sc_error_prefix (err, "ablated"), st);
      if ((st = sc_delta_mean_loss (losses, la, n - 1, &e->delta_loss, err)) != SC_OK)
        return st;
    }
  e->flipped = e->next.top1_ablated != e->next.top1_clean;
  return SC_OK;
}

bool
sc_study_params_uint (const char *params, const char *key, uint64_t *out)
{
  char pat[32];
  const char *at;
  char *end;

  if (params == NULL || key == NULL
      || (size_t) snprintf (pat, sizeof pat, "\"%s\":", key) >= sizeof pat
      || (at = strstr (params, pat)) == NULL)
    return false;
  at += strlen (pat);
  if (*at < '0' || *at > '9')
    return false;
  *out = strtoull (at, &end, 10);
  return end != at;
}
