/* sc-variants.c — one layer's heads zeroed one at a time, the runs stacked
 * (sc_forward_zero_heads in sc-forward.h).
 *
 * An ablation sweep runs, for each head h of layer l, the layers l .. L - 1 again from the
 * residual entering l. The nine runs of one layer differ only in which head is zeroed, and
 * each product of each layer is a small one (64 rows for a 64-token text): OpenBLAS runs
 * nine products of 64 rows at 0.70–0.85 of the rate of one product of 576 rows on the same
 * weights (docs/benchmarks.md, "Head sweep: the runs of one layer stacked"). Here the runs
 * are stacked (ScLayerCtx.n_seq): run v's rows are rows v n .. (v + 1) n - 1 of one set of
 * buffers, every product is one matrix product for all of them, and RoPE and attention run
 * per run over its own keys and values, with run v's head scales (1, and 0 for its head).
 *
 * What stays exact: each run's attention is the attention op on the same rows with the
 * same scales as the one-at-a-time run (the same bits). What does not: a product's bits
 * depend on its row count in OpenBLAS (a row of a 576-row product need not equal the same
 * row of a 64-row one, nor the last row alone, which the one-at-a-time fast path computes
 * through sgemv; nine last rows here are one product of nine). So the
 * logits are within a bound of the one-at-a-time runs, measured and tested in
 * tests/engine/test-ablation-last.c. As in the one-at-a-time fast path the last layer
 * computes every row's keys and values but its attention, W_O and feed-forward for the last
 * row of each run (gathered: ScLayerCtx.x_tail, q_tail). Memory: the rows of one group of
 * runs' activations and of one layer's keys and values, at most STACK_BYTES_MAX (SmolLM2,
 * 9 runs of 64 tokens: 18 MB), allocated per call.
 */
#include "forward/sc-forward.h"

#include "backend/sc-backend-impl.h"
#include "forward/sc-session-private.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  float *x, *h, *qkv, *q, *o, *gu, *act, *kc, *vc;
  float *x_tail, *q_tail; /* (runs, E), (runs, Q): the last layer's last rows */
} Stack;

static void
stack_free (ScBackend *b, Stack *st)
{
  float **bufs[] = { &st->x, &st->h, &st->qkv, &st->q, &st->o, &st->gu, &st->act, &st->kc,
                     &st->vc, &st->x_tail, &st->q_tail };
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i] != NULL)
      {
        b->ops->free (b, *bufs[i]);
        *bufs[i] = NULL;
      }
}

/* How much memory one group of stacked runs may take: a call's runs go through the layers
 * in groups small enough for it (SmolLM2: nine runs of up to ~1,800 tokens in one). */
#define STACK_BYTES_MAX ((size_t) 256 << 20)

/* Floats per row of one run in a stack: x, h, qkv, q, o, gu, act, k, v (stack_alloc). */
static size_t
stack_row_floats (const ScModelInfo *in)
{
  const size_t Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim;

  return 2 * (size_t) in->n_embd + (Q + 2 * KV) + 2 * Q + 3 * (size_t) in->n_ff + 2 * KV;
}

static ScStatus
stack_alloc (ScBackend *b, const ScModelInfo *in, size_t runs, size_t rows, Stack *st,
             ScError *err)
{
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff;

  memset (st, 0, sizeof *st);
  st->x = b->ops->alloc (b, rows * E, err);
  st->h = b->ops->alloc (b, rows * E, err);
  st->qkv = b->ops->alloc (b, rows * (Q + 2 * KV), err);
  st->q = b->ops->alloc (b, rows * Q, err);
  st->o = b->ops->alloc (b, rows * Q, err);
  st->gu = b->ops->alloc (b, rows * 2 * F, err);
  st->act = b->ops->alloc (b, rows * F, err);
  st->kc = b->ops->alloc (b, rows * KV, err);
  st->vc = b->ops->alloc (b, rows * KV, err);
  st->x_tail = b->ops->alloc (b, runs * E, err);
  st->q_tail = b->ops->alloc (b, runs * Q, err);
  if (st->x && st->h && st->qkv && st->q && st->o && st->gu && st->act && st->kc && st->vc
      && st->x_tail && st->q_tail)
    return SC_OK;
  stack_free (b, st);
  if (err != NULL && err->status != SC_OK)
    return sc_error_prefix (err, "stacked runs of %zu rows", rows);
  return sc_error_set (err, SC_ERR_NOMEM, "out of memory for stacked runs of %zu rows", rows);
}

