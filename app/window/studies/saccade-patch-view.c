/* saccade-patch-view.c — activation patching's view (see saccade-study-views.h;
 * engine/study/sc-patch-study.h): the normalised effect of every patched cell on the
 * diverging red–blue map, 0 (the corrupted run) white, +1 (the clean run) saturated red,
 * −1 saturated blue, clipped beyond — a fixed scale, so maps of different studies read
 * alike. Heads, patterns, queries, keys and values (per query head) are the head sweep's
 * layer × head map (ui's effects map); head-positions and the residual a matrix of
 * (layer·head) or layer rows by token columns (ui's heatmap). Path patching
 * (SACCADE_ABLATION_PATH_PATCH, sc-path-patch.h) is the same layer × head map over the
 * receivers: the heads up to the latest sender's layer have no path and are hatched, the
 * senders ringed. The title names the direction, what was patched (the senders and the
 * component), the metric and its value on both runs; the caption under the figure says how
 * to read the colours. Hover names the cell, its effect and m; a click on
 * a head opens it on the clean run (`win.show-head`), Shift+click sets it beside the same
 * head of the corrupted run on the Compare page (`win.compare-head`).
 *
 * Not here: the study (saccade-ablation.c), its CSV (saccade_patch_csv, the page's export).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadePatchView
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkDrawingArea *area;
  GtkLabel *caption;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind PATCH, ATTR_PATCH, PATH_PATCH */
  double *effects;              /* (n_rows · n_cols) sc_patch_normalised of each cell (path
                                 * patching: NaN where no path reaches), or NULL */
  gboolean *senders;            /* path patching: (n_layers · n_heads) the senders; NULL */
  float *cells;                 /* the same as floats, for the heatmap */
  GStrv row_labels;             /* head-positions: "L0.H0" …; residual: "L0" …; heads: NULL */
  char *metric;                 /* "logit(“␣Mary”) − logit(“␣John”)" or "ln p(“␣Mary”)" */
  SaccadeEffectsMapGeometry map_geom;
  SaccadeHeatmapGeometry grid_geom;
  int hover;                    /* the cell under the pointer, -1: none */
};

static void saccade_patch_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadePatchView, saccade_patch_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_patch_view_iface_init))

static const ScPatchResult *
patch (SaccadePatchView *self)
{
  const SaccadeAblation *a = self->shown.result;
  if (a == NULL || self->effects == NULL)
    return NULL;
  return a->path != NULL ? a->path->grid : a->patch;
}

/* Path patching's result, or NULL for activation and attribution patching. */
static const ScPathPatchResult *
path (SaccadePatchView *self)
{
  const SaccadeAblation *a = self->shown.result;
  return a != NULL && self->effects != NULL ? a->path : NULL;
}

/* One cell per head (the layer × head map), not per position. */
static gboolean
per_head (const ScPatchResult *r)
{
  return r->what != SC_PATCH_HEAD_POSITIONS && r->what != SC_PATCH_RESIDUAL;
}

/* What was patched, in the title's words. */
static const char *
what_words (int what)
{
  switch (what)
    {
    case SC_PATCH_HEADS:
      return _("each head");
    case SC_PATCH_HEAD_POSITIONS:
      return _("each head at each position");
    case SC_PATCH_PATTERNS:
      return _("each head's attention pattern");
    case SC_PATCH_QUERIES:
      return _("each head's queries");
    case SC_PATCH_KEYS:
      return _("each head's keys");
    case SC_PATCH_VALUES:
      return _("each head's values");
    default:
      return _("the residual stream at each position");
    }
}

/* Path patching's title (caller frees). */
static char *
path_title (SaccadePatchView *self, const ScPathPatchResult *pp, const char *quote)
{
  const ScPatchResult *r = pp->grid;
  /* Translators: path patching's receiver inputs, in its title. */
  const char *component = pp->component == SC_PATH_QUERIES ? _("queries")
                          : pp->component == SC_PATH_KEYS  ? _("keys") : _("values");

  if (r->direction == SC_PATCH_DENOISE)
    /* Translators: path patching's title: the senders ("23.3,20.0"), the receivers' input,
     * the metric, its value on the clean and the corrupted run, the model, the sentence. */
    return g_strdup_printf (_("Denoising paths from %s into each later head's %s: m = %s, "
                              "clean %.3f, corrupted %.3f · %s · %s"),
                            pp->senders, component, self->metric, r->metric_clean,
                            r->metric_corrupted, saccade_study_shown_model (&self->shown), quote);
  return g_strdup_printf (_("Noising paths from %s into each later head's %s: m = %s, clean "
                            "%.3f, corrupted %.3f · %s · %s"),
                          pp->senders, component, self->metric, r->metric_clean,
                          r->metric_corrupted, saccade_study_shown_model (&self->shown), quote);
}

