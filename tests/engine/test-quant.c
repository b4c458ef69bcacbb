/* test-quant.c — tests for sc-quant (type traits, row sizes, dequantisation) and the
 * scalar math in sc-math.h (fp16/bf16 conversion, RoPE pair rotation, online softmax).
 *
 * Two kinds of evidence. (1) Hand-built blocks: for every decodable type a block is
 * filled field by field here, and chosen elements are compared with values worked out by
 * hand from the format definition (written next to each check), never by calling a
 * decoder. (2) An external oracle: tests/reference/quant-fixture.json, written by
 * tests/reference/gen_quant_fixture.py with the `gguf` Python package, holds raw rows
 * and gguf's dequantised values; the directory comes from $SC_TEST_REFERENCE_DIR.
 * Conversions are also checked exhaustively (all 65536 halves) or against a
 * double-precision rounding reference on many random floats.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "engine/core/sc-math.h"
#include "engine/format/sc-quant-blocks.h"
#include "engine/format/sc-quant.h"

/* Tolerance against the fixture: |got - ref| <= abs + rel * |ref|. The gguf package and
 * we compute the same float32 expressions, so agreement is normally exact; the slack
 * covers an FMA contraction on either side (one rounding, < 1e-7 relative). */
#define FIXTURE_ABS_TOL 1e-6
#define FIXTURE_REL_TOL 1e-6

/* Random floats fed to the rounding checks. */
#define N_RANDOM_FLOATS 200000

/* fp16 bit patterns used to build blocks, worked out by hand:
 * sign | exponent (biased by 15) << 10 | mantissa. */
#define H_0_125 0x3000   /* 2^-3:  exponent 12 */
#define H_0_25 0x3400    /* 2^-2:  exponent 13 */
#define H_0_5 0x3800     /* 2^-1:  exponent 14 */
#define H_1 0x3c00       /* 2^0:   exponent 15 */
#define H_MINUS_1 0xbc00
#define H_MINUS_2 0xc000 /* -2^1:  sign, exponent 16 */

/* Asserts that @status is SC_OK, printing the error message otherwise. */
#define assert_ok(status, err)                                                \
  G_STMT_START                                                                \
  {                                                                           \
    ScStatus assert_status_ = (status);                                       \
    if (assert_status_ != SC_OK)                                              \
      g_error ("%s failed: %s (%s)", #status, (err).message,                  \
               sc_status_name (assert_status_));                              \
  }                                                                           \
  G_STMT_END

/* ------------------------------------------------------------------------------------ */
/* fp16                                                                                  */
/* ------------------------------------------------------------------------------------ */

