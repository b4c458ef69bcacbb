/* saccade-patch-file.c — patching over a file of clean/corrupted pairs, computed in one
 * process (header); the stored and sharded form is saccade-patch-stored.c. */
#define G_LOG_DOMAIN "saccade-patch"

#include "app/core/saccade-patch-file.h"
#include "app/core/saccade-patch-file-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-faithfulness.h"
#include "app/core/saccade-model.h"
#include "engine/analysis/sc-stats.h"

void
saccade_patch_pair_free (SaccadePatchPair *p)
{
  if (p == NULL)
    return;
  g_free (p->clean);
  g_free (p->corrupted);
  g_free (p->target);
  g_free (p->contrast);
  g_free (p);
}

GPtrArray *
saccade_patch_pairs_read (const char *path, GError **error)
{
  /* the lines as faithfulness --file reads its sentences: UTF-8, blank and # lines out */
  g_autoptr (GPtrArray) lines = saccade_faithfulness_read_sentences (path, error);
  g_autoptr (GPtrArray) out = NULL;

  if (lines == NULL)
    return NULL;
  out = g_ptr_array_new_with_free_func ((GDestroyNotify) saccade_patch_pair_free);
  for (guint i = 0; i < lines->len; i++)
    {
      const SaccadeFaithSentence *s = g_ptr_array_index (lines, i);
      g_auto (GStrv) f = g_strsplit (s->text, "\t", 0);
      const guint n = g_strv_length (f);
      SaccadePatchPair *p;
      if (n < 2 || n > 4)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("%s:%d: %u fields; a pair is CLEAN<tab>CORRUPTED, then optionally "
                         "the tokens A and B of the metric, tab-separated"), path, s->line, n);
          return NULL;
        }
      if (*g_strstrip (f[0]) == '\0' || *g_strstrip (f[1]) == '\0')
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("%s:%d: the %s text is empty"), path, s->line,
                       *f[0] == '\0' ? _("clean") : _("corrupted"));
          return NULL;
        }
      p = g_new0 (SaccadePatchPair, 1);
      p->line = s->line;
      p->clean = g_strdup (f[0]);
      p->corrupted = g_strdup (f[1]);
      /* a token keeps its leading space (" Mary"); an empty field is the default */
      p->target = n > 2 && *f[2] != '\0' ? g_strdup (f[2]) : NULL;
      p->contrast = n > 3 && *f[3] != '\0' ? g_strdup (f[3]) : NULL;
      g_ptr_array_add (out, p);
    }
  return g_steal_pointer (&out);
}

void
saccade_patch_file_params_init (SaccadePatchFileParams *p)
{
  *p = (SaccadePatchFileParams) { .direction = SC_PATCH_DENOISE, .what = SC_PATCH_HEADS,
                                  .component = SC_PATH_KEYS, .n_boot = 10000,
                                  .seed = SC_STATS_DEFAULT_SEED };
}

void
saccade_patch_file_free (SaccadePatchFile *f)
{
  if (f == NULL)
    return;
  for (int i = 0; f->results != NULL && i < f->n_pairs; i++)
    sc_patch_result_free (f->results[i]);
  g_free (f->results);
  if (f->pairs != NULL)
    g_ptr_array_unref (f->pairs);
  g_free (f->effect);
  g_free (f->mean);
  g_free (f->lo);
  g_free (f->hi);
  g_free (f->top_share);
  g_free (f->sign_p);
  g_free (f->sign_p_holm);
  g_free (f->n_agree);
  g_free (f->stored);
  g_free (f);
}

static gboolean
fail_at (GError **error, const SaccadePatchPair *p, const ScError *err)
{
  saccade_set_error_from_sc_cancel (error, err);
  g_prefix_error (error, _("line %d: "), p->line);
  return FALSE;
}

/* The ids of @text, which must have at least 2 tokens. */
static GArray *
pair_ids (ScModel *model, const SaccadePatchPair *p, const char *text, GError **error)
{
  g_autoptr (GArray) ids = saccade_tokenize (model, text, -1, FALSE, error);

  if (ids == NULL)
    {
      g_prefix_error (error, _("line %d: "), p->line);
      return NULL;
    }
  if (ids->len < 2)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("line %d: \"%s\" has fewer than 2 tokens (%u); patching needs at least 2"),
                   p->line, text,
                   ids->len);
      return NULL;
    }
  return g_steal_pointer (&ids);
}

