/* saccade-learn-page.c — the Learn page (see saccade-learn-page.h): its column, the worked
 * example (section 1), the model and run it hands to its sections, and the page.* actions
 * that edit its fields. The four calculators of sizes are saccade-learn-sizes.c's, the rows every
 * section is built of saccade-learn-rows.c's.
 *
 * Built in code rather than a template: five AdwPreferencesGroups in a clamped, scrolled
 * column, their inputs AdwActionRows with a spin button, switch or drop-down as suffix,
 * their results rows whose suffix is a selectable numeric label. The worked example's
 * steps are GtkGrids in a GtkFlowBox, rebuilt on each edit (at most SC_LEARN_MAX_DIM² cells
 * a step). Every edit calls the section's update function, which calls engine/analysis/
 * sc-learn.c and writes the labels; an error (a table that does not parse, Q and K of
 * different widths, h not dividing d_model, an overflow) is shown in place of the numbers,
 * with the engine's message naming the value.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-learn-private.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/saccade-capture-task.h"

/* The width the column is clamped to: the step tables and a results row side by side. */
#define COLUMN_WIDTH 960

G_DEFINE_FINAL_TYPE (SaccadeLearnPage, saccade_learn_page, SACCADE_TYPE_PAGE)

/* The decimals each example's article prints (000: 0.736; 004: 0.2483). */
static int
example_decimals (const char *id)
{
  return g_strcmp0 (id, "000") == 0 ? 3 : 4;
}

/* ---- 1. the worked example ------------------------------------------------------------- */

static GtkWidget *
cell (const char *text, gboolean header)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 1);
  gtk_widget_add_css_class (label, header ? "dim-label" : "numeric");
  return label;
}

/* One step's table: @x (rows, cols) with row and column labels, the row or column sums in an
 * extra column or row when asked, and (@extra non-NULL) one more column @extra_l of @extra
 * (rows). */
static void
add_step (SaccadeLearnPage *self, const char *title, const double *x, int rows, int cols,
          const char *const *row_l, const char *const *col_l, gboolean row_sums,
          gboolean col_sums, const double *extra, const char *extra_l)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *heading = gtk_label_new (title);
  GtkGrid *grid = GTK_GRID (gtk_grid_new ());
  char buf[64];

  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  gtk_label_set_wrap (GTK_LABEL (heading), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (heading), 28);
  gtk_widget_add_css_class (heading, "heading");
  gtk_grid_set_column_spacing (grid, 12);
  gtk_grid_set_row_spacing (grid, 4);
  for (int j = 0; j < cols; j++)
    gtk_grid_attach (grid, cell (col_l[j], TRUE), j + 1, 0, 1, 1);
  if (row_sums)
    gtk_grid_attach (grid, cell (_("Σ row"), TRUE), cols + 1, 0, 1, 1);
  if (extra != NULL)
    gtk_grid_attach (grid, cell (extra_l, TRUE), cols + 2, 0, 1, 1);
  for (int i = 0; i < rows; i++)
    {
      double sum = 0;
      gtk_grid_attach (grid, cell (row_l[i], TRUE), 0, i + 1, 1, 1);
      for (int j = 0; j < cols; j++)
        {
          g_snprintf (buf, sizeof buf, "%.*f", self->decimals, x[i * cols + j]);
          gtk_grid_attach (grid, cell (buf, FALSE), j + 1, i + 1, 1, 1);
          sum += x[i * cols + j];
        }
      if (row_sums)
        {
          g_snprintf (buf, sizeof buf, "%.*f", self->decimals, sum);
          gtk_grid_attach (grid, cell (buf, FALSE), cols + 1, i + 1, 1, 1);
        }
      if (extra != NULL)
        {
          g_snprintf (buf, sizeof buf, "%.*f", self->decimals, extra[i]);
          gtk_grid_attach (grid, cell (buf, FALSE), cols + 2, i + 1, 1, 1);
        }
    }
  if (col_sums)
    {
      gtk_grid_attach (grid, cell (_("Σ column"), TRUE), 0, rows + 1, 1, 1);
      for (int j = 0; j < cols; j++)
        {
          double sum = 0;
          for (int i = 0; i < rows; i++)
            sum += x[i * cols + j];
          g_snprintf (buf, sizeof buf, "%.*f", self->decimals, sum);
          gtk_grid_attach (grid, cell (buf, FALSE), j + 1, rows + 1, 1, 1);
        }
    }
  gtk_box_append (GTK_BOX (box), heading);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (grid));
  gtk_widget_set_valign (box, GTK_ALIGN_START);
  gtk_flow_box_append (self->steps, box);
}

