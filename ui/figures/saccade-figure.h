/* saccade-figure.h — the Cairo renderers of Saccade's figures: one per figure, used by the
 * widgets (saccade-*-view.c) and by export (PNG, SVG, PDF), so the screen and the file show
 * the same picture.
 *
 *   heatmap  one head: queries as rows, keys as columns, token labels on both axes, a
 *            colour bar; causal (masked) cells hatched, never coloured as a weight of 0
 *   grid     every head of a run as thumbnails: layers one way, query heads the other
 *            (turned to whichever gives bigger thumbnails), heads grouped by the KV head
 *            they share, optionally framed in a metric's colour
 *   lines    one layer as BertViz's "head view": the tokens twice, queries on the left and
 *            keys on the right, a line per strong link (query, key, head) whose opacity is
 *            the weight (saccade-figure-lines.h chooses the links)
 *   profile  one head metric by layer: a dot per head, the layer mean as a line
 *   bars     one value per token (e.g. the rollout or flow into the last position)
 *   distance a symmetric items x items matrix (head distances) in a clustering order, with
 *            the dendrogram of the clustering above it
 *   loss     the in-context-learning curve: the loss at every target position of a
 *            sequence repeated twice, the boundary between the copies, each copy's mean
 *
 * The figures take plain data (float matrices, display strings made by
 * saccade_token_label()), borrowed for the call; nothing here knows about the engine.
 * Renderers are pure functions of their arguments and draw only through the cairo_t they
 * are given: they may run on any thread (one cairo_t per thread).
 *
 * The short draw functions use the export style (black text on a white background, which
 * they paint); the _full variants take a style (the widgets use the theme's colours on a
 * transparent background), a visible range, and return the geometry the widgets need to
 * turn a pointer position into a cell, a head or a token.
 */
#pragma once

#include <cairo.h>
#include <gio/gio.h>

#include "ui/figures/saccade-colormap.h"
#include "ui/figures/saccade-lod.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

typedef struct {
  const float *values;                /* (n_rows, n_cols) row-major */
  int n_rows, n_cols;
  const char *const *row_labels;      /* (n_rows) display strings, or NULL: positions */
  const char *const *col_labels;      /* (n_cols) display strings, or NULL: positions */
  const char *title;                  /* may be NULL */
  SaccadeColormap colormap;
  SaccadeScale scale;
  gboolean causal;                    /* cells above the diagonal are masked: drawn hatched,
                                       * not as 0, and left out of the automatic range */
  double vmin, vmax;                  /* colour range; vmin == vmax: automatic */
  const char *row_name, *col_name;    /* the axes' captions; NULL: "Query", "Key" (a matrix
                                       * that is not a head: "Layer", "Head") */
  const char *value_name;             /* the colour bar's caption; NULL: "weight" */
} SaccadeHeatmapFigure;

/* A head of any length (8,192 tokens and more) from its level-of-detail pyramid
 * (saccade-lod.h): only what is shown is drawn, at the resolution it is shown at, from the
 * max-pooled level whose cells are at least a device pixel; exact cells (outlined when big
 * enough) when zoomed in. Both axes carry the tokens' positions as ticks; token labels are
 * drawn only where a cell is tall enough for a readable font (80 % of the figure's text).
 * Drawn by saccade_figure_heatmap_lod_draw*() and exported by
 * saccade_figure_export_heatmap_lod(). Thread-safe like every renderer: the pyramid is
 * immutable. */
typedef struct {
  const SaccadeLod *lod;              /* the head; causal or not as the pyramid says */
  const char *const *row_labels;      /* (lod's n_rows) display strings, or NULL: no token
                                       * labels (the ticks give the positions) */
  const char *const *col_labels;      /* (lod's n_cols), or NULL */
  const char *title;                  /* may be NULL */
  SaccadeColormap colormap;
  SaccadeScale scale;
  double vmin, vmax;                  /* colour range; vmin == vmax: automatic, from the
                                       * whole head (saccade_lod_get_stats), so a range or a
                                       * zoom keeps the head's colours */
  const char *row_name, *col_name;    /* the axes' captions; NULL: "Query", "Key" */
  const char *value_name;             /* the colour bar's caption; NULL: "weight" */
  double label_em;                    /* the widest token label in font sizes (a widget
                                       * measures its labels once); 0: measured here, over
                                       * the labels of the range drawn */
} SaccadeHeatmapLodFigure;

/* Tokens of a head: queries (rows) q0 .. q1 - 1 and keys (columns) k0 .. k1 - 1, half-open. */
typedef struct {
  int q0, q1, k0, k1;
} SaccadeTokenRange;

typedef struct {
  int n_layers, n_heads, n_kv_heads, n; /* heads of one run; n_heads % n_kv_heads == 0 */
  const float *heads;                 /* (n_layers, n_heads, n, n), or NULL: */
  const float *overviews;             /* (n_layers, n_heads, S, S), S = overview_size <= n:
                                       * each head's block maxima, NaN where a block is
                                       * masked (the store's overviews); used when @heads
                                       * is NULL */
  int overview_size;
  const double *metric;               /* (n_layers, n_heads) or NULL: frame each head in its
                                       * metric's colour (then thumbnails are drawn in greys) */
  const char *metric_name;            /* the colour bar's caption; may be NULL */
  const char *title;                  /* may be NULL */
  SaccadeColormap colormap;
  SaccadeScale scale;                 /* of the metric's colour range */
  const unsigned *layer_windows;      /* (n_layers) each layer's attention window, 0 for a
                                       * global layer, or NULL: a local layer's number is
                                       * marked "N · local" (its heads' keys left of the
                                       * window are masked in the thumbnails) */
  int bands;                          /* the layers wrapped into this many bands (layers 0-14
                                       * over 15-29), 1 .. n_layers; 0: as many as give the
                                       * biggest thumbnails for the area drawn */
} SaccadeGridFigure;

