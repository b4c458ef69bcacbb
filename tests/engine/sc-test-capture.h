/* sc-test-capture.h — "fake-capture": cpu-ref with a device backend's two capture ops
 * (attention_capture / capture_wait, engine/backend/sc-backend-impl.h) added as the contract
 * says: the fp32 attention, then sc_fp32_to_fp16 into sc_attn_packed_index order, into one
 * of SC_BACKEND_CAPTURE_SLOTS slots. With it the forward pass takes the observe_f16 route on
 * the CPU exactly as on a CUDA device, so tests check that plumbing without a GPU
 * (tests/engine/test-capture-f16.c, tests/app/test-observer-tee.c).
 *
 * One fake backend at a time (its ops table and slots are static); single-threaded tests. */
#pragma once

#include <stddef.h>

#include "engine/backend/sc-backend.h"

/* What the fake backend saw since the test last zeroed the counters. */
typedef struct {
  int n_capture_calls;        /* attention_capture calls */
  int n_capture_wanted_heads; /* heads those calls were asked to capture */
  int n_attention_calls;      /* plain attention calls (the fp32 route) */
  size_t probs_floats;        /* set by the test: the size of the session's fp32
                               * probability buffer, (H, n, n) floats for a first run */
  int n_probs_allocs;         /* allocations of exactly probs_floats floats */
} ScTestCaptureCounts;

extern ScTestCaptureCounts sc_test_capture_counts;

/* A new fake-capture backend (cpu-ref underneath); free with sc_backend_free(). */
ScBackend *sc_test_capture_backend_new (void);
