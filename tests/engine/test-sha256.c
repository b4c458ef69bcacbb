/* test-sha256.c — SHA-256 against the FIPS 180-4 example vectors (NIST "Example
 * Algorithms", SHA256.pdf, and FIPS 180-2 appendix B), on both block functions, and the two
 * block functions against each other on random inputs fed in random pieces.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "engine/core/sc-sha256.h"

typedef struct {
  const char *text;
  size_t repeat; /* the text is hashed this many times in a row */
  const char *hex;
} Vector;

static const Vector vectors[] = {
  { "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
  { "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
  /* 448 bits: the padding spills into a second block */
  { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
  { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
    "nopqrsmnopqrstnopqrstu", 1,
    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
  { "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
};

static void
check_vectors (ScSha256Impl impl)
{
  gsize v;

  for (v = 0; v < G_N_ELEMENTS (vectors); v++)
    {
      ScSha256 ctx;
      uint8_t digest[SC_SHA256_DIGEST_SIZE];
      char hex[SC_SHA256_HEX_SIZE];
      size_t i, len = strlen (vectors[v].text);

      g_assert_true (sc_sha256_init_impl (&ctx, impl));
      for (i = 0; i < vectors[v].repeat; i++)
        sc_sha256_update (&ctx, vectors[v].text, len);
      sc_sha256_final (&ctx, digest);
      sc_sha256_hex (digest, hex);
      g_assert_cmpstr (hex, ==, vectors[v].hex);
    }
}

static void
test_vectors_scalar (void)
{
  check_vectors (SC_SHA256_SCALAR);
}

static void
test_vectors_shani (void)
{
  if (!sc_sha256_have_shani ())
    {
      ScSha256 ctx;
      g_assert_false (sc_sha256_init_impl (&ctx, SC_SHA256_SHANI));
      g_test_skip ("this CPU has no SHA extensions");
      return;
    }
  check_vectors (SC_SHA256_SHANI);
}

/* Random lengths around the block and padding boundaries, fed in random pieces to both
 * implementations: the digests must agree, and agree with the one-shot function. */
static void
test_implementations_agree (void)
{
  GRand *r = g_rand_new_with_seed (180);
  guint8 data[700];
  int trial;

  for (trial = 0; trial < 2000; trial++)
    {
      size_t len = (size_t) g_rand_int_range (r, 0, sizeof data), i, at;
      uint8_t d1[SC_SHA256_DIGEST_SIZE], d2[SC_SHA256_DIGEST_SIZE], d3[SC_SHA256_DIGEST_SIZE];
      ScSha256 a, b;
      bool have = sc_sha256_have_shani ();

      for (i = 0; i < len; i++)
        data[i] = (guint8) g_rand_int (r);
      sc_sha256_init_impl (&a, SC_SHA256_SCALAR);
      if (have)
        sc_sha256_init_impl (&b, SC_SHA256_SHANI);
      else
        sc_sha256_init_impl (&b, SC_SHA256_SCALAR);
      for (at = 0; at < len;)
        {
          size_t piece = (size_t) g_rand_int_range (r, 0, 130);
          piece = MIN (piece, len - at);
          sc_sha256_update (&a, data + at, piece);
          sc_sha256_update (&b, data + at, piece);
          at += piece;
        }
      sc_sha256_final (&a, d1);
      sc_sha256_final (&b, d2);
      sc_sha256 (data, len, d3);
      g_assert_cmpmem (d1, sizeof d1, d2, sizeof d2);
      g_assert_cmpmem (d1, sizeof d1, d3, sizeof d3);
    }
  g_rand_free (r);
}

static void
test_file (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sc-sha256-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "f", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing", NULL);
  gsize len = (3u << 20) + 17; /* several read chunks and a partial block */
  g_autofree guint8 *data = g_malloc (len);
  uint8_t want[SC_SHA256_DIGEST_SIZE], got[SC_SHA256_DIGEST_SIZE];
  uint64_t size = 0;
  ScError err = { 0 };
  gsize i;

  for (i = 0; i < len; i++)
    data[i] = (guint8) (i * 2654435761u >> 13);
  g_assert_true (g_file_set_contents (path, (const char *) data, (gssize) len, NULL));
  sc_sha256 (data, len, want);
  g_assert_cmpint (sc_sha256_file (path, got, &size, &err), ==, SC_OK);
  g_assert_cmpmem (want, sizeof want, got, sizeof got);
  g_assert_cmpuint (size, ==, len);

  g_assert_cmpint (sc_sha256_file (missing, got, NULL, &err), ==, SC_ERR_IO);
  g_assert_nonnull (strstr (err.message, missing));
  g_assert_nonnull (strstr (err.message, "No such file"));
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sha256/fips-vectors-scalar", test_vectors_scalar);
  g_test_add_func ("/sha256/fips-vectors-shani", test_vectors_shani);
  g_test_add_func ("/sha256/implementations-agree", test_implementations_agree);
  g_test_add_func ("/sha256/file", test_file);
  return g_test_run ();
}
