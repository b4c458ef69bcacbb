/* saccade-lines-page.c — the Lines page (see saccade-lines-page.h).
 *
 * What it shows is chosen in three steps, each redone only when its inputs change:
 *   1. the links (ui/figures/saccade-figure-lines.h): the strongest per query and head of
 *      the whole layer, at least "Min weight" and at most "Top" of them, chosen in a GTask
 *      worker once per (layer, threshold, top k) — a new request cancels the last, and a
 *      result that is not of the latest request is dropped. The old picture stays until
 *      the new links arrive, with its own title, so title and lines always agree;
 *   2. the heads shown (a toggle button per head in the head's colour: a click shows or
 *      hides it, a double click or Ctrl+click shows it alone; All, None) and the token
 *      range [start, end) (spin buttons in run positions): filters of the chosen links,
 *      handed to the view without choosing again;
 *   3. the picture: SaccadeLinesView renders it in a worker of its own and blits the last
 *      finished image; the main thread never draws a line.
 * A run past LONG_RUN tokens opens on its last DEFAULT_SPAN tokens, and the status line
 * says so. The page reads attention in one place, layer_heads(); a long run (not resident,
 * app/core/saccade-run.h) has the range's query rows of each head read from the store
 * instead (choose_from_store()), chosen again when the range changes.
 *
 * The head toggle buttons are saccade-lines-heads.c's (saccade-lines-private.h).
 *
 * Export (File > Export, Ctrl+E) draws what the page shows through the shared exporter,
 * the figure of `saccade export RUN --figure lines --layer L --threshold T --top-k K
 * --heads H,.. --range Q0:Q1`. Actions (for keyboard users and the test driver):
 * page.lines-threshold (s "0.2"), page.lines-top-k (s "3"), page.lines-range (s "Q0:Q1"),
 * page.lines-heads (s "all", "none" or "0,3"), page.lines-solo (s "4").
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-lines-private.h"

#include <glib/gi18n.h>
#include <stdlib.h>

#include "app/core/saccade-export.h"
#include "app/core/saccade-job.h"
#include "ui/figures/saccade-figure-lines.h"
#include "ui/widgets/saccade-background.h"
#include "ui/widgets/saccade-lines-view.h"

/* A run longer than this opens on a range: at 300 rows in a window-sized figure a row is
 * about 2 pixels, lines no longer tell their tokens apart. */
#define LONG_RUN 300
/* The range a long run opens on: its last 200 tokens, rows of about 3 pixels at a window
 * height of 700, where hovering still picks one token. */
#define DEFAULT_SPAN 200

G_DEFINE_FINAL_TYPE (SaccadeLinesPage, saccade_lines_page, SACCADE_TYPE_PAGE)

/* ------------------------------------------------------------------------------------ */
/* Reading the run                                                                       */

/* Layer @layer's heads as (n_heads, n, n) floats: borrowed from @run (then *@owned is
 * NULL) or read into *@owned (caller frees). Called in the worker thread: it must not
 * touch the page. NULL with @error set when the heads cannot be read. The one place the
 * page reads attention: heads read from the store on demand go here. */
static const float *
layer_heads (SaccadeRun *run, int layer, float **owned, GError **error)
{
  *owned = NULL;
  if (layer < 0 || layer >= run->n_layers)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "run %" G_GINT64_FORMAT " has no layer %d", run->id, layer);
      return NULL;
    }
  return saccade_run_layer (run, layer);
}

/* ------------------------------------------------------------------------------------ */
/* State                                                                                 */

static double
threshold (SaccadeLinesPage *self)
{
  return gtk_adjustment_get_value (self->threshold_adjustment);
}

static int
top_k (SaccadeLinesPage *self)
{
  return (int) gtk_adjustment_get_value (self->top_k_adjustment);
}

/* The token range shown, [*q0, *q1), within the run. */
static void
get_range (SaccadeLinesPage *self, int *q0, int *q1)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int n = run != NULL ? run->n : 0;

  *q0 = CLAMP ((int) gtk_adjustment_get_value (self->start_adjustment), 0, MAX (n - 1, 0));
  *q1 = CLAMP ((int) gtk_adjustment_get_value (self->end_adjustment), *q0 + 1, MAX (n, 1));
}

static gboolean
range_is_whole (SaccadeLinesPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int q0, q1;

  get_range (self, &q0, &q1);
  return run == NULL || (q0 == 0 && q1 == run->n);
}

