/* sc-tokenizer.h — byte-level BPE and SentencePiece-style tokenization, token for token
 * what llama.cpp produces.
 *
 * An ScTokenizer holds a vocabulary (token texts in their stored, byte-level form such as
 * "Ġthe", token types, special ids) and the ranked merge list, and turns any byte string into
 * token ids the way llama.cpp's llama_tokenize() does for a "gpt2"-model GGUF:
 *   1. special-token partition (tokenizer_st_partition): texts of CONTROL / USER_DEFINED /
 *      UNKNOWN tokens are cut out of the input, longest first; with parse_special == false
 *      only USER_DEFINED tokens are;
 *   2. pre-tokenization of each remaining fragment by the pre-tokenizer named in the GGUF
 *      ("smollm", "gpt-2", "llama3", "default", ...; see sc-unicode.h for the passes);
 *   3. each piece's UTF-8 bytes mapped through GPT-2's byte -> code point table;
 *   4. BPE: repeatedly merge the adjacent pair with the lowest merge rank (ties: leftmost),
 *      then look each symbol up in the vocabulary.
 * Decoding a token inverts step 3. A SentencePiece-style vocabulary (SC_TOKENIZER_SPM, GGUF
 * model "llama": Gemma) shares step 1 and replaces 2-4 by llama.cpp's llm_tokenizer_spm
 * (sc-tokenizer-spm.c); decoding turns its "▁" back into spaces. Reference: shared/notes/model-formats.md §5; the oracle
 * test (tests/engine/test-tokenizer.c) compares ids with llama.cpp on the real SmolLM2 vocabulary.
 *
 * What it is not: no WordPiece/Unigram models (SC_ERR_UNSUPPORTED), no chat
 * templates, no normalisation. Invalid UTF-8 input is fine (llama.cpp's rule: each bad byte
 * becomes U+FFFD). Nothing here aborts on bad input.
 *
 * Thread safety: an ScTokenizer is immutable after construction; any number of threads may
 * tokenize and decode with one tokenizer at the same time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "format/sc-gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ScTokenizer ScTokenizer;

/* Token types: the values of GGUF's tokenizer.ggml.token_type (llama_token_type). A value
 * outside 1..6 in a file is treated as UNDEFINED, like llama.cpp does. */
typedef enum {
  SC_TOKEN_UNDEFINED = 0,
  SC_TOKEN_NORMAL = 1,
  SC_TOKEN_UNKNOWN = 2,
  SC_TOKEN_CONTROL = 3,
  SC_TOKEN_USER_DEFINED = 4,
  SC_TOKEN_UNUSED = 5,
  SC_TOKEN_BYTE = 6,
} ScTokenType;

/* Which fill-in-the-middle token a ScTokenizerDesc.fim_ids entry names. */
typedef enum {
  SC_FIM_PRE,
  SC_FIM_SUF,
  SC_FIM_MID,
  SC_FIM_PAD,
  SC_FIM_REP,
  SC_FIM_SEP,
  SC_FIM_COUNT
} ScFimKind;

/* Which algorithm turns raw text into tokens (GGUF tokenizer.ggml.model). */
typedef enum {
  SC_TOKENIZER_BPE = 0, /* "gpt2": byte-level BPE over ranked merges (SmolLM2, Llama 3) */
  SC_TOKENIZER_SPM = 1, /* "llama": SentencePiece-style merges by token score, spaces as
                         * U+2581, <0xNN> byte fallback (Llama 2, Gemma) */
} ScTokenizerModel;

/* Everything a tokenizer is built from. All arrays are borrowed for the duration of
 * sc_tokenizer_new() only; their contents are copied. Call sc_tokenizer_desc_init() first:
 * it sets every id to -1 ("absent") and everything else to zero. */
typedef struct {
  ScTokenizerModel model;      /* 0 = BPE */
  uint32_t n_tokens;
  const char *const *tokens;   /* (n_tokens) stored form, e.g. "Ġthe"; not NUL-terminated */
  const uint32_t *token_lens;  /* (n_tokens) byte lengths */
  const int32_t *token_types;  /* (n_tokens) ScTokenType values; NULL: all NORMAL */

  uint32_t n_merges;
  const char *const *merges;   /* (n_merges) "left right"; index = rank (0 merges first) */
  const uint32_t *merge_lens;  /* (n_merges) byte lengths */

  const char *pre;             /* tokenizer.ggml.pre, NUL-terminated; NULL or "": "default"
                                * (BPE only) */
  const float *scores;         /* (n_tokens) SPM: merge priority, the higher first; NULL:
                                * all 0, as llama.cpp */
  bool add_space_prefix;       /* SPM: "▁" before the text and after each special token */

  int32_t bos_id, eos_id, unk_id;          /* -1 when absent */
  int32_t eot_id, eom_id;                  /* -1: found by token text as llama.cpp does */
  int32_t fim_ids[SC_FIM_COUNT];           /* -1: found by token text as llama.cpp does */
  bool add_bos, add_eos;                   /* what add_special adds */
} ScTokenizerDesc;

/* Sets every id in @desc to -1 and every other field to 0 / NULL / false. */
void sc_tokenizer_desc_init (ScTokenizerDesc *desc);

