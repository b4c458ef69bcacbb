/* saccade-model-page.c — the Model page (see saccade-model-page.h), three views of every
 * head of the run switched at the top: the grid (SaccadeGridView, framed by the metric
 * chosen in "Colour by", kept in GSettings so that the Preferences window and the page
 * always agree), the heads table (SaccadeHeadsTable: every statistic, sortable) and the
 * layer profile of the chosen metric (SaccadeProfileView). It outlines the head under the
 * cursor and asks the window to open a clicked head or row (win.show-head).
 *
 * Its own actions: page.view (s: "grid", "table", "profile") and page.sort-heads (s: a
 * column id, "-" in front for descending), which the e2e test drives. Export: the grid or
 * the profile (whichever is shown; the table exports as the grid), the metrics as CSV.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-model-page.h"

#include <glib/gi18n.h>

#include "app/core/saccade-export.h"
#include "app/window/pages/saccade-heads-table.h"
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

  gboolean updating; /* the page is setting its own controls from the settings */
};

G_DEFINE_FINAL_TYPE (SaccadeModelPage, saccade_model_page, SACCADE_TYPE_PAGE)

static SaccadeMetric
selected_metric (SaccadeModelPage *self)
{
  guint sel = gtk_drop_down_get_selected (self->metric_dropdown);
  return sel < SACCADE_N_METRICS ? (SaccadeMetric) sel : SACCADE_METRIC_ENTROPY;
}

static char *
saccade_model_page_dup_figure_title (SaccadePage *page)
{
  g_autofree char *what = NULL;

  /* Translators: the model grid's title begins with the metric: "Entropy of every head". */
  what = g_strdup_printf (_("%s of every head"),
                          saccade_metric_name (selected_metric (SACCADE_MODEL_PAGE (page))));
  return saccade_page_dup_run_title (page, what);
}

static void
refresh_metric (SaccadeModelPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  SaccadeMetric metric = selected_metric (self);
  g_autofree char *title = NULL;

  if (run == NULL)
    return;
  title = saccade_model_page_dup_figure_title (SACCADE_PAGE (self));
  saccade_grid_view_set_metric (self->grid_view, saccade_run_metric (run, metric),
                                saccade_metric_name (metric));
  saccade_grid_view_set_title (self->grid_view, title);
  saccade_profile_view_set_data (self->profile_view, run->n_layers, run->n_heads,
                                 saccade_run_metric (run, metric), saccade_metric_name (metric));
  saccade_profile_view_set_title (self->profile_view, title);
}

static gboolean
showing (SaccadeModelPage *self, const char *view)
{
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), view) == 0;
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

/* ------------------------------------------------------------------------------------ */
/* Export                                                                                */

static gboolean
saccade_model_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeModelPage *self = SACCADE_MODEL_PAGE (page);
  SaccadeMetric metric = selected_metric (self);
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autofree char *title = saccade_model_page_dup_figure_title (page);
  g_autofree char *map = g_settings_get_string (saccade_page_get_settings (page), "colormap");
  SaccadeColormap colormap = SACCADE_COLORMAP_VIRIDIS;

  if ((src = saccade_page_new_export_source (page, error)) == NULL)
    return FALSE;
  saccade_colormap_from_id (map, &colormap);
  return saccade_export_figure (src, &(SaccadeExportFigure) {
    .kind = showing (self, "profile") ? SACCADE_EXPORT_PROFILE : SACCADE_EXPORT_GRID,
    .title = title, .colormap = colormap, .scale = SACCADE_SCALE_LINEAR,
    .metric = saccade_metric_id (metric), .metric_name = saccade_metric_name (metric),
  }, path, error);
}

static gboolean
saccade_model_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;

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
  if (!self->updating)
    g_settings_set_string (saccade_page_get_settings (SACCADE_PAGE (self)), "metric",
                           saccade_metric_id (selected_metric (self)));
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
  gtk_drop_down_set_model (self->metric_dropdown, G_LIST_MODEL (names));

  saccade_page_follow_settings (SACCADE_PAGE (self), followed, settings_changed);
  g_signal_connect_swapped (self->metric_dropdown, "notify::selected",
                            G_CALLBACK (metric_selected), self);
}

static void
saccade_model_page_dispose (GObject *object)
{
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
  page_class->dup_figure_title = saccade_model_page_dup_figure_title;
  page_class->export_figure = saccade_model_page_export_figure;
  page_class->export_csv = saccade_model_page_export_csv;

  gtk_widget_class_install_action (widget_class, "page.view", "s", view_action);
  gtk_widget_class_install_action (widget_class, "page.sort-heads", "s", sort_heads_action);

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
}

static void
saccade_model_page_init (SaccadeModelPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->grid_view));
  g_signal_connect_swapped (self->grid_view, "head-activated", G_CALLBACK (head_activated), self);
  g_signal_connect_swapped (self->heads_table, "head-activated", G_CALLBACK (head_activated),
                            self);
  g_signal_connect_swapped (self, "notify::layer", G_CALLBACK (refresh_selected), self);
  g_signal_connect_swapped (self, "notify::head", G_CALLBACK (refresh_selected), self);
  g_signal_connect_swapped (self->view_stack, "notify::visible-child-name",
                            G_CALLBACK (sync_table), self);
}
