/* saccade-qk-view.c — QK attribution's view (see saccade-study-views.h;
 * engine/study/sc-qk-study.h): one head's pre-softmax score at (query i, key j) split into
 * (query-side component) × (key-side component) parts, as a matrix on the diverging
 * red–blue map centred at 0 (symmetric range, the largest |part| saturated): rows the query
 * side, columns the key side. Every component of a late layer is 1 + layer · (heads + 1)
 * a side (291 at SmolLM2's layer 29; one more for Qwen2's Q/K bias, two for GPT-2's
 * position embedding and bias), so the map sums them by layer — the embedding, each
 * layer's heads together, each MLP, the bias and position embedding on their own — unless
 * "Each head" is on. Beside it the largest parts
 * of single components ("L17.H4 on the key side × embed on the query side: +1.234"); the
 * title states the score the forward pass computed and the sum of the parts. Hover names
 * the cell and its part. The CSV (the page's) holds every part.
 *
 * Not here: the study (saccade-ablation.c), its CSV (saccade-ablation-csv.c).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

/* The largest parts listed beside the map. */
#define QK_TOP_PARTS 12

struct _SaccadeQkView
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkDrawingArea *area;
  GtkLabel *top_label;
  GtkCheckButton *each_check;
  GtkLabel *caption;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind QK */
  float *cells;                 /* (n, n) the parts shown, summed by group, or NULL */
  double *sums;                 /* the same in double, for hover */
  GStrv names;                  /* (n) the groups' or components' names */
  int n;                        /* groups a side */
  double range;                 /* max |cell| (1 when all are 0) */
  SaccadeHeatmapGeometry geom;
};

static void saccade_qk_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeQkView, saccade_qk_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_qk_view_iface_init))

static const ScQkResult *
qk (SaccadeQkView *self)
{
  const SaccadeAblation *a = self->shown.result;
  return a != NULL && self->cells != NULL ? a->qk : NULL;
}

/* A component's name (sc_qk_component_name) as the view shows it: the components after the
 * layers' in words, the others as they are ("L3.H4", "MLP3", "embed"). Caller frees. */
static char *
component_label (const char *name)
{
  if (g_str_equal (name, "pos"))
    /* Translators: QK attribution's component of GPT-2's learned position embedding. */
    return g_strdup (_("position embedding"));
  if (g_str_equal (name, "bias"))
    /* Translators: QK attribution's component of the constants added to the queries or
     * keys: Qwen2's Q/K bias, GPT-2's LayerNorm bias through W_Q/W_K and its QKV bias. */
    return g_strdup (_("bias"));
  return g_strdup (name);
}

/* Component @c's group when summed by layer: 0 the embedding, 1 + 2 l layer l's heads,
 * 2 + 2 l its MLP (sc-qk-study.h's order: embed, L0.H0 .. L0.H(n−1), MLP0, L1.H0 ..), then
 * each component after the layers' (gpt2's position embedding, qwen2's and gpt2's bias)
 * a group of its own. */
static int
group_of (const ScQkResult *r, int c)
{
  int l, h;

  if (c == 0)
    return 0;
  if (c >= r->n_comp - r->n_extra)
    return 1 + 2 * r->layer + (c - (r->n_comp - r->n_extra));
  l = (c - 1) / (r->n_heads + 1);
  h = (c - 1) % (r->n_heads + 1);
  return h < r->n_heads ? 1 + 2 * l : 2 + 2 * l;
}

