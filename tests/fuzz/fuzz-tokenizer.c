/* fuzz-tokenizer.c — libFuzzer target for the BPE tokenizer and its UTF-8 / pre-tokenizer code.
 *
 * The first input byte picks a mode:
 *   0-3: tokenize the rest with a fixed tiny vocabulary (all 256 byte tokens, merges whose
 *        results are all tokens, ASCII special tokens of every type) under the smollm, gpt-2,
 *        llama3 or default pre-tokenizer, with parse_special off and on, and check:
 *          - every id is inside the vocabulary;
 *          - decoding (special = true) gives back the input with llama.cpp's UTF-8 repair
 *            applied (each invalid byte -> U+FFFD, overlong forms shortened), because every
 *            byte has a token, every merge result is a token and every special text is ASCII;
 *          - sc_token_to_bytes() honours its capacity for every produced id.
 *   4:   build a vocabulary from the input itself (lines: tokens, then merges; hostile on
 *        purpose: duplicates, empty texts, odd types, merges without a space) and tokenize
 *        the input with it; only "no crash, ids in range" is checked.
 *
 * Build and run (from the repository root):
 *   clang -std=c17 -g -O1 -fsanitize=fuzzer,address,undefined -Iengine \
 *     engine/core/sc-error.c engine/text/sc-unicode.c engine/text/sc-unicode-data.c engine/text/sc-tokenizer.c \
 *     engine/text/sc-tokenizer-bpe.c tests/fuzz/fuzz-tokenizer.c -o fuzz-tokenizer
 *   mkdir -p fuzz-corpus/tokenizer && ./fuzz-tokenizer -max_total_time=120 fuzz-corpus/tokenizer
 * (sc-tokenizer-gguf.c is not needed: the GGUF reader has its own target.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/text/sc-tokenizer.h"
#include "engine/text/sc-unicode.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                           \
  do                                                                                          \
    {                                                                                         \
      if (!(cond))                                                                            \
        {                                                                                     \
          fprintf (stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
          abort ();                                                                           \
        }                                                                                     \
    }                                                                                         \
  while (0)

/* Raw merge pairs; each result is also added as a token. */
static const char *const MERGES[][2] = {
  { " ", "t" }, { "h", "e" }, { " t", "he" }, { "a", "a" }, { "aa", "aa" }, { " ", " " },
  { "\n", "\n" }, { "1", "2" }, { "12", "3" }, { "\xe7", "\x8c" }, { "\xe7\x8c", "\xab" },
  { "'", "s" }, { " ", "a" }, { "i", "n" }, { "in", "g" }, { "\xef\xbf", "\xbd" },
  { "\xef", "\xbf" },
};

static const struct {
  const char *text;
  ScTokenType type;
} SPECIALS[] = {
  { "<|im_start|>", SC_TOKEN_CONTROL }, { "<|im_end|>", SC_TOKEN_CONTROL },
  { "<u>", SC_TOKEN_USER_DEFINED },     { "<u>x", SC_TOKEN_USER_DEFINED },
  { "<unk>", SC_TOKEN_UNKNOWN },        { "<0x41>", SC_TOKEN_BYTE },
  { "<unused0>", SC_TOKEN_UNUSED },     { "<|endoftext|>", SC_TOKEN_NORMAL },
};

static const char *const PRES[] = { "smollm", "gpt-2", "llama3", "default" };

/* The stored form of raw bytes: each byte through GPT-2's map, as UTF-8. */
static size_t
store (const char *raw, size_t len, char *out)
{
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += sc_utf8_encode (sc_unicode_byte_to_cpt ((uint8_t) raw[i]), out + n);
  return n;
}

static ScTokenizer *
build_fixed (const char *pre)
{
  enum { N_MERGES = sizeof MERGES / sizeof MERGES[0], N_SPECIALS = sizeof SPECIALS / sizeof SPECIALS[0] };
  enum { N_TOKENS = 256 + N_MERGES + N_SPECIALS };
  static char tok_buf[N_TOKENS][32], merge_buf[N_MERGES][48];
  const char *toks[N_TOKENS], *merges[N_MERGES];
  uint32_t tok_lens[N_TOKENS], merge_lens[N_MERGES];
  int32_t types[N_TOKENS];
  ScTokenizerDesc desc;
  ScTokenizer *tok = NULL;
  ScError err = { 0 };
  uint32_t n = 0;

  for (int b = 0; b < 256; b++, n++)
    {
      char c = (char) b;
      tok_lens[n] = (uint32_t) store (&c, 1, tok_buf[n]);
      types[n] = SC_TOKEN_NORMAL;
    }
  for (size_t m = 0; m < N_MERGES; m++, n++)
    {
      char joined[16];
      size_t ll = strlen (MERGES[m][0]), rl = strlen (MERGES[m][1]);
      memcpy (joined, MERGES[m][0], ll);
      memcpy (joined + ll, MERGES[m][1], rl);
      tok_lens[n] = (uint32_t) store (joined, ll + rl, tok_buf[n]);
      types[n] = SC_TOKEN_NORMAL;
      size_t k = store (MERGES[m][0], ll, merge_buf[m]);
      merge_buf[m][k++] = ' ';
      k += store (MERGES[m][1], rl, merge_buf[m] + k);
      merges[m] = merge_buf[m];
      merge_lens[m] = (uint32_t) k;
    }
  for (size_t s = 0; s < N_SPECIALS; s++, n++)
    {
      tok_lens[n] = (uint32_t) strlen (SPECIALS[s].text);
      memcpy (tok_buf[n], SPECIALS[s].text, tok_lens[n]);
      types[n] = SPECIALS[s].type;
    }
  for (uint32_t i = 0; i < n; i++)
    toks[i] = tok_buf[i];

  sc_tokenizer_desc_init (&desc);
  desc.n_tokens = n;
  desc.tokens = toks;
  desc.token_lens = tok_lens;
  desc.token_types = types;
  desc.n_merges = N_MERGES;
  desc.merges = merges;
  desc.merge_lens = merge_lens;
  desc.pre = pre;
  desc.bos_id = 256 + N_MERGES;
  desc.eos_id = 256 + N_MERGES + 1;
  desc.add_bos = true;
  if (sc_tokenizer_new (&desc, &tok, &err) != SC_OK)
    {
      fprintf (stderr, "fixed vocabulary: %s\n", err.message);
      abort ();
    }
  return tok;
}

