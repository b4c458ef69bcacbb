/* sc-tokenizer-bpe.c — sc_tokenize(): special tokens, pre-tokenizer, byte map, BPE.
 *
 * The four steps of llama.cpp's llama_vocab::impl::tokenize for a byte-level BPE vocabulary
 * (src/llama-vocab.cpp as vendored by llama-cpp-python 0.3.36): tokenizer_st_partition,
 * unicode_regex_split (the passes are in sc-unicode.c), the GPT-2 byte encoding and
 * llm_tokenizer_bpe_session. Not here: vocabulary construction (sc-tokenizer.c).
 *
 * Workload: user sentences and documents (kilobytes; SC_TOKENIZE_MAX_LEN at most). Scratch
 * buffers live for one call, so a tokenizer can be shared between threads.
 */
#include "text/sc-tokenizer-private.h"

#include <stdlib.h>
#include <string.h>

/* Longest input sc_tokenize() accepts. Bytes grow at most 6x on their way into a BPE word
 * (an invalid byte becomes U+FFFD, 3 bytes, each mapped to a 2-byte code point), and symbol
 * indices are int32_t, so 6 * len must stay below INT32_MAX. */
#define SC_TOKENIZE_MAX_LEN ((size_t) INT32_MAX / 8)

typedef ScIdVec IdVec;

/* Returns @p grown to hold @need elements of @size bytes (updating *@cap), or NULL after
 * freeing @p when memory runs out, so that `p = grow (p, ...)` never leaks. */
static void *
grow (void *p, size_t *cap, size_t need, size_t size)
{
  if (need <= *cap && p != NULL)
    return p;
  size_t n = *cap > 0 ? *cap : 64; /* small texts never reallocate */
  while (n < need)
    n *= 2;
  void *q = realloc (p, n * size);
  if (q == NULL)
    {
      free (p);
      *cap = 0;
      return NULL;
    }
  *cap = n;
  return q;
}

/* Makes array @ptr (capacity @cap elements) hold @need elements; false when out of memory. */
#define RESERVE(ptr, cap, need) (((ptr) = grow ((ptr), &(cap), (need), sizeof *(ptr))) != NULL)

bool
sc_tokenizer_ids_push (IdVec *v, int32_t id)
{
  if (!RESERVE (v->data, v->cap, v->n + 1))
    return false;
  v->data[v->n++] = id;
  return true;
}

/* A piece of the input after the special-token partition: raw text, or one special token. */
typedef struct {
  int32_t id; /* -1: raw text [off, off + len) */
  size_t off, len;
} Fragment;

typedef struct {
  Fragment *data;
  size_t n, cap;
} FragVec;

static bool
frags_push (FragVec *v, int32_t id, size_t off, size_t len)
{
  if (!RESERVE (v->data, v->cap, v->n + 1))
    return false;
  v->data[v->n++] = (Fragment) { id, off, len };
  return true;
}

/* One BPE symbol: a run of the word's bytes; n == 0 once merged into its left neighbour. */
typedef struct {
  int32_t prev, next;
  uint32_t off, n;
} Symbol;

/* A candidate merge of symbols left and right, as they were when it was queued. */
typedef struct {
  int32_t rank;
  int32_t left, right;
  uint32_t left_n, right_n;
} Bigram;

/* Buffers reused across the pieces of one sc_tokenize() call. */
typedef struct {
  uint32_t *cpts;
  size_t cpts_cap;
  size_t *seg_a, *seg_b;
  size_t seg_a_cap, seg_b_cap;
  char *word;
  size_t word_cap;
  Symbol *syms;
  size_t syms_cap;
  Bigram *heap;
  size_t heap_n, heap_cap;
} Scratch;

static void
scratch_clear (Scratch *s)
{
  free (s->cpts);
  free (s->seg_a);
  free (s->seg_b);
  free (s->word);
  free (s->syms);
  free (s->heap);
}

