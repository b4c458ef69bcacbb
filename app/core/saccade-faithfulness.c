/* saccade-faithfulness.c — compute or reuse the faithfulness study of a run, run a file of
 * sentences, and turn both into CSV and figures (header). */
#define G_LOG_DOMAIN "saccade-faithfulness"

#include "app/core/saccade-faithfulness.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-csv.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-dla.h"

void
saccade_faith_head_extremes (const ScFaithResult *r, int *best, int *median)
{
  const int nh = r->n_layers * r->n_heads;
  g_autofree int *idx = g_new (int, nh);
  g_autofree double *tau = g_new (double, nh);
  int m = 0;

  /* in the set the result reports (with or without the first token) */
  for (int h = 0; h < nh; h++)
    tau[h] = sc_faith_head_used (r, h)->tau;
  for (int h = 0; h < nh; h++)
    if (!isnan (tau[h]))
      idx[m++] = h;
  *best = *median = -1;
  /* Insertion sort by τ then index: a few hundred heads. */
  for (int i = 1; i < m; i++)
    {
      int v = idx[i], j = i - 1;
      while (j >= 0 && (tau[idx[j]] > tau[v] || (tau[idx[j]] == tau[v] && idx[j] > v)))
        {
          idx[j + 1] = idx[j];
          j--;
        }
      idx[j + 1] = v;
    }
  if (m > 0)
    {
      int b = m - 1;
      while (b > 0 && tau[idx[b - 1]] == tau[idx[m - 1]])
        b--;
      *best = idx[b];
      *median = idx[(m - 1) / 2];
    }
}

void
saccade_faithfulness_free (SaccadeFaithfulness *f)
{
  if (f == NULL)
    return;
  sc_faith_result_free (f->result);
  g_free (f);
}

const char *
saccade_faith_reference_name (ScFaithErase kind)
{
  switch (kind)
    {
    /* Translators: what attention is ranked against: a token erased (masked out of every
     * attention row, or dropped from the input), or causal tracing (Meng et al. 2022). */
    case SC_FAITH_ERASE_DROP: return _("leave-one-out by dropping");
    case SC_FAITH_ERASE_TRACE: return _("causal tracing");
    default: return _("leave-one-out by masking");
    }
}

const char *
saccade_faith_source_name (ScFaithSource s)
{
  switch (s)
    {
    /* Translators: an attention source: the last layer's heads averaged. */
    case SC_FAITH_SOURCE_LAST_MEAN: return _("last-layer mean");
    case SC_FAITH_SOURCE_ROLLOUT: return _("rollout");
    case SC_FAITH_SOURCE_FLOW: return _("flow");
    /* Translators: gradient importance sources (the Attribution page's names). */
    case SC_FAITH_SOURCE_SALIENCY: return _("saliency");
    case SC_FAITH_SOURCE_GRADXINPUT: return _("gradient × input");
    case SC_FAITH_SOURCE_IG: return _("integrated gradients");
    case SC_FAITH_SOURCE_GRAD_ROLLOUT: return _("gradient rollout");
    /* Translators: context-mixing sources: norm-based attention (Kobayashi et al. 2020),
     * value zeroing (Mohebbi et al. 2023) and ALTI (Ferrando et al. 2022), of the last
     * layer or rolled out through the model. */
    case SC_FAITH_SOURCE_NORM: return _("norm-based");
    case SC_FAITH_SOURCE_NORM_ROLLOUT: return _("norm rollout");
    case SC_FAITH_SOURCE_VZ: return _("value zeroing");
    case SC_FAITH_SOURCE_VZ_ROLLOUT: return _("VZ rollout");
    case SC_FAITH_SOURCE_ALTI: return _("ALTI");
    case SC_FAITH_SOURCE_ALTI_ROLLOUT: return _("ALTI rollout");
    default: return "?";
    }
}

