/* sc-sha256.c — SHA-256 as FIPS 180-4 §6.2 defines it, with an x86 SHA-NI block function.
 *
 * Workload: hashing whole model files (hundreds of MB) once per process that stores a
 * capture, plus tiny buffers in tests. The portable block function follows the standard
 * line by line (§6.2.2 steps 1-4); the SHA-NI one does the same 64 rounds two at a time
 * with the x86 SHA extensions (sha256rnds2 for the rounds, sha256msg1/msg2 for the message
 * schedule). Both are exercised by tests/engine/test-sha256.c on every machine that has SHA-NI;
 * elsewhere only the scalar path can run and only it is tested.
 */
#include "core/sc-sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SC_SHA256_HAVE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64
 * primes. */
static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
  0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
  0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
  0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
  0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
  0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
  0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
};

/* §5.3.3: the initial hash value, the fractional parts of the square roots of the first
 * 8 primes. */
static const uint32_t H0[8] = {
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/* ------------------------------------------------------------------------------------ */
/* Portable block function                                                               */
/* ------------------------------------------------------------------------------------ */

static inline uint32_t
rotr (uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

static inline uint32_t
load_be32 (const uint8_t *p)
{
  return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* §4.1.2 functions. */
#define CH(x, y, z) (((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
#define BSIG0(x) (rotr (x, 2) ^ rotr (x, 13) ^ rotr (x, 22))
#define BSIG1(x) (rotr (x, 6) ^ rotr (x, 11) ^ rotr (x, 25))
#define SSIG0(x) (rotr (x, 7) ^ rotr (x, 18) ^ ((x) >> 3))
#define SSIG1(x) (rotr (x, 17) ^ rotr (x, 19) ^ ((x) >> 10))

static void
blocks_scalar (uint32_t state[8], const uint8_t *data, size_t n_blocks)
{
  uint32_t w[64];

  for (; n_blocks > 0; n_blocks--, data += SC_SHA256_BLOCK_SIZE)
    {
      uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
      uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
      int t;

      /* 1. the message schedule */
      for (t = 0; t < 16; t++)
        w[t] = load_be32 (data + 4 * t);
      for (t = 16; t < 64; t++)
        w[t] = SSIG1 (w[t - 2]) + w[t - 7] + SSIG0 (w[t - 15]) + w[t - 16];

      /* 2-3. 64 rounds over the working variables */
      for (t = 0; t < 64; t++)
        {
          uint32_t t1 = h + BSIG1 (e) + CH (e, f, g) + K[t] + w[t];
          uint32_t t2 = BSIG0 (a) + MAJ (a, b, c);
          h = g;
          g = f;
          f = e;
          e = d + t1;
          d = c;
          c = b;
          b = a;
          a = t1 + t2;
        }

      /* 4. the intermediate hash value */
      state[0] += a;
      state[1] += b;
      state[2] += c;
      state[3] += d;
      state[4] += e;
      state[5] += f;
      state[6] += g;
      state[7] += h;
    }
}

/* ------------------------------------------------------------------------------------ */
/* SHA-NI block function                                                                 */
/* ------------------------------------------------------------------------------------ */

#ifdef SC_SHA256_HAVE_X86

/* The SHA instructions keep the eight working variables in two registers as (A,B,E,F)
 * and (C,D,G,H), high lane first; sha256rnds2 (cdgh, abef, wk) runs two rounds using the
 * low two lanes of wk = W[t] + K[t], and returns the new (A,B,E,F). Four rounds = two
 * calls, the second on wk's high lanes. The message schedule for words t..t+3 is
 *   msg2 (msg1 (W[t-16..t-13], W[t-12..t-9]) + W[t-7..t-4], W[t-4..t-1])
 * where msg1 adds sigma0 of the next word and msg2 adds the sigma1 terms (§6.2.2 step 1). */
__attribute__ ((target ("sha,sse4.1,ssse3"))) static void
blocks_shani (uint32_t state[8], const uint8_t *data, size_t n_blocks)
{
  /* Byte order: each 32-bit word of the block is big-endian. */
  const __m128i bswap = _mm_set_epi64x (0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abef, cdgh, tmp;

  /* When the rest of the file is built with AVX (-march=native), the compiler encodes the
   * SSE intrinsics below with VEX while the SHA instructions exist only in legacy SSE
   * encoding; mixing the two with dirty upper register halves cost a factor of 200 on our
   * (virtualised) Xeons. Clearing the upper halves first makes the mix free. */
#ifdef __AVX__
  _mm256_zeroupper ();
#endif
  /* (A,B,C,D), (E,F,G,H) -> (A,B,E,F), (C,D,G,H) in the instructions' lane order. */
  tmp = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) &state[0]), 0xb1); /* CDAB */
  cdgh = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) &state[4]), 0x1b); /* EFGH */
  abef = _mm_alignr_epi8 (tmp, cdgh, 8);
  cdgh = _mm_blend_epi16 (cdgh, tmp, 0xf0);

  for (; n_blocks > 0; n_blocks--, data += SC_SHA256_BLOCK_SIZE)
    {
      const __m128i abef_save = abef, cdgh_save = cdgh;
      __m128i msg[4];
      int g;

#pragma GCC unroll 16
      for (g = 0; g < 16; g++) /* 16 groups of 4 rounds */
        {
          __m128i wk;

          if (g < 4)
            msg[g] = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (data + 16 * g)), bswap);
          else
            {
              const __m128i m16 = msg[g & 3], m12 = msg[(g + 1) & 3];
              const __m128i m8 = msg[(g + 2) & 3], m4 = msg[(g + 3) & 3];
              __m128i x = _mm_sha256msg1_epu32 (m16, m12);
              x = _mm_add_epi32 (x, _mm_alignr_epi8 (m4, m8, 4)); /* + W[t-7..t-4] */
              msg[g & 3] = _mm_sha256msg2_epu32 (x, m4);
            }
          wk = _mm_add_epi32 (msg[g & 3], _mm_loadu_si128 ((const __m128i *) &K[4 * g]));
          cdgh = _mm_sha256rnds2_epu32 (cdgh, abef, wk);
          abef = _mm_sha256rnds2_epu32 (abef, cdgh, _mm_shuffle_epi32 (wk, 0x0e));
        }
      abef = _mm_add_epi32 (abef, abef_save);
      cdgh = _mm_add_epi32 (cdgh, cdgh_save);
    }

  /* Back to (A,B,C,D), (E,F,G,H). */
  tmp = _mm_shuffle_epi32 (abef, 0x1b);   /* FEBA */
  cdgh = _mm_shuffle_epi32 (cdgh, 0xb1);  /* DCHG */
  _mm_storeu_si128 ((__m128i *) &state[0], _mm_blend_epi16 (tmp, cdgh, 0xf0)); /* DCBA */
  _mm_storeu_si128 ((__m128i *) &state[4], _mm_alignr_epi8 (cdgh, tmp, 8));    /* HGFE */
}

