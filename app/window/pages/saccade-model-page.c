/* saccade-model-page.c — the Model page (see saccade-model-page.h), three views of every
 * head of the run switched at the top: the grid (SaccadeGridView, framed by the metric
 * chosen in "Colour by", kept in GSettings so that the Preferences window and the page
 * always agree), the heads table (SaccadeHeadsTable: every statistic, sortable) and the
 * layer profile of the chosen metric (SaccadeProfileView). It outlines the head under the
 * cursor and asks the window to open a clicked head or row (win.show-head).
 *
 * Beside the stored runs' statistics, "Colour by" offers two norm metrics (docs/metrics.md,
 * "Norm-based attention", "The Model page's norm metrics"): each head's norm-based share of
 * the first token, and its gap to the weight there — from the run's norm study, one forward
 * pass for every head (saccade-norm-maps.h), read back or computed in a worker and kept per
 * run. They are the page's own choice, not the "metric" setting (Preferences lists what
 * every run carries); where they cannot be computed the hint line says why.
 *
 * Its own actions: page.view (s: "grid", "table", "profile") and page.sort-heads (s: a
 * column id, "-" in front for descending), which the e2e test drives. Export: the grid or
 * the profile (whichever is shown; the table exports as the grid), the metrics as CSV.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-model-page.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-export.h"
#include "app/core/saccade-job.h"
#include "app/window/pages/saccade-heads-table.h"
#include "app/window/pages/saccade-norm-maps.h"
#include "app/window/saccade-window.h"
#include "engine/analysis/sc-rank.h"
#include "ui/widgets/saccade-grid-view.h"
#include "ui/widgets/saccade-profile-view.h"

struct _SaccadeModelPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkDropDown *metric_dropdown;
  GtkStack *view_stack;
  SaccadeGridView *grid_view;
  SaccadeHeadsTable *heads_table;
  SaccadeProfileView *profile_view;
  GtkLabel *norm_label;
  GtkDrawingArea *sinks_area;

  gboolean updating; /* the page is setting its own controls from the settings */
  SaccadeNormCache *norms;  /* the run's norm studies */
  GCancellable *norm_job;   /* the norm study being read back or computed */
  char *norm_error;         /* its failure, until the run or the model changes */
  double *norm_values;      /* (n_layers, n_heads): the norm metric shown, or NULL */
};

/* The norm metrics after the stored ones in "Colour by". */
typedef enum { NORM_SHARE, NORM_GAP, N_NORM_METRICS } NormMetric;

G_DEFINE_FINAL_TYPE (SaccadeModelPage, saccade_model_page, SACCADE_TYPE_PAGE)

static SaccadeMetric
selected_metric (SaccadeModelPage *self)
{
  guint sel = gtk_drop_down_get_selected (self->metric_dropdown);
  return sel < SACCADE_N_METRICS ? (SaccadeMetric) sel : SACCADE_METRIC_ENTROPY;
}

static gboolean
showing (SaccadeModelPage *self, const char *view)
{
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), view) == 0;
}

/* The norm metric chosen, or −1 for a stored one. */
static int
selected_norm (SaccadeModelPage *self)
{
  guint sel = gtk_drop_down_get_selected (self->metric_dropdown);
  return sel >= SACCADE_N_METRICS && sel < SACCADE_N_METRICS + N_NORM_METRICS
           ? (int) (sel - SACCADE_N_METRICS) : -1;
}

static const char *
norm_metric_name (int k)
{
  /* Translators: Model page metrics (docs/metrics.md): per head, the mean over queries of
   * the first token's share of the row's norm-based attention ‖α·f(x)‖ (Kobayashi 2020),
   * and the weight on the first token minus that share (an attention sink's gap: a large
   * weight on a token that sends little). */
  return k == NORM_SHARE ? _("First-token norm share")
                         : _("First-token weight − norm");
}

/* The name of what "Colour by" shows. */
static const char *
shown_metric_name (SaccadeModelPage *self)
{
  int k = selected_norm (self);
  return k >= 0 ? norm_metric_name (k) : saccade_metric_name (selected_metric (self));
}