gboolean
saccade_faithfulness_read_run (const char *db_path, gint64 run_id, ScModel *model,
                               const char *model_path, ScStoreRunInfo *run,
                               ScStoreToken **tokens, size_t *n_tokens, GError **error)
{
  ScStoreModel sm;
  ScError err = { 0 };
  char hex[SC_SHA256_HEX_SIZE];

  if (!saccade_store_read_run (db_path, run_id, run, tokens, n_tokens, error))
    return FALSE;
  if (sc_store_model_identify (model, model_path, &sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  sc_sha256_hex (sm.sha256, hex);
  if (strcmp (hex, run->model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld was captured with %s (SHA-256 %.12s…), not with the loaded "
                     "model %s (SHA-256 %.12s…); load that file with -m"),
                   (long long) run->id, run->model_path, run->model_sha256, model_path, hex);
      return FALSE;
    }
  return TRUE;
}

/* Each head's direct logit attribution to the sweep's target (stored, else computed: one
 * clean pass) against its ablation effect, as the head level's last entry. */
static void
head_level_dla (SaccadeFaithfulness *f, ScStore *store, const ScStoreModel *sm, ScModel *model,
                ScSession *session, gint64 run_id, const int32_t *ids, int n,
                int target, const ScHeadSweepResult *sweep, char **warning)
{
  const ScModelInfo *info = sc_model_info (model);
  ScDlaResult *dla = NULL;
  ScError err = { 0 };
  char pj[64];

  /* @target as the sweep was asked for (−1: the clean top-1), so that `saccade dla RUN`
   * and this share their stored study */
  if (sc_dla_params_json (run_id, target, -1, pj, sizeof pj) < 0)
    return;
  if (store == NULL || sc_dla_load (store, info, sm->sha256, pj, &dla, NULL, NULL) != SC_OK)
    {
      if (sc_dla_run (session, model, ids, n, target, -1, &dla, &err) != SC_OK)
        {
          if (warning != NULL && *warning == NULL)
            *warning = g_strdup_printf (_("no direct logit attribution: %s"), err.message);
          return;
        }
      if (store != NULL && sc_store_is_writable (store)
          && sc_dla_store (store, sm, pj, dla, NULL, &err) != SC_OK && warning != NULL
          && *warning == NULL)
        *warning = g_strdup (err.message);
    }
  if (dla->target != sweep->target)
    {
      if (warning != NULL && *warning == NULL)
        *warning = g_strdup_printf (_("no direct logit attribution: its target %d is not the "
                                      "head sweep's %d"), dla->target, sweep->target);
    }
  else if (sc_faith_head_corr (sweep, "dla", dla->heads, &f->head_corr[f->n_head_corr], &err)
      == SC_OK)
    f->n_head_corr++;
  sc_dla_result_free (dla);
}

/* The head level from a stored head sweep of the run, or one computed now (@compute). */
static void
head_level (SaccadeFaithfulness *f, ScStore *store, const ScStoreModel *sm, ScModel *model,
            ScSession *session, gint64 run_id, const int32_t *ids, int n,
            const ScFaithParams *params, gboolean compute, SaccadeProgressPart *prog, char **warning)
{
  const ScModelInfo *info = sc_model_info (model);
  const ScAblationParams ap = { .target = params->target, .contrast = -1 };
  ScHeadSweepResult *sweep = NULL;
  ScError err = { 0 };
  char pj[128];

  if (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, run_id, &ap, pj, sizeof pj) < 0)
    return;
  if (store != NULL && sc_head_sweep_load (store, info, sm->sha256, pj, &sweep, NULL, NULL)
                           == SC_OK)
    f->sweep_reused = TRUE;
  else if (compute)
    {
      if (sc_head_sweep_run (session, model, ids, n, &ap, saccade_progress_part_engine, prog, &sweep, &err)
          != SC_OK)
        {
          if (warning != NULL && *warning == NULL)
            *warning = g_strdup_printf (_("no head level: %s"), err.message);
          return;
        }
      if (store != NULL && sc_store_is_writable (store)
          && sc_head_sweep_store (store, sm, pj, sweep, NULL, &err) != SC_OK && warning != NULL
          && *warning == NULL)
        *warning = g_strdup (err.message);
    }
  if (sweep != NULL && sc_faith_head_level (sweep, f->result, f->head_corr, &err) == SC_OK)
    {
      f->have_head_level = TRUE;
      f->n_head_corr = SC_FAITH_N_HEAD_STATS;
      head_level_dla (f, store, sm, model, session, run_id, ids, n, params->target, sweep,
                      warning);
    }
  sc_head_sweep_result_free (sweep);
}

