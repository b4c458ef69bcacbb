/* saccade-neuron-view.c — the Learn page's "Inside the model" section
 * (saccade-neuron-view.h): pickers, the q ∘ k heatmap (a GtkDrawingArea, Cairo) and the
 * table, over a SaccadeNeuron computed in a worker. */
#define G_LOG_DOMAIN "saccade"

#include "app/window/pages/saccade-neuron-view.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-format.h"
#include "app/core/saccade-job.h"
#include "app/core/saccade-neuron.h"
#include "ui/figures/saccade-colormap.h"

/* Heatmap cells: head_dim (64) columns of 6 px fit the Learn page's column; keys are rows. */
#define CELL_W 6
#define CELL_H 12
/* Keys shown in the table and the heatmap: the last ones before the query (a long run's
 * query sees thousands; the table would not be read). */
#define MAX_KEYS 32

struct _SaccadeNeuronView
{
  GtkBox parent_instance;
  SaccadeLoadedModel *model;
  SaccadeRun *run;
  SaccadeNeuron *nv;          /* the last result, or NULL */
  GCancellable *cancellable;  /* of the computation running, or NULL */
  GtkSpinButton *layer_spin, *head_spin, *query_spin;
  GtkLabel *status;
  GtkDrawingArea *heatmap;
  GtkGrid *table;
  gboolean picking;           /* set_run/pick are moving the spins: no recompute per step */
  gboolean stale;             /* a change arrived while unmapped: recompute on map */
};

G_DEFINE_FINAL_TYPE (SaccadeNeuronView, saccade_neuron_view, GTK_TYPE_BOX)

static int
spin_int (GtkSpinButton *spin)
{
  return (int) gtk_spin_button_get_value (spin);
}

/* The keys shown for query @i: the last MAX_KEYS of 0 .. i. */
static int
first_key (int i)
{
  return MAX (0, i + 1 - MAX_KEYS);
}

static GtkWidget *
cell (const char *text, gboolean header, float xalign)
{
  GtkWidget *l = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (l), xalign);
  gtk_widget_add_css_class (l, header ? "heading" : "numeric");
  return l;
}

static void
clear_table (SaccadeNeuronView *self)
{
  GtkWidget *c;

  while ((c = gtk_widget_get_first_child (GTK_WIDGET (self->table))) != NULL)
    gtk_grid_remove (self->table, c);
}

/* The table and the heatmap for the query picked. */
static void
show_query (SaccadeNeuronView *self)
{
  const SaccadeNeuron *nv = self->nv;
  const char *heads[] = { N_("Key"), N_("q·k"), N_("Scaled"), N_("Weight"), N_("Stored") };
  g_autofree SaccadeNeuronKey *keys = NULL;
  g_auto (GStrv) labels = NULL;
  int i, j0;

  clear_table (self);
  if (nv == NULL)
    {
      gtk_widget_set_size_request (GTK_WIDGET (self->heatmap), -1, 0);
      gtk_widget_queue_draw (GTK_WIDGET (self->heatmap));
      return;
    }
  i = MIN (spin_int (self->query_spin), nv->n_tokens - 1);
  j0 = first_key (i);
  keys = g_new (SaccadeNeuronKey, i + 1);
  saccade_neuron_query (nv, i, keys);
  labels = saccade_token_labels_for_store (nv->tokens, (gsize) nv->n_tokens);
  for (guint c = 0; c < G_N_ELEMENTS (heads); c++)
    gtk_grid_attach (self->table, cell (_(heads[c]), TRUE, c == 0 ? 0 : 1), (int) c, 0, 1, 1);
  for (int j = j0; j <= i; j++)
    {
      const int r = j - j0 + 1;
      g_autofree char *k = g_strdup_printf ("%d %s", j, labels[j]);
      g_autofree char *d = g_strdup_printf ("%.3f", keys[j].dot);
      g_autofree char *s = g_strdup_printf ("%.3f", keys[j].scaled);
      g_autofree char *w = g_strdup_printf ("%.5f", keys[j].weight);
      g_autofree char *p = g_strdup_printf ("%.5f", keys[j].stored);
      gtk_grid_attach (self->table, cell (k, FALSE, 0), 0, r, 1, 1);
      gtk_grid_attach (self->table, cell (d, FALSE, 1), 1, r, 1, 1);
      gtk_grid_attach (self->table, cell (s, FALSE, 1), 2, r, 1, 1);
      gtk_grid_attach (self->table, cell (w, FALSE, 1), 3, r, 1, 1);
      gtk_grid_attach (self->table, cell (p, FALSE, 1), 4, r, 1, 1);
    }
  gtk_widget_set_size_request (GTK_WIDGET (self->heatmap), nv->head_dim * CELL_W,
                               (i - j0 + 1) * CELL_H);
  gtk_widget_queue_draw (GTK_WIDGET (self->heatmap));
}

