/* saccade-compare-models.c — the Compare page's "Two models" view (see
 * saccade-compare-models.h).
 *
 * The worker reads the run's text from the store (the raw bytes, as captured: the sidebar
 * holds a readable copy only), then calls saccade_model_compare_compute() on model A (the
 * window's model file) and model B, as a saccade job (app/core/saccade-job.h: progress
 * coalesced onto the main loop, none once cancelled). The figure is redrawn from the result on
 * every colour change without recomputing.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-compare-models.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-model-compare.h"
#include "app/core/saccade-paths.h"
#include "app/window/saccade-file-chooser.h"
#include "ui/figures/saccade-figure-types.h"

/* The colourings offered: by type, by each head metric, by the induction score, by the
 * stored head sweep's TV (NaN, hatched, for a model without one). */
#define COLOUR_TYPE 0
#define COLOUR_PREFIX (1 + SC_HEAD_N_METRICS)
#define COLOUR_ABLATION (2 + SC_HEAD_N_METRICS)
#define N_COLOURS (3 + SC_HEAD_N_METRICS)

struct _SaccadeCompareModels {
  SaccadePage *page;
  void (*changed) (SaccadePage *page);
  GtkWidget *box;
  GtkLabel *b_label;
  GtkDropDown *colour_dd;
  GtkProgressBar *progress;
  GtkDrawingArea *area;
  char *path_b;
  gint64 run_id;              /* the text's run; 0: none */
  GCancellable *cancel;       /* non-NULL while a comparison runs */
  char *error;                /* the last failure's message, or NULL */
  SaccadeModelCompare *result;
  gint64 result_run;          /* the run @result is of */
  int colour;                 /* COLOUR_TYPE, 1 + ScHeadMetric, COLOUR_PREFIX */
  int *category[2];           /* per head, the type index, for the figure */
  double *values[2];          /* per head, the chosen statistic */
};

/* ------------------------------------------------------------------------------------ */
/* The worker                                                                            */

/* What the worker compares; the job owns it. */
typedef struct {
  char *path_a, *path_b, *db_path;
  char *backend;                /* the loaded model's backend, used for both models */
  gint64 run_id;
} Job;

static void
job_free (Job *j)
{
  g_free (j->path_a);
  g_free (j->path_b);
  g_free (j->backend);
  g_free (j->db_path);
  g_free (j);
}