/* The heads shown, in order; caller frees. */
static int *
shown_heads (SaccadeLinesPage *self, int *n_shown)
{
  int *ids = g_new (int, MAX (self->n_heads, 1));

  *n_shown = 0;
  for (int h = 0; h < self->n_heads; h++)
    if (self->head_on[h])
      ids[(*n_shown)++] = h;
  return ids;
}

/* The figure's title for @layer with the heads and range shown. Caller frees. */
static char *
dup_title (SaccadeLinesPage *self, int layer)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int n_shown, q0, q1;
  g_autofree int *ids = NULL;
  g_autofree char *quote = NULL, *title = NULL;

  if (run == NULL)
    return g_strdup ("");
  quote = saccade_page_dup_quoted_text (run);
  ids = shown_heads (self, &n_shown);
  if (n_shown == self->n_heads)
    /* Translators: the lines figure's title, e.g. "Layer 5, all 9 heads · “The cat…”". */
    title = g_strdup_printf (_("Layer %d, all %d heads · %s"), layer, run->n_heads, quote);
  else if (n_shown == 0)
    /* Translators: the lines figure's title with every head toggled off. */
    title = g_strdup_printf (_("Layer %d, no heads · %s"), layer, quote);
  else
    {
      g_autoptr (GString) list = g_string_new (NULL);
      for (int k = 0; k < n_shown; k++)
        g_string_append_printf (list, "%s%d", k > 0 ? ", " : "", ids[k]);
      /* Translators: the lines figure's title, e.g. "Layer 5, heads 0, 3 · “The cat…”". */
      title = g_strdup_printf (ngettext ("Layer %d, head %s · %s",
                                            "Layer %d, heads %s · %s", n_shown),
                               layer, list->str, quote);
    }
  if (range_is_whole (self))
    return g_steal_pointer (&title);
  get_range (self, &q0, &q1);
  /* Translators: a title and the token range shown, half-open as in NumPy: "… · tokens
   * 546:746". */
  return g_strdup_printf (_("%s · tokens %d:%d"), title, q0, q1);
}

static char *
saccade_lines_page_dup_figure_title (SaccadePage *page)
{
  return dup_title (SACCADE_LINES_PAGE (page), saccade_page_get_layer (page));
}

/* ------------------------------------------------------------------------------------ */
/* 2. Filters: the heads and the range, handed to the view                               */

static void
update_status (SaccadeLinesPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autoptr (GString) text = g_string_new (NULL);
  int q0, q1;

  gtk_spinner_set_spinning (self->spinner, self->job != NULL);
  if (run == NULL)
    {
      gtk_label_set_text (self->status_label, "");
      return;
    }
  if (self->error != NULL)
    {
      gtk_label_set_text (self->status_label, self->error);
      return;
    }
  get_range (self, &q0, &q1);
  if (self->job != NULL)
    g_string_append (text, _("Choosing the strongest links…"));
  else if (self->links != NULL)
    {
      g_autofree int *ids = NULL;
      int n_shown;
      guint count;
      ids = shown_heads (self, &n_shown);
      count = saccade_figure_lines_count (&(SaccadeLinesFigure) {
        .n_heads = n_shown, .n = q1 - q0, .links = self->links, .head_ids = ids,
        .n_heads_total = self->n_heads, .position0 = q0,
      });
      g_string_append_printf (text, ngettext ("%u link", "%u links", count), count);
    }
  if (self->default_range && run->n > LONG_RUN)
    {
      g_string_append (text, " · ");
      /* Translators: the status of the Lines page on a long run, e.g. "the last 200 of
       * 950 tokens (long runs open on their end)". */
      g_string_append_printf (text, _("the last %d of %d tokens (long runs open on their "
                                      "end)"), q1 - q0, run->n);
    }
  else
    {
      if (text->len > 0)
        g_string_append (text, " · ");
      g_string_append (text, _("hover a token to see its links"));
    }
  gtk_label_set_text (self->status_label, text->str);
}

