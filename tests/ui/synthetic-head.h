/* synthetic-head.h — a long causal attention head built by the tests themselves (the
 * heatmap pyramid's figure and widget tests, and its benchmark): shaped like a real
 * previous-token head of a long run, in the store's fp16 triangle layout. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Weights of the synthetic head: row i gives SINK to key 0, PREV to key i - 1, SELF to
 * key i, and spreads the rest (NOISE) over the other keys in random shares. Row 0 is all
 * SELF (1.0); row 1 has no "other" keys. */
#define SYNTH_SINK 0.25f
#define SYNTH_PREV 0.6f
#define SYNTH_SELF 0.05f
#define SYNTH_NOISE 0.1f

/* Rounds @v to the nearest fp16 (normals and subnormals; the tests' values are finite). */
uint16_t synth_fp16_encode (float v);

/* The n (n + 1) / 2 fp16 values of the synthetic head of @n >= 3 tokens, from @seed. */
GBytes *synth_head_fp16 (int n, guint32 seed);