/* Labels for @n rows: the example's where it has them, else "1", "2", ... */
static void
fill_labels (const char *const *given, int n_given, int n, char names[][16], const char **out)
{
  for (int i = 0; i < n; i++)
    {
      if (i < n_given && given[i] != NULL)
        g_strlcpy (names[i], given[i], sizeof names[i]);
      else
        g_snprintf (names[i], sizeof names[i], "%d", i + 1);
      out[i] = names[i];
    }
}

static void
update_example (SaccadeLearnPage *self)
{
  /* The parse's buffers, SC_LEARN_MAX_DIM² each: on the heap, as the result. */
  g_autofree double *q = g_new (double, SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM);
  g_autofree double *k = g_new (double, SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM);
  g_autofree double *v = g_new (double, SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM);
  g_autofree ScLearnAttention *a = g_new0 (ScLearnAttention, 1);
  char q_names[SC_LEARN_MAX_DIM][16], k_names[SC_LEARN_MAX_DIM][16], d_names[SC_LEARN_MAX_DIM][16];
  const char *q_l[SC_LEARN_MAX_DIM], *k_l[SC_LEARN_MAX_DIM], *d_l[SC_LEARN_MAX_DIM];
  double unshifted[SC_LEARN_MAX_DIM];
  int qr = 0, qc = 0, kr = 0, kc = 0, vr = 0, vc = 0;
  ScError err = { 0 };
  GtkWidget *child;
  g_autoptr (GString) gaps = g_string_new (NULL);
  char title[128];

  if (self->filling)
    return;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->steps))) != NULL)
    gtk_flow_box_remove (self->steps, child);
  if (sc_learn_parse_matrix (gtk_editable_get_text (self->q_entry), "Q", q, &qr, &qc, &err)
      || sc_learn_parse_matrix (gtk_editable_get_text (self->k_entry), "K", k, &kr, &kc, &err)
      || sc_learn_parse_matrix (gtk_editable_get_text (self->v_entry), "V", v, &vr, &vc, &err)
      || sc_learn_check_shapes (qc, kr, kc, vr, &err)
      || sc_learn_attention (q, k, v, qr, kr, qc, vc, gtk_switch_get_active (self->scale_switch),
                             gtk_spin_button_get_value (self->temperature_spin), a, &err))
    {
      gtk_label_set_text (self->example_error, err.message);
      gtk_widget_set_visible (GTK_WIDGET (self->example_error), TRUE);
      gtk_widget_set_visible (GTK_WIDGET (self->gap_label), FALSE);
      return;
    }
  gtk_widget_set_visible (GTK_WIDGET (self->example_error), FALSE);
  fill_labels (self->example.query_labels, self->example.m, a->m, q_names, q_l);
  fill_labels (self->example.key_labels, self->example.n, a->n, k_names, k_l);
  fill_labels (NULL, 0, MAX (a->d, a->dv), d_names, d_l);
  add_step (self, _("1. Raw scores q·k"), a->raw, a->m, a->n, q_l, k_l, FALSE, FALSE, NULL, NULL);
  if (a->scale)
    {
      g_snprintf (title, sizeof title, _("2. Scaled: ÷ √d_k = %.4f"), sqrt ((double) a->d));
      add_step (self, title, a->scaled, a->m, a->n, q_l, k_l, FALSE, FALSE, NULL, NULL);
    }
  if (a->temperature != 1)
    {
      g_snprintf (title, sizeof title, _("÷ temperature %g: the softmax's input"),
                  a->temperature);
      add_step (self, title, a->logits, a->m, a->n, q_l, k_l, FALSE, FALSE, NULL, NULL);
    }
  /* The articles print exp (s) itself: its row sum is the shifted one × e^max. */
  for (int i = 0; i < a->m; i++)
    unshifted[i] = a->exp_sum[i] * exp (a->row_max[i]);
  add_step (self, _("3. Exponentials e^(s − row max)"), a->exps, a->m, a->n, q_l, k_l, TRUE,
            FALSE, unshifted, _("Σ e^s"));
  add_step (self, _("4. Weights: rows sum to 1, columns do not"), a->weights, a->m, a->n, q_l,
            k_l, TRUE, TRUE, NULL, NULL);
  add_step (self, _("5. Outputs z = weights · V"), a->out, a->m, a->dv, q_l, d_l, FALSE, FALSE, NULL,
            NULL);
  if (a->n > 1)
    {
      g_string_append_printf (gaps, _("One weight passes %.2f when its score exceeds the other "
                                      "%d by %.4f in the softmax's input (%.4f in raw q·k)."),
                              SC_LEARN_HARD_WEIGHT, a->n - 1, a->gap_needed, a->gap_needed_raw);
      for (int i = 0; i < a->m; i++)
        {
          g_string_append_c (gaps, '\n');
          g_string_append_printf (gaps, _("Row %s: top key %s, weight %.*f, gap to the next "
                                          "%.4f — needs %.4f more"),
                                  q_l[i], k_l[a->top[i]], self->decimals,
                                  a->weights[i * a->n + a->top[i]], a->gap[i],
                                  MAX (0, a->gap_needed - a->gap[i]));
        }
    }
  else
    g_string_append (gaps, _("One key: its weight is always 1."));
  gtk_label_set_text (self->gap_label, gaps->str);
  gtk_widget_set_visible (GTK_WIDGET (self->gap_label), TRUE);
}

