/* sc-intervention.c — what an ScIntervention does inside the forward pass
 * (sc-intervention.h): its fields checked against the model and the call, the first layer
 * it changes, and the layer hook that applies attention edits, mean-ablation and patching
 * to chosen heads (sc-intervention-private.h). The forward pass (sc-forward.c) calls these;
 * the per-element attention op and everything without an intervention stay there. */
#include "forward/sc-intervention-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sc-backend-impl.h"
#include "core/sc-math.h"
#include "core/sc-random.h"

/* The patch flags of (@layer, @head), patch_tokens of them, or NULL when the intervention
 * patches no head. */
static const uint8_t *
head_patch_rows (const ScIntervention *iv, int layer, int head, int H)
{
  if (iv == NULL || iv->head_patch_on == NULL)
    return NULL;
  return iv->head_patch_on + ((size_t) layer * H + head) * iv->patch_tokens;
}

/* Does @iv patch head @head of layer @layer's queries, keys or values? */
static bool
qkv_patched (const ScIntervention *iv, int layer, int head, int H)
{
  const size_t i = (size_t) layer * H + head;

  return iv != NULL
         && ((iv->q_patch_on != NULL && iv->q_patch_on[i])
             || (iv->k_patch_on != NULL && iv->k_patch_on[i])
             || (iv->v_patch_on != NULL && iv->v_patch_on[i]));
}

/* Does @iv patch any row of any head of layer @layer, or any head's q, k or v there? */
static bool
layer_patched (const ScIntervention *iv, int layer, int H)
{
  const uint8_t *on = head_patch_rows (iv, layer, 0, H);

  for (int h = 0; h < H; h++)
    if (qkv_patched (iv, layer, h, H))
      return true;
  if (on == NULL)
    return false;
  for (size_t i = 0; i < (size_t) H * iv->patch_tokens; i++)
    if (on[i])
      return true;
  return false;
}

int
sc_intervention_first_layer (const ScIntervention *iv, const ScModelInfo *info)
{
  int first = (int) info->n_layers;
  int l, h, e;

  if (iv == NULL)
    return first;
  if (iv->token_mask != NULL)
    return 0;
  for (l = 0; l < (int) info->n_layers && first == (int) info->n_layers; l++)
    for (h = 0; h < (int) info->n_heads; h++)
      {
        size_t i = (size_t) l * info->n_heads + h;
        if ((iv->head_scale != NULL && iv->head_scale[i] != 1.0f)
            || (iv->head_mean_on != NULL && iv->head_mean_on[i]))
          {
            first = l;
            break;
          }
      }
  for (e = 0; iv->edits != NULL && e < iv->n_edits; e++)
    if (iv->edits[e].kind != SC_ATTN_EDIT_NONE && iv->edits[e].layer >= 0
        && iv->edits[e].layer < first)
      first = iv->edits[e].layer;
  for (l = 0; l < first; l++)
    if (layer_patched (iv, l, (int) info->n_heads))
      {
        first = l;
        break;
      }
  if (iv->resid_patch != NULL && iv->resid_patch_layer >= 0 && iv->resid_patch_layer < first)
    first = iv->resid_patch_layer;
  return first;
}