static char *
saccade_model_page_dup_figure_title (SaccadePage *page)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (page);
  g_autofree char *what = NULL;

  if (showing (self, "sinks"))
    /* Translators: the Model page's weight vs norm scatter: one dot per head. */
    return saccade_page_dup_run_title (page, _("First token: weight against norm share, "
                                               "every head"));
  if (selected_norm (self) >= 0 && self->norm_values == NULL)
    /* Translators: the model grid's title while its norm metric is off or computing: the
     * heads without a colour. */
    return saccade_page_dup_run_title (page, _("Every head"));
  /* Translators: the model grid's title begins with the metric: "Entropy of every head". */
  what = g_strdup_printf (_("%s of every head"),
                          shown_metric_name (SACCADE_MODEL_PAGE (page)));
  return saccade_page_dup_run_title (page, what);
}

static void refresh_metric (SaccadeModelPage *self);

static void
norm_job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  ScNormResult *r = saccade_norm_get_finish (result, &error);
  GCancellable *c = user_data; /* the job's, a reference */
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (source);
  gboolean current = !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                     && c == self->norm_job;

  g_object_unref (c);
  if (!current)
    {
      sc_norm_result_free (r);
      return; /* another run or model, or the page went */
    }
  g_clear_object (&self->norm_job);
  if (r == NULL)
    self->norm_error = g_strdup (error->message);
  else
    saccade_norm_cache_take (self->norms, r);
  refresh_metric (self);
}

/* The run's norm study, or NULL with the norm line saying why (or that it is being computed,
 * the study started); with it, the line says what @k, the norm metric (−1: the weight vs
 * norm view) shows. */
static const ScNormResult *
norm_result (SaccadeModelPage *self, SaccadeRun *run, int k)
{
  SaccadePage *page = SACCADE_PAGE (self);
  g_autofree char *why = NULL, *line = NULL;
  const ScNormResult *r;

  saccade_norm_cache_set_run (self->norms, run->id);
  why = self->norm_error != NULL ? g_strdup (self->norm_error)
                                 : saccade_norm_dup_unavailable (run,
                                     saccade_page_get_model (page),
                                     saccade_page_get_db_path (page), SACCADE_NORM_NEED_HEADS);
  r = why == NULL ? saccade_norm_cache_lookup (self->norms, -1) : NULL;
  if (r != NULL && (r->n_layers != run->n_layers || r->n_heads != run->n_heads))
    r = NULL;
  if (r != NULL)
    /* Translators: the Model page's line under a norm metric or its weight vs norm view:
     * what it shows. */
    line = g_strdup (k == NORM_SHARE ? _("Per head: the mean over queries of the first token's "
                                         "share of norm-based attention ‖α·f(x)‖ (one forward "
                                         "pass of the model)")
                     : k == NORM_GAP ? _("Per head: the mean weight on the first token minus "
                                         "its share of ‖α·f(x)‖; large: a sink that takes "
                                         "weight and sends little")
                                     : _("Each dot is a head: its mean weight on the first token "
                                         "against that token's share of ‖α·f(x)‖; below the "
                                         "diagonal it sends less than its weight says"));
  else if (why != NULL)
    /* Translators: the Model page's line when a norm metric cannot be computed: why. */
    line = g_strdup_printf (_("Norm metrics are off: %s"), why);
  else
    {
      if (self->norm_job == NULL)
        {
          self->norm_job = g_cancellable_new ();
          saccade_norm_get_async (self, saccade_page_get_model (page),
                                  saccade_page_get_db_path (page), run->id, -1, self->norm_job,
                                  norm_job_done, g_object_ref (self->norm_job));
        }
      line = g_strdup (_("Computing norm-based attention (one forward pass of the model)…"));
    }
  gtk_label_set_text (self->norm_label, line);
  return r;
}

