/* saccade-figure-grid.c — every head of a run as thumbnails: the renderer shared by
 * SaccadeGridView and export (saccade-figure.h).
 *
 * Query heads that share a KV head sit together, with a wider gap between groups. The
 * grid turns and wraps so that thumbnails come out biggest for the area drawn: layers as
 * columns or as rows, in one band or wrapped into several (30 layers x 9 heads in a
 * landscape window: layers 0-14 down the left, 15-29 down the right, each band with its
 * own layer and head numbers), as layout_fit() finds. Every position — drawing, labels,
 * hit-testing, the outlines, the colour bar — comes from the geometry's head_rect().
 *
 * With a metric, each thumbnail is drawn in greys inside a frame of the metric's colour,
 * and the colour bar names the metric; without one, thumbnails use the figure's colour map
 * and the colour bar reads their values: 0 to 1 on a linear scale, "weight ÷ head's max"
 * (each thumbnail is scaled to its own maximum, below). The metric's scale is linear on a
 * diverging map, as in the heatmap (saccade_figure_heatmap_scale).
 *
 * Thumbnails (SaccadeGridThumbs) hold each head reduced to at most THUMB_MAX cells a side
 * and scaled to its own maximum — a grid is for seeing patterns (diagonals, sinks,
 * stripes), and a shared scale would leave most heads black — with masked cells as NaN.
 * A thumbnail cell is the MAXIMUM of the block of cells it stands for, not their mean:
 * attention is sparse, and in a long run the mean of a block is dominated by the many
 * near-zero weights, so a previous-token diagonal or an induction stripe averaged into
 * 16 x 16 blocks disappears (the "blank triangles" a 950-token run showed). Long runs hand
 * in the store's overviews (already block maxima, engine/store) instead of the heads.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* Thumbnails never need more cells than they have pixels on screen. */
#define THUMB_MAX 64
/* Between thumbnails, as a share of a thumbnail's side: room for the metric frame
 * (FRAME of each side) and a visible gap; KV groups are GROUP_GAP further apart. */
#define GAP 0.3
#define FRAME 0.1
#define GROUP_GAP 0.6

struct _SaccadeGridThumbs {
  int n_layers, n_heads, t;      /* t: cells per thumbnail side */
  float *values;                 /* (n_layers * n_heads, t, t); 0..1, NaN = masked */
  cairo_surface_t **images;      /* (n_layers * n_heads) images for `map`, or NULL */
  SaccadeColormap map;
};

/* Reduces one (n, n) head to (t, t) block maxima of @block cells a side; a block wholly
 * above the diagonal of a causal head is masked (NaN). Causal is decided as the store
 * decides it: every entry above the diagonal exactly 0. */
static void
pool_head (const float *a, int n, int block, int t, float *out)
{
  gboolean causal = TRUE;

  for (int r = 0; r < n && causal; r++)
    for (int c = r + 1; c < n; c++)
      if (a[(gsize) r * n + c] != 0.0f)
        {
          causal = FALSE;
          break;
        }
  for (int br = 0; br < t; br++)
    for (int bc = 0; bc < t; bc++)
      {
        int r0 = br * block, r1 = MIN (n, r0 + block);
        int c0 = bc * block, c1 = MIN (n, c0 + block);
        float max = 0;
        if (causal && c0 > r1 - 1)
          {
            out[br * t + bc] = NAN;
            continue;
          }
        for (int r = r0; r < r1; r++)
          for (int c = c0; c < c1; c++)
            max = MAX (max, a[(gsize) r * n + c]);
        out[br * t + bc] = max;
      }
}

/* Reduces one (s, s) overview (block maxima, NaN masked) to (t, t) maxima of @block
 * overview cells a side; a thumbnail cell is masked only when all its cells are. */
static void
pool_overview (const float *a, int s, int block, int t, float *out)
{
  for (int br = 0; br < t; br++)
    for (int bc = 0; bc < t; bc++)
      {
        int r0 = br * block, r1 = MIN (s, r0 + block);
        int c0 = bc * block, c1 = MIN (s, c0 + block);
        float max = NAN;
        for (int r = r0; r < r1; r++)
          for (int c = c0; c < c1; c++)
            {
              float v = a[(gsize) r * s + c];
              if (!isnan (v) && (isnan (max) || v > max))
                max = v;
            }
        out[br * t + bc] = max;
      }
}

