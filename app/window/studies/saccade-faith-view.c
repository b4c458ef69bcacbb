/* saccade-faith-view.c — faithfulness's view (see saccade-study-views.h): the chosen
 * attention source's importance of each token against its leave-one-out importance, as a
 * scatter with bars and τ and ρ (the figure of `saccade faithfulness -o`); under it the
 * statistics that keep the number from misleading — τ's bootstrap interval, the band of τ
 * with the importance permuted over tokens, whether the first token drives the result, the
 * best head's p corrected over the heads — and their plain reading, the same numbers and
 * words as `saccade faithfulness` prints (sc_faith_sentence_stats, every input stored); then
 * the head-level table (each head statistic's Spearman ρ with the heads' zero-ablation
 * effect, when a zero-ablation sweep is stored for the run).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-faithfulness.h"
#include "app/window/pages/saccade-page.h"
#include "app/window/pages/saccade-table-column.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadeFaithView
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkDrawingArea *area;
  GtkLabel *reading;            /* the statistics and the reading of the chosen source */
  GtkLabel *head_title;
  GtkGrid *grid;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind FAITH */
  ScFaithSentenceStats *stats;  /* of the shown result (NULL: none, or they failed) */
};

static void saccade_faith_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeFaithView, saccade_faith_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_faith_view_iface_init))

static const char *const CHOICE_NAMES[SACCADE_FAITH_N_CHOICES] = {
  /* Translators: the faithfulness page's attention sources. */
  N_("Last-layer head mean"), N_("Rollout"), N_("Flow"), N_("Best head"),
  /* Translators: context-mixing sources: norm-based attention (Kobayashi et al. 2020), value
   * zeroing (Mohebbi et al. 2023), ALTI (Ferrando et al. 2022); last layer or rolled out. */
  N_("Norm-based, last layer"), N_("Norm-based, rolled out"), N_("Value zeroing, last layer"),
  N_("Value zeroing, rolled out"), N_("ALTI, last layer"), N_("ALTI, rolled out"),
};
static const char *const CHOICE_IDS[SACCADE_FAITH_N_CHOICES] = {
  "last-mean", "rollout", "flow", "best-head", "norm", "norm-rollout", "vz", "vz-rollout",
  "alti", "alti-rollout",
};

const char *
saccade_faith_choice_name (SaccadeFaithChoice c)
{
  return _(CHOICE_NAMES[(unsigned) c < SACCADE_FAITH_N_CHOICES ? c : 0]);
}

const char *
saccade_faith_choice_id (SaccadeFaithChoice c)
{
  return CHOICE_IDS[(unsigned) c < SACCADE_FAITH_N_CHOICES ? c : 0];
}

static SaccadeFaithChoice
choice (SaccadeFaithView *self)
{
  const int c = self->shown.ctx.source;
  return c >= 0 && c < SACCADE_FAITH_N_CHOICES ? (SaccadeFaithChoice) c
                                                : SACCADE_FAITH_CHOICE_LAST_MEAN;
}

/* The engine's source of a choice other than the best head. */
static ScFaithSource
engine_source (SaccadeFaithChoice c)
{
  if (c >= SACCADE_FAITH_CHOICE_NORM && c <= SACCADE_FAITH_CHOICE_ALTI_ROLLOUT)
    return SC_FAITH_SOURCE_NORM + (c - SACCADE_FAITH_CHOICE_NORM);
  return c == SACCADE_FAITH_CHOICE_ROLLOUT ? SC_FAITH_SOURCE_ROLLOUT
         : c == SACCADE_FAITH_CHOICE_FLOW  ? SC_FAITH_SOURCE_FLOW
                                           : SC_FAITH_SOURCE_LAST_MEAN;
}

static char *
faith_title (SaccadeFaithView *self)
{
  const SaccadeAblation *a = self->shown.result;
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);
  g_autofree char *source = NULL;

  /* The source as the middle of a sentence names it (the chooser's are capitalised). */
  if (choice (self) != SACCADE_FAITH_CHOICE_BEST_HEAD)
    source = g_strdup (saccade_faith_source_name (engine_source (choice (self))));
  else if (a != NULL && a->faith_best_head >= 0)
    /* Translators: the best head in the faithfulness title: its layer and head. */
    source = g_strdup_printf (_("best head L%d.H%d"),
                              a->faith_best_head / a->faith->result->n_heads,
                              a->faith_best_head % a->faith->result->n_heads);
  else
    source = g_strdup (_("best head"));
  /* Translators: the faithfulness scatter's title: the source, the model, the sentence. */
  return g_strdup_printf (_("Attention (%s) against %s: %s · %s"), source,
                          a != NULL && a->faith != NULL
                            ? saccade_faith_reference_name (a->faith->result->kind)
                            : _("leave-one-out by masking"),
                          saccade_study_shown_model (&self->shown), quote);
}