/* Builds a tokenizer from @desc. On success *@out owns a new tokenizer (free with
 * sc_tokenizer_free()). Copies all texts.
 *
 * Like llama.cpp's loader it also: replaces an empty token text by "[EMPTY_<id>]"; ignores
 * merges without an inner space ("left right" is split at the first space after byte 0) and
 * keeps the lowest rank of a repeated pair; marks tokens whose text is a known end-of-turn /
 * FIM marker ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|fim_pad|>", ...) CONTROL; and
 * builds the end-of-generation set (see sc_tokenizer_is_eog()).
 *
 * Errors: SC_ERR_INVALID_ARG (NULL arrays, an id out of range, add_bos/add_eos without the
 * id), SC_ERR_UNSUPPORTED (a pre-tokenizer we do not implement: the message names it),
 * SC_ERR_FORMAT (two tokens with the same text, like llama.cpp's load assertion),
 * SC_ERR_RANGE (more than INT32_MAX tokens), SC_ERR_NOMEM. *out is untouched on error. */
ScStatus sc_tokenizer_new (const ScTokenizerDesc *desc, ScTokenizer **out, ScError *err);

/* Builds a tokenizer from the tokenizer.ggml.* keys of @gguf: model ("gpt2", or "llama" for a
 * SentencePiece-style vocabulary with scores and add_space_prefix (default true) and
 * llama.cpp's SPM defaults BOS 1, EOS 2, UNK 0, add_bos; else SC_ERR_UNSUPPORTED), pre,
 * tokens, token_type, merges (BPE), bos/eos/unknown/eot/eom/fim_*
 * token ids, add_bos_token/add_eos_token. Defaults follow llama.cpp's loader: BOS = EOS = 11
 * when the keys are absent (if the vocabulary has an id 11), add_bos true only for the
 * llama3 family; an id key past the vocabulary keeps the default. @gguf may be closed after
 * the call. Errors: those of sc_tokenizer_new(), plus SC_ERR_NOT_FOUND (no tokens or merges)
 * and SC_ERR_FORMAT (a key of the wrong type, fewer token types than tokens); messages name
 * the key. */
ScStatus sc_tokenizer_new_from_gguf (const ScGguf *gguf, ScTokenizer **out, ScError *err);

/* NULL is a no-op. */
void sc_tokenizer_free (ScTokenizer *tok);

/* Tokenizes @len bytes of @text (any bytes; invalid UTF-8 and NULs allowed; @text may be
 * NULL when @len is 0). On success *@out_ids is a malloc'ed array of *@out_n ids that the
 * caller frees (NULL when *@out_n is 0).
 * @add_special: prepend BOS / append EOS when the tokenizer's add_bos / add_eos say so.
 * @parse_special: also match CONTROL and UNKNOWN token texts (USER_DEFINED ones always are).
 * Errors: SC_ERR_INVALID_ARG, SC_ERR_RANGE (@len over INT32_MAX / 8), SC_ERR_NOMEM; the
 * outputs are untouched on error. */
ScStatus sc_tokenize (const ScTokenizer *tok, const char *text, size_t len, bool add_special,
                      bool parse_special, int32_t **out_ids, size_t *out_n, ScError *err);

/* Writes the bytes token @id stands for (llama.cpp's token_to_piece, no lstrip) into @buf and
 * returns how many bytes that takes; at most @cap bytes are written, so a return value > @cap
 * means "call again with a larger buffer" (@buf may be NULL when @cap is 0).
 *   NORMAL: the stored text through the inverse GPT-2 byte map; a code point outside the
 *     map is copied as its UTF-8 bytes (llama.cpp writes an "[UNK_BYTE_0x...]" marker here).
 *     SPM: the stored text with each "▁" (U+2581) made a space.
 *   CONTROL, UNKNOWN: the stored text when @special, else nothing.
 *   USER_DEFINED: the stored text (always, as llama.cpp).
 *   BYTE: the byte its "<0xXX>" text names.  UNUSED, UNDEFINED, unknown @id: nothing (0). */
size_t sc_token_to_bytes (const ScTokenizer *tok, int32_t id, bool special, char *buf,
                          size_t cap);

uint32_t sc_tokenizer_n_vocab (const ScTokenizer *tok);

/* The effective type of @id (after the CONTROL marking described at sc_tokenizer_new());
 * SC_TOKEN_UNDEFINED for an id out of range. */
ScTokenType sc_tokenizer_token_type (const ScTokenizer *tok, int32_t id);

/* The stored text of @id (e.g. "Ġthe"), not NUL-terminated, borrowed from @tok; its length
 * goes to *@len (if non-NULL). NULL (and 0) for an id out of range. */
const char *sc_tokenizer_token_text (const ScTokenizer *tok, int32_t id, size_t *len);

/* Looks a stored text up; returns its id or -1. */
int32_t sc_tokenizer_find (const ScTokenizer *tok, const char *text, size_t len);

/* BOS / EOS ids, -1 when the vocabulary has none. */
int32_t sc_tokenizer_bos (const ScTokenizer *tok);
int32_t sc_tokenizer_eos (const ScTokenizer *tok);

/* Whether add_special adds BOS / EOS with this tokenizer. */
bool sc_tokenizer_adds_bos (const ScTokenizer *tok);
bool sc_tokenizer_adds_eos (const ScTokenizer *tok);

/* The pre-tokenizer's canonical name ("smollm", "gpt-2", "llama3", "default", ...). */
const char *sc_tokenizer_pre (const ScTokenizer *tok);

/* End of generation, as llama.cpp decides it: EOS, EOT, EOM, the FIM pad/repo/sep tokens and
 * every token whose text is an end marker llama.cpp knows ("<|im_end|>", "<|endoftext|>",
 * "<|eot_id|>", "<end_of_turn>", "</s>" ...). For SmolLM2: 0 <|endoftext|>, 2 <|im_end|> and
 * 4 <reponame> (which llama.cpp takes for the FIM repository token). */
bool sc_tokenizer_is_eog (const ScTokenizer *tok, int32_t id);

#ifdef __cplusplus
}
#endif
