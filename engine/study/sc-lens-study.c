/* sc-lens-study.c — the logit lens (sc-lens-study.h): the clean run's residual entering
 * every layer at the last position through the output head, storage and the study kind. */
#include "study/sc-lens-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ScLensResult *
sc_lens_result_new (int n_layers, int n_tokens)
{
  ScLensResult *r;
  const size_t k = (size_t) n_layers + 1;

  if (n_layers < 1 || n_tokens < 1 || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  *r = (ScLensResult) { .n_layers = n_layers, .n_tokens = n_tokens, .target = -1,
                        .contrast = -1, .top1_clean = -1, .logp_clean = NAN,
                        .loss_clean = NAN };
  r->logp = malloc (k * sizeof *r->logp);
  r->m = malloc (k * sizeof *r->m);
  r->rank = malloc (k * sizeof *r->rank);
  r->top1 = malloc (k * sizeof *r->top1);
  if (r->logp == NULL || r->m == NULL || r->rank == NULL || r->top1 == NULL)
    {
      sc_lens_result_free (r);
      return NULL;
    }
  for (size_t l = 0; l < k; l++)
    {
      r->logp[l] = r->m[l] = NAN;
      r->rank[l] = r->top1[l] = -1;
    }
  return r;
}

void
sc_lens_result_free (ScLensResult *r)
{
  if (r == NULL)
    return;
  free (r->logp);
  free (r->m);
  free (r->rank);
  free (r->top1);
  free (r);
}

ScStatus
sc_lens_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
             const ScLensParams *p, ScLensResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScLensResult *r = NULL;
  float *logits = NULL, *rows = NULL;
  ScForwardOptions opt = { .all_logits = true, .keep_residuals = true };
  int L, E, V;
  ScStatus st;

  if (p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "logit lens: NULL argument");
  if ((st = sc_study_check_ids (session, model, ids, n, 1, p->target, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  L = (int) info->n_layers;
  E = (int) info->n_embd;
  V = (int) info->n_vocab;
  if (p->contrast < -1 || (p->contrast >= 0 && (uint32_t) p->contrast >= info->n_vocab))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "logit lens: contrast %d is outside the "
                         "vocabulary 0..%u", p->contrast, info->n_vocab - 1);
  if (p->contrast >= 0 && p->contrast == p->target)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "logit lens: the contrast is the target "
                         "(token %d)", p->target);
  r = sc_lens_result_new (L, n);
  /* the clean run's n rows of logits, then the L + 1 lens rows in the same block */
  logits = malloc ((size_t) (n > L + 1 ? n : L + 1) * V * sizeof *logits);
  rows = malloc ((size_t) (L + 1) * E * sizeof *rows);
  if (r == NULL || logits == NULL || rows == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "logit lens: out of memory for %d tokens", n);
      goto out;
    }
  if ((st = sc_forward (session, ids, n, &opt, logits, err)) != SC_OK
      || (st = sc_study_clean_measures (logits, ids, n, V, p->target, &r->target,
                                        &r->top1_clean, &r->logp_clean, &r->loss_clean, err))
             != SC_OK)
    goto out;
  r->contrast = p->contrast;
  if (r->contrast == r->target) /* a named contrast that the clean top-1 turned out to be */
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "logit lens: the contrast is the clean "
                         "top-1 (token %d), which is the target", r->target);
      goto out;
    }
  for (int l = 0; l <= L; l++)
    if ((st = sc_session_residual (session, l, n - 1, rows + (size_t) l * E, err)) != SC_OK)
      goto out;
  if ((st = sc_session_unembed (session, rows, L + 1, logits, err)) != SC_OK)
    goto out;
  for (int l = 0; l <= L; l++)
    {
      const float *row = logits + (size_t) l * V;
      int above = 0;
      if ((st = sc_log_softmax_at (row, V, r->target, &r->logp[l], err)) != SC_OK)
        goto out;
      for (int t = 0; t < V; t++)
        above += row[t] > row[r->target];
      r->rank[l] = above;
      r->top1[l] = sc_logits_top1 (row, V);
      r->m[l] = r->contrast >= 0 ? (double) row[r->target] - (double) row[r->contrast] : NAN;
    }
  *out = r;
  r = NULL;
