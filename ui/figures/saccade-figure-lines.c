/* saccade-figure-lines.c — one layer as BertViz's "head view": the renderer shared by
 * SaccadeLinesView and export (saccade-figure.h), and the choice of the links it draws
 * (saccade-figure-lines.h).
 *
 * The tokens stand in two columns, queries on the left and keys on the right; for every
 * head, query i is joined to key j by a line in the head's colour whose opacity is the
 * weight A[i, j] (Vig 2019). Only the strongest links are drawn: per query and head those
 * of at least a threshold, at most the top k (saccade-figure-lines.h says why per head), so
 * a 1,000-token layer is thousands of lines rather than a wall of 9 million. Overlapping
 * heads add up, so where many heads agree the line is dark. A highlighted token keeps its
 * own lines at full strength and fades the rest. A legend of head colours stands where the
 * other figures have their colour bar; it names each head by its index in the layer
 * (head_ids), so a figure of head 4 alone says "4". A figure of a range of a long run shows
 * the run's positions beside the labels.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-lines.h"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_MAX_EM 12.0
#define LABEL_MIN_SIZE 6.0
/* The opacity kept by lines that do not touch the highlighted token. */
#define FADED 0.08
/* Strokes between two looks at the cancellable: a few milliseconds of Cairo work. */
#define CANCEL_EVERY 512

/* ------------------------------------------------------------------------------------ */
/* Choosing the links                                                                    */

SaccadeLinesLinks *
saccade_lines_links_new (int n_heads, int q0, int q1, double threshold, int top_k)
{
  SaccadeLinesLinks *links;

  g_return_val_if_fail (n_heads >= 0 && q0 >= 0 && q1 >= q0, NULL);

  links = g_new0 (SaccadeLinesLinks, 1);
  g_atomic_ref_count_init (&links->ref);
  links->n_heads = n_heads;
  links->q0 = q0;
  links->q1 = q1;
  /* !(t >= min) also catches NaN. */
  links->threshold = !(threshold >= SACCADE_LINES_MIN_WEIGHT) ? SACCADE_LINES_MIN_WEIGHT
                                                               : threshold;
  links->top_k = MAX (top_k, 0);
  return links;
}

static void
links_append (SaccadeLinesLinks *links, const SaccadeLink *link)
{
  if (links->n_links == links->capacity)
    {
      links->capacity = MAX (256, 2 * links->capacity);
      links->links = g_renew (SaccadeLink, links->links, links->capacity);
    }
  links->links[links->n_links++] = *link;
}

gboolean
saccade_lines_links_add_head (SaccadeLinesLinks *links, int head, const float *rows, int key0,
                              int n_keys, GCancellable *cancellable)
{
  g_autofree SaccadeLink *best = NULL;
  float thr;
  int k;

  g_return_val_if_fail (links != NULL && !links->finished, FALSE);
  g_return_val_if_fail (head >= 0 && head < links->n_heads, FALSE);
  g_return_val_if_fail (key0 >= 0 && n_keys >= 0, FALSE);
  g_return_val_if_fail (rows != NULL || links->q1 == links->q0 || n_keys == 0, FALSE);

  k = links->top_k;
  thr = (float) links->threshold;
  best = k > 0 ? g_new (SaccadeLink, k) : NULL;

  for (int r = 0; r < links->q1 - links->q0; r++)
    {
      const float *a = rows + (gsize) r * n_keys;
      int n_best = 0;

      /* A look at the cancellable every 64 rows: about 64 x 4,000 reads, well under a
       * millisecond. */
      if (r % 64 == 0 && g_cancellable_is_cancelled (cancellable))
        return FALSE;
      for (int c = 0; c < n_keys; c++)
        {
          float w = a[c];
          SaccadeLink link = { links->q0 + r, key0 + c, head, w };
          int at;

          if (!(w >= thr) || !isfinite (w))
            continue;
          if (k == 0)
            {
              links_append (links, &link);
              continue;
            }
          /* best[] holds the row's strongest so far, strongest first. Keys come in
           * ascending order, so an equal weight goes after the ones already kept: a tie at
           * the k-th place keeps the earlier key. */
          for (at = n_best; at > 0 && best[at - 1].weight < w; at--)
            ;
          if (at >= k)
            continue;
          memmove (best + at + 1, best + at,
                   (gsize) (MIN (n_best, k - 1) - at) * sizeof (SaccadeLink));
          best[at] = link;
          n_best = MIN (n_best + 1, k);
        }
      for (int i = 0; i < n_best; i++)
        links_append (links, &best[i]);
    }
  return TRUE;
}

