/* saccade-ablation-views.c — the Ablation page's further studies as figures: attention
 * permutation (the layer × head map of each head's median, its spread on hover), erasure
 * curves, direct logit attribution (its map, and beside a stored zero-ablation sweep that
 * sweep's map and the heads' scatter with τ and ρ) and faithfulness (the scatter of the
 * chosen attention source against leave-one-out with its bars, and the head-level table).
 * Each is shown, drawn, hovered, clicked and exported here; choosing, running and storing
 * are the page's (saccade-ablation-page.c), through saccade-ablation-page-private.h.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-page-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-faithfulness.h"

static const char *const SOURCE_NAMES[N_SOURCES] = {
  /* Translators: the faithfulness page's attention sources. */
  N_("Last-layer head mean"), N_("Rollout"), N_("Flow"), N_("Best head"),
};

const char *
saccade_ablation_source_name (FaithSource s)
{
  return _(SOURCE_NAMES[(unsigned) s < N_SOURCES ? s : 0]);
}

/* ------------------------------------------------------------------------------------ */
/* Attention permutation: the map of each head's median                                  */

/* The metric's spread of @h (the chooser's metrics; the loss is over the sentence). */
static const ScSpread *
perm_spread (const ScPermutationHead *h, int metric)
{
  switch (metric)
    {
    case SACCADE_ABLATION_METRIC_DELTA_LOGP:
      return &h->delta_logp;
    case SACCADE_ABLATION_METRIC_JSD:
      return &h->jsd;
    case SACCADE_ABLATION_METRIC_DELTA_LOSS:
      return &h->delta_loss;
    case SACCADE_ABLATION_METRIC_TV:
    default:
      return &h->tv;
    }
}

/* The studied head at layer-major index @i, or NULL. */
static const ScPermutationHead *
perm_head (const ScPermutationResult *r, int i)
{
  for (int k = 0; k < r->n_studied; k++)
    if (r->heads[k].layer * r->n_heads + r->heads[k].head == i)
      return &r->heads[k];
  return NULL;
}

char *
saccade_ablation_perm_title (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_PERMUTE];
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");

  /* Translators: the permutation map's title: permutations per head, the metric, the
   * model, the sentence. */
  return g_strdup_printf (_("Permuting each head's attention (%d per head), median %s: %s · %s"),
                          a != NULL ? a->perm->n_permutations : 0,
                          saccade_ablation_metric_short (saccade_ablation_chosen_metric (self)),
                          run != NULL ? run->model_name : "", quote);
}

static void
perm_figure (SaccadeAblationPage *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScPermutationResult *r = self->results[SACCADE_ABLATION_PERMUTE]->perm;

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = r->n_layers, .n_heads = r->n_heads, .values = self->perm_cells,
    .flipped = self->perm_flipped, .value_name = saccade_ablation_metric_name (saccade_ablation_chosen_metric (self)),
    /* Translators: the mark on heads whose permutations changed the predicted token. */
    .flip_name = _("top-1 changed in at least half the permutations"),
    .layer_name = _("Layer"), .head_name = _("Head"), .title = title,
  };
}

void
saccade_ablation_show_perm (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  const ScPermutationResult *r = a->perm;
  const int n = r->n_layers * r->n_heads, metric = saccade_ablation_chosen_metric (self);

  g_free (self->perm_cells);
  g_free (self->perm_flipped);
  self->perm_cells = g_new (double, n);
  self->perm_flipped = g_new0 (gboolean, n);
  for (int i = 0; i < n; i++)
    self->perm_cells[i] = NAN; /* a head not studied */
  for (int k = 0; k < r->n_studied; k++)
    {
      const ScPermutationHead *h = &r->heads[k];
      const int i = h->layer * r->n_heads + h->head;
      if (i < 0 || i >= n)
        continue;
      self->perm_cells[i] = perm_spread (h, metric)->median;
      self->perm_flipped[i] = h->flip_share >= 0.5;
    }
  self->perm_hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->perm_area));
}

static void
draw_perm (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  g_autofree char *title = NULL;
  SaccadeEffectsMapFigure f;
  SaccadeFigureStyle style;

  if (self->results[SACCADE_ABLATION_PERMUTE] == NULL || self->perm_cells == NULL)
    return;
  title = saccade_ablation_perm_title (self);
  perm_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_effects_map_draw_full (cr, &f, &style,
                                        self->perm_hover >= 0 ? self->perm_hover / f.n_heads : -1,
                                        self->perm_hover >= 0 ? self->perm_hover % f.n_heads : -1,
                                        width, height, &self->perm_geom);
}

