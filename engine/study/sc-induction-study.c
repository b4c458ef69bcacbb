/* sc-induction-study.c — the induction-head detector: makes the repeated sequences, runs
 * the model with an observer that scores each head as its layer finishes, and turns all
 * logits into per-position losses (sc-induction-study.h has the definitions). The scores
 * themselves come from engine/analysis/sc-induction.c. */
#include "study/sc-induction-study.h"

#include "core/sc-math.h"
#include "core/sc-random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The ordinary tokens (header) in id order; *@n receives their number. */
static ScStatus
ordinary_tokens (const ScModel *model, int32_t **out, int *n, ScError *err)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const uint32_t nv_tok = sc_tokenizer_n_vocab (tok), nv_model = sc_model_info (model)->n_vocab;
  const uint32_t nv = nv_tok < nv_model ? nv_tok : nv_model;
  const int32_t bos = sc_tokenizer_bos (tok), eos = sc_tokenizer_eos (tok);
  int32_t *ids = malloc ((size_t) (nv > 0 ? nv : 1) * sizeof *ids);
  uint32_t id;
  int m = 0;

  if (ids == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "induction: out of memory for %u tokens", nv);
  for (id = 0; id < nv; id++)
    if (sc_tokenizer_token_type (tok, (int32_t) id) == SC_TOKEN_NORMAL && (int32_t) id != bos
        && (int32_t) id != eos)
      ids[m++] = (int32_t) id;
  *out = ids;
  *n = m;
  return SC_OK;
}

/* Checks T and the context; *@n_prefix = 1 with a BOS. */
static ScStatus
check_len (const ScModel *model, int seq_len, int *n_prefix, ScError *err)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const ScModelInfo *info = sc_model_info (model);
  const int pre = sc_tokenizer_adds_bos (tok) && sc_tokenizer_bos (tok) >= 0 ? 1 : 0;

  if (seq_len < 2)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "induction: the repeated sequence needs at "
                         "least 2 tokens (T = %d)", seq_len);
  if ((int64_t) pre + 2 * (int64_t) seq_len > (int64_t) info->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "induction: %s2 x %d tokens = %lld exceed the "
                         "context of %s (%u tokens); choose T <= %d", pre ? "BOS + " : "",
                         seq_len, (long long) pre + 2 * (long long) seq_len, info->name,
                         info->n_ctx_train, ((int) info->n_ctx_train - pre) / 2);
  *n_prefix = pre;
  return SC_OK;
}

ScStatus
sc_induction_sequence (const ScModel *model, int seq_len, int seed, int32_t *ids,
                       int *n_prefix, ScError *err)
{
  int32_t *pool = NULL;
  int pre = 0, m = 0, i;
  uint64_t state = (uint64_t) seed;
  ScStatus st;

  if (model == NULL || ids == NULL || seed < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "induction: bad sequence arguments");
  if ((st = check_len (model, seq_len, &pre, err)) != SC_OK
      || (st = ordinary_tokens (model, &pool, &m, err)) != SC_OK)
    return st;
  if (m < seq_len)
    {
      free (pool);
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "induction: %s has %d ordinary (NORMAL) "
                           "tokens, fewer than the %d distinct ones T asks for",
                           sc_model_info (model)->name, m, seq_len);
    }
  if (pre)
    ids[0] = sc_tokenizer_bos (sc_model_tokenizer (model));
  for (i = 0; i < seq_len; i++)
    {
      const int j = i + (int) (sc_splitmix64 (&state) % (uint64_t) (m - i));
      const int32_t t = pool[j];
      pool[j] = pool[i];
      pool[i] = t;
      ids[pre + i] = ids[pre + seq_len + i] = t;
    }
  free (pool);
  if (n_prefix != NULL)
    *n_prefix = pre;
  return SC_OK;
}

