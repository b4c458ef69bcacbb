/* sc-head-means.c — each head's mean output over a set of sentences (sc-head-means.h has
 * the definition): one plain forward pass per sentence, the observer's attn_output summed
 * into doubles, and the result stored or read back as a study. It is not mean-ablation
 * itself (sc-forward.c's edit_heads does that with ScIntervention.head_mean). */
#include "study/sc-head-means.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ScHeadMeans *
sc_head_means_new (int n_layers, int n_heads, int head_dim)
{
  ScHeadMeans *m;

  if (n_layers < 1 || n_heads < 1 || head_dim < 1 || (m = calloc (1, sizeof *m)) == NULL)
    return NULL;
  m->n_layers = n_layers;
  m->n_heads = n_heads;
  m->head_dim = head_dim;
  if ((m->mean = calloc ((size_t) n_layers * n_heads * head_dim, sizeof *m->mean)) == NULL)
    {
      free (m);
      return NULL;
    }
  return m;
}

void
sc_head_means_free (ScHeadMeans *m)
{
  if (m == NULL)
    return;
  free (m->mean);
  free (m);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

typedef struct {
  double *sum; /* (L, Q): Σ over rows of o, per layer and column (Q = H * d) */
} Acc;

static bool
add_output (void *user, int layer, const float *o, int n_query, int width)
{
  double *sum = ((Acc *) user)->sum + (size_t) layer * width;
  int i, k;

  for (i = 0; i < n_query; i++)
    for (k = 0; k < width; k++)
      sum[k] += (double) o[(size_t) i * width + k];
  return true;
}

ScStatus
sc_head_means_run (ScSession *session, const ScModel *model, const int32_t *const *ids,
                   const int *n_tokens, int n_sentences, ScHeadMeansProgressFn progress,
                   void *progress_user, ScHeadMeans **out, ScError *err)
{
  const ScModelInfo *in;
  ScHeadMeans *m = NULL;
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  Acc acc = { NULL };
  int64_t T = 0;
  size_t n, k;
  int s, i;
  ScStatus st;

  if (session == NULL || model == NULL || ids == NULL || n_tokens == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: NULL argument");
  if (n_sentences < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: %d sentences given, at least 1 "
                         "needed", n_sentences);
  in = sc_model_info (model);
  for (s = 0; s < n_sentences; s++)
    {
      if (ids[s] == NULL || n_tokens[s] < 1)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: sentence %d has no tokens",
                             s);
      for (i = 0; i < n_tokens[s]; i++)
        if (ids[s][i] < 0 || (uint32_t) ids[s][i] >= in->n_vocab)
          return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: sentence %d, token %d has "
                               "id %d, outside the vocabulary of %u", s, i, ids[s][i],
                               in->n_vocab);
    }
  n = (size_t) in->n_layers * in->n_heads * in->head_dim;
  m = sc_head_means_new ((int) in->n_layers, (int) in->n_heads, (int) in->head_dim);
  acc.sum = calloc (n, sizeof *acc.sum);
  if (m == NULL || acc.sum == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "head means: out of memory");
      goto fail;
    }

  /* 1. Each sentence alone, plain: its attention outputs summed per layer and column
   *    (the column h * d + t of layer l is element (l, h, t) of the means). */
  obs.attn_output = add_output;
  obs.user = &acc;
  opt.observer = &obs;
  for (s = 0; s < n_sentences; s++)
    {
      if ((st = sc_forward (session, ids[s], n_tokens[s], &opt, NULL, err)) != SC_OK)
        {
          sc_error_prefix (err, "head means: sentence %d", s);
          goto fail;
        }
      T += n_tokens[s];
      if (progress != NULL && !progress (progress_user, (double) (s + 1) / n_sentences))
        {
          st = sc_error_set (err, SC_ERR_CANCELLED, "head means: cancelled after sentence %d",
                             s);
          goto fail;
        }
    }

  /* 2. Divide once, round once. */
  for (k = 0; k < n; k++)
    m->mean[k] = (float) (acc.sum[k] / (double) T);
  m->n_sentences = n_sentences;
  m->n_tokens = T;
  free (acc.sum);
  *out = m;
  return SC_OK;

fail:
  free (acc.sum);
  sc_head_means_free (m);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

static bool
valid_set_name (const char *set)
{
  size_t i, len;

  if (set == NULL || (len = strlen (set)) < 1 || len >= SC_HEAD_MEANS_SET_MAX)
    return false;
  for (i = 0; i < len; i++)
    {
      const char c = set[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || c == '.' || c == '_' || c == '-'))
        return false;
    }
  return true;
}

