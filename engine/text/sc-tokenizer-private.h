/* sc-tokenizer-private.h — the ScTokenizer layout, shared by the sc-tokenizer*.c files.
 *
 * Not installed and not an API: sc-tokenizer.c builds the vocabulary and answers lookups,
 * sc-tokenizer-bpe.c tokenizes (and sc-tokenizer-spm.c the raw text of a SentencePiece-style
 * vocabulary), sc-tokenizer-gguf.c reads a GGUF. Everything in an
 * ScTokenizer is written once by sc_tokenizer_new() and read-only afterwards.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text/sc-tokenizer.h"
#include "text/sc-unicode.h"

/* One slot of an open-addressing table with linear probing. value == -1: empty. */
typedef struct {
  uint32_t hash;
  int32_t value;
} Slot;

typedef struct {
  Slot *slots;
  size_t mask; /* capacity - 1; capacity is a power of two >= 2 * entries */
} HashTable;

typedef struct {
  size_t off;    /* into ScTokenizer.texts */
  uint32_t len;
  uint8_t type;  /* ScTokenType after the loader's fix-ups */
  bool eog;
} Token;

/* A merge "left right" of rank = its index: both halves live in ScTokenizer.merge_texts. */
typedef struct {
  size_t off;
  uint32_t left_len;
  uint32_t right_len; /* right half starts at off + left_len + 1 */
} Merge;

/* A pre-tokenizer: the passes llama.cpp's llm_tokenizer_bpe runs for one pre type. */
typedef struct {
  ScSplitPass passes[4];
  uint32_t n_passes;
  bool ignore_merges; /* a piece that is a whole token is not merged (llama3) */
  bool add_bos;       /* loader default for add_bos */
} PreKind;

struct ScTokenizer {
  uint32_t n_tokens;
  Token *tokens;        /* (n_tokens) */
  char *texts;          /* every token text, back to back */
  HashTable token_map;  /* text -> id */

  uint32_t n_merges;
  Merge *merges;        /* (n_merges) index = rank */
  char *merge_texts;
  HashTable merge_map;  /* (left, right) -> rank */

  const char *pre_name; /* canonical name, static storage */
  const PreKind *pre;

  int32_t bos_id, eos_id, unk_id;
  bool add_bos, add_eos;

  int32_t *special;     /* (n_special) CONTROL/USER_DEFINED/UNKNOWN ids, longest text first */
  uint32_t n_special;

  /* SentencePiece-style vocabularies (ScTokenizerDesc.model == SC_TOKENIZER_SPM) */
  bool spm;
  bool add_space_prefix;
  float *scores;        /* (n_tokens) merge priority: the higher merges first */
  int32_t byte_ids[256]; /* the "<0xNN>" token of each byte (else its one-byte token, else
                          * UNK, else -1) */

  /* GPT-2 byte map, pre-encoded: byte b becomes byte_utf8[b][0 .. byte_utf8_len[b]) */
  char byte_utf8[256][2];
  uint8_t byte_utf8_len[256];
};

/* The stored text of @id (not NUL-terminated; length tok->tokens[id].len). */
static inline const char *
sc_tokenizer_text_at (const ScTokenizer *tok, int32_t id)
{
  return tok->texts + tok->tokens[id].off;
}

/* The pre-tokenizer called @name (NULL or "": "default"), or NULL when we do not implement
 * it; *@canonical receives its name in static storage. */
const PreKind *sc_tokenizer_pre_kind (const char *name, const char **canonical);

/* Rank of the merge (@a, @b), or -1 when the pair has none. */
int32_t sc_tokenizer_merge_rank (const ScTokenizer *tok, const char *a, size_t na,
                                 const char *b, size_t nb);

/* A growable id array: sc_tokenize's output. */
typedef struct {
  int32_t *data;
  size_t n, cap;
} ScIdVec;

/* Appends @id; false when memory runs out (@v then keeps what it had). */
bool sc_tokenizer_ids_push (ScIdVec *v, int32_t id);

/* Appends the ids of @len bytes of raw text (no special tokens in it) to @out, the
 * SentencePiece way (sc-tokenizer-spm.c), with a leading "▁" when @space_prefix. False when
 * memory runs out. */
bool sc_tokenizer_spm_fragment (const ScTokenizer *tok, const char *text, size_t len,
                                bool space_prefix, ScIdVec *out);