SaccadeGridThumbs *
saccade_grid_thumbs_new (const SaccadeGridFigure *f)
{
  SaccadeGridThumbs *th = g_new0 (SaccadeGridThumbs, 1);
  gboolean from_overviews = f->heads == NULL && f->overviews != NULL;
  int n = from_overviews ? f->overview_size : f->n, block, t;
  gsize n_heads;

  if ((f->heads == NULL && f->overviews == NULL) || n <= 0 || f->n_layers <= 0
      || f->n_heads <= 0)
    return th;
  block = (n + THUMB_MAX - 1) / THUMB_MAX; /* cells of the head per thumbnail cell */
  t = (n + block - 1) / block;
  n_heads = (gsize) f->n_layers * f->n_heads;
  th->n_layers = f->n_layers;
  th->n_heads = f->n_heads;
  th->t = t;
  th->values = g_new (float, n_heads * t * t);

  for (gsize h = 0; h < n_heads; h++)
    {
      float *out = th->values + h * t * t;
      float max = 0;

      if (from_overviews)
        pool_overview (f->overviews + h * n * n, n, block, t, out);
      else
        pool_head (f->heads + h * n * n, n, block, t, out);
      for (int i = 0; i < t * t; i++)
        if (!isnan (out[i]) && out[i] > max)
          max = out[i];
      if (max > 0)
        for (int i = 0; i < t * t; i++)
          out[i] /= max;
    }
  return th;
}

static void
thumbs_drop_images (SaccadeGridThumbs *th)
{
  if (th->images == NULL)
    return;
  for (int i = 0; i < th->n_layers * th->n_heads; i++)
    cairo_surface_destroy (th->images[i]);
  g_clear_pointer (&th->images, g_free);
}

void
saccade_grid_thumbs_free (SaccadeGridThumbs *th)
{
  if (th == NULL)
    return;
  thumbs_drop_images (th);
  g_free (th->values);
  g_free (th);
}

/* The colour images for @map, made on first use and whenever the map changes. */
static cairo_surface_t **
thumbs_images (SaccadeGridThumbs *th, SaccadeColormap map)
{
  if (th->images != NULL && th->map == map)
    return th->images;
  thumbs_drop_images (th);
  th->images = g_new (cairo_surface_t *, th->n_layers * th->n_heads);
  th->map = map;
  for (int i = 0; i < th->n_layers * th->n_heads; i++)
    th->images[i] = saccade_figure_cells_image (th->values + (gsize) i * th->t * th->t, th->t,
                                                0, th->t, 0, th->t, FALSE, 1, map,
                                                SACCADE_SCALE_LINEAR, 0.0, 1.0);
  return th->images;
}

/* ------------------------------------------------------------------------------------ */
/* Layout                                                                                */

typedef struct {
  double fs, pad, gap, lh;
  double top;              /* where the title goes: centred with the grid */
  double title_h, cb_w, bar_w;
  double layer_lab;        /* widest layer number */
  double head_lab;         /* widest head number */
  double kv_lab;           /* widest "KV head n" */
  double mvmin, mvmax;     /* the metric's colour range */
  SaccadeGridGeometry g;
} Layout;

static int
group_size (const SaccadeGridGeometry *g)
{
  return g->n_kv_heads > 0 && g->n_heads % g->n_kv_heads == 0 ? g->n_heads / g->n_kv_heads
                                                               : g->n_heads;
}

/* Layer @layer's band and its place in the band. */
static void
band_of (const SaccadeGridGeometry *g, int layer, int *band, int *in_band)
{
  int per = g->band_layers > 0 ? g->band_layers : MAX (g->n_layers, 1);

  *band = layer / per;
  *in_band = layer % per;
}

void
saccade_grid_geometry_head_rect (const SaccadeGridGeometry *g, int layer, int head,
                                 double rect[4])
{
  int band, in_band;
  double along_heads, along_layers;

  band_of (g, layer, &band, &in_band);
  along_heads = band * g->band_step + head * g->step + (head / group_size (g)) * g->group_gap;
  along_layers = in_band * g->step;
  rect[0] = g->x + (g->layers_across ? along_layers : along_heads);
  rect[1] = g->y + (g->layers_across ? along_heads : along_layers);
  rect[2] = rect[3] = g->thumb;
}

