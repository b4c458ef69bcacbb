/* saccade-heatmap-page.c — the Heatmap page (see saccade-heatmap-page.h): hands the head
 * under the cursor to SaccadeHeatmapView, keeps the layer and head spin buttons on the
 * cursor (two GtkAdjustments bound to SaccadePage:layer and :head), shows which KV head
 * the head belongs to, and keeps the colour map and scale controls on GSettings (the
 * Preferences window writes the same keys, so both always agree).
 *
 * The Weight / Norm switch chooses what the cells are: the stored attention weights α_ij,
 * or norm-based attention ‖α_ij f_h(x_j)‖ (Kobayashi 2020), the layer's norm study read
 * back or computed in a worker (saccade-norm-maps.h) and kept per run and layer. Where it
 * cannot be computed (a run of another model, one too long for the maps) Norm is off and
 * a line under the toolbar says why; the title, the colour bar and the exports say which
 * is shown.
 *
 * Its own actions: page.reset-zoom (win.reset-zoom, Ctrl+0, reaches it on this page) and
 * page.values (s: "weight" or "norm", what the switch does).
 * The view copies what it is given; the run stays the one source of the numbers. A run
 * that is not resident (a long one: saccade-run.h) has its head read from the store in a
 * worker thread each time the cursor moves; the newest request wins, older ones are
 * cancelled, and the main loop never waits for the store.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-heatmap-page.h"

#include <glib/gi18n.h>

#include "app/core/saccade-export.h"
#include "app/core/saccade-job.h"
#include "app/window/pages/saccade-norm-maps.h"
#include "app/window/saccade-window.h"
#include "ui/figures/saccade-lod.h"
#include "ui/widgets/saccade-background.h"
#include "ui/widgets/saccade-heatmap-view.h"

struct _SaccadeHeatmapPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkAdjustment *layer_adjustment;
  GtkAdjustment *head_adjustment;
  GtkLabel *kv_label;
  GtkDropDown *colormap_dropdown;
  GtkToggleButton *linear_button;
  GtkToggleButton *log_button;
  GtkToggleButton *weight_button;
  GtkToggleButton *norm_button;
  GtkLabel *norm_label;
  SaccadeHeatmapView *heatmap_view;

  gboolean norm;          /* the cells are norm-based attention, not weights */
  GCancellable *norm_job; /* the norm study of a layer, computing or read back */
  int norm_job_layer;
  char *norm_error;       /* the last norm study's failure, shown until the run changes */
  SaccadeNormCache *norms; /* the run's norm studies by layer */

  gboolean updating; /* the page is setting its own controls from the settings */
  GCancellable *head_job; /* reading a long run's head */
  /* The long run's head whose exact pyramid the view shows (not a reference: compared
   * only), so that showing the page again does not read it again. */
  SaccadeRun *exact_run;
  int exact_layer, exact_head;
};

G_DEFINE_FINAL_TYPE (SaccadeHeatmapPage, saccade_heatmap_page, SACCADE_TYPE_PAGE)

enum { PROP_0, PROP_SCALE, PROP_LOG_OFFERED, N_PROPS };
static GParamSpec *props[N_PROPS];

static void
update_actions (SaccadeHeatmapPage *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.reset-zoom",
                                 saccade_page_get_run (SACCADE_PAGE (self)) != NULL);
}

static char *saccade_heatmap_page_dup_plain_title (SaccadePage *page, SaccadeRun *run, int head,
                                                   const char *quote);

static char *saccade_heatmap_page_dup_weight_title (SaccadePage *page);

static char *
saccade_heatmap_page_dup_figure_title (SaccadePage *page)
{
  g_autofree char *title = saccade_heatmap_page_dup_weight_title (page);

  if (!SACCADE_HEATMAP_PAGE (page)->norm || *title == '\0')
    return g_steal_pointer (&title);
  /* Translators: the heatmap's title in its Norm view: the cells are norm-based attention
   * (Kobayashi et al. 2020), each weight times the length of what its token sends through
   * the head; then the title of the weights' view. */
  return g_strdup_printf (_("Norm-based attention ‖α·f(x)‖ · %s"), title);
}