/* llama.cpp's repair of arbitrary bytes: decode, re-encode. */
static size_t
normalize (const char *in, size_t len, char *out)
{
  size_t n = 0;
  for (size_t off = 0, used; off < len; off += used)
    n += sc_utf8_encode (sc_utf8_decode (in + off, len - off, &used), out + n);
  return n;
}

static void
check_fixed (const ScTokenizer *tok, const char *text, size_t len)
{
  char *want = malloc (3 * len + 1);
  char *got = NULL;
  CHECK (want != NULL);
  size_t want_len = normalize (text, len, want);

  for (int parse_special = 0; parse_special < 2; parse_special++)
    {
      int32_t *ids = NULL;
      size_t n = 0, got_len = 0, cap = 3 * len + 64;
      ScError err = { 0 };
      CHECK (sc_tokenize (tok, text, len, parse_special, parse_special, &ids, &n, &err) == SC_OK);
      CHECK ((n == 0) == (ids == NULL));
      got = realloc (got, cap);
      CHECK (got != NULL);
      for (size_t i = 0; i < n; i++)
        {
          CHECK (ids[i] >= 0 && (uint32_t) ids[i] < sc_tokenizer_n_vocab (tok));
          if (parse_special && i == 0)
            {
              CHECK (ids[0] == sc_tokenizer_bos (tok)); /* add_special with add_bos */
              continue;
            }
          size_t need = sc_token_to_bytes (tok, ids[i], true, NULL, 0);
          char small[3] = { 'x', 'x', 'x' };
          CHECK (sc_token_to_bytes (tok, ids[i], true, small, 2) == need);
          CHECK (small[2] == 'x');
          CHECK (got_len + need <= cap);
          CHECK (sc_token_to_bytes (tok, ids[i], true, got + got_len, need) == need);
          got_len += need;
        }
      CHECK (got_len == want_len && memcmp (got, want, want_len) == 0);
      free (ids);
    }
  free (got);
  free (want);
}

/* Mode 4: a vocabulary made of the input's lines. */
static void
check_hostile (const uint8_t *data, size_t size)
{
  enum { MAX_LINES = 64 };
  const char *lines[MAX_LINES];
  uint32_t lens[MAX_LINES];
  int32_t types[MAX_LINES];
  size_t n = 0, start = 0;

  if (size < 2)
    return;
  for (size_t i = 1; i <= size && n < MAX_LINES; i++)
    if (i == size || data[i] == '\n')
      {
        lines[n] = (const char *) data + start + 1;
        lens[n] = (uint32_t) (i - start - 1 > 0 ? i - start - 1 : 0);
        types[n] = (int32_t) (data[start] % 8);
        n++;
        start = i;
      }

  ScTokenizerDesc desc;
  ScTokenizer *tok = NULL;
  ScError err = { 0 };
  sc_tokenizer_desc_init (&desc);
  desc.n_tokens = (uint32_t) (n + 1) / 2;
  desc.tokens = lines;
  desc.token_lens = lens;
  desc.token_types = types;
  desc.n_merges = (uint32_t) (n - desc.n_tokens);
  desc.merges = lines + desc.n_tokens;
  desc.merge_lens = lens + desc.n_tokens;
  desc.pre = PRES[data[0] % 4];
  if (sc_tokenizer_new (&desc, &tok, &err) != SC_OK)
    return;

  int32_t *ids = NULL;
  size_t n_ids = 0;
  if (sc_tokenize (tok, (const char *) data, size, true, data[0] & 1, &ids, &n_ids, &err) == SC_OK)
    {
      char buf[16];
      for (size_t i = 0; i < n_ids; i++)
        {
          CHECK (ids[i] >= 0 && (uint32_t) ids[i] < sc_tokenizer_n_vocab (tok));
          (void) sc_token_to_bytes (tok, ids[i], true, buf, sizeof buf);
          (void) sc_tokenizer_is_eog (tok, ids[i]);
        }
      free (ids);
    }
  sc_tokenizer_free (tok);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static ScTokenizer *fixed[4];

  if (size == 0)
    return 0;
  unsigned mode = data[0] % 5;
  if (mode == 4)
    {
      check_hostile (data + 1, size - 1);
      return 0;
    }
  if (fixed[mode] == NULL)
    fixed[mode] = build_fixed (PRES[mode]);
  check_fixed (fixed[mode], (const char *) data + 1, size - 1);
  return 0;
}
