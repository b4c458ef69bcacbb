/* sc-backend.c — what every backend shares: the queries of sc-backend.h and the checked
 * entry points of sc-backend-impl.h (optional ops, attention options). No arithmetic
 * lives here; the backends' own files hold their ops.
 */
#include "backend/sc-backend-impl.h"

#include <math.h>
#include <stddef.h>

void
sc_backend_free (ScBackend *b)
{
  if (b != NULL)
    b->ops->destroy (b);
}

const char *
sc_backend_name (const ScBackend *b)
{
  return b->ops->name;
}

const char *
sc_backend_description (const ScBackend *b)
{
  return b->description;
}

int
sc_backend_n_threads (const ScBackend *b)
{
  return b->n_threads;
}

unsigned
sc_backend_caps (const ScBackend *b)
{
  return b->caps;
}

bool
sc_backend_supports (const ScBackend *b, unsigned caps)
{
  return (b->caps & caps) == caps;
}

/* An optional op is callable when the backend both sets its flag and fills its slot. */
static ScStatus
need (const ScBackend *b, unsigned cap, bool present, const char *op, ScError *err)
{
  if ((b->caps & cap) == cap && present)
    return SC_OK;
  return sc_error_set (err, SC_ERR_UNSUPPORTED, "backend '%s' has no %s (an optional op)",
                       b->ops->name, op);
}

ScStatus
sc_backend_layer_norm (ScBackend *b, float *y, const float *x, const float *w, const float *bias,
                       int n, int dim, float eps, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_LAYER_NORM, b->ops->layer_norm != NULL, "layer_norm",
                      err);

  return st != SC_OK ? st : b->ops->layer_norm (b, y, x, w, bias, n, dim, eps, err);
}

ScStatus
sc_backend_gelu (ScBackend *b, float *y, const float *x, size_t n, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_GELU, b->ops->gelu != NULL, "gelu", err);

  return st != SC_OK ? st : b->ops->gelu (b, y, x, n, err);
}

ScStatus
sc_backend_geglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_GELU, b->ops->geglu != NULL, "geglu", err);

  return st != SC_OK ? st : b->ops->geglu (b, y, gu, n, f, err);
}

ScStatus
sc_backend_add_bias (ScBackend *b, float *y, const float *bias, int n, int dim, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_ADD_BIAS, b->ops->add_bias != NULL, "add_bias", err);

  return st != SC_OK ? st : b->ops->add_bias (b, y, bias, n, dim, err);
}

ScStatus
sc_backend_scale (ScBackend *b, float *y, const float *x, float s, size_t n, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_SCALE, b->ops->scale != NULL, "scale", err);

  return st != SC_OK ? st : b->ops->scale (b, y, x, s, n, err);
}

ScStatus
sc_backend_rope_neox (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                      int pos0, float base, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_ROPE_NEOX, b->ops->rope_neox != NULL, "rope_neox", err);

  return st != SC_OK ? st : b->ops->rope_neox (b, x, n, n_heads, head_dim, n_rot, pos0, base,
                                               err);
}

ScStatus
sc_backend_softcap (ScBackend *b, float *y, const float *x, float cap, size_t n, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_SOFTCAP, b->ops->softcap != NULL, "softcap", err);

  if (st == SC_OK && !(cap > 0.0f && isfinite (cap)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "softcap: cap %g is not a positive number",
                         (double) cap);
  return st != SC_OK ? st : b->ops->softcap (b, y, x, cap, n, err);
}

ScStatus
sc_backend_rope_freq (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                      int pos0, float base, const float *freq_factors, bool neox, bool inverse,
                      ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_ROPE_FREQ, b->ops->rope_freq != NULL, "rope_freq", err);

  return st != SC_OK ? st : b->ops->rope_freq (b, x, n, n_heads, head_dim, n_rot, pos0, base,
                                               freq_factors, neox, inverse, err);
}