/* The title of the weights' view. */
static char *
saccade_heatmap_page_dup_weight_title (SaccadePage *page)
{
  SaccadeRun *run = saccade_page_get_run (page);
  g_autofree char *quote = NULL, *title = NULL;
  int head = saccade_page_get_head (page);
  guint window;

  if (run == NULL)
    return g_strdup ("");
  quote = saccade_page_dup_quoted_text (run);
  window = saccade_run_layer_window (run, saccade_page_get_layer (page));
  if (window > 0)
    {
      title = saccade_heatmap_page_dup_plain_title (page, run, head, quote);
      /* Translators: appended to the heatmap's title for a layer of a sliding-window model
       * (Gemma 3) whose queries see only the last N keys: "Layer 3, head 2 (KV head 0) ·
       * “…” · local layer (window 512)". Keys outside the window are drawn as masked. */
      return g_strdup_printf (_("%s · local layer (window %u)"), title, window);
    }
  if (run->windows != NULL)
    {
      title = saccade_heatmap_page_dup_plain_title (page, run, head, quote);
      /* Translators: appended to the heatmap's title for a layer of a sliding-window model
       * (Gemma 3) whose queries see every earlier key, unlike its local layers:
       * "Layer 5, head 1 (KV head 0) · “…” · global layer". */
      return g_strdup_printf (_("%s · global layer"), title);
    }
  return saccade_heatmap_page_dup_plain_title (page, run, head, quote);
}

/* The title without the layer's window. */
static char *
saccade_heatmap_page_dup_plain_title (SaccadePage *page, SaccadeRun *run, int head,
                                      const char *quote)
{
  /* Translators: the heatmap's title, e.g. "Layer 5, head 2 (KV head 0) · “The cat…”"; "KV
   * head" names the key/value head the query head shares, as everywhere in Saccade. */
  if (run->sparse_eps > 0)
    /* Translators: the heatmap's title for a run stored in the sparse form: each row kept
     * the fewest keys holding 1 − ε of its weight; the cells it dropped are drawn as 0. */
    return g_strdup_printf (_("Layer %d, head %d (KV head %d) · %s · sparse, each row ≥ %g of "
                              "its weight"),
                            saccade_page_get_layer (page), head,
                            head / saccade_run_group_size (run), quote, 1.0 - run->sparse_eps);
  if (run->round_bits > 0 || run->zero_below > 0)
    {
      g_autofree char *rounded = saccade_run_rounding_label (run->round_bits, run->zero_below);
      /* Translators: the heatmap's title for a run stored in the rounded form; the last %s
       * says its stated error, e.g. "rounded: each value within 3.12 % of its fp16". */
      return g_strdup_printf (_("Layer %d, head %d (KV head %d) · %s · %s"),
                              saccade_page_get_layer (page), head,
                              head / saccade_run_group_size (run), quote, rounded);
    }
  return g_strdup_printf (_("Layer %d, head %d (KV head %d) · %s"),
                          saccade_page_get_layer (page), head,
                          head / saccade_run_group_size (run), quote);
}

/* A long run's head, read and made into a pyramid in a worker. */
typedef struct {
  SaccadeRun *run;
  int layer, head;
  SaccadeLod *lod;
} HeadJob;

static void
head_job_free (HeadJob *j)
{
  saccade_run_unref (j->run);
  saccade_lod_unref (j->lod);
  g_free (j);
}