ScStatus
sc_forward_zero_heads (ScSession *s, const int32_t *ids, int n, int layer, const int *heads,
                       int n_var, float *logits, ScError *err)
{
  const ScModelInfo *in;
  ScBackend *b;
  Stack st = { 0 };
  float *scale = NULL, *last = NULL;
  size_t E, group;
  int H, L, v, l;
  ScStatus status;

  if (err != NULL)
    sc_error_clear (err);
  if (s == NULL || ids == NULL || heads == NULL || logits == NULL || n < 1 || n_var < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "zero_heads: NULL session, ids, heads or "
                         "logits, or no tokens or runs");
  in = sc_model_info (s->model);
  b = s->b;
  E = in->n_embd;
  H = (int) in->n_heads;
  L = (int) in->n_layers;
  if (!s->arch->stacks_sequences || !sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY))
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "zero_heads: the %s layer on the %s backend "
                         "does not run stacked sequences (run the heads one at a time)",
                         s->arch->name, sc_backend_name (b));
  if (layer < 0 || layer >= L)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "zero_heads: layer %d is outside 0..%d",
                         layer, L - 1);
  for (v = 0; v < n_var; v++)
    if (heads[v] < 0 || heads[v] >= H)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "zero_heads: head %d of run %d is outside "
                           "0..%d", heads[v], v, H - 1);
  if (s->resid == NULL || s->kept_final || s->kept_n != n
      || memcmp (s->kept_ids, ids, (size_t) n * sizeof *ids) != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "zero_heads: needs the residuals kept by a "
                         "previous keep_residuals run on the same %d tokens", n);
  /* the attention as the one-at-a-time runs take it (sc-forward.c, choose_capture): the
   * fused op without probabilities where the backend has one, else into the session's */
  if (s->capture_want == NULL && (s->probs == NULL || n > s->cap))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "zero_heads: the session holds no "
                         "attention buffer for %d tokens", n);
  /* groups of at most `group` runs, small enough for STACK_BYTES_MAX, through one stack */
  group = STACK_BYTES_MAX / ((size_t) n * stack_row_floats (in) * sizeof (float));
  group = group < 1 ? 1 : group > (size_t) n_var ? (size_t) n_var : group;
  scale = malloc ((size_t) n_var * H * sizeof *scale);
  last = malloc (group * E * sizeof *last);
  if (scale == NULL || last == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "zero_heads: out of memory");
      goto out;
    }
  for (v = 0; v < n_var; v++)
    for (int h = 0; h < H; h++)
      scale[(size_t) v * H + h] = h == heads[v] ? 0.0f : 1.0f;
  if ((status = stack_alloc (b, in, group, group * (size_t) n, &st, err)) != SC_OK)
    goto out;

  for (int g0 = 0; g0 < n_var; g0 += (int) group)
    {
      const int k = n_var - g0 < (int) group ? n_var - g0 : (int) group;
      /* every run starts from the residual the clean run kept entering @layer */
      for (v = 0; v < k; v++)
        if ((status = b->ops->copy (b, st.x + (size_t) v * n * E,
                                    s->resid + (size_t) layer * s->cap * E, (size_t) n * E,
                                    err)) != SC_OK)
          goto out;
      for (l = layer; l < L; l++)
        {
          const ScLayerCtx c = {
            .b = b, .info = in, .layer = l, .n_past = 0, .n_q = n, .n_k = n, .n_seq = k,
            .x = st.x, .h = st.h, .qkv = st.qkv, .q = st.q, .o = st.o, .gu = st.gu,
            .act = st.act, .k_cache = st.kc, .v_cache = st.vc, .probs = s->probs,
            .capture = s->capture_want != NULL, .capture_slot = 0,
            .head_scale = l == layer ? scale + (size_t) g0 * H : NULL,
            /* the last layer: every row's keys and values, then each run's last row alone */
            .n_tail = l == L - 1 && n > 1 ? 1 : 0, .x_tail = st.x_tail, .q_tail = st.q_tail,
          };
          if ((status = s->arch->layer (&c, (const char *) s->layers + (size_t) l
                                                                        * s->arch->layer_size,
                                        err)) != SC_OK)
            {
              sc_error_prefix (err, "layer %d of %d stacked runs", l, k);
              goto out;
            }
        }
      /* each run's last row, through the output head as sc_forward applies it. Where the
       * last layer left them: x_tail for stacked runs; x's row n - 1 for one run (n_seq 1
       * is a plain layer, whose tail stays in x); x itself when each run is one row */
      if ((status = b->ops->download (b, last,
                                      n == 1 ? st.x : k > 1 ? st.x_tail
                                                            : st.x + (size_t) (n - 1) * E,
                                      (size_t) k * E, err)) != SC_OK
          || (status = sc_session_unembed (s, last, k, logits + (size_t) g0 * in->n_vocab,
                                           err)) != SC_OK)
        goto out;
    }

out:
  stack_free (b, &st);
  free (scale);
  free (last);
  return status;
}