/* The cells of the map: by group, or (@each) every component. */
static void
build_cells (SaccadeQkView *self, const ScQkResult *r, gboolean each)
{
  const int C = r->n_comp;
  const int n = each ? C : 1 + 2 * r->layer + r->n_extra;
  char name[32];

  g_free (self->cells);
  g_free (self->sums);
  g_strfreev (self->names);
  self->n = n;
  self->sums = g_new0 (double, (size_t) n * n);
  self->cells = g_new (float, (size_t) n * n);
  self->names = g_new0 (char *, n + 1);
  for (int a = 0; a < C; a++)
    for (int b = 0; b < C; b++)
      {
        const int ga = each ? a : group_of (r, a), gb = each ? b : group_of (r, b);
        self->sums[(size_t) ga * n + gb] += r->parts[(size_t) a * C + b];
      }
  self->range = 0;
  for (int i = 0; i < n * n; i++)
    {
      self->cells[i] = (float) self->sums[i];
      self->range = MAX (self->range, fabs (self->sums[i]));
    }
  if (!(self->range > 0))
    self->range = 1;
  for (int g = 0; g < n; g++)
    if (each || g >= n - r->n_extra)
      {
        /* a group of its own is its component */
        const int c = each ? g : r->n_comp - (n - g);
        sc_qk_component_name (r, c, name, sizeof name);
        self->names[g] = component_label (name);
      }
    else if (g == 0)
      self->names[g] = g_strdup ("embed");
    else if (g % 2 == 1)
      /* Translators: QK attribution's group of one layer's heads, summed. */
      self->names[g] = g_strdup_printf (_("L%d heads"), (g - 1) / 2);
    else
      self->names[g] = g_strdup_printf ("MLP%d", (g - 2) / 2);
}

/* "“␣Mary”" for position @pos of the run, or "" when the run is not the study's. */
static char *
position_text (SaccadeQkView *self, int pos)
{
  const SaccadeRun *run = self->shown.ctx.run;
  const ScQkResult *r = qk (self);

  if (run == NULL || r == NULL || run->n != r->n_tokens || pos >= run->n)
    return g_strdup ("");
  return g_strdup_printf (" “%s”", run->labels[pos]);
}

static char *
qk_title (SaccadeQkView *self)
{
  const ScQkResult *r = qk (self);
  g_autofree char *quote = NULL, *qt = NULL, *kt = NULL;

  if (r == NULL)
    return g_strdup ("");
  quote = saccade_study_shown_dup_quote (&self->shown);
  qt = position_text (self, r->query);
  kt = position_text (self, r->key);
  /* Translators: QK attribution's title: the head, the query position and token, the key
   * position and token, the score, the sum of its parts, the model, the sentence. */
  return g_strdup_printf (_("QK attribution of L%d.H%d, query %d%s → key %d%s: score %.4f, "
                            "sum of the parts %.4f · %s · %s"),
                          r->layer, r->head, r->query, qt, r->key, kt, r->score, r->total,
                          saccade_study_shown_model (&self->shown), quote);
}

static void
figure (SaccadeQkView *self, const char *title, SaccadeHeatmapFigure *f)
{
  *f = (SaccadeHeatmapFigure) {
    .values = self->cells, .n_rows = self->n, .n_cols = self->n,
    .row_labels = (const char *const *) self->names,
    .col_labels = (const char *const *) self->names, .title = title,
    .colormap = SACCADE_COLORMAP_RDBU, .scale = SACCADE_SCALE_LINEAR,
    .vmin = -self->range, .vmax = self->range,
    /* Translators: the axes of QK attribution's map: the component writing the query
     * side, the one writing the key side. */
    .row_name = _("Query side"), .col_name = _("Key side"),
    .value_name = _("part of the score"),
  };
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeQkView *self = data;
  g_autofree char *title = NULL;
  SaccadeFigureStyle style;
  SaccadeHeatmapFigure f;

  if (qk (self) == NULL)
    return;
  title = qk_title (self);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  figure (self, title, &f);
  saccade_figure_heatmap_draw_full (cr, &f, NULL, &style, width, height, &self->geom);
}

static void
motion (GtkEventControllerMotion *c, double x, double y, SaccadeQkView *self)
{
  g_autofree char *text = NULL;
  int row, col;

  if (qk (self) != NULL && saccade_heatmap_geometry_cell_at (&self->geom, x, y, &row, &col))
    /* Translators: hover over QK attribution's map: the query-side and the key-side
     * component (or group), their part of the score. */
    text = g_strdup_printf (_("%s on the query side × %s on the key side: %+.4f"),
                            self->names[row], self->names[col],
                            self->sums[(size_t) row * self->n + col]);
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
}

