/* sc-random.h — the engine's one pseudo-random stream: SplitMix64 (Steele, Lea & Flood,
 * "Fast splittable pseudorandom number generators", OOPSLA 2014), and the standard normal
 * deviates drawn from it.
 *
 * Every study that draws (random tokens for induction and sink inputs, permutations of
 * attention rows, erasure orders, adversarial starts, causal tracing's noise) uses these,
 * so a seed means the same stream everywhere, on every machine and for any number of
 * threads: plain 64-bit integer arithmetic, and double-precision math for the normal
 * deviates. The state is the caller's; a study derives each stream's state from its seed.
 *
 * Plain C, no allocation, no global state.
 */
#pragma once

#include <math.h>
#include <stdint.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The next output of the stream whose state is *@state (the state advances by the golden
 * gamma 0x9E3779B97F4A7C15; the output is the state through SplitMix64's finaliser). */
static inline uint64_t
sc_splitmix64 (uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A standard normal deviate from the stream *@state: Box–Muller's cosine branch on two
 * outputs, u1 in (0, 1] (so its logarithm is finite) and u2 in [0, 1), each from the top
 * 53 bits of one output. */
static inline double
sc_gaussian (uint64_t *state)
{
  const double u1 = ((sc_splitmix64 (state) >> 11) + 1.0) / 9007199254740993.0;
  const double u2 = (sc_splitmix64 (state) >> 11) / 9007199254740992.0;

  return sqrt (-2.0 * log (u1)) * cos (2.0 * M_PI * u2);
}