static void
refresh_metric (SaccadeModelPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  SaccadeMetric metric = selected_metric (self);
  int k = selected_norm (self);
  const double *values;
  g_autofree char *title = NULL;

  if (run == NULL)
    return;
  g_clear_pointer (&self->norm_values, g_free);
  gtk_widget_set_visible (GTK_WIDGET (self->norm_label), k >= 0 || showing (self, "sinks"));
  if (k >= 0 || showing (self, "sinks"))
    {
      const ScNormResult *r = norm_result (self, run, showing (self, "sinks") ? -1 : k);
      gsize nh = (gsize) run->n_layers * run->n_heads;
      if (r != NULL && k >= 0)
        {
          self->norm_values = g_new (double, nh);
          for (gsize i = 0; i < nh; i++)
            self->norm_values[i] = k == NORM_SHARE ? r->norm_first[i]
                                                   : r->weight_first[i] - r->norm_first[i];
        }
      gtk_widget_queue_draw (GTK_WIDGET (self->sinks_area));
    }
  values = k >= 0 ? self->norm_values : saccade_run_metric (run, metric);
  title = saccade_model_page_dup_figure_title (SACCADE_PAGE (self));
  saccade_grid_view_set_metric (self->grid_view, values, shown_metric_name (self));
  saccade_grid_view_set_title (self->grid_view, title);
  saccade_profile_view_set_data (self->profile_view, values != NULL ? run->n_layers : 0,
                                 values != NULL ? run->n_heads : 0, values,
                                 shown_metric_name (self));
  saccade_profile_view_set_title (self->profile_view, title);
}

/* Another run or model: a norm study under way is of the old one, a failure may not
 * repeat. */
static void
forget_norm_job (SaccadeModelPage *self)
{
  saccade_job_cancel_clear (&self->norm_job);
  g_clear_pointer (&self->norm_error, g_free);
}

static void
saccade_model_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  forget_norm_job (SACCADE_MODEL_PAGE (page));
  refresh_metric (SACCADE_MODEL_PAGE (page));
}

/* The head under the cursor is outlined. */
static void
refresh_selected (SaccadeModelPage *self)
{
  if (saccade_page_get_run (SACCADE_PAGE (self)) != NULL)
    saccade_grid_view_set_selected (self->grid_view, saccade_page_get_layer (SACCADE_PAGE (self)),
                                    saccade_page_get_head (SACCADE_PAGE (self)));
}

/* The heads table takes the run only while it is shown: filling its sorted model with a
 * run's 270 rows costs the main loop tens of milliseconds (measured: 60-250 ms on a busy
 * two-core machine), which a run selected on another view should not pay. */
static void
sync_table (SaccadeModelPage *self)
{
  saccade_heads_table_set_run (self->heads_table, showing (self, "table")
                                                    ? saccade_page_get_run (SACCADE_PAGE (self))
                                                    : NULL);
}

static void
saccade_model_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (page);

  forget_norm_job (self);
  if (run != NULL)
    {
      /* From the overviews, for a run of any length: block maxima that show a head's
       * structure (diagonals, sinks, stripes) at S^2 floats a head; a band head's blocks
       * left of its window are masked there, and its layer is marked local. */
      saccade_grid_view_set_overviews (self->grid_view, run->n_layers, run->n_heads,
                                       run->n_kv_heads, run->n, run->overview_size,
                                       run->overviews, NULL, NULL);
      saccade_grid_view_set_layer_windows (self->grid_view, run->windows);
    }
  else
    {
      saccade_grid_view_set_data (self->grid_view, 0, 0, 1, 0, NULL, NULL, NULL);
      saccade_profile_view_set_data (self->profile_view, 0, 0, NULL, NULL);
    }
  sync_table (self);
  refresh_metric (self);
  refresh_selected (self);
}

/* A click on a head (or Enter on the outlined one): the window opens it in the Heatmap. */
static void
head_activated (SaccadeModelPage *self, int layer, int head)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-head", "(ii)", layer, head);
}

static void
view_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (widget);
  const char *view = g_variant_get_string (param, NULL);

  if (gtk_stack_get_child_by_name (self->view_stack, view) != NULL)
    gtk_stack_set_visible_child_name (self->view_stack, view);
}