SaccadeFaithfulness *
saccade_faithfulness_get (ScModel *model, const char *model_path, ScSession *session,
                          const char *db_path, gint64 run_id, const int32_t *ids, int n,
                          const ScFaithParams *params, gboolean head_sweep, gboolean recompute,
                          SaccadeProgress progress, gpointer user_data,
                          GCancellable *cancellable, char **store_warning, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autoptr (SaccadeFaithfulness) f = g_new0 (SaccadeFaithfulness, 1);
  /* The leave-one-out studies this can reuse: both kinds (what saccade ablate --tokens
   * stores), else one of the kind it reads (what sc_faith_run computes, stored under
   * params that name the kind, so that no reader wanting both finds it). */
  const ScLooKinds kind = params->kind == SC_FAITH_ERASE_DROP ? SC_LOO_DROP : SC_LOO_MASK;
  const int contrast = params->contrastive ? params->contrast : -1;
  const ScAblationParams ap = { .target = params->target, .contrast = contrast };
  const ScAblationParams ap_one = { .target = params->target, .contrast = contrast,
                                    .loo_kinds = kind };
  ScTokenLooResult *loo = NULL, *loo_new = NULL;
  SaccadeProgressPart prog = { progress, user_data, cancellable, 0, 1 };
  ScStoreModel sm = { 0 };
  ScStore *store = NULL;
  ScError err = { 0 };
  char pj[256], pl[192], pl_one[192];
  gint64 t0 = g_get_monotonic_time (), t_head;
  int64_t id = 0;

  if (sc_faith_params_json (run_id, ids, n, params, pj, sizeof pj) < 0
      || sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, run_id, &ap, pl, sizeof pl) < 0
      || sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, run_id, &ap_one, pl_one,
                                  sizeof pl_one) < 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "faithfulness: bad parameters");
      return NULL;
    }
  if (db_path != NULL && sc_store_model_identify (model, model_path, &sm, &err) == SC_OK)
    {
      store = saccade_store_open (db_path, TRUE, NULL);
      if (store == NULL)
        store = saccade_store_open (db_path, FALSE, NULL); /* read what is there */
    }
  if (store != NULL && !recompute)
    {
      ScError refused = { 0 };
      ScStatus st = sc_faith_load (store, info, sm.sha256, pj, params, &f->result, &id,
                                   &refused);
      /* its params name this run: a study of another length does not describe it (its
       * positions indexed the run's labels past their end, issue 25) */
      if (st == SC_OK && f->result->n_tokens != n)
        {
          st = sc_error_set (&refused, SC_ERR_FORMAT, "study %lld (%s) describes %d tokens, "
                             "run %lld has %d", (long long) id, SC_FAITH_KIND,
                             f->result->n_tokens, (long long) run_id, n);
          g_clear_pointer (&f->result, sc_faith_result_free);
        }
      if (st == SC_OK)
        {
          f->reused = TRUE;
          f->study_id = id;
        }
      else if (st != SC_ERR_NOT_FOUND)
        g_message ("a stored %s study is refused (%s); computing it again", SC_FAITH_KIND,
                   refused.message);
    }
  if (!f->reused)
    {
      /* A stored leave-one-out study of the same run and target saves all the erasures. */
      if (store != NULL && !recompute && params->kind != SC_FAITH_ERASE_TRACE
          && (sc_token_loo_load (store, info, sm.sha256, pl, &loo, NULL, NULL) == SC_OK
              || sc_token_loo_load (store, info, sm.sha256, pl_one, &loo, NULL, NULL) == SC_OK))
        {
          if (loo->n_tokens == n && (loo->kinds & kind) != 0)
            f->loo_reused = TRUE;
          else
            g_clear_pointer (&loo, sc_token_loo_result_free);
        }
      if (head_sweep)
        prog.span = 0.5; /* the sweep takes about as long again */
      if (sc_faith_run (session, model, ids, n, params, loo, saccade_progress_part_engine, &prog, &f->result,
                        &loo_new, &err) != SC_OK)
        {
          sc_token_loo_result_free (loo);
          sc_store_close (store);
          saccade_set_error_from_sc_cancel (error, &err);
          return NULL;
        }
      sc_token_loo_result_free (loo);
      if (store == NULL || !sc_store_is_writable (store))
        {
          if (store_warning != NULL)
            *store_warning = g_strdup (store == NULL ? _("no store") : _("the store is read-only"));
        }
      else
        {
          if (sc_faith_store (store, &sm, pj, f->result, &id, &err) == SC_OK)
            f->study_id = id;
          else if (store_warning != NULL)
            *store_warning = g_strdup (err.message);
          /* under the params of the kinds it holds (sc_faith_run computes its own kind) */
          if (loo_new != NULL
              && sc_token_loo_store (store, &sm, loo_new->kinds == SC_LOO_BOTH ? pl : pl_one,
                                     loo_new, NULL, &err) != SC_OK
              && store_warning != NULL && *store_warning == NULL)
            *store_warning = g_strdup (err.message);
        }
      sc_token_loo_result_free (loo_new);
    }
  /* The head sweep, if it runs, takes the rest of the bar (all of it after a reused study). */
  prog.base = f->reused ? 0 : prog.span;
  prog.span = 1 - prog.base;
  t_head = g_get_monotonic_time ();
  head_level (f, store, &sm, model, session, run_id, ids, n, params, head_sweep, &prog,
              store_warning);
  f->head_level_seconds = (double) (g_get_monotonic_time () - t_head) / G_USEC_PER_SEC;
  sc_store_close (store);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  f->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&f);
}