/* Hands the view the links of the layer, cut to the heads and range shown. */
void
lines_push_view (SaccadeLinesPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autofree int *ids = NULL;
  g_autofree char *title = NULL;
  int n_shown, q0, q1;

  if (run == NULL || self->links == NULL)
    {
      saccade_lines_view_set_links (self->lines_view, NULL, 0, 0, NULL, FALSE, NULL, 0);
      saccade_lines_view_set_title (self->lines_view, NULL);
      update_status (self);
      return;
    }
  get_range (self, &q0, &q1);
  ids = shown_heads (self, &n_shown);
  title = dup_title (self, self->links_layer);
  saccade_lines_view_set_links (self->lines_view, self->links, q0, q1 - q0,
                                (const char *const *) run->labels + q0,
                                !range_is_whole (self), ids, n_shown);
  saccade_lines_view_set_title (self->lines_view, title);
  update_status (self);
}

/* ------------------------------------------------------------------------------------ */
/* 1. Choosing the links in a worker                                                     */

typedef struct {
  SaccadeRun *run;
  int layer;
  double threshold;
  int top_k;
  int q0, q1;      /* a long run's links are chosen for the range's queries only */
} ChooseJob;

static void
choose_job_free (ChooseJob *j)
{
  saccade_run_unref (j->run);
  g_free (j);
}

/* A long run (not resident): its heads are read from the store, the range's query rows
 * only ((q1 - q0, n) a head, whole rows, so every key still competes for the top k). */
static SaccadeLinesLinks *
choose_from_store (ChooseJob *j, GCancellable *cancellable, GError **error)
{
  g_autoptr (SaccadeLinesLinks) links = NULL;

  if (j->layer < 0 || j->layer >= j->run->n_layers)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "run %" G_GINT64_FORMAT " has no layer %d", j->run->id, j->layer);
      return NULL;
    }
  links = saccade_lines_links_new (j->run->n_heads, j->q0, j->q1, j->threshold, j->top_k);
  for (int h = 0; h < j->run->n_heads; h++)
    {
      g_autofree float *rows = saccade_run_read_rows (j->run, j->layer, h, j->q0, j->q1,
                                                      cancellable, error);
      if (rows == NULL)
        return NULL;
      if (!saccade_lines_links_add_head (links, h, rows, 0, j->run->n, cancellable))
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
          return NULL;
        }
    }
  saccade_lines_links_finish (links);
  return g_steal_pointer (&links);
}

static void
choose_worker (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ChooseJob *j = task_data;
  g_autofree float *owned = NULL;
  const float *heads;
  SaccadeLinesLinks *links;
  GError *error = NULL;

  if (!j->run->resident)
    {
      if ((links = choose_from_store (j, cancellable, &error)) == NULL)
        g_task_return_error (task, error);
      else
        g_task_return_pointer (task, links, (GDestroyNotify) saccade_lines_links_unref);
      return;
    }
  if ((heads = layer_heads (j->run, j->layer, &owned, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  links = saccade_lines_links_select (heads, j->run->n_heads, 0, j->run->n, 0, j->run->n,
                                      j->threshold, j->top_k, cancellable);
  if (links == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
      return;
    }
  g_task_return_pointer (task, links, (GDestroyNotify) saccade_lines_links_unref);
}

static void
choose_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (source);
  g_autoptr (GError) error = NULL;
  SaccadeLinesLinks *links = g_task_propagate_pointer (G_TASK (result), &error);
  ChooseJob *j = g_task_get_task_data (G_TASK (result));

  if (g_task_get_cancellable (G_TASK (result)) != self->job)
    {
      saccade_lines_links_unref (links);
      return; /* a later request took its place */
    }
  g_clear_object (&self->job);
  g_clear_pointer (&self->error, g_free);
  if (links == NULL)
    self->error = g_strdup (error->message);
  else
    {
      saccade_lines_links_unref (self->links);
      self->links = links;
      self->links_layer = j->layer;
    }
  lines_push_view (self);
}

static void
start_choosing (SaccadeLinesPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autoptr (GTask) task = NULL;
  ChooseJob *j;

  saccade_job_cancel_clear (&self->job);
  if (run == NULL)
    {
      lines_push_view (self);
      return;
    }
  j = g_new0 (ChooseJob, 1);
  j->run = saccade_run_ref (run);
  j->layer = saccade_page_get_layer (SACCADE_PAGE (self));
  j->threshold = threshold (self);
  j->top_k = top_k (self);
  get_range (self, &j->q0, &j->q1);
  self->job = g_cancellable_new ();
  task = g_task_new (self, self->job, choose_done, NULL);
  g_task_set_source_tag (task, start_choosing);
  g_task_set_task_data (task, j, (GDestroyNotify) choose_job_free);
  saccade_background_run (task, choose_worker);
  update_status (self);
}

/* ------------------------------------------------------------------------------------ */
/* Range                                                                                 */

/* Sets the range to [q0, q1) (clamped to the run), without choosing again. */
static void
set_range (SaccadeLinesPage *self, int q0, int q1)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int n = run != NULL ? run->n : 0;

  self->updating = TRUE;
  gtk_adjustment_configure (self->start_adjustment, CLAMP (q0, 0, MAX (n - 1, 0)), 0,
                            MAX (n - 1, 0), 1, 50, 0);
  gtk_adjustment_configure (self->end_adjustment, CLAMP (q1, MIN (q0 + 1, n), n), MIN (n, 1),
                            n, 1, 50, 0);
  self->updating = FALSE;
}

static void
range_changed (GtkAdjustment *adjustment, SaccadeLinesPage *self)
{
  double start = gtk_adjustment_get_value (self->start_adjustment);
  double end = gtk_adjustment_get_value (self->end_adjustment);

  if (self->updating)
    return;
  /* Keep start < end by moving the other end. */
  self->updating = TRUE;
  if (adjustment == self->start_adjustment && end <= start)
    gtk_adjustment_set_value (self->end_adjustment, start + 1);
  else if (adjustment == self->end_adjustment && start >= end)
    gtk_adjustment_set_value (self->start_adjustment, end - 1);
  self->updating = FALSE;
  self->default_range = FALSE;
  if (saccade_page_get_run (SACCADE_PAGE (self)) != NULL
      && !saccade_page_get_run (SACCADE_PAGE (self))->resident)
    start_choosing (self); /* a long run's links are of the range's queries */
  else
    lines_push_view (self);
}

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                               */

static void
threshold_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (widget);

  gtk_adjustment_set_value (self->threshold_adjustment,
                            g_ascii_strtod (g_variant_get_string (param, NULL), NULL));
}