static void
test_fp16_to_fp32_values (void)
{
  /* Each row: bits, value, from the binary16 definition. */
  static const struct { uint16_t h; double v; } cases[] = {
    { 0x0000, 0.0 },
    { 0x3c00, 1.0 },
    { 0xbc00, -1.0 },
    { 0x4000, 2.0 },
    { 0x3555, 0.333251953125 },      /* 2^-2 * (1 + 341/1024) */
    { 0x7bff, 65504.0 },             /* largest finite: 2^15 * (2 - 2^-10) */
    { 0x0400, 6.103515625e-05 },     /* smallest normal: 2^-14 */
    { 0x03ff, 6.097555160522461e-05 },/* largest subnormal: 1023 * 2^-24 */
    { 0x0001, 5.960464477539063e-08 },/* smallest subnormal: 2^-24 */
    { 0x8001, -5.960464477539063e-08 },
    { 0x0200, 3.0517578125e-05 },    /* 512 * 2^-24 = 2^-15 */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpfloat (sc_fp16_to_fp32 (cases[i].h), ==, (float) cases[i].v);

  /* Negative zero keeps its sign. */
  g_assert_cmpfloat (sc_fp16_to_fp32 (0x8000), ==, 0.0f);
  g_assert_true (signbit (sc_fp16_to_fp32 (0x8000)));
  g_assert_false (signbit (sc_fp16_to_fp32 (0x0000)));

  /* Infinities and NaNs. */
  g_assert_true (isinf (sc_fp16_to_fp32 (0x7c00)) && sc_fp16_to_fp32 (0x7c00) > 0);
  g_assert_true (isinf (sc_fp16_to_fp32 (0xfc00)) && sc_fp16_to_fp32 (0xfc00) < 0);
  g_assert_true (isnan (sc_fp16_to_fp32 (0x7e00)));  /* quiet NaN */
  g_assert_true (isnan (sc_fp16_to_fp32 (0x7c01)));  /* signalling NaN, lowest payload */
  g_assert_true (isnan (sc_fp16_to_fp32 (0xfe00)));
  /* The payload moves into the top mantissa bits of the float. */
  g_assert_cmphex (sc_fp32_bits (sc_fp16_to_fp32 (0x7c01)), ==, 0x7f802000u);
}

/* Every half against the definition, evaluated in double: E = 0 gives M 2^-24, else
 * (1024 + M) 2^(E - 25); then back again, which must give the same bits. */
static void
test_fp16_exhaustive (void)
{
  for (uint32_t h = 0; h <= 0xffff; h++)
    {
      uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
      double mag;
      float f = sc_fp16_to_fp32 ((uint16_t) h);

      if (e == 0x1f)
        {
          if (m == 0)
            g_assert_true (isinf (f));
          else
            {
              uint16_t back = sc_fp32_to_fp16 (f);
              g_assert_true (isnan (f));
              /* NaN comes back as a NaN (exponent all ones, mantissa non-zero), same sign. */
              g_assert_cmphex (back & 0x7c00, ==, 0x7c00);
              g_assert_cmphex (back & 0x03ff, !=, 0);
              g_assert_cmphex (back & 0x8000, ==, h & 0x8000);
              continue;
            }
        }
      else
        {
          mag = e == 0 ? ldexp ((double) m, -24) : ldexp ((double) (1024 + m), (int) e - 25);
          g_assert_cmpfloat ((double) f, ==, (h & 0x8000) ? -mag : mag);
        }
      g_assert_cmphex (sc_fp32_to_fp16 (f), ==, h);
    }
}

static void
test_fp32_to_fp16_rounding (void)
{
  /* Each row: float, expected bits, and why. */
  static const struct { double f; uint16_t h; } cases[] = {
    { 1.0, 0x3c00 },
    { -2.0, 0xc000 },
    { 65504.0, 0x7bff },
    { 65519.0, 0x7bff },                 /* below the midpoint 65520: stays finite */
    { 65520.0, 0x7c00 },                 /* midpoint, 0x7bff is odd: rounds up to inf */
    { 1e6, 0x7c00 },
    { -1e6, 0xfc00 },
    { 1.0 + 1.0 / 2048, 0x3c00 },        /* tie between 0x3c00 and 0x3c01: even */
    { 1.0 + 3.0 / 2048, 0x3c02 },        /* tie between 0x3c01 and 0x3c02: even */
    { 1.0 + 1.0 / 2048 + 1.0 / 1048576, 0x3c01 }, /* just above the tie */
    { 5.960464477539063e-08, 0x0001 },   /* 2^-24, smallest subnormal */
    { 2.9802322387695312e-08, 0x0000 },  /* 2^-25, tie between 0 and 1: even (0) */
    { 2.9802325940409e-08, 0x0001 },     /* just above 2^-25 (float next up) */
    { 8.940696716308594e-08, 0x0002 },   /* 3 * 2^-25, tie between 1 and 2: even */
    { 6.100535392761230e-05, 0x0400 },   /* 2^-14 - 2^-25: tie 0x3ff/0x400: even, normal */
    { 6.103515625e-05, 0x0400 },         /* 2^-14 */
    { 1e-10, 0x0000 },
    { -1e-10, 0x8000 },
    { 1e-45, 0x0000 },                   /* a float subnormal */
    { 0.1, 0x2e66 },                     /* 0.1 = 2^-4 * 1.6; 0.6*1024 = 614.4 -> 614 */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      uint16_t got = sc_fp32_to_fp16 ((float) cases[i].f);
      if (got != cases[i].h)
        g_error ("fp32->fp16 of %.17g: got 0x%04x, expected 0x%04x", cases[i].f, got,
                 cases[i].h);
    }

  g_assert_cmphex (sc_fp32_to_fp16 (-0.0f), ==, 0x8000);
  g_assert_cmphex (sc_fp32_to_fp16 (INFINITY), ==, 0x7c00);
  g_assert_cmphex (sc_fp32_to_fp16 (-INFINITY), ==, 0xfc00);
  g_assert_cmphex (sc_fp32_to_fp16 (FLT_MAX), ==, 0x7c00);
  {
    /* A float NaN whose payload lies only in the low 13 bits must not become inf. */
    uint16_t h = sc_fp32_to_fp16 (sc_fp32_from_bits (0x7f800001u));
    g_assert_cmphex (h & 0x7c00, ==, 0x7c00);
    g_assert_cmphex (h & 0x03ff, !=, 0);
    g_assert_cmphex (sc_fp32_to_fp16 (sc_fp32_from_bits (0xffc00000u)) & 0x8000, ==, 0x8000);
  }
}

/* Rounds |a| (finite, >= 0) to binary16 in double arithmetic: the unit in the last place
 * is 2^(exponent - 10), never below the subnormal unit 2^-24; nearbyint rounds ties to
 * even in the default mode; anything that rounds past 65504 is inf. */
static double
ref_round_fp16 (double a)
{
  int exp2;
  double ulp, r;

  if (a == 0.0)
    return 0.0;
  frexp (a, &exp2);                      /* a = m 2^exp2, m in [0.5, 1) */
  ulp = ldexp (1.0, MAX (exp2 - 1, -14) - 10);
  r = nearbyint (a / ulp) * ulp;
  return r > 65504.0 ? INFINITY : r;
}

/* The same for bfloat16: 8 significant bits, subnormal unit 2^-133, largest finite
 * (2 - 2^-7) 2^127. */
static double
ref_round_bf16 (double a)
{
  int exp2;
  double ulp, r;

  if (a == 0.0)
    return 0.0;
  frexp (a, &exp2);
  ulp = ldexp (1.0, MAX (exp2 - 1, -126) - 7);
  r = nearbyint (a / ulp) * ulp;
  return r > ldexp (2.0 - ldexp (1.0, -7), 127) ? INFINITY : r;
}

/* A random float: half the time with an exponent in the range where halves and their
 * rounding boundaries live, half the time any finite bit pattern. */
static float
random_float (void)
{
  uint32_t bits = g_test_rand_int ();

  if (g_test_rand_bit ())
    {
      int exp = g_test_rand_int_range (-30, 18);
      bits = (bits & 0x807fffffu) | ((uint32_t) (exp + 127) << 23);
    }
  else if ((bits & 0x7f800000u) == 0x7f800000u)
    bits &= 0xbfffffffu;                 /* drop inf/NaN: tested by hand */
  return sc_fp32_from_bits (bits);
}

static void
test_fp32_to_fp16_random (void)
{
  for (int i = 0; i < N_RANDOM_FLOATS; i++)
    {
      float f = random_float ();
      double want = ref_round_fp16 (fabs ((double) f));
      float got = sc_fp16_to_fp32 (sc_fp32_to_fp16 (f));

      if (signbit (f))
        want = -want;
      if (got != (float) want || signbit (got) != signbit (f))
        g_error ("fp16 rounding of %a (0x%08x): got %a, expected %a", (double) f,
                 sc_fp32_bits (f), (double) got, want);
    }
}

/* ------------------------------------------------------------------------------------ */
/* bf16                                                                                  */
/* ------------------------------------------------------------------------------------ */

static void
test_bf16 (void)
{
  /* bf16 -> fp32 is the bits shifted up by 16. */
  g_assert_cmpfloat (sc_bf16_to_fp32 (0x3f80), ==, 1.0f);
  g_assert_cmpfloat (sc_bf16_to_fp32 (0xc000), ==, -2.0f);
  g_assert_cmpfloat (sc_bf16_to_fp32 (0x4049), ==, 3.140625f);   /* 2 * (1 + 73/128) */
  g_assert_cmpfloat (sc_bf16_to_fp32 (0x0001), ==, (float) ldexp (1.0, -133));
  g_assert_true (signbit (sc_bf16_to_fp32 (0x8000)));
  g_assert_true (isinf (sc_bf16_to_fp32 (0x7f80)));
  g_assert_true (isnan (sc_bf16_to_fp32 (0x7fc0)));

  /* fp32 -> bf16: round to nearest even on the low 16 bits. */
  g_assert_cmphex (sc_fp32_to_bf16 (1.0f), ==, 0x3f80);
  g_assert_cmphex (sc_fp32_to_bf16 (-2.0f), ==, 0xc000);
  g_assert_cmphex (sc_fp32_to_bf16 (1.0f + 1.0f / 256), ==, 0x3f80);   /* tie: even */
  g_assert_cmphex (sc_fp32_to_bf16 (1.0f + 3.0f / 256), ==, 0x3f82);   /* tie: even */
  g_assert_cmphex (sc_fp32_to_bf16 (1.0f + 1.0f / 256 + 1.0f / 65536), ==, 0x3f81);
  g_assert_cmphex (sc_fp32_to_bf16 (3.14159265f), ==, 0x4049);
  g_assert_cmphex (sc_fp32_to_bf16 (-0.0f), ==, 0x8000);
  g_assert_cmphex (sc_fp32_to_bf16 (INFINITY), ==, 0x7f80);
  g_assert_cmphex (sc_fp32_to_bf16 (-INFINITY), ==, 0xff80);
  g_assert_cmphex (sc_fp32_to_bf16 (FLT_MAX), ==, 0x7f80);             /* rounds past the top */
  /* NaN: kept, made quiet, never turned into inf by dropping a low payload. */
  g_assert_cmphex (sc_fp32_to_bf16 (sc_fp32_from_bits (0x7f800001u)), ==, 0x7fc0);
  g_assert_cmphex (sc_fp32_to_bf16 (sc_fp32_from_bits (0xff800001u)), ==, 0xffc0);
  g_assert_cmphex (sc_fp32_to_bf16 (sc_fp32_from_bits (0x7fc00000u)), ==, 0x7fc0);

  for (int i = 0; i < N_RANDOM_FLOATS; i++)
    {
      float f = random_float ();
      double want = ref_round_bf16 (fabs ((double) f));
      float got = sc_bf16_to_fp32 (sc_fp32_to_bf16 (f));

      if (signbit (f))
        want = -want;
      if (got != (float) want)
        g_error ("bf16 rounding of %a: got %a, expected %a", (double) f, (double) got, want);
    }
}

/* ------------------------------------------------------------------------------------ */
/* RoPE and online softmax                                                               */
/* ------------------------------------------------------------------------------------ */

static void
test_rope_pair (void)
{
  float x0 = 1.0f, x1 = 0.0f;

  /* A quarter turn: (1, 0) -> (0, 1). */
  sc_rope_rotate_pair (&x0, &x1, 0.0f, 1.0f);
  g_assert_cmpfloat (x0, ==, 0.0f);
  g_assert_cmpfloat (x1, ==, 1.0f);

  /* (3, 4) by cos 0.6, sin 0.8: x0' = 1.8 - 3.2 = -1.4, x1' = 2.4 + 2.4 = 4.8. */
  x0 = 3.0f;
  x1 = 4.0f;
  sc_rope_rotate_pair (&x0, &x1, 0.6f, 0.8f);
  g_assert_cmpfloat_with_epsilon (x0, -1.4f, 1e-6);
  g_assert_cmpfloat_with_epsilon (x1, 4.8f, 1e-6);

  /* The identity rotation leaves the pair alone. */
  sc_rope_rotate_pair (&x0, &x1, 1.0f, 0.0f);
  g_assert_cmpfloat_with_epsilon (x0, -1.4f, 1e-6);
  g_assert_cmpfloat_with_epsilon (x1, 4.8f, 1e-6);
}

static void
test_online_softmax (void)
{
  /* Scores 1, 2, 3: max 3, sum = e^-2 + e^-1 + e^0. */
  const double want_sum = exp (-2.0) + exp (-1.0) + 1.0;
  ScSoftmaxState s = sc_softmax_state_init ();
  ScSoftmaxState a, b, m, empty = sc_softmax_state_init ();

  g_assert_true (isinf (empty.max) && empty.max < 0);
  g_assert_cmpfloat (empty.sum, ==, 0.0f);

  s = sc_softmax_state_update (s, 1.0f);
  g_assert_cmpfloat (s.max, ==, 1.0f);
  g_assert_cmpfloat (s.sum, ==, 1.0f);
  s = sc_softmax_state_update (s, 3.0f);     /* new max: old sum rescaled by e^-2 */
  s = sc_softmax_state_update (s, -INFINITY);/* a masked key: no change */
  s = sc_softmax_state_update (s, 2.0f);
  g_assert_cmpfloat (s.max, ==, 3.0f);
  g_assert_cmpfloat_with_epsilon (s.sum, want_sum, 1e-6);

  /* Order does not matter: descending gives the same state. */
  a = sc_softmax_state_update (sc_softmax_state_update (sc_softmax_state_update (
        sc_softmax_state_init (), 3.0f), 2.0f), 1.0f);
  g_assert_cmpfloat (a.max, ==, 3.0f);
  g_assert_cmpfloat_with_epsilon (a.sum, want_sum, 1e-6);

  /* Merging {1} with {2, 3}, in both orders. */
  a = sc_softmax_state_update (sc_softmax_state_init (), 1.0f);
  b = sc_softmax_state_update (sc_softmax_state_update (sc_softmax_state_init (), 2.0f), 3.0f);
  m = sc_softmax_state_merge (a, b);
  g_assert_cmpfloat (m.max, ==, 3.0f);
  g_assert_cmpfloat_with_epsilon (m.sum, want_sum, 1e-6);
  m = sc_softmax_state_merge (b, a);
  g_assert_cmpfloat (m.max, ==, 3.0f);
  g_assert_cmpfloat_with_epsilon (m.sum, want_sum, 1e-6);

  /* The empty state is the identity, and empty with empty stays empty (no NaN). */
  m = sc_softmax_state_merge (b, empty);
  g_assert_cmpfloat (m.max, ==, b.max);
  g_assert_cmpfloat (m.sum, ==, b.sum);
  m = sc_softmax_state_merge (empty, b);
  g_assert_cmpfloat (m.max, ==, b.max);
  g_assert_cmpfloat (m.sum, ==, b.sum);
  m = sc_softmax_state_merge (empty, empty);
  g_assert_true (isinf (m.max) && m.max < 0);
  g_assert_cmpfloat (m.sum, ==, 0.0f);

  /* Large scores do not overflow: 1000 and 1001 give sum 1 + e^-1. */
  a = sc_softmax_state_update (sc_softmax_state_update (sc_softmax_state_init (), 1000.0f),
                               1001.0f);
  g_assert_cmpfloat (a.max, ==, 1001.0f);
  g_assert_cmpfloat_with_epsilon (a.sum, 1.0 + exp (-1.0), 1e-6);

  g_assert_cmpfloat (sc_softmax_rescale (-INFINITY, -INFINITY), ==, 1.0f);
  g_assert_cmpfloat (sc_softmax_rescale (-INFINITY, 0.0f), ==, 0.0f);
  g_assert_cmpfloat_with_epsilon (sc_softmax_rescale (1.0f, 2.0f), exp (-1.0), 1e-7);
}

/* ------------------------------------------------------------------------------------ */
/* Type traits and row sizes                                                             */
/* ------------------------------------------------------------------------------------ */

/* ggml's table (include/ggml.h ids, src/ggml.c names, src/ggml-common.h sizes), written
 * out here independently of sc-quant.c. */
static const struct {
  uint32_t id;
  const char *name;
  uint32_t block_size;
  uint32_t type_size;
  gboolean can_dequant;
} known_types[] = {
  { 0, "f32", 1, 4, TRUE },
  { 1, "f16", 1, 2, TRUE },
  { 2, "q4_0", 32, 18, TRUE },
  { 3, "q4_1", 32, 20, TRUE },
  { 6, "q5_0", 32, 22, TRUE },
  { 7, "q5_1", 32, 24, TRUE },
  { 8, "q8_0", 32, 34, TRUE },
  { 9, "q8_1", 32, 36, FALSE },
  { 10, "q2_K", 256, 84, TRUE },
  { 11, "q3_K", 256, 110, TRUE },
  { 12, "q4_K", 256, 144, TRUE },
  { 13, "q5_K", 256, 176, TRUE },
  { 14, "q6_K", 256, 210, TRUE },
  { 15, "q8_K", 256, 292, FALSE },
  { 16, "iq2_xxs", 256, 66, FALSE },
  { 17, "iq2_xs", 256, 74, FALSE },
  { 18, "iq3_xxs", 256, 98, FALSE },
  { 19, "iq1_s", 256, 50, FALSE },
  { 20, "iq4_nl", 32, 18, FALSE },
  { 21, "iq3_s", 256, 110, FALSE },
  { 22, "iq2_s", 256, 82, FALSE },
  { 23, "iq4_xs", 256, 136, FALSE },
  { 24, "i8", 1, 1, FALSE },
  { 25, "i16", 1, 2, FALSE },
  { 26, "i32", 1, 4, FALSE },
  { 27, "i64", 1, 8, FALSE },
  { 28, "f64", 1, 8, FALSE },
  { 29, "iq1_m", 256, 56, FALSE },
  { 30, "bf16", 1, 2, TRUE },
  { 34, "tq1_0", 256, 54, FALSE },
  { 35, "tq2_0", 256, 66, FALSE },
  { 39, "mxfp4", 32, 17, FALSE },
  { 40, "nvfp4", 64, 36, FALSE },
  { 41, "q1_0", 128, 18, FALSE },
  { 42, "q2_0", 64, 18, FALSE },
};

static void
test_traits (void)
{
  static const uint32_t unknown[] = { 4, 5, 31, 32, 33, 36, 37, 38, 43, 44, 255, 65536,
                                      UINT32_MAX };
  guint n_known = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (known_types); i++)
    {
      const ScTypeTraits *t = sc_type_traits (known_types[i].id);

      g_test_message ("type %u %s", known_types[i].id, known_types[i].name);
      g_assert_nonnull (t);
      g_assert_cmpstr (t->name, ==, known_types[i].name);
      g_assert_cmpuint (t->block_size, ==, known_types[i].block_size);
      g_assert_cmpuint (t->type_size, ==, known_types[i].type_size);
      g_assert_cmpint (t->can_dequant, ==, known_types[i].can_dequant);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (unknown); i++)
    g_assert_null (sc_type_traits (unknown[i]));

  /* Nothing else below SC_TYPE_COUNT is known. */
  for (uint32_t id = 0; id < SC_TYPE_COUNT + 8; id++)
    if (sc_type_traits (id) != NULL)
      n_known++;
  g_assert_cmpuint (n_known, ==, G_N_ELEMENTS (known_types));
  g_assert_cmpint (SC_TYPE_COUNT, ==, 43);
}