/* The patch fields of @iv against the model and the call's @n tokens. */
static ScStatus
check_patches (const ScIntervention *iv, const ScModelInfo *in, int n, ScError *err)
{
  const int L = (int) in->n_layers, H = (int) in->n_heads, d = (int) in->head_dim,
            E = (int) in->n_embd;
  const bool any = iv->head_patch != NULL || iv->head_patch_on != NULL
                   || iv->resid_patch != NULL || iv->q_patch != NULL || iv->q_patch_on != NULL
                   || iv->k_patch != NULL || iv->k_patch_on != NULL || iv->v_patch != NULL
                   || iv->v_patch_on != NULL;
  const struct {
    const char *name;
    const float *x;
    const uint8_t *on;
  } qkv[3] = { { "q_patch", iv->q_patch, iv->q_patch_on },
               { "k_patch", iv->k_patch, iv->k_patch_on },
               { "v_patch", iv->v_patch, iv->v_patch_on } };

  if (!any)
    return SC_OK;
  if (iv->patch_tokens != n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: the patches were made for %d "
                         "tokens, the call runs %d", iv->patch_tokens, n);
  if (iv->head_patch != NULL && iv->head_patch_on == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_patch is set but "
                         "head_patch_on is NULL (which heads are patched?)");
  if (iv->head_patch_on != NULL)
    for (int l = 0; l < L; l++)
      for (int h = 0; h < H; h++)
        for (int p = 0; p < n; p++)
          {
            const size_t row = ((size_t) l * H + h) * n + p;
            if (!iv->head_patch_on[row])
              continue;
            if (iv->head_patch == NULL)
              return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_patch is NULL "
                                   "but head_patch_on asks for layer %d head %d position %d",
                                   l, h, p);
            for (int t = 0; t < d; t++)
              if (!isfinite (iv->head_patch[row * d + t]))
                return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_patch of "
                                     "layer %d head %d position %d is not finite at dimension "
                                     "%d", l, h, p, t);
          }
  if (iv->resid_patch != NULL)
    {
      if (iv->resid_patch_layer < 0 || iv->resid_patch_layer >= L)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: resid_patch_layer %d is "
                             "outside 0..%d", iv->resid_patch_layer, L - 1);
      if (iv->resid_patch_on == NULL)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: resid_patch is set but "
                             "resid_patch_on is NULL (which positions are patched?)");
      for (int p = 0; p < n; p++)
        for (int t = 0; iv->resid_patch_on[p] && t < E; t++)
          if (!isfinite (iv->resid_patch[(size_t) p * E + t]))
            return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: resid_patch at "
                                 "position %d is not finite at dimension %d", p, t);
    }
  for (int f = 0; f < 3; f++)
    {
      if (qkv[f].x != NULL && qkv[f].on == NULL)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: %s is set but %s_on is "
                             "NULL (which heads are patched?)", qkv[f].name, qkv[f].name);
      for (int i = 0; qkv[f].on != NULL && i < L * H; i++)
        {
          if (!qkv[f].on[i])
            continue;
          if (qkv[f].x == NULL)
            return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: %s is NULL but "
                                 "%s_on asks for layer %d head %d", qkv[f].name, qkv[f].name,
                                 i / H, i % H);
          for (size_t t = 0; t < (size_t) n * d; t++)
            if (!isfinite (qkv[f].x[(size_t) i * n * d + t]))
              return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: %s of layer %d "
                                   "head %d is not finite at position %d dimension %d",
                                   qkv[f].name, i / H, i % H, (int) (t / d), (int) (t % d));
        }
    }
  return SC_OK;
}

/* Checks every field of @iv against the model; the message names the field and the value. */
ScStatus
sc_intervention_check (const ScIntervention *iv, const ScModelInfo *in, int n, ScError *err)
{
  const int L = (int) in->n_layers, H = (int) in->n_heads, d = (int) in->head_dim;
  ScStatus st;
  int i, t, e, f;

  if (iv == NULL)
    return SC_OK;
  if (iv->head_scale != NULL)
    for (i = 0; i < L * H; i++)
      if (!isfinite (iv->head_scale[i]))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_scale[%d] (layer %d "
                             "head %d) is not finite", i, i / H, i % H);
  if (iv->head_mean != NULL && iv->head_mean_on == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_mean is set but "
                         "head_mean_on is NULL (which heads are mean-ablated?)");
  if (iv->head_mean_on != NULL)
    for (i = 0; i < L * H; i++)
      if (iv->head_mean_on[i])
        {
          if (iv->head_mean == NULL)
            return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_mean is NULL but "
                                 "head_mean_on[%d] asks for layer %d head %d", i, i / H, i % H);
          for (t = 0; t < d; t++)
            if (!isfinite (iv->head_mean[(size_t) i * d + t]))
              return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: head_mean of layer "
                                   "%d head %d is not finite at dimension %d", i / H, i % H, t);
        }
  if (iv->n_edits < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: n_edits %d is negative",
                         iv->n_edits);
  if (iv->n_edits > 0 && iv->edits == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: edits is NULL with n_edits %d",
                         iv->n_edits);
  for (e = 0; e < iv->n_edits; e++)
    {
      const ScAttnEdit *x = &iv->edits[e];
      if (x->layer < 0 || x->layer >= L)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: edits[%d].layer %d is "
                             "outside 0..%d", e, x->layer, L - 1);
      if (x->head < 0 || x->head >= H)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: edits[%d].head %d is "
                             "outside 0..%d", e, x->head, H - 1);
      if (x->kind < SC_ATTN_EDIT_NONE || x->kind > SC_ATTN_EDIT_REPLACE)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: edits[%d].kind %d is not "
                             "an ScAttnEditKind", e, (int) x->kind);
      if (x->kind == SC_ATTN_EDIT_REPLACE && x->probs == NULL)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: edits[%d] replaces layer "
                             "%d head %d with NULL probabilities", e, x->layer, x->head);
      for (f = 0; f < e && x->kind != SC_ATTN_EDIT_NONE; f++)
        if (iv->edits[f].kind != SC_ATTN_EDIT_NONE && iv->edits[f].layer == x->layer
            && iv->edits[f].head == x->head)
          return sc_error_set (err, SC_ERR_INVALID_ARG, "intervention: edits[%d] edits layer %d "
                               "head %d again (edits[%d] already does; one edit per head)", e,
                               x->layer, x->head, f);
    }
  if ((st = check_patches (iv, in, n, err)) != SC_OK)
    return st;
  return SC_OK;
}