typedef struct _SaccadeLinesLinks SaccadeLinesLinks; /* saccade-figure-lines.h */

typedef struct {
  int n_heads, n;
  const float *heads;                 /* one layer: (n_heads, n, n), or NULL with links */
  const char *const *labels;          /* (n) display strings, or NULL: positions */
  int highlight_token;                /* -1 = none; else only this query token's lines are
                                       * drawn strongly (see the _full variant for keys) */
  const char *title;                  /* may be NULL */
  /* Which heads @heads holds, for a figure of some of a layer's heads (one head, or those
   * toggled on): the legend names head_ids[k] and colours it as head head_ids[k] of
   * n_heads_total, so head 4 shown alone is "4" in the colour it has among all 9. NULL:
   * heads 0 .. n_heads - 1 of n_heads. */
  const int *head_ids;                /* (n_heads), each in 0 .. n_heads_total - 1 */
  int n_heads_total;                  /* the layer's heads; 0: n_heads */
  /* Long runs (saccade-figure-lines.h). The figure's tokens are the run's positions
   * position0 .. position0 + n - 1 (a range); labels are theirs. */
  int position0;
  gboolean show_positions;            /* prefix each label with its run position */
  /* Links chosen beforehand (saccade_lines_links_select(), run positions; borrowed): then
   * @heads is NULL, and the links drawn are those with both ends among the figure's tokens
   * and a head among head_ids (NULL: every head of n_heads). */
  const SaccadeLinesLinks *links;
  /* Drawing from @heads, the links are chosen per query and head as
   * saccade-figure-lines.h says: at least @threshold (0: SACCADE_LINES_MIN_WEIGHT, every
   * visible line) and the @top_k strongest (0: all), over the rows of the figure's tokens. */
  double threshold;
  int top_k;
} SaccadeLinesFigure;

typedef struct {
  int n_layers, n_heads;
  const double *values;               /* (n_layers, n_heads); NaN values are left out */
  const char *metric_name;            /* the value axis' caption; may be NULL */
  const char *title;                  /* may be NULL */
} SaccadeProfileFigure;

typedef struct {
  int n;
  const double *values;               /* (n), >= 0 expected (the axis starts at 0) */
  const char *const *labels;          /* (n) display strings, or NULL: positions */
  const char *value_name;             /* the value axis' caption; may be NULL */
  const char *title;                  /* may be NULL */
  SaccadeColormap colormap;           /* bars are coloured by value through it */
} SaccadeBarsFigure;

/* One merge of an agglomerative clustering: the clusters @a and @b (an id < n is leaf id,
 * an id >= n the cluster merge id - n made) joined at @height. The engine's ScClusterMerge
 * copied into plain data (ui/ does not see the engine). */
typedef struct {
  int a, b;
  double height;
} SaccadeDendroMerge;

typedef struct {
  int n;
  const double *values;               /* (n, n) row-major, items in their own order */
  const int *order;                   /* (n) the items left to right (and top to bottom), or
                                       * NULL: 0 .. n - 1 */
  const SaccadeDendroMerge *merges;   /* (n - 1) merges over the items, or NULL: none */
  const char *const *labels;          /* (n) item names ("L5.H2"), or NULL: positions */
  const char *value_name;             /* the colour bar's caption; may be NULL */
  const char *title;                  /* may be NULL */
  SaccadeColormap colormap;
  double vmin, vmax;                  /* colour range; vmin == vmax: [0, max] */
} SaccadeDistanceFigure;

typedef struct {
  int n;                              /* positions of the sequence */
  const double *values;               /* (n) the loss predicting position q from q' < q (a
                                       * mean over seeds); NaN: none (q = 0) */
  int first_start;                    /* the first copy's first target (max(1, n_prefix)) */
  int boundary;                       /* the second copy's first position; <= 0: one copy */
  double mean_first, mean_second;     /* each copy's mean, drawn as a line; NaN: none */
  const char *value_name;             /* the value axis' caption; may be NULL */
  const char *position_name;          /* the position axis' caption; NULL: "Target position" */
  const char *title;                  /* may be NULL */
} SaccadeLossFigure;

/* Draw the figure into the rectangle (0, 0, @width, @height) of @cr's user space, in the
 * export style. @cr's state is saved and restored. A figure without data (n == 0) draws
 * its background and title only. */
void saccade_figure_heatmap_draw (cairo_t *cr, const SaccadeHeatmapFigure *f, double width,
                                  double height);
void saccade_figure_grid_draw (cairo_t *cr, const SaccadeGridFigure *f, double width,
                               double height);
/* Only @range of the head (NULL: all of it), with the range's own positions on the axes;
 * the range is clamped to the head. */
void saccade_figure_heatmap_lod_draw (cairo_t *cr, const SaccadeHeatmapLodFigure *f,
                                      const SaccadeTokenRange *range, double width,
                                      double height);
void saccade_figure_lines_draw (cairo_t *cr, const SaccadeLinesFigure *f, double width,
                                double height);
