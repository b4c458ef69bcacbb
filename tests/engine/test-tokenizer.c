/* test-tokenizer.c — the byte-level BPE tokenizer against hand-built vocabularies and llama.cpp.
 *
 * Two halves:
 *   - unit tests on tiny vocabularies built here (every byte as a token plus a few merges and
 *     special tokens): UTF-8 recovery, category flags, the pre-tokenizer passes, merge order
 *     and tie-breaking, special-token partitioning, decoding, construction errors;
 *   - the oracle test: the real SmolLM2 GGUF tokenized with the cases in
 *     tests/reference/tokenizer-cases.json, whose ids llama.cpp produced
 *     (tests/reference/gen_tokenizer_fixture.py). Every id must match; decoding must match
 *     llama.cpp's detokenization byte for byte. Skips only when the model file is absent.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "engine/format/sc-gguf.h"
#include "engine/text/sc-tokenizer.h"
#include "engine/text/sc-unicode.h"
#include "tests/engine/sc-test-gguf.h"
#include "tests/engine/sc-test-tokens.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ScTokenizer, sc_tokenizer_free)

/* ---- a tiny vocabulary --------------------------------------------------------------- */

/* The stored (byte-mapped) form of raw bytes, e.g. " a" -> "Ġa". */
static char *
stored (const char *raw, gssize len)
{
  GString *s = g_string_new (NULL);
  if (len < 0)
    len = (gssize) strlen (raw);
  for (gssize i = 0; i < len; i++)
    g_string_append_unichar (s, sc_unicode_byte_to_cpt ((guint8) raw[i]));
  return g_string_free (s, FALSE);
}

typedef struct {
  const char *text; /* raw bytes for NORMAL tokens, stored text for special ones */
  ScTokenType type;
} TinyToken;

/* ids 0..255: the byte tokens; then @extra (NORMAL texts are byte-mapped here); merges are
 * given as raw "left", "right" pairs, NULL-terminated. Returns NULL on error (in @err). */
static ScTokenizer *
tiny_new_full (const char *pre, const TinyToken *extra, guint n_extra,
               const char *const *merge_pairs, ScTokenizerDesc *base, ScError *err)
{
  g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) merges = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) lens = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  g_autoptr (GArray) mlens = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  g_autoptr (GArray) types = g_array_new (FALSE, FALSE, sizeof (int32_t));
  ScTokenizerDesc desc;
  ScTokenizer *tok = NULL;

  if (base != NULL)
    desc = *base;
  else
    sc_tokenizer_desc_init (&desc);
  for (guint b = 0; b < 256; b++)
    {
      char c = (char) b;
      g_ptr_array_add (toks, stored (&c, 1));
      g_array_append_val (types, (int32_t) { SC_TOKEN_NORMAL });
    }
  for (guint i = 0; i < n_extra; i++)
    {
      int32_t t = extra[i].type;
      g_ptr_array_add (toks, t == SC_TOKEN_NORMAL ? stored (extra[i].text, -1)
                                                  : g_strdup (extra[i].text));
      g_array_append_val (types, t);
    }
  for (guint i = 0; i < toks->len; i++)
    g_array_append_val (lens, (uint32_t) { (uint32_t) strlen (toks->pdata[i]) });
  for (guint i = 0; merge_pairs != NULL && merge_pairs[i] != NULL; i += 2)
    {
      g_autofree char *l = stored (merge_pairs[i], -1);
      g_autofree char *r = stored (merge_pairs[i + 1], -1);
      char *m = g_strconcat (l, " ", r, NULL);
      g_ptr_array_add (merges, m);
      g_array_append_val (mlens, (uint32_t) { (uint32_t) strlen (m) });
    }

  desc.n_tokens = toks->len;
  desc.tokens = (const char *const *) toks->pdata;
  desc.token_lens = (const uint32_t *) lens->data;
  desc.token_types = (const int32_t *) types->data;
  desc.n_merges = merges->len;
  desc.merges = (const char *const *) merges->pdata;
  desc.merge_lens = (const uint32_t *) mlens->data;
  desc.pre = pre;
  if (sc_tokenizer_new (&desc, &tok, err) != SC_OK)
    return NULL;
  return tok;
}

static ScTokenizer *
tiny_new (const char *pre, const TinyToken *extra, guint n_extra, const char *const *merge_pairs)
{
  ScError err = { 0 };
  ScTokenizer *tok = tiny_new_full (pre, extra, n_extra, merge_pairs, NULL, &err);
  if (tok == NULL)
    g_error ("tiny tokenizer: %s", err.message);
  return tok;
}

/* Tokenizes @text and compares with the -1-terminated @want. */
static void
assert_ids_len (const ScTokenizer *tok, const char *text, gsize len, bool add_special,
                bool parse_special, const int32_t *want)
{
  int32_t *ids = NULL;
  size_t n = 0, n_want = 0;
  ScError err = { 0 };

  g_assert_cmpint (sc_tokenize (tok, text, len, add_special, parse_special, &ids, &n, &err), ==,
                   SC_OK);
  while (want[n_want] >= 0)
    n_want++;
  if (n != n_want || (n > 0 && memcmp (ids, want, n * sizeof *ids) != 0))
    {
      GString *s = g_string_new (NULL);
      for (size_t i = 0; i < n; i++)
        g_string_append_printf (s, " %d", ids[i]);
      g_error ("tokenizing \"%s\": got [%s ] (%zu ids), want %zu ids", text, s->str, n, n_want);
    }
  free (ids);
}

