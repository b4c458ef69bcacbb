/* gpu-shaped-model.h — SmolLM2-135M's shapes with random weights (gpu-shaped-model.c). */
#pragma once

#include <glib.h>

/* GGUF bytes of a llama with SmolLM2-135M's shapes — 576 wide, 9 query heads over 3 KV
 * heads of 64, feed-forward 1536, rope base 1e5 — @n_layers layers, the test byte
 * vocabulary (266 tokens, tests/engine/sc-test-gguf.h) and fp32 weights from a fixed
 * seed: each matrix uniform in +-sqrt(3 / in) (unit variance out for unit variance in),
 * q and k twice that (sharper attention), norms 1 +- 0.1. Open it with
 * sc_test_model_open_bytes(); the bytes must outlive the model. */
GBytes *gpu_smollm2_shaped (int n_layers);