gboolean
saccade_patch_pair_inputs (ScModel *model, const SaccadePatchPair *p,
                           const SaccadePatchFileParams *fp, GArray **clean_out,
                           GArray **corrupted_out, ScPatchParams *pp, GError **error)
{
  g_autoptr (GArray) clean = NULL, corrupted = NULL;
  char option[64];

  *pp = (ScPatchParams) { .corrupted_run = 0, .direction = fp->direction, .what = fp->what };
  if ((clean = pair_ids (model, p, p->clean, error)) == NULL
      || (corrupted = pair_ids (model, p, p->corrupted, error)) == NULL)
    return FALSE;
  if (clean->len != corrupted->len)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("line %d: the clean text is %u tokens and the corrupted %u; patching "
                     "needs the same count"), p->line, clean->len, corrupted->len);
      return FALSE;
    }
  g_snprintf (option, sizeof option, _("line %d's token A"), p->line);
  if (!saccade_parse_token (model, option, p->target, &pp->target, error))
    return FALSE;
  g_snprintf (option, sizeof option, _("line %d's token B"), p->line);
  if (!saccade_parse_token (model, option, p->contrast, &pp->contrast, error))
    return FALSE;
  if (pp->contrast >= 0 && pp->contrast == pp->target)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("line %d: B is A itself (token %d); a logit difference needs two "
                     "tokens"), p->line, pp->target);
      return FALSE;
    }
  *clean_out = g_steal_pointer (&clean);
  *corrupted_out = g_steal_pointer (&corrupted);
  return TRUE;
}

/* Patches pair @p into *@out (a grid the caller frees). */
static gboolean
patch_pair (ScModel *model, ScSession *session, const SaccadePatchPair *p,
            const SaccadePatchFileParams *fp, SaccadeProgressPart *prog, int *first_row,
            ScPatchResult **out, GError **error)
{
  g_autoptr (GArray) clean = NULL, corrupted = NULL;
  ScPatchParams pp;
  ScError err = { 0 };

  if (!saccade_patch_pair_inputs (model, p, fp, &clean, &corrupted, &pp, error))
    return FALSE;
  if (fp->path)
    {
      ScPathPatchParams path = { .patch = pp, .component = fp->component };
      ScPathPatchResult *r = NULL;
      g_strlcpy (path.senders, fp->senders, sizeof path.senders);
      if (sc_path_patch_run (session, model, (const int32_t *) clean->data,
                             (const int32_t *) corrupted->data, (int) clean->len, &path,
                             saccade_progress_part_engine, prog, &r, &err) != SC_OK)
        return fail_at (error, p, &err);
      *first_row = r->receivers_from_layer;
      *out = g_steal_pointer (&r->grid);
      sc_path_patch_result_free (r);
    }
  else if (sc_patch_run (session, model, (const int32_t *) clean->data,
                         (const int32_t *) corrupted->data, (int) clean->len, &pp,
                         saccade_progress_part_engine, prog, out, &err) != SC_OK)
    return fail_at (error, p, &err);
  return TRUE;
}

gboolean
saccade_patch_file_take (SaccadePatchFile *f, int i, ScPatchResult *r, int first_row,
                         GError **error)
{
  const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
  int cells;

  f->results[i] = r;
  if (fabs (r->metric_clean - r->metric_corrupted) < 1e-6)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("line %d: the clean and the corrupted run give the same metric (%.6g); "
                     "there is no difference to restore"), pair->line, r->metric_clean);
      return FALSE;
    }
  if (f->effect == NULL)
    {
      f->n_rows = r->n_rows;
      f->n_cols = r->n_cols;
      f->first_row = first_row;
      f->effect = g_new (double, (gsize) f->n_pairs * r->n_rows * r->n_cols);
    }
  else if (r->n_rows != f->n_rows || r->n_cols != f->n_cols)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("line %d: its grid is %d × %d, the first pair's %d × %d; patching "
                     "positions needs every pair to have as many tokens"), pair->line,
                   r->n_rows, r->n_cols, f->n_rows, f->n_cols);
      return FALSE;
    }
  cells = f->n_rows * f->n_cols;
  for (int c = 0; c < cells; c++)
    f->effect[(gsize) i * cells + c] = sc_patch_normalised (r, r->patched[c]);
  return TRUE;
}

/* The per-cell summary of @f's effects (header): every statistic of the change from the
 * base run, d = e − base (0 denoising, 1 noising), the interval shifted back onto e. */