static void
head_job_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  HeadJob *j = task_data;
  g_autoptr (GBytes) f16 = NULL;
  g_autofree float *probs = NULL;
  gboolean causal = FALSE;
  guint window = 0;
  GError *error = NULL;

  /* The fp16 the store holds, kept fp16 in the pyramid (half the memory of float); a head
   * stored whole (not causal) goes through float. */
  f16 = saccade_run_read_head_f16 (j->run, j->layer, j->head, &causal, &window, cancellable,
                                   &error);
  if (f16 != NULL && causal)
    {
      j->lod = saccade_lod_new_fp16_triangle (f16, j->run->n, &error);
      /* a band head: its keys left of the window are masked, not zeros */
      if (j->lod != NULL)
        saccade_lod_set_window (j->lod, (int) window);
    }
  else if (f16 != NULL)
    {
      g_clear_pointer (&f16, g_bytes_unref);
      probs = saccade_run_read_head (j->run, j->layer, j->head, cancellable, &error);
      if (probs != NULL)
        j->lod = saccade_lod_new_float (probs, j->run->n, j->run->n, FALSE, &error);
    }
  if (j->lod == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
set_title (SaccadeHeatmapPage *self)
{
  g_autofree char *title = saccade_heatmap_page_dup_figure_title (SACCADE_PAGE (self));
  saccade_heatmap_view_set_title (self->heatmap_view, title);
}

static void
head_job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  SaccadeHeatmapPage *self;
  HeadJob *j = g_task_get_task_data (G_TASK (result));

  if (!g_task_propagate_boolean (G_TASK (result), &error)
      && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* a newer request took its place */
  self = SACCADE_HEATMAP_PAGE (source);
  if (g_task_get_cancellable (G_TASK (result)) != self->head_job)
    return;
  g_clear_object (&self->head_job);
  if (error != NULL)
    {
      saccade_heatmap_view_set_data (self->heatmap_view, NULL, 0, 0, NULL, NULL, FALSE);
      saccade_heatmap_view_set_title (self->heatmap_view, error->message);
      return;
    }
  self->exact_run = j->run;
  self->exact_layer = j->layer;
  self->exact_head = j->head;
  /* The same shape as the overview shown: the zoom and the range stay. */
  saccade_heatmap_view_set_lod (self->heatmap_view, j->lod, (const char *const *) j->run->labels,
                                (const char *const *) j->run->labels);
}

/* A long run: its overview now (drawn at once), the exact head when the worker has it. */
static void
start_head_job (SaccadeHeatmapPage *self, SaccadeRun *run, int layer, int head)
{
  g_autoptr (GTask) task = NULL;
  g_autoptr (SaccadeLod) overview = NULL;
  int s = run->overview_size;
  HeadJob *j;

  overview = saccade_lod_new_overview (saccade_run_overview (run, layer, head), s, s, run->n,
                                       run->n, run->causal, NULL);
  if (overview != NULL)
    saccade_lod_set_window (overview, (int) saccade_run_head_window (run, layer, head));
  if (overview != NULL)
    saccade_heatmap_view_set_lod (self->heatmap_view, overview,
                                  (const char *const *) run->labels,
                                  (const char *const *) run->labels);
  self->head_job = g_cancellable_new ();
  j = g_new0 (HeadJob, 1);
  j->run = saccade_run_ref (run);
  j->layer = layer;
  j->head = head;
  task = g_task_new (self, self->head_job, head_job_done, NULL);
  g_task_set_source_tag (task, start_head_job);
  g_task_set_task_data (task, j, (GDestroyNotify) head_job_free);
  saccade_background_run (task, head_job_thread);
}

/* ------------------------------------------------------------------------------------ */
/* Norm-based attention                                                                  */

static void refresh (SaccadeHeatmapPage *self);

/* Why Norm cannot be shown for the page's run (caller frees), or NULL. */
static char *
norm_unavailable (SaccadeHeatmapPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);

  if (self->norm_error != NULL)
    return g_strdup (self->norm_error);
  return saccade_norm_dup_unavailable (saccade_page_get_run (page), saccade_page_get_model (page),
                                       saccade_page_get_db_path (page), SACCADE_NORM_NEED_MAPS);
}

/* The switch and the line under the toolbar: Norm off with the reason where it cannot be
 * computed (and the view back on the weights), "computing" while it is. */