static void
top_k_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (widget);

  gtk_adjustment_set_value (self->top_k_adjustment,
                            g_ascii_strtod (g_variant_get_string (param, NULL), NULL));
}

/* "Q0:Q1", as `saccade export --range` (an end left out: the run's). */
static void
range_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (widget);
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const char *s = g_variant_get_string (param, NULL);
  const char *colon = strchr (s, ':');
  int q0, q1;

  if (run == NULL || colon == NULL)
    return;
  q0 = colon == s ? 0 : atoi (s);
  q1 = colon[1] == '\0' ? run->n : atoi (colon + 1);
  set_range (self, q0, q1);
  self->default_range = FALSE;
  lines_push_view (self);
}

/* "all", "none" or a list "0,3". */
static void
heads_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (widget);
  const char *s = g_variant_get_string (param, NULL);
  g_autofree gboolean *on = g_new0 (gboolean, MAX (self->n_heads, 1));

  if (g_str_equal (s, "all"))
    for (int h = 0; h < self->n_heads; h++)
      on[h] = TRUE;
  else if (!g_str_equal (s, "none"))
    {
      g_auto (GStrv) items = g_strsplit (s, ",", -1);
      for (int i = 0; items[i] != NULL; i++)
        {
          guint64 v;
          if (g_ascii_string_to_unsigned (g_strstrip (items[i]), 10, 0, G_MAXINT, &v, NULL)
              && (int) v < self->n_heads)
            on[v] = TRUE;
        }
    }
  lines_set_heads (self, on);
}

static void
solo_action (GtkWidget *widget, const char *name, GVariant *param)
{
  lines_solo_head (SACCADE_LINES_PAGE (widget), atoi (g_variant_get_string (param, NULL)));
}

/* ------------------------------------------------------------------------------------ */
/* Page hooks                                                                            */

static void
saccade_lines_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (page);
  int n = run != NULL ? run->n : 0;

  /* The base class has moved the cursor into @run's shape: give the picker that range. */
  gtk_adjustment_configure (self->layer_adjustment, saccade_page_get_layer (page), 0,
                            run != NULL ? run->n_layers - 1 : 0, 1, 5, 0);
  g_clear_pointer (&self->links, saccade_lines_links_unref);
  g_clear_pointer (&self->error, g_free);
  self->updating = TRUE;
  lines_rebuild_head_buttons (self, run != NULL ? run->n_heads : 0);
  self->updating = FALSE;
  set_range (self, n > LONG_RUN ? n - DEFAULT_SPAN : 0, n);
  self->default_range = n > LONG_RUN;
  start_choosing (self);
}