/* The hover text of head @i: its median, the q25–q75 spread, min–max, the flip share. */
static char *
perm_hover_text (SaccadeAblationPage *self, int i)
{
  const ScPermutationResult *r = self->results[SACCADE_ABLATION_PERMUTE]->perm;
  const ScPermutationHead *h = perm_head (r, i);
  const int metric = saccade_ablation_chosen_metric (self);
  const ScSpread *sp;

  if (h == NULL)
    /* Translators: hover over a head the permutation study did not study. */
    return g_strdup_printf (_("layer %d head %d: not studied"), i / r->n_heads, i % r->n_heads);
  sp = perm_spread (h, metric);
  /* Translators: hover over a head of the permutation map: layer, head, metric, median,
   * quartiles, minimum and maximum, how many permutations changed the top-1 out of N. */
  return g_strdup_printf (_("layer %d head %d: median %s = %.4g · q25–q75 %.4g – %.4g · "
                            "min–max %.4g – %.4g · top-1 changed in %d of %d"),
                          h->layer, h->head, saccade_ablation_metric_short (metric), sp->median, sp->q25,
                          sp->q75, sp->min, sp->max,
                          (int) lround (h->flip_share * r->n_permutations), r->n_permutations);
}

static void
perm_motion (GtkEventControllerMotion *c, double x, double y, SaccadeAblationPage *self)
{
  g_autofree char *text = NULL;
  int l, h, i = -1;

  if (self->results[SACCADE_ABLATION_PERMUTE] != NULL
      && saccade_effects_map_geometry_head_at (&self->perm_geom, x, y, &l, &h))
    i = l * self->perm_geom.n_heads + h;
  if (i == self->perm_hover)
    return;
  self->perm_hover = i;
  if (i >= 0)
    text = perm_hover_text (self, i);
  gtk_label_set_text (self->hover_label, text != NULL ? text : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->perm_area), text);
  gtk_widget_queue_draw (GTK_WIDGET (self->perm_area));
}

static void
perm_leave (GtkEventControllerMotion *c, SaccadeAblationPage *self)
{
  self->perm_hover = -1;
  gtk_label_set_text (self->hover_label, "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->perm_area), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->perm_area));
}

static void
perm_released (GtkGestureClick *g, int n_press, double x, double y, SaccadeAblationPage *self)
{
  int l, h;

  if (self->results[SACCADE_ABLATION_PERMUTE] != NULL
      && saccade_effects_map_geometry_head_at (&self->perm_geom, x, y, &l, &h))
    saccade_ablation_open_head (self, l, h);
}

gboolean
saccade_ablation_export_perm_figure (SaccadeAblationPage *self, const SaccadeAblation *a, const char *path,
                    GError **error)
{
  g_autofree char *title = saccade_ablation_perm_title (self);
  SaccadeEffectsMapFigure f;

  perm_figure (self, title, &f);
  return saccade_figure_export_effects_map (&f, path, error);
}

/* "≈ 2,160 runs" beside the spin button: N × the model's heads. */
void
saccade_ablation_update_runs_label (SaccadeAblationPage *self)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  const int n = gtk_spin_button_get_value_as_int (self->permutations_spin);
  g_autofree char *text = NULL;

  if (model != NULL)
    {
      const ScModelInfo *info = sc_model_info (saccade_loaded_model_get_model (model));
      const int heads = (int) (info->n_layers * info->n_heads);
      /* Translators: the permutation study's size: N × heads = runs of the sentence. */
      text = g_strdup_printf (_("%d × %d heads = %d runs"), n, heads, n * heads);
      /* Past a thousand runs a study takes minutes on a laptop's CPU: say so in colour. */
      if (n * heads > 1000)
        gtk_widget_add_css_class (GTK_WIDGET (self->runs_label), "warning");
      else
        gtk_widget_remove_css_class (GTK_WIDGET (self->runs_label), "warning");
    }
  gtk_label_set_text (self->runs_label, text != NULL ? text : "");
}