/* Fills @f for the chosen source; FALSE when that source has no values here (flow over its
 * ceiling, no head with a defined τ, a best head whose row could not be read). */
static gboolean
faith_figure (SaccadeFaithView *self, const char *title, char **x_name, SaccadeScatterFigure *f)
{
  const SaccadeAblation *a = self->shown.result;
  const ScFaithResult *r = a->faith->result;
  SaccadeRun *run = self->shown.ctx.run;
  const ScFaithAgreement *agree;
  const double *x;

  saccade_faithfulness_scatter_figure (a->faith,
                                       run != NULL && run->n == r->n_tokens
                                         ? (const char *const *) run->labels : NULL,
                                       title, f);
  if (choice (self) == SACCADE_FAITH_CHOICE_BEST_HEAD)
    {
      if (a->faith_best_head < 0 || a->faith_best_row == NULL)
        return FALSE;
      agree = &r->heads[a->faith_best_head];
      x = a->faith_best_row;
      /* Translators: the scatter's x axis for the best head: its layer and head. */
      *x_name = g_strdup_printf (_("attention: best head L%d.H%d (last query)"),
                                 a->faith_best_head / r->n_heads,
                                 a->faith_best_head % r->n_heads);
    }
  else
    {
      const ScFaithSource s = engine_source (choice (self));
      agree = &r->agree[s];
      x = r->attn[s];
      if (agree->status == SC_ERR_UNSUPPORTED || isnan (x[0])) /* flow over its ceiling, a
                                                                * mixing map past the store */
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

static void
draw_faith (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeFaithView *self = data;
  g_autofree char *title = NULL, *x_name = NULL;
  SaccadeScatterFigure f;
  SaccadeFigureStyle style;

  if (self->shown.result == NULL)
    return;
  title = faith_title (self);
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

/* ------------------------------------------------------------------------------------ */
/* The statistics and the reading                                                        */

/* The chosen source's reading, which carries its numbers: τ with its interval, the band of
 * τ with the importance permuted over the tokens, τ without the first token (and whether the
 * first token drives the result), the uniform-attention baseline; for the best head, its p
 * after Holm's correction over the heads it was picked from and the heads' BH share. The
 * engine writes it (sc-faith-stats.c), so the window and `saccade faithfulness` say the same
 * words; its first letter is raised here, as a paragraph starts. */
static void
fill_reading (SaccadeFaithView *self)
{
  const ScFaithSentenceStats *st = self->stats;
  const char *reading;
  g_autofree char *first = NULL, *text = NULL;

  if (self->shown.result == NULL || st == NULL)
    {
      gtk_label_set_text (self->reading, "");
      return;
    }
  reading = choice (self) == SACCADE_FAITH_CHOICE_BEST_HEAD
              ? st->best_reading : st->source[engine_source (choice (self))].reading;
  if (*reading == '\0')
    {
      gtk_label_set_text (self->reading, "");
      return;
    }
  first = g_utf8_strup (reading, g_utf8_next_char (reading) - reading);
  text = g_strconcat (first, g_utf8_next_char (reading), NULL);
  gtk_label_set_text (self->reading, text);
}

/* ------------------------------------------------------------------------------------ */
/* The head level                                                                        */

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
fill_head_level (SaccadeFaithView *self, const SaccadeFaithfulness *f)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->grid))) != NULL)
    gtk_grid_remove (self->grid, child);
  /* A heading over the table; a quiet hint when there is none. */
  if (f->have_head_level)
    {
      gtk_widget_add_css_class (GTK_WIDGET (self->head_title), "heading");
      gtk_widget_remove_css_class (GTK_WIDGET (self->head_title), "dim-label");
    }
  else
    {
      gtk_widget_remove_css_class (GTK_WIDGET (self->head_title), "heading");
      gtk_widget_add_css_class (GTK_WIDGET (self->head_title), "dim-label");
    }
  if (!f->have_head_level)
    {
      gtk_label_set_text (self->head_title,
                          _("Head level: run the zero-ablation head sweep of this run to set "
                            "each head's ablation effect against its statistics and its DLA"));
      return;
    }
  /* Translators: the head-level table's title. */
  gtk_label_set_text (self->head_title,
                      _("Head level: Spearman ρ over the heads between each head statistic "
                        "and the head's zero-ablation effect"));
  saccade_table_grid_cell (self->grid, 0, 0, _("Per-head value"), TRUE);
  saccade_table_grid_cell (self->grid, 1, 0, _("ρ with Δ log p"), TRUE);
  saccade_table_grid_cell (self->grid, 2, 0, _("p"), TRUE);
  saccade_table_grid_cell (self->grid, 3, 0, _("ρ with TV"), TRUE);
  saccade_table_grid_cell (self->grid, 4, 0, _("p"), TRUE);
  saccade_table_grid_cell (self->grid, 5, 0, _("heads"), TRUE);
  for (int i = 0; i < f->n_head_corr; i++)
    {
      const ScFaithHeadCorr *c = &f->head_corr[i];
      char buf[5][32];
      g_snprintf (buf[0], sizeof buf[0], "%.3f", c->vs_delta_logp.rho);
      g_snprintf (buf[1], sizeof buf[1], "%.2g", c->vs_delta_logp.p);
      g_snprintf (buf[2], sizeof buf[2], "%.3f", c->vs_tv.rho);
      g_snprintf (buf[3], sizeof buf[3], "%.2g", c->vs_tv.p);
      g_snprintf (buf[4], sizeof buf[4], "%d", c->n_heads_used);
      saccade_table_grid_cell (self->grid, 0, i + 1, head_value_name (c->name), FALSE);
      for (int k = 0; k < 5; k++)
        saccade_table_grid_cell (self->grid, k + 1, i + 1, c->status == SC_OK ? buf[k] : "—", FALSE);
    }
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
faith_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeFaithView *self = SACCADE_FAITH_VIEW (view);

  const SaccadeAblation *a = result;
  gboolean same = self->shown.result == result;

  saccade_study_shown_set (&self->shown, result, ctx);
  if (!same)
    {
      /* Default resamples and seed: the numbers `saccade faithfulness` prints. The
       * bootstrap and the permutation null of the four sources at the study's 256 tokens
       * at most take well under a second; a typical sentence, milliseconds. */
      const ScFaithStatsParams sp = { 0 };
      ScError err = { 0 };
      g_clear_pointer (&self->stats, sc_faith_sentence_stats_free);
      if (sc_faith_sentence_stats (a->faith->result, &sp, &self->stats, &err) != SC_OK)
        g_warning ("faithfulness statistics: %s", err.message);
    }
  fill_reading (self);
  fill_head_level (self, a->faith);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