static void
sync_norm_controls (SaccadeHeatmapPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autofree char *why = run != NULL ? norm_unavailable (self) : NULL;
  g_autofree char *line = NULL;
  gboolean was = self->updating;

  gtk_widget_set_sensitive (GTK_WIDGET (self->norm_button), run != NULL && why == NULL);
  if (why != NULL)
    self->norm = FALSE;
  self->updating = TRUE;
  gtk_toggle_button_set_active (self->norm ? self->norm_button : self->weight_button, TRUE);
  self->updating = was;
  if (why != NULL)
    /* Translators: under the Heatmap page's toolbar when its Norm view is off: the reason. */
    line = g_strdup_printf (_("Norm is off: %s"), why);
  else if (self->norm && self->norm_job != NULL)
    line = g_strdup_printf (_("Computing norm-based attention of layer %d (one forward pass "
                              "of the model)…"), self->norm_job_layer);
  gtk_label_set_text (self->norm_label, line != NULL ? line : "");
  gtk_widget_set_visible (GTK_WIDGET (self->norm_label), line != NULL);
}

static void
norm_job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  ScNormResult *r = saccade_norm_get_finish (result, &error);
  GCancellable *c = user_data; /* the job's, a reference */
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (source);
  gboolean current = !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                     && c == self->norm_job;

  g_object_unref (c);
  if (!current)
    {
      sc_norm_result_free (r);
      return; /* another run or layer, or the page went */
    }
  g_clear_object (&self->norm_job);
  if (r == NULL)
    self->norm_error = g_strdup (error->message);
  else
    saccade_norm_cache_take (self->norms, r);
  sync_norm_controls (self);
  refresh (self);
}

/* Shows head @head of layer @layer of @run as norm-based attention: from the cache, else
 * nothing while the layer's study runs. */
static void
show_norm (SaccadeHeatmapPage *self, SaccadeRun *run, int layer, int head)
{
  const ScNormResult *r;
  g_autoptr (SaccadeLod) lod = NULL;
  g_autoptr (GError) error = NULL;

  saccade_norm_cache_set_run (self->norms, run->id);
  r = saccade_norm_cache_lookup (self->norms, layer);
  if (r == NULL || sc_norm_result_map (r, head) == NULL)
    {
      saccade_heatmap_view_set_data (self->heatmap_view, NULL, 0, 0, NULL, NULL, FALSE);
      if (self->norm_job == NULL || self->norm_job_layer != layer)
        {
          saccade_job_cancel_clear (&self->norm_job);
          self->norm_job = g_cancellable_new ();
          self->norm_job_layer = layer;
          saccade_norm_get_async (self, saccade_page_get_model (SACCADE_PAGE (self)),
                                  saccade_page_get_db_path (SACCADE_PAGE (self)), run->id, layer,
                                  self->norm_job, norm_job_done, g_object_ref (self->norm_job));
        }
      sync_norm_controls (self);
      return;
    }
  /* a causal map, 0 above the diagonal; a local layer's keys left of its window masked as
   * in the weights' view */
  lod = saccade_lod_new_float (sc_norm_result_map (r, head), r->n_tokens, r->n_tokens, TRUE,
                               &error);
  if (lod == NULL)
    g_warning ("heatmap: %s", error->message);
  else if (saccade_run_layer_window (run, layer) > 0
           && (int) saccade_run_layer_window (run, layer) < r->n_tokens)
    saccade_lod_set_window (lod, (int) saccade_run_layer_window (run, layer));
  saccade_heatmap_view_set_lod (self->heatmap_view, lod, (const char *const *) run->labels,
                                (const char *const *) run->labels);
}

/* What the switch and page.values do. */
static void
set_norm (SaccadeHeatmapPage *self, gboolean norm)
{
  g_autofree char *why = norm ? norm_unavailable (self) : NULL;

  if (why != NULL)
    norm = FALSE;
  if (norm == self->norm)
    {
      sync_norm_controls (self);
      return;
    }
  self->norm = norm;
  if (!norm)
    saccade_job_cancel_clear (&self->norm_job);
  self->exact_run = NULL; /* the weights are shown again from scratch */
  sync_norm_controls (self);
  refresh (self);
}