/* ------------------------------------------------------------------------------------ */
/* Erasure curves                                                                        */

char *
saccade_ablation_erasure_title (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_ERASURE];
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");
  const gboolean drop = a != NULL && a->erasure->kind == SC_ERASE_DROP;

  /* Translators: the erasure figure's title: mask or drop, the model, the sentence. */
  return g_strdup_printf (_("Erasing tokens until the top-1 flips (%s): %s · %s"),
                          drop ? _("drop") : _("mask"), run != NULL ? run->model_name : "",
                          quote);
}

static const char *
ordering_name (ScEraseOrdering o)
{
  switch (o)
    {
    case SC_ERASE_ORDER_ATTENTION:
      /* Translators: an erasure ordering: by the last layer's mean attention. */
      return _("attention (last-layer mean)");
    case SC_ERASE_ORDER_LOO:
      return _("leave-one-out (TV)");
    case SC_ERASE_ORDER_RANDOM:
      return _("random");
    default:
      return _("gradient");
    }
}

void
saccade_ablation_show_erasure (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  const ScErasureResult *r = a->erasure;

  g_free (self->series);
  g_strfreev (self->series_names);
  self->series = g_new0 (SaccadeErasureSeries, r->n_curves);
  self->series_names = g_new0 (char *, r->n_curves + 1);
  for (int c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *cv = &r->curves[c];
      self->series_names[c] =
        cv->ordering == SC_ERASE_ORDER_RANDOM
          /* Translators: one random erasure order, by its seed's index. */
          ? g_strdup_printf (_("random #%d"), cv->seed_index)
          : g_strdup (ordering_name (cv->ordering));
      self->series[c] = (SaccadeErasureSeries) {
        .name = self->series_names[c], .p_target = cv->p_target, .fraction = cv->fraction,
        .random = cv->ordering == SC_ERASE_ORDER_RANDOM,
      };
    }
  gtk_widget_queue_draw (GTK_WIDGET (self->erasure_area));
}

static void
erasure_figure (SaccadeAblationPage *self, const char *title, SaccadeErasureFigure *f)
{
  const ScErasureResult *r = self->results[SACCADE_ABLATION_ERASURE]->erasure;
  bool never = false;

  *f = (SaccadeErasureFigure) {
    .n_points = r->n_tokens, .n_series = r->n_curves, .series = self->series,
    .random_median = sc_erasure_random_median (r, &never), .title = title,
  };
}

static void
draw_erasure (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  g_autofree char *title = NULL;
  SaccadeErasureFigure f;
  SaccadeFigureStyle style;

  if (self->results[SACCADE_ABLATION_ERASURE] == NULL || self->series == NULL)
    return;
  title = saccade_ablation_erasure_title (self);
  erasure_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_erasure_draw_full (cr, &f, &style, width, height);
}

gboolean
saccade_ablation_export_erasure_figure (SaccadeAblationPage *self, const SaccadeAblation *a, const char *path,
                       GError **error)
{
  g_autofree char *title = saccade_ablation_erasure_title (self);
  SaccadeErasureFigure f;

  erasure_figure (self, title, &f);
  return saccade_figure_export_erasure (&f, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Direct logit attribution, beside the zero-ablation effect                             */

char *
saccade_ablation_dla_title (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");

  /* Translators: the DLA map's title: the model, the sentence. */
  return g_strdup_printf (_("Direct logit attribution of each head: %s · %s"),
                          run != NULL ? run->model_name : "", quote);
}

static void
dla_figure (SaccadeAblationPage *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScDlaResult *d = self->results[SACCADE_ABLATION_DLA]->dla;

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = d->n_layers, .n_heads = d->n_heads, .values = d->heads,
    /* Translators: the DLA map's colour bar: logit units of the target token. */
    .value_name = _("direct logit attribution (logit)"), .layer_name = _("Layer"),
    .head_name = _("Head"), .title = title,
  };
}

static void
dla_sweep_figure (SaccadeAblationPage *self, SaccadeEffectsMapFigure *f)
{
  const ScDlaResult *d = self->results[SACCADE_ABLATION_DLA]->dla;

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = d->n_layers, .n_heads = d->n_heads, .values = self->sweep_cells,
    .value_name = saccade_ablation_metric_name (SACCADE_ABLATION_METRIC_DELTA_LOGP),
    .layer_name = _("Layer"), .head_name = _("Head"),
    /* Translators: the map beside DLA: each head's zero-ablation effect. */
    .title = _("Zero-ablation effect of each head (stored head sweep)"),
  };
}