int
sc_head_means_params_json (const char *set, int n_sentences, int64_t n_tokens, char *buf,
                           size_t size)
{
  int len;

  if (!valid_set_name (set) || n_sentences < 1 || n_tokens < n_sentences || buf == NULL)
    return -1;
  len = snprintf (buf, size, "{\"study\":%d,\"set\":\"%s\",\"sentences\":%d,\"tokens\":%" PRId64
                  "}", SC_HEAD_MEANS_VERSION, set, n_sentences, n_tokens);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_head_means_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                     const ScHeadMeans *m, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  double shape[5];
  size_t n, k;
  ScStatus st;

  if (m == NULL || m->mean == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: nothing to store");
  n = (size_t) m->n_layers * m->n_heads * m->head_dim;
  if (n >= SC_STORE_MAX_TOKENS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: %zu values (%d layers x %d "
                         "heads x %d) do not fit a study series of at most %u positions", n,
                         m->n_layers, m->n_heads, m->head_dim, SC_STORE_MAX_TOKENS);
  for (k = 0; k < n; k++)
    if (!isfinite (m->mean[k]))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: layer %zu head %zu dimension "
                           "%zu is not finite", k / m->head_dim / m->n_heads,
                           k / m->head_dim % m->n_heads, k % m->head_dim);
  if ((st = sc_store_study_begin (store, SC_HEAD_MEANS_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  shape[0] = m->n_layers;
  shape[1] = m->n_heads;
  shape[2] = m->head_dim;
  shape[3] = m->n_sentences;
  shape[4] = (double) m->n_tokens;
  for (k = 0; k < 5; k++)
    if ((st = sc_store_study_add_series (s, "shape", (int) k, shape[k], err)) != SC_OK)
      goto fail;
  for (k = 0; k < n; k++)
    if ((st = sc_store_study_add_series (s, "mean", (int) k, m->mean[k], err)) != SC_OK)
      goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

/* S and T as the params text says them; false when it does not say them. */
static bool
params_counts (const char *params, double *S, double *T)
{
  const char *p = strstr (params, "\"sentences\":"), *q = strstr (params, "\"tokens\":");
  char *end;

  if (p == NULL || q == NULL)
    return false;
  *S = strtod (p + strlen ("\"sentences\":"), &end);
  if (end == p + strlen ("\"sentences\":"))
    return false;
  *T = strtod (q + strlen ("\"tokens\":"), &end);
  return end != q + strlen ("\"tokens\":");
}

ScStatus
sc_head_means_load (ScStore *store, const ScModelInfo *info,
                    const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                    ScHeadMeans **out, int64_t *study_id, ScError *err)
{
  const int L = (int) info->n_layers, H = (int) info->n_heads, d = (int) info->head_dim;
  const size_t n = (size_t) L * H * d;
  double shape[5] = { NAN, NAN, NAN, NAN, NAN }, S, T;
  ScStoreStudyData *data = NULL;
  ScHeadMeans *m = NULL;
  uint8_t *seen = NULL;
  size_t i, n_mean = 0;
  int64_t id = 0;
  ScStatus st;

  if (store == NULL || info == NULL || params_json == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "head means: NULL argument");
  if ((st = sc_study_find_and_read (store, SC_HEAD_MEANS_KIND, sha256, params_json, &data, &id,
                                    err)) != SC_OK)
    return st;
#define BAD(...)                                                                              \
  do                                                                                          \
    {                                                                                         \
      sc_error_set (err, SC_ERR_FORMAT, __VA_ARGS__);                                         \
      sc_error_prefix (err, "study %lld (%s)", (long long) id, SC_HEAD_MEANS_KIND);           \
      st = SC_ERR_FORMAT;                                                                     \
      goto fail;                                                                              \
    }                                                                                         \
  while (0)
  if (data->n_layers != L || data->n_heads != H)
    BAD ("its model row has %d layers x %d heads, %s has %d x %d", data->n_layers,
         data->n_heads, info->name, L, H);
  for (i = 0; i < data->n_series_values; i++)
    if (strcmp (data->series[i].series, "shape") == 0 && data->series[i].pos < 5)
      shape[data->series[i].pos] = data->series[i].value;
  if (!(shape[0] == L && shape[1] == H && shape[2] == d))
    BAD ("its means are shaped %g layers x %g heads x %g dimensions, %s needs %d x %d x %d",
         shape[0], shape[1], shape[2], info->name, L, H, d);
  if (!params_counts (data->params, &S, &T))
    BAD ("its params %s do not say how many sentences and tokens", data->params);
  if (!(shape[3] == S && shape[4] == T && S >= 1 && S <= INT32_MAX && T >= S && T <= 9.0e15
        && S == floor (S) && T == floor (T)))
    BAD ("it says %g sentences and %g tokens, its params %g and %g", shape[3], shape[4], S, T);
  m = sc_head_means_new (L, H, d);
  seen = calloc (n, 1);
  if (m == NULL || seen == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "head means: out of memory");
      goto fail;
    }
  for (i = 0; i < data->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &data->series[i];
      if (strcmp (v->series, "mean") != 0)
        continue;
      if ((size_t) v->pos >= n)
        BAD ("series \"mean\" has position %d, beyond the %zu values of %d x %d x %d", v->pos, n,
             L, H, d);
      if (seen[v->pos])
        BAD ("series \"mean\" holds position %d twice", v->pos);
      if (!isfinite (v->value) || fabs (v->value) > 3.4e38)
        BAD ("the mean of layer %zu head %zu dimension %zu is %g, not a finite float",
             (size_t) v->pos / d / H, (size_t) v->pos / d % H, (size_t) v->pos % d, v->value);
      seen[v->pos] = 1;
      m->mean[v->pos] = (float) v->value;
      n_mean++;
    }
  if (n_mean != n)
    BAD ("series \"mean\" has %zu values, %s needs %zu (%d layers x %d heads x %d)", n_mean,
         info->name, n, L, H, d);
#undef BAD
  m->n_sentences = (int) S;
  m->n_tokens = (int64_t) T;
  free (seen);
  sc_store_study_data_free (data);
  if (study_id != NULL)
    *study_id = id;
  *out = m;
  return SC_OK;

fail:
  free (seen);
  sc_store_study_data_free (data);
  sc_head_means_free (m);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int64_t
sentences_tokens (const ScStudyCtx *ctx)
{
  int64_t t = 0;

  for (int s = 0; s < ctx->n_sentences; s++)
    t += ctx->sentence_lengths[s];
  return t;
}

static int
means_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                   char *buf, size_t size, ScError *err)
{
  const ScHeadMeansParams *p = params;
  int len = sc_head_means_params_json (p->set, ctx->n_sentences, sentences_tokens (ctx), buf,
                                       size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: reference set '%s' of %d sentences "
                  "does not make a params text", kind->name, p->set != NULL ? p->set : "",
                  ctx->n_sentences);
  return len;
}

static ScStatus
means_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
           ScError *err)
{
  ScHeadMeans *m = NULL;
  ScStatus st = sc_head_means_run (ctx->session, ctx->model, ctx->sentences,
                                   ctx->sentence_lengths, ctx->n_sentences, ctx->progress,
                                   ctx->progress_user, &m, err);

  (void) kind, (void) params;
  *out = m;
  return st;
}

static ScStatus
means_store (ScStore *store, const ScStoreModel *model, const char *params_json,
             const void *result, int64_t *study_id, ScError *err)
{
  return sc_head_means_store (store, model, params_json, result, study_id, err);
}

static ScStatus
means_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
            const char *params_json, const void *params, void **out, int64_t *study_id,
            ScError *err)
{
  ScHeadMeans *m = NULL;
  ScStatus st = sc_head_means_load (store, info, sha256, params_json, &m, study_id, err);

  (void) params;
  *out = m;
  return st;
}

static int
means_n_tokens (const void *result)
{
  (void) result;
  return -1; /* a reference set's, not a run's */
}

static void
means_clean (const void *result, ScStudyClean *out)
{
  const ScHeadMeans *r = result;

  (void) r;
  out->target = -1;
  out->top1_clean = -1;
  out->logp_clean = NAN;
  out->loss_clean = NAN;
}

static void
means_free (void *result)
{
  sc_head_means_free (result);
}

/* No default set: the sentences are the caller's, and so is their name. */
static const ScHeadMeansParams MEANS_DEFAULT = { .set = NULL };

const ScStudyKind sc_study_kind_head_means = {
  .id = SC_HEAD_MEANS_KIND,
  .name = "means",
  .title = "Head means of a reference set",
  .needs = SC_STUDY_NEEDS_SESSION | SC_STUDY_NEEDS_SENTENCES,
  .min_tokens = 0,
  .params_size = sizeof (ScHeadMeansParams),
  .params_default = &MEANS_DEFAULT,
  .params_json = means_params_json,
  .run = means_run,
  .store = means_store,
  .load = means_load,
  .result_n_tokens = means_n_tokens,
  .result_clean = means_clean,
  .result_free = means_free,
};
