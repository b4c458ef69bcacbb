/* sc-backward.c — the backward pass over ScBackend (see sc-backward.h).
 *
 * Forward (sc_grad_forward): sc_forward_taped() with keep_residuals and a tape, so after it
 *   resid[l]   (n, E)     the residual entering layer l, l = 0 .. L (L = final)
 *   kc[l], vc[l] (n, KV)  keys after RoPE and values                (the session's)
 *   tape[l]: q (n, Q), P (H, n, n), gu (n, 2F), x_mid (n, E), o (n, Q)   (this file's)
 * with tape[l] = slot l when the whole tape fits in tape_max_bytes, else one slot that
 * each layer's recomputation (sc_forward_taped from resid[l], layer l only) refills just
 * before its backward.
 *
 * Backward (sc_grad_backward):
 *   dz (rows, V)  = d objective / d logits of the objective's rows   (host, below)
 *   dx (n, E)     = rmsnorm' (dz Wout) at resid[L], 0 on other rows   (output head)
 *   for l = L - 1 .. 0:  dx = arch->layer_backward (dx), dP -> observer
 *   d objective / d input = dx
 * The objective's arithmetic (log-softmax over the vocabulary) is in double on the host, a
 * chunk of rows at a time, so the loss over a long sentence never holds (n, V) logits.
 */
#include "forward/sc-backward.h"

#include "backend/sc-backend-impl.h"
#include "forward/sc-session-private.h"
#include "model/sc-arch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows of logits handled at once by the objective: 32 x 49,152 floats = 6 MB. */
#define OBJECTIVE_CHUNK_ROWS 32

struct ScGrad {
  ScSession *s;
  ScBackend *b;
  const ScArchDesc *arch;
  const ScModelInfo *in;

  int cap;           /* tokens the buffers below hold */
  int slots;         /* tape slots: n_layers (whole) or 1 (recompute) */
  float *t_q, *t_probs, *t_gu, *t_xmid, *t_o; /* the tape */
  float *dx, *dh, *dq, *dk, *dv, *dattn, *dgu, *dact, *dprobs, *dz, *embd;
  float *host_probs, *host_dprobs; /* (H, n, n) host copies for a device backend */

  /* the last forward: n = 0 until one succeeds; n_kept the length whose ids, residuals
   * and tape are kept (a failed partial forward leaves n = 0 but keeps n_kept) */
  int32_t *ids;
  int n, n_kept;
  ScGradOptions opt;
  bool have_embd;
  ScGradStats stats;
};

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

ScStatus
sc_grad_new (ScSession *session, ScGrad **out, ScError *err)
{
  const ScModelInfo *in = sc_model_info (session->model);
  ScGrad *g;
  ScStatus st;

  *out = NULL;
  if (session->arch->layer_backward == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "architecture '%s' has no backward pass yet",
                         in->arch_name);
  if ((st = sc_backend_check_backward (session->b, err)) != SC_OK)
    return st;
  if ((g = calloc (1, sizeof *g)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  g->s = session;
  g->b = session->b;
  g->arch = session->arch;
  g->in = in;
  *out = g;
  return SC_OK;
}

static void
free_buffers (ScGrad *g)
{
  float **bufs[] = { &g->t_q, &g->t_probs, &g->t_gu, &g->t_xmid, &g->t_o, &g->dx, &g->dh,
                     &g->dq, &g->dk, &g->dv, &g->dattn, &g->dgu, &g->dact, &g->dprobs, &g->dz,
                     &g->embd };
  size_t i;

  for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i] != NULL)
      {
        g->b->ops->free (g->b, *bufs[i]);
        *bufs[i] = NULL;
      }
  free (g->host_probs);
  free (g->host_dprobs);
  g->host_probs = g->host_dprobs = NULL;
  g->cap = 0;
  g->slots = 0;
}

void
sc_grad_free (ScGrad *g)
{
  if (g == NULL)
    return;
  free_buffers (g);
  free (g->ids);
  free (g);
}

