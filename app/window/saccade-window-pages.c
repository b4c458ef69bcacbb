/* saccade-window-pages.c — the Heatmap, Model and Lines pages: handing the shown run's
 * matrices to the ui/ widgets, the layer and head pickers (shared by Heatmap and Lines
 * through one pair of GtkAdjustments), the colour map, scale and metric choices (kept in
 * GSettings, so the preferences window and the pages always agree), and the arrow keys.
 *
 * The widgets copy what they are given; the run (SaccadeRun, saccade-run.h) stays the one
 * source of the numbers for the screen, export and CSV alike.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

/* How much of the run's text a figure title quotes (characters). */
#define TITLE_TEXT_CHARS 48

/* ------------------------------------------------------------------------------------ */
/* Current choices                                                                       */

SaccadeMetric
saccade_window_pages_metric (SaccadeWindow *self)
{
  guint sel = gtk_drop_down_get_selected (self->metric_dropdown);
  return sel < SACCADE_N_METRICS ? (SaccadeMetric) sel : SACCADE_METRIC_ENTROPY;
}

SaccadeColormap
saccade_window_pages_colormap (SaccadeWindow *self)
{
  guint sel = gtk_drop_down_get_selected (self->colormap_dropdown);
  return sel <= SACCADE_COLORMAP_LAST ? (SaccadeColormap) sel : SACCADE_COLORMAP_VIRIDIS;
}

SaccadeScale
saccade_window_pages_scale (SaccadeWindow *self)
{
  return gtk_toggle_button_get_active (self->log_button) ? SACCADE_SCALE_LOG
                                                         : SACCADE_SCALE_LINEAR;
}

int
saccade_window_pages_layer (SaccadeWindow *self)
{
  return (int) gtk_adjustment_get_value (self->layer_adjustment);
}

int
saccade_window_pages_head (SaccadeWindow *self)
{
  return (int) gtk_adjustment_get_value (self->head_adjustment);
}

/* ------------------------------------------------------------------------------------ */
/* Titles                                                                                */

/* The run's text, cut for a title. */
static char *
quoted_text (SaccadeRun *run)
{
  glong n = g_utf8_strlen (run->text, -1);

  if (n <= TITLE_TEXT_CHARS)
    return g_strdup_printf ("“%s”", run->text);
  return g_strdup_printf ("“%.*s…”",
                          (int) (g_utf8_offset_to_pointer (run->text, TITLE_TEXT_CHARS - 1)
                                 - run->text),
                          run->text);
}

char *
saccade_window_pages_title (SaccadeWindow *self, const char *page)
{
  SaccadeRun *run = self->run;
  g_autofree char *quote = NULL;
  int layer = saccade_window_pages_layer (self), head = saccade_window_pages_head (self);

  if (run == NULL)
    return g_strdup ("");
  quote = quoted_text (run);
  if (g_strcmp0 (page, "model") == 0)
    /* Translators: the model grid's title: the metric, the model, the sentence. */
    return g_strdup_printf (_("%s of every head · %s · %s"),
                            saccade_metric_name (saccade_window_pages_metric (self)),
                            run->model_name, quote);
  if (g_strcmp0 (page, "lines") == 0)
    /* Translators: the lines figure's title, e.g. "Layer 5, all 9 heads · “The cat…”". */
    return g_strdup_printf (_("Layer %d, all %d heads · %s"), layer, run->n_heads, quote);
  /* Translators: the heatmap's title, e.g. "Layer 5, head 2 (KV group 0) · “The cat…”". */
  return g_strdup_printf (_("Layer %d, head %d (KV group %d) · %s"), layer, head,
                          head / saccade_run_group_size (run), quote);
}

/* ------------------------------------------------------------------------------------ */
/* Refreshing the views                                                                  */