static void
norm_toggled (SaccadeHeatmapPage *self)
{
  if (!self->updating)
    set_norm (self, gtk_toggle_button_get_active (self->norm_button));
}

static void
values_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  const char *what = g_variant_get_string (param, NULL);

  if (g_str_equal (what, "weight") || g_str_equal (what, "norm"))
    set_norm (SACCADE_HEATMAP_PAGE (widget), g_str_equal (what, "norm"));
  else
    g_warning ("page.values: '%s' is neither 'weight' nor 'norm'", what);
}

static void
saccade_heatmap_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (page);

  /* another model: the cache's studies were of the run, which still names them; a failed
   * study may succeed now */
  g_clear_pointer (&self->norm_error, g_free);
  if (self->norm && model == NULL)
    saccade_job_cancel_clear (&self->norm_job);
  sync_norm_controls (self);
  if (self->norm)
    refresh (self);
}

static void
refresh (SaccadeHeatmapPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int layer = saccade_page_get_layer (SACCADE_PAGE (self));
  int head = saccade_page_get_head (SACCADE_PAGE (self));
  int g = run != NULL ? saccade_run_group_size (run) : 1;
  g_autofree char *kv = NULL, *kv_tip = NULL;

  if (run != NULL && !run->resident && run == self->exact_run && layer == self->exact_layer
      && head == self->exact_head)
    return; /* shown already, exactly (the page was shown again) */
  saccade_job_cancel_clear (&self->head_job);
  self->exact_run = NULL;
  if (run == NULL)
    {
      saccade_heatmap_view_set_data (self->heatmap_view, NULL, 0, 0, NULL, NULL, FALSE);
      gtk_label_set_text (self->kv_label, "");
      return;
    }
  /* Translators: the colour bar's caption in the Heatmap page's Norm view. */
  saccade_heatmap_view_set_axis_names (self->heatmap_view, NULL, NULL,
                                       self->norm ? _("‖α·f(x)‖") : NULL);
  if (self->norm) /* computed from the run: every head, kept or not */
    show_norm (self, run, layer, head);
  else if (!saccade_run_has_head (run, layer, head))
    {
      g_autofree char *why = g_strdup_printf (
        /* Translators: a run stored with chosen heads only (capture --layers/--heads). */
        _("Run %lld kept %d of the model's %d heads; layer %d head %d is not among them"),
        (long long) run->id, run->n_kept, run->n_layers * run->n_heads, layer, head);
      saccade_heatmap_view_set_data (self->heatmap_view, NULL, 0, 0, NULL, NULL, FALSE);
      saccade_heatmap_view_set_title (self->heatmap_view, why);
    }
  else if (run->resident)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SaccadeLod) lod = saccade_lod_new_float (saccade_run_head (run, layer, head),
                                                          run->n, run->n, run->causal, &error);
      if (lod == NULL)
        g_warning ("heatmap: %s", error->message);
      else /* a band head (a local layer's): keys left of its window are masked */
        saccade_lod_set_window (lod, (int) saccade_run_head_window (run, layer, head));
      saccade_heatmap_view_set_lod (self->heatmap_view, lod, (const char *const *) run->labels,
                                    (const char *const *) run->labels);
    }
  else if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      /* A long run's head is read when the page is shown (map), not for a page the user
       * is not looking at; its overview meanwhile. */
      g_autoptr (SaccadeLod) overview = saccade_lod_new_overview (
        saccade_run_overview (run, layer, head), run->overview_size, run->overview_size, run->n,
        run->n, run->causal, NULL);
      if (overview != NULL)
        saccade_lod_set_window (overview, (int) saccade_run_head_window (run, layer, head));
      saccade_heatmap_view_set_lod (self->heatmap_view, overview,
                                    (const char *const *) run->labels,
                                    (const char *const *) run->labels);
    }
  else
    start_head_job (self, run, layer, head);
  if (self->norm && (self->norm_job != NULL || self->norm_error != NULL))
    saccade_heatmap_view_set_title (self->heatmap_view, "");
  else if (self->norm || saccade_run_has_head (run, layer, head))
    set_title (self);
  /* Translators: which key/value head this query head shares (grouped-query attention). */
  kv = g_strdup_printf (_("KV head %d"), head / g);
  kv_tip = g_strdup_printf (_("Query heads %d to %d share one key/value head"), (head / g) * g,
                            (head / g) * g + g - 1);
  gtk_label_set_text (self->kv_label, kv);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->kv_label), kv_tip);
}

