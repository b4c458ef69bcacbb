/* sc-predict.c — the top-k next tokens of every position, and greedy continuation (see
 * sc-predict.h).
 *
 * Top-k, for the n rows of a kept run, in chunks of R = SC_PREDICT_CHUNK_ROWS rows:
 *   logits (R, V)   = sc_session_kept_logits (rows r0 .. r0 + R - 1)   the output head
 *   for each row (rows in parallel on a pool of the machine's cores):
 *     best (k)      = the k largest logits, scanned in id order          ties: lower id
 *     m             = logits[best[0]]                                     the maximum
 *     Z             = sum_j exp (logits[j] - m)                           in double
 *     probs (k)     = exp (logits[best] - m) / Z
 * so at most R x V floats of logits exist at once, whatever n is. The vocabulary
 * projection runs on the backend (its own threads); the per-row passes are ~40% of the
 * time on a CPU (docs/benchmarks.md), so they get the pool.
 *
 * What it is not: a sampler (greedy only), nor a store of the result (the capture paths
 * hand it to the store).
 */
#include "forward/sc-predict.h"

#include "core/sc-pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
sc_predictions_clear (ScPredictions *p)
{
  if (p == NULL)
    return;
  free (p->ids);
  free (p->logits);
  free (p->probs);
  memset (p, 0, sizeof *p);
}

/* The @k largest of @x (@n values) into @ids and @vals, best first. A value enters only
 * when strictly larger than the current k-th, and the scan goes in id order, so of equal
 * values the lower id ranks first (the argmax of greedy decoding is top-1). */
static void
top_k (const float *x, int n, int k, int32_t *ids, float *vals)
{
  int have = 0;

  for (int j = 0; j < n; j++)
    {
      float v = x[j];
      int at;

      if (have == k && !(v > vals[k - 1]))
        continue;
      /* insertion: shift the smaller ones one place down */
      at = have < k ? have++ : k - 1;
      while (at > 0 && v > vals[at - 1])
        {
          vals[at] = vals[at - 1];
          ids[at] = ids[at - 1];
          at--;
        }
      vals[at] = v;
      ids[at] = j;
    }
}

/* Row @pos's top @k and softmax probabilities (the header's passes). False when a logit is
 * NaN or infinite (a NaN never enters the top k, so the sum is then NaN; +inf makes the
 * maximum infinite). */
static bool
predict_row (const float *row, int V, int k, int32_t *ids, float *vals, double *probs)
{
  double m, z = 0.0;

  top_k (row, V, k, ids, vals);
  m = vals[0];
  for (int j = 0; j < V; j++)
    z += exp ((double) row[j] - m);
  if (!isfinite (m) || !isfinite (z))
    return false;
  for (int i = 0; i < k; i++)
    probs[i] = exp ((double) vals[i] - m) / z;
  return true;
}

/* One chunk's rows, for the pool: row r of the chunk is position r0 + r. */
typedef struct {
  const float *chunk; /* (rows, V) */
  int r0, V, k;
  ScPredictions *out;
  bool *ok;           /* (rows) */
} ChunkJob;

static void
chunk_row (void *ctx, int r)
{
  const ChunkJob *j = ctx;
  size_t at = (size_t) (j->r0 + r) * j->k;

  j->ok[r] = predict_row (j->chunk + (size_t) r * j->V, j->V, j->k, j->out->ids + at,
                          j->out->logits + at, j->out->probs + at);
}