static void
assert_ids (const ScTokenizer *tok, const char *text, bool parse_special, const int32_t *want)
{
  assert_ids_len (tok, text, strlen (text), false, parse_special, want);
}

#define IDS(...) ((const int32_t[]) { __VA_ARGS__, -1 })
#define NO_IDS ((const int32_t[]) { -1 })

/* ---- unicode ------------------------------------------------------------------------- */

static void
test_byte_map (void)
{
  guint n_moved = 0;
  for (guint b = 0; b < 256; b++)
    {
      uint32_t cpt = sc_unicode_byte_to_cpt ((uint8_t) b);
      g_assert_cmpint (sc_unicode_cpt_to_byte (cpt), ==, (int) b);
      n_moved += cpt != b;
    }
  g_assert_cmpuint (n_moved, ==, 68);
  g_assert_cmpuint (sc_unicode_byte_to_cpt (0x00), ==, 0x100);
  g_assert_cmpuint (sc_unicode_byte_to_cpt (' '), ==, 0x120);  /* 'Ġ' */
  g_assert_cmpuint (sc_unicode_byte_to_cpt ('\n'), ==, 0x10A); /* 'Ċ' */
  g_assert_cmpuint (sc_unicode_byte_to_cpt (0x7F), ==, 0x121);
  g_assert_cmpuint (sc_unicode_byte_to_cpt (0xA0), ==, 0x142);
  g_assert_cmpuint (sc_unicode_byte_to_cpt (0xAD), ==, 0x143); /* 'Ń' */
  g_assert_cmpuint (sc_unicode_byte_to_cpt ('!'), ==, '!');
  g_assert_cmpint (sc_unicode_cpt_to_byte (0x144), ==, -1);
  g_assert_cmpint (sc_unicode_cpt_to_byte (0x20), ==, -1);
}

