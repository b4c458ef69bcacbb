/* saccade-export.c — the one exporter (see saccade-export.h): a source that hands out a
 * run's heads, labels and statistics, and the figure and data writers over it.
 *
 * A source over a SaccadeRun lends the run's memory; one over a store reads what an export
 * asks for into memory it frees when the export returns. Every writer asks through the
 * same three functions (source_head, saccade_export_source_block, saccade_export_source_stats), so the two kinds of
 * source cannot drift apart. Each cuts to a token range (SaccadeExportRange) after reading
 * a whole head, so the metrics stay those of whole heads. Whole-run arrays are in
 * saccade-export-arrays.c.
 */
#define G_LOG_DOMAIN "saccade-export"

#include "app/core/saccade-csv.h"
#include "app/core/saccade-export-private.h"

#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-npz.h"
#include "app/core/saccade-paths.h"
#include "engine/analysis/sc-rollout.h"
#include "engine/store/sc-store-scores.h"
#include "ui/figures/saccade-lod.h"
#include "ui/figures/saccade-figure-lines.h"
#include "ui/figures/saccade-token-label.h"

SaccadeExportSource *
saccade_export_source_new_for_run (SaccadeRun *run, GError **error)
{
  g_autoptr (SaccadeExportSource) src = g_new0 (SaccadeExportSource, 1);
  ScError err = { 0 };

  src->run = saccade_run_ref (run);
  src->run_id = run->id;
  src->n_layers = run->n_layers;
  src->n_heads = run->n_heads;
  src->n_kv_heads = run->n_kv_heads;
  src->n = run->n;
  src->tokens = run->tokens;
  src->labels = run->labels;
  if (!run->resident)
    {
      /* A long run's heads are in its store only: read them from there, head by head. */
      if ((src->own_store = saccade_store_open (run->db_path, FALSE, &err)) == NULL
          || sc_store_get_run (src->own_store, run->id, &src->info, &err) != SC_OK)
        {
          saccade_set_error_from_sc (error, &err);
          return NULL;
        }
      src->store = src->own_store;
    }
  return g_steal_pointer (&src);
}

SaccadeExportSource *
saccade_export_source_new_for_store (ScStore *store, const ScStoreRunInfo *info,
                                     GError **error)
{
  g_autoptr (SaccadeExportSource) src = g_new0 (SaccadeExportSource, 1);
  ScError err = { 0 };
  size_t n = 0;

  if (sc_store_read_tokens (store, info->id, &src->own_tokens, &n, &err) != SC_OK
      || sc_store_get_run (store, info->id, &src->info, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  src->store = store;
  src->run_id = info->id;
  src->n_layers = (int) info->n_layers;
  src->n_heads = (int) info->n_heads;
  src->n_kv_heads = (int) info->n_kv_heads;
  src->n = (int) n;
  src->tokens = src->own_tokens;
  src->labels = src->own_labels = saccade_token_labels_for_store (src->tokens, n);
  return g_steal_pointer (&src);
}

void
saccade_export_source_free (SaccadeExportSource *src)
{
  if (src == NULL)
    return;
  g_clear_pointer (&src->run, saccade_run_unref);
  sc_store_close (src->own_store);
  sc_store_tokens_free (src->own_tokens);
  g_strfreev (src->own_labels);
  sc_store_run_info_clear (&src->info);
  g_free (src);
}

/* ------------------------------------------------------------------------------------ */
/* What a source hands out                                                               */

/* The source lends heads from memory (a resident run), else reads them from its store. */
static gboolean
source_resident (const SaccadeExportSource *src)
{
  return src->run != NULL && src->run->resident;
}

static gboolean
check_head (SaccadeExportSource *src, int layer, int head, GError **error)
{
  if (layer >= 0 && layer < src->n_layers && head >= 0 && head < src->n_heads)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               "run %" G_GINT64_FORMAT " has layers 0-%d and heads 0-%d, not layer %d head %d",
               src->run_id, src->n_layers - 1, src->n_heads - 1, layer, head);
  return FALSE;
}

gboolean
saccade_export_range_resolve (const SaccadeExportSource *src, const SaccadeExportRange *range,
                              SaccadeExportRange *out, GError **error)
{
  SaccadeExportRange r = range != NULL ? *range : (SaccadeExportRange) { 0, -1, 0, -1 };
  int *sides[2][2] = { { &r.q0, &r.q1 }, { &r.k0, &r.k1 } };

  for (int s = 0; s < 2; s++)
    {
      int a = *sides[s][0], b = *sides[s][1] < 0 ? src->n : *sides[s][1];
      const char *why = a < 0 ? "starts before position 0"
                        : a >= src->n ? "starts past the last token"
                        : b > src->n ? "ends past the last token"
                        : a >= b ? "is empty (its end must be past its start)" : NULL;
      if (why != NULL)
        {
          g_autofree char *end = *sides[s][1] < 0 ? g_strdup ("") : g_strdup_printf ("%d", b);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "run %" G_GINT64_FORMAT " has %d tokens (0:%d); the %s range %d:%s %s",
                       src->run_id, src->n, src->n, s == 0 ? "query" : "key", a, end, why);
          return FALSE;
        }
      *sides[s][1] = b;
    }
  *out = r;
  return TRUE;
}