ScInductionResult *
sc_induction_result_new (int n_layers, int n_heads, int seq_len, int n_seeds, int n_prefix)
{
  ScInductionResult *r;
  int i, n = n_prefix + 2 * seq_len;

  if (n_layers < 1 || n_heads < 1 || seq_len < 1 || n_seeds < 1 || n_prefix < 0)
    return NULL;
  if ((r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_layers = n_layers;
  r->n_heads = n_heads;
  r->seq_len = seq_len;
  r->n_seeds = n_seeds;
  r->n_prefix = n_prefix;
  r->n_tokens = n;
  r->heads = malloc ((size_t) n_layers * n_heads * sizeof *r->heads);
  r->loss = malloc ((size_t) n * sizeof *r->loss);
  r->ids = calloc ((size_t) n, sizeof *r->ids);
  if (r->heads == NULL || r->loss == NULL || r->ids == NULL)
    {
      sc_induction_result_free (r);
      return NULL;
    }
  for (i = 0; i < n_layers * n_heads; i++)
    r->heads[i] = (ScInductionScores) { NAN, NAN, NAN };
  for (i = 0; i < n; i++)
    r->loss[i] = NAN;
  r->loss_first = r->loss_second = NAN;
  return r;
}

void
sc_induction_result_free (ScInductionResult *r)
{
  if (r == NULL)
    return;
  free (r->heads);
  free (r->loss);
  free (r->ids);
  free (r);
}

/* What the observer and the progress callback share during one seed. */
typedef struct {
  ScInductionResult *r;  /* sums over the seeds so far, divided at the end */
  ScError *err;
  ScStatus status;       /* of the first failed scoring */
  ScInductionProgressFn progress;
  void *progress_user;
  int seed;
} Study;

static bool
observe (void *user, int layer, int head, const float *probs, int n_query, int n_key)
{
  Study *s = user;
  ScInductionResult *r = s->r;
  ScInductionScores one;
  ScInductionScores *sum = &r->heads[layer * r->n_heads + head];

  if (n_query != n_key
      || (s->status = sc_induction_head_scores (probs, n_key, r->n_prefix, r->seq_len, &one,
                                                s->err)) != SC_OK)
    {
      if (s->status == SC_OK)
        s->status = sc_error_set (s->err, SC_ERR_INVALID_ARG, "induction: a (%d, %d) head",
                                  n_query, n_key);
      return false;
    }
  sum->prefix_matching += one.prefix_matching;
  sum->duplicate_token += one.duplicate_token;
  sum->previous_token += one.previous_token;
  return true;
}

static bool
layer_done (void *user, int layers_done, int n_layers)
{
  Study *s = user;

  if (s->progress == NULL)
    return true;
  return s->progress (s->progress_user,
                      ((double) s->seed + (double) layers_done / n_layers) / s->r->n_seeds);
}

/* Lanes of the log-sum-exp below: 16 floats are one AVX-512 register (two AVX2 ones). */
#define LSE_LANES 16
/* Values per lane summed in float before the lanes' sums go into double: 16 terms of at
 * most 1 each keep a float sum's relative error under 16 ulp (1e-6), and the double sum
 * over the 3072 blocks of a 49 152-token vocabulary adds nothing measurable. */
#define LSE_BLOCK (16 * LSE_LANES)

/* ln sum_v exp(row[v]) of @n floats, in three passes written so that GCC vectorises them
 * (docs/benchmarks.md, "Induction-head detector", measured what this replaced: libm's
 * double exp over every logit was 3-8 % of the sweep):
 *   1. max = max_v row[v], per lane then across lanes;
 *   2. z = sum_v exp(row[v] - max) with sc_expf (core/sc-math.h, <= 2 ulp of expf), in
 *      float lanes over blocks of LSE_BLOCK values, each block's lanes added in double;
 *   3. max + ln z.
 * Every term is <= 1 after the max is subtracted, so nothing overflows. */
static double
log_sum_exp (const float *restrict row, int n)
{
  float lane_max[LSE_LANES];
  double z = 0.0;
  float max;
  int v, l, b0;

  /* 1. */
  for (l = 0; l < LSE_LANES; l++)
    lane_max[l] = -INFINITY;
  for (v = 0; v + LSE_LANES <= n; v += LSE_LANES)
    for (l = 0; l < LSE_LANES; l++)
      lane_max[l] = row[v + l] > lane_max[l] ? row[v + l] : lane_max[l];
  max = lane_max[0];
  for (l = 1; l < LSE_LANES; l++)
    max = lane_max[l] > max ? lane_max[l] : max;
  for (; v < n; v++)
    max = row[v] > max ? row[v] : max;
  /* 2. */
  for (b0 = 0; b0 + LSE_BLOCK <= n; b0 += LSE_BLOCK)
    {
      float lane_sum[LSE_LANES] = { 0 };
      for (v = b0; v < b0 + LSE_BLOCK; v += LSE_LANES)
        for (l = 0; l < LSE_LANES; l++)
          lane_sum[l] += sc_expf (row[v + l] - max);
      for (l = 0; l < LSE_LANES; l++)
        z += lane_sum[l];
    }
  for (v = b0; v < n; v++)
    z += sc_expf (row[v] - max);
  /* 3. */
  return (double) max + log (z);
}

/* Adds -ln softmax(logits[q-1])[ids[q]] = logsumexp(row) - row[ids[q]] to loss[q] for
 * q = 1 .. n-1: only the target's log-probability is needed, never the whole softmax. */
static void
add_losses (const float *logits, const int32_t *ids, int n, int n_vocab, double *loss)
{
  int q;

  for (q = 1; q < n; q++)
    {
      const float *row = logits + (size_t) (q - 1) * n_vocab;
      loss[q] += log_sum_exp (row, n_vocab) - (double) row[ids[q]];
    }
}

static double
mean_of (const double *x, int from, int to)
{
  double s = 0.0;
  int i;

  for (i = from; i < to; i++)
    s += x[i];
  return to > from ? s / (to - from) : NAN;
}

ScStatus
sc_induction_study_run (ScSession *session, const ScModel *model, const ScInductionParams *p,
                        ScInductionProgressFn progress, void *progress_user,
                        ScInductionResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScInductionResult *r = NULL;
  int32_t *ids = NULL;
  float *logits = NULL;
  int pre = 0, n, s, i, first;
  Study study = { 0 };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  ScStatus st;

  if (session == NULL || model == NULL || p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "induction: NULL argument");
  if (p->n_seeds < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "induction: at least one seed is needed "
                         "(S = %d)", p->n_seeds);
  info = sc_model_info (model);
  n = 0;
  /* 1. Check everything before the first run: T, the context, the vocabulary. */
  if ((st = check_len (model, p->seq_len, &pre, err)) != SC_OK)
    return st;
  n = pre + 2 * p->seq_len;
  r = sc_induction_result_new ((int) info->n_layers, (int) info->n_heads, p->seq_len,
                               p->n_seeds, pre);
  ids = malloc ((size_t) n * sizeof *ids);
  logits = malloc ((size_t) n * info->n_vocab * sizeof *logits);
  if (r == NULL || ids == NULL || logits == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "induction: out of memory for %d tokens", n);
      goto fail;
    }
  for (i = 0; i < r->n_layers * r->n_heads; i++)
    r->heads[i] = (ScInductionScores) { 0.0, 0.0, 0.0 };
  for (i = 0; i < n; i++)
    r->loss[i] = 0.0;

  /* 2. One forward pass per seed: the observer adds each head's scores, the logits add
   * each position's loss. */
  study.r = r;
  study.err = err;
  study.progress = progress;
  study.progress_user = progress_user;
  obs.observe = observe;
  obs.user = &study;
  opt.observer = &obs;
  opt.all_logits = true;
  opt.progress = layer_done;
  opt.progress_user = &study;
  for (s = 0; s < p->n_seeds; s++)
    {
      study.seed = s;
      if ((st = sc_induction_sequence (model, p->seq_len, s, ids, NULL, err)) != SC_OK)
        goto fail;
      if (s == 0)
        memcpy (r->ids, ids, (size_t) n * sizeof *ids);
      if ((st = sc_forward (session, ids, n, &opt, logits, err)) != SC_OK)
        {
          if (study.status != SC_OK) /* the observer's own failure, already in @err */
            st = study.status;
          goto fail;
        }
      add_losses (logits, ids, n, (int) info->n_vocab, r->loss);
    }

  /* 3. Means over the seeds, then over each copy. */
  for (i = 0; i < r->n_layers * r->n_heads; i++)
    {
      r->heads[i].prefix_matching /= p->n_seeds;
      r->heads[i].duplicate_token /= p->n_seeds;
      r->heads[i].previous_token /= p->n_seeds;
    }
  r->loss[0] = NAN;
  for (i = 1; i < n; i++)
    r->loss[i] /= p->n_seeds;
  first = pre < 1 ? 1 : pre; /* the first target is q = 1 */
  r->loss_first = mean_of (r->loss, first, pre + p->seq_len);
  r->loss_second = mean_of (r->loss, pre + p->seq_len, n);
  free (ids);
  free (logits);
  *out = r;
  return SC_OK;

fail:
  free (ids);
  free (logits);
  sc_induction_result_free (r);
  return st;
}