gboolean
saccade_grid_geometry_extent (const SaccadeGridGeometry *g, double rect[4])
{
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, r[4];

  if (g->thumb <= 0 || g->n_layers < 1 || g->n_heads < 1)
    return FALSE;
  /* Each layer's first and last head: the corners of every band are among them. */
  for (int l = 0; l < g->n_layers; l++)
    for (int h = 0; h < g->n_heads; h += MAX (1, g->n_heads - 1))
      {
        saccade_grid_geometry_head_rect (g, l, h, r);
        x0 = MIN (x0, r[0]);
        y0 = MIN (y0, r[1]);
        x1 = MAX (x1, r[0] + r[2]);
        y1 = MAX (y1, r[1] + r[3]);
      }
  rect[0] = x0;
  rect[1] = y0;
  rect[2] = x1 - x0;
  rect[3] = y1 - y0;
  return TRUE;
}

gboolean
saccade_grid_geometry_head_at (const SaccadeGridGeometry *g, double x, double y, int *layer,
                               int *head)
{
  double rect[4];

  if (g->thumb <= 0)
    return FALSE;
  /* Every thumbnail, through head_rect: whatever the bands, what is hit is what is drawn. */
  for (int l = 0; l < g->n_layers; l++)
    {
      saccade_grid_geometry_head_rect (g, l, 0, rect);
      if (g->layers_across ? (x < rect[0] || x >= rect[0] + g->thumb)
                           : (y < rect[1] || y >= rect[1] + g->thumb))
        continue;
      for (int h = 0; h < g->n_heads; h++)
        {
          saccade_grid_geometry_head_rect (g, l, h, rect);
          if (x >= rect[0] && x < rect[0] + rect[2] && y >= rect[1] && y < rect[1] + rect[3])
            {
              *layer = l;
              *head = h;
              return TRUE;
            }
        }
    }
  return FALSE;
}

/* The scale of the metric's colours: linear on a diverging map (see the heatmap). */
static SaccadeScale
metric_scale (const SaccadeGridFigure *f)
{
  return saccade_colormap_is_diverging (f->colormap) ? SACCADE_SCALE_LINEAR : f->scale;
}

static void
metric_range (const SaccadeGridFigure *f, double *vmin, double *vmax)
{
  double lo = INFINITY, hi = -INFINITY, min_pos = INFINITY;

  for (int i = 0; f->metric != NULL && i < f->n_layers * f->n_heads; i++)
    if (isfinite (f->metric[i]))
      {
        lo = MIN (lo, f->metric[i]);
        hi = MAX (hi, f->metric[i]);
        if (f->metric[i] > 0)
          min_pos = MIN (min_pos, f->metric[i]);
      }
  if (!isfinite (lo))
    lo = 0, hi = 1;
  if (f->metric == NULL)
    {
      *vmin = 0.0; /* the thumbnails' own values: weight / head's max */
      *vmax = 1.0;
      return;
    }
  if (metric_scale (f) == SACCADE_SCALE_LOG && hi > 0)
    lo = isfinite (min_pos) ? MAX (min_pos, hi * 1e-4) : hi * 1e-4;
  if (hi <= lo)
    hi = lo + (lo != 0 ? fabs (lo) * 1e-3 : 1.0);
  *vmin = lo;
  *vmax = hi;
}

/* The colour bar: the metric's, or the thumbnails' (linear, 0..1 of each head's max). */
static SaccadeScale
bar_scale (const SaccadeGridFigure *f)
{
  return f->metric != NULL ? metric_scale (f) : SACCADE_SCALE_LINEAR;
}

static const char *
bar_caption (const SaccadeGridFigure *f)
{
  if (f->metric != NULL)
    return f->metric_name;
  /* Translators: the grid's colour bar: each thumbnail is scaled to its own maximum. */
  return _("weight ÷ head's max");
}

/* Whether layer @l is local (a sliding window, Gemma 3's five of every six layers). Its
 * number is drawn lighter than a global layer's and the layer caption says so: a word
 * beside every number ("16 · local") made labels so wide that only every other layer was
 * numbered, and Gemma 3's global layers 5, 11 and 17 went unlabelled. */
static gboolean
layer_is_local (const SaccadeGridFigure *f, int l)
{
  return f->layer_windows != NULL && l < f->n_layers && f->layer_windows[l] > 0;
}

static gboolean
any_local (const SaccadeGridFigure *f)
{
  for (int l = 0; l < f->n_layers; l++)
    if (layer_is_local (f, l))
      return TRUE;
  return FALSE;
}

/* Whether layer @l is numbered when only one number in @k fits: every layer when k is 1;
 * else the global layers of a model with local ones (few: Gemma 3's 5, 11, 17), and every
 * k-th layer that is at least k from each of them. */