ScStatus
sc_backend_rope_neox_backward (ScBackend *b, float *dx, int n, int n_heads, int head_dim,
                               int n_rot, int pos0, float base, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_ROPE_NEOX | SC_BACKEND_CAP_BACKWARD,
                      b->ops->rope_neox_backward != NULL, "rope_neox_backward", err);

  return st != SC_OK ? st : b->ops->rope_neox_backward (b, dx, n, n_heads, head_dim, n_rot, pos0,
                                                        base, err);
}

ScStatus
sc_backend_geglu_backward (ScBackend *b, float *dgu, const float *dy, const float *gu, int n,
                           int f, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_GELU | SC_BACKEND_CAP_BACKWARD,
                      b->ops->geglu_backward != NULL, "geglu_backward", err);

  return st != SC_OK ? st : b->ops->geglu_backward (b, dgu, dy, gu, n, f, err);
}

/* What every attention entry point checks before calling the backend. */
static ScStatus
check_attention (ScBackend *b, int n_q, int n_k, int n_heads, int n_kv, int d,
                 const ScAttnParams *p, ScError *err)
{
  ScStatus st;

  if (p == NULL || n_q < 1 || n_q > n_k || n_kv < 1 || n_heads < n_kv || n_heads % n_kv != 0
      || d < 1 || p->window < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "attention: n_q %d, n_k %d, heads %d/%d, d %d, window %d are out of "
                         "contract (1 <= n_q <= n_k, kv heads divide heads, window >= 0)",
                         n_q, n_k, n_heads, n_kv, d, p != NULL ? p->window : 0);
  if (!p->causal
      && (st = need (b, SC_BACKEND_CAP_ATTN_NONCAUSAL, true, "non-causal attention", err))
             != SC_OK)
    return st;
  if (p->window > 0
      && (st = need (b, SC_BACKEND_CAP_ATTN_WINDOW, true, "sliding-window attention", err))
             != SC_OK)
    return st;
  if (!(p->softcap >= 0.0f && isfinite (p->softcap)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attention: softcap %g is not 0 or a "
                         "positive number", (double) p->softcap);
  if (p->softcap > 0.0f
      && (st = need (b, SC_BACKEND_CAP_SOFTCAP, true, "soft-capped attention", err)) != SC_OK)
    return st;
  return SC_OK;
}

ScStatus
sc_backend_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                      const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                      const ScAttnParams *p, ScError *err)
{
  ScStatus st = check_attention (b, n_q, n_k, n_heads, n_kv, d, p, err);

  if (st != SC_OK)
    return st;
  return b->ops->attention (b, out, probs, q, k, v, n_q, n_k, n_heads, n_kv, d, p, err);
}

ScStatus
sc_backend_attention_capture (ScBackend *b, float *out, const float *q, const float *k,
                              const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                              const ScAttnParams *p, const uint8_t *want, int slot, ScError *err)
{
  ScStatus st = need (b, SC_BACKEND_CAP_ATTN_CAPTURE,
                      b->ops->attention_capture != NULL && b->ops->capture_wait != NULL,
                      "attention_capture", err);

  if (st != SC_OK || (st = check_attention (b, n_q, n_k, n_heads, n_kv, d, p, err)) != SC_OK)
    return st;
  if (slot < 0 || slot >= SC_BACKEND_CAPTURE_SLOTS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attention_capture: slot %d is not in 0 .. %d",
                         slot, SC_BACKEND_CAPTURE_SLOTS - 1);
  return b->ops->attention_capture (b, out, q, k, v, n_q, n_k, n_heads, n_kv, d, p, want, slot,
                                    err);
}

ScStatus
sc_backend_check_backward (const ScBackend *b, ScError *err)
{
  const ScBackendOps *o = b->ops;
  const bool all = o->matmul_backward != NULL && o->rmsnorm_backward != NULL
                   && o->rope_backward != NULL && o->swiglu_backward != NULL
                   && o->get_rows_backward != NULL && o->attention_backward != NULL;

  if ((b->caps & SC_BACKEND_CAP_BACKWARD) && all)
    return SC_OK;
  return sc_error_set (err, SC_ERR_UNSUPPORTED, "backend '%s' has no backward ops (gradients "
                       "need them; use the cpu backend)", o->name);
}
