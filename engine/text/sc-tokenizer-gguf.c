/* sc-tokenizer-gguf.c — sc_tokenizer_new_from_gguf(): a tokenizer from tokenizer.ggml.* keys.
 *
 * Reads the keys llama.cpp's loader reads for a "gpt2" or "llama" vocabulary, applies its
 * defaults, and
 * hands everything to sc_tokenizer_new() as borrowed views into the GGUF mapping. Every key is
 * checked for its type; messages name the key. Not here: any other tokenizer model.
 */
#include "text/sc-tokenizer-private.h"

#include <stdlib.h>
#include <string.h>

/* Reads an optional token-id key into *@id: absent keeps the default. A value past the
 * vocabulary is refused, naming the key (llama.cpp warns "bad special token" and keeps its
 * default, which silently changed what a run was: a BOS id of 1 is <eos> in some
 * vocabularies, and an unknown-token id of 0 a real token — issue 25). */
static ScStatus
gguf_opt_id (const ScGguf *g, const char *key, uint32_t n_tokens, int32_t *id, ScError *err)
{
  uint32_t v;
  if (sc_gguf_find_kv (g, key) == NULL)
    return SC_OK;
  ScStatus st = sc_gguf_get_u32 (g, key, &v, err);
  if (st != SC_OK)
    return st;
  if (v >= n_tokens)
    return sc_error_set (err, SC_ERR_FORMAT, "'%s' is %u, beyond the vocabulary of %u tokens",
                         key, v, n_tokens);
  *id = (int32_t) v;
  return SC_OK;
}

static ScStatus
gguf_opt_bool (const ScGguf *g, const char *key, bool *value, ScError *err)
{
  if (sc_gguf_find_kv (g, key) == NULL)
    return SC_OK;
  return sc_gguf_get_bool (g, key, value, err);
}

/* Borrowed views of a GGUF string array as the (pointers, lengths) pair ScTokenizerDesc
 * takes; the caller frees both arrays. */