static void
leave (GtkEventControllerMotion *c, SaccadeQkView *self)
{
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
}

/* The largest parts of single components, beside the map. */
static void
set_top (SaccadeQkView *self, const ScQkResult *r)
{
  const int C = r->n_comp, cells = C * C;
  g_autofree int *order = g_new (int, cells);
  g_autofree double *key = g_new (double, cells);
  g_autoptr (GString) text = g_string_new (NULL);
  char qn[32], kn[32];

  for (int i = 0; i < cells; i++)
    {
      order[i] = i;
      key[i] = fabs (r->parts[i]);
    }
  saccade_rank_by_key (order, cells, key);
  /* Translators: the heading of QK attribution's list of the largest parts. */
  g_string_append_printf (text, _("Largest of the %d parts:"), cells);
  for (int k = 0; k < cells && k < QK_TOP_PARTS; k++)
    {
      g_autofree char *ql = NULL, *kl = NULL;
      sc_qk_component_name (r, order[k] / C, qn, sizeof qn);
      sc_qk_component_name (r, order[k] % C, kn, sizeof kn);
      ql = component_label (qn);
      kl = component_label (kn);
      g_string_append_c (text, '\n');
      /* Translators: one part of QK attribution: the key-side component, the query-side
       * component, the part. */
      g_string_append_printf (text, _("%s on the key side × %s on the query side: %+.3f"), kl,
                              ql, r->parts[order[k]]);
    }
  /* Translators: under the list: the score and the sum of all parts. */
  g_string_append_printf (text, _("\n\nScore %.4f (the forward pass) = sum of the parts "
                                  "%.4f"), r->score, r->total);
  gtk_label_set_text (self->top_label, text->str);
}

static void
each_toggled (SaccadeQkView *self)
{
  const ScQkResult *r = qk (self);

  if (r == NULL)
    return;
  build_cells (self, r, gtk_check_button_get_active (self->each_check));
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

void
saccade_qk_view_set_each_head (SaccadeQkView *self, gboolean each)
{
  g_return_if_fail (SACCADE_IS_QK_VIEW (self));
  gtk_check_button_set_active (self->each_check, each);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
qk_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeQkView *self = SACCADE_QK_VIEW (view);
  const SaccadeAblation *a = result;
  const ScQkResult *r = a->qk;

  saccade_study_shown_set (&self->shown, a, ctx);
  build_cells (self, r, gtk_check_button_get_active (self->each_check));
  set_top (self, r);
  {
    g_autofree char *text = NULL;
    if (r->n_extra == 2)
      /* Translators: QK attribution's caption for GPT-2; %.4g: the frozen LayerNorm
       * scales. */
      text = g_strdup_printf (_("Each part is scale · q_i · k_j of one component writing the "
                                "residual at the query (row) and one at the key (column): "
                                "red raises the score, blue lowers it. The LayerNorm's scale "
                                "is frozen (σ %.4g at the query, %.4g at the key), each "
                                "component enters with its own mean taken out, and the "
                                "LayerNorm and QKV biases are the bias component, so the "
                                "parts sum to the score exactly."), r->rms_q, r->rms_k);
    else if (r->n_extra == 1)
      /* Translators: QK attribution's caption for Qwen2; %.4g: the frozen norm scales. */
      text = g_strdup_printf (_("Each part is scale · q_i · k_j of one component writing the "
                                "residual at the query (row) and one at the key (column): "
                                "red raises the score, blue lowers it. The attention norm's "
                                "scale is frozen (rms %.4g at the query, %.4g at the key), "
                                "the Q and K biases are the bias component and RoPE is "
                                "applied to each part, so the parts sum to the score "
                                "exactly."), r->rms_q, r->rms_k);
    else
      /* Translators: QK attribution's caption; %.4g: the frozen norm scales. */
      text = g_strdup_printf (_("Each part is scale · q_i · k_j of one component writing the "
                                "residual at the query (row) and one at the key (column): "
                                "red raises the score, blue lowers it. The attention norm's "
                                "scale is frozen (rms %.4g at the query, %.4g at the key) and "
                                "RoPE applied to each part, so the parts sum to the score "
                                "exactly."), r->rms_q, r->rms_k);
    gtk_label_set_text (self->caption, text);
  }
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
qk_clear (SaccadeStudyView *view)
{
  SaccadeQkView *self = SACCADE_QK_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->cells, g_free);
  g_clear_pointer (&self->sums, g_free);
  g_clear_pointer (&self->names, g_strfreev);
  self->n = 0;
}

static char *
qk_dup_title (SaccadeStudyView *view)
{
  return qk_title (SACCADE_QK_VIEW (view));
}

static gboolean
qk_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeQkView *self = SACCADE_QK_VIEW (view);
  g_autofree char *title = qk_title (self);
  SaccadeHeatmapFigure f;

  figure (self, title, &f);
  return saccade_figure_export_heatmap (&f, path, NULL, error);
}

