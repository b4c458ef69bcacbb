/* sc-unicode.c — UTF-8, category flags and pre-tokenizer passes (see sc-unicode.h).
 *
 * Every rule here is a transcription of behaviour, not of code: llama.cpp's src/unicode.cpp
 * (the version vendored by llama-cpp-python 0.3.36) is the oracle, and the tokenizer tests
 * compare token ids with it. Where llama.cpp runs std::regex on a "collapsed" copy of the
 * text (every code point >= 128 replaced by one byte standing for its category: whitespace
 * -> 0x0B, number -> 0xD1, letter -> 0xD2, punctuation -> 0xD3, mark -> 0xD4, symbol ->
 * 0xD5, anything else -> 0xD0), the class tests below answer what that regex would answer.
 *
 * Workload: called once per code point per pass while tokenizing; no allocation.
 */
#include "text/sc-unicode.h"

/* Past the end of a segment: what llama.cpp's _get_cpt returns (no code point is this big). */
#define OUT_OF_RANGE 0xFFFFFFFFu

/* The category bits, without WHITESPACE: llama.cpp's unicode_cpt_flags::MASK_CATEGORIES. */
#define CATEGORY_MASK 0x00FFu

uint16_t
sc_unicode_flags (uint32_t cpt)
{
  if (cpt < 256)
    return sc_unicode_latin1_flags[cpt];
  if (cpt >= 0x110000u)
    return SC_UNICODE_UNDEFINED;

  /* Largest i with ranges[i].start <= cpt; ranges[0].start == 0 guarantees one exists. */
  size_t lo = 0;
  size_t hi = sc_unicode_n_ranges;
  while (hi - lo > 1)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (sc_unicode_ranges[mid].start <= cpt)
        lo = mid;
      else
        hi = mid;
    }
  return sc_unicode_ranges[lo].flags;
}

uint32_t
sc_utf8_decode (const char *s, size_t len, size_t *used)
{
  const unsigned char *u = (const unsigned char *) s;
  unsigned c0 = u[0];
  size_t need;
  uint32_t value;

  if (c0 < 0x80)
    {
      *used = 1;
      return c0;
    }
  if (c0 < 0xC0)
    goto invalid; /* a continuation byte where a character should start */
  else if (c0 < 0xE0)
    {
      need = 1;
      value = c0 & 0x1F;
    }
  else if (c0 < 0xF0)
    {
      need = 2;
      value = c0 & 0x0F;
    }
  else if (c0 < 0xF8)
    {
      need = 3;
      value = c0 & 0x07;
    }
  else
    goto invalid;

  if (len <= need)
    goto invalid;
  for (size_t i = 1; i <= need; i++)
    {
      if ((u[i] & 0xC0) != 0x80)
        goto invalid;
      value = (value << 6) | (u[i] & 0x3F);
    }
  if (value > 0x10FFFF)
    goto invalid; /* llama.cpp decodes it, then aborts when re-encoding it: we refuse it */
  *used = need + 1;
  return value;

invalid:
  *used = 1;
  return 0xFFFD;
}

size_t
sc_utf8_encode (uint32_t cpt, char out[4])
{
  if (cpt > 0x10FFFF)
    cpt = 0xFFFD;
  if (cpt <= 0x7F)
    {
      out[0] = (char) cpt;
      return 1;
    }
  if (cpt <= 0x7FF)
    {
      out[0] = (char) (0xC0 | (cpt >> 6));
      out[1] = (char) (0x80 | (cpt & 0x3F));
      return 2;
    }
  if (cpt <= 0xFFFF)
    {
      out[0] = (char) (0xE0 | (cpt >> 12));
      out[1] = (char) (0x80 | ((cpt >> 6) & 0x3F));
      out[2] = (char) (0x80 | (cpt & 0x3F));
      return 3;
    }
  out[0] = (char) (0xF0 | (cpt >> 18));
  out[1] = (char) (0x80 | ((cpt >> 12) & 0x3F));
  out[2] = (char) (0x80 | ((cpt >> 6) & 0x3F));
  out[3] = (char) (0x80 | (cpt & 0x3F));
  return 4;
}

