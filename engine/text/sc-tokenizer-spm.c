/* sc-tokenizer-spm.c — one raw fragment through a SentencePiece-style vocabulary (GGUF
 * tokenizer.ggml.model "llama": Llama 2, Gemma), as llama.cpp's llm_tokenizer_spm_session
 * does it (ggml-org/llama.cpp src/llama-vocab.cpp):
 *   1. every ' ' becomes U+2581 "▁" (llama_escape_whitespace), after a "▁" prefix when the
 *      vocabulary asks for one (add_space_prefix, and only at the start or after a special
 *      token: sc_tokenize decides);
 *   2. the text is cut into UTF-8 characters (a lone continuation byte is a character);
 *   3. repeatedly the adjacent pair whose concatenation is a token with the highest score
 *      is merged (ties: leftmost), a pair queued before a neighbour changed being skipped;
 *   4. each final symbol is its token, or, when it is none, one <0xNN> byte token per byte.
 * llama.cpp's resegment() also looks a symbol up in a table of merged pairs before falling
 * back to bytes; every merged symbol is a token by construction (step 3 only queues pairs
 * that are), so that branch never runs and is not reproduced.
 *
 * Workload: like the BPE path, one call per raw fragment of a user text; scratch memory is
 * per call, so a tokenizer is shared between threads freely.
 */
#include "text/sc-tokenizer-private.h"

#include <stdlib.h>
#include <string.h>

#define LOWER_ONE_EIGHTH_BLOCK "\xe2\x96\x81" /* U+2581, SentencePiece's space */
#define LOWER_BLOCK_LEN 3

typedef struct {
  int32_t prev, next;
  size_t off, n; /* n == 0 once merged into its left neighbour */
} SpmSymbol;

typedef struct {
  float score;
  int32_t left, right;
  size_t size; /* bytes of the pair when queued: a stale entry no longer matches */
} SpmBigram;

typedef struct {
  SpmBigram *data;
  size_t n, cap;
} SpmHeap;

/* llm_bigram_spm::comparator: the higher score first, then the leftmost. */
static inline bool
before (const SpmBigram *a, const SpmBigram *b)
{
  return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static bool
heap_push (SpmHeap *h, SpmBigram b)
{
  size_t i;

  if (h->n == h->cap)
    {
      size_t cap = h->cap > 0 ? 2 * h->cap : 64;
      SpmBigram *d = realloc (h->data, cap * sizeof *d);
      if (d == NULL)
        return false;
      h->data = d;
      h->cap = cap;
    }
  i = h->n++;
  while (i > 0 && before (&b, &h->data[(i - 1) / 2]))
    {
      h->data[i] = h->data[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  h->data[i] = b;
  return true;
}

static SpmBigram
heap_pop (SpmHeap *h)
{
  SpmBigram top = h->data[0], last = h->data[--h->n];
  size_t i = 0;

  for (;;)
    {
      size_t c = 2 * i + 1;
      if (c >= h->n)
        break;
      if (c + 1 < h->n && before (&h->data[c + 1], &h->data[c]))
        c++;
      if (!before (&h->data[c], &last))
        break;
      h->data[i] = h->data[c];
      i = c;
    }
  if (h->n > 0)
    h->data[i] = last;
  return top;
}

/* Queues the pair (left, right) when its text is a token (try_add_bigram). */
static bool
try_pair (const ScTokenizer *tok, const char *text, const SpmSymbol *s, int32_t left,
          int32_t right, SpmHeap *h)
{
  size_t n;
  int32_t id;

  if (left < 0 || right < 0)
    return true;
  n = s[left].n + s[right].n;
  id = sc_tokenizer_find (tok, text + s[left].off, n);
  if (id < 0)
    return true;
  return heap_push (h, (SpmBigram) { tok->scores[id], left, right, n });
}

/* unicode_len_utf8: the length a UTF-8 lead byte announces; 1 for anything else. */
static size_t
utf8_len (unsigned char c)
{
  static const size_t by_high_nibble[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };

  return by_high_nibble[c >> 4];
}

bool
sc_tokenizer_spm_fragment (const ScTokenizer *tok, const char *raw, size_t raw_len,
                           bool space_prefix, ScIdVec *out)
{
  size_t spaces = 0, len, i, at = 0;
  char *text = NULL;
  SpmSymbol *s = NULL;
  SpmHeap h = { 0 };
  int32_t n_sym = 0, k;
  bool ok = false;

  /* 1. escape: each space and the prefix grow by two bytes */
  for (i = 0; i < raw_len; i++)
    spaces += raw[i] == ' ';
  len = raw_len + (spaces + space_prefix) * (LOWER_BLOCK_LEN - 1) + space_prefix;
  if (len == 0)
    return true;
  text = malloc (len);
  s = malloc (len * sizeof *s); /* at most one symbol per byte */
  if (text == NULL || s == NULL)
    goto out;
  if (space_prefix)
    {
      memcpy (text, LOWER_ONE_EIGHTH_BLOCK, LOWER_BLOCK_LEN);
      at = LOWER_BLOCK_LEN;
    }
  for (i = 0; i < raw_len; i++)
    if (raw[i] == ' ')
      {
        memcpy (text + at, LOWER_ONE_EIGHTH_BLOCK, LOWER_BLOCK_LEN);
        at += LOWER_BLOCK_LEN;
      }
    else
      text[at++] = raw[i];

  /* 2. characters */
  for (at = 0; at < len; n_sym++)
    {
      size_t n = utf8_len ((unsigned char) text[at]);
      if (n > len - at)
        n = len - at;
      s[n_sym] = (SpmSymbol) { n_sym - 1, at + n == len ? -1 : n_sym + 1, at, n };
      at += n;
    }

  /* 3. merges by score */
  for (k = 1; k < n_sym; k++)
    if (!try_pair (tok, text, s, k - 1, k, &h))
      goto out;
  while (h.n > 0)
    {
      SpmBigram b = heap_pop (&h);
      SpmSymbol *l = &s[b.left], *r = &s[b.right];

      if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
        continue; /* one side merged since */
      l->n += r->n;
      r->n = 0;
      l->next = r->next;
      if (r->next >= 0)
        s[r->next].prev = b.left;
      if (!try_pair (tok, text, s, l->prev, b.left, &h)
          || !try_pair (tok, text, s, b.left, l->next, &h))
        goto out;
    }

  /* 4. tokens, or bytes */
  for (k = 0; k != -1; k = s[k].next)
    {
      int32_t id = sc_tokenizer_find (tok, text + s[k].off, s[k].n);
      if (id >= 0)
        {
          if (!sc_tokenizer_ids_push (out, id))
            goto out;
          continue;
        }
      for (i = 0; i < s[k].n; i++)
        {
          int32_t byte_id = tok->byte_ids[(unsigned char) text[s[k].off + i]];
          if (byte_id >= 0 && !sc_tokenizer_ids_push (out, byte_id))
            goto out;
        }
    }
  ok = true;
out:
  free (h.data);
  free (s);
  free (text);
  return ok;
}