static gboolean
layer_numbered (const SaccadeGridFigure *f, int l, int k)
{
  gboolean locals = any_local (f);

  if (k <= 1 || (locals && !layer_is_local (f, l)))
    return TRUE;
  if (l % k != 0)
    return FALSE;
  for (int g = MAX (0, l - k + 1); locals && g < MIN (f->n_layers, l + k); g++)
    if (!layer_is_local (f, g))
      return FALSE;
  return TRUE;
}

/* The head axis's length in thumbnails (with gaps and group gaps), and the layer axis's. */
static double
heads_len (const SaccadeGridFigure *f)
{
  int groups = f->n_kv_heads > 0 ? f->n_kv_heads : 1;
  return f->n_heads * (1 + GAP) + (groups - 1) * GROUP_GAP;
}

static void
layout_measure (cairo_t *cr, const SaccadeGridFigure *f, const SaccadeFigureStyle *style,
                double width, Layout *L)
{
  g_autoptr (PangoLayout) text = NULL;
  double w, h;
  char buf[32];

  L->fs = saccade_figure_font_size (style);
  L->pad = L->fs;
  L->gap = 0.4 * L->fs;
  text = saccade_figure_layout_new (cr, style, 0.9 * L->fs, FALSE);
  g_snprintf (buf, sizeof buf, "%d", MAX (f->n_layers - 1, 0));
  saccade_figure_layout_set (text, buf, &L->layer_lab, &L->lh);
  g_snprintf (buf, sizeof buf, "%d", MAX (f->n_heads - 1, 0));
  saccade_figure_layout_set (text, buf, &L->head_lab, NULL);
  /* Translators: a group of query heads named by the key/value head they share. */
  g_snprintf (buf, sizeof buf, _("KV head %d"), MAX (f->n_kv_heads - 1, 0));
  saccade_figure_layout_set (text, buf, &L->kv_lab, NULL);
  L->title_h = 0;
  if (f->title != NULL && *f->title != '\0')
    {
      g_autoptr (PangoLayout) title = saccade_figure_layout_new (cr, style, 1.3 * L->fs, TRUE);
      saccade_figure_layout_set (title, f->title, &w, &h);
      L->title_h = saccade_figure_title_band (cr, style, f->title, width, h + 0.6 * L->fs);
    }
  L->bar_w = 1.2 * L->fs;
  metric_range (f, &L->mvmin, &L->mvmax);
  L->cb_w = 2 * L->gap + saccade_figure_colorbar_width (cr, style, 0.9 * L->fs, L->bar_w,
                                                        bar_scale (f), L->mvmin, L->mvmax,
                                                        bar_caption (f));
}

/* Margins for one orientation: the top holds the labels of the across axis (layers:
 * caption + numbers; heads: KV labels + numbers), the left those of the down axis. */
static void
margins (const Layout *L, gboolean layers_across, double *top, double *left)
{
  if (layers_across)
    {
      *top = 2 * L->lh + L->gap;                                 /* "Layer", numbers */
      *left = L->kv_lab + L->gap + L->head_lab + L->gap;        /* "KV head n", head numbers */
    }
  else
    {
      *top = 2 * L->lh + L->gap;                                 /* "KV head n", head numbers */
      *left = L->lh + L->gap + L->layer_lab + L->gap;           /* "Layer", numbers */
    }
}

/* The space between two bands beyond the gap that follows a thumbnail: the next band's
 * layer numbers (above it with layers across, left of it with layers down) and half a
 * font size that sets the bands apart. */
static double
band_extra (const Layout *L, gboolean layers_across)
{
  return (layers_across ? L->lh : L->layer_lab) + 2 * L->gap + 0.5 * L->fs;
}

/* Layers per band when @n layers are wrapped into @bands. */
static int
per_band (int n, int bands)
{
  return (n + bands - 1) / MAX (bands, 1);
}

/* The grid's size (*@gw x *@gh) with thumbnails of side @thumb, for one orientation and
 * band count. */
static void
grid_size (const SaccadeGridFigure *f, const Layout *L, gboolean across, int bands,
           double thumb, double *gw, double *gh)
{
  double layers_len = per_band (f->n_layers, bands) * (1 + GAP);
  double heads_all = bands * heads_len (f), extra = (bands - 1) * band_extra (L, across);

  *gw = across ? layers_len * thumb : heads_all * thumb + extra;
  *gh = across ? heads_all * thumb + extra : layers_len * thumb;
}