gboolean
saccade_patch_file_summarise (SaccadePatchFile *f, const SaccadePatchFileParams *fp,
                              GError **error)
{
  const int n = f->n_pairs, cells = f->n_rows * f->n_cols, skip = f->first_row * f->n_cols;
  const int tested = cells - skip;
  g_autofree double *col = g_new (double, n);
  g_autofree double *sub = g_new (double, (gsize) n * tested);
  ScError err = { 0 };

  f->mean = g_new (double, cells);
  f->lo = g_new (double, cells);
  f->hi = g_new (double, cells);
  f->top_share = g_new (double, cells);
  f->sign_p = g_new (double, cells);
  f->sign_p_holm = g_new (double, cells);
  f->n_agree = g_new0 (int, cells);
  for (int c = 0; c < cells; c++)
    f->mean[c] = f->lo[c] = f->hi[c] = f->top_share[c] = f->sign_p[c] = NAN;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < tested; c++)
      sub[(gsize) i * tested + c] = f->effect[(gsize) i * cells + skip + c] - f->base;
  /* one pair has no spread: its mean stands alone, without an interval */
  if (n >= 2
      && sc_stats_bootstrap_columns (sub, n, tested, fp->n_boot, 0.95, fp->seed,
                                     SC_STATS_TOP_LARGEST_ABS, f->lo + skip, f->hi + skip,
                                     f->top_share + skip, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  for (int c = skip; c < cells; c++)
    {
      double s = 0;
      for (int i = 0; i < n; i++)
        s += col[i] = sub[(gsize) i * tested + c - skip];
      f->mean[c] = f->base + s / n;
      f->lo[c] += f->base;
      f->hi[c] += f->base;
      for (int i = 0; i < n; i++)
        f->n_agree[c] += fabs (col[i]) > SACCADE_PATCH_FILE_AGREE
                         && (col[i] > 0) == (s > 0);
      if (sc_stats_sign_test (col, n, &f->sign_p[c], &err) != SC_OK)
        {
          saccade_set_error_from_sc (error, &err);
          return FALSE;
        }
    }
  f->n_tested = tested;
  return sc_stats_holm (f->sign_p, cells, f->sign_p_holm, NULL, &err) == SC_OK
         || (saccade_set_error_from_sc (error, &err), FALSE);
}

SaccadePatchFile *
saccade_patch_file_new (GPtrArray *pairs, const SaccadePatchFileParams *p)
{
  SaccadePatchFile *f = g_new0 (SaccadePatchFile, 1);

  f->pairs = pairs;
  f->n_pairs = (int) pairs->len;
  f->base = p->direction == SC_PATCH_NOISE ? 1.0 : 0.0;
  f->results = g_new0 (ScPatchResult *, MAX (f->n_pairs, 1));
  return f;
}

SaccadePatchFile *
saccade_patch_file_run (ScModel *model, ScSession *session, GPtrArray *pairs,
                        const SaccadePatchFileParams *p, SaccadeProgress progress,
                        gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autoptr (SaccadePatchFile) f = saccade_patch_file_new (pairs, p);
  const gint64 t0 = g_get_monotonic_time ();

  for (int i = 0; i < f->n_pairs; i++)
    {
      const SaccadePatchPair *pair = g_ptr_array_index (pairs, i);
      SaccadeProgressPart prog = { progress, user_data, cancellable, (double) i / f->n_pairs,
                                   1.0 / f->n_pairs };
      ScPatchResult *r = NULL;
      int first_row = 0;
      if (!patch_pair (model, session, pair, p, &prog, &first_row, &r, error)
          || !saccade_patch_file_take (f, i, r, first_row, error))
        return NULL;
    }
  if (!saccade_patch_file_summarise (f, p, error))
    return NULL;
  f->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&f);
}

static int
by_size (gconstpointer a, gconstpointer b, gpointer data)
{
  const SaccadePatchFile *f = data;
  const double x = fabs (f->mean[*(const int *) a] - f->base);
  const double y = fabs (f->mean[*(const int *) b] - f->base);

  return x < y ? 1 : x > y ? -1 : *(const int *) a - *(const int *) b;
}

int *
saccade_patch_file_order (const SaccadePatchFile *f, int *n)
{
  const int skip = f->first_row * f->n_cols;
  int *order = g_new (int, MAX (f->n_tested, 1));

  for (int c = 0; c < f->n_tested; c++)
    order[c] = skip + c;
  g_qsort_with_data (order, f->n_tested, sizeof *order, by_size, (gpointer) f);
  *n = f->n_tested;
  return order;
}