static int
cmp_link (const void *a, const void *b)
{
  const SaccadeLink *x = a, *y = b;

  if (x->weight != y->weight)
    return x->weight < y->weight ? -1 : 1;
  if (x->head != y->head)
    return x->head < y->head ? -1 : 1;
  if (x->query != y->query)
    return x->query < y->query ? -1 : 1;
  return (x->key > y->key) - (x->key < y->key);
}

void
saccade_lines_links_finish (SaccadeLinesLinks *links)
{
  g_return_if_fail (links != NULL && !links->finished);

  if (links->n_links > 0)
    qsort (links->links, links->n_links, sizeof (SaccadeLink), cmp_link);
  links->finished = TRUE;
}

SaccadeLinesLinks *
saccade_lines_links_select (const float *heads, int n_heads, int q0, int q1, int key0,
                            int n_keys, double threshold, int top_k, GCancellable *cancellable)
{
  g_autoptr (SaccadeLinesLinks) links = saccade_lines_links_new (n_heads, q0, q1, threshold,
                                                                 top_k);
  gsize per_head = (gsize) (q1 - q0) * MAX (n_keys, 0);

  if (links == NULL)
    return NULL;
  for (int h = 0; h < n_heads; h++)
    if (!saccade_lines_links_add_head (links, h, heads + h * per_head, key0, n_keys,
                                       cancellable))
      return NULL;
  saccade_lines_links_finish (links);
  return g_steal_pointer (&links);
}

SaccadeLinesLinks *
saccade_lines_links_ref (SaccadeLinesLinks *links)
{
  g_return_val_if_fail (links != NULL, NULL);
  g_atomic_ref_count_inc (&links->ref);
  return links;
}

void
saccade_lines_links_unref (SaccadeLinesLinks *links)
{
  if (links == NULL || !g_atomic_ref_count_dec (&links->ref))
    return;
  g_free (links->links);
  g_free (links);
}

/* ------------------------------------------------------------------------------------ */
/* What a figure draws: its display labels, its links and the heads it shows             */

typedef struct {
  const char *const *labels;  /* (n) what the label columns show */
  char **owned_labels;        /* "812 ␣cat" when positions are shown */
  const SaccadeLinesLinks *links;
  SaccadeLinesLinks *owned_links;  /* chosen here from f->heads */
  gboolean *shown;            /* (links->n_heads) the heads drawn */
  gboolean above, below;      /* some link drawn goes to a key before (after) the tokens */
  gboolean cancelled;
} Resolved;

/* Head @k of the figure: its index in the layer and its colour there. */
static int
head_id (const SaccadeLinesFigure *f, int k)
{
  return f->head_ids != NULL ? f->head_ids[k] : k;
}

static int
heads_total (const SaccadeLinesFigure *f)
{
  int total = f->n_heads_total > 0 ? f->n_heads_total : f->n_heads;

  for (int k = 0; k < f->n_heads; k++)
    total = MAX (total, head_id (f, k) + 1);
  return total;
}

static void
head_rgb (const SaccadeLinesFigure *f, int k, double rgb[3])
{
  saccade_figure_head_color (head_id (f, k), heads_total (f), rgb);
}