/* Floats of one tape slot for n tokens: q, P, gu, x_mid, o. */
static size_t
slot_floats (const ScModelInfo *in, size_t n)
{
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim, F = in->n_ff;

  return 2 * n * Q + in->n_heads * n * n + n * 2 * F + n * E;
}

/* The backward's own floats for n tokens (everything but the tape). */
static size_t
grad_floats (const ScModelInfo *in, size_t n)
{
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff;

  return 3 * n * E + 2 * n * Q + 2 * n * KV + 3 * n * F + in->n_heads * n * n
         + (size_t) OBJECTIVE_CHUNK_ROWS * in->n_vocab;
}

static ScStatus
ensure_buffers (ScGrad *g, int n, size_t tape_max, ScError *err)
{
  const ScModelInfo *in = g->in;
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff, H = in->n_heads,
               L = in->n_layers, N = (size_t) n;
  const int slots = slot_floats (in, N) * sizeof (float) * L <= tape_max ? (int) L : 1;
  const bool host = sc_backend_supports (g->b, SC_BACKEND_CAP_HOST_MEMORY);
  ScBackend *b = g->b;

  if (n <= g->cap && slots == g->slots)
    return SC_OK;
  free_buffers (g);
  g->t_q = b->ops->alloc (b, slots * N * Q, err);
  g->t_probs = b->ops->alloc (b, slots * H * N * N, err);
  g->t_gu = b->ops->alloc (b, slots * N * 2 * F, err);
  g->t_xmid = b->ops->alloc (b, slots * N * E, err);
  g->t_o = b->ops->alloc (b, slots * N * Q, err);
  g->dx = b->ops->alloc (b, N * E, err);
  g->dh = b->ops->alloc (b, N * E, err);
  g->embd = b->ops->alloc (b, N * E, err);
  g->dq = b->ops->alloc (b, N * Q, err);
  g->dattn = b->ops->alloc (b, N * Q, err);
  g->dk = b->ops->alloc (b, N * KV, err);
  g->dv = b->ops->alloc (b, N * KV, err);
  g->dgu = b->ops->alloc (b, N * 2 * F, err);
  g->dact = b->ops->alloc (b, N * F, err);
  g->dprobs = b->ops->alloc (b, H * N * N, err);
  g->dz = b->ops->alloc (b, (size_t) OBJECTIVE_CHUNK_ROWS * in->n_vocab, err);
  if (!host)
    {
      g->host_probs = malloc (H * N * N * sizeof (float));
      g->host_dprobs = malloc (H * N * N * sizeof (float));
    }
  if (!g->t_q || !g->t_probs || !g->t_gu || !g->t_xmid || !g->t_o || !g->dx || !g->dh
      || !g->embd || !g->dq || !g->dattn || !g->dk || !g->dv || !g->dgu || !g->dact
      || !g->dprobs || !g->dz
      || (!host && (!g->host_probs || !g->host_dprobs)))
    {
      free_buffers (g);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory for the backward pass of %d tokens "
                           "(tape of %d layer%s: %zu MB)", n, slots, slots == 1 ? "" : "s",
                           (size_t) slots * slot_floats (in, N) * sizeof (float) >> 20);
    }
  g->cap = n;
  g->slots = slots;
  return SC_OK;
}

/* The intervention's fields the backward can follow (sc-backward.h). */
static ScStatus
check_intervention (const ScIntervention *iv, const ScModelInfo *in, ScError *err)
{
  size_t i;
  int e;

  if (iv == NULL)
    return SC_OK;
  if (iv->head_mean_on != NULL)
    for (i = 0; i < (size_t) in->n_layers * in->n_heads; i++)
      if (iv->head_mean_on[i])
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: mean-ablation (layer %zu head "
                             "%zu) has no backward; zero-ablate with head_scale instead",
                             i / in->n_heads, i % in->n_heads);
  if (iv->head_patch_on != NULL || iv->resid_patch != NULL || iv->q_patch_on != NULL
      || iv->k_patch_on != NULL || iv->v_patch_on != NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: activation patching has no "
                         "backward (attribution patching runs the clean and corrupted runs "
                         "unpatched)");
  for (e = 0; iv->edits != NULL && e < iv->n_edits; e++)
    if (iv->edits[e].kind != SC_ATTN_EDIT_NONE && iv->edits[e].kind != SC_ATTN_EDIT_REPLACE)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: edits[%d] (kind %d) has no "
                           "backward; only SC_ATTN_EDIT_REPLACE edits do", e,
                           (int) iv->edits[e].kind);
  return SC_OK;
}