static void
dla_scatter_figure (SaccadeAblationPage *self, SaccadeScatterFigure *f)
{
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_DLA];

  *f = (SaccadeScatterFigure) {
    .n = a->dla->n_layers * a->dla->n_heads, .x = a->dla->heads, .y = self->sweep_cells,
    /* Translators: the DLA scatter's axes and title. */
    .x_name = _("direct logit attribution (logit)"),
    .y_name = _("zero-ablation Δ log p (nats)"), .title = _("Heads: DLA against ablation"),
    .tau = self->dla_tau.tau, .tau_p = self->dla_tau.p, .rho = a->dla_rho.rho,
    .rho_p = a->dla_rho.p,
  };
}

void
saccade_ablation_show_dla (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  const ScDlaResult *d = a->dla;
  const int n = d->n_layers * d->n_heads;
  g_autofree char *note = NULL;

  g_clear_pointer (&self->sweep_cells, g_free);
  self->dla_tau.tau = self->dla_tau.p = NAN;
  if (a->dla_sweep != NULL)
    {
      self->sweep_cells = g_new (double, n);
      for (int i = 0; i < n; i++)
        self->sweep_cells[i] = a->dla_sweep->heads[i].next.delta_logp;
      if (sc_kendall_tau_b (d->heads, self->sweep_cells, n, &self->dla_tau, NULL) != SC_OK)
        self->dla_tau.tau = self->dla_tau.p = NAN;
      /* Translators: under the DLA figures: Spearman ρ over the heads and its p. */
      note = g_strdup_printf (_("Over the %d heads, DLA against the zero-ablation Δ log p: "
                                "Spearman ρ = %.3f (p = %.2g). DLA is the linear part of a "
                                "head's effect, with the final norm's scale frozen at the "
                                "clean run; ablation also changes every later layer."),
                              n, a->dla_rho.rho, a->dla_rho.p);
    }
  else
    note = g_strdup (_("Run the zero-ablation head sweep of this run to set each head's DLA "
                       "beside its ablation effect. DLA is the linear part of a head's "
                       "effect, with the final norm's scale frozen at the clean run."));
  gtk_label_set_text (self->dla_note, note);
  gtk_widget_set_visible (self->dla_beside, a->dla_sweep != NULL);
  self->dla_hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_sweep_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_scatter_area));
}

static void
draw_dla (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  g_autofree char *title = NULL;
  SaccadeEffectsMapFigure f;
  SaccadeFigureStyle style;
  const int sel = self->dla_hover;

  if (self->results[SACCADE_ABLATION_DLA] == NULL)
    return;
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  if (area == self->dla_area)
    {
      title = saccade_ablation_dla_title (self);
      dla_figure (self, title, &f);
    }
  else if (self->sweep_cells != NULL)
    dla_sweep_figure (self, &f);
  else
    return;
  saccade_figure_effects_map_draw_full (cr, &f, &style, sel >= 0 ? sel / f.n_heads : -1,
                                        sel >= 0 ? sel % f.n_heads : -1, width, height,
                                        area == self->dla_area ? &self->dla_geom
                                                               : &self->dla_sweep_geom);
}

static void
draw_dla_scatter (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  SaccadeScatterFigure f;
  SaccadeFigureStyle style;

  if (self->results[SACCADE_ABLATION_DLA] == NULL || self->sweep_cells == NULL)
    return;
  dla_scatter_figure (self, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_scatter_draw_full (cr, &f, &style, width, height, NULL);
}

static void
dla_motion (GtkEventControllerMotion *c, double x, double y, SaccadeAblationPage *self)
{
  GtkWidget *w = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (c));
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_DLA];
  const SaccadeEffectsMapGeometry *g =
    w == GTK_WIDGET (self->dla_area) ? &self->dla_geom : &self->dla_sweep_geom;
  g_autofree char *text = NULL;
  int l, h, i = -1;

  if (a != NULL && saccade_effects_map_geometry_head_at (g, x, y, &l, &h))
    i = l * a->dla->n_heads + h;
  if (i == self->dla_hover)
    return;
  self->dla_hover = i;
  if (i >= 0 && a->dla_sweep != NULL)
    /* Translators: hover over a head: layer, head, its DLA and zero-ablation Δ log p. */
    text = g_strdup_printf (_("layer %d head %d: DLA = %.4g · zero-ablation Δ log p = %.4g"),
                            l, h, a->dla->heads[i], a->dla_sweep->heads[i].next.delta_logp);
  else if (i >= 0)
    /* Translators: hover over a head: layer, head, its DLA. */
    text = g_strdup_printf (_("layer %d head %d: DLA = %.4g"), l, h, a->dla->heads[i]);
  gtk_label_set_text (self->hover_label, text != NULL ? text : "");
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_sweep_area));
}