static char *
matrix_text (const double *x, int rows, int cols)
{
  GString *s = g_string_new (NULL);

  for (int i = 0; i < rows; i++)
    {
      if (i > 0)
        g_string_append (s, "; ");
      for (int j = 0; j < cols; j++)
        g_string_append_printf (s, j > 0 ? " %g" : "%g", x[i * cols + j]);
    }
  return g_string_free (s, FALSE);
}

static void
example_chosen (SaccadeLearnPage *self)
{
  const char *const *ids = sc_learn_example_ids ();
  guint i = gtk_drop_down_get_selected (self->example_dd);
  ScError err = { 0 };
  g_autofree char *q = NULL, *k = NULL, *v = NULL;

  if (i == GTK_INVALID_LIST_POSITION || sc_learn_example (ids[i], &self->example, &err))
    return;
  self->decimals = example_decimals (ids[i]);
  q = matrix_text (self->example.q, self->example.m, self->example.d);
  k = matrix_text (self->example.k, self->example.n, self->example.d);
  v = matrix_text (self->example.v, self->example.n, self->example.dv);
  self->filling = TRUE;
  gtk_editable_set_text (self->q_entry, q);
  gtk_editable_set_text (self->k_entry, k);
  gtk_editable_set_text (self->v_entry, v);
  self->filling = FALSE;
  update_example (self);
}

static GtkEditable *
add_matrix_row (SaccadeLearnPage *self, AdwPreferencesGroup *group, const char *title)
{
  GtkWidget *row = adw_entry_row_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  gtk_widget_add_css_class (row, "numeric");
  adw_preferences_group_add (group, row);
  g_signal_connect_swapped (row, "changed", G_CALLBACK (update_example), self);
  return GTK_EDITABLE (row);
}