/* The run's display labels when they are the study's tokens, else NULL (positions). */
static const char *const *
token_labels (SaccadePatchView *self)
{
  const SaccadeRun *run = self->shown.ctx.run;
  const ScPatchResult *r = patch (self);

  return run != NULL && r != NULL && run->n == r->n_tokens ? (const char *const *) run->labels
                                                           : NULL;
}

static char *
patch_title (SaccadePatchView *self)
{
  const ScPatchResult *r = patch (self);
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);
  g_autofree char *title = NULL;
  const char *what;

  if (r == NULL)
    return g_strdup ("");
  if (path (self) != NULL)
    return path_title (self, path (self), quote);
  what = what_words (r->what);
  if (r->direction == SC_PATCH_DENOISE)
    /* Translators: patching's title: what is patched, the metric, its value on the clean and
     * the corrupted run, the model, the sentence. */
    title = g_strdup_printf (_("Denoising %s: m = %s, clean %.3f, corrupted %.3f · %s · %s"),
                             what, self->metric, r->metric_clean, r->metric_corrupted,
                             saccade_study_shown_model (&self->shown), quote);
  else
    title = g_strdup_printf (_("Noising %s: m = %s, clean %.3f, corrupted %.3f · %s · %s"),
                             what, self->metric, r->metric_clean, r->metric_corrupted,
                             saccade_study_shown_model (&self->shown), quote);
  if (!r->estimated)
    return g_steal_pointer (&title);
  /* Translators: attribution patching's title: the first-order estimate of the patching
   * that the rest of the title (%s) describes. */
  return g_strdup_printf (_("Estimated by attribution patching · %s"), title);
}

/* The colour bar's caption: the scale is fixed, so say where it ends. */
static const char *
value_name (void)
{
  /* Translators: the colour bar of patching's map. */
  return _("effect (corrupted 0, clean 1; clipped at ±1)");
}

static void
map_figure (SaccadePatchView *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScPatchResult *r = patch (self);

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = r->n_layers, .n_heads = r->n_heads, .values = self->effects,
    .flipped = self->senders,
    /* Translators: the legend of the ring on path patching's senders. */
    .flip_name = self->senders != NULL ? _("sender") : NULL,
    .value_name = value_name (), .layer_name = _("Layer"), .head_name = _("Head"),
    .title = title, .range = 1.0,
  };
}

static void
grid_figure (SaccadePatchView *self, const char *title, SaccadeHeatmapFigure *f)
{
  const ScPatchResult *r = patch (self);

  *f = (SaccadeHeatmapFigure) {
    .values = self->cells, .n_rows = r->n_rows, .n_cols = r->n_cols,
    .row_labels = (const char *const *) self->row_labels, .col_labels = token_labels (self),
    .title = title, .colormap = SACCADE_COLORMAP_RDBU, .scale = SACCADE_SCALE_LINEAR,
    .vmin = -1.0, .vmax = 1.0,
    /* Translators: the rows of patching's head-positions map: a layer and a head. */
    .row_name = r->what == SC_PATCH_HEAD_POSITIONS ? _("Layer.Head") : _("Layer"),
    .col_name = _("Position"), .value_name = value_name (),
  };
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadePatchView *self = data;
  const ScPatchResult *r = patch (self);
  g_autofree char *title = NULL;
  SaccadeFigureStyle style;

  if (r == NULL)
    return;
  title = patch_title (self);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  if (per_head (r))
    {
      SaccadeEffectsMapFigure f;
      map_figure (self, title, &f);
      saccade_figure_effects_map_draw_full (cr, &f, &style,
                                            self->hover >= 0 ? self->hover / r->n_heads : -1,
                                            self->hover >= 0 ? self->hover % r->n_heads : -1,
                                            width, height, &self->map_geom);
    }
  else
    {
      SaccadeHeatmapFigure f;
      grid_figure (self, title, &f);
      saccade_figure_heatmap_draw_full (cr, &f, NULL, &style, width, height, &self->grid_geom);
    }
}

/* The cell under (@x, @y), or -1. */
static int
cell_at (SaccadePatchView *self, double x, double y)
{
  const ScPatchResult *r = patch (self);
  int row, col;

  if (r == NULL)
    return -1;
  if (per_head (r))
    return saccade_effects_map_geometry_head_at (&self->map_geom, x, y, &row, &col)
             ? row * r->n_heads + col : -1;
  return saccade_heatmap_geometry_cell_at (&self->grid_geom, x, y, &row, &col)
           ? row * r->n_cols + col : -1;
}

