/* saccade-faith-file-window.c — faithfulness over a prompt set (header): the options row,
 * the job, the table, the readings, the distributions figure and the exports. The numbers
 * and the readings are the engine's, the rows and the CSV app/core/saccade-faith-table.h's:
 * this file lays them out.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-faith-file-window.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-export.h"
#include "app/core/saccade-faith-table.h"
#include "app/window/pages/saccade-page.h"
#include "app/window/pages/saccade-table-column.h"
#include "app/window/saccade-file-chooser.h"
#include "app/window/studies/saccade-study-jobs.h"
#include "ui/figures/saccade-figure.h"

/* The importance choices, in the drop-down's order (contrastive metrics need a contrast
 * token, which a prompt set of different sentences has no one of). */
static const ScFaithMetric METRICS[] = {
  SC_FAITH_METRIC_TV, SC_FAITH_METRIC_JSD, SC_FAITH_METRIC_ABS_DELTA_LOGP,
};

struct _SaccadeFaithFileWindow
{
  AdwWindow parent_instance;

  /* Widgets (children of the window) */
  AdwWindowTitle *title;
  GtkLabel *file_label;
  GtkDropDown *metric_dropdown;
  GtkDropDown *kind_dropdown;
  GtkCheckButton *mixing_check;
  GtkCheckButton *first_check;
  GtkLabel *status_label;
  GtkProgressBar *progress_bar;
  GtkWidget *cancel_button;
  GtkWidget *result_box;
  GtkLabel *set_label;
  GtkGrid *grid;
  GtkLabel *note_label;
  GtkLabel *reading_label;
  GtkDrawingArea *area;

  /* Owned */
  SaccadeStudyJobs *jobs;
  SaccadeLoadedModel *model;    /* the next study's, or NULL */
  char *db_path;                /* the capture database, or NULL */
  char *file_path;              /* the sentences chosen, or NULL */
  SaccadeFaithFile *result;     /* shown, or NULL */
  ScFaithParams result_params;  /* what it was asked with */
  char *result_file;            /* its sentence file */
  char *model_name;             /* its model */
};

G_DEFINE_FINAL_TYPE (SaccadeFaithFileWindow, saccade_faith_file_window, ADW_TYPE_WINDOW)

static void
update_actions (SaccadeFaithFileWindow *self)
{
  const gboolean running = saccade_study_jobs_get_running (self->jobs);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "faith-file.run",
                                 !running && self->file_path != NULL && self->model != NULL
                                   && self->db_path != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "faith-file.cancel", running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "faith-file.choose", !running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "faith-file.export-csv",
                                 self->result != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "faith-file.export-figure",
                                 self->result != NULL);
}

/* What the window waits for before Run can be pressed, on the status line. */
static void
say_ready (SaccadeFaithFileWindow *self)
{
  if (saccade_study_jobs_get_running (self->jobs))
    return;
  if (self->model == NULL)
    saccade_study_jobs_set_status (self->jobs, _("Load a model in the main window first"));
  else if (self->db_path == NULL)
    saccade_study_jobs_set_status (self->jobs, _("Open a capture database first"));
  else if (self->file_path == NULL)
    saccade_study_jobs_set_status (self->jobs,
                                   _("Choose a text file of sentences, one per line"));
  else if (self->result == NULL)
    saccade_study_jobs_set_status (self->jobs, _("Press Run to study every sentence"));
}

void
saccade_faith_file_window_set_model (SaccadeFaithFileWindow *self, SaccadeLoadedModel *model,
                                     const char *db_path)
{
  g_return_if_fail (SACCADE_IS_FAITH_FILE_WINDOW (self));

  g_set_object (&self->model, model);
  g_free (self->db_path);
  self->db_path = g_strdup (db_path);
  adw_window_title_set_subtitle (self->title,
                                 model != NULL ? saccade_loaded_model_get_name (model) : "");
  update_actions (self);
  say_ready (self);
}

gboolean
saccade_faith_file_window_is_busy (SaccadeFaithFileWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_FAITH_FILE_WINDOW (self), FALSE);
  return saccade_study_jobs_get_running (self->jobs);
}

/* ------------------------------------------------------------------------------------ */
/* The table, the readings and the figure                                                */