static void
build_example (SaccadeLearnPage *self, GtkBox *column)
{
  AdwPreferencesGroup *g = learn_add_group (column, _("Worked example"),
                                      _("softmax (Q Kᵀ / √d_k) V step by step. Edit the "
                                        "tables: rows separated by “;”, values by spaces."));
  const char *const *ids = sc_learn_example_ids ();
  g_autoptr (GtkStringList) names = gtk_string_list_new (NULL);
  GtkWidget *steps;

  for (int i = 0; ids[i] != NULL; i++)
    {
      ScLearnExample ex;
      ScError err = { 0 };
      g_autofree char *name = NULL;
      if (sc_learn_example (ids[i], &ex, &err))
        continue;
      /* TRANSLATORS: a worked example's number (1, 2) and its one-line title, in English:
       * "the query 它 over 猫, 球, 它 (d_k = 4)" */
      name = g_strdup_printf (_("Example %d: %s"), i + 1, ex.title);
      gtk_string_list_append (names, name);
    }
  self->example_dd = learn_add_dropdown (self, g, _("Example"),
                                         _("Hand-worked numbers the page's arithmetic is "
                                           "checked against (docs/learn.md)"), names,
                                         G_CALLBACK (example_chosen));
  self->q_entry = add_matrix_row (self, g, _("Q (queries × d_k)"));
  self->k_entry = add_matrix_row (self, g, _("K (keys × d_k)"));
  self->v_entry = add_matrix_row (self, g, _("V (keys × d_v)"));
  self->scale_switch = GTK_SWITCH (gtk_switch_new ());
  gtk_switch_set_active (self->scale_switch, TRUE);
  learn_add_row (g, _("Divide by √d_k"), _("Off: the raw scores go to the softmax"),
           GTK_WIDGET (self->scale_switch));
  g_signal_connect_swapped (self->scale_switch, "notify::active", G_CALLBACK (update_example),
                            self);
  self->temperature_spin = learn_add_spin (self, g, _("Temperature"),
                                     _("The softmax's input is divided by it as well"),
                                     0.05, 100, 0.05, 2, 1, G_CALLBACK (update_example));

  self->example_error = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_wrap (self->example_error, TRUE);
  gtk_label_set_xalign (self->example_error, 0);
  gtk_widget_set_margin_top (GTK_WIDGET (self->example_error), 12);
  gtk_widget_add_css_class (GTK_WIDGET (self->example_error), "error");
  adw_preferences_group_add (g, GTK_WIDGET (self->example_error));

  steps = gtk_flow_box_new ();
  self->steps = GTK_FLOW_BOX (steps);
  gtk_flow_box_set_selection_mode (self->steps, GTK_SELECTION_NONE);
  gtk_flow_box_set_homogeneous (self->steps, FALSE);
  gtk_flow_box_set_max_children_per_line (self->steps, 3);
  gtk_flow_box_set_column_spacing (self->steps, 24);
  gtk_flow_box_set_row_spacing (self->steps, 18);
  gtk_widget_set_margin_top (steps, 18);
  adw_preferences_group_add (g, steps);

  self->gap_label = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_wrap (self->gap_label, TRUE);
  gtk_label_set_xalign (self->gap_label, 0);
  gtk_label_set_selectable (self->gap_label, TRUE);
  gtk_widget_set_margin_top (GTK_WIDGET (self->gap_label), 12);
  adw_preferences_group_add (g, GTK_WIDGET (self->gap_label));
}

/* ---- page.* actions: what editing a field does ------------------------------------------ */

static gboolean
select_by (GtkDropDown *dd, guint i)
{
  if (i >= g_list_model_get_n_items (gtk_drop_down_get_model (dd)))
    return FALSE;
  gtk_drop_down_set_selected (dd, i);
  return TRUE;
}

/* Scrolls @section's top to the top of the page, as a user scrolling there. */
static gboolean
scroll_to (SaccadeLearnPage *self, GtkWidget *section)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scrolled);
  GtkWidget *viewport = gtk_scrolled_window_get_child (self->scrolled);
  double x, y;

  if (!gtk_widget_translate_coordinates (section, viewport, 0, 0, &x, &y))
    return FALSE;
  gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) + y - 12);
  return TRUE;
}

/* Sets the field @name (an action's name less "page.") to @value, as a user editing it
 * does; FALSE for an unknown name or a value it does not take. */