gboolean
saccade_export_range_is_whole (const SaccadeExportSource *src, const SaccadeExportRange *r)
{
  return r->q0 == 0 && r->k0 == 0 && r->q1 == src->n && r->k1 == src->n;
}

void
saccade_export_cut_block (const float *a, int n, const SaccadeExportRange *r, float *out)
{
  const gsize nk = (gsize) (r->k1 - r->k0);

  for (int i = r->q0; i < r->q1; i++)
    memcpy (out + (gsize) (i - r->q0) * nk, a + (gsize) i * n + r->k0, nk * sizeof (float));
}

static gboolean
source_head (SaccadeExportSource *src, int layer, int head, SaccadeExportHeadView *v, GError **error)
{
  ScError err = { 0 };

  memset (v, 0, sizeof *v);
  if (source_resident (src))
    {
      if (!check_head (src, layer, head, error))
        return FALSE;
      v->probs = saccade_run_head (src->run, layer, head);
      v->n_query = v->n_key = (guint) src->n;
      v->causal = src->run->causal;
      v->window = saccade_run_head_window (src->run, layer, head);
      return TRUE;
    }
  if (sc_store_read_head (src->store, src->run_id, layer, head, &v->stored, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  if (v->stored.n_key != (guint32) src->n || v->stored.n_query != (guint32) src->n)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT, "run %" G_GINT64_FORMAT " layer %d "
                   "head %d is %u x %u for %d tokens", src->run_id, layer, head,
                   v->stored.n_query, v->stored.n_key, src->n);
      sc_store_head_clear (&v->stored);
      return FALSE;
    }
  v->probs = v->stored.probs;
  v->n_query = v->stored.n_query;
  v->n_key = v->stored.n_key;
  v->causal = v->stored.causal;
  v->window = v->stored.window;
  return TRUE;
}

static void
head_view_clear (SaccadeExportHeadView *v)
{
  sc_store_head_clear (&v->stored);
  g_clear_pointer (&v->cut, g_free);
}

/* Cuts @v (a whole (n, n) head) to @r, resolved. */
static void
head_view_cut (SaccadeExportSource *src, SaccadeExportHeadView *v, const SaccadeExportRange *r)
{
  if (saccade_export_range_is_whole (src, r))
    return;
  v->cut = g_new (float, (gsize) (r->q1 - r->q0) * (r->k1 - r->k0));
  saccade_export_cut_block (v->probs, src->n, r, v->cut);
  v->probs = v->cut;
  v->n_query = (guint) (r->q1 - r->q0);
  v->n_key = (guint) (r->k1 - r->k0);
  v->q0 = (guint) r->q0;
  v->k0 = (guint) r->k0;
}

/* Reads head (@l, @h) of a store source, whole ((n, n), checked against the run). */
static gboolean
read_whole (SaccadeExportSource *src, int l, int h, ScStoreHead *head, GError **error)
{
  ScError err = { 0 };

  if (sc_store_read_head (src->store, src->run_id, l, h, head, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  if (head->n_query != (guint32) src->n || head->n_key != (guint32) src->n)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT, "run %" G_GINT64_FORMAT
                   " layer %d head %d: %u x %u, not %d x %d", src->run_id, l, h,
                   head->n_query, head->n_key, src->n, src->n);
      sc_store_head_clear (head);
      return FALSE;
    }
  return TRUE;
}