static void
format_ci (char *buf, gsize size, const ScStatsInterval *ci)
{
  if (isnan (ci->lo) || isnan (ci->hi))
    g_strlcpy (buf, "—", size);
  else
    g_snprintf (buf, size, "[%+.2f, %+.2f]", ci->lo, ci->hi);
}

/* @v with @digits decimals, signed or not, as a percentage (× 100, " %") or not; "—" for
 * NaN. */
static void
format_value (char *buf, gsize size, double v, gboolean sign, int digits, gboolean percent)
{
  if (isnan (v))
    g_strlcpy (buf, "—", size);
  else
    g_snprintf (buf, size, sign ? "%+.*f%s" : "%.*f%s", digits, percent ? 100 * v : v,
                percent ? " %" : "");
}

/* One column per number the command line prints for a row (its Table 2 and its
 * intervals' table), in the same rounding. */
#define N_COLUMNS 10

static void
fill_table (SaccadeFaithFileWindow *self)
{
  const ScFaithFileSummary *s = self->result->summary;
  const char *headings[N_COLUMNS] = {
    /* Translators: the prompt-set table's columns. */
    _("Source"), _("τ mean ± std"),
    /* xgettext:no-c-format */
    _("τ 95 % CI"),
    _("ρ mean"),
    /* xgettext:no-c-format */
    _("ρ 95 % CI"),
    _("p < 0.05"), _("BH q < 0.05"), _("Top-k"), _("Undefined"),
    s->exclude_first ? _("τ with first") : _("τ without first"),
  };
  GtkWidget *child;
  int r = 1;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->grid))) != NULL)
    gtk_grid_remove (self->grid, child);
  for (int c = 0; c < N_COLUMNS; c++)
    saccade_table_grid_cell (self->grid, c, 0, headings[c], TRUE);
  for (int k = 0; k < SACCADE_FAITH_TABLE_ROWS; k++)
    {
      SaccadeFaithTableRow row;
      const ScFaithSummary *m;
      char buf[N_COLUMNS][48];

      if (!saccade_faith_table_row (s, k, &row))
        continue;
      m = row.m;
      g_strlcpy (buf[0], row.name, sizeof buf[0]);
      if (isnan (m->tau_mean))
        g_strlcpy (buf[1], "—", sizeof buf[1]);
      else if (isnan (m->tau_std))
        g_snprintf (buf[1], sizeof buf[1], "%+.3f", m->tau_mean);
      else
        g_snprintf (buf[1], sizeof buf[1], "%+.3f ± %.3f", m->tau_mean, m->tau_std);
      format_ci (buf[2], sizeof buf[2], &m->tau_ci);
      format_value (buf[3], sizeof buf[3], m->rho_mean, TRUE, 3, FALSE);
      format_ci (buf[4], sizeof buf[4], &m->rho_ci);
      format_value (buf[5], sizeof buf[5], m->share_significant, FALSE, 1, TRUE);
      format_value (buf[6], sizeof buf[6], m->share_significant_bh, FALSE, 1, TRUE);
      format_value (buf[7], sizeof buf[7], m->topk_mean, FALSE, 3, FALSE);
      g_snprintf (buf[8], sizeof buf[8], "%d", m->n_undefined);
      format_value (buf[9], sizeof buf[9], m->tau_mean_other, TRUE, 3, FALSE);
      for (int c = 0; c < N_COLUMNS; c++)
        saccade_table_grid_cell (self->grid, c, r, buf[c], c == 0);
      r++;
    }
}

