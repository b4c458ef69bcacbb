/* saccade-observer-tee.c — two forward-pass observers behind one, the fp16 route of a
 * device backend kept (saccade-observer-tee.h says why the statistics may come from fp16). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-observer-tee.h"

#include <string.h>

#include "engine/core/sc-math.h"

static bool
tee_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  SaccadeObserverTee *t = user;

  if (t->a.observe != NULL && !t->a.observe (t->a.user, layer, head, probs, n_q, n_k))
    return false;
  return t->b.observe == NULL || t->b.observe (t->b.user, layer, head, probs, n_q, n_k);
}

/* @values decoded into t->probs, (n_q, n_k) row-major; NULL when it cannot be had. */
static const float *
tee_decode (SaccadeObserverTee *t, const uint16_t *values, int n_q, int n_k, bool packed)
{
  const size_t n = (size_t) n_q * (size_t) n_k;

  if (n > t->n_probs)
    {
      float *p = g_try_realloc_n (t->probs, n, sizeof *p);
      if (p == NULL)
        return NULL;
      t->probs = p;
      t->n_probs = n;
    }
  for (int i = 0; i < n_q; i++)
    for (int j = 0; j < n_k; j++)
      t->probs[(size_t) i * n_k + j]
          = packed && j > i ? 0.0f
                            : sc_fp16_to_fp32 (values[sc_attn_packed_index (i, j, n_k, packed)]);
  return t->probs;
}

/* Side @s given one fp16 head: as it is, or decoded (once per head: *@probs caches it). */
static bool
tee_side_f16 (SaccadeObserverTee *t, const ScObserver *s, int layer, int head,
              const uint16_t *values, int n_q, int n_k, bool packed, const float **probs)
{
  if (s->observe_f16 != NULL)
    return s->observe_f16 (s->user, layer, head, values, n_q, n_k, packed);
  if (s->observe == NULL)
    return true;
  if (*probs == NULL && (*probs = tee_decode (t, values, n_q, n_k, packed)) == NULL)
    return false;
  return s->observe (s->user, layer, head, *probs, n_q, n_k);
}

static bool
tee_observe_f16 (void *user, int layer, int head, const uint16_t *values, int n_q, int n_k,
                 bool packed)
{
  SaccadeObserverTee *t = user;
  const float *probs = NULL;

  return tee_side_f16 (t, &t->a, layer, head, values, n_q, n_k, packed, &probs)
         && tee_side_f16 (t, &t->b, layer, head, values, n_q, n_k, packed, &probs);
}

const ScObserver *
saccade_observer_tee_init (SaccadeObserverTee *t, const ScObserver *a, const ScObserver *b)
{
  memset (t, 0, sizeof *t);
  if (a != NULL)
    t->a = *a;
  if (b != NULL)
    t->b = *b;
  t->obs.observe = tee_observe;
  /* the fp16 route only when a side takes it (a sparse store takes floats only) */
  if (t->a.observe_f16 != NULL || t->b.observe_f16 != NULL)
    t->obs.observe_f16 = tee_observe_f16;
  t->obs.user = t;
  return &t->obs;
}

void
saccade_observer_tee_clear (SaccadeObserverTee *t)
{
  g_clear_pointer (&t->probs, g_free);
  t->n_probs = 0;
}