static void
refresh_heatmap (SaccadeWindow *self)
{
  SaccadeRun *run = self->run;
  int layer = saccade_window_pages_layer (self), head = saccade_window_pages_head (self);
  int g = run != NULL ? saccade_run_group_size (run) : 1;
  g_autofree char *title = NULL, *kv = NULL, *kv_tip = NULL;

  if (run == NULL)
    {
      saccade_heatmap_view_set_data (self->heatmap_view, NULL, 0, 0, NULL, NULL, FALSE);
      gtk_label_set_text (self->kv_label, "");
      return;
    }
  title = saccade_window_pages_title (self, "heatmap");
  saccade_heatmap_view_set_data (self->heatmap_view, saccade_run_head (run, layer, head), run->n,
                                 run->n, (const char *const *) run->labels,
                                 (const char *const *) run->labels, run->causal);
  saccade_heatmap_view_set_title (self->heatmap_view, title);
  /* Translators: which key/value head this query head shares (grouped-query attention). */
  kv = g_strdup_printf (_("KV group %d"), head / g);
  kv_tip = g_strdup_printf (_("Query heads %d to %d share one key/value head"), (head / g) * g,
                            (head / g) * g + g - 1);
  gtk_label_set_text (self->kv_label, kv);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->kv_label), kv_tip);
  saccade_grid_view_set_selected (self->grid_view, layer, head);
}

static void
refresh_lines (SaccadeWindow *self)
{
  SaccadeRun *run = self->run;
  g_autofree char *title = NULL;
  int layer = saccade_window_pages_layer (self);

  if (run == NULL)
    {
      saccade_lines_view_set_data (self->lines_view, 0, 0, NULL, NULL);
      return;
    }
  title = saccade_window_pages_title (self, "lines");
  saccade_lines_view_set_data (self->lines_view, run->n_heads, run->n,
                               saccade_run_layer (run, layer), (const char *const *) run->labels);
  saccade_lines_view_set_title (self->lines_view, title);
}

static void
refresh_grid_metric (SaccadeWindow *self)
{
  SaccadeMetric metric = saccade_window_pages_metric (self);
  g_autofree char *title = NULL;

  if (self->run == NULL)
    return;
  title = saccade_window_pages_title (self, "model");
  saccade_grid_view_set_metric (self->grid_view,
                                saccade_run_metric (self->run, metric),
                                saccade_metric_name (metric));
  saccade_grid_view_set_title (self->grid_view, title);
}

void
saccade_window_pages_set_run (SaccadeWindow *self, SaccadeRun *run)
{
  SaccadeRun *old = self->run;
  gboolean same_shape = old != NULL && run != NULL && old->n_layers == run->n_layers
                        && old->n_heads == run->n_heads;

  self->run = run != NULL ? saccade_run_ref (run) : NULL;
  g_clear_pointer (&old, saccade_run_unref);

  self->updating_pickers = TRUE;
  if (run != NULL)
    {
      /* Keep the layer and head when the next run has the same shape (comparing
       * sentences head by head); else start at the first. */
      double layer = same_shape ? gtk_adjustment_get_value (self->layer_adjustment) : 0;
      double head = same_shape ? gtk_adjustment_get_value (self->head_adjustment) : 0;
      gtk_adjustment_configure (self->layer_adjustment, layer, 0, run->n_layers - 1, 1, 5, 0);
      gtk_adjustment_configure (self->head_adjustment, head, 0, run->n_heads - 1, 1,
                                saccade_run_group_size (run), 0);
      saccade_grid_view_set_data (self->grid_view, run->n_layers, run->n_heads, run->n_kv_heads,
                                  run->n, run->heads, NULL, NULL);
    }
  else
    {
      gtk_adjustment_configure (self->layer_adjustment, 0, 0, 0, 1, 5, 0);
      gtk_adjustment_configure (self->head_adjustment, 0, 0, 0, 1, 1, 0);
      saccade_grid_view_set_data (self->grid_view, 0, 0, 1, 0, NULL, NULL, NULL);
      gtk_list_box_unselect_all (self->runs_list);
    }
  self->updating_pickers = FALSE;

  refresh_grid_metric (self);
  refresh_heatmap (self);
  refresh_lines (self);
  gtk_stack_set_visible_child_name (self->content_stack, run != NULL ? "pages" : "empty");
  saccade_window_update_status (self);
  saccade_window_update_actions (self);
}