static gpointer
worker (SaccadeJob *job, gpointer data, GCancellable *cancellable, GError **error)
{
  Job *j = data;
  ScStoreRunInfo info = { 0 };
  ScStore *store;
  ScError err = { 0 };
  SaccadeModelCompare *c;

  if ((store = saccade_store_open (j->db_path, FALSE, &err)) == NULL
      || sc_store_get_run (store, j->run_id, &info, &err) != SC_OK)
    {
      sc_store_close (store);
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  sc_store_close (store);
  c = saccade_model_compare_compute (j->path_a, j->path_b, info.text, (gssize) info.text_len,
                                     j->db_path, NULL, 0, j->backend, saccade_job_report, job,
                                     cancellable, error);
  sc_store_run_info_clear (&info);
  return c;
}

/* On the main loop, coalesced; never once the job is cancelled (then @v may be gone). */
static void
compare_progress (gpointer user_data, double fraction)
{
  SaccadeCompareModels *v = user_data;

  gtk_progress_bar_set_fraction (v->progress, fraction);
}

/* ------------------------------------------------------------------------------------ */
/* The figure                                                                            */

static double
colour_value (const SaccadeModelSide *s, int colour, int i)
{
  if (colour == COLOUR_PREFIX)
    return s->induction->result->heads[i].prefix_matching;
  if (colour == COLOUR_ABLATION)
    return s->ablation != NULL && s->ablation->heads != NULL
             && s->ablation->heads->n_layers * s->ablation->heads->n_heads
                  == s->n_layers * s->n_heads
           ? s->ablation->heads->heads[i].next.tv : NAN;
  return sc_head_stats_get (&s->stats[i], (ScHeadMetric) (colour - 1));
}

static const char *
colour_name (int colour)
{
  if (colour == COLOUR_TYPE)
    return _("Head type");
  if (colour == COLOUR_PREFIX)
    return _("Prefix matching (induction)");
  if (colour == COLOUR_ABLATION)
    return _("Ablation TV (stored head sweep)");
  return saccade_metric_name ((SaccadeMetric) (colour - 1));
}

/* Fills the per-head arrays the figure reads from the result and the colouring. */
static void
refresh_values (SaccadeCompareModels *v)
{
  for (int s = 0; s < 2; s++)
    {
      g_clear_pointer (&v->category[s], g_free);
      g_clear_pointer (&v->values[s], g_free);
      if (v->result == NULL)
        continue;
      const SaccadeModelSide *side = &v->result->side[s];
      const int nh = side->n_layers * side->n_heads;
      v->category[s] = g_new (int, nh);
      v->values[s] = g_new (double, nh);
      for (int i = 0; i < nh; i++)
        {
          v->category[s][i] = (int) side->types[i];
          v->values[s][i] = v->colour == COLOUR_TYPE ? NAN : colour_value (side, v->colour, i);
        }
    }
}

/* The figure of the result (borrowing @v's arrays and @names, @panels, @title). */
static gboolean
make_figure (SaccadeCompareModels *v, SaccadeTypesFigure *f, SaccadeTypesPanel panels[2],
             char *names[2], const char *type_names[SC_HEAD_N_TYPES], const char *title)
{
  if (v->result == NULL)
    return FALSE;
  for (int k = 0; k < SC_HEAD_N_TYPES; k++)
    type_names[k] = saccade_head_type_name ((ScHeadType) k);
  for (int s = 0; s < 2; s++)
    {
      const SaccadeModelSide *side = &v->result->side[s];
      names[s] = g_strdup_printf ("%c: %s", 'A' + s, side->name);
      panels[s] = (SaccadeTypesPanel) {
        .name = names[s], .n_layers = side->n_layers, .n_heads = side->n_heads,
        .category = v->colour == COLOUR_TYPE ? v->category[s] : NULL,
        .values = v->values[s], .counts = side->counts,
      };
    }
  *f = (SaccadeTypesFigure) {
    .n_panels = 2, .panels = panels, .n_categories = SC_HEAD_N_TYPES,
    .category_names = type_names, .value_name = colour_name (v->colour),
    .colormap = SACCADE_COLORMAP_VIRIDIS, .title = title,
  };
  return TRUE;
}

static void
draw_area (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  SaccadeCompareModels *v = user_data;
  SaccadeFigureStyle style;
  SaccadeTypesFigure f;
  SaccadeTypesPanel panels[2];
  char *names[2] = { NULL, NULL };
  const char *type_names[SC_HEAD_N_TYPES];

  if (!make_figure (v, &f, panels, names, type_names, NULL))
    {
      /* A failure in full where the figure would be: the status line ellipsizes it. */
      if (v->error != NULL)
        {
          g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (area),
                                                                           v->error);
          int w, h;
          const int margin = 24; /* px each side */

          saccade_page_figure_style (GTK_WIDGET (area), &style);
          pango_layout_set_width (layout, MAX (1, width - 2 * margin) * PANGO_SCALE);
          pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
          pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
          pango_layout_get_pixel_size (layout, &w, &h);
          cairo_set_source_rgba (cr, style.fg[0], style.fg[1], style.fg[2], style.fg[3]);
          cairo_move_to (cr, margin, (height - h) / 2.0);
          pango_cairo_show_layout (cr, layout);
        }
      return;
    }
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_types_draw_full (cr, &f, &style, width, height);
  for (int s = 0; s < 2; s++)
    g_free (names[s]);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

static void
set_result (SaccadeCompareModels *v, SaccadeModelCompare *c)
{
  g_clear_pointer (&v->result, saccade_model_compare_free);
  v->result = c;
  v->result_run = c != NULL ? v->run_id : 0;
  refresh_values (v);
  gtk_widget_queue_draw (GTK_WIDGET (v->area));
}

static void start (SaccadeCompareModels *v); /* the job's source tag */

static void
compare_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  SaccadeModelCompare *c = saccade_job_finish (res, start, &error);
  SaccadeCompareModels *v = user_data;

  /* A cancelled comparison is dropped, even one that finished first: the view moved on
   * (another text or model B), or went away and @v with it. */
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    {
      saccade_model_compare_free (c);
      return;
    }
  g_clear_object (&v->cancel);
  gtk_widget_set_visible (GTK_WIDGET (v->progress), FALSE);
  g_clear_pointer (&v->error, g_free);
  if (c == NULL)
    {
      v->error = g_strdup (error->message);
      g_message ("two models: %s", error->message);
    }
  else
    /* the numbers the CLI prints, for the log and the e2e test */
    g_message ("two models: A %s, B %s: induction %d/%d, previous-token %d/%d, first-token "
               "%d/%d, broad %d/%d, local %d/%d, other %d/%d; tokens %s",
               c->side[0].name, c->side[1].name,
               c->side[0].counts[0], c->side[1].counts[0], c->side[0].counts[1],
               c->side[1].counts[1], c->side[0].counts[2], c->side[1].counts[2],
               c->side[0].counts[3], c->side[1].counts[3], c->side[0].counts[4],
               c->side[1].counts[4], c->side[0].counts[5], c->side[1].counts[5],
               c->same_tokens ? "agree" : "differ");
  set_result (v, c);
  v->changed (v->page);
}