void saccade_figure_profile_draw (cairo_t *cr, const SaccadeProfileFigure *f, double width,
                                  double height);
void saccade_figure_bars_draw (cairo_t *cr, const SaccadeBarsFigure *f, double width,
                               double height);
void saccade_figure_distance_draw (cairo_t *cr, const SaccadeDistanceFigure *f, double width,
                                   double height);
void saccade_figure_loss_draw (cairo_t *cr, const SaccadeLossFigure *f, double width,
                               double height);

/* ------------------------------------------------------------------------------------ */
/* Export                                                                                */

typedef enum {
  SACCADE_FIGURE_FORMAT_PNG,
  SACCADE_FIGURE_FORMAT_SVG,
  SACCADE_FIGURE_FORMAT_PDF,
} SaccadeFigureFormat;

/* The format named by @path's extension (.png, .svg, .pdf; case-insensitive). FALSE and
 * G_IO_ERROR_INVALID_ARGUMENT otherwise. */
gboolean saccade_figure_format_from_path (const char *path, SaccadeFigureFormat *out,
                                          GError **error);

/* How a figure is exported (saccade_figure_export_*()); NULL options export at the natural
 * size (PNG at 144 dpi) with the figure's own title and "␣"-marked labels.
 *
 * The figure is laid out so that its base font prints at @font_size points when the page
 * is @width_mm wide: it is drawn at a width of width × 10 / font_size points and scaled to
 * the asked width; the height follows the figure's aspect ratio. */
typedef enum {
  SACCADE_FIGURE_LABELS_VISIBLE_SPACE, /* leading and trailing spaces shown as "␣" */
  SACCADE_FIGURE_LABELS_PLAIN,         /* token labels as plain text (spaces as spaces) */
} SaccadeFigureLabelStyle;

typedef struct {
  double width_mm;           /* the figure's printed width; 0: its natural width */
  double dpi;                /* PNG pixels per inch (written in its pHYs chunk); 0: 144 */
  const char *font_family;   /* a Pango family list; NULL: SACCADE_FIGURE_FONT_FAMILY */
  double font_size;          /* the base font in points at print size; 0: 10 */
  gboolean no_title;         /* draw no title */
  const char *title;         /* replaces the figure's title; NULL: the figure's own */
  SaccadeFigureLabelStyle labels;
} SaccadeFigureExportOptions;

/* The widths of the journal presets: one column and two columns of a journal page. */
#define SACCADE_FIGURE_JOURNAL_SINGLE_MM 89.0
#define SACCADE_FIGURE_JOURNAL_DOUBLE_MM 183.0
/* The limits an option is checked against (saccade_figure_export_options_check). */
#define SACCADE_FIGURE_MIN_WIDTH_MM 20.0
#define SACCADE_FIGURE_MAX_WIDTH_MM 2000.0
#define SACCADE_FIGURE_MIN_DPI 36.0
#define SACCADE_FIGURE_MAX_DPI 2400.0
#define SACCADE_FIGURE_MIN_FONT_PT 4.0
#define SACCADE_FIGURE_MAX_FONT_PT 72.0

/* Today's defaults: natural width, 144 dpi, the figure font at 10 pt, its title,
 * visible-space labels. */
void saccade_figure_export_options_init (SaccadeFigureExportOptions *opts);
/* Applies preset @name ("journal-single": 89 mm wide, "journal-double": 183 mm; both
 * 300 dpi and 8 pt). Unknown names are G_IO_ERROR_INVALID_ARGUMENT listing the known. */
gboolean saccade_figure_export_options_preset (SaccadeFigureExportOptions *opts,
                                               const char *name, GError **error);
/* The label style named "plain" or "visible-space"; others are G_IO_ERROR_INVALID_ARGUMENT. */
gboolean saccade_figure_label_style_from_string (const char *name,
                                                 SaccadeFigureLabelStyle *out, GError **error);
/* G_IO_ERROR_INVALID_ARGUMENT naming the first value outside its limits (above). */
gboolean saccade_figure_export_options_check (const SaccadeFigureExportOptions *opts,
                                              GError **error);
/* @labels (@n, may be NULL) as @opts' style shows them: NULL when they are shown as they
 * are (NULL options, visible space), else a copy to g_strfreev(). */
char **saccade_figure_export_labels (const SaccadeFigureExportOptions *opts,
                                     const char *const *labels, int n);
/* The title to draw: NULL under no_title, the override when set, else @title. */
const char *saccade_figure_export_title (const SaccadeFigureExportOptions *opts,
                                         const char *title);

/* Writes the figure to @path in the format its extension names, at a size that fits its
 * labels or the width @opts asks (may be NULL: the natural size, PNG at 144 dpi), with
 * title, token labels on both axes and a colour bar (the lines figure: a legend of head
 * colours). The file is written beside @path and renamed over it: a failed export leaves
 * no half file. Errors: G_IO_ERROR_INVALID_ARGUMENT (extension, empty figure), G_FILE_ERROR_* (writing),
 * G_IO_ERROR_FAILED (Cairo's status text). */
gboolean saccade_figure_export_heatmap (const SaccadeHeatmapFigure *f, const char *path,
                                        const SaccadeFigureExportOptions *opts, GError **error);
/* The head's @range (NULL: all of it): just those queries and keys, their positions on the
 * axes, sized for the range (cells of 520 pt / the longer side, at most 32 pt; PNG at two
 * pixels a point, so a whole 8,192-token head is a 1,040-pixel matrix drawn from level 3).
 * A range that is empty or outside the head is G_IO_ERROR_INVALID_ARGUMENT naming it. Any
 * thread (the pyramid is immutable; labels are borrowed for the call). */