static void
test_utf8 (void)
{
  static const struct {
    const char *bytes;
    size_t len;
    uint32_t cpt;
    size_t used;
  } cases[] = {
    { "a", 1, 'a', 1 },
    { "\xc3\xa9", 2, 0xE9, 2 },
    { "\xe7\x8c\xab", 3, 0x732B, 3 },
    { "\xf0\x9f\xa6\x99", 4, 0x1F999, 4 },
    { "\x80", 1, 0xFFFD, 1 },           /* stray continuation byte */
    { "\xc3", 1, 0xFFFD, 1 },           /* truncated */
    { "\xe4\xb8", 2, 0xFFFD, 1 },       /* truncated: only the lead byte is consumed */
    { "\xe4" "a" "\xb8", 3, 0xFFFD, 1 }, /* interrupted */
    { "\xc0\x80", 2, 0, 2 },            /* overlong NUL is accepted as NUL (llama.cpp) */
    { "\xed\xa0\x80", 3, 0xD800, 3 },   /* surrogates are accepted */
    { "\xf4\x8f\xbf\xbf", 4, 0x10FFFF, 4 },
    { "\xf4\x90\x80\x80", 4, 0xFFFD, 1 }, /* above U+10FFFF: llama.cpp aborts, we refuse */
    { "\xf7\xbf\xbf\xbf", 4, 0xFFFD, 1 },
    { "\xf8\x88\x80\x80\x80", 5, 0xFFFD, 1 },
    { "\xff", 1, 0xFFFD, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      size_t used = 0;
      g_assert_cmphex (sc_utf8_decode (cases[i].bytes, cases[i].len, &used), ==, cases[i].cpt);
      g_assert_cmpuint (used, ==, cases[i].used);
      if (cases[i].cpt != 0xFFFD && cases[i].cpt != 0)
        {
          char out[4];
          g_assert_cmpuint (sc_utf8_encode (cases[i].cpt, out), ==, cases[i].used);
          g_assert_cmpmem (out, cases[i].used, cases[i].bytes, cases[i].used);
        }
    }
  g_assert_cmpuint (sc_utf8_seq_len (0x41), ==, 1);
  g_assert_cmpuint (sc_utf8_seq_len (0x80), ==, 1);
  g_assert_cmpuint (sc_utf8_seq_len (0xC3), ==, 2);
  g_assert_cmpuint (sc_utf8_seq_len (0xE7), ==, 3);
  g_assert_cmpuint (sc_utf8_seq_len (0xF0), ==, 4);
}

static void
test_flags (void)
{
  g_assert_cmphex (sc_unicode_flags ('a'), ==, SC_UNICODE_LETTER);
  g_assert_cmphex (sc_unicode_flags ('7'), ==, SC_UNICODE_NUMBER);
  g_assert_cmphex (sc_unicode_flags ('!'), ==, SC_UNICODE_PUNCTUATION);
  g_assert_cmphex (sc_unicode_flags ('$'), ==, SC_UNICODE_SYMBOL);
  g_assert_cmphex (sc_unicode_flags (' '), ==, SC_UNICODE_SEPARATOR | SC_UNICODE_WHITESPACE);
  g_assert_cmphex (sc_unicode_flags ('\n'), ==, SC_UNICODE_CONTROL | SC_UNICODE_WHITESPACE);
  g_assert_cmphex (sc_unicode_flags (0x1C), ==, SC_UNICODE_CONTROL); /* not \s for llama.cpp */
  g_assert_cmphex (sc_unicode_flags (0x85), ==, SC_UNICODE_CONTROL | SC_UNICODE_WHITESPACE);
  g_assert_cmphex (sc_unicode_flags (0xA0), ==, SC_UNICODE_SEPARATOR | SC_UNICODE_WHITESPACE);
  g_assert_cmphex (sc_unicode_flags (0x3000), ==, SC_UNICODE_SEPARATOR | SC_UNICODE_WHITESPACE);
  g_assert_cmphex (sc_unicode_flags (0x200B), ==, SC_UNICODE_CONTROL); /* zero width space: Cf */
  g_assert_cmphex (sc_unicode_flags (0xBD), ==, SC_UNICODE_NUMBER);    /* ½ */
  g_assert_cmphex (sc_unicode_flags (0x0301), ==, SC_UNICODE_ACCENT_MARK);
  g_assert_cmphex (sc_unicode_flags (0x732B), ==, SC_UNICODE_LETTER);  /* 猫 */
  g_assert_cmphex (sc_unicode_flags (0x1F999), ==, SC_UNICODE_SYMBOL); /* 🦙 */
  g_assert_cmphex (sc_unicode_flags (0x0378), ==, SC_UNICODE_UNDEFINED);
  g_assert_cmphex (sc_unicode_flags (0xE000), ==, SC_UNICODE_CONTROL); /* private use */
  g_assert_cmphex (sc_unicode_flags (0x2FFC), ==, SC_UNICODE_SYMBOL);  /* new in Unicode 15.1 */
  g_assert_cmphex (sc_unicode_flags (0x10FFFF), ==, SC_UNICODE_UNDEFINED);
  g_assert_cmphex (sc_unicode_flags (0x110000), ==, SC_UNICODE_UNDEFINED);
  g_assert_cmphex (sc_unicode_flags (0xFFFFFFFFu), ==, SC_UNICODE_UNDEFINED);

  /* the table is sorted, starts at 0, and every assigned code point has one category bit */
  g_assert_cmpuint (sc_unicode_ranges[0].start, ==, 0);
  for (size_t i = 1; i < sc_unicode_n_ranges; i++)
    {
      uint16_t cat = sc_unicode_ranges[i].flags & 0xFF;
      g_assert_cmpuint (sc_unicode_ranges[i].start, >, sc_unicode_ranges[i - 1].start);
      g_assert_true (cat != 0 && (cat & (cat - 1)) == 0);
    }
}

/* Splits UTF-8 @text with @passes and compares the pieces with the NULL-terminated @want. */
static void
assert_pieces (const ScSplitPass *passes, guint n_passes, const char *text, const char *const *want)
{
  size_t len = strlen (text), n_cpts = 0, n_seg = 1;
  g_autofree uint32_t *cpts = g_new (uint32_t, len + 1);
  g_autofree size_t *a = g_new (size_t, len + 1);
  g_autofree size_t *b = g_new (size_t, len + 1);

  for (size_t off = 0, used; off < len; off += used)
    cpts[n_cpts++] = sc_utf8_decode (text + off, len - off, &used);
  a[0] = n_cpts;
  for (guint p = 0; p < n_passes; p++)
    {
      n_seg = sc_unicode_split (passes[p], cpts, n_cpts, a, n_seg, b);
      memcpy (a, b, n_seg * sizeof *a);
    }
  g_autoptr (GString) got = g_string_new (NULL);
  for (size_t i = 0, pos = 0; i < n_seg; pos += a[i++])
    {
      g_string_append (got, "|");
      for (size_t k = pos; k < pos + a[i]; k++)
        g_string_append_unichar (got, cpts[k]);
    }
  g_autoptr (GString) exp = g_string_new (NULL);
  for (guint i = 0; want[i] != NULL; i++)
    g_string_append_printf (exp, "|%s", want[i]);
  g_assert_cmpstr (got->str, ==, exp->str);
}

#define PIECES(...) ((const char *const[]) { __VA_ARGS__, NULL })

static void
test_split (void)
{
  static const ScSplitPass gpt2[] = { SC_SPLIT_GPT2 };
  static const ScSplitPass smollm[] = { SC_SPLIT_EACH_NUMBER, SC_SPLIT_GPT2 };
  static const ScSplitPass llama3[] = { SC_SPLIT_LLAMA3 };
  static const ScSplitPass deflt[] = { SC_SPLIT_PUNCT_RUNS, SC_SPLIT_GPT2, SC_SPLIT_NUMBER_RUNS,
                                       SC_SPLIT_ASCII_DIGIT_TRIPLES };

  assert_pieces (gpt2, 1, "Hello world! 123", PIECES ("Hello", " world", "!", " 123"));
  assert_pieces (smollm, 2, "Hello world! 123", PIECES ("Hello", " world", "!", " ", "1", "2", "3"));
  assert_pieces (gpt2, 1, "a  b   c", PIECES ("a", " ", " b", "  ", " c"));
  assert_pieces (gpt2, 1, "x \n\n", PIECES ("x", " \n\n"));
  assert_pieces (gpt2, 1, "it's DON'T 'll", PIECES ("it", "'s", " DON", "'", "T", " '", "ll"));
  assert_pieces (gpt2, 1, "?!?! ..", PIECES ("?!?!", " .."));
  assert_pieces (smollm, 2, "½x", PIECES ("½", "x"));
  assert_pieces (llama3, 1, "12345 abc", PIECES ("123", "45", " abc"));
  assert_pieces (llama3, 1, "DON'T you'RE", PIECES ("DON", "'T", " you", "'RE"));
  assert_pieces (llama3, 1, "a \r\n\r\nb", PIECES ("a", " \r\n\r\n", "b"));
  assert_pieces (llama3, 1, "x...\n\ny", PIECES ("x", "...\n\n", "y"));
  assert_pieces (llama3, 1, "(hi)", PIECES ("(hi", ")"));
  assert_pieces (deflt, 4, "a+b 12345!", PIECES ("a", "+", "b", " ", "123", "45", "!"));
  assert_pieces (deflt, 4, "`x`", PIECES ("`", "x", "`"));
  /* U+00A0 is whitespace but only ' ' may lead a word; U+200B is not whitespace */
  assert_pieces (gpt2, 1, "a\u00a0\u00a0b", PIECES ("a", "\u00a0", "\u00a0", "b"));
  assert_pieces (gpt2, 1, "a\u200bb", PIECES ("a", "\u200b", "b"));
}

/* ---- BPE ----------------------------------------------------------------------------- */

#define BYTE_ID(c) ((int32_t) (unsigned char) (c))

static void
test_merge_order (void)
{
  static const TinyToken extra[] = { { "ab", SC_TOKEN_NORMAL }, { "bc", SC_TOKEN_NORMAL } };
  /* 256: "ab", 257: "bc". Rank decides which pair of "abc" merges. */
  g_autoptr (ScTokenizer) bc_first = tiny_new ("gpt-2", extra, 2, PIECES ("b", "c", "a", "b"));
  g_autoptr (ScTokenizer) ab_first = tiny_new ("gpt-2", extra, 2, PIECES ("a", "b", "b", "c"));

  assert_ids (bc_first, "abc", false, IDS (BYTE_ID ('a'), 257));
  assert_ids (ab_first, "abc", false, IDS (256, BYTE_ID ('c')));
  /* a merge whose result is not a token falls back to the result's bytes */
  static const TinyToken none[] = { { "zz", SC_TOKEN_NORMAL } };
  g_autoptr (ScTokenizer) fallback = tiny_new ("gpt-2", none, 1, PIECES ("x", "y"));
  assert_ids (fallback, "xy", false, IDS (BYTE_ID ('x'), BYTE_ID ('y')));
}

static void
test_ties (void)
{
  static const TinyToken extra[] = { { "aa", SC_TOKEN_NORMAL }, { "aaaa", SC_TOKEN_NORMAL } };
  g_autoptr (ScTokenizer) tok = tiny_new ("gpt-2", extra, 2, PIECES ("a", "a", "aa", "aa"));

  /* equal ranks: the leftmost pair merges first */
  assert_ids (tok, "aaa", false, IDS (256, BYTE_ID ('a')));
  assert_ids (tok, "aaaa", false, IDS (257));
  assert_ids (tok, "aaaaa", false, IDS (257, BYTE_ID ('a')));
  assert_ids (tok, "aaaaaa", false, IDS (257, 256));
}

static void
test_ignore_merges (void)
{
  static const TinyToken extra[] = { { "abc", SC_TOKEN_NORMAL } };
  g_autoptr (ScTokenizer) llama3 = tiny_new ("llama3", extra, 1, NULL);
  g_autoptr (ScTokenizer) gpt2 = tiny_new ("gpt-2", extra, 1, NULL);

  assert_ids (llama3, "abc", false, IDS (256));
  assert_ids (gpt2, "abc", false, IDS (BYTE_ID ('a'), BYTE_ID ('b'), BYTE_ID ('c')));
}

static void
test_special (void)
{
  static const TinyToken extra[] = {
    { "<|c|>", SC_TOKEN_CONTROL },     /* 256 */
    { "<u>", SC_TOKEN_USER_DEFINED },  /* 257 */
    { "<u>x", SC_TOKEN_USER_DEFINED }, /* 258: longer, so it wins over "<u>" */
    { "<?>", SC_TOKEN_UNKNOWN },       /* 259 */
    { "<|im_end|>", SC_TOKEN_NORMAL }, /* 260: made CONTROL and end-of-generation */
  };
  g_autoptr (ScTokenizer) tok = tiny_new ("gpt-2", extra, G_N_ELEMENTS (extra), NULL);

  assert_ids (tok, "<|c|>", true, IDS (256));
  assert_ids (tok, "a<|c|>b", true, IDS (BYTE_ID ('a'), 256, BYTE_ID ('b')));
  assert_ids (tok, "<|c|><|c|>", true, IDS (256, 256));
  assert_ids (tok, "<|c|>", false,
              IDS (BYTE_ID ('<'), BYTE_ID ('|'), BYTE_ID ('c'), BYTE_ID ('|'), BYTE_ID ('>')));
  /* USER_DEFINED tokens are matched even without parse_special; longest first */
  assert_ids (tok, "<u>", false, IDS (257));
  assert_ids (tok, "<u>x<u>", false, IDS (258, 257));
  assert_ids (tok, "<?>", true, IDS (259));
  assert_ids (tok, "<?>", false, IDS (BYTE_ID ('<'), BYTE_ID ('?'), BYTE_ID ('>')));
  /* partial texts stay ordinary text */
  assert_ids (tok, "<|c|", true, IDS (BYTE_ID ('<'), BYTE_ID ('|'), BYTE_ID ('c'), BYTE_ID ('|')));

  g_assert_cmpint (sc_tokenizer_token_type (tok, 260), ==, SC_TOKEN_CONTROL);
  g_assert_true (sc_tokenizer_is_eog (tok, 260));
  g_assert_false (sc_tokenizer_is_eog (tok, 256));
  assert_ids (tok, "<|im_end|>", true, IDS (260));
}

static void
test_invalid_and_empty (void)
{
  ScTokenizerDesc base;
  ScError err = { 0 };
  static const TinyToken extra[] = { { "<s>", SC_TOKEN_CONTROL }, { "</s>", SC_TOKEN_CONTROL } };

  sc_tokenizer_desc_init (&base);
  base.bos_id = 256;
  base.eos_id = 257;
  base.add_bos = true;
  g_autoptr (ScTokenizer) tok = tiny_new_full ("smollm", extra, 2, NULL, &base, &err);
  g_assert_nonnull (tok);

  /* every invalid byte becomes U+FFFD, i.e. the bytes EF BF BD */
  assert_ids_len (tok, "\xff", 1, false, false, IDS (0xEF, 0xBF, 0xBD));
  assert_ids_len (tok, "a\x80", 2, false, false, IDS (BYTE_ID ('a'), 0xEF, 0xBF, 0xBD));
  assert_ids_len (tok, "\xe4\xb8", 2, false, false, IDS (0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD));
  /* an overlong NUL is a NUL; a NUL is an ordinary byte */
  assert_ids_len (tok, "\xc0\x80", 2, false, false, IDS (0));
  assert_ids_len (tok, "a\0b", 3, false, false, IDS (BYTE_ID ('a'), 0, BYTE_ID ('b')));
  /* above U+10FFFF (llama.cpp aborts): four invalid bytes */
  assert_ids_len (tok, "\xf5\x80\x80\x80", 4, false, false,
                  IDS (0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD));

  /* empty input: nothing, or just BOS with add_special */
  assert_ids_len (tok, "", 0, false, true, NO_IDS);
  assert_ids_len (tok, NULL, 0, true, true, IDS (256));
  assert_ids_len (tok, "x", 1, true, true, IDS (256, BYTE_ID ('x')));

  int32_t *ids = (int32_t *) 1;
  size_t n = 99;
  g_assert_cmpint (sc_tokenize (tok, "", 0, false, false, &ids, &n, &err), ==, SC_OK);
  g_assert_null (ids);
  g_assert_cmpuint (n, ==, 0);
  g_assert_cmpint (sc_tokenize (tok, NULL, 3, false, false, &ids, &n, &err), ==,
                   SC_ERR_INVALID_ARG);
}

static void
test_decode (void)
{
  static const TinyToken extra[] = {
    { " the", SC_TOKEN_NORMAL },     /* 256 */
    { "<c>", SC_TOKEN_CONTROL },     /* 257 */
    { "<u>", SC_TOKEN_USER_DEFINED }, /* 258 */
    { "<0x41>", SC_TOKEN_BYTE },     /* 259 */
    { "<unused>", SC_TOKEN_UNUSED }, /* 260 */
  };
  static const char *const texts[] = {
    "Hello, the world!", " the the", "猫追球，它累了", "🦙 + \t\n\r\n", "a\0b", "Café déjà vu.",
  };
  g_autoptr (ScTokenizer) tok = tiny_new ("smollm", extra, G_N_ELEMENTS (extra),
                                          PIECES (" ", "t", " t", "h", " th", "e"));
  char buf[64];

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      size_t len = i == 4 ? 3 : strlen (texts[i]), n = 0;
      int32_t *ids = NULL;
      ScError err = { 0 };
      g_autoptr (GString) out = g_string_new (NULL);
      g_assert_cmpint (sc_tokenize (tok, texts[i], len, false, false, &ids, &n, &err), ==, SC_OK);
      for (size_t k = 0; k < n; k++)
        {
          size_t m = sc_token_to_bytes (tok, ids[k], false, buf, sizeof buf);
          g_assert_cmpuint (m, <=, sizeof buf);
          g_string_append_len (out, buf, (gssize) m);
        }
      g_assert_cmpmem (out->str, out->len, texts[i], len);
      free (ids);
    }
  assert_ids (tok, " the", false, IDS (256));

  g_assert_cmpuint (sc_token_to_bytes (tok, 256, false, buf, sizeof buf), ==, 4);
  g_assert_cmpmem (buf, 4, " the", 4);
  /* short buffer: the full size is returned, only @cap bytes are written */
  memset (buf, '#', sizeof buf);
  g_assert_cmpuint (sc_token_to_bytes (tok, 256, false, buf, 2), ==, 4);
  g_assert_cmpmem (buf, 3, " t#", 3);
  g_assert_cmpuint (sc_token_to_bytes (tok, 256, false, NULL, 0), ==, 4);
  /* control: only with special; user-defined: always; byte: its value; unused: nothing */
  g_assert_cmpuint (sc_token_to_bytes (tok, 257, false, buf, sizeof buf), ==, 0);
  g_assert_cmpuint (sc_token_to_bytes (tok, 257, true, buf, sizeof buf), ==, 3);
  g_assert_cmpmem (buf, 3, "<c>", 3);
  g_assert_cmpuint (sc_token_to_bytes (tok, 258, false, buf, sizeof buf), ==, 3);
  g_assert_cmpuint (sc_token_to_bytes (tok, 259, false, buf, sizeof buf), ==, 1);
  g_assert_cmpint (buf[0], ==, 'A');
  g_assert_cmpuint (sc_token_to_bytes (tok, 260, true, buf, sizeof buf), ==, 0);
  g_assert_cmpuint (sc_token_to_bytes (tok, -1, true, buf, sizeof buf), ==, 0);
  g_assert_cmpuint (sc_token_to_bytes (tok, 261, true, buf, sizeof buf), ==, 0);

  size_t len = 0;
  const char *text = sc_tokenizer_token_text (tok, 256, &len);
  g_assert_cmpmem (text, len, "\xc4\xa0the", 5); /* "Ġthe" */
  g_assert_cmpint (sc_tokenizer_find (tok, text, len), ==, 256);
  g_assert_null (sc_tokenizer_token_text (tok, 9999, &len));
  g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, 261);
}

