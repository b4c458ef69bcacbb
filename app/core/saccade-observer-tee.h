/* saccade-observer-tee.h — two forward-pass observers (engine/forward/sc-forward.h) behind
 * one: `saccade capture --summary` stores every head (the store's capture observer) and
 * computes its statistics (saccade_head_stats_table_observe) from the same pass.
 *
 * The tee keeps the fp16 route of a device backend (ScObserver.observe_f16, docs/cuda.md):
 * it offers observe_f16 itself, hands the values on to each side that takes fp16 (the
 * store copies them as they are) and decodes them to floats once for a side that takes
 * only fp32 (the statistics). Those floats are the fp16 values exactly — what the store
 * keeps and what `saccade heads` or the window compute the statistics of a stored run
 * from — so the statistics of a GPU capture equal those of its stored run, and differ from
 * a CPU capture's (taken from the fp32 probabilities) only by fp16 rounding (relative
 * 2^-11 per value). Decoding costs one pass over the head on the host, no more than the
 * statistics themselves take; nothing more crosses from the device. */
#pragma once

#include <glib.h>

#include "engine/forward/sc-forward.h"

G_BEGIN_DECLS

typedef struct {
  ScObserver a, b;  /* the sides, called in this order; an all-NULL side observes nothing */
  ScObserver obs;   /* the tee: what sc_forward() is given */
  float *probs;     /* decoded fp16 values for a side without observe_f16 (grown on use) */
  size_t n_probs;
} SaccadeObserverTee;

/* Sets @t up to call @a then @b (either NULL: nothing on that side; both are copied) and
 * returns the observer to pass to sc_forward(), borrowed from @t (valid while @t is).
 * Its wants() is NULL (every head) and it has no layer_buffer or attn_output: a side's
 * wants() is not consulted (the store's observer keeps only its run's heads itself).
 * observe() calls each side's observe(); observe_f16() (set only when a side has one: with
 * neither, the forward pass keeps the float path) calls each side's observe_f16, or,
 * for a side with only observe(), that observe() on the values decoded to (n_query,
 * n_key) floats (0 above the diagonal of a packed head). Either returns false (cancelling
 * the pass) as soon as a side does, or when the decoding buffer cannot be had. Not
 * thread-safe: one forward pass at a time. saccade_observer_tee_clear() frees it. */
const ScObserver *saccade_observer_tee_init (SaccadeObserverTee *t, const ScObserver *a,
                                             const ScObserver *b);

/* Frees @t's decoding buffer and zeroes it; a zeroed @t is a no-op. */
void saccade_observer_tee_clear (SaccadeObserverTee *t);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SaccadeObserverTee, saccade_observer_tee_clear)

G_END_DECLS