static void
fill_result (SaccadeFaithFileWindow *self)
{
  const SaccadeFaithFile *f = self->result;
  const ScFaithFileSummary *s = f->summary;
  const ScFaithParams *p = &self->result_params;
  g_autofree char *base = g_path_get_basename (self->result_file);
  g_autofree char *set = NULL, *note = NULL;
  g_autoptr (GString) reading = g_string_new (NULL);

  /* Translators: the prompt-set study's line over its table: sentences, the file, the
   * erasure, the importance, the token set, sentences read back and computed, the
   * database. */
  set = g_strdup_printf (_("%d sentences of %s · %s, %s · %s · %d read back, "
                           "%d computed now · stored in %s"),
                         s->n_sentences, base, saccade_faith_reference_name (p->kind),
                         sc_faith_metric_id (p->metric),
                         s->exclude_first ? _("without the first token")
                                          : _("all tokens, the first included"),
                         f->n_reused, s->n_sentences - f->n_reused, f->db_path);
  gtk_label_set_text (self->set_label, set);
  fill_table (self);
  /* Translators: under the prompt-set table: how its intervals and shares are made. */
  note = g_strdup_printf (_("Intervals: 95 %% percentile bootstrap of the mean over the "
                            "sentences (B = %d, seed %#x; none under %d sentences). Shares: "
                            "sentences whose τ has p < 0.05, uncorrected (Jain & Wallace's "
                            "column) and after the Benjamini–Hochberg correction over each "
                            "source's sentences. The best head is the highest mean τ of %d "
                            "heads: its interval does not account for that choice."),
                          s->n_boot, s->seed, SC_FAITH_MIN_CI_ITEMS, s->m_heads);
  gtk_label_set_text (self->note_label, note);
  for (int k = 0; k < SC_FAITH_N_SOURCES; k++)
    {
      SaccadeFaithTableRow row;
      char buf[SC_FAITH_READING_MAX];

      if (!saccade_faith_table_row (s, k, &row))
        continue;
      saccade_faith_table_reading (s, &row, buf, sizeof buf);
      g_string_append_printf (reading, "%s• %s", reading->len > 0 ? "\n" : "", buf);
    }
  gtk_label_set_text (self->reading_label, reading->str);
  gtk_widget_set_visible (self->result_box, TRUE);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static char *
figure_title (SaccadeFaithFileWindow *self)
{
  g_autofree char *base = g_path_get_basename (self->result_file);

  /* Translators: the prompt-set figure's title: the sentence file, the model. */
  return g_strdup_printf (_("Is attention faithful? %s · %s"), base, self->model_name);
}

/* Calls @draw with the figure (rows and points live for the call). */
static gboolean
with_figure (SaccadeFaithFileWindow *self,
             gboolean (*use) (const SaccadeFaithfulnessFigure *fig, gpointer data), gpointer data)
{
  g_autofree char *title = figure_title (self);
  g_autofree double *taus = g_new (double, (gsize) SACCADE_FAITH_TABLE_ROWS
                                             * MAX (self->result->sentences->len, 1));
  SaccadeFaithRow rows[SACCADE_FAITH_TABLE_ROWS];
  g_auto (GStrv) names = NULL;
  SaccadeFaithfulnessFigure fig;

  saccade_faith_table_figure (self->result, title, rows, &names, taus, &fig);
  return use (&fig, data);
}

typedef struct {
  cairo_t *cr;
  const SaccadeFigureStyle *style;
  int width, height;
} DrawData;

static gboolean
draw_use (const SaccadeFaithfulnessFigure *fig, gpointer data)
{
  DrawData *d = data;

  saccade_figure_faithfulness_draw_full (d->cr, fig, d->style, d->width, d->height, NULL);
  return TRUE;
}

static void
draw_figure (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeFaithFileWindow *self = data;
  SaccadeFigureStyle style;
  DrawData d = { cr, &style, width, height };

  if (self->result == NULL)
    return;
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  with_figure (self, draw_use, &d);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

static char *
progress_text (gpointer owner, double fraction)
{
  /* Translators: the prompt-set study's progress, percent. */
  return g_strdup_printf (_("Faithfulness over the prompt set… %.0f %%"),
                          100.0 * MAX (fraction, 0.0));
}

static void
chosen_params (SaccadeFaithFileWindow *self, ScFaithParams *p)
{
  const guint metric = gtk_drop_down_get_selected (self->metric_dropdown);

  /* `saccade faithfulness --file`'s: top-k 3, the clean top-1, no gradients, no contrast */
  *p = (ScFaithParams) {
    .metric = METRICS[metric < G_N_ELEMENTS (METRICS) ? metric : 0],
    .kind = (ScFaithErase) MIN (gtk_drop_down_get_selected (self->kind_dropdown),
                                SC_FAITH_ERASE_TRACE),
    .top_k = 0, .target = -1, .gradients = false, .ig_steps = 0,
    .exclude_first = gtk_check_button_get_active (self->first_check),
    .mixing = gtk_check_button_get_active (self->mixing_check),
    .contrastive = false, .contrast = -1,
  };
}

static void
study_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  SaccadeFaithFileWindow *self = SACCADE_FAITH_FILE_WINDOW (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeFaithFile) f = saccade_faith_file_finish (res, &error);
  g_autofree char *status = NULL;

  if (!saccade_study_jobs_finish_job (self->jobs, res))
    return;
  if (f == NULL)
    {
      saccade_study_jobs_set_status (self->jobs,
                                     g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                                       ? _("Cancelled: the sentences done so far are stored "
                                           "and will be read back")
                                       : error->message);
      update_actions (self);
      return;
    }
  g_clear_pointer (&self->result, saccade_faith_file_free);
  self->result = g_steal_pointer (&f);
  /* Translators: the prompt-set study is done: sentences, read back, seconds. */
  status = g_strdup_printf (_("%d sentences · %d read back · done in %.1f s"),
                            (int) self->result->sentences->len, self->result->n_reused,
                            self->result->total_s);
  saccade_study_jobs_set_status (self->jobs, status);
  fill_result (self);
  update_actions (self);
}

static void
run_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeFaithFileWindow *self = SACCADE_FAITH_FILE_WINDOW (widget);
  g_autofree char *folder = NULL, *dir = NULL;
  GCancellable *job;

  if (self->file_path == NULL || self->model == NULL || self->db_path == NULL
      || saccade_study_jobs_get_running (self->jobs))
    return;
  chosen_params (self, &self->result_params);
  g_free (self->result_file);
  self->result_file = g_strdup (self->file_path);
  g_free (self->model_name);
  self->model_name = g_strdup (saccade_loaded_model_get_name (self->model));
  dir = g_path_get_dirname (self->db_path);
  folder = g_build_filename (dir, "prompt-sets", NULL);
  job = saccade_study_jobs_start (self->jobs, progress_text, self);
  update_actions (self);
  saccade_faith_file_async (self, self->model, folder, self->file_path, &self->result_params,
                            job, saccade_study_jobs_progress, self->jobs, study_done, NULL);
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_study_jobs_cancel (SACCADE_FAITH_FILE_WINDOW (widget)->jobs);
}