/* The biggest thumbnail side for one orientation and band count in the area @aw x @ah;
 * <= 0 when the bands' labels alone do not fit. */
static double
fit_thumb (const SaccadeGridFigure *f, const Layout *L, gboolean across, int bands, double aw,
           double ah)
{
  double layers_len = per_band (f->n_layers, bands) * (1 + GAP);
  double heads_all = bands * heads_len (f), extra = (bands - 1) * band_extra (L, across);

  return across ? MIN (aw / layers_len, (ah - extra) / heads_all)
                : MIN ((aw - extra) / heads_all, ah / layers_len);
}

/* Every how many layers a number fits beside the layer's thumbnails (1: all). */
static int
label_every (const Layout *L, gboolean across, double step)
{
  double need = across ? L->layer_lab + 0.3 * L->fs : L->lh;

  return step > 0 ? MAX (1, (int) ceil (need / step - 1e-9)) : G_MAXINT / 2;
}

/* One candidate layout: @across and @bands in @W x @H, its thumbnails as big as fit. */
static void
candidate (const SaccadeGridFigure *f, const Layout *L, double W, double H, gboolean across,
           int bands, gboolean at_least_some, SaccadeGridGeometry *g, double *title_top)
{
  int per = per_band (f->n_layers, bands);
  double top, left, aw, ah, gw, gh, thumb;

  margins (L, across, &top, &left);
  aw = W - 2 * L->pad - left - L->cb_w;
  ah = H - 2 * L->pad - L->title_h - top;
  thumb = fit_thumb (f, L, across, bands, aw, ah);
  if (at_least_some)
    thumb = MAX (0.5, thumb); /* always a grid, however small */
  grid_size (f, L, across, bands, thumb, &gw, &gh);
  *g = (SaccadeGridGeometry) {
    .n_layers = f->n_layers, .n_heads = f->n_heads, .n_kv_heads = f->n_kv_heads,
    .layers_across = across, .thumb = thumb, .step = thumb * (1 + GAP),
    .group_gap = thumb * GROUP_GAP, .n_bands = per_band (f->n_layers, per),
    .band_layers = per, .band_step = heads_len (f) * thumb + band_extra (L, across),
    .layer_label_every = label_every (L, across, thumb * (1 + GAP)),
    /* centred in the space left over; the gap after the last thumbnail is not drawn, so
     * half of it goes to each side */
    .x = L->pad + left + MAX (0.0, (aw - gw) / 2) + thumb * GAP / 2,
    .y = L->pad + L->title_h + top + MAX (0.0, (ah - gh) / 2) + thumb * GAP / 2,
  };
  *title_top = L->pad + MAX (0.0, (ah - gh) / 2);
}

/* A layout that numbers every layer is taken over a bigger one that cannot when its
 * thumbnails are at least this share of the bigger one's. */
#define NUMBERED_SHARE 0.75

/* The geometry for @W x @H: the orientation and the number of bands (@f->bands, or each
 * from 1 to one per layer) that give the biggest thumbnails with every layer numbered
 * (unless that costs more than a quarter of their side); on a tie the fewer bands, then
 * layers down. */
static void
layout_fit (const SaccadeGridFigure *f, double W, double H, Layout *L)
{
  SaccadeGridGeometry best = { .thumb = -1 }, numbered = { .thumb = -1 }, g;
  double best_top = L->pad, numbered_top = L->pad, top;
  int b0 = f->bands > 0 ? MIN (f->bands, f->n_layers) : 1;
  int b1 = f->bands > 0 ? b0 : f->n_layers;

  for (int bands = b0; bands <= b1; bands++)
    {
      /* 30 layers in 7 bands of 5 fill only 6: the same grid as 6 bands, which came first */
      if (bands > b0 && per_band (f->n_layers, per_band (f->n_layers, bands)) != bands)
        continue;
      for (int across = 0; across < 2; across++)
        {
          candidate (f, L, W, H, across, bands, bands == b0, &g, &top);
          if (g.thumb <= 0)
            continue;
          if (g.thumb > best.thumb * (1 + 1e-9))
            best = g, best_top = top;
          if (g.layer_label_every == 1 && g.thumb > numbered.thumb * (1 + 1e-9))
            numbered = g, numbered_top = top;
        }
    }
  if (numbered.thumb > 0 && numbered.thumb >= NUMBERED_SHARE * best.thumb)
    best = numbered, best_top = numbered_top;
  L->g = best;
  L->top = best_top;
}

