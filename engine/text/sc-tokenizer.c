/* sc-tokenizer.c — the vocabulary (BPE or SentencePiece-style): construction, lookups,
 * decoding (see sc-tokenizer.h).
 *
 * Transcribes what llama.cpp's llama_vocab loader does with a "gpt2" vocabulary
 * (src/llama-vocab.cpp as vendored by llama-cpp-python 0.3.36): copies the texts, ranks the
 * merges, marks end-of-turn / FIM / end-of-generation tokens by their text, and orders the
 * special tokens for the partition step; plus token_to_piece. Tokenizing is in
 * sc-tokenizer-bpe.c, GGUF loading in sc-tokenizer-gguf.c.
 *
 * Workload: built once per model (SmolLM2: 49152 tokens, 48900 merges; a few ms). Every
 * lookup is by exact byte string through one of two open-addressing hash tables
 * (token text -> id, merge pair -> rank), hit once or twice per byte of tokenized text.
 */
#include "text/sc-tokenizer-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hashing ------------------------------------------------------------------------- */

/* FNV-1a over bytes, finished with murmur3's fmix32 so the low bits (the table index) depend
 * on every input byte. */
#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

static inline uint32_t
fnv_feed (uint32_t h, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char) s[i]) * FNV_PRIME;
  return h;
}