static GtkWidget *
qk_get_figure (SaccadeStudyView *view)
{
  return GTK_WIDGET (SACCADE_QK_VIEW (view)->area);
}

static void
saccade_qk_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = qk_show;
  iface->clear = qk_clear;
  iface->dup_title = qk_dup_title;
  iface->export_figure = qk_export_figure;
  iface->get_figure = qk_get_figure;
}

static void
saccade_qk_view_dispose (GObject *object)
{
  SaccadeQkView *self = SACCADE_QK_VIEW (object);

  qk_clear (SACCADE_STUDY_VIEW (self));
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_qk_view_parent_class)->dispose (object);
}

static void
saccade_qk_view_class_init (SaccadeQkViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_qk_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_qk_view_init (SaccadeQkView *self)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *bottom = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *scroll = gtk_scrolled_window_new ();

  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->area), TRUE);
  self->top_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->top_label, 0);
  gtk_label_set_yalign (self->top_label, 0);
  gtk_label_set_selectable (self->top_label, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->top_label), "numeric");
  gtk_widget_set_margin_top (GTK_WIDGET (self->top_label), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->top_label), 12);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), GTK_WIDGET (self->top_label));
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_propagate_natural_width (GTK_SCROLLED_WINDOW (scroll), TRUE);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->area));
  gtk_box_append (GTK_BOX (row), scroll);

  /* Translators: QK attribution's toggle: one row and column per component, not per layer. */
  self->each_check = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic (_("Each _head")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->each_check),
                               _("One row and column per head and MLP instead of their sums "
                                 "by layer"));
  gtk_widget_set_margin_start (GTK_WIDGET (self->each_check), 12);
  gtk_widget_set_valign (GTK_WIDGET (self->each_check), GTK_ALIGN_START);
  self->caption = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->caption, TRUE);
  gtk_label_set_xalign (self->caption, 0);
  gtk_widget_set_hexpand (GTK_WIDGET (self->caption), TRUE);
  gtk_widget_set_margin_end (GTK_WIDGET (self->caption), 12);
  gtk_widget_add_css_class (GTK_WIDGET (self->caption), "dim-label");
  gtk_box_append (GTK_BOX (bottom), GTK_WIDGET (self->each_check));
  gtk_box_append (GTK_BOX (bottom), GTK_WIDGET (self->caption));
  gtk_widget_set_margin_bottom (bottom, 6);

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_box_append (GTK_BOX (self->box), row);
  gtk_box_append (GTK_BOX (self->box), bottom);
  saccade_study_view_set_child (GTK_WIDGET (self), self->box);

  gtk_drawing_area_set_draw_func (self->area, draw, self, NULL);
  saccade_study_view_add_pointer (GTK_WIDGET (self->area), G_CALLBACK (motion),
                                  G_CALLBACK (leave), self);
  g_signal_connect_swapped (self->each_check, "toggled", G_CALLBACK (each_toggled), self);
}