void
saccade_figure_grid_natural_size (const SaccadeGridFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  /* 28-unit thumbnails: a 30 x 9 grid makes a landscape page, each head still readable.
   * Bands asked for are laid the way that makes the page wider than tall. */
  double thumb = 28, top, left, gw, gh;
  int bands = f->bands > 0 ? MIN (f->bands, MAX (f->n_layers, 1)) : 1;
  gboolean across = per_band (f->n_layers, bands) * (1 + GAP) > bands * heads_len (f);
  Layout L;

  saccade_figure_style_init (&style);
  layout_measure (cr, f, &style, INFINITY, &L);
  margins (&L, across, &top, &left);
  grid_size (f, &L, across, bands, thumb, &gw, &gh);
  *W = 2 * L.pad + left + L.cb_w + gw;
  *H = 2 * L.pad + L.title_h + top + gh;
  *H = MAX (*H, 2 * L.pad + L.title_h + 10 * L.fs); /* room for the colour bar */
  *W = MAX (*W, saccade_figure_title_width (cr, &style, f->title));
  *W = ceil (*W + 1);
  *H = ceil (*H + 1);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

/* ------------------------------------------------------------------------------------ */
/* Drawing                                                                               */

/* The head numbers and the KV groups' names (with a bracket) of the band whose first layer
 * is @band0: left of its rows with layers across, above its columns with layers down. */
static void
draw_head_labels (cairo_t *cr, const SaccadeGridFigure *f, const SaccadeFigureStyle *style,
                  const Layout *L, PangoLayout *text, int band0)
{
  const SaccadeGridGeometry *g = &L->g;
  int gs = group_size (g);
  double rect[4], w, h;
  char buf[32];

  saccade_figure_set_fg (cr, style, 0.85);
  for (int hd = 0; hd < f->n_heads; hd++)
    {
      g_snprintf (buf, sizeof buf, "%d", hd);
      saccade_figure_layout_set (text, buf, &w, &h);
      saccade_grid_geometry_head_rect (g, band0, hd, rect);
      if (g->layers_across)
        saccade_figure_layout_draw (cr, text, rect[0] - g->thumb * GAP / 2 - L->gap - w,
                                    rect[1] + g->thumb / 2 - h / 2);
      else
        saccade_figure_layout_draw (cr, text, rect[0] + g->thumb / 2 - w / 2,
                                    rect[1] - g->thumb * GAP / 2 - L->gap - h);
    }
  /* KV group names, centred on their group. */
  saccade_figure_set_fg (cr, style, 0.6);
  for (int kv = 0; kv * gs < f->n_heads; kv++)
    {
      double first[4], last[4];
      g_snprintf (buf, sizeof buf, _("KV head %d"), kv);
      saccade_figure_layout_set (text, buf, &w, &h);
      saccade_grid_geometry_head_rect (g, band0, kv * gs, first);
      saccade_grid_geometry_head_rect (g, band0, MIN (f->n_heads, (kv + 1) * gs) - 1, last);
      /* Above a group narrower than its name (a journal column), the short name. */
      if (!g->layers_across && w > last[0] + g->thumb - first[0] + g->group_gap)
        {
          /* Translators: a group of query heads named by the key/value head they share,
           * short, where "KV head %d" is wider than the group */
          g_snprintf (buf, sizeof buf, _("KV %d"), kv);
          saccade_figure_layout_set (text, buf, &w, &h);
        }
      /* A bracket between the group's name and its head numbers. */
      cairo_set_line_width (cr, MAX (0.5, 0.06 * L->fs));
      if (g->layers_across)
        {
          double bx = first[0] - g->thumb * GAP / 2 - 1.5 * L->gap - L->head_lab;
          saccade_figure_layout_draw (cr, text, bx - 0.5 * L->gap - w,
                                      (first[1] + last[1] + g->thumb) / 2 - h / 2);
          cairo_move_to (cr, bx, first[1]);
          cairo_line_to (cr, bx, last[1] + g->thumb);
        }
      else
        {
          double by = first[1] - g->thumb * GAP / 2 - 1.5 * L->gap - L->lh;
          saccade_figure_layout_draw (cr, text, (first[0] + last[0] + g->thumb) / 2 - w / 2,
                                      by - 0.25 * L->gap - h);
          cairo_move_to (cr, first[0], by);
          cairo_line_to (cr, last[0] + g->thumb, by);
        }
      cairo_stroke (cr);
    }
}

static void
draw_labels (cairo_t *cr, const SaccadeGridFigure *f, const SaccadeFigureStyle *style,
             const Layout *L)
{
  const SaccadeGridGeometry *g = &L->g;
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, 0.9 * L->fs, FALSE);
  int band_last = (g->band_layers > 0 ? MIN (g->band_layers, f->n_layers) : f->n_layers) - 1;
  double rect[4], w, h;
  /* Thin the layer numbers when they would touch: every k-th (layout_fit avoids it). */
  int k = MAX (1, g->layer_label_every);
  char buf[32];

  cairo_save (cr);
  for (int l = 0; l < f->n_layers; l++)
    {
      if (!layer_numbered (f, l, k))
        continue;
      g_snprintf (buf, sizeof buf, "%d", l);
      saccade_figure_layout_set (text, buf, &w, &h);
      saccade_figure_set_fg (cr, style, layer_is_local (f, l) ? 0.45 : 0.85);
      saccade_grid_geometry_head_rect (g, l, 0, rect);
      if (g->layers_across)
        saccade_figure_layout_draw (cr, text, rect[0] + g->thumb / 2 - w / 2,
                                    rect[1] - g->thumb * GAP / 2 - L->gap - h);
      else
        saccade_figure_layout_draw (cr, text, rect[0] - g->thumb * GAP / 2 - L->gap - w,
                                    rect[1] + g->thumb / 2 - h / 2);
    }
  /* Each band has its own head numbers and KV group names: those of its first layer. */
  for (int band0 = 0; band0 < f->n_layers;
       band0 += g->band_layers > 0 ? g->band_layers : f->n_layers)
    draw_head_labels (cr, f, style, L, text, band0);
  saccade_figure_set_fg (cr, style, 0.6);
  /* The axis captions, by the first band. */
  {
    double first[4], last[4];
    saccade_grid_geometry_head_rect (g, 0, 0, first);
    saccade_grid_geometry_head_rect (g, band_last, 0, last);
    saccade_figure_layout_set (text, _("Head"), &w, &h);
    if (g->layers_across) /* above the head numbers, level with the layer numbers */
      saccade_figure_layout_draw (cr, text, first[0] - g->thumb * GAP / 2 - L->gap - w,
                                  first[1] - g->thumb * GAP / 2 - L->gap - h);
    else /* left of the head numbers, level with them */
      saccade_figure_layout_draw (cr, text, first[0] - g->thumb * GAP / 2 - L->gap - w,
                                  first[1] - g->thumb * GAP / 2 - L->gap - h);
    saccade_figure_layout_set (text,
                               any_local (f)
                                 /* Translators: the grid's layer axis when some layers are
                                  * local (sliding-window attention, Gemma 3): their numbers
                                  * are drawn grey */
                                 ? _("Layer (grey: local)")
                                 : _("Layer"),
                               &w, &h);
    if (g->layers_across)
      saccade_figure_layout_draw (cr, text, (first[0] + last[0] + g->thumb) / 2 - w / 2,
                                  first[1] - g->thumb * GAP / 2 - 2 * L->gap - L->lh - h);
    else
      {
        cairo_translate (cr, first[0] - g->thumb * GAP / 2 - 2 * L->gap - L->layer_lab - h,
                         (first[1] + last[1] + g->thumb) / 2 + w / 2);
        cairo_rotate (cr, -G_PI / 2);
        saccade_figure_layout_draw (cr, text, 0, 0);
      }
  }
  cairo_restore (cr);
}