/* Heads @h0 .. @h0 + @nh - 1 of layers @l0 .. @l0 + @nl - 1 (whole layers when @nl > 1),
 * each cut to @r (resolved), (nl, nh, q1 - q0, k1 - k0): borrowed from a run source when
 * @r is the whole run, else read (one whole head at a time) into *@owned (caller frees).
 * @causal (optional): every head stored as a lower triangle. */
const float *
saccade_export_source_block (SaccadeExportSource *src, int l0, int nl, int h0, int nh,
              const SaccadeExportRange *r, float **owned, gboolean *causal,
              GError **error)
{
  const gsize block = (gsize) (r->q1 - r->q0) * (r->k1 - r->k0);
  gboolean all_causal = TRUE;
  g_autofree float *all = NULL;

  g_return_val_if_fail (nl == 1 || (h0 == 0 && nh == src->n_heads), NULL);
  *owned = NULL;
  if (!check_head (src, l0, h0, error) || !check_head (src, l0 + nl - 1, h0 + nh - 1, error))
    return NULL;
  if (source_resident (src) && saccade_export_range_is_whole (src, r))
    {
      if (causal != NULL)
        *causal = src->run->causal;
      return saccade_run_head (src->run, l0, h0);
    }
  /* nl, nh and n come from a store that checked them against its ceilings; the product is
   * still computed with overflow checks, and a block too big for memory is an error, not
   * an abort. */
  {
    gsize count = 0;
    if (!g_size_checked_mul (&count, (gsize) nl * (gsize) nh, block)
        || (all = g_try_new (float, count)) == NULL)
      {
        g_autofree char *need = g_format_size ((guint64) nl * nh * block * sizeof (float));
        g_set_error (error, SACCADE_ERROR, SC_ERR_NOMEM,
                     "run %" G_GINT64_FORMAT ": %d x %d heads of %d x %d tokens need %s of "
                     "memory (a smaller --range needs less)", src->run_id, nl, nh,
                     r->q1 - r->q0, r->k1 - r->k0, need);
        return NULL;
      }
  }
  for (int l = 0; l < nl; l++)
    for (int h = 0; h < nh; h++)
      {
        float *dst = all + ((gsize) l * nh + h) * block;
        ScStoreHead head = { 0 };
        if (source_resident (src))
          {
            saccade_export_cut_block (saccade_run_head (src->run, l0 + l, h0 + h), src->n, r, dst);
            continue;
          }
        if (!read_whole (src, l0 + l, h0 + h, &head, error))
          return NULL;
        saccade_export_cut_block (head.probs, src->n, r, dst);
        all_causal = all_causal && head.causal;
        sc_store_head_clear (&head);
      }
  if (causal != NULL)
    *causal = source_resident (src) ? src->run->causal : all_causal;
  return *owned = g_steal_pointer (&all);
}

/* Every head's statistics (n_layers, n_heads): borrowed from the run, or computed from the
 * store one head at a time into *@owned_stats (caller frees). */
const ScHeadStats *
saccade_export_source_stats (SaccadeExportSource *src, ScHeadStats **owned_stats, GError **error)
{
  ScStoreHeadScores scores = { 0 };
  ScError err = { 0 };

  *owned_stats = NULL;
  if (src->run != NULL)
    return src->run->stats;
  /* The statistics the capture stored with the run (computed there by the same code as
   * saccade_run_load() and `saccade capture --summary`; the store computes the ones an
   * older run lacks from its heads). */
  if (sc_store_read_head_scores (src->store, src->run_id, &scores, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if (scores.n_layers != (guint32) src->n_layers || scores.n_heads != (guint32) src->n_heads)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT, "run %" G_GINT64_FORMAT ": scores "
                   "for %u x %u heads, not %d x %d", src->run_id, scores.n_layers,
                   scores.n_heads, src->n_layers, src->n_heads);
      sc_store_head_scores_clear (&scores);
      return NULL;
    }
  *owned_stats = g_steal_pointer (&scores.stats);
  sc_store_head_scores_clear (&scores);
  return *owned_stats;
}