/* ------------------------------------------------------------------------------------ */
/* Files of sentences                                                                    */

static void
sentence_free (gpointer p)
{
  SaccadeFaithSentence *s = p;

  g_free (s->text);
  g_free (s);
}

GPtrArray *
saccade_faith_sentences_new (void)
{
  return g_ptr_array_new_with_free_func (sentence_free);
}

void
saccade_faith_sentences_add (GPtrArray *sentences, char *text, int line)
{
  SaccadeFaithSentence *s = g_new (SaccadeFaithSentence, 1);

  s->text = text;
  s->line = line;
  g_ptr_array_add (sentences, s);
}

GPtrArray *
saccade_faithfulness_read_sentences (const char *path, GError **error)
{
  g_autoptr (GPtrArray) out = saccade_faith_sentences_new ();
  g_autofree char *data = NULL;
  gsize len = 0, start = 0;
  int line = 0;

  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;
  while (start < len)
    {
      const char *nl = memchr (data + start, '\n', len - start);
      gsize end = nl != NULL ? (gsize) (nl - data) : len, l;
      const char *s = data + start;
      line++;
      l = end - start;
      if (l > 0 && s[l - 1] == '\r')
        l--;
      start = end + 1;
      if (memchr (s, '\0', l) != NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("%s:%d: the line holds a NUL byte"), path, line);
          return NULL;
        }
      if (!g_utf8_validate_len (s, l, NULL))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("%s:%d: the line is not valid UTF-8"), path, line);
          return NULL;
        }
      {
        g_autofree char *text = g_strndup (s, l);
        g_strstrip (text);
        if (*text == '\0' || *text == '#')
          continue;
        if (l > SACCADE_FAITH_MAX_LINE_BYTES)
          {
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                         _("%s:%d: the line is %lu bytes long, more than the %d a sentence may "
                           "have"), path, line, (unsigned long) l, SACCADE_FAITH_MAX_LINE_BYTES);
            return NULL;
          }
        saccade_faith_sentences_add (out, g_steal_pointer (&text), line);
      }
    }
  if (out->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("%s holds no sentence (one per line; blank lines and lines starting with "
                     "# are skipped)"), path);
      return NULL;
    }
  return g_steal_pointer (&out);
}