static void
test_errors (void)
{
  static const TinyToken dup[] = { { "a", SC_TOKEN_NORMAL } };
  ScTokenizerDesc base;
  ScError err = { 0 };

  g_assert_null (tiny_new_full ("klingon", NULL, 0, NULL, NULL, &err));
  g_assert_cmpint (err.status, ==, SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "klingon"));

  g_assert_null (tiny_new_full ("gpt-2", dup, 1, NULL, NULL, &err));
  g_assert_cmpint (err.status, ==, SC_ERR_FORMAT);

  sc_tokenizer_desc_init (&base);
  base.add_bos = true;
  g_assert_null (tiny_new_full ("gpt-2", NULL, 0, NULL, &base, &err));
  g_assert_cmpint (err.status, ==, SC_ERR_INVALID_ARG);

  sc_tokenizer_desc_init (&base);
  base.eos_id = 256;
  g_assert_null (tiny_new_full ("gpt-2", NULL, 0, NULL, &base, &err));
  g_assert_cmpint (err.status, ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "EOS"));

  /* missing / empty pre-tokenizer means "default" */
  g_autoptr (ScTokenizer) tok = tiny_new_full (NULL, NULL, 0, NULL, NULL, &err);
  g_assert_nonnull (tok);
  g_assert_cmpstr (sc_tokenizer_pre (tok), ==, "default");

  ScTokenizer *none = (ScTokenizer *) 1;
  g_assert_cmpint (sc_tokenizer_new (NULL, &none, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_true (none == (ScTokenizer *) 1);
  sc_tokenizer_free (NULL);
}

static void
test_gguf (void)
{
  g_autoptr (GBytes) b = sc_test_gguf_tiny_llama (1, "llama", NULL);
  gsize size;
  const void *data = g_bytes_get_data (b, &size);
  ScGguf *g = NULL;
  ScTokenizer *tok = NULL;
  ScError err = { 0 };

  g_assert_cmpint (sc_gguf_open_memory (data, size, &g, &err), ==, SC_OK);
  g_assert_cmpint (sc_tokenizer_new_from_gguf (g, &tok, &err), ==, SC_OK);
  sc_gguf_close (g);
  g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, 256 + 8 + 2);
  g_assert_cmpstr (sc_tokenizer_pre (tok), ==, "smollm");
  g_assert_cmpint (sc_tokenizer_bos (tok), ==, 264);
  g_assert_cmpint (sc_tokenizer_eos (tok), ==, 265);
  g_assert_false (sc_tokenizer_adds_bos (tok));
  g_assert_true (sc_tokenizer_is_eog (tok, 265));
  assert_ids (tok, "<s>", true, IDS (264));
  sc_tokenizer_free (tok);

  /* a Unigram (T5) vocabulary is refused by name; a SentencePiece-style one ("llama") is
   * read with llama.cpp's SPM defaults (test-gemma3.c tests how it tokenizes) */
  static const char *const toks[] = { "<unk>", "a" };
  static const char *const models[] = { "t5", "llama" };
  for (int k = 0; k < 2; k++)
    {
      ScTestGguf *w = sc_test_gguf_new (3);
      sc_test_gguf_add_str (w, "tokenizer.ggml.model", models[k]);
      sc_test_gguf_add_str_array (w, "tokenizer.ggml.tokens", toks, NULL, 2);
      g_autoptr (GBytes) b2 = sc_test_gguf_build (w, NULL);
      sc_test_gguf_free (w);
      data = g_bytes_get_data (b2, &size);
      g_assert_cmpint (sc_gguf_open_memory (data, size, &g, &err), ==, SC_OK);
      if (k == 0)
        {
          g_assert_cmpint (sc_tokenizer_new_from_gguf (g, &tok, &err), ==, SC_ERR_UNSUPPORTED);
          g_assert_nonnull (strstr (err.message, "'t5'"));
        }
      else
        {
          g_assert_cmpint (sc_tokenizer_new_from_gguf (g, &tok, &err), ==, SC_OK);
          g_assert_cmpint (sc_tokenizer_bos (tok), ==, 1); /* llama.cpp's SPM default */
          g_assert_cmpint (sc_tokenizer_eos (tok), ==, -1); /* 2 is past this vocabulary */
          g_assert_true (sc_tokenizer_adds_bos (tok));
          /* the space prefix "▁" is no token here: its three bytes have no <0xNN> token
           * either and fall back to <unk> (0) */
          assert_ids (tok, "a", true, IDS (0, 0, 0, 1));
          sc_tokenizer_free (tok);
        }
      sc_gguf_close (g);
    }
}