gboolean saccade_figure_export_heatmap_lod (const SaccadeHeatmapLodFigure *f,
                                            const SaccadeTokenRange *range, const char *path,
                                            const SaccadeFigureExportOptions *opts,
                                            GError **error);
gboolean saccade_figure_export_grid (const SaccadeGridFigure *f, const char *path,
                                     const SaccadeFigureExportOptions *opts, GError **error);
gboolean saccade_figure_export_lines (const SaccadeLinesFigure *f, const char *path,
                                      const SaccadeFigureExportOptions *opts, GError **error);
gboolean saccade_figure_export_profile (const SaccadeProfileFigure *f, const char *path,
                                        const SaccadeFigureExportOptions *opts, GError **error);
gboolean saccade_figure_export_bars (const SaccadeBarsFigure *f, const char *path,
                                     const SaccadeFigureExportOptions *opts, GError **error);
gboolean saccade_figure_export_distance (const SaccadeDistanceFigure *f, const char *path,
                                         const SaccadeFigureExportOptions *opts,
                                         GError **error);
gboolean saccade_figure_export_loss (const SaccadeLossFigure *f, const char *path,
                                     const SaccadeFigureExportOptions *opts, GError **error);

/* ------------------------------------------------------------------------------------ */
/* For widgets: style, visible range, geometry                                           */

typedef struct {
  double fg[4];        /* text, ticks, outlines: RGBA */
  double bg[4];        /* painted first; alpha 0 leaves the target as it is */
  double font_size;    /* base size in points (user units); 0 = 10 */
  const char *font_family; /* a Pango family list; NULL = SACCADE_FIGURE_FONT_FAMILY */
} SaccadeFigureStyle;

/* Families tried in order: Cantarell (GNOME's UI font) for Latin text, Noto Sans CJK SC for
 * Chinese/Japanese/Korean, then whatever fontconfig finds. */
#define SACCADE_FIGURE_FONT_FAMILY "Cantarell, Noto Sans, Noto Sans CJK SC, sans-serif"

/* Black on white: the export style. */
void saccade_figure_style_init (SaccadeFigureStyle *style);

/* The cells a heatmap shows: rows row0 .. row0 + rows, columns col0 .. col0 + cols
 * (fractional values show parts of cells). rows or cols <= 0 means all of them. */
typedef struct {
  double row0, col0, rows, cols;
} SaccadeCellRange;

/* Where the last draw put the matrix: (x, y, width, height) in user units, showing
 * @range. cell_w/cell_h are one cell's size. */
typedef struct {
  double x, y, width, height, cell_w, cell_h;
  SaccadeCellRange range;
  int n_rows, n_cols;
  /* Set by the pyramid's renderer only (else 0): the level drawn, its cells' side in
   * tokens, and the minimap (the whole head with the visible rectangle), 0 x 0 when none. */
  int level, block;
  double mini_x, mini_y, mini_w, mini_h;
} SaccadeHeatmapGeometry;

/* The heatmap with a style (NULL: export style) and a visible range (NULL: everything);
 * fills @geom (may be NULL). Label margins are sized for all labels, so panning does not
 * move the matrix. */
void saccade_figure_heatmap_draw_full (cairo_t *cr, const SaccadeHeatmapFigure *f,
                                       const SaccadeCellRange *range,
                                       const SaccadeFigureStyle *style, double width,
                                       double height, SaccadeHeatmapGeometry *geom);

/* The pyramid's heatmap with a style (NULL: export style) and a visible range of cells
 * (NULL: all); @minimap: when the range is not the whole head, a small overview with the
 * visible rectangle under the colour bar (room for it is kept whether or not it is
 * shown, so zooming in does not move the matrix). Fills @geom (may be NULL). Margins
 * depend on the whole head's positions and f->label_em, not on the range: panning moves
 * only the cells. Costs what the visible pixels cost, not what the head has: docs/
 * benchmarks.md ("Heatmap at 8,192 tokens"). */
void saccade_figure_heatmap_lod_draw_full (cairo_t *cr, const SaccadeHeatmapLodFigure *f,
                                           const SaccadeCellRange *range, gboolean minimap,
                                           const SaccadeFigureStyle *style, double width,
                                           double height, SaccadeHeatmapGeometry *geom);

/* The automatic (or f's own) colour range of a pyramid's figure, as
 * saccade_figure_heatmap_range() does for a matrix. */
void saccade_figure_heatmap_lod_range (const SaccadeHeatmapLodFigure *f, double *vmin,
                                       double *vmax);

/* The widest of @n labels in font sizes (the layout's own font), for
 * SaccadeHeatmapLodFigure.label_em; 0 for NULL labels. */
double saccade_figure_labels_em (const char *const *labels, int n);

/* The cell under (@x, @y), or FALSE outside the matrix. */
gboolean saccade_heatmap_geometry_cell_at (const SaccadeHeatmapGeometry *geom, double x,
                                           double y, int *row, int *col);

/* The automatic colour range of the data: [0, max] for a linear sequential map, [min
 * positive (but at least max / 10^4), max] for a log scale, [-m, m] with m = max |v| for a
 * diverging map; a non-automatic figure's own range. Masked cells are left out. */