bool
sc_sha256_have_shani (void)
{
  unsigned a, b, c, d;
  bool ssse3, sse41;

  if (!__get_cpuid (1, &a, &b, &c, &d))
    return false;
  ssse3 = (c & bit_SSSE3) != 0;
  sse41 = (c & bit_SSE4_1) != 0;
  if (!__get_cpuid_count (7, 0, &a, &b, &c, &d))
    return false;
  return ssse3 && sse41 && (b & bit_SHA) != 0;
}

#else

bool
sc_sha256_have_shani (void)
{
  return false;
}

#endif

/* ------------------------------------------------------------------------------------ */
/* Streaming interface                                                                   */
/* ------------------------------------------------------------------------------------ */

bool
sc_sha256_init_impl (ScSha256 *ctx, ScSha256Impl impl)
{
  memcpy (ctx->state, H0, sizeof H0);
  ctx->n_bytes = 0;
  ctx->buf_len = 0;
  ctx->blocks = blocks_scalar;
#ifdef SC_SHA256_HAVE_X86
  if (impl != SC_SHA256_SCALAR && sc_sha256_have_shani ())
    {
      ctx->blocks = blocks_shani;
      return true;
    }
#endif
  return impl != SC_SHA256_SHANI;
}

void
sc_sha256_init (ScSha256 *ctx)
{
  sc_sha256_init_impl (ctx, SC_SHA256_AUTO);
}

void
sc_sha256_update (ScSha256 *ctx, const void *data, size_t len)
{
  const uint8_t *p = data;

  ctx->n_bytes += len;
  if (ctx->buf_len > 0)
    {
      size_t take = SC_SHA256_BLOCK_SIZE - ctx->buf_len;
      if (take > len)
        take = len;
      memcpy (ctx->buf + ctx->buf_len, p, take);
      ctx->buf_len += take;
      p += take;
      len -= take;
      if (ctx->buf_len < SC_SHA256_BLOCK_SIZE)
        return;
      ctx->blocks (ctx->state, ctx->buf, 1);
      ctx->buf_len = 0;
    }
  if (len >= SC_SHA256_BLOCK_SIZE)
    {
      size_t n = len / SC_SHA256_BLOCK_SIZE;
      ctx->blocks (ctx->state, p, n);
      p += n * SC_SHA256_BLOCK_SIZE;
      len -= n * SC_SHA256_BLOCK_SIZE;
    }
  if (len > 0)
    {
      memcpy (ctx->buf, p, len);
      ctx->buf_len = len;
    }
}