static void
dla_leave (GtkEventControllerMotion *c, SaccadeAblationPage *self)
{
  self->dla_hover = -1;
  gtk_label_set_text (self->hover_label, "");
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_sweep_area));
}

static void
dla_released (GtkGestureClick *g, int n_press, double x, double y, SaccadeAblationPage *self)
{
  GtkWidget *w = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (g));
  int l, h;

  if (self->results[SACCADE_ABLATION_DLA] != NULL
      && saccade_effects_map_geometry_head_at (
        w == GTK_WIDGET (self->dla_area) ? &self->dla_geom : &self->dla_sweep_geom, x, y, &l,
        &h))
    saccade_ablation_open_head (self, l, h);
}

gboolean
saccade_ablation_export_dla_figure (SaccadeAblationPage *self, const SaccadeAblation *a, const char *path,
                   GError **error)
{
  g_autofree char *title = saccade_ablation_dla_title (self);
  SaccadeEffectsMapFigure f;

  dla_figure (self, title, &f);
  return saccade_figure_export_effects_map (&f, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Faithfulness: the scatter with its bars, and the head level                           */

static FaithSource
chosen_source (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->source_dropdown);
  return i < N_SOURCES ? (FaithSource) i : SOURCE_LAST_MEAN;
}

char *
saccade_ablation_faith_title (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_FAITH];
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");
  g_autofree char *source = NULL;

  /* The source as the middle of a sentence names it (the chooser's are capitalised). */
  switch (chosen_source (self))
    {
    case SOURCE_BEST_HEAD:
      if (a != NULL && a->faith_best_head >= 0)
        /* Translators: the best head in the faithfulness title: its layer and head. */
        source = g_strdup_printf (_("best head %d.%d"),
                                  a->faith_best_head / a->faith->result->n_heads,
                                  a->faith_best_head % a->faith->result->n_heads);
      else
        source = g_strdup (_("best head"));
      break;
    case SOURCE_ROLLOUT:
      source = g_strdup (saccade_faith_source_name (SC_FAITH_SOURCE_ROLLOUT));
      break;
    case SOURCE_FLOW:
      source = g_strdup (saccade_faith_source_name (SC_FAITH_SOURCE_FLOW));
      break;
    default:
      source = g_strdup (saccade_faith_source_name (SC_FAITH_SOURCE_LAST_MEAN));
      break;
    }
  /* Translators: the faithfulness scatter's title: the source, the model, the sentence. */
  return g_strdup_printf (_("Attention (%s) against leave-one-out: %s · %s"), source,
                          run != NULL ? run->model_name : "", quote);
}

/* Fills @f for the chosen source; FALSE when that source has no values here (flow over its
 * ceiling, no head with a defined τ, a best head whose row could not be read). */