/* Every head's overview over the range @r (resolved, square): (n_layers, n_heads, S, S)
 * block maxima, S = *@size. Borrowed from a run for the whole range, else computed one
 * head at a time — read, cut to @r, pooled, freed — into *@owned (caller frees), so a grid
 * of a long run never holds more than one head (a 2,010-token grid once needed 4.3 GB). */
static const float *
source_overviews (SaccadeExportSource *src, const SaccadeExportRange *r, int *size,
                  float **owned, GError **error)
{
  const int nq = r->q1 - r->q0;
  const int s = saccade_head_overview_size (nq);
  const gsize s2 = (gsize) s * s;
  g_autofree float *all = NULL;

  *owned = NULL;
  if (src->run != NULL && saccade_export_range_is_whole (src, r))
    {
      *size = src->run->overview_size;
      return src->run->overviews;
    }
  all = g_new (float, (gsize) src->n_layers * src->n_heads * s2);
  for (int l = 0; l < src->n_layers; l++)
    for (int h = 0; h < src->n_heads; h++)
      {
        SaccadeExportHeadView v;
        if (!source_head (src, l, h, &v, error))
          return NULL;
        head_view_cut (src, &v, r);
        saccade_head_overview (v.probs, nq, r->q0, r->k0, v.causal, v.window,
                               all + ((gsize) l * src->n_heads + h) * s2);
        head_view_clear (&v);
      }
  *size = s;
  return *owned = g_steal_pointer (&all);
}

/* Query heads per KV head, as saccade_run_group_size() counts them. */
int
saccade_export_source_group_size (const SaccadeExportSource *src)
{
  if (src->n_kv_heads <= 0 || src->n_heads % src->n_kv_heads != 0)
    return 1;
  return src->n_heads / src->n_kv_heads;
}

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

static gboolean
export_grid (SaccadeExportSource *src, const SaccadeExportFigure *fig,
             const SaccadeExportRange *r, const char *path, GError **error)
{
  g_autofree float *owned = NULL;
  g_autofree ScHeadStats *owned_stats = NULL;
  g_autofree guint *windows = g_new0 (guint, MAX (src->n_layers, 1));
  g_autofree double *metric = NULL;
  const ScHeadStats *stats = NULL;
  const float *overviews;
  ScHeadMetric m = SC_HEAD_METRIC_ENTROPY;
  gsize k, nh = (gsize) src->n_layers * src->n_heads;
  int size = 0;

  if (fig->metric != NULL && !sc_head_metric_from_id (fig->metric, &m))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no head metric '%s'",
                   fig->metric);
      return FALSE;
    }
  if (r->q1 - r->q0 != r->k1 - r->k0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "the grid draws square heads: the range %d:%d,%d:%d has %d queries and %d "
                   "keys", r->q0, r->q1, r->k0, r->k1, r->q1 - r->q0, r->k1 - r->k0);
      return FALSE;
    }
  if (fig->grid_bands < 0 || fig->grid_bands > src->n_layers)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "cannot wrap the run's %d layers into %d bands: give 1 to %d (0: automatic)",
                   src->n_layers, fig->grid_bands, src->n_layers);
      return FALSE;
    }
  if ((overviews = source_overviews (src, r, &size, &owned, error)) == NULL)
    return FALSE;
  for (int l = 0; l < src->n_layers; l++)
    windows[l] = src->run != NULL ? saccade_run_layer_window (src->run, l)
                                  : sc_store_run_layer_window (&src->info, l);
  if (fig->metric_values != NULL)
    metric = g_memdup2 (fig->metric_values, nh * sizeof *metric);
  else if (fig->metric != NULL)
    {
      /* The metrics of whole heads, also for a range (docs/metrics.md, "Token ranges"). */
      if ((stats = saccade_export_source_stats (src, &owned_stats, error)) == NULL)
        return FALSE;
      metric = g_new (double, nh);
      for (k = 0; k < nh; k++)
        metric[k] = sc_head_stats_get (&stats[k], m);
    }
  return saccade_figure_export_grid (&(SaccadeGridFigure) {
    .n_layers = src->n_layers, .n_heads = src->n_heads, .n_kv_heads = src->n_kv_heads,
    .n = r->q1 - r->q0, .overviews = overviews, .overview_size = size, .metric = metric,
    .metric_name = fig->metric_name, .title = fig->title, .colormap = fig->colormap,
    .scale = fig->scale, .layer_windows = windows, .bands = fig->grid_bands,
  }, path, fig->options, error);
}