size_t
sc_utf8_seq_len (unsigned char c)
{
  static const unsigned char lookup[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
  return lookup[c >> 4];
}

/* GPT-2's table in closed form. The 68 non-printable bytes, in increasing order, are
 * 0x00..0x20 (33 of them -> U+0100..U+0120), 0x7F..0xA0 (34 -> U+0121..U+0142) and
 * 0xAD (-> U+0143). */
uint32_t
sc_unicode_byte_to_cpt (uint8_t byte)
{
  if (byte <= 0x20)
    return 0x100u + byte;
  if (byte >= 0x7F && byte <= 0xA0)
    return 0x121u + (byte - 0x7Fu);
  if (byte == 0xAD)
    return 0x143u;
  return byte;
}

int
sc_unicode_cpt_to_byte (uint32_t cpt)
{
  if ((cpt >= 0x21 && cpt <= 0x7E) || (cpt >= 0xA1 && cpt <= 0xAC) || (cpt >= 0xAE && cpt <= 0xFF))
    return (int) cpt;
  if (cpt >= 0x100 && cpt <= 0x120)
    return (int) (cpt - 0x100);
  if (cpt >= 0x121 && cpt <= 0x142)
    return (int) (cpt - 0x121 + 0x7F);
  if (cpt == 0x143)
    return 0xAD;
  return -1;
}

/* One segment being split: the state of llama.cpp's per-offset loop. */
typedef struct {
  const uint32_t *cpts;
  size_t ini;      /* first code point of the segment */
  size_t end;      /* one past the last */
  size_t prev_end; /* where the next piece starts */
  size_t *out;
  size_t n_out;
} Splitter;

static inline uint32_t
get_cpt (const Splitter *sp, size_t pos)
{
  return (pos >= sp->ini && pos < sp->end) ? sp->cpts[pos] : OUT_OF_RANGE;
}

/* Flags of the code point at @pos; 0 (no flag at all) outside the segment, which is what
 * stops every "+" loop at the segment's end. */
static inline uint16_t
get_flags (const Splitter *sp, size_t pos)
{
  return (pos >= sp->ini && pos < sp->end) ? sc_unicode_flags (sp->cpts[pos]) : 0;
}

/* Closes the piece [prev_end, end) if it is not empty; returns its length. */
static size_t
add_piece (Splitter *sp, size_t end)
{
  size_t len = end - sp->prev_end;
  if (len > 0)
    sp->out[sp->n_out++] = len;
  sp->prev_end = end;
  return len;
}

static inline uint32_t
ascii_lower (uint32_t c)
{
  return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* 's 't 're 've 'm 'll 'd at @pos: returns the length of the contraction (2 or 3) or 0.
 * @fold: case-insensitive (llama3) or exact (GPT-2). */
static size_t
contraction_len (const Splitter *sp, size_t pos, bool fold)
{
  if (get_cpt (sp, pos) != '\'' || pos + 1 >= sp->end)
    return 0;
  uint32_t c1 = get_cpt (sp, pos + 1);
  if (fold)
    c1 = ascii_lower (c1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
    return 2;
  if (pos + 2 >= sp->end)
    return 0;
  uint32_t c2 = get_cpt (sp, pos + 2);
  if (fold)
    c2 = ascii_lower (c2);
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l'))
    return 3;
  return 0;
}

/* The whitespace tail shared by both patterns: \s+(?!\S) | \s+ | one unmatched character. */
static void
split_whitespace_tail (Splitter *sp, size_t *pos)
{
  size_t n_ws = 0;
  while (get_flags (sp, *pos + n_ws) & SC_UNICODE_WHITESPACE)
    n_ws++;

  if (n_ws > 1 && get_cpt (sp, *pos + n_ws) != OUT_OF_RANGE)
    {
      /* \s+(?!\S): leave the last whitespace to prefix the word that follows */
      *pos += n_ws - 1;
      add_piece (sp, *pos);
    }
  else if (n_ws > 0)
    {
      *pos += n_ws;
      add_piece (sp, *pos);
    }
  else
    {
      *pos += 1;
      add_piece (sp, *pos);
    }
}

#define WS_LETTER_NUMBER (SC_UNICODE_WHITESPACE | SC_UNICODE_LETTER | SC_UNICODE_NUMBER)

static void
split_gpt2_segment (Splitter *sp)
{
  size_t pos = sp->ini;
  while (pos < sp->end)
    {
      uint32_t cpt = get_cpt (sp, pos);
      uint16_t flags = get_flags (sp, pos);

      size_t clen = contraction_len (sp, pos, false);
      if (clen > 0)
        {
          pos += add_piece (sp, pos + clen);
          continue;
        }

      /* " ?X+": an optional single space, then a run of letters / numbers / other */
      uint16_t flags2 = (cpt == ' ') ? get_flags (sp, pos + 1) : flags;
      if (flags2 & SC_UNICODE_LETTER)
        {
          pos += (cpt == ' ');
          while (flags2 & SC_UNICODE_LETTER)
            flags2 = get_flags (sp, ++pos);
          add_piece (sp, pos);
          continue;
        }
      if (flags2 & SC_UNICODE_NUMBER)
        {
          pos += (cpt == ' ');
          while (flags2 & SC_UNICODE_NUMBER)
            flags2 = get_flags (sp, ++pos);
          add_piece (sp, pos);
          continue;
        }
      if (!(flags2 & WS_LETTER_NUMBER) && flags2 != 0)
        {
          pos += (cpt == ' ');
          while (!(flags2 & WS_LETTER_NUMBER) && flags2 != 0)
            flags2 = get_flags (sp, ++pos);
          add_piece (sp, pos);
          continue;
        }

      split_whitespace_tail (sp, &pos);
    }
}

/* The llama3 pattern; @max_digits is 3 (\p{N}{1,3}) or 1 (\p{N}: qwen2's, which is
 * otherwise the same pattern, unicode_regex_split_custom_qwen2 in llama.cpp). */
static void
split_llama3_segment (Splitter *sp, size_t max_digits)
{
  size_t pos = sp->ini;
  while (pos < sp->end)
    {
      uint32_t cpt = get_cpt (sp, pos);
      uint16_t flags = get_flags (sp, pos);

      size_t clen = contraction_len (sp, pos, true);
      if (clen > 0)
        {
          pos += add_piece (sp, pos + clen);
          continue;
        }

      /* [^\r\n\p{L}\p{N}]?\p{L}+ */
      if (!(cpt == '\r' || cpt == '\n' || (flags & SC_UNICODE_NUMBER)))
        {
          if ((flags & SC_UNICODE_LETTER) || (get_flags (sp, pos + 1) & SC_UNICODE_LETTER))
            {
              pos++;
              while (get_flags (sp, pos) & SC_UNICODE_LETTER)
                pos++;
              add_piece (sp, pos);
              continue;
            }
        }

      /* \p{N}{1,3} (\p{N} for qwen2) */
      if (flags & SC_UNICODE_NUMBER)
        {
          size_t ini = pos;
          while (get_flags (sp, pos) & SC_UNICODE_NUMBER)
            {
              if (++pos - ini >= max_digits)
                {
                  add_piece (sp, pos);
                  ini = pos;
                }
            }
          add_piece (sp, pos);
          continue;
        }

      /* " ?[^\s\p{L}\p{N}]+[\r\n]*". llama.cpp tests the current code point's flags (not
       * flags2) for "non-zero" here, so a lone space at a segment's end lands in this branch;
       * the piece is the same either way. */
      uint16_t flags2 = (cpt == ' ') ? get_flags (sp, pos + 1) : flags;
      if (!(flags2 & WS_LETTER_NUMBER) && flags != 0)
        {
          pos += (cpt == ' ');
          while (!(flags2 & WS_LETTER_NUMBER) && flags2 != 0)
            flags2 = get_flags (sp, ++pos);
          uint32_t cpt2 = get_cpt (sp, pos);
          while (cpt2 == '\r' || cpt2 == '\n')
            cpt2 = get_cpt (sp, ++pos);
          add_piece (sp, pos);
          continue;
        }

      /* \s*[\r\n]+: whitespace up to and including the last \r or \n of the run */
      size_t n_ws = 0;
      size_t last_rn_end = 0;
      while (get_flags (sp, pos + n_ws) & SC_UNICODE_WHITESPACE)
        {
          uint32_t cpt2 = get_cpt (sp, pos + n_ws);
          if (cpt2 == '\r' || cpt2 == '\n')
            last_rn_end = pos + n_ws + 1;
          n_ws++;
        }
      if (last_rn_end > 0)
        {
          pos = last_rn_end;
          add_piece (sp, pos);
          continue;
        }

      split_whitespace_tail (sp, &pos);
    }
}

/* The byte a code point >= 128 becomes in llama.cpp's collapsed text, reduced to the
 * question "which category does std::regex see": whitespace first, then the category bit. */
static inline uint16_t
collapsed_category (uint32_t cpt)
{
  uint16_t flags = sc_unicode_flags (cpt);
  if (flags & SC_UNICODE_WHITESPACE)
    return SC_UNICODE_WHITESPACE;
  return flags & CATEGORY_MASK;
}

/* [\p{N}] in the collapsed regex: [\xD1\x30-\x39] */
static bool
class_number (uint32_t cpt)
{
  if (cpt < 128)
    return cpt >= '0' && cpt <= '9';
  return collapsed_category (cpt) == SC_UNICODE_NUMBER;
}

/* [\p{P}\$\+<=>\^~\|] in the collapsed regex: 0xD3 plus llama.cpp's ASCII punctuation list
 * (!-# %-* ,-/ :-; ?-@ [-] _ { }) plus $ + < = > ^ ~ | -- every printable ASCII character
 * that is not a letter, digit, space or '`'. */
static bool
class_punct (uint32_t cpt)
{
  if (cpt < 128)
    return cpt > ' ' && cpt < 127 && cpt != '`'
           && !(cpt >= '0' && cpt <= '9') && !(cpt >= 'A' && cpt <= 'Z')
           && !(cpt >= 'a' && cpt <= 'z');
  return collapsed_category (cpt) == SC_UNICODE_PUNCTUATION;
}

/* std::regex_iterator over one segment with a one-class pattern: matches are pieces, and so
 * are the unmatched stretches between them. @runs: "[class]+" instead of "[class]". */
static void
split_class_segment (Splitter *sp, bool (*in_class) (uint32_t), bool runs)
{
  size_t pos = sp->ini;
  while (pos < sp->end)
    {
      if (!in_class (sp->cpts[pos]))
        {
          pos++;
          continue;
        }
      add_piece (sp, pos); /* the unmatched stretch before the match, if any */
      pos++;
      if (runs)
        while (pos < sp->end && in_class (sp->cpts[pos]))
          pos++;
      add_piece (sp, pos);
    }
  add_piece (sp, sp->end);
}

static inline bool
is_ascii_digit (uint32_t c)
{
  return c >= '0' && c <= '9';
}

/* [0-9][0-9][0-9], leftmost non-overlapping matches */
static void
split_digit_triples_segment (Splitter *sp)
{
  size_t pos = sp->ini;
  while (pos < sp->end)
    {
      if (pos + 3 <= sp->end && is_ascii_digit (sp->cpts[pos])
          && is_ascii_digit (sp->cpts[pos + 1]) && is_ascii_digit (sp->cpts[pos + 2]))
        {
          add_piece (sp, pos);
          pos += 3;
          add_piece (sp, pos);
        }
      else
        pos++;
    }
  add_piece (sp, sp->end);
}

size_t
sc_unicode_split (ScSplitPass pass, const uint32_t *cpts, size_t n_cpts,
                  const size_t *in, size_t n_in, size_t *out)
{
  Splitter sp = { .cpts = cpts, .out = out };
  size_t start = 0;

  for (size_t i = 0; i < n_in; i++)
    {
      sp.ini = start;
      sp.end = start + in[i];
      sp.prev_end = start;
      if (sp.end > n_cpts)
        break; /* out of contract; never read past the text */
      start = sp.end;

      switch (pass)
        {
        case SC_SPLIT_GPT2:
          split_gpt2_segment (&sp);
          break;
        case SC_SPLIT_LLAMA3:
          split_llama3_segment (&sp, 3);
          break;
        case SC_SPLIT_QWEN2:
          split_llama3_segment (&sp, 1);
          break;
        case SC_SPLIT_EACH_NUMBER:
          split_class_segment (&sp, class_number, false);
          break;
        case SC_SPLIT_NUMBER_RUNS:
          split_class_segment (&sp, class_number, true);
          break;
        case SC_SPLIT_PUNCT_RUNS:
          split_class_segment (&sp, class_punct, true);
          break;
        case SC_SPLIT_ASCII_DIGIT_TRIPLES:
          split_digit_triples_segment (&sp);
          break;
        default:
          add_piece (&sp, sp.end);
          break;
        }
    }
  return sp.n_out;
}