/* "L9.H4", "L9.H4 @ pos 12 “␣John”", "L9 @ pos 12 “␣John”". Caller frees. */
static char *
cell_name (SaccadePatchView *self, int c)
{
  const char *const *labels = token_labels (self);
  g_autofree char *token = NULL;
  int layer, head, pos;

  saccade_patch_cell (patch (self), c, &layer, &head, &pos);
  if (pos < 0)
    return g_strdup_printf ("L%d.H%d", layer, head);
  token = labels != NULL ? g_strdup_printf (" “%s”", labels[pos]) : g_strdup ("");
  if (head < 0)
    return g_strdup_printf ("L%d @ pos %d%s", layer, pos, token);
  return g_strdup_printf ("L%d.H%d @ pos %d%s", layer, head, pos, token);
}

static void
motion (GtkEventControllerMotion *c, double x, double y, SaccadePatchView *self)
{
  const int cell = cell_at (self, x, y);
  g_autofree char *text = NULL;

  if (cell == self->hover)
    return;
  self->hover = cell;
  if (cell >= 0)
    {
      const ScPatchResult *r = patch (self);
      g_autofree char *name = cell_name (self, cell);
      if (self->senders != NULL && self->senders[cell])
        /* Translators: hover over a sender of path patching. */
        text = g_strdup_printf (_("%s: a sender"), name);
      else if (path (self) != NULL && cell / r->n_cols < path (self)->receivers_from_layer)
        /* Translators: hover over a head at or before the latest sender's layer. */
        text = g_strdup_printf (_("%s: no path from the senders (not after the latest "
                                  "sender's layer)"), name);
      else
        /* Translators: hover over a patched cell: its name, its normalised effect, the raw
         * metric of the patched run. */
        text = g_strdup_printf (_("%s: effect %.3f · m = %.4f"), name, self->effects[cell],
                                r->patched[cell]);
    }
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
leave (GtkEventControllerMotion *c, SaccadePatchView *self)
{
  self->hover = -1;
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
released (GtkGestureClick *g, int n_press, double x, double y, SaccadePatchView *self)
{
  const int cell = cell_at (self, x, y);
  const SaccadeAblation *a = self->shown.result;
  int layer, head, pos;

  if (cell < 0)
    return;
  saccade_patch_cell (patch (self), cell, &layer, &head, &pos);
  if (head < 0)
    return; /* a residual cell: no head to open */
  if (gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (g)) & GDK_SHIFT_MASK)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.compare-head", "(iix)", layer, head,
                                (gint64) a->patch_corrupted);
  else
    gtk_widget_activate_action (GTK_WIDGET (self), "win.show-head", "(ii)", layer, head);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
set_caption (SaccadePatchView *self, const SaccadeAblation *a)
{
  const ScPatchResult *r = a->path != NULL ? a->path->grid : a->patch;
  g_autofree char *how = NULL, *click = NULL, *text = NULL;

  if (a->path != NULL && r->direction == SC_PATCH_DENOISE)
    /* Translators: path patching's caption; %lld: the corrupted run. */
    how = g_strdup_printf (_("Each later head's input taken from run %lld (corrupted) with "
                             "the senders' outputs of this (clean) run and every other head "
                             "frozen: 1 restores the clean behaviour through that head "
                             "alone. Hatched: no path (up to the latest sender's layer)."),
                           (long long) a->patch_corrupted);
  else if (a->path != NULL)
    how = g_strdup_printf (_("Each later head's input taken from this (clean) run with the "
                             "senders' outputs of run %lld (corrupted) and every other head "
                             "frozen: near 0, the behaviour flows through that head. Hatched: "
                             "no path (up to the latest sender's layer)."),
                           (long long) a->patch_corrupted);
  else if (r->direction == SC_PATCH_DENOISE)
    /* Translators: patching's caption; %lld: the corrupted run. */
    how = g_strdup_printf (_("Each component's activation of this (clean) run patched into "
                             "run %lld (corrupted): 1 restores the clean behaviour."),
                           (long long) a->patch_corrupted);
  else
    how = g_strdup_printf (_("Each component's activation of run %lld (corrupted) patched "
                             "into this (clean) run: near 0, the behaviour needs it."),
                           (long long) a->patch_corrupted);
  if (r->what != SC_PATCH_RESIDUAL)
    /* Translators: %lld: the corrupted run. */
    click = g_strdup_printf (_(" Click a head to open it on this run; Shift+click to compare "
                               "it with run %lld."), (long long) a->patch_corrupted);
  /* Translators: patching's caption: the scale, then the two sentences above. */
  text = g_strdup_printf (_("Effect = (m − m_corrupted) / (m_clean − m_corrupted): white 0 "
                            "is the corrupted run, red 1 the clean run; blue below 0; colours "
                            "saturate at ±1 and are clipped beyond. %s%s"),
                          how, click != NULL ? click : "");
  gtk_label_set_text (self->caption, text);
}

static void
patch_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadePatchView *self = SACCADE_PATCH_VIEW (view);
  const SaccadeAblation *a = result;
  const ScPatchResult *r = a->path != NULL ? a->path->grid : a->patch;
  const int n = r->n_rows * r->n_cols;
  g_autofree char *target = saccade_study_token_text (ctx->model, r->target);

  saccade_study_shown_set (&self->shown, a, ctx);
  g_free (self->effects);
  g_free (self->cells);
  g_clear_pointer (&self->row_labels, g_strfreev);
  g_clear_pointer (&self->senders, g_free);
  g_free (self->metric);
  self->effects = g_new (double, n);
  self->cells = g_new (float, n);
  for (int i = 0; i < n; i++)
    {
      self->effects[i] = sc_patch_normalised (r, r->patched[i]);
      if (a->path != NULL && i / r->n_cols < a->path->receivers_from_layer)
        self->effects[i] = NAN; /* no path: hatched, not the base run's 0 or 1 */
      self->cells[i] = (float) self->effects[i];
    }
  if (a->path != NULL)
    {
      int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT];
      const int k = sc_study_heads_parse (a->path->senders, layer, head, NULL);
      self->senders = g_new0 (gboolean, n);
      for (int i = 0; i < k; i++)
        if (layer[i] < r->n_rows && head[i] < r->n_cols)
          self->senders[layer[i] * r->n_cols + head[i]] = TRUE;
    }
  if (!per_head (r))
    {
      self->row_labels = g_new0 (char *, r->n_rows + 1);
      for (int row = 0; row < r->n_rows; row++)
        self->row_labels[row] = r->what == SC_PATCH_HEAD_POSITIONS
                                  ? g_strdup_printf ("L%d.H%d", row / r->n_heads,
                                                     row % r->n_heads)
                                  : g_strdup_printf ("L%d", row);
    }
  if (r->contrast >= 0)
    {
      g_autofree char *contrast = saccade_study_token_text (ctx->model, r->contrast);
      self->metric = g_strdup_printf ("logit(%s) − logit(%s)", target, contrast);
    }
  else
    self->metric = g_strdup_printf ("ln p(%s)", target);
  set_caption (self, a);
  self->hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