void saccade_figure_heatmap_range (const SaccadeHeatmapFigure *f, double *vmin, double *vmax);

/* Every head's thumbnail at most 64 x 64 cells (block maxima of bigger heads or of the
 * overviews, each head scaled to its own maximum), kept with colour images of them: built once per data set, so
 * that redrawing the grid costs one small paint per head. Nothing of @f is borrowed after
 * the call. */
typedef struct _SaccadeGridThumbs SaccadeGridThumbs;
SaccadeGridThumbs *saccade_grid_thumbs_new (const SaccadeGridFigure *f);
void saccade_grid_thumbs_free (SaccadeGridThumbs *thumbs); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeGridThumbs, saccade_grid_thumbs_free)

/* Where every head's thumbnail is: the one description that drawing, hit-testing, the
 * hover and selection outlines and the labels all read (head_rect). The layers may be
 * wrapped into bands: with layers across, band b holds layers b * band_layers .. and sits
 * below band b - 1; with layers down, to its right. */
typedef struct {
  int n_layers, n_heads, n_kv_heads;
  gboolean layers_across; /* layers are columns and heads rows (chosen when it gives bigger
                           * thumbnails), else layers are rows */
  double x, y;         /* top-left corner of layer 0, head 0's thumbnail */
  double thumb;        /* a thumbnail's side */
  double step;         /* from one head or layer to the next (thumbnail + gap) */
  double group_gap;    /* extra space between KV groups */
  int n_bands;         /* bands the layers are wrapped into (0 or 1: one) */
  int band_layers;     /* layers per band (the last may hold fewer); 0: all */
  double band_step;    /* from one band's first thumbnail to the next's, along the heads */
  int layer_label_every; /* layer numbers fit every this many layers (1: every layer; the
                          * global layers of a model with local ones are always numbered) */
} SaccadeGridGeometry;

/* The grid with a style (NULL: export style) and prebuilt thumbnails (NULL: built for the
 * call from @f->heads; else @f->heads may be NULL). A head at (@sel_layer, @sel_head) is
 * outlined as selected (-1: none). Fills @geom (may be NULL). */
void saccade_figure_grid_draw_full (cairo_t *cr, const SaccadeGridFigure *f,
                                    SaccadeGridThumbs *thumbs, const SaccadeFigureStyle *style,
                                    int sel_layer, int sel_head, double width, double height,
                                    SaccadeGridGeometry *geom);

gboolean saccade_grid_geometry_head_at (const SaccadeGridGeometry *geom, double x, double y,
                                        int *layer, int *head);
/* The thumbnail's rectangle (x, y, width, height). */
void saccade_grid_geometry_head_rect (const SaccadeGridGeometry *geom, int layer, int head,
                                      double rect[4]);
/* The rectangle (x, y, width, height) that holds every thumbnail; FALSE (and @rect
 * untouched) for a geometry of nothing drawn. */
gboolean saccade_grid_geometry_extent (const SaccadeGridGeometry *geom, double rect[4]);

typedef struct {
  int n;
  double left_x, right_x;   /* the inner edges of the two label columns (lines run between) */
  double label_w;           /* a label column's width */
  double y0, row_h;         /* token i's row spans y0 + i * row_h .. + row_h */
} SaccadeLinesGeometry;

/* The lines figure with a style (NULL: export style). @highlight_is_key: the figure's
 * highlight_token is a key (right column: the lines into it) rather than a query. Fills
 * @geom (may be NULL). */
void saccade_figure_lines_draw_full (cairo_t *cr, const SaccadeLinesFigure *f,
                                     const SaccadeFigureStyle *style, gboolean highlight_is_key,
                                     double width, double height, SaccadeLinesGeometry *geom);

/* The token label under (@x, @y): FALSE between and outside the columns; *@is_key says
 * which column. */
gboolean saccade_lines_geometry_token_at (const SaccadeLinesGeometry *geom, double x, double y,
                                          int *token, gboolean *is_key);

/* The profile with a style (NULL: export style). */
void saccade_figure_profile_draw_full (cairo_t *cr, const SaccadeProfileFigure *f,
                                       const SaccadeFigureStyle *style, double width,
                                       double height);

/* Where the bars went: bar i spans x0 + i * step .. + step, over y0 .. y0 + height. */
typedef struct {
  int n;
  double x0, step, y0, height;
} SaccadeBarsGeometry;

void saccade_figure_bars_draw_full (cairo_t *cr, const SaccadeBarsFigure *f,
                                    const SaccadeFigureStyle *style, double width,
                                    double height, SaccadeBarsGeometry *geom);
/* The bar under (@x, @y), or FALSE. */
gboolean saccade_bars_geometry_bar_at (const SaccadeBarsGeometry *geom, double x, double y,
                                       int *bar);

/* The distance matrix with a style (NULL: export style); fills @geom (may be NULL) with the
 * matrix's place: its cells are positions in the figure's order (row r is item
 * order[r]), found with saccade_heatmap_geometry_cell_at(). */
void saccade_figure_distance_draw_full (cairo_t *cr, const SaccadeDistanceFigure *f,
                                        const SaccadeFigureStyle *style, double width,
                                        double height, SaccadeHeatmapGeometry *geom);

/* Where the loss curve went: position q's slot spans x0 + q * step .. + step, the plot
 * (x0, y0, width, height). */
typedef struct {
  int n;
  double x0, step, y0, width, height;
} SaccadeLossGeometry;