static void
test_row_bytes (void)
{
  ScError err = { 0 };
  size_t bytes = 12345;

  /* SmolLM2: a 576-wide Q4_1 row is 18 blocks of 20 bytes, a Q8_0 row 18 of 34. */
  assert_ok (sc_type_row_bytes (SC_TYPE_Q4_1, 576, &bytes, &err), err);
  g_assert_cmpuint (bytes, ==, 360);
  assert_ok (sc_type_row_bytes (SC_TYPE_Q8_0, 576, &bytes, &err), err);
  g_assert_cmpuint (bytes, ==, 612);
  assert_ok (sc_type_row_bytes (SC_TYPE_Q6_K, 1536, &bytes, &err), err);
  g_assert_cmpuint (bytes, ==, 6 * 210);
  assert_ok (sc_type_row_bytes (SC_TYPE_F32, 7, &bytes, &err), err);
  g_assert_cmpuint (bytes, ==, 28);
  assert_ok (sc_type_row_bytes (SC_TYPE_Q4_K, 0, &bytes, &err), err);
  g_assert_cmpuint (bytes, ==, 0);
  /* Sizes of types we cannot decode are still known. */
  assert_ok (sc_type_row_bytes (SC_TYPE_IQ2_XXS, 512, &bytes, &err), err);
  g_assert_cmpuint (bytes, ==, 132);
  /* (2^63 - 1) halves are 2^64 - 2 bytes: the largest count that fits a 64-bit size_t. */
  if (sizeof (size_t) == 8)
    {
      assert_ok (sc_type_row_bytes (SC_TYPE_F16, INT64_MAX, &bytes, &err), err);
      g_assert_cmpuint (bytes, ==, (size_t) INT64_MAX * 2);
    }

  /* Errors name the type and the value, and leave *out_bytes alone. */
  bytes = 777;
  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_Q4_1, 33, &bytes, &err), ==, SC_ERR_RANGE);
  g_assert_cmpint (err.status, ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "q4_1"));
  g_assert_nonnull (strstr (err.message, "33"));
  g_assert_nonnull (strstr (err.message, "32"));
  g_assert_cmpuint (bytes, ==, 777);

  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_Q6_K, -256, &bytes, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "-256"));
  g_assert_nonnull (strstr (err.message, "q6_K"));

  g_assert_cmpint (sc_type_row_bytes (4, 32, &bytes, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_cmpstr (err.message, ==, "unknown tensor type id 4");
  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_COUNT, 32, &bytes, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "43"));

  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_F32, INT64_MAX, &bytes, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "f32"));
  g_assert_nonnull (strstr (err.message, "overflow"));
  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_F64, INT64_MAX, &bytes, &err), ==, SC_ERR_RANGE);
  g_assert_cmpuint (bytes, ==, 777);

  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_F32, 4, NULL, &err), ==, SC_ERR_INVALID_ARG);
  /* A NULL ScError is allowed. */
  g_assert_cmpint (sc_type_row_bytes (SC_TYPE_Q4_0, 31, &bytes, NULL), ==, SC_ERR_RANGE);
}

