/* sc-sha256.h — SHA-256 (FIPS 180-4), used to fingerprint model files.
 *
 * The capture store identifies a model by the SHA-256 of its whole file, so the same
 * file reached through two paths is one model and two different files never share
 * runs (docs/store.md). A model file is ~100 MB to a few GB and is hashed once per
 * process that stores captures, so speed matters: on x86-64 CPUs with the SHA extensions
 * the block function uses them (SHA-NI, ~1.5 GB/s per core on our machines), elsewhere a
 * portable scalar version (~0.25 GB/s). Both produce the same digests; the tests check each
 * against the FIPS 180-4 vectors and against each other.
 *
 * What it is not: a general crypto library (no HMAC, no constant-time promises — model
 * files are not secrets).
 *
 * Plain C17, no GLib, no global state. Thread safety: a context belongs to one thread;
 * independent contexts may be used concurrently.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_SHA256_DIGEST_SIZE 32
#define SC_SHA256_BLOCK_SIZE 64
#define SC_SHA256_HEX_SIZE (2 * SC_SHA256_DIGEST_SIZE + 1) /* with the NUL */

/* Which block function a context runs. AUTO picks SHA-NI when the CPU has it. */
typedef enum {
  SC_SHA256_AUTO = 0,
  SC_SHA256_SCALAR,
  SC_SHA256_SHANI,
} ScSha256Impl;

/* Invariants: 0 <= buf_len < 64; n_bytes counts every byte passed to update() so far. */
typedef struct {
  uint32_t state[8];
  uint64_t n_bytes;
  uint8_t buf[SC_SHA256_BLOCK_SIZE];
  size_t buf_len;
  void (*blocks) (uint32_t state[8], const uint8_t *data, size_t n_blocks);
} ScSha256;

/* Whether this CPU (and build) can run the SHA-NI block function. */
bool sc_sha256_have_shani (void);

/* Starts a hash. Returns false (and leaves @ctx unusable) only when @impl is SHANI and
 * sc_sha256_have_shani() is false. */
bool sc_sha256_init_impl (ScSha256 *ctx, ScSha256Impl impl);

/* sc_sha256_init_impl (ctx, SC_SHA256_AUTO). */
void sc_sha256_init (ScSha256 *ctx);

/* Hashes @len bytes at @data (NULL allowed when @len is 0). */
void sc_sha256_update (ScSha256 *ctx, const void *data, size_t len);

/* Pads, writes the 32-byte digest to @digest and leaves @ctx finished (init again to
 * reuse it). */
void sc_sha256_final (ScSha256 *ctx, uint8_t digest[SC_SHA256_DIGEST_SIZE]);

/* One-shot digest of a buffer. */
void sc_sha256 (const void *data, size_t len, uint8_t digest[SC_SHA256_DIGEST_SIZE]);

/* Digest of the file at @path, read sequentially; its size goes to *@size (if non-NULL).
 * Errors: SC_ERR_IO (open/read failed; the message names the file and the errno text),
 * SC_ERR_NOMEM. */
ScStatus sc_sha256_file (const char *path, uint8_t digest[SC_SHA256_DIGEST_SIZE],
                         uint64_t *size, ScError *err);

/* Writes @digest as 64 lower-case hex digits and a NUL into @hex. */
void sc_sha256_hex (const uint8_t digest[SC_SHA256_DIGEST_SIZE], char hex[SC_SHA256_HEX_SIZE]);

/* The hex SHA-256 of @n int32 values as little-endian bytes, whatever the host's order:
 * how a study's params name a sentence given by its token ids. */
void sc_sha256_int32_hex (const int32_t *values, int n, char hex[SC_SHA256_HEX_SIZE]);

#ifdef __cplusplus
}
#endif