static ScStatus
gguf_str_views (const ScGgufArray *arr, const char *key, const char ***ptrs, uint32_t **lens,
                ScError *err)
{
  size_t n = (size_t) arr->count;
  *ptrs = malloc ((n > 0 ? n : 1) * sizeof **ptrs);
  *lens = malloc ((n > 0 ? n : 1) * sizeof **lens);
  if (*ptrs == NULL || *lens == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory reading '%s'", key);
  for (size_t i = 0; i < n; i++)
    {
      if (arr->strs[i].len > UINT32_MAX)
        return sc_error_set (err, SC_ERR_RANGE, "'%s'[%zu] is %llu bytes long", key, i,
                             (unsigned long long) arr->strs[i].len);
      (*ptrs)[i] = arr->strs[i].ptr;
      (*lens)[i] = (uint32_t) arr->strs[i].len;
    }
  return SC_OK;
}

/* A "llama" (SentencePiece-style) vocabulary: llama.cpp's loader reads tokens, scores and
 * token types, defaults BOS 1, EOS 2, UNK 0, add_bos true, add_space_prefix true, and has no
 * merges and no pre-tokenizer. */
static ScStatus
spm_from_gguf (const ScGguf *g, ScTokenizer **out, ScError *err)
{
  ScTokenizerDesc desc;
  const ScGgufArray *tokens, *scores = NULL, *types = NULL;
  const char **tok_ptrs = NULL;
  uint32_t *tok_lens = NULL;
  int32_t *type_values = NULL;
  float *score_values = NULL;
  ScStatus st;

  sc_tokenizer_desc_init (&desc);
  desc.model = SC_TOKENIZER_SPM;
  if ((st = sc_gguf_get_arr (g, "tokenizer.ggml.tokens", SC_GGUF_TYPE_STRING, &tokens, err))
      != SC_OK)
    return st;
  if (tokens->count > INT32_MAX)
    return sc_error_set (err, SC_ERR_RANGE, "%llu tokens: more than INT32_MAX",
                         (unsigned long long) tokens->count);
  desc.n_tokens = (uint32_t) tokens->count;
  if (sc_gguf_find_kv (g, "tokenizer.ggml.scores") != NULL)
    {
      if ((st = sc_gguf_get_arr (g, "tokenizer.ggml.scores", SC_GGUF_TYPE_FLOAT32, &scores, err))
          != SC_OK)
        return st;
      if (scores->count < tokens->count)
        return sc_error_set (err, SC_ERR_FORMAT, "'tokenizer.ggml.scores' has %llu entries for "
                             "%u tokens", (unsigned long long) scores->count, desc.n_tokens);
    }
  if (sc_gguf_find_kv (g, "tokenizer.ggml.token_type") != NULL)
    {
      if ((st = sc_gguf_get_arr (g, "tokenizer.ggml.token_type", SC_GGUF_TYPE_INT32, &types,
                                 err)) != SC_OK)
        return st;
      if (types->count < tokens->count)
        return sc_error_set (err, SC_ERR_FORMAT, "'tokenizer.ggml.token_type' has %llu entries "
                             "for %u tokens", (unsigned long long) types->count, desc.n_tokens);
    }
  desc.bos_id = 1 < desc.n_tokens ? 1 : -1;
  desc.eos_id = 2 < desc.n_tokens ? 2 : -1;
  desc.unk_id = 0;
  desc.add_bos = true;
  desc.add_space_prefix = true;
  if ((st = gguf_opt_id (g, "tokenizer.ggml.bos_token_id", desc.n_tokens, &desc.bos_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.eos_token_id", desc.n_tokens, &desc.eos_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.eot_token_id", desc.n_tokens, &desc.eot_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.eom_token_id", desc.n_tokens, &desc.eom_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.unknown_token_id", desc.n_tokens, &desc.unk_id, err)) != SC_OK
      || (st = gguf_opt_bool (g, "tokenizer.ggml.add_bos_token", &desc.add_bos, err)) != SC_OK
      || (st = gguf_opt_bool (g, "tokenizer.ggml.add_eos_token", &desc.add_eos, err)) != SC_OK
      || (st = gguf_opt_bool (g, "tokenizer.ggml.add_space_prefix", &desc.add_space_prefix, err))
             != SC_OK)
    return st;
  if (desc.add_bos && desc.bos_id < 0)
    return sc_error_set (err, SC_ERR_FORMAT, "tokenizer.ggml.add_bos_token is set but there is no BOS token");
  if (desc.add_eos && desc.eos_id < 0)
    return sc_error_set (err, SC_ERR_FORMAT, "tokenizer.ggml.add_eos_token is set but there is no EOS token");

  if ((st = gguf_str_views (tokens, "tokenizer.ggml.tokens", &tok_ptrs, &tok_lens, err)) != SC_OK)
    goto out;
  type_values = types != NULL ? malloc (desc.n_tokens * sizeof *type_values) : NULL;
  score_values = scores != NULL ? malloc (desc.n_tokens * sizeof *score_values) : NULL;
  if ((types != NULL && type_values == NULL) || (scores != NULL && score_values == NULL))
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "out of memory reading token types and scores");
      goto out;
    }
  /* the arrays are unaligned little-endian bytes in the mapping */
  for (uint32_t i = 0; types != NULL && i < desc.n_tokens; i++)
    memcpy (&type_values[i], (const char *) types->data + 4 * (size_t) i, 4);
  for (uint32_t i = 0; scores != NULL && i < desc.n_tokens; i++)
    memcpy (&score_values[i], (const char *) scores->data + 4 * (size_t) i, 4);
  desc.tokens = tok_ptrs;
  desc.token_lens = tok_lens;
  desc.token_types = type_values;
  desc.scores = score_values;
  st = sc_tokenizer_new (&desc, out, err);

out:
  free (tok_ptrs);
  free (tok_lens);
  free (type_values);
  free (score_values);
  return st;
}