/* ---- the llama.cpp oracle ------------------------------------------------------------ */

static void
test_oracle (void)
{
  const char *env_model = g_getenv ("SACCADE_MODEL");
  g_autofree char *model
      = env_model != NULL ? g_strdup (env_model)
                          : sc_test_source_path ("data/models/SmolLM2-135M-Instruct.Q4_1.gguf");
  g_autofree char *fixture = sc_test_source_path ("tests/reference/tokenizer-cases.json");
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  ScGguf *g = NULL;
  ScTokenizer *tok = NULL;
  ScError err = { 0 };

  if (!g_file_test (model, G_FILE_TEST_EXISTS))
    {
      g_test_skip_printf ("model %s not found (run data/fetch-model.sh or set SACCADE_MODEL)", model);
      return;
    }
  if (!json_parser_load_from_file (parser, fixture, &error))
    g_error ("cannot read the oracle fixture %s: %s", fixture, error->message);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));

  /* the ids belong to one model file: a different one is not this test's business */
  g_autoptr (GMappedFile) map = g_mapped_file_new (model, FALSE, &error);
  g_assert_no_error (error);
  g_autofree char *sha = g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                                      (const guchar *) g_mapped_file_get_contents (map),
                                                      g_mapped_file_get_length (map));
  if (g_strcmp0 (sha, json_object_get_string_member (root, "model_sha256")) != 0)
    {
      g_test_skip_printf ("%s is not the model the fixture was made with (sha256 %s)", model, sha);
      return;
    }

  gint64 t0 = g_get_monotonic_time ();
  g_assert_cmpint (sc_gguf_open (model, &g, &err), ==, SC_OK);
  gint64 t1 = g_get_monotonic_time ();
  if (sc_tokenizer_new_from_gguf (g, &tok, &err) != SC_OK)
    g_error ("tokenizer from %s: %s", model, err.message);
  gint64 t2 = g_get_monotonic_time ();
  g_test_message ("gguf open %.1f ms, tokenizer construction %.1f ms", (t1 - t0) / 1e3,
                  (t2 - t1) / 1e3);

  JsonObject *vocab = json_object_get_object_member (root, "vocab");
  g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, json_object_get_int_member (vocab, "n_vocab"));
  g_assert_cmpint (sc_tokenizer_bos (tok), ==, json_object_get_int_member (vocab, "llama_bos_id"));
  g_assert_cmpint (sc_tokenizer_eos (tok), ==, json_object_get_int_member (vocab, "llama_eos_id"));
  /* llama.cpp's EOG set for SmolLM2: <|endoftext|>, <|im_end|> and "<reponame>" (FIM repo) */
  for (int32_t id = 0; id < 20; id++)
    g_assert_cmpint (sc_tokenizer_is_eog (tok, id), ==, id == 0 || id == 2 || id == 4);

  JsonArray *cases = json_object_get_array_member (root, "cases");
  guint n_cases = json_array_get_length (cases), n_bad = 0, n_bad_decode = 0, n_roundtrip = 0;
  guint n_long_piece = 0;
  gsize total_bytes = 0, total_ids = 0;
  gint64 t_tok = 0;
  g_assert_cmpuint (n_cases, ==, json_object_get_int_member (root, "n_cases"));

  for (guint c = 0; c < n_cases; c++)
    {
      JsonObject *cs = json_array_get_object_element (cases, c);
      const char *name = json_object_get_string_member (cs, "name");
      gboolean parse_special = json_object_get_boolean_member (cs, "parse_special");
      g_autoptr (GBytes) text =
        sc_test_hex_to_bytes (json_object_get_string_member (cs, "text_hex"));
      JsonArray *want_arr = json_object_get_array_member (cs, "ids");
      guint n_want = json_array_get_length (want_arr);
      g_autofree int32_t *want = g_new (int32_t, n_want + 1);
      for (guint i = 0; i < n_want; i++)
        want[i] = (int32_t) json_array_get_int_element (want_arr, i);

      gsize len;
      const char *data = g_bytes_get_data (text, &len);
      int32_t *ids = NULL;
      size_t n = 0;
      gint64 ts = g_get_monotonic_time ();
      g_assert_cmpint (sc_tokenize (tok, data, len, false, parse_special, &ids, &n, &err), ==, SC_OK);
      t_tok += g_get_monotonic_time () - ts;
      total_bytes += len;
      total_ids += n;

      if (n != n_want || (n > 0 && memcmp (ids, want, n * sizeof *ids) != 0))
        {
          if (n_bad++ < 10)
            {
              g_autofree char *got_s = sc_test_ids_to_string (ids, n);
              g_autofree char *want_s = sc_test_ids_to_string (want, n_want);
              g_autofree char *shown = g_strescape (json_object_get_string_member_with_default (
                                                      cs, "text", "(invalid UTF-8)"), NULL);
              g_test_message ("MISMATCH %s (parse_special=%d) \"%.200s\"\n  llama.cpp: %s\n  "
                              "saccade:   %s", name, parse_special, shown, want_s, got_s);
            }
        }
      else
        {
          /* decode oracle: llama.cpp's detokenize(ids, special=true), byte for byte. The
           * fixture went through llama-cpp-python's Llama.detokenize, which reads each piece
           * into a 32-byte buffer and loses longer ones (e.g. a run of 64 spaces): such
           * cases are checked by the round trip below only. */
          g_autoptr (GBytes) dec = sc_test_decode_all (tok, ids, n, true);
          g_autoptr (GBytes) want_dec =
            sc_test_hex_to_bytes (json_object_get_string_member (cs, "decoded_hex"));
          gboolean long_piece = FALSE;
          for (size_t i = 0; i < n; i++)
            long_piece |= sc_token_to_bytes (tok, ids[i], true, NULL, 0) > 32;
          if (long_piece)
            n_long_piece++;
          else if (!g_bytes_equal (dec, want_dec) && n_bad_decode++ < 10)
            g_test_message ("DECODE MISMATCH %s", name);
          /* valid text without special tokens decodes back to itself */
          if (!parse_special && sc_test_is_valid_utf8 (text))
            {
              g_autoptr (GBytes) plain = sc_test_decode_all (tok, ids, n, false);
              if (!g_bytes_equal (plain, text) && n_bad_decode++ < 10)
                g_test_message ("ROUND TRIP MISMATCH %s", name);
              n_roundtrip++;
            }
        }
      for (size_t i = 0; i < n; i++)
        g_assert_cmpuint ((uint32_t) ids[i], <, sc_tokenizer_n_vocab (tok));
      free (ids);
    }
  g_test_message ("%u cases (%u round trips, %u with pieces over 32 bytes): %u id mismatches, "
                  "%u decode mismatches; %zu bytes -> %zu ids in %.2f ms", n_cases, n_roundtrip,
                  n_long_piece, n_bad, n_bad_decode, total_bytes, total_ids, t_tok / 1e3);

  /* inputs on which llama.cpp itself aborts (4-byte forms above U+10FFFF): we must not, and
   * each of their bytes becomes U+FFFD (GLib's repair does the same for these inputs) */
  JsonArray *crash = json_object_has_member (root, "llama_cpp_crash_cases")
                       ? json_object_get_array_member (root, "llama_cpp_crash_cases") : NULL;
  for (guint c = 0; crash != NULL && c < json_array_get_length (crash); c++)
    {
      JsonObject *cs = json_array_get_object_element (crash, c);
      g_autoptr (GBytes) text =
        sc_test_hex_to_bytes (json_object_get_string_member (cs, "text_hex"));
      gsize len;
      const char *data = g_bytes_get_data (text, &len);
      int32_t *ids = NULL;
      size_t n = 0;
      g_assert_cmpint (sc_tokenize (tok, data, len, false, false, &ids, &n, &err), ==, SC_OK);
      g_autoptr (GBytes) dec = sc_test_decode_all (tok, ids, n, false);
      g_autofree char *repaired = g_utf8_make_valid (data, (gssize) len);
      gsize dec_len;
      const char *dec_data = g_bytes_get_data (dec, &dec_len);
      g_assert_cmpmem (dec_data, dec_len, repaired, strlen (repaired));
      free (ids);
    }

  sc_tokenizer_free (tok);
  sc_gguf_close (g);
  if (n_bad > 0 || n_bad_decode > 0)
    g_error ("%u of %u cases differ from llama.cpp (%u decode differences); see the messages above",
             n_bad, n_cases, n_bad_decode);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tokenizer/unicode/byte-map", test_byte_map);
  g_test_add_func ("/tokenizer/unicode/utf8", test_utf8);
  g_test_add_func ("/tokenizer/unicode/flags", test_flags);
  g_test_add_func ("/tokenizer/unicode/split", test_split);
  g_test_add_func ("/tokenizer/bpe/merge-order", test_merge_order);
  g_test_add_func ("/tokenizer/bpe/ties", test_ties);
  g_test_add_func ("/tokenizer/bpe/ignore-merges", test_ignore_merges);
  g_test_add_func ("/tokenizer/special", test_special);
  g_test_add_func ("/tokenizer/invalid-and-empty", test_invalid_and_empty);
  g_test_add_func ("/tokenizer/decode", test_decode);
  g_test_add_func ("/tokenizer/errors", test_errors);
  g_test_add_func ("/tokenizer/gguf", test_gguf);
  g_test_add_func ("/tokenizer/oracle/llama.cpp", test_oracle);

  return g_test_run ();
}