static gboolean
faith_figure (SaccadeAblationPage *self, const char *title, char **x_name,
              SaccadeScatterFigure *f)
{
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_FAITH];
  const ScFaithResult *r = a->faith->result;
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const FaithSource src = chosen_source (self);
  const ScFaithAgreement *agree;
  const double *x;

  saccade_faithfulness_scatter_figure (a->faith,
                                       run != NULL && run->n == r->n_tokens
                                         ? (const char *const *) run->labels : NULL,
                                       title, f);
  if (src == SOURCE_BEST_HEAD)
    {
      if (a->faith_best_head < 0 || a->faith_best_row == NULL)
        return FALSE;
      agree = &r->heads[a->faith_best_head];
      x = a->faith_best_row;
      /* Translators: the scatter's x axis for the best head: its layer and head. */
      *x_name = g_strdup_printf (_("attention: best head %d.%d (last query)"),
                                 a->faith_best_head / r->n_heads,
                                 a->faith_best_head % r->n_heads);
    }
  else
    {
      const ScFaithSource s = src == SOURCE_ROLLOUT ? SC_FAITH_SOURCE_ROLLOUT
                              : src == SOURCE_FLOW  ? SC_FAITH_SOURCE_FLOW
                                                    : SC_FAITH_SOURCE_LAST_MEAN;
      agree = &r->agree[s];
      x = r->attn[s];
      if (agree->status == SC_ERR_UNSUPPORTED || (s == SC_FAITH_SOURCE_FLOW && isnan (x[0])))
        return FALSE;
      /* Translators: the scatter's x axis: the attention source. */
      *x_name = g_strdup_printf (_("attention: %s"), saccade_faith_source_name (s));
    }
  f->x = x;
  f->x_name = *x_name;
  f->tau = agree->tau;
  f->tau_p = agree->tau_p;
  f->rho = agree->rho;
  f->rho_p = agree->rho_p;
  return TRUE;
}

/* The head level's per-head vectors by their stored names (sc-faithfulness.h), translated. */
static const char *
head_value_name (const char *name)
{
  static const struct { const char *id, *text; } NAMES[] = {
    /* Translators: the head level's rows: each head's statistic of the clean run. */
    { "entropy", N_("Entropy (nats)") },
    { "confidence", N_("Confidence (max weight)") },
    { "sink", N_("Sink mass") },
    { "previous-token", N_("Previous-token score") },
    { "dla", N_("Direct logit attribution") },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (NAMES); i++)
    if (g_str_equal (name, NAMES[i].id))
      return _(NAMES[i].text);
  return name;
}

static void
grid_label (GtkGrid *grid, int col, int row, const char *text, gboolean heading)
{
  GtkWidget *l = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (l), col == 0 ? 0.0f : 1.0f);
  gtk_widget_add_css_class (l, heading ? "dim-label" : "numeric");
  gtk_grid_attach (grid, l, col, row, 1, 1);
}

void
saccade_ablation_show_faith (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  const SaccadeFaithfulness *f = a->faith;
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->faith_grid))) != NULL)
    gtk_grid_remove (self->faith_grid, child);
  /* A heading over the table; a quiet hint when there is none. */
  if (f->have_head_level)
    {
      gtk_widget_add_css_class (GTK_WIDGET (self->faith_head_title), "heading");
      gtk_widget_remove_css_class (GTK_WIDGET (self->faith_head_title), "dim-label");
    }
  else
    {
      gtk_widget_remove_css_class (GTK_WIDGET (self->faith_head_title), "heading");
      gtk_widget_add_css_class (GTK_WIDGET (self->faith_head_title), "dim-label");
    }
  if (!f->have_head_level)
    gtk_label_set_text (self->faith_head_title,
                        _("Head level: run the zero-ablation head sweep of this run to set each "
                          "head's ablation effect against its statistics and its DLA"));
  else
    {
      /* Translators: the head-level table's title. */
      gtk_label_set_text (self->faith_head_title,
                          _("Head level: Spearman ρ over the heads between each head statistic "
                            "and the head's zero-ablation effect"));
      grid_label (self->faith_grid, 0, 0, _("Per-head value"), TRUE);
      grid_label (self->faith_grid, 1, 0, _("ρ with Δ log p"), TRUE);
      grid_label (self->faith_grid, 2, 0, _("p"), TRUE);
      grid_label (self->faith_grid, 3, 0, _("ρ with TV"), TRUE);
      grid_label (self->faith_grid, 4, 0, _("p"), TRUE);
      grid_label (self->faith_grid, 5, 0, _("heads"), TRUE);
      for (int i = 0; i < f->n_head_corr; i++)
        {
          const ScFaithHeadCorr *c = &f->head_corr[i];
          char buf[5][32];
          g_snprintf (buf[0], sizeof buf[0], "%.3f", c->vs_delta_logp.rho);
          g_snprintf (buf[1], sizeof buf[1], "%.2g", c->vs_delta_logp.p);
          g_snprintf (buf[2], sizeof buf[2], "%.3f", c->vs_tv.rho);
          g_snprintf (buf[3], sizeof buf[3], "%.2g", c->vs_tv.p);
          g_snprintf (buf[4], sizeof buf[4], "%d", c->n_heads_used);
          grid_label (self->faith_grid, 0, i + 1, head_value_name (c->name), FALSE);
          for (int k = 0; k < 5; k++)
            grid_label (self->faith_grid, k + 1, i + 1, c->status == SC_OK ? buf[k] : "—",
                        FALSE);
        }
    }
  gtk_widget_queue_draw (GTK_WIDGET (self->faith_area));
}

