/* sc-arch.c — the table of architectures, and the helpers their layer functions share
 * (see sc-arch.h). An architecture itself lives in its own file, sc-arch-<name>.c; this
 * one only lists them.
 */
#include "model/sc-arch.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Every supported architecture. A new one is a new file and one line here. */
static const ScArchDesc *const arches[] = {
  &sc_arch_llama,
  &sc_arch_gemma3,
};

#define N_ARCHES (sizeof arches / sizeof arches[0])

const ScArchDesc *
sc_arch_find (ScGgufStr name)
{
  size_t i;

  for (i = 0; i < N_ARCHES; i++)
    if (sc_gguf_str_eq (name, arches[i]->name))
      return arches[i];
  return NULL;
}

const ScArchDesc *
sc_arch_for (ScArch id)
{
  size_t i;

  for (i = 0; i < N_ARCHES; i++)
    if (arches[i]->id == id)
      return arches[i];
  return NULL;
}

char *
sc_arch_list (char *buf, size_t size)
{
  size_t i, used = 0;

  if (size == 0)
    return buf;
  buf[0] = '\0';
  for (i = 0; i < N_ARCHES && used < size; i++)
    {
      int w = snprintf (buf + used, size - used, "%s%s", i > 0 ? ", " : "", arches[i]->name);
      if (w < 0)
        break;
      used += (size_t) w;
    }
  return buf;
}

int64_t
sc_arch_dim (ScDim dim, const ScModelInfo *in)
{
  switch (dim)
    {
    case SC_DIM_ONE:
      return 1;
    case SC_DIM_EMBD:
      return in->n_embd;
    case SC_DIM_Q:
      return (int64_t) in->n_heads * in->head_dim;
    case SC_DIM_KV:
      return (int64_t) in->n_kv_heads * in->head_dim;
    case SC_DIM_FF:
      return in->n_ff;
    case SC_DIM_HEAD:
      return in->head_dim;
    }
  return 0;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

ScStatus
sc_layer_matmul (const ScLayerCtx *c, float *y, const float *x, const float *w, int n, int in,
                 int out, bool accumulate, ScError *err)
{
  double t0 = c->stats != NULL ? now_s () : 0.0;
  ScStatus st = c->b->ops->matmul (c->b, y, x, w, n, in, out, accumulate, err);

  if (c->stats != NULL)
    {
      c->stats->matmul_s += now_s () - t0;
      c->stats->matmul_flops += 2.0 * n * in * out;
    }
  return st;
}

ScStatus
sc_layer_attention (const ScLayerCtx *c, const float *q, bool causal, int window, ScError *err)
{
  const ScModelInfo *in = c->info;
  const ScAttnParams p = {
    .scale = in->attn_scale,
    .causal = causal,
    .window = window,
    .key_mask = c->key_mask,
    .head_scale = c->head_scale,
  };
  double t0 = c->stats != NULL ? now_s () : 0.0;
  ScStatus st = sc_backend_attention (c->b, c->o, c->probs, q, c->k_cache, c->v_cache, c->n_q,
                                      c->n_k, (int) in->n_heads, (int) in->n_kv_heads,
                                      (int) in->head_dim, &p, err);

  if (c->stats != NULL)
    c->stats->attention_s += now_s () - t0;
  return st;
}