/* ------------------------------------------------------------------------------------ */
/* Files                                                                                 */

/* A modal chooser over the window, opened by the sentences' file or the last result. */
static void
choose (SaccadeFaithFileWindow *self, GtkFileChooserAction action, const char *title,
        const char *accept, const char *filter_name, const char *const *patterns,
        const char *name, SaccadeFileChosenFn chosen)
{
  GtkFileChooser *chooser = saccade_file_chooser_new (GTK_WINDOW (self), action, title, accept,
                                                      filter_name, patterns, chosen, self, NULL);

  saccade_file_chooser_set_folder_of (chooser, self->result_file != NULL ? self->result_file
                                                                         : self->file_path);
  if (name != NULL)
    gtk_file_chooser_set_current_name (chooser, name);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
sentences_chosen (gpointer owner, const char *path, gpointer data)
{
  SaccadeFaithFileWindow *self = owner;
  g_autofree char *base = g_path_get_basename (path);

  g_free (self->file_path);
  self->file_path = g_strdup (path);
  gtk_label_set_text (self->file_label, base);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->file_label), path);
  update_actions (self);
  say_ready (self);
}

static void
choose_action (GtkWidget *widget, const char *name, GVariant *param)
{
  const char *patterns[] = { "*.txt", "*.text", NULL };

  choose (SACCADE_FAITH_FILE_WINDOW (widget), GTK_FILE_CHOOSER_ACTION_OPEN,
          _("Choose Sentences"), _("_Open"), _("Text Files, One Sentence a Line"), patterns,
          NULL, sentences_chosen);
}

static void
exported (SaccadeFaithFileWindow *self, const char *path, gboolean ok, GError *error)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *msg = ok ? g_strdup_printf (_("Saved %s"), base)
                            : g_strdup_printf (_("Could not export: %s"), error->message);

  saccade_study_jobs_set_status (self->jobs, msg);
}

static void
csv_chosen (gpointer owner, const char *path, gpointer data)
{
  SaccadeFaithFileWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) csv = NULL;

  if (self->result == NULL)
    return;
  csv = saccade_faith_table_csv (self->result);
  exported (self, path, saccade_export_write (csv, path, &error), error);
}

typedef struct {
  const char *path;
  GError **error;
} ExportData;