static gboolean
export_lines (SaccadeExportSource *src, const SaccadeExportFigure *fig,
              const SaccadeExportRange *r, const char *path, GError **error)
{
  /* Whole rows of the range's queries: the top k of a query are of all its keys. */
  const SaccadeExportRange rows = { r->q0, r->q1, 0, src->n };
  g_autofree int *ids = NULL;
  g_autoptr (SaccadeLinesLinks) links = NULL;
  int n_ids;

  if (r->q0 != r->k0 || r->q1 != r->k1)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "the lines figure shows the same tokens on both sides: give one range "
                   "(--range %d:%d), not %d:%d,%d:%d", r->q0, r->q1, r->q0, r->q1, r->k0, r->k1);
      return FALSE;
    }
  if (fig->lines_heads != NULL)
    {
      n_ids = MAX (fig->lines_n_heads, 0);
      ids = g_memdup2 (fig->lines_heads, sizeof (int) * (gsize) MAX (n_ids, 1));
    }
  else
    {
      n_ids = fig->head >= 0 ? 1 : src->n_heads;
      ids = g_new (int, MAX (n_ids, 1));
      for (int k = 0; k < n_ids; k++)
        ids[k] = fig->head >= 0 ? fig->head : k;
    }
  links = saccade_lines_links_new (src->n_heads, r->q0, r->q1,
                                   fig->lines_threshold > 0 ? fig->lines_threshold
                                                            : SACCADE_LINES_MIN_WEIGHT,
                                   fig->lines_top_k);
  for (int k = 0; k < n_ids; k++)
    {
      g_autofree float *owned = NULL;
      const float *block;
      /* check_head() inside names a head the run does not have */
      if ((block = saccade_export_source_block (src, fig->layer, 1, ids[k], 1, &rows, &owned, NULL,
                                 error)) == NULL)
        return FALSE;
      saccade_lines_links_add_head (links, ids[k], block, 0, src->n, NULL);
    }
  saccade_lines_links_finish (links);
  return saccade_figure_export_lines (&(SaccadeLinesFigure) {
    .n_heads = n_ids, .n = r->q1 - r->q0, .links = links,
    .labels = (const char *const *) src->labels + r->q0, .highlight_token = -1,
    .title = fig->title, .head_ids = ids, .n_heads_total = src->n_heads,
    .position0 = r->q0, .show_positions = !saccade_export_range_is_whole (src, r),
  }, path, fig->options, error);
}

static gboolean
export_heatmap (SaccadeExportSource *src, const SaccadeExportFigure *fig,
                const SaccadeExportRange *r, const char *path, GError **error)
{
  g_autoptr (SaccadeLod) lod = NULL;
  SaccadeExportHeadView v;

  if (!source_head (src, fig->layer, fig->head, &v, error))
    return FALSE;
  /* The whole head's pyramid, drawn over the range with the run's own positions on the
   * axes and the whole head's colour range (the window's export draws the same figure). */
  lod = saccade_lod_new_float (v.probs, (int) v.n_query, (int) v.n_key, v.causal, error);
  /* a band head: the keys left of its window are masked, drawn hatched */
  if (lod != NULL && v.window > 0)
    saccade_lod_set_window (lod, (int) v.window);
  head_view_clear (&v);
  if (lod == NULL)
    return FALSE;
  return saccade_figure_export_heatmap_lod (&(SaccadeHeatmapLodFigure) {
    .lod = lod, .row_labels = (const char *const *) src->labels,
    .col_labels = (const char *const *) src->labels, .title = fig->title,
    .colormap = fig->colormap, .scale = fig->scale,
  }, &(SaccadeTokenRange) { r->q0, r->q1, r->k0, r->k1 }, path, fig->options, error);
}