ScStatus
sc_predict_topk (ScSession *s, int n, int k, ScProgressFn progress, void *progress_user,
                 ScPredictions *out, ScError *err)
{
  const ScModelInfo *in;
  float *chunk = NULL;
  bool ok[SC_PREDICT_CHUNK_ROWS];
  ScPool *pool = NULL;
  ScStatus st = SC_OK;
  int V;

  if (err != NULL)
    sc_error_clear (err);
  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: NULL argument");
  memset (out, 0, sizeof *out);
  if (s == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: NULL argument");
  in = sc_model_info (sc_session_model (s));
  V = (int) in->n_vocab;
  if (n < 1 || n > (int) in->n_ctx_train)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: %d positions; a run has 1 .. "
                         "%u", n, in->n_ctx_train);
  if (k < 1 || k > V)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: k = %d is outside 1 .. %d "
                         "(the vocabulary)", k, V);

  out->n_positions = n;
  out->k = k;
  out->ids = malloc ((size_t) n * k * sizeof *out->ids);
  out->logits = malloc ((size_t) n * k * sizeof *out->logits);
  out->probs = malloc ((size_t) n * k * sizeof *out->probs);
  chunk = malloc ((size_t) SC_PREDICT_CHUNK_ROWS * V * sizeof *chunk);
  /* NULL (threads could not be made) runs the rows in this thread */
  pool = n > 1 ? sc_pool_new (0) : NULL;
  if (out->ids == NULL || out->logits == NULL || out->probs == NULL || chunk == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "predictions: out of memory for %d positions", n);
      goto out;
    }
  for (int r0 = 0; r0 < n; r0 += SC_PREDICT_CHUNK_ROWS)
    {
      int rows = n - r0 < SC_PREDICT_CHUNK_ROWS ? n - r0 : SC_PREDICT_CHUNK_ROWS;

      if ((st = sc_session_kept_logits (s, r0, rows, chunk, err)) != SC_OK)
        {
          sc_error_prefix (err, "predictions");
          goto out;
        }
      ChunkJob job = { chunk, r0, V, k, out, ok };

      if (pool != NULL)
        sc_pool_run (pool, rows, chunk_row, &job);
      else
        for (int r = 0; r < rows; r++)
          chunk_row (&job, r);
      for (int r = 0; r < rows; r++)
        if (!ok[r])
          {
            st = sc_error_set (err, SC_ERR_RANGE, "predictions: position %d has a logit that "
                               "is NaN or infinite", r0 + r);
            goto out;
          }
      if (progress != NULL && !progress (progress_user, r0 + rows, n))
        {
          st = sc_error_set (err, SC_ERR_CANCELLED, "predictions: cancelled after %d of %d "
                             "positions", r0 + rows, n);
          goto out;
        }
    }

out:
  sc_pool_free (pool);
  free (chunk);
  if (st != SC_OK)
    sc_predictions_clear (out);
  return st;
}

ScStatus
sc_generate_greedy (ScSession *s, int32_t *ids, int n_prompt, int n_new, ScTokenFn on_token,
                    ScProgressFn progress, void *user, int *n_out, ScError *err)
{
  const ScModel *model;
  const ScModelInfo *in;
  float *logits;
  ScStatus st = SC_OK;
  int n;

  if (err != NULL)
    sc_error_clear (err);
  if (s == NULL || ids == NULL || n_out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "generate: NULL argument");
  *n_out = n = n_prompt;
  if (n_prompt < 1 || n_new < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "generate: %d prompt tokens and %d new ones "
                         "(at least 1 prompt token, and no negative count)", n_prompt, n_new);
  model = sc_session_model (s);
  in = sc_model_info (model);
  if ((int64_t) n_prompt + n_new > in->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "generate: %d prompt tokens + %d new ones exceed "
                         "the model's context of %u", n_prompt, n_new, in->n_ctx_train);
  if ((logits = malloc ((size_t) in->n_vocab * sizeof *logits)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "generate: out of memory");

  for (int i = 0; i < n_new; i++)
    {
      /* The first step runs the prompt; each later one only the newest token, against the
       * keys and values the session kept (KV cache). */
      ScForwardOptions opt = { .keep_kv = true, .n_past = i == 0 ? 0 : n - 1,
                               .progress = progress, .progress_user = user };
      int32_t next = 0;

      if ((st = sc_forward (s, ids, n, &opt, logits, err)) != SC_OK)
        break;
      for (int j = 1; j < (int) in->n_vocab; j++)
        if (logits[j] > logits[next])
          next = j;
      if (sc_tokenizer_is_eog (sc_model_tokenizer (model), next))
        break;
      ids[n++] = next;
      *n_out = n;
      if (on_token != NULL && !on_token (user, next, i + 1, n_new))
        {
          st = sc_error_set (err, SC_ERR_CANCELLED, "generate: stopped after %d tokens", i + 1);
          break;
        }
    }
  free (logits);
  return st;
}