void
saccade_faith_file_free (SaccadeFaithFile *f)
{
  if (f == NULL)
    return;
  for (guint i = 0; f->results != NULL && f->sentences != NULL && i < f->sentences->len; i++)
    sc_faith_result_free (f->results[i]);
  g_free (f->results);
  g_free (f->n_tokens);
  sc_faith_file_summary_free (f->summary);
  if (f->sentences != NULL)
    g_ptr_array_unref (f->sentences);
  g_free (f->db_path);
  g_free (f);
}

GArray *
saccade_faith_sentence_ids (ScModel *model, const SaccadeFaithSentence *s, GError **error)
{
  g_autoptr (GArray) ids = saccade_tokenize (model, s->text, -1, FALSE, error);

  if (ids == NULL)
    {
      g_prefix_error (error, _("line %d: "), s->line);
      return NULL;
    }
  if (ids->len < SC_FAITH_MIN_TOKENS || ids->len > SACCADE_FAITH_MAX_TOKENS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("line %d: the sentence has %u tokens; faithfulness needs %d to %d "
                     "(the last token is the query, and a ranking needs two tokens "
                     "before it)"), s->line, ids->len, SC_FAITH_MIN_TOKENS,
                   SACCADE_FAITH_MAX_TOKENS);
      return NULL;
    }
  return g_steal_pointer (&ids);
}

SaccadeFaithFile *
saccade_faithfulness_run_file (ScModel *model, ScSession *session, GPtrArray *sentences,
                               const ScFaithParams *params, SaccadeProgress progress,
                               gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autoptr (SaccadeFaithFile) f = g_new0 (SaccadeFaithFile, 1);
  const gint64 t0 = g_get_monotonic_time ();
  const guint n = sentences->len;
  ScError err = { 0 };

  f->sentences = sentences;
  f->results = g_new0 (ScFaithResult *, n);
  f->n_tokens = g_new0 (int, n);
  for (guint i = 0; i < n; i++)
    {
      const SaccadeFaithSentence *s = g_ptr_array_index (sentences, i);
      g_autoptr (GArray) ids = saccade_faith_sentence_ids (model, s, error);
      SaccadeProgressPart prog = { progress, user_data, cancellable, (double) i / n, 1.0 / n };
      if (ids == NULL)
        return NULL;
      f->n_tokens[i] = (int) ids->len;
      if (sc_faith_run (session, model, (const int32_t *) ids->data, (int) ids->len, params,
                        NULL, saccade_progress_part_engine, &prog, &f->results[i], NULL, &err) != SC_OK)
        {
          saccade_set_error_from_sc_cancel (error, &err);
          g_prefix_error (error, _("line %d: "), s->line);
          return NULL;
        }
      f->forward_s += f->results[i]->timing.forward_s;
    }
  if (sc_faith_summarize ((const ScFaithResult *const *) f->results, (int) n, &f->summary, &err)
      != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  f->total_s = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&f);
}

/* ------------------------------------------------------------------------------------ */
/* CSV                                                                                   */