out:
  free (logits);
  free (rows);
  sc_lens_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_lens_params_json (int64_t run_id, const ScLensParams *p, char *buf, size_t size)
{
  char target[16] = "null", contrast[16] = "null";
  int len;

  if (p == NULL || p->target < -1 || p->contrast < -1
      || (p->contrast >= 0 && p->contrast == p->target))
    return -1;
  if (p->target >= 0)
    snprintf (target, sizeof target, "%d", p->target);
  if (p->contrast >= 0)
    snprintf (contrast, sizeof contrast, "%d", p->contrast);
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%s,\"contrast\":%s}",
                  SC_LENS_STUDY_VERSION, (long long) run_id, target, contrast);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

/* The series a lens is stored as, in the order of lens_values(). */
static const char *const SERIES[] = { "logp", "rank", "top1", "m" };

static void
lens_values (const ScLensResult *r, int l, double v[4])
{
  v[0] = r->logp[l];
  v[1] = r->rank[l];
  v[2] = r->top1[l];
  v[3] = r->m[l];
}

ScStatus
sc_lens_store (ScStore *store, const ScStoreModel *model, const char *params_json,
               const ScLensResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "logit lens: no result to store");
  if ((st = sc_store_study_begin (store, SC_LENS_STUDY_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (int l = 0; l <= r->n_layers; l++)
    {
      double v[4];
      lens_values (r, l, v);
      for (int k = 0; k < 4; k++)
        if ((st = sc_store_study_add_series (s, SERIES[k], l, v[k], err)) != SC_OK)
          goto fail;
    }
  if ((st = sc_store_study_add_series (s, "contrast", 0, r->contrast, err)) != SC_OK
      || (st = sc_study_add_clean (s, r->target, r->logp_clean, r->top1_clean, r->loss_clean,
                                   r->n_tokens, err)) != SC_OK)
    goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_lens_load (ScStore *store, const ScModelInfo *info,
              const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
              const ScLensParams *p, ScLensResult **out, int64_t *study_id, ScError *err)
{
  const double V = (double) info->n_vocab;
  /* ln p <= 0; a rank below the vocabulary; a top-1 in it; m finite or NaN (no contrast);
   * the contrast −1 or a token */
  const ScStudyValueRule rules[5] = {
    { "logp", -1e6, 0.0, false }, { "rank", 0.0, V - 1, false }, { "top1", 0.0, V - 1, false },
    { "m", -1e6, 1e6, true }, { "contrast", -1.0, V - 1, false },
  };
  ScStoreStudyData *d = NULL;
  ScLensResult *r = NULL;
  int target, top1, n;
  double logp, loss;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_LENS_STUDY_KIND, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  if (d->n_layers != (int) info->n_layers
      || !sc_study_read_clean (d, info->n_vocab, &target, &logp, &top1, &loss, &n)
      || (r = sc_lens_result_new (d->n_layers, n)) == NULL)
    goto bad;
  st = sc_study_check_target (d, params_json, target, err);
  for (int k = 0; k < 4 && st == SC_OK; k++)
    st = sc_study_check_series (d, &rules[k], d->n_layers + 1, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &rules[4], 1, err);
  if (st != SC_OK)
    {
      sc_store_study_data_free (d);
      sc_lens_result_free (r);
      return st;
    }
  r->target = target;
  r->top1_clean = top1;
  r->logp_clean = logp;
  r->loss_clean = loss;
  for (size_t i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      const bool whole = v->value == floor (v->value); /* ids and ranks are integers */
      if (strcmp (v->series, "logp") == 0)
        r->logp[v->pos] = v->value;
      else if (strcmp (v->series, "m") == 0)
        r->m[v->pos] = v->value;
      else if (strcmp (v->series, "contrast") == 0 && whole)
        r->contrast = (int) v->value;
      else if (strcmp (v->series, "rank") == 0 && whole)
        r->rank[v->pos] = (int) v->value;
      else if (strcmp (v->series, "top1") == 0 && whole)
        r->top1[v->pos] = (int) v->value;
      else if (strcmp (v->series, "clean") != 0)
        goto bad; /* a fraction where an id or a rank belongs */
    }
  /* the contrast the params name (or none) is the one measured, and m exists exactly
   * when there is one */
  if (r->contrast != p->contrast || r->contrast == r->target)
    goto bad;
  for (int l = 0; l <= r->n_layers; l++)
    if (isnan (r->m[l]) != (r->contrast < 0))
      goto bad;
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s and its "
                     "parameters", (long long) d->id, SC_LENS_STUDY_KIND, info->name);
  sc_store_study_data_free (d);
  sc_lens_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
lens_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                  char *buf, size_t size, ScError *err)
{
  const int len = sc_lens_params_json (ctx->run_id, params, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range (is "
                  "the contrast the target?)", kind->name);
  return len;
}

static ScStatus
lens_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
          ScError *err)
{
  ScLensResult *r = NULL;
  ScStatus st = sc_lens_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params, &r,
                             err);

  (void) kind;
  /* one pass: its only progress is the end, where a caller's stop still leaves no result */
  if (st == SC_OK && ctx->progress != NULL && !ctx->progress (ctx->progress_user, 1.0))
    {
      sc_lens_result_free (r);
      r = NULL;
      st = sc_error_set (err, SC_ERR_CANCELLED, "logit lens: cancelled after its pass");
    }
  *out = r;
  return st;
}

static ScStatus
lens_store (ScStore *store, const ScStoreModel *model, const char *params_json,
            const void *result, int64_t *study_id, ScError *err)
{
  return sc_lens_store (store, model, params_json, result, study_id, err);
}

static ScStatus
lens_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
           const char *params_json, const void *params, void **out, int64_t *study_id,
           ScError *err)
{
  ScLensResult *r = NULL;
  ScStatus st = sc_lens_load (store, info, sha256, params_json, params, &r, study_id, err);

  *out = r;
  return st;
}