static void
saccade_heatmap_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (page);

  self->exact_run = NULL; /* another run, even at the same address */
  saccade_job_cancel_clear (&self->norm_job);
  g_clear_pointer (&self->norm_error, g_free);
  sync_norm_controls (self);
  /* The base class has moved the cursor into @run's shape: give the pickers that range. */
  if (run != NULL)
    {
      gtk_adjustment_configure (self->layer_adjustment, saccade_page_get_layer (page), 0,
                                run->n_layers - 1, 1, 5, 0);
      gtk_adjustment_configure (self->head_adjustment, saccade_page_get_head (page), 0,
                                run->n_heads - 1, 1, saccade_run_group_size (run), 0);
    }
  else
    {
      gtk_adjustment_configure (self->layer_adjustment, 0, 0, 0, 1, 5, 0);
      gtk_adjustment_configure (self->head_adjustment, 0, 0, 0, 1, 1, 0);
    }
  refresh (self);
  update_actions (self);
}

/* File > Export: what the view shows — the selected tokens, else the visible ones — with
 * their own positions on the axes (docs/figures.md, "Token ranges"). */
static gboolean
saccade_heatmap_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (page));

  /* with the options the window's Export Figure dialog kept */
  return saccade_heatmap_view_export (SACCADE_HEATMAP_PAGE (page)->heatmap_view, path,
                                      SACCADE_IS_WINDOW (root)
                                        ? saccade_window_get_export_options (SACCADE_WINDOW (root))
                                        : NULL,
                                      error);
}

static gboolean
saccade_heatmap_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (page);
  SaccadeRun *run = saccade_page_get_run (page);
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;
  SaccadeTokenRange tr;
  SaccadeExportRange r;

  if (run == NULL || !saccade_heatmap_view_get_export_range (self->heatmap_view, &tr))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("No run is shown"));
      return FALSE;
    }
  if (self->norm)
    {
      const ScNormResult *nr = saccade_norm_cache_lookup (self->norms,
                                                           saccade_page_get_layer (page));
      data = nr != NULL ? saccade_norm_map_csv (nr, saccade_page_get_head (page),
                                                 (const char *const *) run->labels, tr.q0,
                                                 tr.q1, tr.k0, tr.k1)
                        : NULL;
      if (data == NULL)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PENDING,
                               _("The norm-based attention of this layer is still being "
                                 "computed"));
          return FALSE;
        }
      return saccade_export_write (data, path, error);
    }
  r = (SaccadeExportRange) { tr.q0, tr.q1, tr.k0, tr.k1 };
  if ((src = saccade_export_source_new_for_run (run, error)) == NULL)
    return FALSE;
  data = saccade_export_head_range (src, saccade_page_get_layer (page),
                                    saccade_page_get_head (page), &r, SACCADE_EXPORT_CSV, NULL,
                                    NULL, error);
  return data != NULL && saccade_export_write (data, path, error);
}

static gboolean
saccade_heatmap_page_is_busy (SaccadePage *page)
{
  return SACCADE_HEATMAP_PAGE (page)->head_job != NULL
         || SACCADE_HEATMAP_PAGE (page)->norm_job != NULL;
}

static void
reset_zoom_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  saccade_heatmap_view_reset_zoom (SACCADE_HEATMAP_PAGE (widget)->heatmap_view);
}

/* ------------------------------------------------------------------------------------ */
/* Settings: colour map and scale                                                        */