static gboolean
set_field (SaccadeLearnPage *self, const char *name, const char *value)
{
  struct { const char *name; GtkSpinButton *spin; } spins[] = {
    { "temperature", self->temperature_spin }, { "dk", self->dk_spin },
    { "gap", self->gap_spin }, { "d-model", self->d_model_spin },
    { "heads", self->heads_spin }, { "layers", self->layers_spin },
    { "kv-heads", self->kv_heads_spin }, { "head-dim", self->head_dim_spin },
    { "len", self->len_spin }, { "bytes", self->bytes_spin },
    { "bandwidth", self->bandwidth_spin }, { "n", self->n_spin }, { "d", self->d_spin },
    { "sram-kb", self->sram_spin },
  };
  char *end = NULL;
  double x;
  int n;

  if (g_str_equal (name, "q") || g_str_equal (name, "k") || g_str_equal (name, "v"))
    {
      gtk_editable_set_text (name[0] == 'q' ? self->q_entry
                             : name[0] == 'k' ? self->k_entry : self->v_entry, value);
      return TRUE;
    }
  if (g_str_equal (name, "scale") && (g_str_equal (value, "on") || g_str_equal (value, "off")))
    {
      gtk_switch_set_active (self->scale_switch, g_str_equal (value, "on"));
      return TRUE;
    }
  if (g_str_equal (name, "show"))
    {
      static const char *const sections[] = { "example", "sqrt-dk", "heads", "kv-cache",
                                              "flash" };
      for (guint i = 0; i < G_N_ELEMENTS (sections); i++)
        if (g_str_equal (sections[i], value))
          return scroll_to (self, self->sections[i]);
      if (g_str_equal (value, "neuron"))
        return scroll_to (self, GTK_WIDGET (self->neuron));
      return FALSE;
    }
  if (g_str_equal (name, "neuron"))
    {
      int l, h, q;
      if (sscanf (value, "%d %d %d", &l, &h, &q) != 3)
        return FALSE;
      saccade_neuron_view_pick (self->neuron, l, h, q);
      return TRUE;
    }
  if (g_str_equal (name, "example"))
    {
      const char *const *ids = sc_learn_example_ids ();
      for (guint i = 0; ids[i] != NULL; i++)
        if (g_str_equal (ids[i], value))
          return select_by (self->example_dd, i);
      return FALSE;
    }
  if (g_str_equal (name, "kv-preset"))
    {
      const ScLearnKvPreset *presets = sc_learn_kv_presets (&n);
      if (g_str_equal (value, "loaded"))
        return select_by (self->kv_dd, n);
      for (int i = 0; i < n; i++)
        if (g_str_equal (presets[i].id, value))
          return select_by (self->kv_dd, i);
      return FALSE;
    }
  if (g_str_equal (name, "gpu"))
    {
      const ScLearnGpuPreset *presets = sc_learn_gpu_presets (&n);
      for (int i = 0; i < n; i++)
        if (g_str_equal (presets[i].id, value))
          return select_by (self->gpu_dd, i);
      return FALSE;
    }
  x = g_ascii_strtod (value, &end);
  if (end == value || *end != '\0')
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (spins); i++)
    if (g_str_equal (spins[i].name, name))
      {
        gtk_spin_button_set_value (spins[i].spin, x);
        return TRUE;
      }
  return FALSE;
}

/* The page's fields, each an action page.NAME taking a string (saccade-learn-page.h). */
static const char *const FIELDS[] = {
  "example", "q", "k", "v", "scale", "temperature", "dk", "gap", "d-model", "heads",
  "kv-preset", "layers", "kv-heads", "head-dim", "len", "bytes", "bandwidth", "n", "d",
  "sram-kb", "gpu", "neuron", "show",
};

static void
field_action (GtkWidget *widget, const char *name, GVariant *param)
{
  const char *value = g_variant_get_string (param, NULL);

  if (!set_field (SACCADE_LEARN_PAGE (widget), name + strlen ("page."), value))
    g_warning ("the Learn page's %s takes no '%s'", name, value);
}