/* q_i ∘ k_j: a row per shown key, a column per dimension; red positive, blue negative,
 * white 0, scaled by the largest |term| of the picture. */
static void
draw_heatmap (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  SaccadeNeuronView *self = user_data;
  const SaccadeNeuron *nv = self->nv;
  const float *qi;
  double vmax = 0;
  int i, j0;

  (void) area;
  (void) width;
  (void) height;
  if (nv == NULL)
    return;
  i = MIN (spin_int (self->query_spin), nv->n_tokens - 1);
  j0 = first_key (i);
  qi = saccade_neuron_q (nv, i);
  for (int j = j0; j <= i; j++)
    for (int d = 0; d < nv->head_dim; d++)
      vmax = MAX (vmax, fabs ((double) qi[d] * saccade_neuron_k (nv, j)[d]));
  for (int j = j0; j <= i; j++)
    {
      const float *kj = saccade_neuron_k (nv, j);
      for (int d = 0; d < nv->head_dim; d++)
        {
          double rgb[3];
          const double v = (double) qi[d] * kj[d];
          /* RdBu: 0 blue (negative), 0.5 white, 1 red (positive) */
          saccade_colormap_rgb (SACCADE_COLORMAP_RDBU, vmax > 0 ? 0.5 + 0.5 * v / vmax : 0.5,
                                rgb);
          cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
          cairo_rectangle (cr, d * CELL_W, (j - j0) * CELL_H, CELL_W, CELL_H);
          cairo_fill (cr);
        }
    }
}

static void
computed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  SaccadeNeuron *nv = saccade_neuron_get_finish (result, &error);
  SaccadeNeuronView *self;

  (void) user_data;
  if (nv == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* a newer pick replaced it; self may be gone */
  self = SACCADE_NEURON_VIEW (source);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->nv, saccade_neuron_free);
  self->nv = nv;
  if (nv == NULL)
    gtk_label_set_text (self->status, error->message);
  else
    {
      g_autofree char *t = g_strdup_printf (
        _("Every query of head L%d.H%d: largest |weight − stored| %.2g (the store keeps fp16: "
          "about 5·10⁻⁴ of a value)"), nv->layer, nv->head, nv->max_diff);
      gtk_label_set_text (self->status, t);
    }
  show_query (self);
}

static void
recompute (SaccadeNeuronView *self)
{
  if (self->picking)
    return;
  saccade_job_cancel_clear (&self->cancellable);
  g_clear_pointer (&self->nv, saccade_neuron_free);
  show_query (self);
  /* Not on screen (another page is shown): the window switches runs without paying for a
   * layer of each; the first map computes. */
  self->stale = !gtk_widget_get_mapped (GTK_WIDGET (self));
  if (self->stale)
    return;
  if (self->run == NULL || self->model == NULL)
    {
      gtk_label_set_text (self->status, self->run == NULL ? _("Capture or open a run to look inside it.")
                                                          : _("Waiting for the model to load…"));
      return;
    }
  gtk_label_set_text (self->status, _("Computing…"));
  self->cancellable = g_cancellable_new ();
  saccade_neuron_get_async (self, self->model, self->run->db_path, self->run->id,
                            spin_int (self->layer_spin), spin_int (self->head_spin),
                            self->cancellable, computed, NULL);
}

static void
mapped (GtkWidget *widget, gpointer user_data)
{
  SaccadeNeuronView *self = SACCADE_NEURON_VIEW (widget);

  (void) user_data;
  if (self->stale)
    recompute (self);
}

static void
query_changed (SaccadeNeuronView *self)
{
  if (!self->picking)
    show_query (self);
}

static GtkSpinButton *
add_spin (SaccadeNeuronView *self, AdwPreferencesGroup *group, const char *title,
          GCallback changed)
{
  GtkSpinButton *spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (0, 0, 1));
  AdwActionRow *row = ADW_ACTION_ROW (adw_action_row_new ());

  gtk_spin_button_set_numeric (spin, TRUE);
  gtk_widget_set_valign (GTK_WIDGET (spin), GTK_ALIGN_CENTER);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_add_suffix (row, GTK_WIDGET (spin));
  adw_action_row_set_activatable_widget (row, GTK_WIDGET (spin));
  adw_preferences_group_add (group, GTK_WIDGET (row));
  g_signal_connect_swapped (spin, "value-changed", changed, self);
  return spin;
}