static gboolean
export_profile (SaccadeExportSource *src, const SaccadeExportFigure *fig, const char *path,
                GError **error)
{
  g_autofree ScHeadStats *owned_stats = NULL;
  g_autofree double *values = NULL;
  const ScHeadStats *stats;
  ScHeadMetric m = SC_HEAD_METRIC_ENTROPY;
  gsize k, nh = (gsize) src->n_layers * src->n_heads;

  if (fig->metric_values == NULL
      && (fig->metric == NULL || !sc_head_metric_from_id (fig->metric, &m)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no head metric '%s'",
                   fig->metric != NULL ? fig->metric : "(none)");
      return FALSE;
    }
  if (fig->range != NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "the profile figure summarises whole heads: it takes no range");
      return FALSE;
    }
  if (fig->metric_values != NULL)
    values = g_memdup2 (fig->metric_values, nh * sizeof *values);
  else if ((stats = saccade_export_source_stats (src, &owned_stats, error)) == NULL)
    return FALSE;
  else
    {
      values = g_new (double, nh);
      for (k = 0; k < nh; k++)
        values[k] = sc_head_stats_get (&stats[k], m);
    }
  return saccade_figure_export_profile (&(SaccadeProfileFigure) {
    .n_layers = src->n_layers, .n_heads = src->n_heads, .values = values,
    .metric_name = fig->metric_name != NULL ? fig->metric_name : fig->metric,
    .title = fig->title,
  }, path, fig->options, error);
}

double *
saccade_export_rollout (SaccadeExportSource *src, gboolean exclude_first, GError **error)
{
  const ScRolloutOptions opt = { .exclude_first = exclude_first != FALSE };
  g_autofree float *owned = NULL;
  g_autofree const float **layers = NULL;
  g_autofree double *out = NULL;
  const SaccadeExportRange whole = { 0, src->n, 0, src->n };
  const float *heads = saccade_export_source_block (src, 0, src->n_layers, 0, src->n_heads, &whole, &owned,
                                     NULL, error);
  gsize per_layer = (gsize) src->n_heads * src->n * src->n;
  ScError err = { 0 };

  if (heads == NULL)
    return NULL;
  layers = g_new (const float *, src->n_layers);
  for (int l = 0; l < src->n_layers; l++)
    layers[l] = heads + l * per_layer;
  out = g_try_new (double, (gsize) src->n * src->n);
  if (out == NULL)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_NOMEM, "out of memory for the rollout");
      return NULL;
    }
  if (sc_attention_rollout_with (layers, src->n_layers, src->n_heads, src->n, &opt, out, &err)
      != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  return g_steal_pointer (&out);
}

static gboolean
export_rollout (SaccadeExportSource *src, const SaccadeExportFigure *fig,
                const SaccadeExportRange *r, const char *path, GError **error)
{
  g_autofree double *all = saccade_export_rollout (src, fig->exclude_first, error);
  g_autofree float *cells = NULL;
  const int nq = r->q1 - r->q0, nk = r->k1 - r->k0;

  if (all == NULL)
    return FALSE;
  cells = g_new (float, (gsize) nq * nk);
  for (int i = 0; i < nq; i++)
    for (int j = 0; j < nk; j++)
      cells[(gsize) i * nk + j] = (float) all[(gsize) (r->q0 + i) * src->n + r->k0 + j];
  return saccade_figure_export_heatmap (&(SaccadeHeatmapFigure) {
    .values = cells, .n_rows = nq, .n_cols = nk,
    .row_labels = (const char *const *) src->labels + r->q0,
    .col_labels = (const char *const *) src->labels + r->k0, .title = fig->title,
    .colormap = fig->colormap, .scale = fig->scale, .causal = FALSE,
  }, path, fig->options, error);
}

gboolean
saccade_export_figure (SaccadeExportSource *src, const SaccadeExportFigure *fig,
                       const char *path, GError **error)
{
  SaccadeExportRange r;

  if (!saccade_export_range_resolve (src, fig->range, &r, error))
    return FALSE;
  switch (fig->kind)
    {
    case SACCADE_EXPORT_HEATMAP:
      return export_heatmap (src, fig, &r, path, error);
    case SACCADE_EXPORT_GRID:
      return export_grid (src, fig, &r, path, error);
    case SACCADE_EXPORT_LINES:
      return export_lines (src, fig, &r, path, error);
    case SACCADE_EXPORT_PROFILE:
      return export_profile (src, fig, path, error);
    case SACCADE_EXPORT_ROLLOUT:
      return export_rollout (src, fig, &r, path, error);
    default:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no figure kind %d",
                   (int) fig->kind);
      return FALSE;
    }
}