static inline uint32_t
fmix32 (uint32_t h)
{
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

static inline uint32_t
hash_text (const char *s, size_t n)
{
  return fmix32 (fnv_feed (FNV_OFFSET, s, n));
}

/* A pair hashes differently from its concatenation: a value that is not a byte separates
 * the halves. */
static inline uint32_t
hash_pair (const char *a, size_t na, const char *b, size_t nb)
{
  uint32_t h = fnv_feed (FNV_OFFSET, a, na);
  h = (h ^ 0x100u) * FNV_PRIME;
  return fmix32 (fnv_feed (h, b, nb));
}

/* Sizes @t for @n_entries at a load factor of at most 1/2, where linear probing stays at
 * about 1.5 probes per hit (and 2.5 per miss, the common case for merge lookups). */
static bool
table_init (HashTable *t, size_t n_entries)
{
  size_t cap = 16;
  if (n_entries > SIZE_MAX / 4 / sizeof *t->slots)
    return false;
  while (cap < 2 * n_entries)
    cap *= 2;
  t->slots = malloc (cap * sizeof *t->slots);
  if (t->slots == NULL)
    return false;
  for (size_t i = 0; i < cap; i++)
    t->slots[i].value = -1;
  t->mask = cap - 1;
  return true;
}

/* ---- pre-tokenizers ---------------------------------------------------------------- */

static const PreKind PRE_GPT2 = { { SC_SPLIT_GPT2 }, 1, false, false };
static const PreKind PRE_SMOLLM = { { SC_SPLIT_EACH_NUMBER, SC_SPLIT_GPT2 }, 2, false, false };
static const PreKind PRE_LLAMA3 = { { SC_SPLIT_LLAMA3 }, 1, true, true };
static const PreKind PRE_DBRX = { { SC_SPLIT_LLAMA3 }, 1, false, false };
static const PreKind PRE_QWEN2 = { { SC_SPLIT_QWEN2 }, 1, false, false };
static const PreKind PRE_DEFAULT = {
  { SC_SPLIT_PUNCT_RUNS, SC_SPLIT_GPT2, SC_SPLIT_NUMBER_RUNS, SC_SPLIT_ASCII_DIGIT_TRIPLES },
  4, false, false
};

/* tokenizer.ggml.pre values and what llama.cpp's loader makes of them. Only types whose
 * regexes and loader flags we reproduce exactly are listed; "gpt2" is our alias for
 * "gpt-2" (llama.cpp itself does not know it). */
static const struct {
  const char *name;
  const PreKind *kind;
} PRE_NAMES[] = {
  { "default", &PRE_DEFAULT },
  { "smollm", &PRE_SMOLLM },
  { "starcoder", &PRE_SMOLLM },
  { "refact", &PRE_SMOLLM },
  { "command-r", &PRE_SMOLLM },
  { "codeshell", &PRE_SMOLLM },
  { "exaone", &PRE_SMOLLM },
  { "minerva-7b", &PRE_SMOLLM },
  { "mellum2", &PRE_SMOLLM },
  { "gpt-2", &PRE_GPT2 },
  { "gpt2", &PRE_GPT2 },
  { "phi-2", &PRE_GPT2 },
  { "jina-es", &PRE_GPT2 },
  { "jina-de", &PRE_GPT2 },
  { "jina-v2-es", &PRE_GPT2 },
  { "jina-v2-de", &PRE_GPT2 },
  { "gigachat", &PRE_GPT2 },
  { "a.x-4.0", &PRE_GPT2 },
  { "mellum", &PRE_GPT2 },
  { "modern-bert", &PRE_GPT2 },
  { "mpt", &PRE_GPT2 },
  { "olmo", &PRE_GPT2 },
  { "jais", &PRE_GPT2 },
  { "trillion", &PRE_GPT2 },
  { "granite-docling", &PRE_GPT2 },
  { "exaone4", &PRE_GPT2 },
  { "llama3", &PRE_LLAMA3 },
  { "llama-v3", &PRE_LLAMA3 },
  { "llama-bpe", &PRE_LLAMA3 },
  { "falcon3", &PRE_LLAMA3 },
  { "falcon-h1", &PRE_LLAMA3 },
  { "pixtral", &PRE_LLAMA3 },
  { "midm-2.0", &PRE_LLAMA3 },
  { "lfm2", &PRE_LLAMA3 },
  { "jina-v5-nano", &PRE_LLAMA3 },
  { "dbrx", &PRE_DBRX },
  { "smaug-bpe", &PRE_DBRX },
  { "qwen2", &PRE_QWEN2 },
  { "deepseek-r1-qwen", &PRE_QWEN2 },
  { "kormo", &PRE_QWEN2 },
  { "f2llmv2", &PRE_QWEN2 },
};

/* ---- lookups ------------------------------------------------------------------------ */

int32_t
sc_tokenizer_find (const ScTokenizer *tok, const char *text, size_t len)
{
  if (tok == NULL || (text == NULL && len > 0))
    return -1;
  uint32_t h = hash_text (text, len);
  for (size_t i = h & tok->token_map.mask;; i = (i + 1) & tok->token_map.mask)
    {
      const Slot *s = &tok->token_map.slots[i];
      if (s->value < 0)
        return -1;
      if (s->hash == h && tok->tokens[s->value].len == len
          && memcmp (sc_tokenizer_text_at (tok, s->value), text, len) == 0)
        return s->value;
    }
}

int32_t
sc_tokenizer_merge_rank (const ScTokenizer *tok, const char *a, size_t na, const char *b, size_t nb)
{
  uint32_t h = hash_pair (a, na, b, nb);
  for (size_t i = h & tok->merge_map.mask;; i = (i + 1) & tok->merge_map.mask)
    {
      const Slot *s = &tok->merge_map.slots[i];
      if (s->value < 0)
        return -1;
      const Merge *m = &tok->merges[s->value];
      if (s->hash == h && m->left_len == na && m->right_len == nb)
        {
          const char *left = tok->merge_texts + m->off;
          if (memcmp (left, a, na) == 0 && memcmp (left + na + 1, b, nb) == 0)
            return s->value;
        }
    }
}

/* ---- construction -------------------------------------------------------------------- */

/* Token texts llama.cpp's loader recognises (llama-vocab.cpp, "auto-detect special tokens by
 * text"). A token found in one of these lists is forced to CONTROL. */
#define FULLWIDTH_BAR "\xef\xbd\x9c" /* U+FF5C, DeepSeek's "｜" */
#define LOWER_BLOCK "\xe2\x96\x81"   /* U+2581, SentencePiece's "▁" */

static const char *const EOT_TEXTS[] = {
  "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
  "<EOT>", "_<EOT>", "[EOT]", "<" FULLWIDTH_BAR "end" LOWER_BLOCK "of" LOWER_BLOCK "sentence"
  FULLWIDTH_BAR ">", "<end_of_utterance>", NULL
};
static const char *const EOM_TEXTS[] = { "<|eom_id|>", NULL };
static const char *const FIM_TEXTS[SC_FIM_COUNT][9] = {
  [SC_FIM_PRE] = { "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
                   "<" FULLWIDTH_BAR "fim" LOWER_BLOCK "begin" FULLWIDTH_BAR ">", "<PRE>",
                   LOWER_BLOCK "<PRE>", "<|code_prefix|>", "<|prefix|>", NULL },
  [SC_FIM_SUF] = { "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
                   "<" FULLWIDTH_BAR "fim" LOWER_BLOCK "hole" FULLWIDTH_BAR ">", "<SUF>",
                   LOWER_BLOCK "<SUF>", "<|code_suffix|>", "<|suffix|>", NULL },
  [SC_FIM_MID] = { "<|fim_middle|>", "<fim-middle>", "<fim_middle>",
                   "<" FULLWIDTH_BAR "fim" LOWER_BLOCK "end" FULLWIDTH_BAR ">", "<MID>",
                   LOWER_BLOCK "<MID>", "<|code_middle|>", "<|middle|>", NULL },
  [SC_FIM_PAD] = { "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL },
  [SC_FIM_REP] = { "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", NULL },
  [SC_FIM_SEP] = { "<|file_sep|>", NULL },
};
/* Every token with one of these texts ends generation (and is forced to CONTROL). */
static const char *const EOG_TEXTS[] = {
  "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
  "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
  "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
  "<" FULLWIDTH_BAR "end" LOWER_BLOCK "of" LOWER_BLOCK "sentence" FULLWIDTH_BAR ">", "[e~[",
  NULL
};
/* gpt-oss: always rendered, so USER_DEFINED whatever the file says. */
static const char *const USER_DEFINED_TEXTS[] = {
  "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", NULL
};

void
sc_tokenizer_desc_init (ScTokenizerDesc *desc)
{
  if (desc == NULL)
    return;
  memset (desc, 0, sizeof *desc);
  desc->bos_id = desc->eos_id = desc->unk_id = desc->eot_id = desc->eom_id = -1;
  for (int i = 0; i < SC_FIM_COUNT; i++)
    desc->fim_ids[i] = -1;
}

void
sc_tokenizer_free (ScTokenizer *tok)
{
  if (tok == NULL)
    return;
  free (tok->tokens);
  free (tok->texts);
  free (tok->token_map.slots);
  free (tok->merges);
  free (tok->merge_texts);
  free (tok->merge_map.slots);
  free (tok->special);
  free (tok->scores);
  free (tok);
}

const PreKind *
sc_tokenizer_pre_kind (const char *name, const char **canonical)
{
  if (name == NULL || name[0] == '\0')
    name = "default"; /* llama.cpp: missing pre-tokenizer -> "default" (with a warning) */
  for (size_t i = 0; i < sizeof PRE_NAMES / sizeof PRE_NAMES[0]; i++)
    if (strcmp (PRE_NAMES[i].name, name) == 0)
      {
        *canonical = PRE_NAMES[i].name;
        return PRE_NAMES[i].kind;
      }
  return NULL;
}

static int32_t
find_cstr (const ScTokenizer *tok, const char *text)
{
  return sc_tokenizer_find (tok, text, strlen (text));
}

/* The lowest id whose text is in @list, or -1 (llama.cpp takes the first one its hash map
 * yields; real vocabularies have at most one). */
static int32_t
find_first_of (const ScTokenizer *tok, const char *const *list)
{
  int32_t best = -1;
  for (size_t i = 0; list[i] != NULL; i++)
    {
      int32_t id = find_cstr (tok, list[i]);
      if (id >= 0 && (best < 0 || id < best))
        best = id;
    }
  return best;
}

static void
force_control (ScTokenizer *tok, int32_t id)
{
  if (id >= 0)
    tok->tokens[id].type = SC_TOKEN_CONTROL;
}

static bool
eog_has_text (const ScTokenizer *tok, const char *text)
{
  int32_t id = find_cstr (tok, text);
  return id >= 0 && tok->tokens[id].eog;
}

/* llama.cpp's loader after the texts are in: end-of-turn / FIM detection by text, the
 * end-of-generation set, and its model-specific exceptions, in the loader's order. */
static void
mark_special_tokens (ScTokenizer *tok, const ScTokenizerDesc *desc)
{
  int32_t eot = desc->eot_id;
  int32_t eom = desc->eom_id;
  int32_t fim[SC_FIM_COUNT];

  if (eot < 0)
    force_control (tok, eot = find_first_of (tok, EOT_TEXTS));
  if (eom < 0)
    force_control (tok, eom = find_first_of (tok, EOM_TEXTS));
  for (int k = 0; k < SC_FIM_COUNT; k++)
    {
      fim[k] = desc->fim_ids[k];
      if (fim[k] < 0)
        force_control (tok, fim[k] = find_first_of (tok, FIM_TEXTS[k]));
    }

  int32_t eog_ids[] = { fim[SC_FIM_PAD], fim[SC_FIM_REP], fim[SC_FIM_SEP], tok->eos_id, eot, eom };
  for (size_t i = 0; i < sizeof eog_ids / sizeof eog_ids[0]; i++)
    if (eog_ids[i] >= 0)
      tok->tokens[eog_ids[i]].eog = true;
  for (size_t i = 0; EOG_TEXTS[i] != NULL; i++)
    {
      int32_t id = find_cstr (tok, EOG_TEXTS[i]);
      if (id >= 0)
        {
          tok->tokens[id].eog = true;
          force_control (tok, id);
        }
    }
  for (size_t i = 0; USER_DEFINED_TEXTS[i] != NULL; i++)
    {
      int32_t id = find_cstr (tok, USER_DEFINED_TEXTS[i]);
      if (id >= 0)
        tok->tokens[id].type = SC_TOKEN_USER_DEFINED;
    }

  /* o200k_harmony / solar-open: "<|end|>" does not end generation there */
  int32_t end_id = find_cstr (tok, "<|end|>");
  bool has_call = eog_has_text (tok, "<|call|>") || eog_has_text (tok, "<|calls|>");
  if (end_id >= 0 && tok->tokens[end_id].eog && has_call
      && (eog_has_text (tok, "<|return|>") || eog_has_text (tok, "<|flush|>")))
    {
      tok->tokens[end_id].eog = false;
      tok->tokens[end_id].type = SC_TOKEN_USER_DEFINED;
    }
  /* gemma4 / plamo2: "</s>" is an ordinary token there */
  int32_t s_id = find_cstr (tok, "</s>");
  if (s_id >= 0 && tok->tokens[s_id].eog
      && (eog_has_text (tok, "<|tool_response>") || eog_has_text (tok, "<|plamo:eos|>")))
    {
      tok->tokens[s_id].eog = false;
      tok->tokens[s_id].type = SC_TOKEN_NORMAL;
    }
}

typedef struct {
  uint32_t len;
  int32_t id;
} SpecialKey;

static int
special_cmp (const void *a, const void *b)
{
  const SpecialKey *x = a, *y = b;
  if (x->len != y->len)
    return x->len > y->len ? -1 : 1; /* longest first, as tokenizer_st_partition wants */
  return (x->id > y->id) - (x->id < y->id);
}

/* cache_special_tokens: CONTROL / USER_DEFINED / UNKNOWN ids by decreasing text length. */
static bool
build_special_cache (ScTokenizer *tok)
{
  uint32_t n = 0;
  for (uint32_t i = 0; i < tok->n_tokens; i++)
    {
      uint8_t t = tok->tokens[i].type;
      n += (t == SC_TOKEN_CONTROL || t == SC_TOKEN_USER_DEFINED || t == SC_TOKEN_UNKNOWN);
    }
  if (n == 0)
    return true;
  SpecialKey *keys = malloc (n * sizeof *keys);
  tok->special = malloc (n * sizeof *tok->special);
  if (keys == NULL || tok->special == NULL)
    {
      free (keys);
      return false;
    }
  n = 0;
  for (uint32_t i = 0; i < tok->n_tokens; i++)
    {
      uint8_t t = tok->tokens[i].type;
      if (t == SC_TOKEN_CONTROL || t == SC_TOKEN_USER_DEFINED || t == SC_TOKEN_UNKNOWN)
        keys[n++] = (SpecialKey) { tok->tokens[i].len, (int32_t) i };
    }
  qsort (keys, n, sizeof *keys, special_cmp);
  for (uint32_t i = 0; i < n; i++)
    tok->special[i] = keys[i].id;
  tok->n_special = n;
  free (keys);
  return true;
}

/* Copies the token texts (an empty one becomes "[EMPTY_<id>]") and fills the text -> id
 * table. */
static ScStatus
load_tokens (ScTokenizer *tok, const ScTokenizerDesc *desc, ScError *err)
{
  size_t total = 0;
  char empty[32];

  for (uint32_t i = 0; i < desc->n_tokens; i++)
    {
      if (desc->tokens[i] == NULL && desc->token_lens[i] > 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "token %u: NULL text", i);
      size_t len = desc->token_lens[i] > 0 ? desc->token_lens[i]
                                           : (size_t) snprintf (empty, sizeof empty, "[EMPTY_%u]", i);
      if (total > SIZE_MAX - len)
        return sc_error_set (err, SC_ERR_RANGE, "token texts overflow size_t");
      total += len;
    }

  tok->tokens = calloc (desc->n_tokens, sizeof *tok->tokens);
  tok->texts = malloc (total > 0 ? total : 1);
  if (tok->tokens == NULL || tok->texts == NULL || !table_init (&tok->token_map, desc->n_tokens))
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory for %u tokens", desc->n_tokens);

  size_t off = 0;
  for (uint32_t i = 0; i < desc->n_tokens; i++)
    {
      Token *t = &tok->tokens[i];
      const char *src = desc->tokens[i];
      size_t len = desc->token_lens[i];
      if (len == 0)
        {
          len = (size_t) snprintf (empty, sizeof empty, "[EMPTY_%u]", i);
          src = empty;
        }
      memcpy (tok->texts + off, src, len);
      t->off = off;
      t->len = (uint32_t) len;
      off += len;

      /* A type outside llama.cpp's enum changes how the token is matched (issue 25: 99 and
       * -1 were read as UNDEFINED): refused by its index and value. */
      int32_t type = desc->token_types != NULL ? desc->token_types[i] : SC_TOKEN_NORMAL;
      if (type < SC_TOKEN_UNDEFINED || type > SC_TOKEN_BYTE)
        return sc_error_set (err, SC_ERR_FORMAT, "token %u has type %d, not one of llama.cpp's "
                             "token types (%d to %d)", i, type, SC_TOKEN_UNDEFINED,
                             SC_TOKEN_BYTE);
      t->type = (uint8_t) type;

      uint32_t h = hash_text (tok->texts + t->off, len);
      size_t j = h & tok->token_map.mask;
      for (;; j = (j + 1) & tok->token_map.mask)
        {
          Slot *s = &tok->token_map.slots[j];
          if (s->value < 0)
            {
              *s = (Slot) { h, (int32_t) i };
              break;
            }
          if (s->hash == h && tok->tokens[s->value].len == len
              && memcmp (sc_tokenizer_text_at (tok, s->value), sc_tokenizer_text_at (tok, (int32_t) i), len) == 0)
            return sc_error_set (err, SC_ERR_FORMAT, "tokens %d and %u have the same text",
                                 s->value, i);
        }
    }
  tok->n_tokens = desc->n_tokens;
  return SC_OK;
}

/* Copies the merges and fills the (left, right) -> rank table. Like llama.cpp, "left right"
 * splits at the first space after byte 0, a merge without one can never apply, and a repeated
 * pair keeps its first (lowest) rank. */
static ScStatus
load_merges (ScTokenizer *tok, const ScTokenizerDesc *desc, ScError *err)
{
  size_t total = 0;

  for (uint32_t i = 0; i < desc->n_merges; i++)
    {
      if (desc->merges[i] == NULL && desc->merge_lens[i] > 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "merge %u: NULL text", i);
      if (total > SIZE_MAX - desc->merge_lens[i])
        return sc_error_set (err, SC_ERR_RANGE, "merge texts overflow size_t");
      total += desc->merge_lens[i];
    }

  tok->merges = calloc (desc->n_merges > 0 ? desc->n_merges : 1, sizeof *tok->merges);
  tok->merge_texts = malloc (total > 0 ? total : 1);
  if (tok->merges == NULL || tok->merge_texts == NULL
      || !table_init (&tok->merge_map, desc->n_merges))
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory for %u merges", desc->n_merges);

  size_t off = 0;
  for (uint32_t i = 0; i < desc->n_merges; i++)
    {
      const char *src = desc->merges[i];
      uint32_t len = desc->merge_lens[i];
      Merge *m = &tok->merges[i];
      if (len > 0)
        memcpy (tok->merge_texts + off, src, len);
      m->off = off;
      off += len;

      const char *space = len > 1 ? memchr (src + 1, ' ', len - 1) : NULL;
      if (space == NULL || space == src + len - 1)
        continue; /* no right half: llama.cpp ranks the pair ("", ""), which never occurs */
      m->left_len = (uint32_t) (space - src);
      m->right_len = len - m->left_len - 1;

      const char *left = tok->merge_texts + m->off;
      const char *right = left + m->left_len + 1;
      if (sc_tokenizer_merge_rank (tok, left, m->left_len, right, m->right_len) >= 0)
        continue;
      uint32_t h = hash_pair (left, m->left_len, right, m->right_len);
      size_t j = h & tok->merge_map.mask;
      while (tok->merge_map.slots[j].value >= 0)
        j = (j + 1) & tok->merge_map.mask;
      tok->merge_map.slots[j] = (Slot) { h, (int32_t) i };
    }
  tok->n_merges = desc->n_merges;
  return SC_OK;
}

static ScStatus
check_id (const ScTokenizerDesc *desc, int32_t id, const char *what, ScError *err)
{
  if (id < -1 || (id >= 0 && (uint32_t) id >= desc->n_tokens))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s id %d is outside the vocabulary (%u tokens)",
                         what, id, desc->n_tokens);
  return SC_OK;
}

static ScStatus
check_desc (const ScTokenizerDesc *desc, ScError *err)
{
  static const char *const fim_names[SC_FIM_COUNT] = {
    "FIM prefix", "FIM suffix", "FIM middle", "FIM pad", "FIM repo", "FIM separator"
  };
  ScStatus st;

  if (desc->n_tokens == 0 || desc->tokens == NULL || desc->token_lens == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "the vocabulary is empty");
  if (desc->n_tokens > (uint32_t) INT32_MAX || desc->n_merges > (uint32_t) INT32_MAX)
    return sc_error_set (err, SC_ERR_RANGE, "%u tokens / %u merges: more than INT32_MAX",
                         desc->n_tokens, desc->n_merges);
  if (desc->n_merges > 0 && (desc->merges == NULL || desc->merge_lens == NULL))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%u merges but no merge array", desc->n_merges);
  if ((st = check_id (desc, desc->bos_id, "BOS", err)) != SC_OK
      || (st = check_id (desc, desc->eos_id, "EOS", err)) != SC_OK
      || (st = check_id (desc, desc->unk_id, "UNK", err)) != SC_OK
      || (st = check_id (desc, desc->eot_id, "EOT", err)) != SC_OK
      || (st = check_id (desc, desc->eom_id, "EOM", err)) != SC_OK)
    return st;
  for (int k = 0; k < SC_FIM_COUNT; k++)
    if ((st = check_id (desc, desc->fim_ids[k], fim_names[k], err)) != SC_OK)
      return st;
  if (desc->add_bos && desc->bos_id < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "add_bos is set but there is no BOS token");
  if (desc->add_eos && desc->eos_id < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "add_eos is set but there is no EOS token");
  return SC_OK;
}

ScStatus
sc_tokenizer_new (const ScTokenizerDesc *desc, ScTokenizer **out, ScError *err)
{
  ScTokenizer *tok;
  ScStatus st;

  if (desc == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_tokenizer_new: NULL argument");
  if ((st = check_desc (desc, err)) != SC_OK)
    return st;

  tok = calloc (1, sizeof *tok);
  if (tok == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory for the tokenizer");
  tok->spm = desc->model == SC_TOKENIZER_SPM;
  tok->add_space_prefix = desc->add_space_prefix;
  if (tok->spm) /* no pre-tokenizer: the whole fragment is one piece */
    {
      tok->pre = NULL;
      tok->pre_name = "spm";
    }
  else
    tok->pre = sc_tokenizer_pre_kind (desc->pre, &tok->pre_name);
  if (tok->pre == NULL && !tok->spm)
    {
      sc_tokenizer_free (tok);
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "pre-tokenizer '%.64s' is not supported",
                           desc->pre);
    }
  tok->bos_id = desc->bos_id;
  tok->eos_id = desc->eos_id;
  tok->unk_id = desc->unk_id;
  tok->add_bos = desc->add_bos;
  tok->add_eos = desc->add_eos;

  if ((st = load_tokens (tok, desc, err)) != SC_OK
      || (st = load_merges (tok, desc, err)) != SC_OK)
    {
      sc_tokenizer_free (tok);
      return st;
    }
  mark_special_tokens (tok, desc);
  if (!build_special_cache (tok))
    {
      sc_tokenizer_free (tok);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory for the special-token list");
    }

  if (tok->spm)
    {
      tok->scores = calloc (tok->n_tokens, sizeof *tok->scores);
      if (tok->scores == NULL)
        {
          sc_tokenizer_free (tok);
          return sc_error_set (err, SC_ERR_NOMEM, "out of memory for token scores");
        }
      if (desc->scores != NULL)
        memcpy (tok->scores, desc->scores, tok->n_tokens * sizeof *tok->scores);
    }
  /* byte_to_token: "<0xNN>", else the byte itself as a token (llama.cpp's SPM fallback),
   * else UNK where llama.cpp would throw */
  for (int b = 0; b < 256; b++)
    {
      char hex[8], one = (char) b;
      int hex_len = snprintf (hex, sizeof hex, "<0x%02X>", b);
      int32_t id = sc_tokenizer_find (tok, hex, (size_t) hex_len);
      if (id < 0)
        id = sc_tokenizer_find (tok, &one, 1);
      tok->byte_ids[b] = id >= 0 ? id : tok->unk_id;
    }
  for (int b = 0; b < 256; b++)
    {
      char utf8[4]; /* mapped code points are below U+0144: two bytes at most */
      size_t n = sc_utf8_encode (sc_unicode_byte_to_cpt ((uint8_t) b), utf8);
      memcpy (tok->byte_utf8[b], utf8, n);
      tok->byte_utf8_len[b] = (uint8_t) n;
    }
  *out = tok;
  return SC_OK;
}
/* ---- decoding and accessors ---------------------------------------------------------- */

static inline void
put_bytes (char *buf, size_t cap, size_t *n, const char *src, size_t len)
{
  if (*n < cap)
    memcpy (buf + *n, src, len < cap - *n ? len : cap - *n);
  *n += len;
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

size_t
sc_token_to_bytes (const ScTokenizer *tok, int32_t id, bool special, char *buf, size_t cap)
{
  if (tok == NULL || id < 0 || (uint32_t) id >= tok->n_tokens)
    return 0;
  if (buf == NULL)
    cap = 0;

  const Token *t = &tok->tokens[id];
  const char *text = sc_tokenizer_text_at (tok, id);
  size_t n = 0;

  switch (t->type)
    {
    case SC_TOKEN_CONTROL:
    case SC_TOKEN_UNKNOWN:
      if (special)
        put_bytes (buf, cap, &n, text, t->len);
      break;
    case SC_TOKEN_USER_DEFINED:
      put_bytes (buf, cap, &n, text, t->len);
      break;
    case SC_TOKEN_NORMAL:
      if (tok->spm) /* llama_unescape_whitespace */
        {
          for (size_t off = 0; off < t->len;)
            if (t->len - off >= 3 && memcmp (text + off, LOWER_BLOCK, 3) == 0)
              {
                put_bytes (buf, cap, &n, " ", 1);
                off += 3;
              }
            else
              put_bytes (buf, cap, &n, text + off++, 1);
          break;
        }
      for (size_t off = 0; off < t->len;)
        {
          size_t used;
          uint32_t cpt = sc_utf8_decode (text + off, t->len - off, &used);
          int byte = sc_unicode_cpt_to_byte (cpt);
          off += used;
          if (byte >= 0)
            {
              char c = (char) byte;
              put_bytes (buf, cap, &n, &c, 1);
            }
          else
            {
              char utf8[4];
              put_bytes (buf, cap, &n, utf8, sc_utf8_encode (cpt, utf8));
            }
        }
      break;
    case SC_TOKEN_BYTE:
      {
        /* "<0xAB>": llama.cpp reads two hex digits at offset 3 with strtol */
        int value = 0;
        for (uint32_t i = 3; i < 5 && i < t->len && hex_value (text[i]) >= 0; i++)
          value = value * 16 + hex_value (text[i]);
        char c = (char) value;
        if (t->len >= 4)
          put_bytes (buf, cap, &n, &c, 1);
      }
      break;
    default:
      break;
    }
  return n;
}

uint32_t
sc_tokenizer_n_vocab (const ScTokenizer *tok)
{
  return tok != NULL ? tok->n_tokens : 0;
}

ScTokenType
sc_tokenizer_token_type (const ScTokenizer *tok, int32_t id)
{
  if (tok == NULL || id < 0 || (uint32_t) id >= tok->n_tokens)
    return SC_TOKEN_UNDEFINED;
  return (ScTokenType) tok->tokens[id].type;
}

const char *
sc_tokenizer_token_text (const ScTokenizer *tok, int32_t id, size_t *len)
{
  if (tok == NULL || id < 0 || (uint32_t) id >= tok->n_tokens)
    {
      if (len != NULL)
        *len = 0;
      return NULL;
    }
  if (len != NULL)
    *len = tok->tokens[id].len;
  return sc_tokenizer_text_at (tok, id);
}

int32_t
sc_tokenizer_bos (const ScTokenizer *tok)
{
  return tok != NULL ? tok->bos_id : -1;
}

int32_t
sc_tokenizer_eos (const ScTokenizer *tok)
{
  return tok != NULL ? tok->eos_id : -1;
}

bool
sc_tokenizer_adds_bos (const ScTokenizer *tok)
{
  return tok != NULL && tok->add_bos;
}

bool
sc_tokenizer_adds_eos (const ScTokenizer *tok)
{
  return tok != NULL && tok->add_eos;
}

const char *
sc_tokenizer_pre (const ScTokenizer *tok)
{
  return tok != NULL ? tok->pre_name : "";
}

bool
sc_tokenizer_is_eog (const ScTokenizer *tok, int32_t id)
{
  if (tok == NULL || id < 0 || (uint32_t) id >= tok->n_tokens)
    return false;
  return tok->tokens[id].eog;
}