static void
sort_heads_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (widget);
  const char *id = g_variant_get_string (param, NULL);
  gboolean descending = id[0] == '-';

  gtk_stack_set_visible_child_name (self->view_stack, "table");
  if (!saccade_heads_table_sort (self->heads_table, id + (descending ? 1 : 0), descending))
    g_warning ("the heads table has no column '%s'", id);
}

static gboolean
saccade_model_page_is_busy (SaccadePage *page)
{
  return SACCADE_MODEL_PAGE (page)->norm_job != NULL;
}

/* ------------------------------------------------------------------------------------ */
/* Weight vs norm: the weight–norm gap as a scatter, one dot per head                     */

/* Heads labelled on the scatter: those with the largest gap (more would cover the dots). */
#define SINKS_LABELLED 6

typedef struct {
  double *x, *y;     /* (n) the heads' weight and norm share on the first token */
  char **labels;     /* (n) "L23.H1" for the SINKS_LABELLED largest gaps, else "" */
  char *title;
  SaccadeScatterFigure f;
} SinksScatter;

static void
sinks_scatter_clear (SinksScatter *s)
{
  g_free (s->x);
  g_free (s->y);
  g_strfreev (s->labels);
  g_free (s->title);
}

/* The scatter of the run's norm study; FALSE when there is none yet. */
static gboolean
sinks_scatter (SaccadeModelPage *self, SinksScatter *s)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const ScNormResult *r = run != NULL ? saccade_norm_cache_lookup (self->norms, -1) : NULL;
  const int nh = r != NULL ? r->n_layers * r->n_heads : 0;
  ScKendall tau = { .tau = NAN, .p = NAN };
  ScSpearman rho = { .rho = NAN, .p = NAN };
  int n = 0;

  memset (s, 0, sizeof *s);
  if (r == NULL || r->n_layers != run->n_layers || r->n_heads != run->n_heads)
    return FALSE;
  s->x = g_new (double, nh);
  s->y = g_new (double, nh);
  s->labels = g_new0 (char *, nh + 1);
  for (int i = 0; i < nh; i++) /* the heads with both numbers (a zero W_O slice has none) */
    if (isfinite (r->weight_first[i]) && isfinite (r->norm_first[i]))
      {
        s->x[n] = r->weight_first[i];
        s->y[n] = r->norm_first[i];
        s->labels[n++] = g_strdup_printf ("L%d.H%d", i / r->n_heads, i % r->n_heads);
      }
  for (int i = 0; i < n; i++) /* keep the names of the largest gaps only */
    {
      int above = 0;
      for (int j = 0; j < n && above < SINKS_LABELLED; j++)
        above += s->x[j] - s->y[j] > s->x[i] - s->y[i] || (s->x[j] - s->y[j] == s->x[i] - s->y[i]
                                                            && j < i);
      if (above >= SINKS_LABELLED)
        s->labels[i][0] = '\0';
    }
  sc_kendall_tau_b (s->x, s->y, n, &tau, NULL);
  sc_spearman_rho (s->x, s->y, n, &rho, NULL);
  s->title = saccade_page_dup_figure_title (SACCADE_PAGE (self));
  s->f = (SaccadeScatterFigure) {
    .n = n, .x = s->x, .y = s->y, .labels = (const char *const *) s->labels,
    .x_name = _("mean weight on the first token"),
    .y_name = _("the first token's share of ‖α·f(x)‖"), .title = s->title,
    .tau = tau.tau, .tau_p = tau.p, .rho = rho.rho, .rho_p = rho.p,
  };
  return TRUE;
}

static void
draw_sinks (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SinksScatter s;
  SaccadeFigureStyle style;

  if (sinks_scatter (SACCADE_MODEL_PAGE (data), &s))
    {
      saccade_page_figure_style (GTK_WIDGET (area), &style);
      saccade_figure_scatter_draw_full (cr, &s.f, &style, width, height, NULL);
    }
  sinks_scatter_clear (&s);
}