static SaccadeColormap
selected_colormap (SaccadeHeatmapPage *self)
{
  guint sel = gtk_drop_down_get_selected (self->colormap_dropdown);
  return sel <= SACCADE_COLORMAP_LAST ? (SaccadeColormap) sel : SACCADE_COLORMAP_VIRIDIS;
}

static SaccadeScale
selected_scale (SaccadeHeatmapPage *self)
{
  return gtk_toggle_button_get_active (self->log_button) ? SACCADE_SCALE_LOG
                                                         : SACCADE_SCALE_LINEAR;
}

/* The scale buttons show the scale the figure draws: a diverging map is always linear
 * (saccade_figure_heatmap_scale()), so with one "Log" is greyed out and "Linear" shown
 * pressed, while the setting keeps the user's choice for the sequential maps. */
static void
sync_scale_buttons (SaccadeHeatmapPage *self)
{
  GSettings *settings = saccade_page_get_settings (SACCADE_PAGE (self));
  g_autofree char *value = g_settings_get_string (settings, "scale");
  SaccadeScale scale = SACCADE_SCALE_LINEAR;
  gboolean diverging = saccade_colormap_is_diverging (selected_colormap (self));
  gboolean was = self->updating;

  saccade_scale_from_id (value, &scale);
  self->updating = TRUE;
  gtk_widget_set_sensitive (GTK_WIDGET (self->log_button), !diverging);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->log_button),
                               diverging ? _("A diverging colour map is always linear: a "
                                             "logarithm of signed values is undefined")
                                         : _("Colour the weights on a logarithmic scale"));
  gtk_toggle_button_set_active (scale == SACCADE_SCALE_LOG && !diverging ? self->log_button
                                                                         : self->linear_button,
                                TRUE);
  self->updating = was;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SCALE]);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOG_OFFERED]);
}

static void
settings_changed (SaccadePage *page, const char *key, const char *value)
{
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (page);

  self->updating = TRUE;
  if (g_str_equal (key, "colormap"))
    {
      SaccadeColormap map = SACCADE_COLORMAP_VIRIDIS;
      saccade_colormap_from_id (value, &map);
      gtk_drop_down_set_selected (self->colormap_dropdown, map);
      saccade_heatmap_view_set_colormap (self->heatmap_view, map);
      sync_scale_buttons (self);
    }
  else if (g_str_equal (key, "scale"))
    {
      SaccadeScale scale = SACCADE_SCALE_LINEAR;
      saccade_scale_from_id (value, &scale);
      saccade_heatmap_view_set_scale (self->heatmap_view, scale);
      sync_scale_buttons (self);
    }
  self->updating = FALSE;
}

static void
colormap_selected (SaccadeHeatmapPage *self)
{
  if (!self->updating)
    g_settings_set_string (saccade_page_get_settings (SACCADE_PAGE (self)), "colormap",
                           saccade_colormap_id (selected_colormap (self)));
}

static void
scale_toggled (SaccadeHeatmapPage *self)
{
  if (!self->updating)
    g_settings_set_string (saccade_page_get_settings (SACCADE_PAGE (self)), "scale",
                           saccade_scale_id (selected_scale (self)));
}

/* ------------------------------------------------------------------------------------ */
/* GObject                                                                               */

static void
saccade_heatmap_page_constructed (GObject *object)
{
  static const char *const followed[] = { "colormap", "scale", NULL };
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (object);
  GSettings *settings;
  g_autoptr (GtkStringList) maps = gtk_string_list_new (NULL);
  guint i;

  G_OBJECT_CLASS (saccade_heatmap_page_parent_class)->constructed (object);
  settings = saccade_page_get_settings (SACCADE_PAGE (self));
  g_return_if_fail (settings != NULL);

  for (i = 0; i <= SACCADE_COLORMAP_LAST; i++)
    gtk_string_list_append (maps, saccade_colormap_name ((SaccadeColormap) i));
  gtk_drop_down_set_model (self->colormap_dropdown, G_LIST_MODEL (maps));

  saccade_page_follow_settings (SACCADE_PAGE (self), followed, settings_changed);
  g_signal_connect_swapped (self->colormap_dropdown, "notify::selected",
                            G_CALLBACK (colormap_selected), self);
  g_signal_connect_swapped (self->log_button, "toggled", G_CALLBACK (scale_toggled), self);
}