static gboolean
export_use (const SaccadeFaithfulnessFigure *fig, gpointer data)
{
  ExportData *d = data;

  return saccade_figure_export_faithfulness (fig, d->path, NULL, d->error);
}

static void
figure_chosen (gpointer owner, const char *path, gpointer data)
{
  SaccadeFaithFileWindow *self = owner;
  g_autoptr (GError) error = NULL;
  ExportData d = { path, &error };

  if (self->result == NULL)
    return;
  exported (self, path, with_figure (self, export_use, &d), error);
}

static char *
export_name (SaccadeFaithFileWindow *self, const char *ext)
{
  g_autofree char *base = g_path_get_basename (self->result_file);
  char *dot = strrchr (base, '.');

  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_strconcat (base, "-faithfulness", ext, NULL);
}

static void
export_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeFaithFileWindow *self = SACCADE_FAITH_FILE_WINDOW (widget);
  const gboolean csv = g_str_equal (name, "faith-file.export-csv");
  const char *csv_patterns[] = { "*.csv", NULL };
  const char *figure_patterns[] = { "*.png", "*.svg", "*.pdf", NULL };
  g_autofree char *file = NULL;

  if (self->result == NULL)
    return;
  file = export_name (self, csv ? ".csv" : ".png");
  if (csv)
    choose (self, GTK_FILE_CHOOSER_ACTION_SAVE, _("Export Table"), _("_Export"), _("CSV"),
            csv_patterns, file, csv_chosen);
  else
    /* Translators: the typed extension (.png, .svg or .pdf) picks the format. */
    choose (self, GTK_FILE_CHOOSER_ACTION_SAVE, _("Export Distributions"), _("_Export"),
            _("PNG, SVG or PDF"), figure_patterns, file, figure_chosen);
}

/* ------------------------------------------------------------------------------------ */
/* Options                                                                               */

static void
option_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeFaithFileWindow *self = SACCADE_FAITH_FILE_WINDOW (widget);
  const char *value = g_variant_get_string (param, NULL);

  if (g_str_equal (name, "faith-file.metric"))
    {
      for (guint i = 0; i < G_N_ELEMENTS (METRICS); i++)
        if (g_str_equal (value, sc_faith_metric_id (METRICS[i])))
          gtk_drop_down_set_selected (self->metric_dropdown, i);
    }
  else if (g_str_equal (name, "faith-file.kind"))
    gtk_drop_down_set_selected (self->kind_dropdown, g_str_equal (value, "drop"));
  else
    gtk_check_button_set_active (g_str_equal (name, "faith-file.mixing") ? self->mixing_check
                                                                         : self->first_check,
                                 g_str_equal (value, "yes"));
}

/* ------------------------------------------------------------------------------------ */
/* GObject                                                                               */

static void
saccade_faith_file_window_dispose (GObject *object)
{
  SaccadeFaithFileWindow *self = SACCADE_FAITH_FILE_WINDOW (object);

  if (self->jobs != NULL)
    saccade_study_jobs_stop (self->jobs);
  g_clear_object (&self->jobs);
  g_clear_object (&self->model);
  G_OBJECT_CLASS (saccade_faith_file_window_parent_class)->dispose (object);
}

static void
saccade_faith_file_window_finalize (GObject *object)
{
  SaccadeFaithFileWindow *self = SACCADE_FAITH_FILE_WINDOW (object);

  g_free (self->db_path);
  g_free (self->file_path);
  g_free (self->result_file);
  g_free (self->model_name);
  saccade_faith_file_free (self->result);
  G_OBJECT_CLASS (saccade_faith_file_window_parent_class)->finalize (object);
}

static void
saccade_faith_file_window_class_init (SaccadeFaithFileWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_faith_file_window_dispose;
  G_OBJECT_CLASS (klass)->finalize = saccade_faith_file_window_finalize;
  gtk_widget_class_install_action (widget_class, "faith-file.choose", NULL, choose_action);
  gtk_widget_class_install_action (widget_class, "faith-file.run", NULL, run_action);
  gtk_widget_class_install_action (widget_class, "faith-file.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "faith-file.export-csv", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "faith-file.export-figure", NULL,
                                   export_action);
  for (const char *const *a = (const char *const[]) { "faith-file.metric", "faith-file.kind",
                                                      "faith-file.mixing",
                                                      "faith-file.exclude-first", NULL };
       *a != NULL; a++)
    gtk_widget_class_install_action (widget_class, *a, "s", option_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return, GDK_CONTROL_MASK,
                                       "faith-file.run", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK,
                                       "window.close", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static GtkWidget *
labelled (const char *mnemonic, GtkWidget *widget)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *label = gtk_label_new_with_mnemonic (mnemonic);

  gtk_label_set_mnemonic_widget (GTK_LABEL (label), widget);
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), widget);
  return box;
}