/* ------------------------------------------------------------------------------------ */
/* Export                                                                                */

static gboolean
saccade_model_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (page);
  SaccadeMetric metric = selected_metric (self);
  gboolean norm = selected_norm (self) >= 0;
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autofree char *title = saccade_model_page_dup_figure_title (page);
  g_autofree char *map = g_settings_get_string (saccade_page_get_settings (page), "colormap");
  SaccadeColormap colormap = SACCADE_COLORMAP_VIRIDIS;

  if (showing (self, "sinks"))
    {
      SinksScatter s;
      gboolean ok = sinks_scatter (self, &s);
      if (ok)
        ok = saccade_figure_export_scatter (
          &s.f, path, SACCADE_IS_WINDOW (gtk_widget_get_root (GTK_WIDGET (page)))
                        ? saccade_window_get_export_options (
                            SACCADE_WINDOW (gtk_widget_get_root (GTK_WIDGET (page))))
                        : NULL, error);
      else
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PENDING,
                             gtk_label_get_text (self->norm_label));
      sinks_scatter_clear (&s);
      return ok;
    }
  if (norm && self->norm_values == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PENDING,
                           gtk_label_get_text (self->norm_label));
      return FALSE;
    }
  if ((src = saccade_page_new_export_source (page, error)) == NULL)
    return FALSE;
  saccade_colormap_from_id (map, &colormap);
  return saccade_export_figure (src, &(SaccadeExportFigure) {
    .kind = showing (self, "profile") ? SACCADE_EXPORT_PROFILE : SACCADE_EXPORT_GRID,
    .title = title, .colormap = colormap, .scale = SACCADE_SCALE_LINEAR,
    .metric = norm ? NULL : saccade_metric_id (metric), .metric_name = shown_metric_name (self),
    .metric_values = norm ? self->norm_values : NULL,
  }, path, error);
}

static gboolean
saccade_model_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (page);
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;
  const ScNormResult *r;

  if (selected_norm (self) >= 0 || showing (self, "sinks"))
    {
      /* the norm metrics: every head's weight and norm share on the first token */
      if ((r = saccade_norm_cache_lookup (self->norms, -1)) == NULL)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PENDING,
                               gtk_label_get_text (self->norm_label));
          return FALSE;
        }
      data = saccade_norm_heads_csv (r);
      return saccade_export_write (data, path, error);
    }
  if ((src = saccade_page_new_export_source (page, error)) == NULL)
    return FALSE;
  data = saccade_export_metrics_csv (src, error);
  return data != NULL && saccade_export_write (data, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Settings: metric and colour map                                                       */

static void
settings_changed (SaccadePage *page, const char *key, const char *value)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (page);

  self->updating = TRUE;
  if (g_str_equal (key, "colormap"))
    {
      SaccadeColormap map = SACCADE_COLORMAP_VIRIDIS;
      saccade_colormap_from_id (value, &map);
      saccade_grid_view_set_colormap (self->grid_view, map);
    }
  else if (g_str_equal (key, "metric"))
    {
      SaccadeMetric metric = SACCADE_METRIC_ENTROPY;
      saccade_metric_from_id (value, &metric);
      gtk_drop_down_set_selected (self->metric_dropdown, metric);
      refresh_metric (self);
    }
  self->updating = FALSE;
}

static void
metric_selected (SaccadeModelPage *self)
{
  if (self->updating)
    return;
  /* a norm metric is the page's own, not a setting */
  if (selected_norm (self) < 0)
    g_settings_set_string (saccade_page_get_settings (SACCADE_PAGE (self)), "metric",
                           saccade_metric_id (selected_metric (self)));
  refresh_metric (self);
}

/* page.metric (s): "Colour by" a stored metric's id, or "norm-share" or "norm-gap". */
static void
metric_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (widget);
  const char *id = g_variant_get_string (param, NULL);
  SaccadeMetric m;

  if (g_str_equal (id, "norm-share") || g_str_equal (id, "norm-gap"))
    gtk_drop_down_set_selected (self->metric_dropdown,
                                SACCADE_N_METRICS + (g_str_equal (id, "norm-share") ? NORM_SHARE
                                                                                     : NORM_GAP));
  else if (saccade_metric_from_id (id, &m))
    gtk_drop_down_set_selected (self->metric_dropdown, m);
  else
    g_warning ("page.metric: no metric '%s'", id);
}