static gboolean
figure_has_data (const SaccadeLinesFigure *f)
{
  return f->n > 0 && (f->links != NULL || (f->heads != NULL && f->n_heads > 0));
}

/* Fills @res for @f: the labels when @with_labels; the links and shown heads when
 * @with_links (drawing from heads chooses them here, which a cancelled @cancellable stops). */
static void
resolve (const SaccadeLinesFigure *f, gboolean with_labels, gboolean with_links,
         GCancellable *cancellable, Resolved *res)
{
  *res = (Resolved) { .labels = f->labels };
  if (with_labels && (f->show_positions || (f->labels == NULL && f->position0 != 0)))
    {
      res->owned_labels = g_new0 (char *, (gsize) f->n + 1);
      for (int i = 0; i < f->n; i++)
        res->owned_labels[i] = f->labels != NULL
                               ? g_strdup_printf ("%d %s", f->position0 + i, f->labels[i])
                               : g_strdup_printf ("%d", f->position0 + i);
      res->labels = (const char *const *) res->owned_labels;
    }
  if (!with_links || !figure_has_data (f))
    return;
  if (f->links != NULL)
    res->links = f->links;
  else
    {
      /* The block is the figure's tokens: rows and columns are positions position0 + i. */
      gsize per_head = (gsize) f->n * f->n;
      res->owned_links = saccade_lines_links_new (heads_total (f), f->position0,
                                                  f->position0 + f->n,
                                                  f->threshold > 0 ? f->threshold
                                                                   : SACCADE_LINES_MIN_WEIGHT,
                                                  f->top_k);
      for (int k = 0; k < f->n_heads && !res->cancelled; k++)
        res->cancelled = !saccade_lines_links_add_head (res->owned_links, head_id (f, k),
                                                        f->heads + k * per_head, f->position0,
                                                        f->n, cancellable);
      saccade_lines_links_finish (res->owned_links);
      res->links = res->owned_links;
    }
  res->shown = g_new0 (gboolean, MAX (res->links->n_heads, 1));
  for (int k = 0; k < (f->head_ids != NULL ? f->n_heads : res->links->n_heads); k++)
    if (head_id (f, k) >= 0 && head_id (f, k) < res->links->n_heads)
      res->shown[head_id (f, k)] = TRUE;
  for (guint i = 0; i < res->links->n_links; i++)
    {
      const SaccadeLink *link = &res->links->links[i];
      if (res->shown[link->head] && link->query >= f->position0
          && link->query < f->position0 + f->n)
        {
          res->above = res->above || link->key < f->position0;
          res->below = res->below || link->key >= f->position0 + f->n;
        }
    }
}

static void
resolved_clear (Resolved *res)
{
  g_strfreev (res->owned_labels);
  saccade_lines_links_unref (res->owned_links);
  g_free (res->shown);
  *res = (Resolved) { 0 };
}

/* Whether @link is drawn: a shown head, its query among the figure's tokens. A key before
 * (after) the tokens is drawn to the top (bottom) end of the key column, so that a range
 * still shows where its queries look when that is outside it (a sink at position 0). */
static inline gboolean
link_drawn (const SaccadeLinesFigure *f, const Resolved *res, const SaccadeLink *link)
{
  return res->shown[link->head] && link->query >= f->position0
         && link->query < f->position0 + f->n;
}

/* The key column's caption: it says where lines to keys outside the tokens end. */
static const char *
key_caption (const Resolved *res)
{
  if (res->above && res->below)
    return _("Key (↑↓ outside)");
  if (res->above)
    return _("Key (↑ earlier)");
  if (res->below)
    return _("Key (↓ later)");
  return _("Key");
}

guint
saccade_figure_lines_count (const SaccadeLinesFigure *f)
{
  Resolved res;
  guint count = 0;

  g_return_val_if_fail (f != NULL, 0);
  resolve (f, FALSE, TRUE, NULL, &res);
  for (guint i = 0; res.links != NULL && i < res.links->n_links; i++)
    count += link_drawn (f, &res, &res.links->links[i]);
  resolved_clear (&res);
  return count;
}