static GtkLabel *
text_label (const char *name, gboolean wrap)
{
  GtkLabel *l = GTK_LABEL (gtk_label_new (NULL));

  gtk_widget_set_name (GTK_WIDGET (l), name);
  gtk_label_set_xalign (l, 0);
  gtk_label_set_wrap (l, wrap);
  gtk_label_set_selectable (l, TRUE);
  return l;
}

/* The options row: the file, the study's options, Run. */
static GtkWidget *
options_row (SaccadeFaithFileWindow *self)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *button = gtk_button_new_with_mnemonic (_("_Sentences…"));
  GtkWidget *run = gtk_button_new_with_mnemonic (_("_Run"));
  const char *metrics[] = { _("Total variation"), _("Jensen–Shannon"), _("|Δ log p|"), NULL };
  const char *kinds[] = { _("Leave-one-out, masked"), _("Leave-one-out, dropped"),
                          _("Causal tracing"), NULL };

  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "faith-file.choose");
  gtk_widget_set_tooltip_text (button, _("A text file of sentences, one per line; blank lines "
                                         "and lines starting with # are skipped"));
  gtk_box_append (GTK_BOX (row), button);
  self->file_label = text_label ("faith-file-file", FALSE);
  gtk_label_set_text (self->file_label, _("No file chosen"));
  gtk_label_set_ellipsize (self->file_label, PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_max_width_chars (self->file_label, 24);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->file_label));
  self->metric_dropdown = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (metrics));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->metric_dropdown),
                               _("How leave-one-out measures a token's importance: the change "
                                 "of the next-token distribution, or of the target's log "
                                 "probability"));
  gtk_box_append (GTK_BOX (row), labelled (_("_Importance"), GTK_WIDGET (self->metric_dropdown)));
  self->kind_dropdown = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (kinds));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->kind_dropdown),
                               _("What attention is ranked against: leaving a token out "
                                 "(masked out of every attention row, or dropped from the "
                                 "input), or causal tracing (every other token's embedding "
                                 "noised, the token's own state restored layer by layer: "
                                 "three noise samples, every layer of every token, tens of "
                                 "times the time of leave-one-out)"));
  gtk_box_append (GTK_BOX (row), labelled (_("_Reference"), GTK_WIDGET (self->kind_dropdown)));
  self->mixing_check = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic (_("Context _mixing")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->mixing_check),
                               _("Also norm-based attention, value zeroing and ALTI, of the "
                                 "last layer and rolled out (value zeroing costs about one "
                                 "pass per token)"));
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->mixing_check));
  self->first_check = GTK_CHECK_BUTTON (
    gtk_check_button_new_with_mnemonic (_("_Without the first token")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->first_check),
                               _("Rank the tokens after the first only: the first token is "
                                 "often an attention sink. Both sets are stored, so switching "
                                 "reads the study back"));
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->first_check));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "faith-file.run");
  gtk_widget_add_css_class (run, "suggested-action");
  gtk_widget_set_halign (run, GTK_ALIGN_END);
  gtk_widget_set_hexpand (run, TRUE);
  gtk_box_append (GTK_BOX (row), run);
  return row;
}