static void
start (SaccadeCompareModels *v)
{
  SaccadeLoadedModel *model = saccade_page_get_model (v->page);
  const char *db = saccade_page_get_db_path (v->page);
  Job *j;

  if (v->cancel != NULL)
    {
      g_cancellable_cancel (v->cancel);
      g_clear_object (&v->cancel);
    }
  g_clear_pointer (&v->error, g_free);
  if (model == NULL || v->run_id <= 0 || db == NULL || v->path_b == NULL)
    {
      v->changed (v->page);
      return;
    }
  v->cancel = g_cancellable_new ();
  j = g_new0 (Job, 1);
  j->path_a = g_strdup (saccade_loaded_model_get_path (model));
  j->path_b = g_strdup (v->path_b);
  j->backend = g_strdup (saccade_loaded_model_get_backend_id (model));
  j->db_path = g_strdup (db);
  j->run_id = v->run_id;
  gtk_progress_bar_set_fraction (v->progress, 0);
  gtk_widget_set_visible (GTK_WIDGET (v->progress), TRUE);
  /* The page is the source: the job keeps it alive; @v lives until it is cancelled. */
  saccade_job_run_async (v->page, v->cancel, start, "two models", worker, j,
                         (GDestroyNotify) job_free, (GDestroyNotify) saccade_model_compare_free,
                         compare_progress, v, compare_done, v);
  v->changed (v->page);
}

void
saccade_compare_models_set_b (SaccadeCompareModels *v, const char *path)
{
  g_autofree char *base = g_path_get_basename (path);

  g_free (v->path_b);
  v->path_b = g_strdup (path);
  /* Translators: the second model of the Compare page's "Two models" view. */
  g_autofree char *text = g_strdup_printf (_("Model B: %s"), base);
  gtk_label_set_text (v->b_label, text);
  start (v);
}

void
saccade_compare_models_set_run (SaccadeCompareModels *v, SaccadeRun *run)
{
  v->run_id = run != NULL ? run->id : 0;
  if (v->result != NULL && v->result_run != v->run_id)
    set_result (v, NULL);
  if (v->cancel != NULL)
    start (v); /* the running comparison was of another text */
}

gboolean
saccade_compare_models_set_colour (SaccadeCompareModels *v, const char *id)
{
  ScHeadMetric m;
  int colour;

  if (g_strcmp0 (id, "type") == 0)
    colour = COLOUR_TYPE;
  else if (g_strcmp0 (id, "prefix-matching") == 0)
    colour = COLOUR_PREFIX;
  else if (g_strcmp0 (id, "ablation-tv") == 0)
    colour = COLOUR_ABLATION;
  else if (sc_head_metric_from_id (id, &m))
    colour = 1 + (int) m;
  else
    return FALSE;
  gtk_drop_down_set_selected (v->colour_dd, (guint) colour); /* colour_selected() redraws */
  return TRUE;
}

static void
colour_selected (SaccadeCompareModels *v)
{
  v->colour = (int) gtk_drop_down_get_selected (v->colour_dd);
  if (v->colour < 0 || v->colour >= N_COLOURS)
    v->colour = COLOUR_TYPE;
  refresh_values (v);
  gtk_widget_queue_draw (GTK_WIDGET (v->area));
}

static void
b_chosen (gpointer owner, const char *path, gpointer data)
{
  saccade_compare_models_set_b (owner, path);
}