static void
saccade_heatmap_page_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (object);

  switch (prop_id)
    {
    case PROP_SCALE:
      g_value_set_string (value, saccade_scale_id (selected_scale (self)));
      break;
    case PROP_LOG_OFFERED:
      g_value_set_boolean (value, gtk_widget_get_sensitive (GTK_WIDGET (self->log_button)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_heatmap_page_dispose (GObject *object)
{
  SaccadeHeatmapPage *self = SACCADE_HEATMAP_PAGE (object);

  saccade_job_cancel_clear (&self->head_job);
  saccade_job_cancel_clear (&self->norm_job);
  g_clear_pointer (&self->norms, saccade_norm_cache_free);
  g_clear_pointer (&self->norm_error, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_HEATMAP_PAGE);
  G_OBJECT_CLASS (saccade_heatmap_page_parent_class)->dispose (object);
}

static void
saccade_heatmap_page_class_init (SaccadeHeatmapPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->constructed = saccade_heatmap_page_constructed;
  object_class->dispose = saccade_heatmap_page_dispose;
  object_class->get_property = saccade_heatmap_page_get_property;
  page_class->set_run = saccade_heatmap_page_set_run;
  page_class->set_model = saccade_heatmap_page_set_model;
  page_class->is_busy = saccade_heatmap_page_is_busy;
  page_class->export_figure = saccade_heatmap_page_export_figure;
  page_class->export_csv = saccade_heatmap_page_export_csv;
  page_class->dup_figure_title = saccade_heatmap_page_dup_figure_title;

  props[PROP_SCALE] = g_param_spec_string ("scale", NULL, NULL, "linear",
                                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY
                                             | G_PARAM_STATIC_STRINGS);
  props[PROP_LOG_OFFERED] = g_param_spec_boolean ("log-offered", NULL, NULL, TRUE,
                                                  G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY
                                                    | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  gtk_widget_class_install_action (widget_class, "page.reset-zoom", NULL, reset_zoom_action);
  gtk_widget_class_install_action (widget_class, "page.values", "s", values_action);

  /* The template names the view by type name. */
  g_type_ensure (SACCADE_TYPE_HEATMAP_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-heatmap-page.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SaccadeHeatmapPage, name)
  CHILD (layer_adjustment);
  CHILD (head_adjustment);
  CHILD (kv_label);
  CHILD (colormap_dropdown);
  CHILD (linear_button);
  CHILD (log_button);
  CHILD (weight_button);
  CHILD (norm_button);
  CHILD (norm_label);
  CHILD (heatmap_view);
#undef CHILD
}

/* The query row under the pointer: the window shows what the model predicted after it. */
static void
hover_changed (SaccadeHeatmapPage *self, int row, int col)
{
  saccade_page_hover_query (SACCADE_PAGE (self), row);
}

static void
saccade_heatmap_page_init (SaccadeHeatmapPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->norms = saccade_norm_cache_new ();
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->heatmap_view));

  /* The spin buttons and the cursor move together; the adjustments clamp what is typed. */
  g_object_bind_property (self, "layer", self->layer_adjustment, "value",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  g_object_bind_property (self, "head", self->head_adjustment, "value",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  g_signal_connect_swapped (self->heatmap_view, "hover-changed", G_CALLBACK (hover_changed),
                            self);
  g_signal_connect_swapped (self, "map", G_CALLBACK (refresh), self);
  g_signal_connect_swapped (self->norm_button, "toggled", G_CALLBACK (norm_toggled), self);
  g_signal_connect_swapped (self, "notify::layer", G_CALLBACK (refresh), self);
  g_signal_connect_swapped (self, "notify::head", G_CALLBACK (refresh), self);
  update_actions (self);
}
