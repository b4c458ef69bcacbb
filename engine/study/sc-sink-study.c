/* sc-sink-study.c — the three inputs of the attention-sink measurement and one observed
 * pass per input (sc-sink-study.h has the definitions). */
#include "study/sc-sink-study.h"

#include "analysis/sc-sink.h"
#include "core/sc-random.h"
#include "text/sc-tokenizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const input_ids[SC_SINK_N_INPUTS] = {
  [SC_SINK_INPUT_NATURAL] = "natural",
  [SC_SINK_INPUT_RANDOM] = "random",
  [SC_SINK_INPUT_REPEATED] = "repeated",
};

const char *
sc_sink_input_id (ScSinkInput input)
{
  return (unsigned) input < SC_SINK_N_INPUTS ? input_ids[input] : NULL;
}

/* The random input's ids after the prefix: uniform over the ordinary tokens (header). */
static ScStatus
random_ids (const ScModel *model, uint64_t seed, int32_t *ids, int n, ScError *err)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const uint32_t nv_tok = sc_tokenizer_n_vocab (tok), nv_model = sc_model_info (model)->n_vocab;
  const uint32_t nv = nv_tok < nv_model ? nv_tok : nv_model;
  const int32_t bos = sc_tokenizer_bos (tok), eos = sc_tokenizer_eos (tok);
  int32_t *pool = malloc ((size_t) (nv > 0 ? nv : 1) * sizeof *pool);
  uint64_t state = seed;
  int m = 0;

  if (pool == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "sinks: out of memory for %u tokens", nv);
  for (uint32_t id = 0; id < nv; id++)
    if (sc_tokenizer_token_type (tok, (int32_t) id) == SC_TOKEN_NORMAL && (int32_t) id != bos
        && (int32_t) id != eos)
      pool[m++] = (int32_t) id;
  if (m < 1)
    {
      free (pool);
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "sinks: %s has no ordinary (NORMAL) "
                           "tokens to draw random ids from", sc_model_info (model)->name);
    }
  for (int i = 0; i < n; i++)
    ids[i] = pool[sc_splitmix64 (&state) % (uint64_t) m];
  free (pool);
  return SC_OK;
}

/* The ids of @text without BOS; caller frees *@out. */
static ScStatus
encode (const ScTokenizer *tok, const char *text, int32_t **out, size_t *n, ScError *err)
{
  return sc_tokenize (tok, text, strlen (text), false, false, out, n, err);
}

ScStatus
sc_sink_input_ids (const ScModel *model, ScSinkInput input, const ScSinkParams *p, int32_t *ids,
                   bool *bos, ScError *err)
{
  const ScTokenizer *tok;
  int32_t *text = NULL;
  size_t n_text = 0;
  int pre, T;
  ScStatus st;

  if (model == NULL || p == NULL || ids == NULL || (unsigned) input >= SC_SINK_N_INPUTS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sinks: bad input arguments");
  T = p->n_tokens;
  if (T < 2)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sinks: an input needs at least 2 tokens "
                         "(T = %d)", T);
  if ((int64_t) T > (int64_t) sc_model_info (model)->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "sinks: %d tokens exceed the context of %s (%u "
                         "tokens)", T, sc_model_info (model)->name,
                         sc_model_info (model)->n_ctx_train);
  tok = sc_model_tokenizer (model);
  pre = !p->no_bos && sc_tokenizer_adds_bos (tok) && sc_tokenizer_bos (tok) >= 0 ? 1 : 0;

  switch (input)
    {
    case SC_SINK_INPUT_NATURAL:
      if ((st = encode (tok, SC_SINK_NATURAL_TEXT, &text, &n_text, err)) != SC_OK)
        return st;
      if ((int64_t) n_text < (int64_t) T - pre)
        {
          free (text);
          return sc_error_set (err, SC_ERR_RANGE, "sinks: the natural text is %zu tokens "
                               "long with %s's tokenizer%s; choose at most %d tokens",
                               n_text, sc_model_info (model)->name, pre ? " (+ BOS)" : "",
                               (int) n_text + pre);
        }
      memcpy (ids + pre, text, (size_t) (T - pre) * sizeof *ids);
      free (text);
      break;
    case SC_SINK_INPUT_RANDOM:
      if ((st = random_ids (model, p->seed, ids + pre, T - pre, err)) != SC_OK)
        return st;
      break;
    case SC_SINK_INPUT_REPEATED:
      if ((st = encode (tok, SC_SINK_REPEATED_WORD, &text, &n_text, err)) != SC_OK)
        return st;
      if (n_text != 1)
        {
          free (text);
          return sc_error_set (err, SC_ERR_UNSUPPORTED, "sinks: '%s' is %zu tokens with %s's "
                               "tokenizer, not one", SC_SINK_REPEATED_WORD, n_text,
                               sc_model_info (model)->name);
        }
      for (int i = pre; i < T; i++)
        ids[i] = text[0];
      free (text);
      break;
    case SC_SINK_N_INPUTS:
      break;
    }
  if (pre)
    ids[0] = sc_tokenizer_bos (tok);
  if (bos != NULL)
    *bos = pre == 1;
  return SC_OK;
}

typedef struct {
  double *mass;
  int n_heads;
  ScError *err;
  ScStatus status; /* of the first failed mass */
} Study;

static bool
observe (void *user, int layer, int head, const float *probs, int n_query, int n_key)
{
  Study *s = user;

  s->status = sc_sink_first_mass (probs, n_query, n_key,
                                  &s->mass[(size_t) layer * s->n_heads + head], s->err);
  return s->status == SC_OK;
}

ScStatus
sc_sink_study_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                   double *mass, ScError *err)
{
  const ScModelInfo *info;
  Study study = { 0 };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  float *logits;
  ScStatus st;

  if (session == NULL || model == NULL || ids == NULL || n < 1 || mass == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sinks: bad run arguments");
  info = sc_model_info (model);
  if ((logits = malloc ((size_t) info->n_vocab * sizeof *logits)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "sinks: out of memory for the logits");
  for (size_t k = 0; k < (size_t) info->n_layers * info->n_heads; k++)
    mass[k] = NAN; /* a head the pass never showed stays NaN */
  study.mass = mass;
  study.n_heads = (int) info->n_heads;
  study.err = err;
  obs.observe = observe;
  obs.user = &study;
  opt.observer = &obs;
  st = sc_forward (session, ids, n, &opt, logits, err);
  if (st != SC_OK && study.status != SC_OK) /* the observer's own failure, already in @err */
    st = study.status;
  free (logits);
  return st;
}
