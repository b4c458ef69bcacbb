/* sc-unicode.h — code points for the byte-level BPE tokenizer, the llama.cpp way.
 *
 * Three jobs, each reproducing llama.cpp (src/unicode.cpp) bit for bit, because token ids
 * depend on every detail:
 *   1. UTF-8 decoding with llama.cpp's recovery rules (an invalid or truncated sequence
 *      yields U+FFFD and consumes ONE byte; overlong forms and surrogates are accepted as
 *      the value they spell) and the matching encoder.
 *   2. Category flags per code point (letter, number, whitespace, ...) from a generated
 *      range table (sc-unicode-data.c, Unicode 15.1, tools/gen_unicode_data.py).
 *   3. The pre-tokenizer "regex" passes, hand-written as llama.cpp does
 *      (unicode_regex_split_custom_gpt2/llama3 and the std::regex class splits it runs on
 *      a category-collapsed copy of the text), plus the GPT-2 byte <-> code point map.
 *
 * What it is not: no normalisation (NFC/NFD), no case mapping beyond ASCII, no general regex
 * engine. Plain C17, no allocation, no global mutable state; every function is thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flag bits, identical to llama.cpp's unicode_cpt_flags. An assigned code point has exactly
 * one category bit; WHITESPACE (the White_Space property) may be added on top. */
enum {
  SC_UNICODE_UNDEFINED = 0x0001,   /* unassigned (Cn), or not a code point (> U+10FFFF) */
  SC_UNICODE_NUMBER = 0x0002,      /* \p{N} */
  SC_UNICODE_LETTER = 0x0004,      /* \p{L} */
  SC_UNICODE_SEPARATOR = 0x0008,   /* \p{Z} */
  SC_UNICODE_ACCENT_MARK = 0x0010, /* \p{M} */
  SC_UNICODE_PUNCTUATION = 0x0020, /* \p{P} */
  SC_UNICODE_SYMBOL = 0x0040,      /* \p{S} */
  SC_UNICODE_CONTROL = 0x0080,     /* \p{C} except Cn */
  SC_UNICODE_WHITESPACE = 0x0100,  /* \s: 25 code points incl. U+0085, U+00A0, U+3000 */
};

/* Returns the flags of @cpt. Any uint32_t is accepted; above U+10FFFF the answer is
 * SC_UNICODE_UNDEFINED (as llama.cpp). */
uint16_t sc_unicode_flags (uint32_t cpt);

static inline bool
sc_unicode_is_letter (uint32_t cpt)
{
  return (sc_unicode_flags (cpt) & SC_UNICODE_LETTER) != 0;
}

static inline bool
sc_unicode_is_number (uint32_t cpt)
{
  return (sc_unicode_flags (cpt) & SC_UNICODE_NUMBER) != 0;
}

static inline bool
sc_unicode_is_whitespace (uint32_t cpt)
{
  return (sc_unicode_flags (cpt) & SC_UNICODE_WHITESPACE) != 0;
}

/* Decodes one code point from @s (@len > 0 bytes available) and stores the number of bytes
 * consumed in *@used (1..4). llama.cpp rules: a lead byte 0xC0..0xF7 followed by enough
 * continuation bytes decodes to the value it spells, even when overlong (C0 80 -> U+0000)
 * or a surrogate (ED A0 80 -> U+D800); anything else (stray continuation byte, 0xF8..0xFF,
 * a truncated or interrupted sequence) returns U+FFFD and consumes exactly one byte.
 * One deliberate difference: a 4-byte form above U+10FFFF (F4 90 80 80, F5..F7 leads) is
 * rejected the same way, where llama.cpp decodes it and then aborts the process (an
 * uncaught exception when it re-encodes the value). Every result is <= U+10FFFF. */
uint32_t sc_utf8_decode (const char *s, size_t len, size_t *used);

/* Encodes @cpt as 1-4 bytes into @out and returns the count (llama.cpp's
 * unicode_cpt_to_utf8); a value above U+10FFFF is encoded as U+FFFD. Overlong forms and
 * surrogates that sc_utf8_decode() accepted come out in their shortest form. */
size_t sc_utf8_encode (uint32_t cpt, char out[4]);

/* Length of the UTF-8 sequence announced by lead byte @c (llama.cpp's unicode_len_utf8:
 * 1 for ASCII and stray continuation bytes, 2 for 0xC0..0xDF, 3 for 0xE0..0xEF, 4 above). */
size_t sc_utf8_seq_len (unsigned char c);

/* GPT-2's bytes_to_unicode(): printable bytes (0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF) map to
 * themselves, the other 68 to U+0100.. in byte order (0x20 -> U+0120 'Ġ', 0x0A -> U+010A). */
uint32_t sc_unicode_byte_to_cpt (uint8_t byte);

/* Inverse of sc_unicode_byte_to_cpt(): the byte, or -1 when @cpt is not in the map. */
int sc_unicode_cpt_to_byte (uint32_t cpt);

/* One pre-tokenizer pass. Each pass splits every segment it is given into pieces; text that
 * no alternative matches is kept as its own piece (llama.cpp never drops text). */
typedef enum {
  /* llama.cpp's unicode_regex_split_custom_gpt2: the GPT-2 pattern
   *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
  SC_SPLIT_GPT2,
  /* unicode_regex_split_custom_llama3: (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|
   *   '[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
   *   \s+(?!\S)|\s+ */
  SC_SPLIT_LLAMA3,
  /* unicode_regex_split_custom_qwen2: the llama3 pattern with \p{N} for \p{N}{1,3} (every
   *   number code point its own piece):
   *   (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|
   *   \p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
  SC_SPLIT_QWEN2,
  /* \p{N}: every number code point becomes its own piece (smollm, starcoder, ...) */
  SC_SPLIT_EACH_NUMBER,
  /* \p{N}+: runs of number code points ("default") */
  SC_SPLIT_NUMBER_RUNS,
  /* [\p{P}\$\+<=>\^~\|]+: runs of punctuation; ASCII: every printable non-alphanumeric
   * except '`' ("default") */
  SC_SPLIT_PUNCT_RUNS,
  /* [0-9][0-9][0-9]: ASCII digits in groups of three from the left ("default") */
  SC_SPLIT_ASCII_DIGIT_TRIPLES,
} ScSplitPass;

/* Applies @pass to the code points @cpts (@n_cpts of them) split into @n_in segments whose
 * lengths (in code points, each > 0, summing to @n_cpts) are @in. Writes the lengths of the
 * resulting pieces, in order, to @out and returns their count. @out must have room for
 * @n_cpts entries (pieces are never empty) and must not overlap @in. No pass looks across a
 * segment boundary, exactly like llama.cpp's per-offset loops. */
size_t sc_unicode_split (ScSplitPass pass, const uint32_t *cpts, size_t n_cpts,
                         const size_t *in, size_t n_in, size_t *out);

/* Generated tables (sc-unicode-data.c). Use sc_unicode_flags(); these are declared here only
 * so that the generated file and its reader agree on the types. */
typedef struct {
  uint32_t start; /* first code point of the range; the range ends where the next starts */
  uint16_t flags;
} ScUnicodeRange;

extern const uint16_t sc_unicode_latin1_flags[256];
extern const ScUnicodeRange sc_unicode_ranges[];
extern const size_t sc_unicode_n_ranges;

#ifdef __cplusplus
}
#endif