GBytes *
saccade_faithfulness_run_csv (const SaccadeFaithfulness *f, const char *const *labels)
{
  const ScFaithResult *r = f->result;
  GString *s = g_string_new ("pos,token,loo");

  /* one column per source the result holds (last_mean, rollout, flow, ...) */
  for (int k = 0; k < sc_faith_n_sources (r); k++)
    {
      g_autofree char *col = g_strdelimit (g_strdup (sc_faith_source_id (k)), "-", '_');
      g_string_append_printf (s, ",%s", col);
    }

  if (r->head_rows != NULL)
    for (int h = 0; h < r->n_layers * r->n_heads; h++)
      g_string_append_printf (s, ",L%d.H%d", h / r->n_heads, h % r->n_heads);
  g_string_append (s, "\r\n");
  for (int j = 0; j < r->n_items; j++)
    {
      g_string_append_printf (s, "%d,", j);
      saccade_csv_field (s, labels != NULL ? labels[j] : "");
      saccade_csv_add_number (s, r->loo[j]);
      for (int k = 0; k < sc_faith_n_sources (r); k++)
        saccade_csv_add_number (s, r->attn[k][j]);
      if (r->head_rows != NULL)
        for (int h = 0; h < r->n_layers * r->n_heads; h++)
          saccade_csv_add_number (s, r->head_rows[(size_t) h * r->n_items + j]);
      g_string_append (s, "\r\n");
    }
  return g_string_free_to_bytes (s);
}

static void
csv_summary_row (GString *s, const char *source, const ScFaithSummary *m)
{
  g_string_append (s, "summary,,,,");
  saccade_csv_field (s, source);
  g_string_append_printf (s, ",%d", m->n_defined);
  saccade_csv_add_number (s, m->tau_mean);
  saccade_csv_add_number (s, m->tau_std);
  g_string_append (s, ",");
  saccade_csv_add_number (s, m->share_significant);
  saccade_csv_add_number (s, m->rho_mean);
  g_string_append (s, ",");
  saccade_csv_add_number (s, m->topk_mean);
  g_string_append (s, "\r\n");
}

static void
csv_sentence_row (GString *s, guint i, int line, int n, const char *source,
                  const ScFaithAgreement *a)
{
  g_string_append_printf (s, "sentence,%u,%d,%d,", i, line, n);
  saccade_csv_field (s, source);
  g_string_append (s, ",");
  saccade_csv_add_number (s, a->tau);
  g_string_append (s, ",");
  saccade_csv_add_number (s, a->tau_p);
  g_string_append (s, ",");
  saccade_csv_add_number (s, a->rho);
  saccade_csv_add_number (s, a->rho_p);
  saccade_csv_add_number (s, a->topk);
  g_string_append (s, "\r\n");
}

GBytes *
saccade_faithfulness_file_csv (const SaccadeFaithFile *f)
{
  const ScFaithFileSummary *sm = f->summary;
  GString *s = g_string_new ("scope,sentence,line,n_tokens,source,n_defined,tau,tau_std,"
                             "tau_p,share_significant,rho,rho_p,topk\r\n");
  char best[48] = "", median[48] = "";

  for (int k = 0; k < sc_faith_summary_n_sources (sm); k++)
    csv_summary_row (s, sc_faith_source_id (k), &sm->source[k]);
  if (sm->best_head >= 0)
    {
      g_snprintf (best, sizeof best, "best-head L%d.H%d", sm->best_head / sm->n_heads,
                  sm->best_head % sm->n_heads);
      g_snprintf (median, sizeof median, "median-head L%d.H%d", sm->median_head / sm->n_heads,
                  sm->median_head % sm->n_heads);
      csv_summary_row (s, best, &sm->heads[sm->best_head]);
      csv_summary_row (s, median, &sm->heads[sm->median_head]);
    }
  for (guint i = 0; i < f->sentences->len; i++)
    {
      const SaccadeFaithSentence *sent = g_ptr_array_index (f->sentences, i);
      const ScFaithResult *r = f->results[i];
      for (int k = 0; k < sc_faith_n_sources (r); k++)
        csv_sentence_row (s, i, sent->line, f->n_tokens[i], sc_faith_source_id (k),
                          sc_faith_source_used (r, k));
      if (sm->best_head >= 0)
        {
          csv_sentence_row (s, i, sent->line, f->n_tokens[i], best,
                            sc_faith_head_used (r, sm->best_head));
          csv_sentence_row (s, i, sent->line, f->n_tokens[i], median,
                            sc_faith_head_used (r, sm->median_head));
        }
    }
  return g_string_free_to_bytes (s);
}

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