/* ------------------------------------------------------------------------------------ */
/* GObject                                                                               */

static void
saccade_model_page_constructed (GObject *object)
{
  static const char *const followed[] = { "colormap", "metric", NULL };
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (object);
  GSettings *settings;
  g_autoptr (GtkStringList) names = gtk_string_list_new (NULL);
  guint i;

  G_OBJECT_CLASS (saccade_model_page_parent_class)->constructed (object);
  settings = saccade_page_get_settings (SACCADE_PAGE (self));
  g_return_if_fail (settings != NULL);

  for (i = 0; i < SACCADE_N_METRICS; i++)
    gtk_string_list_append (names, saccade_metric_name ((SaccadeMetric) i));
  for (i = 0; i < N_NORM_METRICS; i++)
    gtk_string_list_append (names, norm_metric_name ((int) i));
  gtk_drop_down_set_model (self->metric_dropdown, G_LIST_MODEL (names));

  saccade_page_follow_settings (SACCADE_PAGE (self), followed, settings_changed);
  g_signal_connect_swapped (self->metric_dropdown, "notify::selected",
                            G_CALLBACK (metric_selected), self);
}

static void
saccade_model_page_dispose (GObject *object)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (object);

  forget_norm_job (self);
  g_clear_pointer (&self->norms, saccade_norm_cache_free);
  g_clear_pointer (&self->norm_values, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_MODEL_PAGE);
  G_OBJECT_CLASS (saccade_model_page_parent_class)->dispose (object);
}

static void
saccade_model_page_class_init (SaccadeModelPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->constructed = saccade_model_page_constructed;
  object_class->dispose = saccade_model_page_dispose;
  page_class->set_run = saccade_model_page_set_run;
  page_class->set_model = saccade_model_page_set_model;
  page_class->is_busy = saccade_model_page_is_busy;
  page_class->dup_figure_title = saccade_model_page_dup_figure_title;
  page_class->export_figure = saccade_model_page_export_figure;
  page_class->export_csv = saccade_model_page_export_csv;

  gtk_widget_class_install_action (widget_class, "page.view", "s", view_action);
  gtk_widget_class_install_action (widget_class, "page.sort-heads", "s", sort_heads_action);
  gtk_widget_class_install_action (widget_class, "page.metric", "s", metric_action);

  /* The template names the view by type name. */
  g_type_ensure (SACCADE_TYPE_GRID_VIEW);
  g_type_ensure (SACCADE_TYPE_HEADS_TABLE);
  g_type_ensure (SACCADE_TYPE_PROFILE_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-model-page.ui");
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, metric_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, view_stack);
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, grid_view);
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, heads_table);
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, profile_view);
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, norm_label);
  gtk_widget_class_bind_template_child (widget_class, SaccadeModelPage, sinks_area);
}

static void
saccade_model_page_init (SaccadeModelPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->norms = saccade_norm_cache_new ();
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->grid_view));
  g_signal_connect_swapped (self->grid_view, "head-activated", G_CALLBACK (head_activated), self);
  g_signal_connect_swapped (self->heads_table, "head-activated", G_CALLBACK (head_activated),
                            self);
  g_signal_connect_swapped (self, "notify::layer", G_CALLBACK (refresh_selected), self);
  g_signal_connect_swapped (self, "notify::head", G_CALLBACK (refresh_selected), self);
  g_signal_connect_swapped (self->view_stack, "notify::visible-child-name",
                            G_CALLBACK (sync_table), self);
  g_signal_connect_swapped (self->view_stack, "notify::visible-child-name",
                            G_CALLBACK (refresh_metric), self);
  gtk_drawing_area_set_draw_func (self->sinks_area, draw_sinks, self, NULL);
}