void saccade_figure_loss_draw_full (cairo_t *cr, const SaccadeLossFigure *f,
                                    const SaccadeFigureStyle *style, double width,
                                    double height, SaccadeLossGeometry *geom);
/* The position under (@x, @y), or FALSE outside the plot. */
gboolean saccade_loss_geometry_position_at (const SaccadeLossGeometry *geom, double x, double y,
                                            int *position);

/* The colour of head @head of @n_heads in the lines figure (and its legend): RGB 0..1. */
void saccade_figure_head_color (int head, int n_heads, double rgb[3]);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* Erasure curves (saccade-figure-erasure.c)                                             */

G_BEGIN_DECLS

/* One ordering's erasure curve: p(target) after the first k tokens are erased, k = 0 ..
 * n_points − 1 (the fraction removed is k / (n_points − 1)), and the fraction removed when
 * the top-1 first flips. */
typedef struct {
  const char *name;         /* the legend's and the row's text ("attention"); random: unused */
  const double *p_target;   /* (n_points); non-finite values break the line */
  double fraction;          /* in [0, 1], or NaN: never flips */
  gboolean random;          /* one seed of the random ordering: a thin grey line and dot,
                             * summarised by the seeds' median (type 7) */
} SaccadeErasureSeries;

typedef struct {
  int n_points;                       /* tokens of the sentence (the query included), >= 2 */
  int n_series;
  const SaccadeErasureSeries *series; /* (n_series): named orderings in their colours (the
                                       * lines figure's 0, 1, ...), random seeds in grey */
  double random_median;               /* the random seeds' median fraction removed at the
                                       * flip, computed by the caller (the engine's
                                       * definition); NaN: never; unused without seeds */
  const char *value_name;             /* the left panel's value caption; NULL: "p(target)" */
  const char *title;                  /* may be NULL */
} SaccadeErasureFigure;

/* Two panels: p(target) against the fraction removed, and the fraction removed at the flip
 * per ordering ("never" in its own column). The short form uses the export style. */
void saccade_figure_erasure_draw (cairo_t *cr, const SaccadeErasureFigure *f, double width,
                                  double height);
void saccade_figure_erasure_draw_full (cairo_t *cr, const SaccadeErasureFigure *f,
                                       const SaccadeFigureStyle *style, double width,
                                       double height);
/* The size export uses (user units), fitting the title and the orderings' rows. */
void saccade_figure_erasure_natural_size (const SaccadeErasureFigure *f, double *w, double *h);
/* As saccade_figure_export_heatmap(); an empty figure (n_points < 2, no series) is
 * G_IO_ERROR_INVALID_ARGUMENT. */