void
saccade_figure_grid_draw_full (cairo_t *cr, const SaccadeGridFigure *f, SaccadeGridThumbs *thumbs,
                               const SaccadeFigureStyle *style, int sel_layer, int sel_head,
                               double width, double height, SaccadeGridGeometry *geom)
{
  g_autoptr (SaccadeGridThumbs) own = NULL;
  SaccadeFigureStyle tmp;
  cairo_surface_t **images;
  gboolean vector;
  Layout L;

  style = saccade_figure_style_resolve (style, &tmp);
  if (geom != NULL)
    *geom = (SaccadeGridGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  layout_measure (cr, f, style, width, &L);
  if (thumbs == NULL)
    thumbs = own = saccade_grid_thumbs_new (f);
  if (thumbs->t <= 0 || f->n_layers != thumbs->n_layers || f->n_heads != thumbs->n_heads)
    {
      saccade_figure_draw_title (cr, style, f->title, width, L.pad);
      cairo_restore (cr);
      return;
    }
  layout_fit (f, width, height, &L);
  saccade_figure_draw_title (cr, style, f->title, width, L.top);
  vector = saccade_figure_target_is_vector (cr);
  images = vector ? NULL
                  : thumbs_images (thumbs, f->metric != NULL ? SACCADE_COLORMAP_GRAYS
                                                             : f->colormap);

  for (int l = 0; l < f->n_layers; l++)
    for (int h = 0; h < f->n_heads; h++)
      {
        int i = l * f->n_heads + h, t = thumbs->t;
        double rect[4], b = L.g.thumb * FRAME;
        cairo_surface_t *img;
        cairo_pattern_t *pat;
        cairo_matrix_t m;
        int k = 1;

        saccade_grid_geometry_head_rect (&L.g, l, h, rect);
        if (f->metric != NULL)
          {
            double rgb[3];
            saccade_colormap_rgb (f->colormap,
                                  saccade_scale_apply (metric_scale (f), f->metric[i], L.mvmin,
                                                       L.mvmax),
                                  rgb);
            cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle (cr, rect[0] - b, rect[1] - b, rect[2] + 2 * b, rect[3] + 2 * b);
            cairo_fill (cr);
          }
        /* Masked cells show the background tint through the image's transparent pixels;
         * on a metric frame the tint sits on the background colour, not the frame. */
        if (style->bg[3] > 0 || f->metric != NULL)
          {
            cairo_set_source_rgba (cr, style->bg[0], style->bg[1], style->bg[2],
                                   style->bg[3] > 0 ? style->bg[3] : 1.0);
            cairo_rectangle (cr, rect[0], rect[1], rect[2], rect[3]);
            cairo_fill (cr);
          }
        saccade_figure_set_fg (cr, style, 0.1);
        cairo_rectangle (cr, rect[0], rect[1], rect[2], rect[3]);
        cairo_fill (cr);

        if (vector)
          {
            /* Enough pixels per cell that a viewer's smoothing stays at cell edges. */
            k = CLAMP ((int) ceil (2 * L.g.thumb / t), 1, 16);
            img = saccade_figure_cells_image (thumbs->values + (gsize) i * t * t, t, 0, t, 0, t,
                                              FALSE, k,
                                              f->metric != NULL ? SACCADE_COLORMAP_GRAYS
                                                                : f->colormap,
                                              SACCADE_SCALE_LINEAR, 0.0, 1.0);
          }
        else
          img = cairo_surface_reference (images[i]);
        pat = cairo_pattern_create_for_surface (img);
        cairo_matrix_init_scale (&m, t * k / L.g.thumb, t * k / L.g.thumb);
        cairo_matrix_translate (&m, -rect[0], -rect[1]);
        cairo_pattern_set_matrix (pat, &m);
        /* Enlarged cells stay sharp; reduced ones are averaged. */
        cairo_pattern_set_filter (pat, L.g.thumb >= t ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD);
        cairo_set_source (cr, pat);
        cairo_rectangle (cr, rect[0], rect[1], rect[2], rect[3]);
        cairo_fill (cr);
        cairo_pattern_destroy (pat);
        cairo_surface_destroy (img);

        if (l == sel_layer && h == sel_head)
          {
            double o = b + MAX (1.0, L.g.thumb * 0.04);
            saccade_figure_set_fg (cr, style, 1.0);
            cairo_set_line_width (cr, MAX (1.5, L.g.thumb * 0.06));
            cairo_rectangle (cr, rect[0] - o, rect[1] - o, rect[2] + 2 * o, rect[3] + 2 * o);
            cairo_stroke (cr);
          }
      }
  draw_labels (cr, f, style, &L);

  {
    double all[4], top, bottom;
    saccade_grid_geometry_extent (&L.g, all);
    top = all[1];
    bottom = MAX (all[1] + all[3], top + 8 * L.fs);
    saccade_figure_colorbar_draw (cr, style, 0.9 * L.fs, f->colormap, bar_scale (f), L.mvmin,
                                  L.mvmax, bar_caption (f),
                                  all[0] + all[2] + L.g.thumb * FRAME + 2 * L.gap, top,
                                  L.bar_w, MIN (bottom, height - L.pad) - top);
  }
  if (geom != NULL)
    *geom = L.g;
  cairo_restore (cr);
}

void
saccade_figure_grid_draw (cairo_t *cr, const SaccadeGridFigure *f, double width, double height)
{
  saccade_figure_grid_draw_full (cr, f, NULL, NULL, -1, -1, width, height, NULL);
}