/* ---- attention edits and mean-ablation (the layer's edit_heads hook) -------------- */

/* The edit of (@layer, @head), or NULL (SC_ATTN_EDIT_NONE entries are no edit). */
static const ScAttnEdit *
find_edit (const ScIntervention *iv, int layer, int head)
{
  int e;

  for (e = 0; iv->edits != NULL && e < iv->n_edits; e++)
    if (iv->edits[e].kind != SC_ATTN_EDIT_NONE && iv->edits[e].layer == layer
        && iv->edits[e].head == head)
      return &iv->edits[e];
  return NULL;
}

static bool
mean_on (const ScIntervention *iv, int layer, int head, int H)
{
  return iv->head_mean_on != NULL && iv->head_mean_on[(size_t) layer * H + head];
}

/* Does layer @l need edit_heads()? */
bool
sc_intervention_layer_edited (const ScIntervention *iv, int l, int H)
{
  int h;

  if (iv == NULL)
    return false;
  for (h = 0; h < H; h++)
    if (mean_on (iv, l, h, H) || find_edit (iv, l, h) != NULL)
      return true;
  return layer_patched (iv, l, H);
}

/* The PERMUTE stream of one row: the state is (seed, layer, head, pos) folded in through
 * one SplitMix64 step each, so every row has its own stream whatever the thread, the
 * order of the rows or n_past (pos is the query's position, not its row in this call). */
static uint64_t
permute_stream (uint64_t seed, int layer, int head, int pos)
{
  uint64_t st = seed, z;

  z = sc_splitmix64 (&st);
  st = z ^ (uint64_t) (uint32_t) layer;
  z = sc_splitmix64 (&st);
  st = z ^ (uint64_t) (uint32_t) head;
  z = sc_splitmix64 (&st);
  st = z ^ (uint64_t) (uint32_t) pos;
  return st;
}

/* Edits @w, the weights of one row's m allowed keys in key order, in place. */
static void
edit_weights (const ScAttnEdit *e, int layer, int head, int pos, float *w, int m)
{
  int t;

  switch (e->kind)
    {
    case SC_ATTN_EDIT_PERMUTE:
      {
        /* Fisher-Yates from the end; j = next % (t + 1) has a modulo bias below
         * (t + 1) / 2^64, far under float resolution for any context length */
        uint64_t st = permute_stream (e->seed, layer, head, pos);
        for (t = m - 1; t > 0; t--)
          {
            int j = (int) (sc_splitmix64 (&st) % (uint64_t) (t + 1));
            float tmp = w[t];
            w[t] = w[j];
            w[j] = tmp;
          }
        break;
      }
    case SC_ATTN_EDIT_UNIFORM:
      for (t = 0; t < m; t++)
        w[t] = 1.0f / (float) m;
      break;
    case SC_ATTN_EDIT_ZERO_TOP:
      {
        int top = 0;
        double rest = 0.0;
        if (m == 1) /* nothing to move the weight to: the row keeps its one key */
          break;
        for (t = 1; t < m; t++)
          if (w[t] > w[top]) /* strict: ties go to the lowest key */
            top = t;
        for (t = 0; t < m; t++)
          if (t != top)
            rest += w[t];
        w[top] = 0.0f;
        for (t = 0; t < m; t++)
          if (t != top)
            /* rest == 0: every other weight underflowed; they share the row equally */
            w[t] = rest > 0.0 ? (float) (w[t] / rest) : 1.0f / (float) (m - 1);
        break;
      }
    case SC_ATTN_EDIT_REPLACE: /* edit_heads() copies the given row itself */
    case SC_ATTN_EDIT_NONE:
    default:
      break;
    }
}

