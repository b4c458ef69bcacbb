/* saccade-capture-input.c — the text, chat template, ids and greedy continuation of a
 * capture (see saccade-capture-input.h). The template is app/core/saccade-model.c's, the
 * decoding engine/forward/sc-predict.c's: this file only puts them together for
 * `saccade capture` (app/cli/saccade-cli-store.c) and the window's capture task
 * (saccade-capture-task.c).
 */
#define G_LOG_DOMAIN "saccade-capture"

#include "app/core/saccade-capture-input.h"

#include <string.h>

#include "engine/forward/sc-predict.h"
#include "engine/store/sc-store-predictions.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"

void
saccade_capture_input_clear (SaccadeCaptureInput *in)
{
  g_clear_pointer (&in->ids, g_array_unref);
  if (in->text != NULL)
    g_string_free (in->text, TRUE);
  in->text = NULL;
  in->n_prompt = 0;
}

gboolean
saccade_capture_input_init (SaccadeCaptureInput *in, ScModel *model, const char *text,
                            gssize len, gboolean parse_special, gboolean chat, GError **error)
{
  g_autofree char *prompt = NULL;
  gsize prompt_len = 0;

  if (len < 0)
    len = (gssize) strlen (text);
  if (chat)
    {
      if ((prompt = saccade_chat_prompt (model, text, len, &prompt_len, error)) == NULL)
        return FALSE;
      text = prompt;
      len = (gssize) prompt_len;
    }
  if ((in->ids = saccade_tokenize (model, text, len, parse_special, error)) == NULL)
    return FALSE;
  in->n_prompt = in->ids->len;
  in->text = g_string_new_len (text, len);
  return TRUE;
}

gboolean
saccade_capture_input_generate (SaccadeCaptureInput *in, ScSession *session, int n_new,
                                ScProgressFn progress, void *progress_user, GError **error)
{
  const ScTokenizer *tok = sc_model_tokenizer (sc_session_model (session));
  guint n_before = in->ids->len;
  ScError err = { 0 };
  int n = 0;
  gboolean ok;

  g_return_val_if_fail (n_new >= 0, FALSE);
  g_array_set_size (in->ids, n_before + (guint) n_new);
  ok = sc_generate_greedy (session, (int32_t *) in->ids->data, (int) n_before, n_new, NULL,
                           progress, progress_user, &n, &err) == SC_OK;
  g_array_set_size (in->ids, (guint) n);
  for (guint i = n_before; i < in->ids->len; i++)
    {
      int32_t id = g_array_index (in->ids, int32_t, i);
      size_t need = sc_token_to_bytes (tok, id, true, NULL, 0);
      gsize at = in->text->len;

      g_string_set_size (in->text, at + need);
      sc_token_to_bytes (tok, id, true, in->text->str + at, need);
    }
  if (!ok)
    saccade_set_error_from_sc (error, &err);
  return ok;
}

ScStatus
saccade_capture_store_predictions (ScStoreCapture *cap, const ScModel *model,
                                   const ScPredictions *pred, ScError *err)
{
  ScStoreToken *pieces = NULL;
  ScStatus st;

  if (pred->n_positions <= 0 || pred->k <= 0)
    return SC_OK; /* nothing was predicted: the run is stored without */
  if ((st = sc_store_tokens_from_ids (sc_model_tokenizer (model), pred->ids,
                                      (size_t) pred->n_positions * pred->k, &pieces, err))
      != SC_OK)
    return st;
  st = sc_store_capture_set_predictions (cap, (uint32_t) pred->n_positions, (uint32_t) pred->k,
                                         pred->ids, pred->logits, pred->probs, pieces, err);
  sc_store_tokens_free (pieces);
  return st;
}