/* Heap order: lowest rank first, then leftmost (llm_bigram_bpe::comparator). */
static inline bool
bigram_before (const Bigram *a, const Bigram *b)
{
  return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static void
heap_push (Scratch *s, Bigram b)
{
  size_t i = s->heap_n++;
  while (i > 0)
    {
      size_t parent = (i - 1) / 2;
      if (!bigram_before (&b, &s->heap[parent]))
        break;
      s->heap[i] = s->heap[parent];
      i = parent;
    }
  s->heap[i] = b;
}

static Bigram
heap_pop (Scratch *s)
{
  Bigram top = s->heap[0];
  Bigram last = s->heap[--s->heap_n];
  size_t i = 0;
  for (;;)
    {
      size_t child = 2 * i + 1;
      if (child >= s->heap_n)
        break;
      if (child + 1 < s->heap_n && bigram_before (&s->heap[child + 1], &s->heap[child]))
        child++;
      if (!bigram_before (&s->heap[child], &last))
        break;
      s->heap[i] = s->heap[child];
      i = child;
    }
  if (s->heap_n > 0)
    s->heap[i] = last;
  return top;
}

/* llm_tokenizer_bpe_session::add_new_bigram */
static void
queue_bigram (const ScTokenizer *tok, Scratch *s, const char *word, int32_t left, int32_t right)
{
  if (left < 0 || right < 0)
    return;
  const Symbol *l = &s->syms[left], *r = &s->syms[right];
  int32_t rank = sc_tokenizer_merge_rank (tok, word + l->off, l->n, word + r->off, r->n);
  if (rank >= 0)
    heap_push (s, (Bigram) { rank, left, right, l->n, r->n });
}

/* BPE over one byte-mapped piece @word (@n bytes of valid UTF-8), appending ids to @out. */
static bool
bpe_word (const ScTokenizer *tok, Scratch *s, const char *word, size_t n, IdVec *out)
{
  if (tok->pre->ignore_merges)
    {
      int32_t id = sc_tokenizer_find (tok, word, n);
      if (id >= 0)
        return sc_tokenizer_ids_push (out, id);
    }

  /* 1. one symbol per UTF-8 character. At most n symbols and, since each merge queues at
   *    most two bigrams, at most 3n queued bigrams: reserve once, never grow in the loop. */
  if (!RESERVE (s->syms, s->syms_cap, n) || !RESERVE (s->heap, s->heap_cap, 3 * n))
    return false;
  int32_t n_sym = 0;
  for (size_t off = 0; off < n;)
    {
      size_t len = sc_utf8_seq_len ((unsigned char) word[off]);
      if (len > n - off)
        len = n - off;
      s->syms[n_sym] = (Symbol) { n_sym - 1, off + len == n ? -1 : n_sym + 1,
                                  (uint32_t) off, (uint32_t) len };
      n_sym++;
      off += len;
    }

  /* 2. queue every adjacent pair that has a merge, then merge lowest rank first */
  s->heap_n = 0;
  for (int32_t i = 1; i < n_sym; i++)
    queue_bigram (tok, s, word, i - 1, i);
  while (s->heap_n > 0)
    {
      Bigram b = heap_pop (s);
      Symbol *l = &s->syms[b.left], *r = &s->syms[b.right];
      /* stale: one side was merged away or grew since the bigram was queued (llama.cpp
       * compares the concatenated text; sizes say the same because symbols only grow) */
      if (l->n == 0 || r->n == 0 || l->n != b.left_n || r->n != b.right_n)
        continue;
      l->n += r->n;
      r->n = 0;
      l->next = r->next;
      if (r->next >= 0)
        s->syms[r->next].prev = b.left;
      queue_bigram (tok, s, word, l->prev, b.left);
      queue_bigram (tok, s, word, b.left, l->next);
    }

  /* 3. look the surviving symbols up; an unknown one falls back to its single bytes */
  for (int32_t i = 0; i < n_sym; i++)
    {
      const Symbol *sym = &s->syms[i];
      if (sym->n == 0)
        continue;
      int32_t id = sc_tokenizer_find (tok, word + sym->off, sym->n);
      if (id >= 0)
        {
          if (!sc_tokenizer_ids_push (out, id))
            return false;
          continue;
        }
      for (uint32_t j = 0; j < sym->n; j++)
        {
          id = sc_tokenizer_find (tok, word + sym->off + j, 1);
          if (id >= 0 && !sc_tokenizer_ids_push (out, id))
            return false;
        }
    }
  return true;
}

/* Tokenizes raw text (no special tokens in it): decode, pre-tokenize, byte-map, BPE. */
static bool
tokenize_raw (const ScTokenizer *tok, Scratch *s, const char *text, size_t len, IdVec *out)
{
  if (!RESERVE (s->cpts, s->cpts_cap, len) || !RESERVE (s->seg_a, s->seg_a_cap, len)
      || !RESERVE (s->seg_b, s->seg_b_cap, len))
    return false;

  size_t n_cpts = 0;
  for (size_t off = 0; off < len;)
    {
      size_t used;
      s->cpts[n_cpts++] = sc_utf8_decode (text + off, len - off, &used);
      off += used;
    }

  size_t n_seg = 1;
  s->seg_a[0] = n_cpts;
  for (uint32_t p = 0; p < tok->pre->n_passes; p++)
    {
      n_seg = sc_unicode_split (tok->pre->passes[p], s->cpts, n_cpts, s->seg_a, n_seg, s->seg_b);
      size_t *t = s->seg_a;
      s->seg_a = s->seg_b;
      s->seg_b = t;
      size_t c = s->seg_a_cap;
      s->seg_a_cap = s->seg_b_cap;
      s->seg_b_cap = c;
    }

  size_t pos = 0;
  for (size_t i = 0; i < n_seg; i++)
    {
      /* each code point is re-encoded (at most 4 bytes), each byte mapped (at most 2) */
      if (!RESERVE (s->word, s->word_cap, 8 * s->seg_a[i]))
        return false;
      size_t n = 0;
      for (size_t k = pos; k < pos + s->seg_a[i]; k++)
        {
          char utf8[4];
          size_t m = sc_utf8_encode (s->cpts[k], utf8);
          for (size_t j = 0; j < m; j++)
            {
              unsigned char b = (unsigned char) utf8[j];
              memcpy (s->word + n, tok->byte_utf8[b], tok->byte_utf8_len[b]);
              n += tok->byte_utf8_len[b];
            }
        }
      pos += s->seg_a[i];
      if (!bpe_word (tok, s, s->word, n, out))
        return false;
    }
  return true;
}

/* First occurrence of @needle in text[from, to), or SIZE_MAX. */
static size_t
find_bytes (const char *text, size_t from, size_t to, const char *needle, size_t n)
{
  while (to - from >= n)
    {
      const char *hit = memchr (text + from, needle[0], to - from - n + 1);
      if (hit == NULL)
        return SIZE_MAX;
      size_t at = (size_t) (hit - text);
      if (memcmp (hit, needle, n) == 0)
        return at;
      from = at + 1;
    }
  return SIZE_MAX;
}

/* tokenizer_st_partition: for each special token, longest first, cut every occurrence out of
 * the raw fragments, left to right. Leaves the result in *@a. */
static bool
partition (const ScTokenizer *tok, const char *text, size_t len, bool parse_special,
           FragVec *a, FragVec *b)
{
  a->n = 0;
  if (len > 0 && !frags_push (a, -1, 0, len))
    return false;

  for (uint32_t k = 0; k < tok->n_special; k++)
    {
      int32_t id = tok->special[k];
      const Token *t = &tok->tokens[id];
      if (!parse_special && (t->type == SC_TOKEN_CONTROL || t->type == SC_TOKEN_UNKNOWN))
        continue;
      const char *needle = tok->texts + t->off;

      b->n = 0;
      for (size_t f = 0; f < a->n; f++)
        {
          Fragment fr = a->data[f];
          if (fr.id >= 0)
            {
              if (!frags_push (b, fr.id, fr.off, fr.len))
                return false;
              continue;
            }
          size_t off = fr.off, end = fr.off + fr.len, at;
          while ((at = find_bytes (text, off, end, needle, t->len)) != SIZE_MAX)
            {
              if ((at > off && !frags_push (b, -1, off, at - off)) || !frags_push (b, id, at, t->len))
                return false;
              off = at + t->len;
            }
          if (off < end && !frags_push (b, -1, off, end - off))
            return false;
        }
      FragVec tmp = *a;
      *a = *b;
      *b = tmp;
    }
  return true;
}

ScStatus
sc_tokenize (const ScTokenizer *tok, const char *text, size_t len, bool add_special,
             bool parse_special, int32_t **out_ids, size_t *out_n, ScError *err)
{
  if (tok == NULL || out_ids == NULL || out_n == NULL || (text == NULL && len > 0))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_tokenize: NULL argument");
  if (len > SC_TOKENIZE_MAX_LEN)
    return sc_error_set (err, SC_ERR_RANGE, "text of %zu bytes is too long to tokenize (limit %zu)",
                         len, SC_TOKENIZE_MAX_LEN);

  IdVec out = { 0 };
  FragVec a = { 0 }, b = { 0 };
  Scratch s = { 0 };
  bool ok = true;

  if (add_special && tok->add_bos)
    ok = sc_tokenizer_ids_push (&out, tok->bos_id);
  ok = ok && partition (tok, text, len, parse_special, &a, &b);
  /* SentencePiece: the space prefix goes before the first raw fragment and each one after a
   * special token (llama.cpp's is_prev_special) */
  bool prev_special = true;
  for (size_t f = 0; ok && f < a.n; f++)
    {
      if (a.data[f].id >= 0)
        ok = sc_tokenizer_ids_push (&out, a.data[f].id);
      else if (tok->spm)
        ok = sc_tokenizer_spm_fragment (tok, text + a.data[f].off, a.data[f].len,
                                        tok->add_space_prefix && prev_special, &out);
      else
        ok = tokenize_raw (tok, &s, text + a.data[f].off, a.data[f].len, &out);
      prev_special = a.data[f].id >= 0;
    }
  if (ok && add_special && tok->add_eos)
    ok = sc_tokenizer_ids_push (&out, tok->eos_id);

  free (a.data);
  free (b.data);
  scratch_clear (&s);
  if (!ok)
    {
      free (out.data);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
    }
  if (out.n == 0)
    {
      free (out.data);
      out.data = NULL;
    }
  *out_ids = out.data;
  *out_n = out.n;
  return SC_OK;
}