/* ------------------------------------------------------------------------------------ */
/* Pickers and keys                                                                      */

void
saccade_window_pages_select_head (SaccadeWindow *self, int layer, int head)
{
  gtk_adjustment_set_value (self->layer_adjustment, layer);
  gtk_adjustment_set_value (self->head_adjustment, head);
}

void
saccade_window_pages_step (SaccadeWindow *self, int d_layer, int d_head)
{
  if (self->run == NULL)
    return;
  saccade_window_pages_select_head (self, saccade_window_pages_layer (self) + d_layer,
                                    saccade_window_pages_head (self) + d_head);
}

const char *
saccade_window_pages_visible (SaccadeWindow *self)
{
  const char *name = adw_view_stack_get_visible_child_name (self->view_stack);
  return name != NULL ? name : "heatmap";
}

void
saccade_window_pages_show (SaccadeWindow *self, const char *page)
{
  adw_view_stack_set_visible_child_name (self->view_stack, page);
}

void
saccade_window_pages_reset_zoom (SaccadeWindow *self)
{
  saccade_heatmap_view_reset_zoom (self->heatmap_view);
}

static void
layer_changed (SaccadeWindow *self)
{
  if (self->updating_pickers)
    return;
  refresh_heatmap (self);
  refresh_lines (self);
}

static void
head_changed (SaccadeWindow *self)
{
  if (!self->updating_pickers)
    refresh_heatmap (self);
}

static void
grid_head_activated (SaccadeWindow *self, int layer, int head)
{
  saccade_window_pages_select_head (self, layer, head);
  saccade_window_pages_show (self, "heatmap");
  gtk_widget_grab_focus (GTK_WIDGET (self->heatmap_view));
}

/* Arrow keys and Page Up/Down that no focused widget used: Left/Right step the head,
 * Up/Down and Page Up/Page Down the layer (up = the previous layer, as in the lists). */
static gboolean
pages_key_pressed (GtkEventControllerKey *controller, guint keyval, guint keycode,
                   GdkModifierType state, SaccadeWindow *self)
{
  if ((state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SHIFT_MASK)) != 0 || self->run == NULL)
    return FALSE;
  switch (keyval)
    {
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left:
      saccade_window_pages_step (self, 0, -1);
      return TRUE;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right:
      saccade_window_pages_step (self, 0, 1);
      return TRUE;
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
    case GDK_KEY_Page_Up:
    case GDK_KEY_KP_Page_Up:
      saccade_window_pages_step (self, -1, 0);
      return TRUE;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
    case GDK_KEY_Page_Down:
    case GDK_KEY_KP_Page_Down:
      saccade_window_pages_step (self, 1, 0);
      return TRUE;
    default:
      return FALSE;
    }
}

/* A click on a figure gives it the keyboard, so the arrow keys step through heads. */
static void
view_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
  gtk_widget_grab_focus (gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture)));
}

static void
focus_on_click (GtkWidget *view)
{
  GtkGesture *click = gtk_gesture_click_new ();

  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (click), GTK_PHASE_CAPTURE);
  g_signal_connect (click, "pressed", G_CALLBACK (view_pressed), NULL);
  gtk_widget_add_controller (view, GTK_EVENT_CONTROLLER (click));
}

/* ------------------------------------------------------------------------------------ */
/* Settings: colour map, scale, metric                                                   */