static void
set_range (GtkSpinButton *spin, int n)
{
  gtk_spin_button_set_range (spin, 0, MAX (0, n - 1));
}

void
saccade_neuron_view_set_model (SaccadeNeuronView *self, SaccadeLoadedModel *model)
{
  g_return_if_fail (SACCADE_IS_NEURON_VIEW (self));
  if (model == self->model)
    return;
  g_set_object (&self->model, model);
  recompute (self);
}

void
saccade_neuron_view_set_run (SaccadeNeuronView *self, SaccadeRun *run)
{
  g_return_if_fail (SACCADE_IS_NEURON_VIEW (self));
  if (run == self->run)
    return;
  g_clear_pointer (&self->run, saccade_run_unref);
  self->run = run != NULL ? saccade_run_ref (run) : NULL;
  self->picking = TRUE;
  set_range (self->layer_spin, run != NULL ? run->n_layers : 0);
  set_range (self->head_spin, run != NULL ? run->n_heads : 0);
  set_range (self->query_spin, run != NULL ? run->n : 0);
  gtk_spin_button_set_value (self->query_spin, run != NULL ? run->n - 1 : 0);
  self->picking = FALSE;
  recompute (self);
}

void
saccade_neuron_view_pick (SaccadeNeuronView *self, int layer, int head, int query)
{
  g_return_if_fail (SACCADE_IS_NEURON_VIEW (self));
  self->picking = TRUE;
  gtk_spin_button_set_value (self->layer_spin, layer);
  gtk_spin_button_set_value (self->head_spin, head);
  gtk_spin_button_set_value (self->query_spin, query);
  self->picking = FALSE;
  recompute (self);
}

gboolean
saccade_neuron_view_is_busy (SaccadeNeuronView *self)
{
  g_return_val_if_fail (SACCADE_IS_NEURON_VIEW (self), FALSE);
  return self->cancellable != NULL;
}

GtkWidget *
saccade_neuron_view_new (void)
{
  return g_object_new (SACCADE_TYPE_NEURON_VIEW, "orientation", GTK_ORIENTATION_VERTICAL,
                       "spacing", 12, NULL);
}

static void
saccade_neuron_view_dispose (GObject *object)
{
  SaccadeNeuronView *self = SACCADE_NEURON_VIEW (object);

  saccade_job_cancel_clear (&self->cancellable);
  g_clear_object (&self->model);
  g_clear_pointer (&self->run, saccade_run_unref);
  g_clear_pointer (&self->nv, saccade_neuron_free);
  G_OBJECT_CLASS (saccade_neuron_view_parent_class)->dispose (object);
}

static void
saccade_neuron_view_class_init (SaccadeNeuronViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_neuron_view_dispose;
}

static void
saccade_neuron_view_init (SaccadeNeuronView *self)
{
  AdwPreferencesGroup *group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  GtkWidget *scroll;

  adw_preferences_group_set_title (group, _("Inside the model"));
  adw_preferences_group_set_description (
    group, _("How one head of the run shown makes its attention: the query vector of a token "
             "(after RoPE) against each visible key vector. Each heatmap row is q ∘ k for one "
             "key (red positive, blue negative); its sum is q·k, scaled by 1/√d and "
             "softmaxed into the weight, set beside the probability the run stored."));
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (group));
  self->layer_spin = add_spin (self, group, _("Layer"), G_CALLBACK (recompute));
  self->head_spin = add_spin (self, group, _("Head"), G_CALLBACK (recompute));
  self->query_spin = add_spin (self, group, _("Query token"), G_CALLBACK (query_changed));

  self->status = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_wrap (self->status, TRUE);
  gtk_label_set_xalign (self->status, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->status), "dim-label");
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->status));

  self->heatmap = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_halign (GTK_WIDGET (self->heatmap), GTK_ALIGN_START);
  gtk_drawing_area_set_draw_func (self->heatmap, draw_heatmap, self, NULL);
  scroll = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_AUTOMATIC,
                                  GTK_POLICY_NEVER);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroll), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), GTK_WIDGET (self->heatmap));
  gtk_box_append (GTK_BOX (self), scroll);

  self->table = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_column_spacing (self->table, 18);
  gtk_grid_set_row_spacing (self->table, 2);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->table));
  g_signal_connect (self, "map", G_CALLBACK (mapped), NULL);
  recompute (self);
}