static int
lens_n_tokens (const void *result)
{
  return ((const ScLensResult *) result)->n_tokens;
}

static void
lens_clean (const void *result, ScStudyClean *out)
{
  const ScLensResult *r = result;

  /* the last entry is the model's own output: its m is the clean logit difference */
  *out = (ScStudyClean) { .target = r->target, .top1_clean = r->top1_clean,
                          .logp_clean = r->logp_clean, .loss_clean = r->loss_clean,
                          .contrast = r->contrast,
                          .logit_diff_clean = r->contrast >= 0 ? r->m[r->n_layers] : NAN };
}

static void
lens_free (void *result)
{
  sc_lens_result_free (result);
}

static const ScLensParams LENS_DEFAULT = { .target = -1, .contrast = -1 };

static const ScStudyOption LENS_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScLensParams, target), 0, 0, NULL,
    "the token followed through the layers (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScLensParams, contrast), 0, 0, NULL,
    "a second token: logit(target) - logit(contrast) per layer (default: none)" },
  { NULL },
};

const ScStudyKind sc_study_kind_lens = {
  .id = SC_LENS_STUDY_KIND,
  .name = "lens",
  .title = "Logit lens (each layer's residual through the output head)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 1,
  .params_size = sizeof (ScLensParams),
  .params_default = &LENS_DEFAULT,
  .options = LENS_OPTIONS,
  .params_json = lens_params_json,
  .run = lens_run,
  .store = lens_store,
  .load = lens_load,
  .result_n_tokens = lens_n_tokens,
  .result_clean = lens_clean,
  .result_free = lens_free,
};