/* ------------------------------------------------------------------------------------ */
/* Layout                                                                                */

typedef struct {
  double fs, pad, gap, lf, lh;
  double top;             /* where the title goes: centred with the legend and rows */
  double title_h, legend_h;
  int step;
  double label_w, lines_w;
  SaccadeLinesGeometry g;
} Layout;

/* The labels' font size for rows of @row_h: the base size while rows are 1.3 of it, then
 * shrinking with the rows down to LABEL_MIN_SIZE (below that labels thin out). */
static double
label_size (double fs, double row_h)
{
  return row_h >= 1.3 * fs ? fs : MAX (row_h / 1.3, MIN (fs, LABEL_MIN_SIZE));
}

/* The lines' span: near the columns' height for a sentence (slopes stay readable), within
 * 24 to 48 font sizes (a long text does not make a banner). */
static double
lines_width (const Layout *L, int n)
{
  return CLAMP (0.8 * n * L->g.row_h, 24 * L->fs, 48 * L->fs);
}

static void
layout_compute (cairo_t *cr, const SaccadeLinesFigure *f, const Resolved *res,
                const SaccadeFigureStyle *style, double W, double H, Layout *L)
{
  const char *const *labels = res->labels;
  double caption_w;
  g_autoptr (PangoLayout) text = NULL;
  double label_w0, lh0, avail_h, w, h;

  L->fs = saccade_figure_font_size (style);
  L->pad = L->fs;
  L->gap = 0.5 * L->fs;
  L->title_h = 0;
  if (f->title != NULL && *f->title != '\0')
    {
      g_autoptr (PangoLayout) title = saccade_figure_layout_new (cr, style, 1.3 * L->fs, TRUE);
      saccade_figure_layout_set (title, f->title, &w, &h);
      L->title_h = saccade_figure_title_band (cr, style, f->title, W, h + 0.6 * L->fs);
    }
  text = saccade_figure_layout_new (cr, style, L->fs, FALSE);
  saccade_figure_layout_set (text, "Ag", NULL, &L->lh);
  /* The legend line, then the column captions. */
  L->legend_h = 2 * L->lh + 1.2 * L->fs;
  pango_layout_set_width (text, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  label_w0 = saccade_figure_labels_max_width (text, labels, f->n, &lh0);

  avail_h = H - 2 * L->pad - L->title_h - L->legend_h;
  L->g.n = f->n;
  L->g.row_h = MAX (1e-3, MIN (avail_h / MAX (f->n, 1), 2.4 * L->fs));
  L->lf = label_size (L->fs, L->g.row_h);
  L->step = MAX (1, (int) ceil (1.2 * L->lf / L->g.row_h));
  L->label_w = label_w0 * L->lf / L->fs;
  /* The key caption stands over the key labels: the column is at least as wide. */
  {
    g_autoptr (PangoLayout) small = saccade_figure_layout_new (cr, style, 0.9 * L->fs, FALSE);
    saccade_figure_layout_set (small, key_caption (res), &caption_w, NULL);
    L->label_w = MAX (L->label_w, caption_w);
  }
  L->lines_w = MAX (4 * L->fs, W - 2 * L->pad - 2 * L->label_w - 2 * L->gap);
  L->lines_w = MIN (L->lines_w, lines_width (L, f->n));
  {
    double block_w = 2 * L->label_w + 2 * L->gap + L->lines_w;
    double x0 = MAX (L->pad, (W - block_w) / 2);
    L->g.label_w = L->label_w;
    L->g.left_x = x0 + L->label_w;
    L->g.right_x = L->g.left_x + 2 * L->gap + L->lines_w;
    L->top = L->pad + MAX (0.0, (avail_h - f->n * L->g.row_h) / 2);
    L->g.y0 = L->top + L->title_h + L->legend_h;
  }
}

void
saccade_figure_lines_natural_size (const SaccadeLinesFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  Resolved res;
  Layout L;

  saccade_figure_style_init (&style);
  resolve (f, TRUE, TRUE, NULL, &res);
  layout_compute (cr, f, &res, &style, 1e5, 1e5, &L);
  /* Rows of 1.9 font sizes up to 60 tokens, then the figure stops growing (1200 units of
   * rows) and labels thin out. */
  *H = 2 * L.pad + L.title_h + L.legend_h + MIN (f->n * 1.9 * L.fs, 1200.0);
  layout_compute (cr, f, &res, &style, 1e5, *H, &L);
  *W = ceil (2 * L.pad + 2 * L.label_w + 2 * L.gap + lines_width (&L, f->n) + 1);
  *H = ceil (*H + 1);
  *W = MAX (*W, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  resolved_clear (&res);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

static double
row_y (const Layout *L, int i)
{
  return L->g.y0 + (i + 0.5) * L->g.row_h;
}

/* Where a line ends in the key column for key @j of the @n tokens: its row, or for a key
 * outside the tokens past the end of the column on its side by half a row (at most half a
 * font size), so that it does not read as the first or last row. */
static double
key_y (const Layout *L, int n, int j)
{
  double out = MIN (0.5 * L->g.row_h, 0.5 * L->fs);

  return j < 0 ? L->g.y0 - out : j >= n ? L->g.y0 + n * L->g.row_h + out : row_y (L, j);
}

/* What opacity means and which links are drawn, e.g. "opacity = weight · ≥ 0.1, top 3 per
 * query and head". Caller frees. */
static char *
links_caption (const Resolved *res)
{
  g_autofree char *thr = NULL;

  if (res->links == NULL || (res->links->threshold <= SACCADE_LINES_MIN_WEIGHT
                             && res->links->top_k == 0))
    return g_strdup (_("line opacity = weight"));
  thr = g_strdup_printf ("%.3g", res->links->threshold);
  if (res->links->top_k == 0)
    /* Translators: the lines figure's caption; %s is the least weight drawn, e.g. "0.1". */
    return g_strdup_printf (_("opacity = weight · ≥ %s"), thr);
  /* Translators: the lines figure's caption; %s is the least weight drawn ("0.1"), %d how
   * many links each query keeps per head. */
  return g_strdup_printf (_("opacity = weight · ≥ %s, top %d per query and head"), thr,
                          res->links->top_k);
}

static void
draw_legend (cairo_t *cr, const SaccadeLinesFigure *f, const Resolved *res,
             const SaccadeFigureStyle *style, const Layout *L, double W)
{
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, 0.9 * L->fs, FALSE);
  g_autofree char *caption = links_caption (res);
  double y = L->top + L->title_h, sw = 0.9 * L->fs, total = 0, x, w, h;
  const char *heads_word = f->n_heads == 1 ? _("Head") : _("Heads");
  char buf[32];

  /* "Heads ■0 ■1 ..." ("Head ■4" for one, "Heads: none" for none), centred: measure, then
   * draw. */
  if (f->n_heads == 0)
    heads_word = _("Heads: none");
  saccade_figure_layout_set (text, heads_word, &w, &h);
  total = w + L->gap;
  for (int hd = 0; hd < f->n_heads; hd++)
    {
      g_snprintf (buf, sizeof buf, "%d", head_id (f, hd));
      saccade_figure_layout_set (text, buf, &w, NULL);
      total += sw + 0.25 * L->fs + w + 0.8 * L->fs;
    }
  x = MAX (L->pad, (W - total) / 2);
  cairo_save (cr);
  saccade_figure_set_fg (cr, style, 0.7);
  saccade_figure_layout_set (text, heads_word, &w, &h);
  saccade_figure_layout_draw (cr, text, x, y);
  x += w + L->gap;
  for (int hd = 0; hd < f->n_heads; hd++)
    {
      double rgb[3];
      head_rgb (f, hd, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle (cr, x, y + (h - sw) / 2, sw, sw);
      cairo_fill (cr);
      x += sw + 0.25 * L->fs;
      g_snprintf (buf, sizeof buf, "%d", head_id (f, hd));
      saccade_figure_layout_set (text, buf, &w, NULL);
      saccade_figure_set_fg (cr, style, 0.85);
      saccade_figure_layout_draw (cr, text, x, y);
      x += w + 0.8 * L->fs;
    }
  /* Column captions and what opacity means. */
  y += h + 0.6 * L->fs;
  saccade_figure_set_fg (cr, style, 0.6);
  saccade_figure_layout_set (text, _("Query"), &w, &h);
  saccade_figure_layout_draw (cr, text, L->g.left_x - w, y);
  saccade_figure_layout_set (text, key_caption (res), &w, &h);
  saccade_figure_layout_draw (cr, text, L->g.right_x, y);
  pango_layout_set_width (text, (int) ((L->g.right_x - L->g.left_x) * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  saccade_figure_layout_set (text, caption, &w, &h);
  saccade_figure_layout_draw (cr, text, (L->g.left_x + L->g.right_x - w) / 2, y);
  cairo_restore (cr);
}

/* The links drawn, weakest first (the order of the set), so that the strongest end on top
 * whatever their head (drawing head by head would bury head 0 under head 8); with a
 * highlight, the faded ones first and the highlighted token's over them. FALSE when
 * @cancellable fired. */
static gboolean
draw_lines (cairo_t *cr, const SaccadeLinesFigure *f, const Resolved *res, const Layout *L,
            gboolean key_side, GCancellable *cancellable)
{
  const SaccadeLinesLinks *links = res->links;
  double x0 = L->g.left_x + L->gap, x1 = L->g.right_x - L->gap;
  double lw = CLAMP (L->g.row_h * 0.12, 0.5, 2.0);
  int hl = f->highlight_token;
  g_autofree double (*rgb)[3] = g_malloc0_n ((gsize) MAX (links->n_heads, 1), sizeof *rgb);
  guint strokes = 0;

  for (int hd = 0; hd < links->n_heads; hd++)
    saccade_figure_head_color (hd, MAX (links->n_heads, heads_total (f)), rgb[hd]);

  cairo_save (cr);
  cairo_set_line_width (cr, lw);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  for (int pass = hl < 0 ? 1 : 0; pass < 2; pass++)
    for (guint k = 0; k < links->n_links; k++)
      {
        const SaccadeLink *link = &links->links[k];
        int i = link->query - f->position0, j = link->key - f->position0;
        gboolean mine = hl < 0 || (key_side ? j == hl : i == hl);
        double yj = key_y (L, f->n, j);
        double alpha = MIN (link->weight, 1.0) * (mine ? 1.0 : FADED);

        /* pass 0: the faded lines; pass 1: the highlighted token's (or all) */
        if (mine != (pass == 1) || alpha < SACCADE_LINES_MIN_WEIGHT
            || !link_drawn (f, res, link))
          continue;
        if (++strokes % CANCEL_EVERY == 0 && g_cancellable_is_cancelled (cancellable))
          {
            cairo_restore (cr);
            return FALSE;
          }
        cairo_set_source_rgba (cr, rgb[link->head][0], rgb[link->head][1],
                               rgb[link->head][2], alpha);
        cairo_move_to (cr, x0, row_y (L, i));
        cairo_line_to (cr, x1, yj);
        cairo_stroke (cr);
      }
  cairo_restore (cr);
  return TRUE;
}

static void
draw_labels (cairo_t *cr, const SaccadeLinesFigure *f, const char *const *labels,
             const SaccadeFigureStyle *style, const Layout *L, gboolean key_side)
{
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, L->lf, FALSE);
  g_autoptr (PangoLayout) bold = saccade_figure_layout_new (cr, style, L->lf, TRUE);
  char buf[16];

  pango_layout_set_width (text, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  pango_layout_set_width (bold, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (bold, PANGO_ELLIPSIZE_END);
  cairo_save (cr);
  for (int side = 0; side < 2; side++)
    for (int i = 0; i < f->n; i++)
      {
        gboolean lit = f->highlight_token == i && (side == 1) == key_side;
        PangoLayout *lay = lit ? bold : text;
        double w, h, x;
        if (i % L->step != 0 && !lit)
          continue;
        saccade_figure_layout_set (lay, saccade_figure_label (labels, i, buf), &w, &h);
        x = side == 0 ? L->g.left_x - w : L->g.right_x;
        if (lit)
          {
            saccade_figure_set_fg (cr, style, 0.12);
            cairo_rectangle (cr, x - 0.25 * L->fs, row_y (L, i) - h / 2, w + 0.5 * L->fs, h);
            cairo_fill (cr);
          }
        saccade_figure_set_fg (cr, style, f->highlight_token < 0 || lit ? 1.0 : 0.75);
        saccade_figure_layout_draw (cr, lay, x, row_y (L, i) - h / 2);
      }
  cairo_restore (cr);
}

gboolean
saccade_figure_lines_draw_cancellable (cairo_t *cr, const SaccadeLinesFigure *f,
                                       const SaccadeFigureStyle *style,
                                       gboolean highlight_is_key, double width, double height,
                                       SaccadeLinesGeometry *geom, GCancellable *cancellable)
{
  SaccadeFigureStyle tmp;
  Resolved res;
  Layout L;
  gboolean done = TRUE;

  style = saccade_figure_style_resolve (style, &tmp);
  if (geom != NULL)
    *geom = (SaccadeLinesGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  resolve (f, TRUE, TRUE, cancellable, &res);
  layout_compute (cr, f, &res, style, width, height, &L);
  if (!figure_has_data (f) || res.cancelled)
    {
      done = !res.cancelled;
      saccade_figure_draw_title (cr, style, f->title, width, L.pad);
      resolved_clear (&res);
      cairo_restore (cr);
      return done;
    }
  saccade_figure_draw_title (cr, style, f->title, width, L.top);
  draw_legend (cr, f, &res, style, &L, width);
  done = draw_lines (cr, f, &res, &L, highlight_is_key, cancellable);
  if (done)
    draw_labels (cr, f, res.labels, style, &L, highlight_is_key);
  if (geom != NULL && done)
    *geom = L.g;
  resolved_clear (&res);
  cairo_restore (cr);
  return done;
}

void
saccade_figure_lines_draw_full (cairo_t *cr, const SaccadeLinesFigure *f,
                                const SaccadeFigureStyle *style, gboolean highlight_is_key,
                                double width, double height, SaccadeLinesGeometry *geom)
{
  saccade_figure_lines_draw_cancellable (cr, f, style, highlight_is_key, width, height, geom,
                                         NULL);
}

void
saccade_figure_lines_draw (cairo_t *cr, const SaccadeLinesFigure *f, double width, double height)
{
  saccade_figure_lines_draw_full (cr, f, NULL, FALSE, width, height, NULL);
}

void
saccade_figure_lines_draw_highlight (cairo_t *cr, const SaccadeLinesFigure *f,
                                     const SaccadeFigureStyle *style, gboolean highlight_is_key,
                                     const SaccadeLinesGeometry *geom)
{
  const int hl = f->highlight_token;
  SaccadeFigureStyle tmp;
  Resolved res;
  Layout L = { 0 };
  g_autofree gboolean *linked = NULL;
  g_autofree double (*rgb)[3] = NULL;
  g_autoptr (PangoLayout) bold = NULL;
  char buf[16];

  if (hl < 0 || hl >= f->n || geom == NULL || geom->n != f->n || !figure_has_data (f))
    return;
  style = saccade_figure_style_resolve (style, &tmp);
  resolve (f, TRUE, TRUE, NULL, &res);
  /* The layout the image was drawn with, from its geometry and the style's font size. */
  L.g = *geom;
  L.fs = saccade_figure_font_size (style);
  L.gap = 0.5 * L.fs;
  L.lf = label_size (L.fs, geom->row_h);
  rgb = g_malloc0_n ((gsize) MAX (res.links->n_heads, 1), sizeof *rgb);
  for (int hd = 0; hd < res.links->n_heads; hd++)
    saccade_figure_head_color (hd, MAX (res.links->n_heads, heads_total (f)), rgb[hd]);
  linked = g_new0 (gboolean, f->n);

  /* 1. the token's links at full strength, weakest first */
  cairo_save (cr);
  cairo_set_line_width (cr, CLAMP (geom->row_h * 0.12, 0.5, 2.0));
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  for (guint k = 0; k < res.links->n_links; k++)
    {
      const SaccadeLink *link = &res.links->links[k];
      int i = link->query - f->position0, j = link->key - f->position0;
      if (!link_drawn (f, &res, link) || (highlight_is_key ? j : i) != hl)
        continue;
      if (highlight_is_key ? TRUE : (j >= 0 && j < f->n))
        linked[highlight_is_key ? i : j] = TRUE;
      cairo_set_source_rgba (cr, rgb[link->head][0], rgb[link->head][1], rgb[link->head][2],
                             MIN (link->weight, 1.0));
      cairo_move_to (cr, geom->left_x + L.gap, row_y (&L, i));
      cairo_line_to (cr, geom->right_x - L.gap, key_y (&L, f->n, j));
      cairo_stroke (cr);
    }

  /* 2. its label boxed, and the labels at the other ends, in bold */
  bold = saccade_figure_layout_new (cr, style, L.lf, TRUE);
  pango_layout_set_width (bold, (int) (LABEL_MAX_EM * L.fs * PANGO_SCALE));
  pango_layout_set_ellipsize (bold, PANGO_ELLIPSIZE_END);
  for (int side = 0; side < 2; side++)
    for (int i = 0; i < f->n; i++)
      {
        gboolean lit = i == hl && (side == 1) == highlight_is_key;
        gboolean end = linked[i] && (side == 1) != highlight_is_key;
        double w, h, x;
        if (!lit && !end)
          continue;
        saccade_figure_layout_set (bold, saccade_figure_label (res.labels, i, buf), &w, &h);
        x = side == 0 ? geom->left_x - w : geom->right_x;
        if (lit)
          {
            saccade_figure_set_fg (cr, style, 0.12);
            cairo_rectangle (cr, x - 0.25 * L.fs, row_y (&L, i) - h / 2, w + 0.5 * L.fs, h);
            cairo_fill (cr);
          }
        saccade_figure_set_fg (cr, style, 1.0);
        saccade_figure_layout_draw (cr, bold, x, row_y (&L, i) - h / 2);
      }
  cairo_restore (cr);
  resolved_clear (&res);
}

gboolean
saccade_lines_geometry_token_at (const SaccadeLinesGeometry *g, double x, double y, int *token,
                                 gboolean *is_key)
{
  double r;

  if (g->n <= 0 || g->row_h <= 0)
    return FALSE;
  r = floor ((y - g->y0) / g->row_h);
  if (r < 0 || r >= g->n)
    return FALSE;
  /* The label columns, with a little slack towards the lines. */
  if (x >= g->left_x - g->label_w - 4 && x <= g->left_x + 8)
    *is_key = FALSE;
  else if (x >= g->right_x - 8 && x <= g->right_x + g->label_w + 4)
    *is_key = TRUE;
  else
    return FALSE;
  *token = (int) r;
  return TRUE;
}