/* ---- the page ------------------------------------------------------------------------- */

static void
saccade_learn_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  SaccadeLearnPage *self = SACCADE_LEARN_PAGE (page);
  int n;

  saccade_neuron_view_set_model (self->neuron, model);
  sc_learn_kv_presets (&n);
  /* The "Loaded model" entry is the last, there only while a model is. */
  if (g_list_model_get_n_items (G_LIST_MODEL (self->kv_names)) > (guint) n)
    {
      if (gtk_drop_down_get_selected (self->kv_dd) == (guint) n)
        gtk_drop_down_set_selected (self->kv_dd, 0);
      gtk_string_list_remove (self->kv_names, n);
    }
  if (model != NULL)
    {
      g_autofree char *name = g_strdup_printf (_("Loaded model: %s"),
                                               saccade_loaded_model_get_name (model));
      gtk_string_list_append (self->kv_names, name);
    }
}

static void
saccade_learn_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  saccade_neuron_view_set_run (SACCADE_LEARN_PAGE (page)->neuron, run);
}

static gboolean
saccade_learn_page_is_busy (SaccadePage *page)
{
  return saccade_neuron_view_is_busy (SACCADE_LEARN_PAGE (page)->neuron);
}

static void
saccade_learn_page_dispose (GObject *object)
{
  SaccadeLearnPage *self = SACCADE_LEARN_PAGE (object);
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_clear_object (&self->kv_names);
  G_OBJECT_CLASS (saccade_learn_page_parent_class)->dispose (object);
}

static void
saccade_learn_page_class_init (SaccadeLearnPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->dispose = saccade_learn_page_dispose;
  page_class->set_model = saccade_learn_page_set_model;
  page_class->set_run = saccade_learn_page_set_run;
  page_class->is_busy = saccade_learn_page_is_busy;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  for (gsize i = 0; i < G_N_ELEMENTS (FIELDS); i++)
    {
      g_autofree char *action = g_strconcat ("page.", FIELDS[i], NULL);
      gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), g_intern_string (action), "s",
                                       field_action);
    }
}

static void
saccade_learn_page_init (SaccadeLearnPage *self)
{
  GtkWidget *scrolled = gtk_scrolled_window_new ();
  GtkWidget *clamp = adw_clamp_new ();
  GtkBox *column = GTK_BOX (gtk_box_new (GTK_ORIENTATION_VERTICAL, 24));
  int i = 0;

  saccade_page_set_page_id (SACCADE_PAGE (self), "learn");
  saccade_page_set_title (SACCADE_PAGE (self), _("Learn"));
  saccade_page_set_icon_name (SACCADE_PAGE (self), "accessories-dictionary-symbolic");
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_widget_set_vexpand (scrolled, TRUE);
  adw_clamp_set_maximum_size (ADW_CLAMP (clamp), COLUMN_WIDTH);
  gtk_widget_set_margin_top (GTK_WIDGET (column), 24);
  gtk_widget_set_margin_bottom (GTK_WIDGET (column), 24);
  gtk_widget_set_margin_start (GTK_WIDGET (column), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (column), 12);
  adw_clamp_set_child (ADW_CLAMP (clamp), GTK_WIDGET (column));
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), clamp);
  gtk_widget_set_parent (scrolled, GTK_WIDGET (self));
  self->scrolled = GTK_SCROLLED_WINDOW (scrolled);

  build_example (self, column);
  learn_build_sqrt_dk (self, column);
  learn_build_heads (self, column);
  learn_build_kv (self, column);
  learn_build_flash (self, column);
  self->neuron = SACCADE_NEURON_VIEW (saccade_neuron_view_new ());
  gtk_box_append (column, GTK_WIDGET (self->neuron));
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (column)); c != NULL && i < 5;
       c = gtk_widget_get_next_sibling (c))
    self->sections[i++] = c;
  example_chosen (self);
  learn_update_sqrt_dk (self);
  learn_update_heads (self);
  learn_update_kv (self);
  learn_update_flash (self);
}