/* The tape as sc_forward_taped wants it: every layer its own slot, or all in slot 0. */
static ScForwardTape
make_tape (const ScGrad *g, int n, bool recompute, int stop_layer)
{
  const ScModelInfo *in = g->in;
  const size_t N = (size_t) n, whole = g->slots > 1;
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim, F = in->n_ff;

  return (ScForwardTape) {
    .q = g->t_q, .probs = g->t_probs, .gu = g->t_gu, .x_mid = g->t_xmid, .o = g->t_o,
    .q_stride = whole * N * Q, .probs_stride = whole * in->n_heads * N * N,
    .gu_stride = whole * N * 2 * F, .x_mid_stride = whole * N * E, .o_stride = whole * N * Q,
    .input_embd = g->have_embd ? g->embd : NULL,
    .stop_layer = stop_layer, .recompute = recompute,
  };
}

static size_t
session_floats (const ScModelInfo *in, size_t n)
{
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff, L = in->n_layers;

  /* x, h, qkv, q, kc, vc, o, gu, act, probs, resid (sc-forward.c, ensure_capacity) */
  return n * (2 * E + (Q + 2 * KV) + Q + 2 * L * KV + Q + 3 * F) + in->n_heads * n * n
         + (L + 1) * n * E;
}

/* sc_grad_forward from opt->start_layer: the buffers, ids and the layers below are the
 * previous forward's. */
static ScStatus
forward_from (ScGrad *g, const int32_t *ids, int n, const ScGradOptions *opt, double t0,
              ScError *err)
{
  ScForwardOptions fo = { .intervention = opt->intervention, .observer = opt->observer,
                          .keep_residuals = true, .start_layer = opt->start_layer };
  ScForwardTape tape = make_tape (g, n, true, 0);
  ScStatus st;

  g->opt = *opt;
  if ((st = sc_forward_taped (g->s, ids, n, &fo, &tape, NULL, err)) != SC_OK)
    return st;
  g->n = n;
  g->stats.forward_s = now_s () - t0;
  return SC_OK;
}