patch_clear (SaccadeStudyView *view)
{
  SaccadePatchView *self = SACCADE_PATCH_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->effects, g_free);
  g_clear_pointer (&self->cells, g_free);
  g_clear_pointer (&self->row_labels, g_strfreev);
  g_clear_pointer (&self->senders, g_free);
  g_clear_pointer (&self->metric, g_free);
}

static char *
patch_dup_title (SaccadeStudyView *view)
{
  return patch_title (SACCADE_PATCH_VIEW (view));
}

static gboolean
patch_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadePatchView *self = SACCADE_PATCH_VIEW (view);
  g_autofree char *title = patch_title (self);

  if (per_head (patch (self)))
    {
      SaccadeEffectsMapFigure f;
      map_figure (self, title, &f);
      return saccade_figure_export_effects_map (&f, path, NULL, error);
    }
  else
    {
      SaccadeHeatmapFigure f;
      grid_figure (self, title, &f);
      return saccade_figure_export_heatmap (&f, path, NULL, error);
    }
}

static GtkWidget *
patch_get_figure (SaccadeStudyView *view)
{
  return GTK_WIDGET (SACCADE_PATCH_VIEW (view)->area);
}

static void
saccade_patch_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = patch_show;
  iface->clear = patch_clear;
  iface->dup_title = patch_dup_title;
  iface->export_figure = patch_export_figure;
  iface->get_figure = patch_get_figure;
}

static void
saccade_patch_view_dispose (GObject *object)
{
  SaccadePatchView *self = SACCADE_PATCH_VIEW (object);

  patch_clear (SACCADE_STUDY_VIEW (self));
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_patch_view_parent_class)->dispose (object);
}

static void
saccade_patch_view_class_init (SaccadePatchViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_patch_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_patch_view_init (SaccadePatchView *self)
{
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->area), TRUE);
  self->caption = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->caption, TRUE);
  gtk_label_set_xalign (self->caption, 0);
  gtk_widget_set_margin_start (GTK_WIDGET (self->caption), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->caption), 12);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->caption), 6);
  gtk_widget_add_css_class (GTK_WIDGET (self->caption), "dim-label");
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->area));
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->caption));
  saccade_study_view_set_child (GTK_WIDGET (self), self->box);

  self->hover = -1;
  gtk_drawing_area_set_draw_func (self->area, draw, self, NULL);
  saccade_study_view_add_pointer (GTK_WIDGET (self->area), G_CALLBACK (motion),
                                  G_CALLBACK (leave), self);
  saccade_study_view_add_click (GTK_WIDGET (self->area), G_CALLBACK (released), self);
}