void
sc_sha256_final (ScSha256 *ctx, uint8_t digest[SC_SHA256_DIGEST_SIZE])
{
  /* §5.1.1: append 0x80, zeros up to 56 mod 64, then the message length in bits as a
   * 64-bit big-endian integer. */
  const uint64_t bits = ctx->n_bytes * 8;
  int i;

  ctx->buf[ctx->buf_len++] = 0x80;
  if (ctx->buf_len > SC_SHA256_BLOCK_SIZE - 8)
    {
      memset (ctx->buf + ctx->buf_len, 0, SC_SHA256_BLOCK_SIZE - ctx->buf_len);
      ctx->blocks (ctx->state, ctx->buf, 1);
      ctx->buf_len = 0;
    }
  memset (ctx->buf + ctx->buf_len, 0, SC_SHA256_BLOCK_SIZE - 8 - ctx->buf_len);
  for (i = 0; i < 8; i++)
    ctx->buf[SC_SHA256_BLOCK_SIZE - 1 - i] = (uint8_t) (bits >> (8 * i));
  ctx->blocks (ctx->state, ctx->buf, 1);
  ctx->buf_len = 0;
  for (i = 0; i < 8; i++)
    {
      digest[4 * i] = (uint8_t) (ctx->state[i] >> 24);
      digest[4 * i + 1] = (uint8_t) (ctx->state[i] >> 16);
      digest[4 * i + 2] = (uint8_t) (ctx->state[i] >> 8);
      digest[4 * i + 3] = (uint8_t) ctx->state[i];
    }
}

void
sc_sha256 (const void *data, size_t len, uint8_t digest[SC_SHA256_DIGEST_SIZE])
{
  ScSha256 ctx;

  sc_sha256_init (&ctx);
  sc_sha256_update (&ctx, data, len);
  sc_sha256_final (&ctx, digest);
}

/* Read size: large enough that syscalls cost nothing next to hashing, small enough to
 * stay in L2. */
#define FILE_CHUNK (1u << 20)

ScStatus
sc_sha256_file (const char *path, uint8_t digest[SC_SHA256_DIGEST_SIZE], uint64_t *size,
                ScError *err)
{
  ScSha256 ctx;
  uint8_t *buf;
  uint64_t total = 0;
  int fd;

  if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
    return sc_error_set (err, SC_ERR_IO, "cannot open %s: %s", path, strerror (errno));
  if ((buf = malloc (FILE_CHUNK)) == NULL)
    {
      close (fd);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory hashing %s", path);
    }
#ifdef POSIX_FADV_SEQUENTIAL
  posix_fadvise (fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  sc_sha256_init (&ctx);
  for (;;)
    {
      ssize_t n = read (fd, buf, FILE_CHUNK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          free (buf);
          close (fd);
          return sc_error_set (err, SC_ERR_IO, "cannot read %s: %s", path, strerror (e));
        }
      if (n == 0)
        break;
      sc_sha256_update (&ctx, buf, (size_t) n);
      total += (uint64_t) n;
    }
  free (buf);
  close (fd);
  sc_sha256_final (&ctx, digest);
  if (size != NULL)
    *size = total;
  return SC_OK;
}

void
sc_sha256_hex (const uint8_t digest[SC_SHA256_DIGEST_SIZE], char hex[SC_SHA256_HEX_SIZE])
{
  static const char digits[] = "0123456789abcdef";
  int i;

  for (i = 0; i < SC_SHA256_DIGEST_SIZE; i++)
    {
      hex[2 * i] = digits[digest[i] >> 4];
      hex[2 * i + 1] = digits[digest[i] & 15];
    }
  hex[2 * SC_SHA256_DIGEST_SIZE] = '\0';
}

void
sc_sha256_int32_hex (const int32_t *values, int n, char hex[SC_SHA256_HEX_SIZE])
{
  uint8_t digest[SC_SHA256_DIGEST_SIZE], le[4];
  ScSha256 ctx;

  sc_sha256_init (&ctx);
  for (int i = 0; i < n; i++)
    {
      const uint32_t u = (uint32_t) values[i];
      le[0] = u & 0xff, le[1] = (u >> 8) & 0xff, le[2] = (u >> 16) & 0xff, le[3] = u >> 24;
      sc_sha256_update (&ctx, le, 4);
    }
  sc_sha256_final (&ctx, digest);
  sc_sha256_hex (digest, hex);
}