/* ------------------------------------------------------------------------------------ */
/* NPY and JSON                                                                          */

/* One head as a .npy file (saccade-npz.h has the format), float32 little-endian. */
static GBytes *
head_npy (const SaccadeExportHeadView *v)
{
  const guint64 shape[2] = { v->n_query, v->n_key };
  gsize header = 0, i, n = (gsize) v->n_query * v->n_key;
  g_autofree guint8 *head = saccade_npy_header ("<f4", shape, 2, &header);
  guint8 *out = g_malloc (header + 4 * n);

  memcpy (out, head, header);
  for (i = 0; i < n; i++)
    {
      guint32 bits;
      memcpy (&bits, &v->probs[i], sizeof bits);
      bits = GUINT32_TO_LE (bits);
      memcpy (out + header + 4 * i, &bits, 4);
    }
  return g_bytes_new_take (out, header + 4 * n);
}

static GBytes *
head_json (const SaccadeExportSource *src, const SaccadeExportHeadView *v, int layer, int head)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  gsize len = 0;
  char *text;
  guint i, j;

  json_builder_begin_object (b);
  saccade_json_int (b, "run", src->run_id);
  saccade_json_head (b, layer, head);
  saccade_json_int (b, "n_query", v->n_query);
  saccade_json_int (b, "n_key", v->n_key);
  if (v->q0 != 0 || v->k0 != 0 || v->n_query != (guint) src->n || v->n_key != (guint) src->n)
    {
      saccade_json_int (b, "query_start", v->q0);
      saccade_json_int (b, "key_start", v->k0);
    }
  saccade_json_bool (b, "causal", v->causal);
  /* A band head (a local layer's): in row i the keys before i - window + 1 are masked (0
   * in weights, like the cells above the diagonal). */
  if (v->window > 0)
    saccade_json_int (b, "window", v->window);
  /* The weights are the store's fp16 values (rows sum to 1 only within fp16 rounding). */
  saccade_json_string (b, "dtype_stored", "f16");
  saccade_json_tokens (b, src->tokens, (size_t) src->n);
  saccade_json_begin_array (b, "weights");
  for (i = 0; i < v->n_query; i++)
    {
      json_builder_begin_array (b);
      for (j = 0; j < v->n_key; j++)
        saccade_json_add_double (b, v->probs[(gsize) i * v->n_key + j]);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  text = saccade_json_to_data (b, FALSE, &len);
  return g_bytes_new_take (text, len);
}

GBytes *
saccade_export_head (SaccadeExportSource *src, int layer, int head, SaccadeExportFormat format,
                     guint *n_query, guint *n_key, GError **error)
{
  return saccade_export_head_range (src, layer, head, NULL, format, n_query, n_key, error);
}

GBytes *
saccade_export_head_range (SaccadeExportSource *src, int layer, int head,
                           const SaccadeExportRange *range, SaccadeExportFormat format,
                           guint *n_query, guint *n_key, GError **error)
{
  SaccadeExportRange r;
  GBytes *data;
  SaccadeExportHeadView v;

  if (!saccade_export_range_resolve (src, range, &r, error)
      || !source_head (src, layer, head, &v, error))
    return NULL;
  head_view_cut (src, &v, &r);
  if (format == SACCADE_EXPORT_NPY)
    data = head_npy (&v);
  else if (format == SACCADE_EXPORT_JSON)
    data = head_json (src, &v, layer, head);
  else
    data = saccade_export_head_csv (&v, (const char *const *) src->labels);
  if (n_query != NULL)
    *n_query = v.n_query;
  if (n_key != NULL)
    *n_key = v.n_key;
  head_view_clear (&v);
  return data;
}

gboolean
saccade_export_write (GBytes *data, const char *path, GError **error)
{
  gsize len = 0;
  const char *bytes = g_bytes_get_data (data, &len);

  return g_file_set_contents (path, bytes != NULL ? bytes : "", (gssize) len, error);
}