static gboolean
saccade_lines_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (page);
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autofree char *title = NULL;
  g_autofree int *ids = NULL;
  SaccadeExportRange range;
  int n_shown;

  if ((src = saccade_page_new_export_source (page, error)) == NULL)
    return FALSE;
  get_range (self, &range.q0, &range.q1);
  range.k0 = range.q0;
  range.k1 = range.q1;
  ids = shown_heads (self, &n_shown);
  title = saccade_lines_page_dup_figure_title (page);
  return saccade_export_figure (src, &(SaccadeExportFigure) {
    .kind = SACCADE_EXPORT_LINES, .layer = saccade_page_get_layer (page), .head = -1,
    .title = title, .range = range_is_whole (self) ? NULL : &range,
    .lines_threshold = threshold (self), .lines_top_k = top_k (self),
    .lines_heads = ids, .lines_n_heads = n_shown,
  }, path, error);
}

/* The layer's weights in long form, as the window exports a layer (every head, every
 * token: the numbers behind any filter). */
static gboolean
saccade_lines_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;

  if ((src = saccade_page_new_export_source (page, error)) == NULL)
    return FALSE;
  data = saccade_export_layer_csv (src, saccade_page_get_layer (page), error);
  return data != NULL && saccade_export_write (data, path, error);
}

static gboolean
saccade_lines_page_is_busy (SaccadePage *page)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (page);

  return self->job != NULL || saccade_lines_view_get_busy (self->lines_view);
}

static void
saccade_lines_page_dispose (GObject *object)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (object);

  saccade_job_cancel_clear (&self->job);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_LINES_PAGE);
  G_OBJECT_CLASS (saccade_lines_page_parent_class)->dispose (object);
}

static void
saccade_lines_page_finalize (GObject *object)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (object);

  saccade_lines_links_unref (self->links);
  g_free (self->head_buttons);
  g_free (self->head_on);
  g_free (self->error);
  G_OBJECT_CLASS (saccade_lines_page_parent_class)->finalize (object);
}

static void
saccade_lines_page_class_init (SaccadeLinesPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->dispose = saccade_lines_page_dispose;
  object_class->finalize = saccade_lines_page_finalize;
  page_class->set_run = saccade_lines_page_set_run;
  page_class->dup_figure_title = saccade_lines_page_dup_figure_title;
  page_class->export_figure = saccade_lines_page_export_figure;
  page_class->export_csv = saccade_lines_page_export_csv;
  page_class->is_busy = saccade_lines_page_is_busy;

  gtk_widget_class_install_action (widget_class, "page.lines-threshold", "s", threshold_action);
  gtk_widget_class_install_action (widget_class, "page.lines-top-k", "s", top_k_action);
  gtk_widget_class_install_action (widget_class, "page.lines-range", "s", range_action);
  gtk_widget_class_install_action (widget_class, "page.lines-heads", "s", heads_action);
  gtk_widget_class_install_action (widget_class, "page.lines-solo", "s", solo_action);

  /* The template names the view by type name. */
  g_type_ensure (SACCADE_TYPE_LINES_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-lines-page.ui");
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, layer_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, threshold_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, top_k_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, start_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, end_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, heads_box);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, status_label);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, spinner);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, lines_view);
}

static void
saccade_lines_page_init (SaccadeLinesPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->lines_view));
  gtk_adjustment_set_value (self->threshold_adjustment, SACCADE_LINES_DEFAULT_THRESHOLD);
  gtk_adjustment_set_value (self->top_k_adjustment, SACCADE_LINES_DEFAULT_TOP_K);
  g_object_bind_property (self, "layer", self->layer_adjustment, "value",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  g_signal_connect_swapped (self, "notify::layer", G_CALLBACK (start_choosing), self);
  g_signal_connect_swapped (self->threshold_adjustment, "value-changed",
                            G_CALLBACK (start_choosing), self);
  g_signal_connect_swapped (self->top_k_adjustment, "value-changed",
                            G_CALLBACK (start_choosing), self);
  g_signal_connect (self->start_adjustment, "value-changed", G_CALLBACK (range_changed), self);
  g_signal_connect (self->end_adjustment, "value-changed", G_CALLBACK (range_changed), self);
  g_signal_connect_swapped (self->lines_view, "notify::busy", G_CALLBACK (update_status), self);
}
