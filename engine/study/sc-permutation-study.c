/* sc-permutation-study.c — attention permutation (sc-permutation-study.h has the
 * definitions): one SC_ATTN_EDIT_PERMUTE run per (studied head, permutation), each reusing
 * the clean prefix below the head's layer, turned into effects by engine/analysis/
 * sc-effect.c and summarised by type-7 quantiles; stored and read back as a study. Nothing
 * here defines a measure of the output; it only decides which runs to compare. */
#include "study/sc-permutation-study.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Seeds and quantiles                                                                   */

uint64_t
sc_permutation_seed (uint64_t base_seed, int k)
{
  /* SplitMix64's k-th state is base + k γ; its output is the finaliser of the next one. */
  uint64_t z = base_seed + ((uint64_t) k + 1u) * 0x9E3779B97F4A7C15u;

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

double
sc_quantile_sorted (const double *sorted, int n, double p)
{
  double h, f;
  int i;

  if (sorted == NULL || n < 1 || !(p >= 0.0 && p <= 1.0))
    return NAN;
  h = (n - 1) * p;
  i = (int) floor (h);
  f = h - i;
  if (i >= n - 1)
    return sorted[n - 1];
  /* f == 0 returns x_i itself (no 0 · (x_{i+1} − x_i) that an infinity would spoil). */
  return f == 0.0 ? sorted[i] : sorted[i] + f * (sorted[i + 1] - sorted[i]);
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

bool
sc_spread (const double *v, int n, ScSpread *out)
{
  double *s;
  int i;

  *out = (ScSpread) { NAN, NAN, NAN, NAN, NAN };
  if (v == NULL || n < 1)
    return true;
  for (i = 0; i < n; i++)
    if (isnan (v[i]))
      return true;
  if ((s = malloc ((size_t) n * sizeof *s)) == NULL)
    return false;
  memcpy (s, v, (size_t) n * sizeof *s);
  qsort (s, (size_t) n, sizeof *s, cmp_double);
  out->min = s[0];
  out->q25 = sc_quantile_sorted (s, n, 0.25);
  out->median = sc_quantile_sorted (s, n, 0.5);
  out->q75 = sc_quantile_sorted (s, n, 0.75);
  out->max = s[n - 1];
  free (s);
  return true;
}

/* ------------------------------------------------------------------------------------ */
/* Results                                                                               */

ScPermutationResult *
sc_permutation_result_new (int n_layers, int n_heads, int n_tokens, int n_studied, int N)
{
  const ScSpread nan_spread = { NAN, NAN, NAN, NAN, NAN };
  ScPermutationResult *r;
  int i;

  if (n_layers < 1 || n_heads < 1 || n_tokens < 1 || n_studied < 1 || N < 1
      || n_studied > n_layers * n_heads || N > SC_PERMUTATION_MAX_N
      || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_layers = n_layers;
  r->n_heads = n_heads;
  r->n_tokens = n_tokens;
  r->n_studied = n_studied;
  r->n_permutations = N;
  r->target = r->top1_clean = -1;
  r->logp_clean = r->loss_clean = NAN;
  r->heads = malloc ((size_t) n_studied * sizeof *r->heads);
  r->effects = malloc ((size_t) n_studied * N * sizeof *r->effects);
  if (r->heads == NULL || r->effects == NULL)
    {
      sc_permutation_result_free (r);
      return NULL;
    }
  for (i = 0; i < n_studied; i++)
    r->heads[i] = (ScPermutationHead) { -1, -1, nan_spread, nan_spread, nan_spread,
                                        nan_spread, NAN };
  for (i = 0; i < n_studied * N; i++)
    {
      r->effects[i].next = (ScEffect) { NAN, NAN, NAN, NAN, NAN, -1, -1 };
      r->effects[i].delta_loss = NAN;
      r->effects[i].flipped = false;
      r->effects[i].delta_logit_diff = NAN;
    }
  return r;
}

void
sc_permutation_result_free (ScPermutationResult *r)
{
  if (r == NULL)
    return;
  free (r->heads);
  free (r->effects);
  free (r);
}

/* Fills head @i's summary from its N effects. */
static bool
summarise (ScPermutationResult *r, int i)
{
  const int N = r->n_permutations;
  const ScAblationEffect *e = r->effects + (size_t) i * N;
  ScPermutationHead *h = &r->heads[i];
  double *v = malloc ((size_t) 4 * N * sizeof *v);
  int k, flips = 0;
  bool ok;

  if (v == NULL)
    return false;
  for (k = 0; k < N; k++)
    {
      v[k] = e[k].next.tv;
      v[N + k] = e[k].next.jsd;
      v[2 * N + k] = e[k].next.delta_logp;
      v[3 * N + k] = e[k].delta_loss;
      flips += e[k].flipped;
    }
  ok = sc_spread (v, N, &h->tv) && sc_spread (v + N, N, &h->jsd)
       && sc_spread (v + 2 * N, N, &h->delta_logp) && sc_spread (v + 3 * N, N, &h->delta_loss);
  h->flip_share = (double) flips / N;
  free (v);
  return ok;
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

static int
cmp_int (const void *a, const void *b)
{
  const int x = *(const int *) a, y = *(const int *) b;

  return x < y ? -1 : x > y;
}

/* The studied heads into *@out, sorted: a copy of the list or every head. */
static ScStatus
studied_heads (const ScPermutationParams *p, int LH, int **out, int *n_out, ScError *err)
{
  const int n = p->heads != NULL ? p->n_list : LH;
  int *list, i;

  if (p->n_list < 0 || (p->n_list > 0 && p->heads == NULL) || (p->heads != NULL && n < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: a head list of %d entries%s",
                         p->n_list, p->heads == NULL ? " without the list" : "");
  if ((list = malloc ((size_t) n * sizeof *list)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "permutation: out of memory");
  for (i = 0; i < n; i++)
    list[i] = p->heads != NULL ? p->heads[i] : i;
  qsort (list, (size_t) n, sizeof *list, cmp_int);
  for (i = 0; i < n; i++)
    if (list[i] < 0 || list[i] >= LH || (i > 0 && list[i] == list[i - 1]))
      {
        const int bad = list[i];
        free (list);
        return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: head index %d is %s", bad,
                             bad < 0 || bad >= LH ? "outside the model" : "listed twice");
      }
  *out = list;
  *n_out = n;
  return SC_OK;
}

ScStatus
sc_permutation_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                    const ScPermutationParams *p, ScAblationProgressFn progress,
                    void *progress_user, ScPermutationResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScPermutationResult *r = NULL;
  float *clean = NULL, *abl = NULL;
  double *losses = NULL;
  int *list = NULL;
  ScAttnEdit edit = { 0 };
  ScIntervention iv = { .edits = &edit, .n_edits = 1 };
  ScForwardOptions opt = { .all_logits = true };
  int L, H, V, n_studied = 0, i, k, q;
  ScStatus st;

  if (session == NULL || model == NULL || ids == NULL || p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: NULL argument");
  info = sc_model_info (model);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  V = (int) info->n_vocab;
  if (n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: no tokens given");
  for (i = 0; i < n; i++)
    if (ids[i] < 0 || (uint32_t) ids[i] >= info->n_vocab)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: token %d has id %d, outside "
                           "the vocabulary of %u", i, ids[i], info->n_vocab);
  if (p->target < -1 || (p->target >= 0 && p->target >= V))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: target %d is outside the "
                         "vocabulary 0..%d", p->target, V - 1);
  if (p->n_permutations < 1 || p->n_permutations > SC_PERMUTATION_MAX_N)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: %d permutations per head "
                         "asked, 1 to %d allowed", p->n_permutations, SC_PERMUTATION_MAX_N);
  if ((st = studied_heads (p, L * H, &list, &n_studied, err)) != SC_OK)
    return st;

  r = sc_permutation_result_new (L, H, n, n_studied, p->n_permutations);
  clean = malloc ((size_t) n * V * sizeof *clean);
  abl = malloc ((size_t) n * V * sizeof *abl);
  losses = malloc ((size_t) 2 * (n > 1 ? n - 1 : 1) * sizeof *losses);
  if (r == NULL || clean == NULL || abl == NULL || losses == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "permutation: out of memory for %d tokens", n);
      goto fail;
    }
  r->seed = p->seed;

  /* 1. The clean run, keeping the residual entering every layer; its measures and losses. */
  opt.keep_residuals = !p->full_recompute;
  if ((st = sc_forward (session, ids, n, &opt, clean, err)) != SC_OK)
    goto fail;
  r->top1_clean = sc_logits_top1 (clean + (size_t) (n - 1) * V, V);
  r->target = p->target >= 0 ? p->target : r->top1_clean;
  if ((st = sc_log_softmax_at (clean + (size_t) (n - 1) * V, V, r->target, &r->logp_clean,
                               err)) != SC_OK)
    goto fail;
  if (n >= 2)
    {
      double sum = 0.0;
      if ((st = sc_token_losses (clean, ids, n, V, losses, err)) != SC_OK)
        goto fail;
      for (q = 0; q < n - 1; q++)
        sum += losses[q];
      r->loss_clean = sum / (n - 1);
    }

  /* 2. Each studied head, each permutation: layers below the head's are the clean run's. */
  opt.keep_residuals = false;
  opt.intervention = &iv;
  edit.kind = SC_ATTN_EDIT_PERMUTE;
  for (i = 0; i < n_studied; i++)
    {
      r->heads[i].layer = edit.layer = list[i] / H;
      r->heads[i].head = edit.head = list[i] % H;
      opt.start_layer = p->full_recompute ? 0 : edit.layer;
      for (k = 0; k < p->n_permutations; k++)
        {
          const int done = i * p->n_permutations + k + 1;
          edit.seed = sc_permutation_seed (p->seed, k);
          if ((st = sc_forward (session, ids, n, &opt, abl, err)) != SC_OK
              || (st = sc_study_same_ids_effect (clean, abl, ids, n, V, r->target, losses,
                                  &r->effects[done - 1], err)) != SC_OK)
            goto fail;
          if (progress != NULL
              && !progress (progress_user, (double) done / (n_studied * p->n_permutations)))
            {
              st = sc_error_set (err, SC_ERR_CANCELLED, "permutation: cancelled at head "
                                 "L%d.H%d, permutation %d", edit.layer, edit.head, k);
              goto fail;
            }
        }
      if (!summarise (r, i))
        {
          st = sc_error_set (err, SC_ERR_NOMEM, "permutation: out of memory");
          goto fail;
        }
    }
  free (clean);
  free (abl);
  free (losses);
  free (list);
  *out = r;
  return SC_OK;

fail:
  free (clean);
  free (abl);
  free (losses);
  free (list);
  sc_permutation_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_permutation_params_json (int64_t run_id, const ScPermutationParams *p, char *buf,
                            size_t size)
{
  int *list = NULL, len, i, n;
  size_t used;

  if (p == NULL || buf == NULL || size == 0)
    return -1;
  if (p->target >= 0)
    len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%d,\"n\":%d,\"seed\":%"
                    PRIu64 ",\"heads\":", SC_PERMUTATION_STUDY_VERSION, (long long) run_id,
                    p->target, p->n_permutations, p->seed);
  else
    len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":null,\"n\":%d,\"seed\":%"
                    PRIu64 ",\"heads\":", SC_PERMUTATION_STUDY_VERSION, (long long) run_id,
                    p->n_permutations, p->seed);
  if (len < 0 || (size_t) len >= size)
    return -1;
  used = (size_t) len;
  if (p->heads == NULL)
    len = snprintf (buf + used, size - used, "null}");
  else
    {
      n = p->n_list;
      if (n < 0 || (list = malloc ((size_t) (n > 0 ? n : 1) * sizeof *list)) == NULL)
        return -1;
      memcpy (list, p->heads, (size_t) n * sizeof *list);
      qsort (list, (size_t) n, sizeof *list, cmp_int);
      for (i = 0; i <= n; i++)
        {
          len = i < n ? snprintf (buf + used, size - used, "%c%d", i == 0 ? '[' : ',', list[i])
                      : snprintf (buf + used, size - used, "%s}", n == 0 ? "[]" : "]");
          if (len < 0 || (size_t) len >= size - used)
            {
              free (list);
              return -1;
            }
          used += (size_t) len;
        }
      free (list);
      return (int) used;
    }
  if (len < 0 || (size_t) len >= size - used)
    return -1;
  return (int) (used + (size_t) len);
}

#define N_METRICS 6
static const char *const METRIC[N_METRICS] = { "delta-logp", "tv", "jsd", "delta-loss",
                                               "flip", "top1" };
#define N_SPREAD 4
static const char *const SPREAD_NAME[N_SPREAD] = { "tv", "jsd", "delta-logp", "delta-loss" };

static void
effect_values (const ScAblationEffect *e, double v[N_METRICS])
{
  v[0] = e->next.delta_logp;
  v[1] = e->next.tv;
  v[2] = e->next.jsd;
  v[3] = e->delta_loss;
  v[4] = e->next.top1_ablated < 0 ? NAN : e->flipped ? 1.0 : 0.0;
  v[5] = e->next.top1_ablated < 0 ? NAN : (double) e->next.top1_ablated;
}

static const ScSpread *
head_spread (const ScPermutationHead *h, int m)
{
  return m == 0 ? &h->tv : m == 1 ? &h->jsd : m == 2 ? &h->delta_logp : &h->delta_loss;
}

ScStatus
sc_permutation_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                      const ScPermutationResult *r, int64_t *study_id, ScError *err)
{
  static const char *const Q[5] = { "min", "q25", "median", "q75", "max" };
  ScStoreStudy *s = NULL;
  ScStatus st;
  int i, k, m, q;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: no result to store");
  if ((int64_t) r->n_studied * r->n_permutations >= (int64_t) SC_STORE_MAX_TOKENS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: %d heads × %d permutations "
                         "do not fit a stored series (at most %u values)", r->n_studied,
                         r->n_permutations, SC_STORE_MAX_TOKENS - 1);
  if ((st = sc_store_study_begin (store, SC_PERMUTATION_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (i = 0; i < r->n_studied; i++)
    {
      const ScPermutationHead *h = &r->heads[i];
      char name[SC_STORE_STUDY_NAME_MAX];
      for (m = 0; m < N_SPREAD; m++)
        {
          const ScSpread *sp = head_spread (h, m);
          const double v[5] = { sp->min, sp->q25, sp->median, sp->q75, sp->max };
          for (q = 0; q < 5; q++)
            {
              snprintf (name, sizeof name, "%s.%s", SPREAD_NAME[m], Q[q]);
              if ((st = sc_store_study_add_head (s, h->layer, h->head, name, v[q], err))
                  != SC_OK)
                goto fail;
            }
        }
      if ((st = sc_store_study_add_head (s, h->layer, h->head, "flip-share", h->flip_share,
                                         err)) != SC_OK)
        goto fail;
      for (k = 0; k < r->n_permutations; k++)
        {
          double v[N_METRICS];
          const int pos = i * r->n_permutations + k;
          effect_values (&r->effects[pos], v);
          for (m = 0; m < N_METRICS; m++)
            {
              snprintf (name, sizeof name, "perm.%s", METRIC[m]);
              if ((st = sc_store_study_add_series (s, name, pos, v[m], err)) != SC_OK)
                goto fail;
            }
        }
    }
  {
    const double c[5] = { r->target, r->logp_clean, r->top1_clean, r->loss_clean, r->n_tokens };
    for (k = 0; k < 5; k++)
      if ((st = sc_store_study_add_series (s, "clean", k, c[k], err)) != SC_OK)
        goto fail;
  }
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_permutation_load (ScStore *store, const ScModelInfo *info,
                     const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                     ScPermutationResult **out, int64_t *study_id, ScError *err)
{
  const int H = (int) info->n_heads, LH = (int) (info->n_layers * info->n_heads);
  ScStoreStudyData *d = NULL;
  ScPermutationResult *r = NULL;
  double clean[5] = { NAN, NAN, NAN, NAN, NAN };
  uint8_t *seen = NULL, *filled = NULL;
  int *index = NULL; /* flat head -> studied index, or −1 */
  uint64_t N = 0, seed = 0;
  int64_t id = 0;
  int n_studied = 0, i;
  size_t j;
  ScStatus st;
  const char *why = "";

  if (params_json == NULL || !sc_study_params_uint (params_json, "n", &N)
      || !sc_study_params_uint (params_json, "seed", &seed) || N < 1 || N > SC_PERMUTATION_MAX_N)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: params without a valid n "
                         "and seed: %s", params_json != NULL ? params_json : "(null)");
  if ((st = sc_study_find_and_read (store, SC_PERMUTATION_KIND, sha256, params_json, &d, &id,
                                    err)) != SC_OK)
    return st;
#define BAD(...)                                                                         \
  do                                                                                     \
    {                                                                                    \
      why = __VA_ARGS__;                                                                 \
      goto bad;                                                                          \
    }                                                                                    \
  while (0)
  if (d->n_layers != (int) info->n_layers || d->n_heads != H)
    BAD ("its model has another shape");
  seen = calloc ((size_t) LH, 1);
  index = malloc ((size_t) LH * sizeof *index);
  if (seen == NULL || index == NULL)
    goto nomem;
  /* 1. The studied heads: those with a flip-share row, in layer-major order. */
  for (j = 0; j < d->n_head_values; j++)
    if (strcmp (d->heads[j].metric, "flip-share") == 0)
      seen[d->heads[j].layer * H + d->heads[j].head] = 1;
  for (i = 0; i < LH; i++)
    index[i] = seen[i] ? n_studied++ : -1;
  if (n_studied < 1)
    BAD ("it studies no head");
  if ((int64_t) n_studied * (int64_t) N >= (int64_t) SC_STORE_MAX_TOKENS)
    BAD ("more permutations than a series holds");
  /* 2. The clean run. */
  for (j = 0; j < d->n_series_values; j++)
    if (strcmp (d->series[j].series, "clean") == 0 && d->series[j].pos < 5)
      clean[d->series[j].pos] = d->series[j].value;
  if (!(clean[0] >= 0 && clean[0] < info->n_vocab && clean[0] == floor (clean[0])
        && clean[2] >= 0 && clean[2] < info->n_vocab && clean[2] == floor (clean[2])
        && clean[4] >= 1 && clean[4] <= SC_STORE_MAX_TOKENS && clean[4] == floor (clean[4])
        && isfinite (clean[1]) && clean[1] <= 0.0))
    BAD ("its clean run is missing or out of range");
  if ((r = sc_permutation_result_new ((int) info->n_layers, H, (int) clean[4], n_studied,
                                      (int) N)) == NULL
      || (filled = calloc ((size_t) n_studied * N, 1)) == NULL)
    goto nomem;
  r->seed = seed;
  r->target = (int) clean[0];
  r->logp_clean = clean[1];
  r->top1_clean = (int) clean[2];
  r->loss_clean = clean[3];
  for (i = 0; i < LH; i++)
    if (index[i] >= 0)
      {
        r->heads[index[i]].layer = i / H;
        r->heads[index[i]].head = i % H;
      }
  /* 3. Every permutation's numbers, each checked. */
  for (j = 0; j < d->n_series_values; j++)
    {
      const ScStoreSeriesValue *v = &d->series[j];
      ScAblationEffect *e;
      double x = v->value;
      int m;
      if (strncmp (v->series, "perm.", 5) != 0)
        continue;
      for (m = 0; m < N_METRICS && strcmp (v->series + 5, METRIC[m]) != 0; m++)
        ;
      if (m == N_METRICS)
        continue;
      if ((int64_t) v->pos >= (int64_t) n_studied * (int64_t) N)
        BAD ("a permutation past the studied heads");
      e = &r->effects[v->pos];
      filled[v->pos] |= (uint8_t) (1u << m);
      switch (m)
        {
        case 0:
          if (!isfinite (x))
            BAD ("a Δ log p that is not finite");
          e->next.delta_logp = x;
          e->next.logp_clean = r->logp_clean;
          e->next.logp_ablated = r->logp_clean + x;
          e->next.top1_clean = r->top1_clean;
          break;
        case 1:
          if (!(x >= 0.0 && x <= 1.0))
            BAD ("a TV outside [0, 1]");
          e->next.tv = x;
          break;
        case 2:
          if (!(x >= 0.0 && x <= log (2.0) + 1e-12))
            BAD ("a JSD outside [0, ln 2]");
          e->next.jsd = x;
          break;
        case 3:
          if (isnan (x) != (r->n_tokens == 1)) /* +inf is allowed: sc-effect.h */
            BAD ("a Δ mean loss that does not fit the sentence");
          e->delta_loss = x;
          break;
        case 4:
          if (!(x == 0.0 || x == 1.0))
            BAD ("a flip other than 0 or 1");
          e->flipped = x == 1.0;
          break;
        default:
          if (!(x >= 0 && x < info->n_vocab && x == floor (x)))
            BAD ("a top-1 outside the vocabulary");
          e->next.top1_ablated = (int) x;
          break;
        }
    }
  for (j = 0; j < (size_t) n_studied * N; j++)
    {
      const ScAblationEffect *e = &r->effects[j];
      if (filled[j] != (1u << N_METRICS) - 1)
        BAD ("a head without all its permutations");
      if (e->flipped != (e->next.top1_ablated != r->top1_clean))
        BAD ("a flip that does not match the top-1s");
    }
  for (i = 0; i < n_studied; i++)
    if (!summarise (r, i))
      goto nomem;
#undef BAD
  if (study_id != NULL)
    *study_id = id;
  sc_store_study_data_free (d);
  free (seen);
  free (index);
  free (filled);
  *out = r;
  return SC_OK;

nomem:
  st = sc_error_set (err, SC_ERR_NOMEM, "permutation: out of memory reading study %lld",
                     (long long) id);
  goto out;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): %s for %s", (long long) id,
                     SC_PERMUTATION_KIND, why, info->name);
out:
  sc_store_study_data_free (d);
  free (seen);
  free (index);
  free (filled);
  sc_permutation_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
permute_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                     char *buf, size_t size, ScError *err)
{
  const ScPermutationParams *p = params;
  int len = -1;

  if (p->n_permutations < 1 || p->n_permutations > SC_PERMUTATION_MAX_N)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: %d permutations, outside 1 .. %d",
                  kind->name, p->n_permutations, SC_PERMUTATION_MAX_N);
  else if ((len = sc_permutation_params_json (ctx->run_id, p, buf, size)) < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
permute_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
             ScError *err)
{
  ScPermutationResult *r = NULL;
  ScStatus st = sc_permutation_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params,
                                    ctx->progress, ctx->progress_user, &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
permute_store (ScStore *store, const ScStoreModel *model, const char *params_json,
               const void *result, int64_t *study_id, ScError *err)
{
  return sc_permutation_store (store, model, params_json, result, study_id, err);
}

static ScStatus
permute_load (ScStore *store, const ScModelInfo *info,
              const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
              const void *params, void **out, int64_t *study_id, ScError *err)
{
  const ScPermutationParams *p = params;
  const int LH = (int) (info->n_layers * info->n_heads);
  ScPermutationResult *r = NULL;
  int64_t id = 0;
  bool *listed = NULL;
  ScStatus st;

  *out = NULL;
  if (p == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation: no params to check against");
  if ((st = sc_permutation_load (store, info, sha256, params_json, &r, &id, err)) != SC_OK)
    return st;
  /* the heads its params list (none: every head), no more and no fewer: a sweep with heads
   * missing read as a complete one (issue 25) */
  if ((listed = calloc ((size_t) LH, sizeof *listed)) == NULL)
    {
      sc_permutation_result_free (r);
      return sc_error_set (err, SC_ERR_NOMEM, "permutation: out of memory");
    }
  for (int i = 0; i < (p->heads != NULL ? p->n_list : LH); i++)
    {
      const int h = p->heads != NULL ? p->heads[i] : i;
      if (h >= 0 && h < LH)
        listed[h] = true;
    }
  for (int i = 0; i < r->n_studied && st == SC_OK; i++)
    {
      const int h = r->heads[i].layer * (int) info->n_heads + r->heads[i].head;
      if (!listed[h])
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d is not one its "
                           "parameters list", (long long) id, SC_PERMUTATION_KIND,
                           r->heads[i].layer, r->heads[i].head);
      listed[h] = false;
    }
  for (int h = 0; h < LH && st == SC_OK; h++)
    if (listed[h])
      st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d, which its "
                         "parameters list, is missing", (long long) id, SC_PERMUTATION_KIND,
                         h / (int) info->n_heads, h % (int) info->n_heads);
  free (listed);
  if (st != SC_OK)
    {
      sc_permutation_result_free (r);
      return st;
    }
  if (study_id != NULL)
    *study_id = id;
  *out = r;
  return SC_OK;
}

static int
permute_n_tokens (const void *result)
{
  return ((const ScPermutationResult *) result)->n_tokens;
}

static void
permute_clean (const void *result, ScStudyClean *out)
{
  const ScPermutationResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = r->loss_clean;
}

static void
permute_free (void *result)
{
  sc_permutation_result_free (result);
}

static const ScStudyOption PERMUTE_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScPermutationParams, target), 0, 0, NULL,
    "the token whose probability is measured (default: the clean top-1)" },
  { "n", SC_STUDY_OPTION_INT, offsetof (ScPermutationParams, n_permutations), 1,
    SC_PERMUTATION_MAX_N, NULL, "permutations of each head's rows (8)" },
  { "seed", SC_STUDY_OPTION_UINT64, offsetof (ScPermutationParams, seed), 0, 0, NULL,
    "the base seed (0)" },
  { NULL },
};

/* The window's default; the command line asks for N. */
static const ScPermutationParams PERMUTE_DEFAULT = { .target = -1, .n_permutations = 8 };

const ScStudyKind sc_study_kind_permute = {
  .id = SC_PERMUTATION_KIND,
  .name = "permute",
  .title = "Attention permutation",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 1,
  .params_size = sizeof (ScPermutationParams),
  .params_default = &PERMUTE_DEFAULT,
  .options = PERMUTE_OPTIONS,
  .params_json = permute_params_json,
  .run = permute_run,
  .store = permute_store,
  .load = permute_load,
  .result_n_tokens = permute_n_tokens,
  .result_clean = permute_clean,
  .result_free = permute_free,
};