/* Recomputes row @i (position @p) of query head @h of layer @l from its queries, keys and
 * values, each the patch's where @iv patches it (sc-intervention.h), else the base run's
 * (@q (n_q, Q) and @k (n_k, KV) after RoPE): over the @m allowed keys @idx, the weights
 * softmax(attn_scale * q_p . k_j) computed in double into @w (as floats), each score
 * soft-capped first where the model caps them (Gemma 2: cap tanh(s / cap)). */
static void
patched_scores (const ScIntervention *iv, const ScModelInfo *in, int l, int h, int i, int p,
                int nk, const float *q, const float *k, const int *idx, int m, double *s,
                float *w)
{
  const int H = (int) in->n_heads, d = (int) in->head_dim, Q = H * d,
            KV = (int) in->n_kv_heads * d, g = h / (H / (int) in->n_kv_heads);
  const size_t lh = (size_t) l * H + h;
  const float *qi = iv->q_patch_on != NULL && iv->q_patch_on[lh]
                        ? iv->q_patch + (lh * nk + p) * d
                        : q + (size_t) i * Q + (size_t) h * d;
  const bool kp = iv->k_patch_on != NULL && iv->k_patch_on[lh];
  double mx = -INFINITY, sum = 0.0;
  int t, u;

  for (t = 0; t < m; t++)
    {
      const float *kj = kp ? iv->k_patch + (lh * nk + idx[t]) * d
                           : k + (size_t) idx[t] * KV + (size_t) g * d;
      double dot = 0.0;
      for (u = 0; u < d; u++)
        dot += (double) qi[u] * kj[u];
      s[t] = (double) in->attn_scale * dot;
      if (in->attn_softcap > 0.0f)
        s[t] = in->attn_softcap * tanh (s[t] / in->attn_softcap);
      if (s[t] > mx)
        mx = s[t];
    }
  for (t = 0; t < m; t++)
    sum += s[t] = exp (s[t] - mx);
  for (t = 0; t < m; t++)
    w[t] = (float) (s[t] / sum);
}

/* The ScLayerCtx hook (sc-arch.h): for each head of this layer with an edit, a mean or a
 * patch,
 *   1. its rows of P: the allowed keys of row i (position p = n_k - n_q + i) are those the
 *      attention op let it see (sc_attn_key_range, minus masked keys; an all-masked row
 *      has p alone); a head whose queries, keys or values are patched has the row's
 *      weights recomputed from them (patched_scores); the weights are then edited, every
 *      other key stays exactly 0;
 *   2. its rows of o: head_scale * the patch row where the head is patched at p,
 *      head_scale * mean for a mean-ablated head (its other rows), else
 *      head_scale * sum_j P'[i][j] V_g[j] (double sums, key order; V_g[j] the value patch
 *      where the head's values are patched) for each row the edit or a q/k/v patch
 *      changed; unchanged rows keep the op's bytes.
 * Device backends get the same through host copies of P, V and o (downloaded, uploaded),
 * and of q and K for a layer with q/k/v patches. */