static void
settings_changed (SaccadeWindow *self, const char *key)
{
  g_autofree char *value = g_settings_get_string (self->settings, key);

  self->updating_pickers = TRUE;
  if (g_str_equal (key, "colormap"))
    {
      SaccadeColormap map = SACCADE_COLORMAP_VIRIDIS;
      saccade_colormap_from_id (value, &map);
      gtk_drop_down_set_selected (self->colormap_dropdown, map);
      saccade_heatmap_view_set_colormap (self->heatmap_view, map);
      saccade_grid_view_set_colormap (self->grid_view, map);
    }
  else if (g_str_equal (key, "scale"))
    {
      SaccadeScale scale = SACCADE_SCALE_LINEAR;
      saccade_scale_from_id (value, &scale);
      gtk_toggle_button_set_active (scale == SACCADE_SCALE_LOG ? self->log_button
                                                               : self->linear_button, TRUE);
      saccade_heatmap_view_set_scale (self->heatmap_view, scale);
    }
  else if (g_str_equal (key, "metric"))
    {
      SaccadeMetric metric = SACCADE_METRIC_ENTROPY;
      saccade_metric_from_id (value, &metric);
      gtk_drop_down_set_selected (self->metric_dropdown, metric);
      refresh_grid_metric (self);
    }
  self->updating_pickers = FALSE;
}

static void
colormap_selected (SaccadeWindow *self)
{
  if (!self->updating_pickers)
    g_settings_set_string (self->settings, "colormap",
                           saccade_colormap_id (saccade_window_pages_colormap (self)));
}

static void
scale_toggled (SaccadeWindow *self)
{
  if (!self->updating_pickers)
    g_settings_set_string (self->settings, "scale",
                           saccade_scale_id (saccade_window_pages_scale (self)));
}

static void
metric_selected (SaccadeWindow *self)
{
  if (!self->updating_pickers)
    g_settings_set_string (self->settings, "metric",
                           saccade_metric_id (saccade_window_pages_metric (self)));
}

void
saccade_window_pages_init (SaccadeWindow *self)
{
  g_autoptr (GtkStringList) maps = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) names = gtk_string_list_new (NULL);
  GtkEventController *keys = gtk_event_controller_key_new ();
  guint i;

  for (i = 0; i <= SACCADE_COLORMAP_LAST; i++)
    gtk_string_list_append (maps, saccade_colormap_name ((SaccadeColormap) i));
  gtk_drop_down_set_model (self->colormap_dropdown, G_LIST_MODEL (maps));
  for (i = 0; i < SACCADE_N_METRICS; i++)
    gtk_string_list_append (names, saccade_metric_name ((SaccadeMetric) i));
  gtk_drop_down_set_model (self->metric_dropdown, G_LIST_MODEL (names));

  settings_changed (self, "colormap");
  settings_changed (self, "scale");
  settings_changed (self, "metric");
  g_signal_connect_object (self->settings, "changed::colormap", G_CALLBACK (settings_changed),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->settings, "changed::scale", G_CALLBACK (settings_changed),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->settings, "changed::metric", G_CALLBACK (settings_changed),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_swapped (self->colormap_dropdown, "notify::selected",
                            G_CALLBACK (colormap_selected), self);
  g_signal_connect_swapped (self->log_button, "toggled", G_CALLBACK (scale_toggled), self);
  g_signal_connect_swapped (self->metric_dropdown, "notify::selected",
                            G_CALLBACK (metric_selected), self);

  g_signal_connect_swapped (self->layer_adjustment, "value-changed", G_CALLBACK (layer_changed),
                            self);
  g_signal_connect_swapped (self->head_adjustment, "value-changed", G_CALLBACK (head_changed),
                            self);
  g_signal_connect_swapped (self->grid_view, "head-activated", G_CALLBACK (grid_head_activated),
                            self);

  g_signal_connect (keys, "key-pressed", G_CALLBACK (pages_key_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self->view_stack), keys);
  focus_on_click (GTK_WIDGET (self->heatmap_view));
  focus_on_click (GTK_WIDGET (self->grid_view));
  focus_on_click (GTK_WIDGET (self->lines_view));
}
