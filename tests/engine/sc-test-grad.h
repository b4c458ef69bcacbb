/* sc-test-grad.h — what the gradient oracle tests (test-grad-reference.c for SmolLM2,
 * test-grad-arch.c for Gemma 3 and Qwen2) both hold a block of the engine's gradients to.
 */
#pragma once

#include <glib.h>

/* The bound of both tests, relative to a block's largest reference value: the float32
 * engine against a float64 oracle (each test's header says why). */
#define SC_TEST_GRAD_TOL 1e-4

/* Checks every element of @got against @ref (count) within SC_TEST_GRAD_TOL * max |ref| +
 * 1e-3 |ref| (g_error naming @what and the element otherwise) and the block's worst
 * |got - ref| within SC_TEST_GRAD_TOL * max |ref|; returns that worst / max |ref|. */
double sc_test_grad_compare (const char *what, const float *got, const float *ref, gsize count);
