/* store-fake.h — deterministic fake runs for the capture store's tests.
 *
 * A fake run is a function of its seed: the tokens (pieces full of invalid UTF-8, NUL
 * bytes, empty pieces), the text and every head's probabilities (softmax rows spanning
 * fp16's normal and subnormal ranges, with exact zeros). Any process can regenerate a run
 * from the seed written into its text, so a test can check a run that another process
 * stored — or failed to store — without sharing memory with it.
 */
#pragma once

#include <glib.h>

#include "engine/sc-store.h"

G_BEGIN_DECLS

/* The fake model: 4 layers x 3 heads (2 KV heads, head_dim 8); @variant changes the
 * fingerprint (and name), so variants are different models. */
#define STORE_FAKE_LAYERS 4
#define STORE_FAKE_HEADS 3
void store_fake_model (ScStoreModel *m, int variant);

/* Head (layer, head) of the run with @seed: (n, n) row-major, freshly allocated. Causal
 * runs are exactly 0 above the diagonal; others (@causal false) are not. */
float *store_fake_head (guint64 seed, int layer, int head, int n, gboolean causal);

/* The run's tokens (one allocation; g_free) and text (g_free; *@len bytes). */
ScStoreToken *store_fake_tokens (guint64 seed, int n);
char *store_fake_text (guint64 seed, int n, gboolean causal, gsize *len);

/* Captures the run with @seed, @n tokens; @delay_us sleeps before each head (a slower
 * "forward pass" for the crash and concurrency tests). Returns the run id, or -1 with
 * @err set. */
gint64 store_fake_capture (ScStore *store, guint64 seed, int n, gboolean causal,
                           int model_variant, int delay_us, ScError *err);

/* Checks that run @run_id is exactly what store_fake_capture() stored for the seed in its
 * text: info, tokens byte for byte, every head equal to the fp16 rounding of the
 * generated probabilities. On a mismatch returns FALSE and sets *@why (g_free). */
gboolean store_fake_verify (ScStore *store, gint64 run_id, char **why);

/* Whether @got is @want rounded to fp16 (and within the rounding bound: relative 2^-11 in
 * fp16's normal range, absolute 2^-25 below it; exact zeros exact). */
gboolean store_fake_fp16_close (float want, float got);

G_END_DECLS