ScStatus
sc_grad_forward (ScGrad *g, const int32_t *ids, int n, const ScGradOptions *options,
                 ScError *err)
{
  static const ScGradOptions defaults = { 0 };
  const ScGradOptions *opt = options != NULL ? options : &defaults;
  const ScModelInfo *in = g->in;
  ScForwardOptions fo = { 0 };
  ScForwardTape tape;
  const double t0 = now_s ();
  int32_t *kept;
  ScStatus st;

  if (err != NULL)
    sc_error_clear (err);
  g->n = 0;
  if (ids == NULL || n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: empty input: there are no tokens");
  if ((st = check_intervention (opt->intervention, in, err)) != SC_OK)
    return st;
  if (opt->start_layer < 0 || opt->start_layer >= (int) in->n_layers || opt->lowest_layer < 0
      || opt->lowest_layer >= (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: start_layer %d or lowest_layer %d "
                         "is outside 0..%u", opt->start_layer, opt->lowest_layer,
                         in->n_layers - 1);
  if (opt->start_layer > 0)
    {
      const bool same = g->n_kept == n && memcmp (g->ids, ids, (size_t) n * sizeof *ids) == 0
                        && !g->have_embd && opt->input_embd == NULL;
      if (!same || sc_intervention_first_layer (opt->intervention, in) < opt->start_layer)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: start_layer %d needs a previous "
                             "forward on the same ids (without input_embd) and an intervention "
                             "that changes nothing below it", opt->start_layer);
      return forward_from (g, ids, n, opt, t0, err);
    }
  if ((st = ensure_buffers (g, n, opt->tape_max_bytes > 0 ? opt->tape_max_bytes
                                                          : SC_GRAD_TAPE_MAX_BYTES, err)) != SC_OK)
    return st;
  if ((kept = realloc (g->ids, (size_t) n * sizeof *kept)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  memcpy (kept, ids, (size_t) n * sizeof *kept);
  g->ids = kept;
  g->have_embd = opt->input_embd != NULL;
  if (g->have_embd
      && (st = g->b->ops->upload (g->b, g->embd, opt->input_embd, (size_t) n * in->n_embd, err))
             != SC_OK)
    return st;
  /* input_embd is in the token embeddings' space: Gemma's scale, as the lookup's */
  if (g->have_embd && in->embd_scale != 0.0f
      && (st = sc_backend_scale (g->b, g->embd, g->embd, in->embd_scale,
                                 (size_t) n * in->n_embd, err)) != SC_OK)
    return st;
  g->opt = *opt;

  fo.intervention = opt->intervention;
  fo.observer = opt->observer;
  fo.keep_residuals = true;
  tape = make_tape (g, n, false, 0);
  if ((st = sc_forward_taped (g->s, ids, n, &fo, &tape, NULL, err)) != SC_OK)
    return st;
  g->n = g->n_kept = n;
  g->stats = (ScGradStats) {
    .recomputed = g->slots == 1 && in->n_layers > 1,
    .tape_bytes = (size_t) g->slots * slot_floats (in, (size_t) n) * sizeof (float),
    .grad_bytes = grad_floats (in, (size_t) n) * sizeof (float),
    .session_bytes = session_floats (in, (size_t) g->s->cap) * sizeof (float),
    .forward_s = now_s () - t0,
  };
  return SC_OK;
}

ScStatus
sc_grad_logits (ScGrad *g, int row, float *logits, ScError *err)
{
  if (g->n == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: no forward pass yet");
  if (row < 0 || row >= g->n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: row %d is outside 0..%d", row,
                         g->n - 1);
  return sc_session_kept_logits (g->s, row, 1, logits, err);
}

/* log-sum-exp of @z (V) in double. */
static double
log_sum_exp (const float *z, int V)
{
  double mx = -INFINITY, sum = 0.0;
  int v;

  for (v = 0; v < V; v++)
    if (z[v] > mx)
      mx = z[v];
  for (v = 0; v < V; v++)
    sum += exp ((double) z[v] - mx);
  return mx + log (sum);
}

/* dz (V) = weight * (onehot (target) - softmax (z)): the gradient of weight * log p(target). */
static void
logp_gradient (const float *z, int V, int32_t target, double weight, double lse, float *dz)
{
  int v;

  for (v = 0; v < V; v++)
    dz[v] = (float) (-weight * exp ((double) z[v] - lse));
  dz[target] += (float) weight;
}

/* Gemma 2's final soft-capping backwards, on the host: @z (@rows × V) are the capped logits
 * z = cap tanh(u / cap), so dz/du = 1 - (z / cap)^2 turns @dz (d objective / d z) into
 * d objective / d u in place. A model without it is left as it is. */
static void
softcap_backward (const ScModelInfo *in, const float *z, float *dz, int rows)
{
  const double cap = in->final_softcap;

  if (cap <= 0.0)
    return;
  for (size_t t = 0; t < (size_t) rows * in->n_vocab; t++)
    {
      const double c = (double) z[t] / cap;
      dz[t] = (float) ((double) dz[t] * (1.0 - c * c));
    }
}

/* The output head's backward for rows @row0 .. + @rows whose d objective / d logits are in
 * g->dz: dx[rows] = rmsnorm' (dz Wout) at the final residual. */
static ScStatus
output_backward (ScGrad *g, int row0, int rows, ScError *err)
{
  const ScModelInfo *in = g->in;
  const int E = (int) in->n_embd, V = (int) in->n_vocab;
  const float *final = g->s->resid + ((size_t) in->n_layers * g->s->cap + row0) * E;
  ScBackend *b = g->b;
  ScStatus st;

  if ((st = b->ops->matmul_backward (b, g->dh, g->dz, g->s->output, rows, E, V, false, err))
      != SC_OK)
    return st;
  return b->ops->rmsnorm_backward (b, g->dx + (size_t) row0 * E, g->dh, final,
                                   g->s->output_norm, rows, E, in->norm_eps, false, err);
}

/* d objective / d final residual into g->dx (zero on rows the objective does not read),
 * and the objective's value. */
static ScStatus
objective_backward (ScGrad *g, const ScObjective *obj, double *value, ScError *err)
{
  const ScModelInfo *in = g->in;
  const int V = (int) in->n_vocab, n = g->n, E = (int) in->n_embd;
  ScBackend *b = g->b;
  float *z, *dz;
  double total = 0.0;
  ScStatus st = SC_OK;
  int row0, rows, i;

  z = malloc ((size_t) 2 * OBJECTIVE_CHUNK_ROWS * V * sizeof *z);
  if (z == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory for the objective's logits");
  dz = z + (size_t) OBJECTIVE_CHUNK_ROWS * V;
  /* zero dx: rows the objective does not read get no gradient from the output */
  memset (dz, 0, (size_t) E * sizeof *dz);
  for (i = 0; i < n && st == SC_OK; i++)
    st = b->ops->upload (b, g->dx + (size_t) i * E, dz, (size_t) E, err);
  if (st != SC_OK)
    goto out;

  if (obj->kind == SC_OBJECTIVE_LOSS)
    for (row0 = 0; row0 < n - 1 && st == SC_OK; row0 += rows)
      {
        rows = n - 1 - row0 < OBJECTIVE_CHUNK_ROWS ? n - 1 - row0 : OBJECTIVE_CHUNK_ROWS;
        if ((st = sc_session_kept_logits (g->s, row0, rows, z, err)) != SC_OK)
          break;
        for (i = 0; i < rows; i++)
          {
            const float *zi = z + (size_t) i * V;
            const int32_t next = g->ids[row0 + i + 1];
            const double lse = log_sum_exp (zi, V);
            total -= ((double) zi[next] - lse) / (n - 1);
            /* d/dz of -(1/(n-1)) log p(next) */
            logp_gradient (zi, V, next, -1.0 / (n - 1), lse, dz + (size_t) i * V);
          }
        softcap_backward (in, z, dz, rows);
        if ((st = b->ops->upload (b, g->dz, dz, (size_t) rows * V, err)) == SC_OK)
          st = output_backward (g, row0, rows, err);
      }
  else
    {
      const int row = obj->position < 0 ? n - 1 : obj->position;
      /* the row's logits, which the caller's own gradient does not need unless they were
       * soft-capped: each computation reads the whole output matrix again */
      if ((obj->kind != SC_OBJECTIVE_DLOGITS || in->final_softcap > 0.0f)
          && (st = sc_session_kept_logits (g->s, row, 1, z, err)) != SC_OK)
        goto out;
      if (obj->kind == SC_OBJECTIVE_LOGP)
        {
          const double lse = log_sum_exp (z, V);
          total = (double) z[obj->target] - lse;
          logp_gradient (z, V, obj->target, 1.0, lse, dz);
        }
      else if (obj->kind == SC_OBJECTIVE_LOGIT_DIFF)
        {
          total = (double) z[obj->target] - (double) z[obj->contrast];
          memset (dz, 0, (size_t) V * sizeof *dz);
          dz[obj->target] = 1.0f;
          dz[obj->contrast] = -1.0f;
        }
      else
        {
          memcpy (dz, obj->dlogits, (size_t) V * sizeof *dz);
          total = NAN;
        }
      softcap_backward (in, z, dz, 1);
      if ((st = b->ops->upload (b, g->dz, dz, (size_t) V, err)) == SC_OK)
        st = output_backward (g, row, 1, err);
    }
  if (value != NULL)
    *value = total;
out:
  free (z);
  return st;
}

static ScStatus
check_objective (const ScGrad *g, const ScObjective *obj, ScError *err)
{
  const int n = g->n, V = (int) g->in->n_vocab;

  if (n == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: no forward pass yet");
  if (obj == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: no objective");
  switch (obj->kind)
    {
    case SC_OBJECTIVE_LOSS:
      if (n < 2)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: the sentence loss needs at "
                             "least 2 tokens (there is %d)", n);
      return SC_OK;
    case SC_OBJECTIVE_LOGP:
    case SC_OBJECTIVE_DLOGITS:
    case SC_OBJECTIVE_LOGIT_DIFF:
      if (obj->position < -1 || obj->position >= n)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: objective position %d is "
                             "outside 0..%d", obj->position, n - 1);
      if (obj->kind != SC_OBJECTIVE_DLOGITS && (obj->target < 0 || obj->target >= V))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: target %d is outside the "
                             "vocabulary of %d", (int) obj->target, V);
      if (obj->kind == SC_OBJECTIVE_LOGIT_DIFF
          && (obj->contrast < 0 || obj->contrast >= V || obj->contrast == obj->target))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: contrast %d is outside the "
                             "vocabulary of %d or equal to the target", (int) obj->contrast, V);
      if (obj->kind == SC_OBJECTIVE_DLOGITS && obj->dlogits == NULL)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: DLOGITS without dlogits");
      return SC_OK;
    default:
      return sc_error_set (err, SC_ERR_INVALID_ARG, "gradients: objective kind %d is not an "
                           "ScObjectiveKind", (int) obj->kind);
    }
}

/* Hands layer @l's P and dP, per head, to @observe (host copies on a device backend). */
static ScStatus
observe_layer (ScGrad *g, int l, const float *probs, ScGradObserveFn observe, void *user,
               ScError *err)
{
  const ScModelInfo *in = g->in;
  const size_t nn = (size_t) g->n * g->n;
  const float *hp = probs, *hd = g->dprobs;
  ScStatus st;
  int h;

  if (!sc_backend_supports (g->b, SC_BACKEND_CAP_HOST_MEMORY))
    {
      if ((st = g->b->ops->download (g->b, g->host_probs, probs, in->n_heads * nn, err)) != SC_OK
          || (st = g->b->ops->download (g->b, g->host_dprobs, g->dprobs, in->n_heads * nn, err))
                 != SC_OK)
        return st;
      hp = g->host_probs;
      hd = g->host_dprobs;
    }
  for (h = 0; h < (int) in->n_heads; h++)
    if (!observe (user, l, h, hp + h * nn, hd + h * nn, g->n))
      return sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d head %d's gradient", l,
                           h);
  return SC_OK;
}

ScStatus
sc_grad_backward (ScGrad *g, const ScObjective *obj, ScGradObserveFn observe, void *user,
                  double *value, float *grad_embd, ScError *err)
{
  const ScModelInfo *in = g->in;
  const int L = (int) in->n_layers, H = (int) in->n_heads, n = g->n;
  const size_t N = (size_t) n, E = in->n_embd, KV = (size_t) in->n_kv_heads * in->head_dim;
  const ScIntervention *iv = g->opt.intervention;
  const size_t Q = (size_t) H * in->head_dim;
  const bool host = sc_backend_supports (g->b, SC_BACKEND_CAP_HOST_MEMORY);
  ScSession *s = g->s;
  const double t0 = now_s ();
  uint8_t *detached;
  float *host_do = NULL; /* d objective / d o on the host, for attn_output_grad */
  ScStatus st;
  int l, h, e;

  if (err != NULL)
    sc_error_clear (err);
  if ((st = check_objective (g, obj, err)) != SC_OK)
    return st;
  if ((detached = calloc ((size_t) H, 1)) == NULL
      || (g->opt.attn_output_grad != NULL && !host
          && (host_do = malloc (N * Q * sizeof *host_do)) == NULL))
    {
      free (detached);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  if ((st = objective_backward (g, obj, value, err)) != SC_OK)
    goto out;

  for (l = L - 1; l >= g->opt.lowest_layer; l--)
    {
      const int slot = g->slots > 1 ? l : 0;
      ScLayerGradCtx c;

      if (g->slots == 1 && L > 1)
        {
          /* refill the slot: layer l again, from its kept residual */
          ScForwardOptions fo = { .intervention = iv, .start_layer = l };
          ScForwardTape tape = make_tape (g, n, true, l + 1);
          if ((st = sc_forward_taped (s, g->ids, n, &fo, &tape, NULL, err)) != SC_OK)
            {
              sc_error_prefix (err, "recomputing layer %d", l);
              goto out;
            }
        }
      memset (detached, 0, (size_t) H);
      for (e = 0; iv != NULL && iv->edits != NULL && e < iv->n_edits; e++)
        if (iv->edits[e].kind == SC_ATTN_EDIT_REPLACE && iv->edits[e].layer == l)
          detached[iv->edits[e].head] = 1;
      for (h = 0; h < H && !detached[h]; h++)
        ;
      c = (ScLayerGradCtx) {
        .b = g->b, .info = in, .layer = l, .n = n,
        .x_in = s->resid + (size_t) l * s->cap * E,
        .x_mid = g->t_xmid + (size_t) slot * N * E,
        .q = g->t_q + (size_t) slot * N * in->n_heads * in->head_dim,
        .o = g->t_o + (size_t) slot * N * in->n_heads * in->head_dim,
        .k = s->kc + (size_t) l * s->cap * KV,
        .v = s->vc + (size_t) l * s->cap * KV,
        .probs = g->t_probs + (size_t) slot * H * N * N,
        .gu = g->t_gu + (size_t) slot * N * 2 * in->n_ff,
        .head_scale = iv != NULL && iv->head_scale != NULL ? iv->head_scale + (size_t) l * H
                                                           : NULL,
        .key_mask = iv != NULL ? iv->token_mask : NULL,
        .detached = h < H ? detached : NULL,
        .dx = g->dx, .dprobs = g->dprobs, .dh = g->dh, .dq = g->dq, .dk = g->dk, .dv = g->dv,
        .dattn = g->dattn, .dgu = g->dgu, .dact = g->dact,
      };
      if ((st = g->arch->layer_backward (&c, (const char *) s->layers
                                                 + (size_t) l * g->arch->layer_size,
                                         err)) != SC_OK)
        {
          sc_error_prefix (err, "backward of layer %d", l);
          goto out;
        }
      if (observe != NULL && (st = observe_layer (g, l, c.probs, observe, user, err)) != SC_OK)
        goto out;
      /* the layer backward left d o in dattn (sc-arch.h: attention_backward reads it) */
      if (g->opt.attn_output_grad != NULL)
        {
          if (!host && (st = g->b->ops->download (g->b, host_do, g->dattn, N * Q, err)) != SC_OK)
            goto out;
          if (!g->opt.attn_output_grad (g->opt.attn_output_grad_user, l,
                                        host ? g->dattn : host_do, n, (int) Q))
            {
              st = sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d's output "
                                 "gradient", l);
              goto out;
            }
        }
    }
  if (grad_embd != NULL)
    st = g->b->ops->download (g->b, grad_embd, g->dx, N * E, err);
  /* d / d token embedding = embd_scale d / d the residual entering layer 0 (Gemma) */
  if (st == SC_OK && grad_embd != NULL && g->opt.lowest_layer == 0 && in->embd_scale != 0.0f)
    for (size_t t = 0; t < N * E; t++)
      grad_embd[t] *= in->embd_scale;
  g->stats.backward_s = now_s () - t0;
out:
  free (detached);
  free (host_do);
  return st;
}

ScGradStats
sc_grad_stats (const ScGrad *g)
{
  return g->stats;
}