faith_clear (SaccadeStudyView *view)
{
  SaccadeFaithView *self = SACCADE_FAITH_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->stats, sc_faith_sentence_stats_free);
  if (self->reading != NULL)
    gtk_label_set_text (self->reading, "");
}

static char *
faith_dup_title (SaccadeStudyView *view)
{
  return faith_title (SACCADE_FAITH_VIEW (view));
}

static gboolean
faith_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeFaithView *self = SACCADE_FAITH_VIEW (view);
  g_autofree char *title = faith_title (self), *x_name = NULL;
  SaccadeScatterFigure f;

  if (!faith_figure (self, title, &x_name, &f))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("This source has no values for this run: choose another"));
      return FALSE;
    }
  return saccade_figure_export_scatter (&f, path, NULL, error);
}

static void
saccade_faith_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = faith_show;
  iface->clear = faith_clear;
  iface->dup_title = faith_dup_title;
  iface->export_figure = faith_export_figure;
}

static void
saccade_faith_view_dispose (GObject *object)
{
  SaccadeFaithView *self = SACCADE_FAITH_VIEW (object);

  faith_clear (SACCADE_STUDY_VIEW (self));
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_faith_view_parent_class)->dispose (object);
}

static void
saccade_faith_view_class_init (SaccadeFaithViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_faith_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_faith_view_init (SaccadeFaithView *self)
{
  GtkWidget *head_level = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_vexpand (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_size_request (GTK_WIDGET (self->area), -1, 300);
  gtk_drawing_area_set_draw_func (self->area, draw_faith, self, NULL);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->area));
  self->reading = GTK_LABEL (gtk_label_new (NULL));
  gtk_widget_set_name (GTK_WIDGET (self->reading), "faith-reading");
  gtk_label_set_xalign (self->reading, 0);
  gtk_label_set_wrap (self->reading, TRUE);
  gtk_label_set_selectable (self->reading, TRUE);
  gtk_widget_set_margin_start (GTK_WIDGET (self->reading), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->reading), 12);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->reading), 8);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->reading));
  gtk_widget_set_margin_start (head_level, 12);
  gtk_widget_set_margin_end (head_level, 12);
  gtk_widget_set_margin_bottom (head_level, 8);
  self->head_title = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->head_title, 0);
  gtk_label_set_wrap (self->head_title, TRUE);
  gtk_box_append (GTK_BOX (head_level), GTK_WIDGET (self->head_title));
  self->grid = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_column_spacing (self->grid, 18);
  gtk_grid_set_row_spacing (self->grid, 2);
  gtk_box_append (GTK_BOX (head_level), GTK_WIDGET (self->grid));
  gtk_box_append (GTK_BOX (self->box), head_level);
  saccade_study_view_set_child (GTK_WIDGET (self), self->box);
}