ScStatus
sc_tokenizer_new_from_gguf (const ScGguf *g, ScTokenizer **out, ScError *err)
{
  static const char *const fim_keys[SC_FIM_COUNT] = {
    "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.fim_suf_token_id",
    "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id",
  };
  /* deprecated spellings of the first three, read after them as llama.cpp does */
  static const char *const fim_old_keys[3] = {
    "tokenizer.ggml.prefix_token_id", "tokenizer.ggml.suffix_token_id",
    "tokenizer.ggml.middle_token_id",
  };
  ScTokenizerDesc desc;
  ScGgufStr model, pre = { "", 0 };
  const ScGgufArray *tokens, *merges, *types = NULL;
  const char **tok_ptrs = NULL, **merge_ptrs = NULL;
  uint32_t *tok_lens = NULL, *merge_lens = NULL;
  int32_t *type_values = NULL;
  char pre_buf[128], shown[64];
  ScStatus st;

  if (g == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_tokenizer_new_from_gguf: NULL argument");
  sc_tokenizer_desc_init (&desc);

  if ((st = sc_gguf_get_str (g, "tokenizer.ggml.model", &model, err)) != SC_OK)
    return st;
  if (sc_gguf_str_eq (model, "llama"))
    return spm_from_gguf (g, out, err);
  if (!sc_gguf_str_eq (model, "gpt2"))
    return sc_error_set (err, SC_ERR_UNSUPPORTED,
                         "tokenizer model '%s' is not supported (\"gpt2\", byte-level BPE, and "
                         "\"llama\", SentencePiece-style)",
                         sc_gguf_str_copy (model, shown, sizeof shown));
  if (sc_gguf_find_kv (g, "tokenizer.ggml.pre") != NULL
      && (st = sc_gguf_get_str (g, "tokenizer.ggml.pre", &pre, err)) != SC_OK)
    return st;
  if (pre.len >= sizeof pre_buf)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "pre-tokenizer '%s...' is not supported",
                         sc_gguf_str_copy (pre, shown, sizeof shown));
  desc.pre = sc_gguf_str_copy (pre, pre_buf, sizeof pre_buf);

  if ((st = sc_gguf_get_arr (g, "tokenizer.ggml.tokens", SC_GGUF_TYPE_STRING, &tokens, err)) != SC_OK
      || (st = sc_gguf_get_arr (g, "tokenizer.ggml.merges", SC_GGUF_TYPE_STRING, &merges, err)) != SC_OK)
    return st;
  if (tokens->count > INT32_MAX || merges->count > INT32_MAX)
    return sc_error_set (err, SC_ERR_RANGE, "%llu tokens / %llu merges: more than INT32_MAX",
                         (unsigned long long) tokens->count, (unsigned long long) merges->count);
  desc.n_tokens = (uint32_t) tokens->count;
  desc.n_merges = (uint32_t) merges->count;

  if (sc_gguf_find_kv (g, "tokenizer.ggml.token_type") != NULL)
    {
      if ((st = sc_gguf_get_arr (g, "tokenizer.ggml.token_type", SC_GGUF_TYPE_INT32, &types,
                                 err)) != SC_OK)
        return st;
      if (types->count < tokens->count)
        return sc_error_set (err, SC_ERR_FORMAT,
                             "'tokenizer.ggml.token_type' has %llu entries for %u tokens",
                             (unsigned long long) types->count, desc.n_tokens);
    }

  /* defaults of llama.cpp's loader for a "gpt2" vocabulary */
  const char *canonical = NULL;
  const PreKind *kind = sc_tokenizer_pre_kind (desc.pre, &canonical);
  desc.bos_id = desc.eos_id = 11 < desc.n_tokens ? 11 : -1;
  desc.add_bos = kind != NULL && kind->add_bos;

  if ((st = gguf_opt_id (g, "tokenizer.ggml.bos_token_id", desc.n_tokens, &desc.bos_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.eos_token_id", desc.n_tokens, &desc.eos_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.eot_token_id", desc.n_tokens, &desc.eot_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.eom_token_id", desc.n_tokens, &desc.eom_id, err)) != SC_OK
      || (st = gguf_opt_id (g, "tokenizer.ggml.unknown_token_id", desc.n_tokens, &desc.unk_id, err)) != SC_OK
      || (st = gguf_opt_bool (g, "tokenizer.ggml.add_bos_token", &desc.add_bos, err)) != SC_OK
      || (st = gguf_opt_bool (g, "tokenizer.ggml.add_eos_token", &desc.add_eos, err)) != SC_OK)
    return st;
  for (int k = 0; k < SC_FIM_COUNT; k++)
    if ((st = gguf_opt_id (g, fim_keys[k], desc.n_tokens, &desc.fim_ids[k], err)) != SC_OK)
      return st;
  for (int k = 0; k < 3; k++)
    if ((st = gguf_opt_id (g, fim_old_keys[k], desc.n_tokens, &desc.fim_ids[k], err)) != SC_OK)
      return st;
  if (desc.add_bos && desc.bos_id < 0)
    return sc_error_set (err, SC_ERR_FORMAT, "tokenizer.ggml.add_bos_token is set but there is no BOS token");
  if (desc.add_eos && desc.eos_id < 0)
    return sc_error_set (err, SC_ERR_FORMAT, "tokenizer.ggml.add_eos_token is set but there is no EOS token");

  if ((st = gguf_str_views (tokens, "tokenizer.ggml.tokens", &tok_ptrs, &tok_lens, err)) != SC_OK
      || (st = gguf_str_views (merges, "tokenizer.ggml.merges", &merge_ptrs, &merge_lens, err)) != SC_OK)
    goto out;
  if (types != NULL)
    {
      type_values = malloc ((desc.n_tokens > 0 ? desc.n_tokens : 1) * sizeof *type_values);
      if (type_values == NULL)
        {
          st = sc_error_set (err, SC_ERR_NOMEM, "out of memory reading token types");
          goto out;
        }
      for (uint32_t i = 0; i < desc.n_tokens; i++)
        memcpy (&type_values[i], (const char *) types->data + 4 * (size_t) i, 4);
    }
  desc.tokens = tok_ptrs;
  desc.token_lens = tok_lens;
  desc.token_types = type_values;
  desc.merges = merge_ptrs;
  desc.merge_lens = merge_lens;
  st = sc_tokenizer_new (&desc, out, err);

out:
  free (tok_ptrs);
  free (tok_lens);
  free (merge_ptrs);
  free (merge_lens);
  free (type_values);
  return st;
}