static void
test_dequant_errors (void)
{
  ScError err = { 0 };
  guint8 src[512] = { 0 };
  float dst[256];

  /* Every known type we do not decode says so by name and id. */
  for (gsize i = 0; i < G_N_ELEMENTS (known_types); i++)
    {
      g_autofree char *want = NULL;
      int64_t n = known_types[i].block_size;

      if (known_types[i].can_dequant)
        continue;
      want = g_strdup_printf ("tensor type %s (%u) is not supported", known_types[i].name,
                              known_types[i].id);
      g_assert_cmpint (sc_dequant_row (known_types[i].id, src, dst, n, &err), ==,
                       SC_ERR_UNSUPPORTED);
      g_assert_cmpint (err.status, ==, SC_ERR_UNSUPPORTED);
      g_assert_cmpstr (err.message, ==, want);
    }
  g_assert_cmpint (sc_dequant_row (SC_TYPE_IQ2_XXS, src, dst, 256, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_cmpstr (err.message, ==, "tensor type iq2_xxs (16) is not supported");

  g_assert_cmpint (sc_dequant_row (5, src, dst, 32, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_cmpstr (err.message, ==, "unknown tensor type id 5");
  g_assert_cmpint (sc_dequant_row (1000, src, dst, 32, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_cmpstr (err.message, ==, "unknown tensor type id 1000");

  /* Bad counts; the destination is untouched on error. */
  for (gsize i = 0; i < G_N_ELEMENTS (dst); i++)
    dst[i] = 42.0f;
  g_assert_cmpint (sc_dequant_row (SC_TYPE_Q4_K, src, dst, 128, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "q4_K"));
  g_assert_nonnull (strstr (err.message, "128"));
  g_assert_cmpint (sc_dequant_row (SC_TYPE_Q8_0, src, dst, -32, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "-32"));
  g_assert_cmpint (sc_dequant_row (SC_TYPE_F16, NULL, dst, 4, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_dequant_row (SC_TYPE_F16, src, NULL, 4, &err), ==, SC_ERR_INVALID_ARG);
  for (gsize i = 0; i < G_N_ELEMENTS (dst); i++)
    g_assert_cmpfloat (dst[i], ==, 42.0f);

  /* Zero elements: nothing is read or written, NULL pointers are fine. */
  assert_ok (sc_dequant_row (SC_TYPE_Q6_K, NULL, NULL, 0, &err), err);
}

/* ------------------------------------------------------------------------------------ */
/* Hand-built rows, one test per type                                                    */
/* ------------------------------------------------------------------------------------ */

/* Decodes @n elements of @type from @src, asserting success. */
static void
dequant (uint32_t type, const void *src, float *dst, int64_t n)
{
  ScError err = { 0 };

  assert_ok (sc_dequant_row (type, src, dst, n, &err), err);
}

static void
test_plain_rows (void)
{
  /* F32 is a copy. */
  const float f32[3] = { 1.5f, -0.0f, 3e38f };
  /* F16: 1, -2, 65504, 2^-24, 0.333251953125 (0x3555). */
  const uint16_t f16[5] = { 0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555 };
  /* BF16: 1, -2, 3.140625 (0x4049), 2^-133. */
  const uint16_t bf16[4] = { 0x3f80, 0xc000, 0x4049, 0x0001 };
  float y[8];

  dequant (SC_TYPE_F32, f32, y, 3);
  g_assert_cmpfloat (y[0], ==, 1.5f);
  g_assert_true (y[1] == 0.0f && signbit (y[1]));
  g_assert_cmpfloat (y[2], ==, 3e38f);

  dequant (SC_TYPE_F16, f16, y, 5);
  g_assert_cmpfloat (y[0], ==, 1.0f);
  g_assert_cmpfloat (y[1], ==, -2.0f);
  g_assert_cmpfloat (y[2], ==, 65504.0f);
  g_assert_cmpfloat (y[3], ==, (float) ldexp (1.0, -24));
  g_assert_cmpfloat (y[4], ==, 0.333251953125f);

  dequant (SC_TYPE_BF16, bf16, y, 4);
  g_assert_cmpfloat (y[0], ==, 1.0f);
  g_assert_cmpfloat (y[1], ==, -2.0f);
  g_assert_cmpfloat (y[2], ==, 3.140625f);
  g_assert_cmpfloat (y[3], ==, (float) ldexp (1.0, -133));
}

/* sc_quant_row_finite against decoding. Random blocks whose fp16 scales and mins are
 * finite, the extremes (±65504, subnormals) among them: known finite, and every decoded
 * value is; one scale or min made infinite or NaN: not known, and the row decodes to a
 * non-finite value; the plain types by their values; bad arguments: not known. */
static void
test_row_finite (void)
{
  static const struct {
    uint32_t type;
    int d, dmin; /* offsets of the fp16 scale and min in a block; -1: none */
  } types[] = {
    { SC_TYPE_Q4_0, offsetof (ScBlockQ4_0, d), -1 },
    { SC_TYPE_Q4_1, offsetof (ScBlockQ4_1, d), offsetof (ScBlockQ4_1, m) },
    { SC_TYPE_Q5_0, offsetof (ScBlockQ5_0, d), -1 },
    { SC_TYPE_Q5_1, offsetof (ScBlockQ5_1, d), offsetof (ScBlockQ5_1, m) },
    { SC_TYPE_Q8_0, offsetof (ScBlockQ8_0, d), -1 },
    { SC_TYPE_Q2_K, offsetof (ScBlockQ2_K, d), offsetof (ScBlockQ2_K, dmin) },
    { SC_TYPE_Q3_K, offsetof (ScBlockQ3_K, d), -1 },
    { SC_TYPE_Q4_K, offsetof (ScBlockQ4_K, d), offsetof (ScBlockQ4_K, dmin) },
    { SC_TYPE_Q5_K, offsetof (ScBlockQ5_K, d), offsetof (ScBlockQ5_K, dmin) },
    { SC_TYPE_Q6_K, offsetof (ScBlockQ6_K, d), -1 },
  };
  static const uint16_t extremes[] = { 0x7bff, 0xfbff, 0x0001, 0x8001, 0x0000, 0x3c00 };
  static const uint16_t bad[] = { 0x7c00, 0xfc00, 0x7e00, 0x7c01 };
  GRand *rng = g_rand_new_with_seed (1021);
  enum { N_BLOCKS = 64 };

  for (gsize k = 0; k < G_N_ELEMENTS (types); k++)
    {
      const ScTypeTraits *tr = sc_type_traits (types[k].type);
      const int64_t n = (int64_t) N_BLOCKS * tr->block_size;
      g_autofree guint8 *row = g_malloc ((gsize) N_BLOCKS * tr->type_size);
      g_autofree float *y = g_new (float, (gsize) n);

      for (int round = 0; round < 20; round++)
        {
          for (gsize i = 0; i < (gsize) N_BLOCKS * tr->type_size; i++)
            row[i] = (guint8) g_rand_int_range (rng, 0, 256);
          for (int b = 0; b < N_BLOCKS; b++)
            for (int f = 0; f < 2; f++)
              {
                const int at = f == 0 ? types[k].d : types[k].dmin;
                uint16_t h = (uint16_t) g_rand_int_range (rng, 0, 0x7c00)
                             | (g_rand_boolean (rng) ? 0x8000 : 0);
                if (at < 0)
                  continue;
                if (g_rand_int_range (rng, 0, 4) == 0)
                  h = extremes[g_rand_int_range (rng, 0, G_N_ELEMENTS (extremes))];
                memcpy (row + (gsize) b * tr->type_size + at, &h, sizeof h);
              }
          g_assert_true (sc_quant_row_finite (types[k].type, row, n));
          dequant (types[k].type, row, y, n);
          for (int64_t i = 0; i < n; i++)
            if (!isfinite (y[i]))
              g_error ("%s: element %lld is %g with finite scales", tr->name, (long long) i,
                       (double) y[i]);
          /* one bad scale or min in one block */
          {
            const int b = g_rand_int_range (rng, 0, N_BLOCKS);
            const int at = types[k].dmin >= 0 && g_rand_boolean (rng) ? types[k].dmin
                                                                       : types[k].d;
            const uint16_t h = bad[g_rand_int_range (rng, 0, G_N_ELEMENTS (bad))];
            gboolean any = FALSE;
            memcpy (row + (gsize) b * tr->type_size + at, &h, sizeof h);
            g_assert_false (sc_quant_row_finite (types[k].type, row, n));
            dequant (types[k].type, row, y, n);
            for (int64_t i = 0; i < n && !any; i++)
              any = !isfinite (y[i]);
            g_assert_true (any);
          }
        }
    }
  /* the plain types: by their values */
  {
    float f32[4] = { 1.0f, -3e38f, 0.0f, 1e-40f };
    uint16_t f16[3] = { 0x3c00, 0x7bff, 0x8001 }, bf16[3] = { 0x3f80, 0x7f7f, 0x0001 };
    g_assert_true (sc_quant_row_finite (SC_TYPE_F32, f32, 4));
    g_assert_true (sc_quant_row_finite (SC_TYPE_F16, f16, 3));
    g_assert_true (sc_quant_row_finite (SC_TYPE_BF16, bf16, 3));
    f32[2] = -INFINITY;
    f16[1] = 0x7e00;
    bf16[2] = 0xff80;
    g_assert_false (sc_quant_row_finite (SC_TYPE_F32, f32, 4));
    g_assert_false (sc_quant_row_finite (SC_TYPE_F16, f16, 3));
    g_assert_false (sc_quant_row_finite (SC_TYPE_BF16, bf16, 3));
    /* not known: an unknown or undecodable type, a partial block, no data */
    g_assert_false (sc_quant_row_finite (4, f16, 1));
    g_assert_false (sc_quant_row_finite (SC_TYPE_IQ1_M, f16, 256));
    g_assert_false (sc_quant_row_finite (SC_TYPE_Q8_0, f16, 31));
    g_assert_false (sc_quant_row_finite (SC_TYPE_Q8_0, NULL, 32));
  }
  g_rand_free (rng);
}

static void
test_q4_0 (void)
{
  ScBlockQ4_0 row[2];
  float y[64];

  memset (row, 0, sizeof row);
  /* Block 0: d = 0.5; qs[j] has low nibble j and high nibble 15 - j. */
  row[0].d = H_0_5;
  for (int j = 0; j < 16; j++)
    row[0].qs[j] = (uint8_t) (j | ((15 - j) << 4));
  /* Block 1: d = -2; every byte 0x9a: low nibble 10, high nibble 9. */
  row[1].d = H_MINUS_2;
  memset (row[1].qs, 0x9a, sizeof row[1].qs);

  dequant (SC_TYPE_Q4_0, row, y, 64);
  g_assert_cmpfloat (y[0], ==, -4.0f);    /* low nibble of qs[0] = 0: (0 - 8) * 0.5 */
  g_assert_cmpfloat (y[5], ==, -1.5f);    /* (5 - 8) * 0.5 */
  g_assert_cmpfloat (y[15], ==, 3.5f);    /* (15 - 8) * 0.5 */
  g_assert_cmpfloat (y[16], ==, 3.5f);    /* high nibble of qs[0] = 15 */
  g_assert_cmpfloat (y[20], ==, 1.5f);    /* high nibble of qs[4] = 11: (11 - 8) * 0.5 */
  g_assert_cmpfloat (y[31], ==, -4.0f);   /* high nibble of qs[15] = 0 */
  g_assert_cmpfloat (y[32], ==, -4.0f);   /* block 1, low nibble 10: (10 - 8) * -2 */
  g_assert_cmpfloat (y[48], ==, -2.0f);   /* block 1, high nibble 9: (9 - 8) * -2 */
  g_assert_cmpfloat (y[63], ==, -2.0f);
}

static void
test_q4_1 (void)
{
  ScBlockQ4_1 b;
  float y[32];

  memset (&b, 0, sizeof b);
  b.d = H_0_5;            /* d = 0.5 */
  b.m = H_MINUS_1;        /* m = -1 */
  b.qs[0] = 0xf0;         /* element 0: 0, element 16: 15 */
  b.qs[1] = 0x37;         /* element 1: 7, element 17: 3 */
  b.qs[15] = 0x0f;        /* element 15: 15, element 31: 0 */

  dequant (SC_TYPE_Q4_1, &b, y, 32);
  g_assert_cmpfloat (y[0], ==, -1.0f);    /* 0.5 * 0 - 1 */
  g_assert_cmpfloat (y[1], ==, 2.5f);     /* 0.5 * 7 - 1 */
  g_assert_cmpfloat (y[2], ==, -1.0f);
  g_assert_cmpfloat (y[15], ==, 6.5f);    /* 0.5 * 15 - 1 */
  g_assert_cmpfloat (y[16], ==, 6.5f);    /* high nibble of qs[0] = 15 */
  g_assert_cmpfloat (y[17], ==, 0.5f);    /* high nibble of qs[1] = 3: 0.5 * 3 - 1 */
  g_assert_cmpfloat (y[31], ==, -1.0f);
}

static void
test_q5_0 (void)
{
  ScBlockQ5_0 b;
  float y[32];

  memset (&b, 0, sizeof b);
  b.d = H_0_25;           /* d = 0.25 */
  b.qs[2] = 0xa5;         /* element 2: low 5, element 18: high 10 */
  b.qs[3] = 0x0f;         /* element 3: 15 */
  b.qs[9] = 0x0c;         /* element 9: 12 */
  /* qh as a little-endian word: bits 2, 9, 18 and 31 set. */
  b.qh[0] = 0x04;         /* bit 2 */
  b.qh[1] = 0x02;         /* bit 9 */
  b.qh[2] = 0x04;         /* bit 18 */
  b.qh[3] = 0x80;         /* bit 31 */

  dequant (SC_TYPE_Q5_0, &b, y, 32);
  g_assert_cmpfloat (y[0], ==, -4.0f);    /* (0 - 16) * 0.25 */
  g_assert_cmpfloat (y[2], ==, 1.25f);    /* (5 + 16 - 16) * 0.25 */
  g_assert_cmpfloat (y[3], ==, -0.25f);   /* (15 - 16) * 0.25, no high bit */
  g_assert_cmpfloat (y[9], ==, 3.0f);     /* (12 + 16 - 16) * 0.25 */
  g_assert_cmpfloat (y[15], ==, -4.0f);
  g_assert_cmpfloat (y[18], ==, 2.5f);    /* (10 + 16 - 16) * 0.25 */
  g_assert_cmpfloat (y[19], ==, -4.0f);
  g_assert_cmpfloat (y[31], ==, 0.0f);    /* (0 + 16 - 16) * 0.25 */
}

static void
test_q5_1 (void)
{
  ScBlockQ5_1 b;
  float y[32];

  memset (&b, 0, sizeof b);
  b.d = H_0_5;            /* d = 0.5 */
  b.m = H_1;              /* m = 1 */
  b.qs[0] = 0x21;         /* element 0: 1, element 16: 2 */
  b.qs[7] = 0xf3;         /* element 7: 3, element 23: 15 */
  b.qh[0] = 0x01;         /* bit 0 */
  b.qh[2] = 0x01;         /* bit 16 */
  b.qh[3] = 0x40;         /* bit 30 */

  dequant (SC_TYPE_Q5_1, &b, y, 32);
  g_assert_cmpfloat (y[0], ==, 9.5f);     /* (1 + 16) * 0.5 + 1 */
  g_assert_cmpfloat (y[1], ==, 1.0f);     /* 0 * 0.5 + 1 */
  g_assert_cmpfloat (y[7], ==, 2.5f);     /* 3 * 0.5 + 1 */
  g_assert_cmpfloat (y[16], ==, 10.0f);   /* (2 + 16) * 0.5 + 1 */
  g_assert_cmpfloat (y[23], ==, 8.5f);    /* 15 * 0.5 + 1 */
  g_assert_cmpfloat (y[30], ==, 9.0f);    /* (0 + 16) * 0.5 + 1 */
  g_assert_cmpfloat (y[31], ==, 1.0f);
}

static void
test_q8_0 (void)
{
  ScBlockQ8_0 b;
  float y[32];

  memset (&b, 0, sizeof b);
  b.d = H_0_125;          /* d = 0.125 */
  b.qs[0] = -128;
  b.qs[1] = 127;
  b.qs[31] = -3;

  dequant (SC_TYPE_Q8_0, &b, y, 32);
  g_assert_cmpfloat (y[0], ==, -16.0f);   /* -128 / 8 */
  g_assert_cmpfloat (y[1], ==, 15.875f);  /* 127 / 8 */
  g_assert_cmpfloat (y[10], ==, 0.0f);
  g_assert_cmpfloat (y[31], ==, -0.375f); /* -3 / 8 */
}

/* In Q2_K and Q3_K, element e = 128h + 32p + 16g + l is code bits 2p..2p+1 of
 * qs[32h + 16g + l] with sub-block scale 8h + 2p + g. */
static void
test_q2_k (void)
{
  ScBlockQ2_K b;
  float y[256];

  memset (&b, 0, sizeof b);
  b.d = H_0_5;            /* d = 0.5 */
  b.dmin = H_0_25;        /* dmin = 0.25 */
  /* Sub-block k: scale k in the low nibble, min 15 - k in the high one. */
  for (int k = 0; k < 16; k++)
    b.scales[k] = (uint8_t) (((15 - k) << 4) | k);
  b.qs[0] = 0xe4;         /* bit pairs (low first): 0, 1, 2, 3 */
  b.qs[21] = 0x03;        /* pair 0 = 3 */
  b.qs[32] = 0x02;        /* pair 0 = 2 */
  b.qs[63] = 0xc0;        /* pair 3 = 3 */

  dequant (SC_TYPE_Q2_K, &b, y, 256);
  g_assert_cmpfloat (y[0], ==, -3.75f);   /* scale 0, min 15: 0.5*0*0 - 0.25*15 */
  g_assert_cmpfloat (y[21], ==, -2.0f);   /* qs[21] pair 0 = 3, sub-block 1 (1, 14): 1.5 - 3.5 */
  g_assert_cmpfloat (y[32], ==, -2.25f);  /* qs[0] pair 1 = 1, sub-block 2 (2, 13): 1 - 3.25 */
  g_assert_cmpfloat (y[64], ==, 1.25f);   /* qs[0] pair 2 = 2, sub-block 4 (4, 11): 4 - 2.75 */
  g_assert_cmpfloat (y[96], ==, 6.75f);   /* qs[0] pair 3 = 3, sub-block 6 (6, 9): 9 - 2.25 */
  g_assert_cmpfloat (y[128], ==, 6.25f);  /* qs[32] pair 0 = 2, sub-block 8 (8, 7): 8 - 1.75 */
  g_assert_cmpfloat (y[160], ==, -1.25f); /* qs[32] pair 1 = 0, sub-block 10 (10, 5): 0 - 1.25 */
  g_assert_cmpfloat (y[255], ==, 22.5f);  /* qs[63] pair 3 = 3, sub-block 15 (15, 0): 22.5 - 0 */
  g_assert_cmpfloat (y[254], ==, 0.0f);   /* qs[62] = 0, sub-block 15: 0 - 0 */
}

static void
test_q3_k (void)
{
  ScBlockQ3_K b;
  float y[256];
  /* Sixteen 6-bit scales, stored biased by 32. All are 32 (0) except
   *   s0 = 33 (+1), s3 = 0 (-32), s5 = 40 (+8), s10 = 16 (-16), s15 = 63 (+31).
   * Low nibble of s_j: byte j (j < 8) or high nibble of byte j - 8 (j >= 8); top two bits:
   * bits 2(j/4)..2(j/4)+1 of byte 8 + j%4. Raw 32 = 0b10_0000 puts 0b10 in every top-bit
   * field (0xaa) and 0 in every nibble; then:
   *   s0  = 0b10_0001: byte 0 = 0x01
   *   s5  = 0b10_1000: byte 5 = 0x08
   *   s15 = 0b11_1111: byte 7 high nibble 0xf; byte 11 bits 6-7 = 0b11
   *   s10 = 0b01_0000: byte 10 bits 4-5 = 0b01 -> 0b10_01_10_10 = 0x9a
   *   s3  = 0b00_0000: byte 11 bits 0-1 = 0b00 -> 0b11_10_10_00 = 0xe8 */
  static const uint8_t scales[12] = { 0x01, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0xf0,
                                      0xaa, 0xaa, 0x9a, 0xe8 };

  memset (&b, 0, sizeof b);
  b.d = H_0_5;            /* d = 0.5 */
  memcpy (b.scales, scales, sizeof scales);
  /* The high bit of element e lives in bit 4h + p of hmask[16g + l]; set means "no -4". */
  b.qs[0] = 0x03;  b.hmask[0] = 0x01;   /* element 0: q = 3 */
  b.qs[1] = 0x02;                       /* element 1: q = 2 - 4 */
  b.qs[16] = 0x04; b.hmask[16] = 0x02;  /* element 48 (p 1, g 1): q = 1 */
  b.qs[21] = 0x30; b.hmask[21] = 0x04;  /* element 85 (p 2, g 1, l 5): q = 3 */
  b.qs[42] = 0x04;                      /* element 170 (h 1, p 1, l 10): q = 1 - 4 */
  b.qs[63] = 0x80; b.hmask[31] = 0x80;  /* element 255 (h 1, p 3, g 1, l 15): q = 2 */

  dequant (SC_TYPE_Q3_K, &b, y, 256);
  g_assert_cmpfloat (y[0], ==, 1.5f);     /* 0.5 * (+1) * 3 */
  g_assert_cmpfloat (y[1], ==, -1.0f);    /* 0.5 * (+1) * (2 - 4) */
  g_assert_cmpfloat (y[2], ==, -2.0f);    /* 0.5 * (+1) * (0 - 4) */
  g_assert_cmpfloat (y[48], ==, -16.0f);  /* scale 3 = -32: 0.5 * -32 * 1 */
  g_assert_cmpfloat (y[49], ==, 64.0f);   /* scale 3: 0.5 * -32 * (0 - 4) */
  g_assert_cmpfloat (y[85], ==, 12.0f);   /* scale 5 = +8: 0.5 * 8 * 3 */
  g_assert_cmpfloat (y[170], ==, 24.0f);  /* scale 10 = -16: 0.5 * -16 * (1 - 4) */
  g_assert_cmpfloat (y[255], ==, 31.0f);  /* scale 15 = +31: 0.5 * 31 * 2 */
  g_assert_cmpfloat (y[254], ==, -62.0f); /* scale 15: 0.5 * 31 * (0 - 4) */
  g_assert_cmpfloat (y[100], ==, 0.0f);   /* scale 6 = 0 */
}

/* Q4_K/Q5_K scales: eight (scale, min) pairs of 6 bits in 12 bytes. Pairs 0..3 are the low
 * 6 bits of bytes j (scale) and j + 4 (min); pairs 4..7 take the nibbles of byte j + 4
 * (scale low, min high) and top bits from bits 6-7 of bytes j - 4 (scale), j (min).
 * Chosen pairs: (1, 2), (63, 0), (0, 0), (0, 0), (37, 19), (0, 0), (0, 0), (60, 63):
 *   byte 0 = 0x81: scale 0 = 1, top bits of scale 4 (37 = 0b10_0101) = 0b10
 *   byte 1 = 0x3f: scale 1 = 63
 *   byte 3 = 0xc0: top bits of scale 7 (60 = 0b11_1100) = 0b11
 *   byte 4 = 0x42: min 0 = 2, top bits of min 4 (19 = 0b01_0011) = 0b01
 *   byte 7 = 0xc0: top bits of min 7 (63) = 0b11
 *   byte 8 = 0x35: scale 4 low 5, min 4 low 3
 *   byte 11 = 0xfc: scale 7 low 12, min 7 low 15 */
static const uint8_t k4_scales[12] = { 0x81, 0x3f, 0x00, 0xc0, 0x42, 0x00, 0x00, 0xc0,
                                       0x35, 0x00, 0x00, 0xfc };

static void
test_q4_k (void)
{
  ScBlockQ4_K b;
  float y[256];

  memset (&b, 0, sizeof b);
  b.d = H_0_5;            /* d = 0.5 */
  b.dmin = H_0_25;        /* dmin = 0.25 */
  memcpy (b.scales, k4_scales, sizeof k4_scales);
  /* Chunk c covers elements 64c..64c+63: low nibbles of qs[32c + l] use pair 2c,
   * high nibbles pair 2c + 1. */
  b.qs[0] = 0x97;         /* element 0: 7, element 32: 9 */
  b.qs[31] = 0xf0;        /* element 31: 0, element 63: 15 */
  b.qs[69] = 0x04;        /* element 133 (chunk 2, low, l 5): 4 */
  b.qs[127] = 0x10;       /* element 223: 0, element 255: 1 */

  dequant (SC_TYPE_Q4_K, &b, y, 256);
  g_assert_cmpfloat (y[0], ==, 3.0f);     /* pair 0: 0.5*1*7 - 0.25*2 */
  g_assert_cmpfloat (y[31], ==, -0.5f);   /* pair 0: 0 - 0.5 */
  g_assert_cmpfloat (y[32], ==, 283.5f);  /* pair 1: 0.5*63*9 - 0 */
  g_assert_cmpfloat (y[63], ==, 472.5f);  /* pair 1: 0.5*63*15 */
  g_assert_cmpfloat (y[133], ==, 69.25f); /* pair 4: 0.5*37*4 - 0.25*19 = 74 - 4.75 */
  g_assert_cmpfloat (y[224], ==, -15.75f);/* pair 7: 0 - 0.25*63 */
  g_assert_cmpfloat (y[255], ==, 14.25f); /* pair 7: 0.5*60*1 - 15.75 */
}

static void
test_q5_k (void)
{
  ScBlockQ5_K b;
  float y[256];

  memset (&b, 0, sizeof b);
  b.d = H_0_5;
  b.dmin = H_0_25;
  memcpy (b.scales, k4_scales, sizeof k4_scales);
  b.qs[0] = 0x97;
  b.qs[31] = 0xf0;
  b.qs[69] = 0x04;
  b.qs[127] = 0x10;
  /* Fifth bit of element 32k + l is bit k of qh[l]. */
  b.qh[0] = 0x01;         /* element 0 */
  b.qh[5] = 0x10;         /* element 133 = 32*4 + 5 */
  b.qh[31] = 0x80;        /* element 255 = 32*7 + 31 */

  dequant (SC_TYPE_Q5_K, &b, y, 256);
  g_assert_cmpfloat (y[0], ==, 11.0f);     /* 0.5*1*(7 + 16) - 0.5 */
  g_assert_cmpfloat (y[31], ==, -0.5f);    /* qh[31] bit 0 clear */
  g_assert_cmpfloat (y[32], ==, 283.5f);   /* qh[0] bit 1 clear: as Q4_K */
  g_assert_cmpfloat (y[133], ==, 365.25f); /* 0.5*37*(4 + 16) - 4.75 */
  g_assert_cmpfloat (y[223], ==, 0.0f);    /* pair 6 = (0, 0) */
  g_assert_cmpfloat (y[255], ==, 494.25f); /* 0.5*60*(1 + 16) - 15.75 */
}

static void
test_q6_k (void)
{
  ScBlockQ6_K b;
  float y[256];
  /* Sub-block scales 1, -2, 3, -4, ..., 15, -16. */
  static const int8_t scales[16] = { 1, -2, 3, -4, 5, -6, 7, -8,
                                     9, -10, 11, -12, 13, -14, 15, -16 };

  memset (&b, 0, sizeof b);
  b.d = H_0_5;            /* d = 0.5 */
  memcpy (b.scales, scales, sizeof scales);
  /* Half h, l = 0..31: elements l, l+32, l+64, l+96 take low bits lo(ql[l]),
   * lo(ql[l+32]), hi(ql[l]), hi(ql[l+32]) and top bits from pairs 0..3 of qh[l]
   * (ql, qh offset by 64h, 32h); element e of a half uses scale 8h + e/16. */
  b.ql[0] = 0xa5;         /* element 0: low 5; element 64: low 10 */
  b.qh[0] = 0x32;         /* pairs: 2 (element 0), 0 (32), 3 (64), 0 (96) */
  b.ql[17] = 0x0f;        /* element 17: low 15 */
  b.qh[17] = 0x03;        /* element 17: top 3 */
  b.ql[116] = 0x01;       /* half 1, element 32 + 20: low 1 */
  b.qh[52] = 0x04;        /* half 1, l 20, pair 1 = 1 */
  b.ql[127] = 0x70;       /* half 1, element 96 + 31: low 7 */
  b.qh[63] = 0x40;        /* half 1, l 31, pair 3 = 1 */

  dequant (SC_TYPE_Q6_K, &b, y, 256);
  g_assert_cmpfloat (y[0], ==, 2.5f);     /* q = 5 + 2*16 = 37: 0.5 * 1 * (37 - 32) */
  g_assert_cmpfloat (y[17], ==, -31.0f);  /* q = 15 + 48 = 63, scale 1 = -2: 0.5*-2*31 */
  g_assert_cmpfloat (y[32], ==, -48.0f);  /* q = 0, scale 2 = 3: 0.5*3*-32 */
  g_assert_cmpfloat (y[64], ==, 65.0f);   /* q = 10 + 48 = 58, scale 4 = 5: 0.5*5*26 */
  g_assert_cmpfloat (y[96], ==, -112.0f); /* q = 0, scale 6 = 7: 0.5*7*-32 */
  g_assert_cmpfloat (y[180], ==, 90.0f);  /* q = 1 + 16 = 17, scale 11 = -12: 0.5*-12*-15 */
  g_assert_cmpfloat (y[255], ==, 72.0f);  /* q = 7 + 16 = 23, scale 15 = -16: 0.5*-16*-9 */
}

/* A misaligned source row decodes exactly like an aligned one. */
static void
test_misaligned (void)
{
  static const uint32_t types[] = { SC_TYPE_F32, SC_TYPE_F16, SC_TYPE_BF16, SC_TYPE_Q4_0,
                                    SC_TYPE_Q5_0, SC_TYPE_Q8_0, SC_TYPE_Q3_K, SC_TYPE_Q6_K };
  const int64_t n = 512;
  g_autofree guint8 *buf = g_malloc (4096);
  g_autofree float *a = g_new (float, n);
  g_autofree float *b = g_new (float, n);

  for (gsize i = 0; i < 4096; i++)
    buf[i] = (guint8) g_test_rand_int_range (0, 256);
  for (gsize t = 0; t < G_N_ELEMENTS (types); t++)
    {
      size_t bytes;
      ScError err = { 0 };

      assert_ok (sc_type_row_bytes (types[t], n, &bytes, &err), err);
      g_assert_cmpuint (bytes + 1, <=, 4096);
      memmove (buf + 1, buf, bytes);                 /* same bytes at an odd address */
      dequant (types[t], buf + 1, b, n);
      memmove (buf, buf + 1, bytes);
      dequant (types[t], buf, a, n);
      g_assert_cmpmem (a, (gsize) n * sizeof (float), b, (gsize) n * sizeof (float));
    }
}

/* ------------------------------------------------------------------------------------ */
/* The gguf-package fixture                                                              */
/* ------------------------------------------------------------------------------------ */

/* Loads quant-fixture.json from $SC_TEST_REFERENCE_DIR, or fails the test and returns
 * NULL. */
static JsonParser *
load_fixture (void)
{
  const char *dir = g_getenv ("SC_TEST_REFERENCE_DIR");
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  JsonParser *parser;

  if (dir == NULL || *dir == '\0')
    {
      g_test_fail_printf ("SC_TEST_REFERENCE_DIR is not set: point it at tests/reference "
                          "(the folder holding quant-fixture.json)");
      return NULL;
    }
  path = g_build_filename (dir, "quant-fixture.json", NULL);
  parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, &error))
    {
      g_test_fail_printf ("cannot read %s: %s", path, error->message);
      g_object_unref (parser);
      return NULL;
    }
  return parser;
}

static void
test_fixture_type_sizes (void)
{
  g_autoptr (JsonParser) parser = load_fixture ();
  JsonObject *root;
  JsonArray *sizes;

  if (parser == NULL)
    return;
  root = json_node_get_object (json_parser_get_root (parser));
  sizes = json_object_get_array_member (root, "type_sizes");
  g_assert_cmpuint (json_array_get_length (sizes), >, 30);
  for (guint i = 0; i < json_array_get_length (sizes); i++)
    {
      JsonObject *o = json_array_get_object_element (sizes, i);
      uint32_t id = (uint32_t) json_object_get_int_member (o, "type");
      const char *name = json_object_get_string_member (o, "name");
      const ScTypeTraits *t = sc_type_traits (id);

      g_test_message ("gguf type %u %s", id, name);
      g_assert_nonnull (t);
      g_assert_cmpint (g_ascii_strcasecmp (t->name, name), ==, 0);
      g_assert_cmpuint (t->block_size, ==, json_object_get_int_member (o, "block_size"));
      /* gguf-py still sizes Q8_1 as 40 bytes (f32 d and s); ggml's block_q8_1 holds two
       * halves (2 + 2 + 32 = 36, static_assert in ggml-common.h). Q8_1 is ggml's
       * activation format and is never stored in a GGUF file; we follow ggml. */
      if (id == SC_TYPE_Q8_1 && json_object_get_int_member (o, "type_size") == 40)
        continue;
      g_assert_cmpuint (t->type_size, ==, json_object_get_int_member (o, "type_size"));
    }
}

static void
test_fixture_dequant (void)
{
  g_autoptr (JsonParser) parser = load_fixture ();
  JsonObject *root;
  JsonArray *cases;
  guint seen[SC_TYPE_COUNT] = { 0 };

  if (parser == NULL)
    return;
  root = json_node_get_object (json_parser_get_root (parser));
  cases = json_object_get_array_member (root, "cases");
  for (guint c = 0; c < json_array_get_length (cases); c++)
    {
      JsonObject *o = json_array_get_object_element (cases, c);
      uint32_t type = (uint32_t) json_object_get_int_member (o, "type");
      int64_t n = json_object_get_int_member (o, "n");
      const char *hex = json_object_get_string_member (o, "raw_hex");
      JsonArray *expected = json_object_get_array_member (o, "expected");
      size_t n_bytes = strlen (hex) / 2, want_bytes;
      g_autofree guint8 *raw = g_malloc (MAX (n_bytes, 1));
      g_autofree float *y = g_new (float, MAX (n, 1));
      ScError err = { 0 };

      g_test_message ("case %u: %s (%s)", c, json_object_get_string_member (o, "name"),
                      json_object_get_string_member (o, "source"));
      g_assert_cmpuint (type, <, SC_TYPE_COUNT);
      g_assert_cmpint (json_array_get_length (expected), ==, n);
      assert_ok (sc_type_row_bytes (type, n, &want_bytes, &err), err);
      g_assert_cmpuint (n_bytes, ==, want_bytes);
      for (size_t i = 0; i < n_bytes; i++)
        raw[i] = (guint8) ((g_ascii_xdigit_value (hex[2 * i]) << 4)
                           | g_ascii_xdigit_value (hex[2 * i + 1]));

      dequant (type, raw, y, n);
      for (int64_t i = 0; i < n; i++)
        {
          const char *s = json_array_get_string_element (expected, (guint) i);
          double ref = g_ascii_strtod (s, NULL);
          double tol = FIXTURE_ABS_TOL + FIXTURE_REL_TOL * fabs (ref);

          if (!(fabs ((double) y[i] - ref) <= tol))
            g_error ("case %u (type %u) element %" G_GINT64_FORMAT ": got %.9g, gguf says %s",
                     c, type, i, (double) y[i], s);
        }
      seen[type]++;
    }

  /* The fixture covers every type we decode. */
  for (uint32_t id = 0; id < SC_TYPE_COUNT; id++)
    {
      const ScTypeTraits *t = sc_type_traits (id);
      if (t != NULL && t->can_dequant && seen[id] == 0)
        g_error ("the fixture has no case for %s", t->name);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/quant/fp16/to-fp32", test_fp16_to_fp32_values);
  g_test_add_func ("/quant/fp16/exhaustive", test_fp16_exhaustive);
  g_test_add_func ("/quant/fp16/rounding", test_fp32_to_fp16_rounding);
  g_test_add_func ("/quant/fp16/random", test_fp32_to_fp16_random);
  g_test_add_func ("/quant/bf16", test_bf16);
  g_test_add_func ("/quant/math/rope-pair", test_rope_pair);
  g_test_add_func ("/quant/math/online-softmax", test_online_softmax);
  g_test_add_func ("/quant/traits", test_traits);
  g_test_add_func ("/quant/row-bytes", test_row_bytes);
  g_test_add_func ("/quant/dequant/errors", test_dequant_errors);
  g_test_add_func ("/quant/dequant/plain", test_plain_rows);
  g_test_add_func ("/quant/dequant/q4_0", test_q4_0);
  g_test_add_func ("/quant/dequant/q4_1", test_q4_1);
  g_test_add_func ("/quant/dequant/q5_0", test_q5_0);
  g_test_add_func ("/quant/dequant/q5_1", test_q5_1);
  g_test_add_func ("/quant/dequant/q8_0", test_q8_0);
  g_test_add_func ("/quant/dequant/q2_K", test_q2_k);
  g_test_add_func ("/quant/dequant/q3_K", test_q3_k);
  g_test_add_func ("/quant/dequant/q4_K", test_q4_k);
  g_test_add_func ("/quant/dequant/q5_K", test_q5_k);
  g_test_add_func ("/quant/dequant/q6_K", test_q6_k);
  g_test_add_func ("/quant/dequant/misaligned", test_misaligned);
  g_test_add_func ("/quant/row-finite", test_row_finite);
  g_test_add_func ("/quant/fixture/type-sizes", test_fixture_type_sizes);
  g_test_add_func ("/quant/fixture/dequant", test_fixture_dequant);

  return g_test_run ();
}