static void
saccade_faith_file_window_init (SaccadeFaithFileWindow *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *export = gtk_menu_button_new ();
  GtkWidget *body = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  GtkWidget *status_row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *table_title = gtk_label_new (_("Attention against leave-one-out over the "
                                            "sentences (Jain & Wallace, Table 2)"));
  GtkWidget *reading_title = gtk_label_new (_("Reading"));
  g_autoptr (GMenu) menu = g_menu_new ();

  gtk_window_set_title (GTK_WINDOW (self), _("Faithfulness over a Prompt Set"));
  gtk_window_set_default_size (GTK_WINDOW (self), 1100, 820);
  self->title = ADW_WINDOW_TITLE (adw_window_title_new (_("Faithfulness over a Prompt Set"), ""));
  adw_header_bar_set_title_widget (ADW_HEADER_BAR (header), GTK_WIDGET (self->title));
  g_menu_append (menu, _("Export _Table as CSV…"), "faith-file.export-csv");
  g_menu_append (menu, _("Export _Distributions…"), "faith-file.export-figure");
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (export), "document-save-symbolic");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (export), G_MENU_MODEL (menu));
  gtk_widget_set_tooltip_text (export, _("Export"));
  adw_header_bar_pack_end (ADW_HEADER_BAR (header), export);
  gtk_box_append (GTK_BOX (box), header);

  gtk_widget_set_margin_start (body, 12);
  gtk_widget_set_margin_end (body, 12);
  gtk_widget_set_margin_top (body, 8);
  gtk_widget_set_margin_bottom (body, 12);
  gtk_box_append (GTK_BOX (body), options_row (self));
  self->status_label = text_label ("faith-file-status", FALSE);
  gtk_label_set_ellipsize (self->status_label, PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (GTK_WIDGET (self->status_label), TRUE);
  gtk_box_append (GTK_BOX (status_row), GTK_WIDGET (self->status_label));
  self->progress_bar = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_widget_set_name (GTK_WIDGET (self->progress_bar), "faith-file-progress");
  gtk_widget_set_valign (GTK_WIDGET (self->progress_bar), GTK_ALIGN_CENTER);
  gtk_widget_set_size_request (GTK_WIDGET (self->progress_bar), 160, -1);
  gtk_box_append (GTK_BOX (status_row), GTK_WIDGET (self->progress_bar));
  self->cancel_button = gtk_button_new_from_icon_name ("process-stop-symbolic");
  gtk_widget_set_tooltip_text (self->cancel_button, _("Cancel"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->cancel_button), "faith-file.cancel");
  gtk_box_append (GTK_BOX (status_row), self->cancel_button);
  gtk_box_append (GTK_BOX (body), status_row);

  self->result_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_visible (self->result_box, FALSE);
  self->set_label = text_label ("faith-file-set", TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->set_label), "dim-label");
  gtk_label_set_xalign (GTK_LABEL (table_title), 0);
  gtk_widget_add_css_class (table_title, "heading");
  gtk_box_append (GTK_BOX (self->result_box), table_title);
  gtk_box_append (GTK_BOX (self->result_box), GTK_WIDGET (self->set_label));
  self->grid = GTK_GRID (gtk_grid_new ());
  gtk_widget_set_name (GTK_WIDGET (self->grid), "faith-file-table");
  gtk_grid_set_column_spacing (self->grid, 18);
  gtk_grid_set_row_spacing (self->grid, 2);
  gtk_box_append (GTK_BOX (self->result_box), GTK_WIDGET (self->grid));
  self->note_label = text_label ("faith-file-note", TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->note_label), "dim-label");
  gtk_box_append (GTK_BOX (self->result_box), GTK_WIDGET (self->note_label));
  gtk_label_set_xalign (GTK_LABEL (reading_title), 0);
  gtk_widget_add_css_class (reading_title, "heading");
  /* the distributions under the table they draw, then the readings */
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_size_request (GTK_WIDGET (self->area), -1, 440);
  gtk_drawing_area_set_draw_func (self->area, draw_figure, self, NULL);
  gtk_box_append (GTK_BOX (self->result_box), GTK_WIDGET (self->area));
  gtk_box_append (GTK_BOX (self->result_box), reading_title);
  self->reading_label = text_label ("faith-file-reading", TRUE);
  gtk_box_append (GTK_BOX (self->result_box), GTK_WIDGET (self->reading_label));
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), self->result_box);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_widget_set_vexpand (scroller, TRUE);
  gtk_box_append (GTK_BOX (body), scroller);
  gtk_box_append (GTK_BOX (box), body);
  adw_window_set_content (ADW_WINDOW (self), box);

  self->jobs = saccade_study_jobs_new (self->status_label, self->progress_bar,
                                       self->cancel_button);
  update_actions (self);
  say_ready (self);
}

SaccadeFaithFileWindow *
saccade_faith_file_window_new (GtkWindow *parent)
{
  return g_object_new (SACCADE_TYPE_FAITH_FILE_WINDOW, "transient-for", parent,
                       "destroy-with-parent", TRUE, NULL);
}