gboolean saccade_figure_export_erasure (const SaccadeErasureFigure *f, const char *path,
                                        const SaccadeFigureExportOptions *opts, GError **error);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* Faithfulness: attention against ablation (saccade-figure-scatter.c,                   */
/* saccade-figure-faithfulness.c)                                                        */

G_BEGIN_DECLS

/*   scatter       one point per item (x: an attention importance, y: its leave-one-out
 *                 importance), labelled axes, Kendall τ and Spearman ρ with their p printed
 *                 in the plot's corner, optional point labels; with @bars, per-item bars of
 *                 both values side by side (each scaled to its own maximum) beside it
 *   faithfulness  Jain & Wallace's Table 2 as a figure: one row per attention source, its
 *                 mean τ as a dot with ± std whiskers on a [−1, 1] axis (over the strip of
 *                 each sentence's τ when the row has them), and the share of sentences with
 *                 p < 0.05 as a bar on [0, 1] */
typedef struct {
  int n;
  const double *x, *y;                /* (n); a point with a NaN is left out */
  const char *const *labels;          /* (n) point labels, or NULL: none */
  const char *x_name, *y_name;        /* the axes' captions; may be NULL */
  const char *title;                  /* may be NULL */
  double tau, tau_p, rho, rho_p;      /* printed on the plot; NaN: "undefined" */
  gboolean bars;                      /* per-item bars beside the scatter */
} SaccadeScatterFigure;

typedef struct {
  const char *name;                   /* the source's name, shown left of its row */
  int n_defined, n_undefined;         /* sentences with and without a defined τ */
  double tau_mean, tau_std;           /* NaN std: no whiskers; NaN mean: row left empty */
  double share_significant;           /* in [0, 1], or NaN */
  const double *taus;                 /* (n_taus) each sentence's τ, drawn as a strip of
                                       * points behind the mean (the distribution); NULL:
                                       * none */
  int n_taus;
} SaccadeFaithRow;

typedef struct {
  int n_rows;
  const SaccadeFaithRow *rows;        /* (n_rows) */
  int n_sentences;                    /* named in the caption */
  const char *title;                  /* may be NULL */
} SaccadeFaithfulnessFigure;

void saccade_figure_scatter_draw (cairo_t *cr, const SaccadeScatterFigure *f, double width,
                                  double height);
void saccade_figure_faithfulness_draw (cairo_t *cr, const SaccadeFaithfulnessFigure *f,
                                       double width, double height);
gboolean saccade_figure_export_scatter (const SaccadeScatterFigure *f, const char *path,
                                        const SaccadeFigureExportOptions *opts, GError **error);
gboolean saccade_figure_export_faithfulness (const SaccadeFaithfulnessFigure *f,
                                             const char *path,
                                             const SaccadeFigureExportOptions *opts,
                                             GError **error);

/* Where the scatter went: the plot (x0, y0, width, height) in user units, showing
 * [xmin, xmax] left to right and [ymin, ymax] bottom to top; the bars' panel (bars_x0 ..
 * + bars_w; 0 wide without bars), item i's row at bars_y0 + i * bar_row_h. */
typedef struct {
  double x0, y0, width, height, xmin, xmax, ymin, ymax;
  double bars_x0, bars_w, bars_y0, bar_row_h;
} SaccadeScatterGeometry;

void saccade_figure_scatter_draw_full (cairo_t *cr, const SaccadeScatterFigure *f,
                                       const SaccadeFigureStyle *style, double width,
                                       double height, SaccadeScatterGeometry *geom);
/* The sizes export uses (user units). */
void saccade_figure_scatter_natural_size (const SaccadeScatterFigure *f, double *w, double *h);

/* Where the faithfulness figure went: row r's centre at y0 + (r + 0.5) * row_h; τ = t at
 * tau_x0 + (t + 1) / 2 * tau_w; a share s at share_x0 + s * share_w. */
typedef struct {
  int n_rows;
  double y0, row_h, tau_x0, tau_w, share_x0, share_w;
} SaccadeFaithfulnessGeometry;

void saccade_figure_faithfulness_draw_full (cairo_t *cr, const SaccadeFaithfulnessFigure *f,
                                            const SaccadeFigureStyle *style, double width,
                                            double height, SaccadeFaithfulnessGeometry *geom);
void saccade_figure_faithfulness_natural_size (const SaccadeFaithfulnessFigure *f, double *w,
                                               double *h);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* Ablation effects (saccade-figure-effects.c)                                           */

G_BEGIN_DECLS

/* effects map  one effect per head of a model (the head sweep: the change of the output
 *              when that head alone is ablated), layers across and heads down, on the
 *              diverging red-blue map centred at 0 with a symmetric range [-m, m], NaN
 *              cells hatched, heads whose ablation changed the top-1 marked with a ring */
typedef struct {
  int n_layers, n_heads;
  const double *values;             /* (n_layers, n_heads) layer-major; NaN: not measured */
  const gboolean *flipped;          /* (n_layers, n_heads) or NULL: nothing marked */
  const char *value_name;           /* the colour bar's caption with its units; may be NULL */
  const char *flip_name;            /* the mark's legend ("top-1 flipped"); NULL: no legend */
  const char *layer_name, *head_name; /* the axes' captions; NULL: "Layer", "Head" */
  const char *title;                /* may be NULL */
  double range;                     /* colours span [-range, range]; <= 0: m = max |v| */
} SaccadeEffectsMapFigure;

typedef struct {
  int n_layers, n_heads;
  double x, y;                      /* top-left corner of layer 0, head 0's cell */
  double cell_w, cell_h;            /* layer l, head h spans x + l cell_w, y + h cell_h */
} SaccadeEffectsMapGeometry;

/* The colour range's half-width m the figure uses (f->range, or max |v| over the finite
 * values; 1 when there are none or all are 0). */
double saccade_figure_effects_map_range (const SaccadeEffectsMapFigure *f);
void saccade_figure_effects_map_draw (cairo_t *cr, const SaccadeEffectsMapFigure *f,
                                      double width, double height);
/* With a style (NULL: export style); the head (@sel_layer, @sel_head) outlined (-1: none);
 * fills @geom (may be NULL). */
void saccade_figure_effects_map_draw_full (cairo_t *cr, const SaccadeEffectsMapFigure *f,
                                           const SaccadeFigureStyle *style, int sel_layer,
                                           int sel_head, double width, double height,
                                           SaccadeEffectsMapGeometry *geom);
/* The head under (@x, @y), or FALSE outside the map. */
gboolean saccade_effects_map_geometry_head_at (const SaccadeEffectsMapGeometry *geom, double x,
                                               double y, int *layer, int *head);
gboolean saccade_figure_export_effects_map (const SaccadeEffectsMapFigure *f, const char *path,
                                            const SaccadeFigureExportOptions *opts,
                                            GError **error);

/* paired bars  two signed values per token side by side (token leave-one-out: the effect
 *              of masking the token and of dropping it), around a zero line, with a legend;
 *              NaN draws no bar (the query token, never erased) */
typedef struct {
  int n;
  const double *a, *b;              /* (n) each */
  const char *a_name, *b_name;      /* the legend's names of the two series */
  const char *const *labels;        /* (n) display strings, or NULL: positions */
  const char *value_name;           /* the value axis' caption with its units; may be NULL */
  const char *title;                /* may be NULL */
} SaccadePairedBarsFigure;

/* Token i's pair spans x0 + i * step .. + step; the plot spans y0 .. y0 + height. */
typedef struct {
  int n;
  double x0, step, y0, height;
} SaccadePairedBarsGeometry;

void saccade_figure_paired_bars_draw (cairo_t *cr, const SaccadePairedBarsFigure *f,
                                      double width, double height);
void saccade_figure_paired_bars_draw_full (cairo_t *cr, const SaccadePairedBarsFigure *f,
                                           const SaccadeFigureStyle *style, int highlight,
                                           double width, double height,
                                           SaccadePairedBarsGeometry *geom);
/* The token under (@x, @y), or FALSE. */
gboolean saccade_paired_bars_geometry_token_at (const SaccadePairedBarsGeometry *geom, double x,
                                                double y, int *token);
gboolean saccade_figure_export_paired_bars (const SaccadePairedBarsFigure *f, const char *path,
                                            const SaccadeFigureExportOptions *opts,
                                            GError **error);
/* The colours of the two series (RGB 0..1), for a legend drawn elsewhere. */
void saccade_figure_paired_bars_color (int series, double rgb[3]);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* Scales the figures actually draw (saccade-figure-heatmap.c, saccade-figure-grid.c)     */

G_BEGIN_DECLS

/* The scale @f is drawn on: f->scale, except that a diverging map is always linear (its
 * range is [-m, m] and a logarithm of signed values is undefined), and its colour bar is
 * labelled so. A face that offers a scale control greys out "log" for a diverging map. */
SaccadeScale saccade_figure_heatmap_scale (const SaccadeHeatmapFigure *f);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* Gradient attributions (saccade-figure-attribution.c)                                  */

G_BEGIN_DECLS

/* attribution  per-token importances as rows of bars, one row per source (attention,
 *              leave-one-out, each gradient method) sharing the token axis, each row scaled
 *              by its own largest |value| (printed at its right, so rows compare by shape,
 *              not by units); an unsigned row grows up from its baseline in one colour, a
 *              signed row (gradient × input, integrated gradients) grows both ways from its
 *              centre line, coloured by sign on the diverging red-blue map (red > 0); NaN
 *              draws no bar and a row without values is named "not computed"; token
 *              labels under the last row, rotated when they do not fit */
typedef struct {
  const char *name;                 /* shown left of the row */
  const double *values;             /* (n_tokens); NULL: not computed */
  gboolean is_signed;               /* drawn around 0 with the diverging colours */
} SaccadeAttrRow;

typedef struct {
  int n_tokens, n_rows;
  const SaccadeAttrRow *rows;       /* (n_rows) */
  const char *const *labels;        /* (n_tokens) display strings, or NULL: positions */
  const char *caption;              /* under the title (e.g. the completeness line); may be
                                     * NULL */
  const char *title;                /* may be NULL */
} SaccadeAttributionFigure;

/* Token i spans x0 + i * step .. + step; row r spans y0 + r * row_h .. + row_h. */
typedef struct {
  int n_tokens, n_rows;
  double x0, step, y0, row_h;
} SaccadeAttributionGeometry;

void saccade_figure_attribution_draw (cairo_t *cr, const SaccadeAttributionFigure *f,
                                      double width, double height);
/* With a style (NULL: export style); token @highlight (−1: none) shaded across the rows;
 * fills @geom (may be NULL; zeroed when nothing is drawn). */
void saccade_figure_attribution_draw_full (cairo_t *cr, const SaccadeAttributionFigure *f,
                                           const SaccadeFigureStyle *style, int highlight,
                                           double width, double height,
                                           SaccadeAttributionGeometry *geom);
/* The size export uses (user units): wide enough for every token's label. */
void saccade_figure_attribution_natural_size (const SaccadeAttributionFigure *f, double *w,
                                              double *h);
/* The token under (@x, @y), or FALSE. */
gboolean saccade_attribution_geometry_token_at (const SaccadeAttributionGeometry *geom,
                                                double x, double y, int *token);
/* As saccade_figure_export_heatmap(); no rows or no tokens is G_IO_ERROR_INVALID_ARGUMENT. */
gboolean saccade_figure_export_attribution (const SaccadeAttributionFigure *f,
                                            const char *path,
                                            const SaccadeFigureExportOptions *opts,
                                            GError **error);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* Adversarial attention (saccade-figure-adversarial.c)                                  */

G_BEGIN_DECLS

/* adversarial  how far attention can move while the output stays within ε (Jain & Wallace
 *              2019, 4.2): on the left the JSD reached (y, 0 .. ln 2, a dashed line at ln 2:
 *              disjoint support) against ε (x, log scale), one curve per series with its
 *              label in a legend; on the right (when rows are given) the original and the
 *              adversarial attention row at the largest ε as two rows of bars over the key
 *              tokens, one scale for both (the larger maximum). Without rows only the curve
 *              is drawn, over the whole width. */
typedef struct {
  const char *label;                /* legend text; may be NULL */
  int n;                            /* points */
  const double *epsilon, *jsd;      /* (n): ε > 0 increasing; JSD in nats */
} SaccadeAdvSeries;

typedef struct {
  int n_series;
  const SaccadeAdvSeries *series;   /* (n_series) */
  int n_tokens;                     /* 0: no rows */
  const double *original, *adversarial; /* (n_tokens) each, or NULL */
  int rows_head, rows_row;          /* the head and query row the rows belong to */
  double rows_epsilon;              /* the ε the adversarial row met */
  const char *const *labels;        /* (n_tokens) display strings, or NULL: positions */
  const char *title;                /* may be NULL */
} SaccadeAdversarialFigure;

/* With a style (NULL: export style). */
void saccade_figure_adversarial_draw (cairo_t *cr, const SaccadeAdversarialFigure *f,
                                      const SaccadeFigureStyle *style, double width,
                                      double height);
/* The size export uses (user units). */
void saccade_figure_adversarial_natural_size (const SaccadeAdversarialFigure *f, double *w,
                                              double *h);
/* As saccade_figure_export_heatmap(); no series is G_IO_ERROR_INVALID_ARGUMENT. */
gboolean saccade_figure_export_adversarial (const SaccadeAdversarialFigure *f,
                                            const char *path,
                                            const SaccadeFigureExportOptions *opts,
                                            GError **error);

G_END_DECLS