ScStatus
sc_intervention_edit_heads (const ScLayerCtx *c, bool causal, int window, ScError *err)
{
  const ScIntervention *iv = ((const EditCtx *) c->edit_user)->iv;
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int H = (int) in->n_heads, d = (int) in->head_dim, Q = H * d,
            KV = (int) in->n_kv_heads * d, group = H / (int) in->n_kv_heads;
  const int nq = c->n_q, nk = c->n_k, l = c->layer;
  const size_t per_head = (size_t) nq * nk;
  const bool host = sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY);
  float *P = c->probs, *o = c->o, *stage = NULL, *orig, *w;
  const float *v = c->v_cache, *q = c->q, *k = c->k_cache;
  double *sc;
  int *idx;
  bool any_qkv = false;
  ScStatus st = SC_OK;
  int h, i, j, t;

  for (h = 0; h < H; h++)
    any_qkv = any_qkv || qkv_patched (iv, l, h, H);
  sc = malloc ((size_t) nk * (sizeof (double) + 2 * sizeof (float) + sizeof (int)));
  if (sc == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "attention edits: out of memory");
  orig = (float *) (sc + nk);
  w = orig + nk;
  idx = (int *) (w + nk);
  if (!host)
    {
      const size_t n_qk = any_qkv ? (size_t) nq * Q + (size_t) nk * KV : 0;
      float *qk;
      stage = malloc ((H * per_head + (size_t) nk * KV + (size_t) nq * Q + n_qk)
                      * sizeof (float));
      if (stage == NULL)
        {
          free (sc);
          return sc_error_set (err, SC_ERR_NOMEM, "attention edits: out of memory for host "
                               "copies");
        }
      qk = stage + H * per_head + (size_t) nk * KV + (size_t) nq * Q;
      if ((st = b->ops->download (b, stage, c->probs, H * per_head, err)) != SC_OK
          || (st = b->ops->download (b, stage + H * per_head, c->v_cache, (size_t) nk * KV, err))
                 != SC_OK
          || (st = b->ops->download (b, stage + H * per_head + (size_t) nk * KV, c->o,
                                     (size_t) nq * Q, err)) != SC_OK
          || (any_qkv
              && ((st = b->ops->download (b, qk, c->q, (size_t) nq * Q, err)) != SC_OK
                  || (st = b->ops->download (b, qk + (size_t) nq * Q, c->k_cache,
                                             (size_t) nk * KV, err)) != SC_OK)))
        goto out;
      P = stage;
      v = stage + H * per_head;
      o = stage + H * per_head + (size_t) nk * KV;
      q = qk;
      k = qk + (size_t) nq * Q;
    }

  for (h = 0; h < H; h++)
    {
      const ScAttnEdit *e = find_edit (iv, l, h);
      const bool mean = mean_on (iv, l, h, H);
      const bool recompute = qkv_patched (iv, l, h, H);
      const uint8_t *patched = head_patch_rows (iv, l, h, H);
      const float hs = c->head_scale != NULL ? c->head_scale[h] : 1.0f;
      const int g = h / group;
      const size_t lh = (size_t) l * H + h;
      const bool vp = iv->v_patch_on != NULL && iv->v_patch_on[lh];

      if (e == NULL && !mean && patched == NULL && !recompute)
        continue;
      for (i = 0; i < nq; i++)
        {
          const int p = nk - nq + i;
          float *row = P + h * per_head + (size_t) i * nk, *orow = o + (size_t) i * Q + h * d;
          int lo, hi, m = 0;
          bool changed;

          /* 1. the row's allowed keys, their weights recomputed and edited */
          sc_attn_key_range (p, nk, causal, window, &lo, &hi);
          for (j = lo; j <= hi; j++)
            if (c->key_mask == NULL || c->key_mask[j] == 0)
              idx[m++] = j;
          if (m == 0)
            idx[m++] = p;
          for (t = 0; t < m; t++)
            orig[t] = w[t] = row[idx[t]];
          if (recompute)
            patched_scores (iv, in, l, h, i, p, nk, q, k, idx, m, sc, w);
          if (e != NULL && e->kind == SC_ATTN_EDIT_REPLACE)
            for (t = 0; t < m; t++)
              w[t] = e->probs[(size_t) i * nk + idx[t]];
          else if (e != NULL)
            edit_weights (e, l, h, p, w, m);
          /* recomputed rows always take their own output: patched values change o even
           * where the weights stay as they were */
          changed = recompute || memcmp (orig, w, (size_t) m * sizeof (float)) != 0;
          for (t = 0; t < m; t++)
            row[idx[t]] = w[t];

          /* 2. the row's output */
          if (patched != NULL && patched[p])
            {
              const float *x = iv->head_patch + (((size_t) l * H + h) * nk + p) * d;
              for (t = 0; t < d; t++)
                orow[t] = hs * x[t];
            }
          else if (mean)
            {
              const float *mu = iv->head_mean + ((size_t) l * H + h) * d;
              for (t = 0; t < d; t++)
                orow[t] = hs * mu[t];
            }
          else if (changed)
            for (t = 0; t < d; t++)
              {
                double acc = 0.0;
                int kk;
                for (kk = 0; kk < m; kk++)
                  acc += (double) w[kk]
                         * (vp ? iv->v_patch[(lh * nk + idx[kk]) * d + t]
                               : v[(size_t) idx[kk] * KV + g * d + t]);
                orow[t] = hs * (float) acc;
              }
        }
    }

  if (!host)
    {
      if ((st = b->ops->upload (b, c->probs, P, H * per_head, err)) != SC_OK)
        goto out;
      st = b->ops->upload (b, c->o, o, (size_t) nq * Q, err);
    }
out:
  free (stage);
  free (sc);
  return st;
}
