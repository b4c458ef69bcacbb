/* saccade-capture-input.c — the text, chat template, ids and greedy continuation of a
 * capture (see saccade-capture-input.h). The template is app/core/saccade-model.c's, the
 * decoding engine/forward/sc-predict.c's: this file only puts them together for
 * `saccade capture` (app/cli/saccade-cli-store.c) and the window's capture task
 * (saccade-capture-task.c).
 */
#define G_LOG_DOMAIN "saccade-capture"

#include "app/core/saccade-capture-input.h"

#include <glib/gi18n.h>
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

ScStatus
saccade_capture_forward (ScSession *session, const ScModel *model, ScStoreCapture *cap,
                         const int32_t *ids, int n_ids, const ScForwardOptions *fo,
                         ScProgressFn predict_progress, void *predict_user,
                         SaccadeCaptureOutcome *out, ScError *err)
{
  g_autofree float *logits = g_new (float, sc_model_info (model)->n_vocab);
  ScForwardOptions opts = *fo;
  gint64 t0;
  ScStatus st;

  opts.keep_final = true;
  t0 = g_get_monotonic_time ();
  st = sc_forward (session, ids, n_ids, &opts, logits, err);
  out->forward_s = (g_get_monotonic_time () - t0) / 1e6;
  if (st != SC_OK)
    {
      /* A store whose writer failed stops the pass through its observer: its commit rolls
       * the run back and says why. */
      if (cap != NULL && st == SC_ERR_CANCELLED && sc_store_capture_status (cap, NULL) != SC_OK)
        return sc_store_capture_commit (cap, -1, NULL, err);
      sc_store_capture_abort (cap);
      return st;
    }
  t0 = g_get_monotonic_time ();
  if ((st = sc_predict_topk (session, n_ids, SC_PREDICT_TOP_K, predict_progress, predict_user,
                             &out->pred, err)) != SC_OK
      || (cap != NULL
          && (st = saccade_capture_store_predictions (cap, model, &out->pred, err)) != SC_OK))
    {
      sc_store_capture_abort (cap);
      return st;
    }
  out->predict_s = (g_get_monotonic_time () - t0) / 1e6;
  if (cap == NULL)
    return SC_OK;
  return sc_store_capture_commit (cap, out->forward_s, &out->run_id, err);
}

ScRunKind
saccade_capture_run_kind (guint n_prompt, guint n_tokens, gboolean chat, guint32 *prompt_tokens)
{
  const gboolean generated = n_prompt > 0 && n_prompt < n_tokens;

  *prompt_tokens = generated ? n_prompt : 0;
  return generated ? SC_RUN_KIND_GENERATED : chat ? SC_RUN_KIND_CHAT : SC_RUN_KIND_TEXT;
}

/* Parses the set @spec of indices below @max into @out (zeroed by the caller: all 0 but
 * those named). */
static gboolean
parse_index_set (const char *spec, guint max, const char *what, guint8 *out, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (spec, ",", -1);

  for (char **p = parts; *p != NULL; p++)
    {
      g_auto (GStrv) ends = g_strsplit (g_strstrip (*p), "-", 3);
      guint64 lo = 0, hi = 0;
      const guint n = g_strv_length (ends);

      if (n < 1 || n > 2 || !g_ascii_string_to_unsigned (ends[0], 10, 0, G_MAXUINT, &lo, NULL)
          || !g_ascii_string_to_unsigned (n == 2 ? ends[1] : ends[0], 10, 0, G_MAXUINT, &hi,
                                          NULL) || hi < lo)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                       /* Translators: "Layers: 'x' is not an index or a range LO-HI (e.g.
                        * 0,4,10-20)"; the first %s names the set. */
                       _("%s: “%s” is not an index or a range LO-HI (e.g. 0,4,10-20)"), what,
                       *p);
          return FALSE;
        }
      if (hi >= max)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                       /* Translators: "Heads: 12 is past the model's last (8: it has 9)" */
                       _("%s: %llu is past the model’s last (%u: it has %u)"), what,
                       (unsigned long long) hi, max - 1, max);
          return FALSE;
        }
      for (guint64 i = lo; i <= hi; i++)
        out[i] = 1;
    }
  return TRUE;
}

static gboolean
is_blank (const char *s)
{
  if (s == NULL)
    return TRUE;
  while (g_ascii_isspace (*s))
    s++;
  return *s == '\0';
}

gboolean
saccade_capture_keep_parse (const ScModelInfo *info, const char *layers,
                            const char *layers_name, const char *heads, const char *heads_name,
                            guint8 **keep, guint *n_kept, GError **error)
{
  const guint L = info->n_layers, H = info->n_heads;
  g_autofree guint8 *ls = g_new0 (guint8, L);
  g_autofree guint8 *hs = g_new0 (guint8, H);
  g_autofree guint8 *mask = NULL;
  guint n = 0;

  *keep = NULL;
  *n_kept = 0;
  memset (ls, is_blank (layers), L);
  memset (hs, is_blank (heads), H);
  if ((!is_blank (layers) && !parse_index_set (layers, L, layers_name, ls, error))
      || (!is_blank (heads) && !parse_index_set (heads, H, heads_name, hs, error)))
    return FALSE;
  mask = g_new0 (guint8, (gsize) L * H);
  for (guint l = 0; l < L; l++)
    for (guint h = 0; h < H; h++)
      n += mask[(gsize) l * H + h] = ls[l] && hs[h];
  *n_kept = n;
  if (n < L * H)
    *keep = g_steal_pointer (&mask);
  return TRUE;
}