static void
choose_b (SaccadeCompareModels *v)
{
  static const char *const patterns[] = { "*.gguf", NULL };
  GtkRoot *root = gtk_widget_get_root (v->box);
  GtkFileChooser *chooser = saccade_file_chooser_new (
    GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, GTK_FILE_CHOOSER_ACTION_OPEN,
    _("Choose Model B"), _("_Open"), _("GGUF Models"), patterns, b_chosen, v, NULL);

  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
compare_clicked (SaccadeCompareModels *v)
{
  SaccadeLoadedModel *model = saccade_page_get_model (v->page);

  if (v->path_b == NULL && model != NULL)
    saccade_compare_models_set_b (v, saccade_loaded_model_get_path (model));
  else
    start (v);
}

/* ------------------------------------------------------------------------------------ */
/* What the page asks                                                                    */

char *
saccade_compare_models_dup_status (SaccadeCompareModels *v)
{
  const SaccadeModelCompare *c = v->result;

  if (v->cancel != NULL)
    return g_strdup (_("Comparing the two models (the induction detector runs unless it is "
                       "stored)…"));
  if (v->error != NULL)
    return g_strdup (v->error);
  if (saccade_page_get_model (v->page) == NULL)
    return g_strdup (_("Load a model first: it is model A"));
  if (c == NULL)
    return g_strdup (_("Choose model B (or press Compare for the loaded model twice) to see "
                       "both models' heads on the text of the run shown"));
  if (!c->same_tokens)
    /* Translators: the Two models view's status; %d are token counts. */
    return g_strdup_printf (_("The tokenizations differ (A %d tokens, B %d): heads are "
                              "compared by their statistics only · %.1f s"),
                            c->side[0].n_tokens, c->side[1].n_tokens, c->seconds);
  /* Translators: the Two models view's status when both models give the same tokens. */
  return g_strdup_printf (_("The tokens agree (%d): each A head's nearest B head is in the "
                            "CSV · %.1f s"), c->side[0].n_tokens, c->seconds);
}

char *
saccade_compare_models_dup_title (SaccadeCompareModels *v)
{
  SaccadeRun *run = saccade_page_get_run (v->page);
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");

  if (v->result == NULL)
    return g_strdup ("");
  /* Translators: the Two models figure's title: "Head type · A vs B · “text”". */
  return g_strdup_printf (_("%s · %s vs %s · %s"), colour_name (v->colour),
                          v->result->side[0].name, v->result->side[1].name, quote);
}

gboolean
saccade_compare_models_is_busy (SaccadeCompareModels *v)
{
  return v->cancel != NULL;
}

gboolean
saccade_compare_models_export_figure (SaccadeCompareModels *v, const char *path,
                                      GError **error)
{
  g_autofree char *title = saccade_compare_models_dup_title (v);
  SaccadeTypesFigure f = { 0 };
  SaccadeTypesPanel panels[2];
  char *names[2] = { NULL, NULL };
  const char *type_names[SC_HEAD_N_TYPES];
  gboolean ok;

  make_figure (v, &f, panels, names, type_names, title); /* none: refused as empty */
  ok = saccade_figure_export_types (&f, path, NULL, error);
  for (int s = 0; s < 2; s++)
    g_free (names[s]);
  return ok;
}

gboolean
saccade_compare_models_export_csv (SaccadeCompareModels *v, const char *path, GError **error)
{
  const SaccadeModelCompare *c = v->result;
  g_autoptr (GString) csv = g_string_new ("model,name,layer,head,depth,type");
  g_autoptr (GBytes) data = NULL;

  if (c == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("There is nothing to export: the figure has no data"));
      return FALSE;
    }
  for (int m = 0; m < SC_HEAD_N_METRICS; m++)
    g_string_append_printf (csv, ",%s", sc_head_metric_id ((ScHeadMetric) m));
  g_string_append (csv, ",prefix_matching,ablation_tv,nearest_b_layer,nearest_b_head,"
                   "nearest_distance\n");
  for (int s = 0; s < 2; s++)
    {
      const SaccadeModelSide *side = &c->side[s];
      const int nb = c->side[1].n_layers * c->side[1].n_heads;
      g_autofree char *name = g_strescape (side->name, NULL);
      for (int i = 0; i < side->n_layers * side->n_heads; i++)
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          const int l = i / side->n_heads;
          g_string_append_printf (csv, "%c,\"%s\",%d,%d,%s,%s", 'A' + s, name, l,
                                  i % side->n_heads,
                                  g_ascii_dtostr (buf, sizeof buf,
                                                  saccade_model_side_depth (side, l)),
                                  sc_head_type_id (side->types[i]));
          for (int colour = 1; colour < N_COLOURS; colour++)
            {
              const double x = colour_value (side, colour, i);
              g_string_append_c (csv, ',');
              if (!isnan (x))
                g_string_append (csv, g_ascii_dtostr (buf, sizeof buf, x));
            }
          if (s == 0 && c->nearest != NULL)
            g_string_append_printf (csv, ",%d,%d,%s", c->nearest[i] / c->side[1].n_heads,
                                    c->nearest[i] % c->side[1].n_heads,
                                    g_ascii_dtostr (buf, sizeof buf,
                                                    c->cross[(gsize) i * nb + c->nearest[i]]));
          else
            g_string_append (csv, ",,,");
          g_string_append_c (csv, '\n');
        }
    }
  data = g_bytes_new (csv->str, csv->len);
  return saccade_export_write (data, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Life                                                                                  */

SaccadeCompareModels *
saccade_compare_models_new (SaccadePage *page, void (*changed) (SaccadePage *page))
{
  SaccadeCompareModels *v = g_new0 (SaccadeCompareModels, 1);
  g_autoptr (GtkStringList) colours = gtk_string_list_new (NULL);
  GtkWidget *bar, *choose, *run;

  v->page = page;
  v->changed = changed;
  v->box = g_object_ref_sink (gtk_box_new (GTK_ORIENTATION_VERTICAL, 0));
  bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (bar, 6);
  gtk_widget_set_margin_end (bar, 6);
  v->b_label = GTK_LABEL (gtk_label_new (_("Model B: none chosen")));
  gtk_label_set_xalign (v->b_label, 0);
  gtk_label_set_ellipsize (v->b_label, PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_hexpand (GTK_WIDGET (v->b_label), TRUE);
  choose = gtk_button_new_with_mnemonic (_("_Model B…"));
  gtk_widget_set_tooltip_text (choose, _("Choose the second model's GGUF file"));
  for (int k = 0; k < N_COLOURS; k++)
    gtk_string_list_append (colours, colour_name (k));
  v->colour_dd = GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (g_object_ref (colours)), NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (v->colour_dd), _("Colour the heads by"));
  run = gtk_button_new_with_mnemonic (_("_Compare"));
  gtk_widget_set_tooltip_text (run, _("Run both models on the text of the run shown"));
  gtk_widget_add_css_class (run, "suggested-action");
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (v->b_label));
  gtk_box_append (GTK_BOX (bar), choose);
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (v->colour_dd));
  gtk_box_append (GTK_BOX (bar), run);
  v->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_widget_set_visible (GTK_WIDGET (v->progress), FALSE);
  gtk_widget_set_margin_start (GTK_WIDGET (v->progress), 6);
  gtk_widget_set_margin_end (GTK_WIDGET (v->progress), 6);
  v->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_vexpand (GTK_WIDGET (v->area), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (v->area), TRUE);
  gtk_drawing_area_set_draw_func (v->area, draw_area, v, NULL);
  gtk_box_append (GTK_BOX (v->box), bar);
  gtk_box_append (GTK_BOX (v->box), GTK_WIDGET (v->progress));
  gtk_box_append (GTK_BOX (v->box), GTK_WIDGET (v->area));
  g_signal_connect_swapped (choose, "clicked", G_CALLBACK (choose_b), v);
  g_signal_connect_swapped (run, "clicked", G_CALLBACK (compare_clicked), v);
  g_signal_connect_swapped (v->colour_dd, "notify::selected", G_CALLBACK (colour_selected), v);
  return v;
}

GtkWidget *
saccade_compare_models_widget (SaccadeCompareModels *v)
{
  return v->box;
}

void
saccade_compare_models_free (SaccadeCompareModels *v)
{
  if (v == NULL)
    return;
  saccade_job_cancel_clear (&v->cancel);
  g_signal_handlers_disconnect_by_data (v->colour_dd, v);
  gtk_drawing_area_set_draw_func (v->area, NULL, NULL, NULL);
  g_object_unref (v->box);
  g_free (v->path_b);
  g_free (v->error);
  saccade_model_compare_free (v->result);
  for (int s = 0; s < 2; s++)
    {
      g_free (v->category[s]);
      g_free (v->values[s]);
    }
  g_free (v);
}