static void
draw_faith (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  g_autofree char *title = NULL, *x_name = NULL;
  SaccadeScatterFigure f;
  SaccadeFigureStyle style;

  if (self->results[SACCADE_ABLATION_FAITH] == NULL)
    return;
  title = saccade_ablation_faith_title (self);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  if (!faith_figure (self, title, &x_name, &f))
    {
      PangoLayout *layout = gtk_widget_create_pango_layout (
        GTK_WIDGET (area), _("This source has no values for this run (flow over its size "
                             "limit, or no head with a defined τ)"));
      cairo_set_source_rgba (cr, style.fg[0], style.fg[1], style.fg[2], 0.7);
      cairo_move_to (cr, 24, 24);
      pango_cairo_show_layout (cr, layout);
      g_object_unref (layout);
      return;
    }
  saccade_figure_scatter_draw_full (cr, &f, &style, width, height, NULL);
}

gboolean
saccade_ablation_export_faith_figure (SaccadeAblationPage *self, const SaccadeAblation *a, const char *path,
                     GError **error)
{
  g_autofree char *title = saccade_ablation_faith_title (self), *x_name = NULL;
  SaccadeScatterFigure f;

  if (!faith_figure (self, title, &x_name, &f))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("This source has no values for this run: choose another"));
      return FALSE;
    }
  return saccade_figure_export_scatter (&f, path, error);
}


/* ------------------------------------------------------------------------------------ */
/* Wiring                                                                                */

static void
connect_pointer (SaccadeAblationPage *self, GtkDrawingArea *area, GCallback motion,
                 GCallback leave)
{
  GtkEventController *c = gtk_event_controller_motion_new ();

  g_signal_connect (c, "motion", motion, self);
  g_signal_connect (c, "leave", leave, self);
  gtk_widget_add_controller (GTK_WIDGET (area), c);
}

static void
add_click (SaccadeAblationPage *self, GtkDrawingArea *area, GCallback released)
{
  GtkGesture *click = gtk_gesture_click_new ();

  g_signal_connect (click, "released", released, self);
  gtk_widget_add_controller (GTK_WIDGET (area), GTK_EVENT_CONTROLLER (click));
}

void
saccade_ablation_views_init (SaccadeAblationPage *self)
{
  gtk_drawing_area_set_draw_func (self->perm_area, draw_perm, self, NULL);
  gtk_drawing_area_set_draw_func (self->erasure_area, draw_erasure, self, NULL);
  gtk_drawing_area_set_draw_func (self->dla_area, draw_dla, self, NULL);
  gtk_drawing_area_set_draw_func (self->dla_sweep_area, draw_dla, self, NULL);
  gtk_drawing_area_set_draw_func (self->dla_scatter_area, draw_dla_scatter, self, NULL);
  gtk_drawing_area_set_draw_func (self->faith_area, draw_faith, self, NULL);
  connect_pointer (self, self->perm_area, G_CALLBACK (perm_motion), G_CALLBACK (perm_leave));
  connect_pointer (self, self->dla_area, G_CALLBACK (dla_motion), G_CALLBACK (dla_leave));
  connect_pointer (self, self->dla_sweep_area, G_CALLBACK (dla_motion), G_CALLBACK (dla_leave));
  add_click (self, self->perm_area, G_CALLBACK (perm_released));
  add_click (self, self->dla_area, G_CALLBACK (dla_released));
  add_click (self, self->dla_sweep_area, G_CALLBACK (dla_released));
}

void
saccade_ablation_views_clear (SaccadeAblationPage *self)
{
  g_clear_pointer (&self->perm_cells, g_free);
  g_clear_pointer (&self->perm_flipped, g_free);
  g_clear_pointer (&self->sweep_cells, g_free);
  g_clear_pointer (&self->series, g_free);
  g_clear_pointer (&self->series_names, g_strfreev);
}