void
saccade_faithfulness_scatter_figure (const SaccadeFaithfulness *f, const char *const *labels,
                                     const char *title, SaccadeScatterFigure *fig)
{
  /* Translators: the scatter's vertical axis: the reference (leave-one-out or causal
   * tracing) and its measure, by ScFaithMetric (the last: the contrast's measure). */
  static const char *const Y_NAME[2][SC_FAITH_N_METRICS] = {
    { N_("leave-one-out: TV distance"), N_("leave-one-out: JSD (nats)"),
      N_("leave-one-out: |Δ log p|"), N_("leave-one-out: |Δ logit difference|") },
    { N_("causal tracing: TV distance"), N_("causal tracing: JSD (nats)"),
      N_("causal tracing: |Δ log p|"), N_("causal tracing: |Δ logit difference|") },
  };
  const ScFaithResult *r = f->result;
  const ScFaithAgreement *a = &r->agree[SC_FAITH_SOURCE_LAST_MEAN];

  *fig = (SaccadeScatterFigure) {
    .n = r->n_items, .x = r->attn[SC_FAITH_SOURCE_LAST_MEAN], .y = r->loo, .labels = labels,
    /* Translators: the scatter's horizontal axis. */
    .x_name = _("attention: last-layer head mean"),
    .y_name = _(Y_NAME[r->kind == SC_FAITH_ERASE_TRACE][r->metric]),
    .title = title, .tau = a->tau, .tau_p = a->tau_p, .rho = a->rho, .rho_p = a->rho_p,
    .bars = TRUE,
  };
}

static SaccadeFaithRow
row_of (const char *name, const ScFaithSummary *m)
{
  return (SaccadeFaithRow) { name, m->n_defined, m->n_undefined, m->tau_mean, m->tau_std,
                             m->share_significant };
}

void
saccade_faithfulness_file_figure (const SaccadeFaithFile *f, const char *title,
                                  SaccadeFaithRow rows[SC_FAITH_N_SOURCES + 2], char ***names,
                                  SaccadeFaithfulnessFigure *fig)
{
  const ScFaithFileSummary *sm = f->summary;
  GPtrArray *n = g_ptr_array_new ();
  int k, count = 0;

  int src[SC_FAITH_N_SOURCES], n_src = 0;

  /* the gradient sources only when the file's studies asked for them */
  for (k = 0; k < SC_FAITH_N_SOURCES; k++)
    if (k < SC_FAITH_FIRST_GRADIENT_SOURCE || sm->source[k].n_defined > 0)
      {
        src[n_src++] = k;
        g_ptr_array_add (n, g_strdup (saccade_faith_source_name (k)));
      }
  if (sm->best_head >= 0)
    {
      /* Translators: a row of the faithfulness figure: the head with the highest mean τ. */
      g_ptr_array_add (n, g_strdup_printf (_("best head L%d.H%d"), sm->best_head / sm->n_heads,
                                           sm->best_head % sm->n_heads));
      g_ptr_array_add (n, g_strdup_printf (_("median head L%d.H%d"),
                                           sm->median_head / sm->n_heads,
                                           sm->median_head % sm->n_heads));
    }
  g_ptr_array_add (n, NULL);
  *names = (char **) g_ptr_array_free (n, FALSE);
  for (k = 0; k < n_src; k++)
    rows[count++] = row_of ((*names)[k], &sm->source[src[k]]);
  if (sm->best_head >= 0)
    {
      rows[count++] = row_of ((*names)[k], &sm->heads[sm->best_head]);
      rows[count++] = row_of ((*names)[k + 1], &sm->heads[sm->median_head]);
    }
  *fig = (SaccadeFaithfulnessFigure) { count, rows, sm->n_sentences, title };
}
