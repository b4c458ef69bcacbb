/* saccade-figure-private.h — what the figure renderers share (saccade-figure-common.c):
 * text in the figures' fonts, the colour bar, the hatching of masked cells, colour images
 * of matrices, and the natural sizes export uses. Internal to ui/.
 */
#pragma once

#include <pango/pangocairo.h>

#include "ui/figures/saccade-figure.h"

/* The interface's gettext domain (DESIGN.md, "Names"), unless the build names it. */
#ifndef GETTEXT_PACKAGE
#define GETTEXT_PACKAGE "saccade"
#endif
#include <glib/gi18n-lib.h>

G_BEGIN_DECLS

/* @style, or the export style copied into @tmp when @style is NULL. */
const SaccadeFigureStyle *saccade_figure_style_resolve (const SaccadeFigureStyle *style,
                                                        SaccadeFigureStyle *tmp);

/* The base font size in user units (style->font_size, or this). */
#define SACCADE_FIGURE_BASE_FONT 10.0
double saccade_figure_font_size (const SaccadeFigureStyle *style);

/* Paints style->bg over (0, 0, w, h) unless it is transparent. */
void saccade_figure_paint_background (cairo_t *cr, const SaccadeFigureStyle *style, double w,
                                      double h);

/* Sets @cr's source to style->fg with its alpha multiplied by @alpha. */
void saccade_figure_set_fg (cairo_t *cr, const SaccadeFigureStyle *style, double alpha);

/* A layout for @cr in the style's font family at @size user units (absolute: the same on
 * every surface and device scale; metrics unhinted so PNG, SVG and PDF agree). Caller
 * unrefs. */
PangoLayout *saccade_figure_layout_new (cairo_t *cr, const SaccadeFigureStyle *style,
                                        double size, gboolean bold);

/* Sets @text (NULL = "") and returns its logical size in user units. */
void saccade_figure_layout_set (PangoLayout *layout, const char *text, double *w, double *h);

/* Draws @layout with its logical box's top-left at (x, y) in the current source. */
void saccade_figure_layout_draw (cairo_t *cr, PangoLayout *layout, double x, double y);

/* The widest of @n labels (NULL labels: the positions 0 .. n - 1), measured with @layout,
 * and the line height. */
double saccade_figure_labels_max_width (PangoLayout *layout, const char *const *labels, int n,
                                        double *line_h);

/* Label @i of @labels, or its position as text in @buf (NULL labels). */
const char *saccade_figure_label (const char *const *labels, int i, char buf[16]);

/* Axis and colour bar ticks over [vmin, vmax]: multiples of a "nice" step (about four
 * intervals) on a linear scale, powers of ten on a log scale. Returns how many (at most
 * SACCADE_FIGURE_MAX_TICKS). */
#define SACCADE_FIGURE_MAX_TICKS 12
int saccade_figure_ticks (SaccadeScale scale, double vmin, double vmax,
                          double ticks[SACCADE_FIGURE_MAX_TICKS]);
/* A tick's value as text: 3 significant digits, exponent form for very small or big. */
void saccade_figure_format_tick (double v, char buf[32]);

/* A vertical colour bar: the ramp of @map over [vmin, vmax] with @scale, ticks and their
 * values on its right, @caption (may be NULL) rotated beside them.
 * _width: the total width it needs for a bar of @bar_w at font @size. */
double saccade_figure_colorbar_width (cairo_t *cr, const SaccadeFigureStyle *style, double size,
                                      double bar_w, SaccadeScale scale, double vmin, double vmax,
                                      const char *caption);
void saccade_figure_colorbar_draw (cairo_t *cr, const SaccadeFigureStyle *style, double size,
                                   SaccadeColormap map, SaccadeScale scale, double vmin,
                                   double vmax, const char *caption, double x, double y,
                                   double bar_w, double height);

/* Fills the current path with the masked-cell look: a neutral tint of the foreground with
 * diagonal hatching @spacing apart, so a masked cell never reads as a weight of 0. Clears
 * the path. */
void saccade_figure_fill_masked (cairo_t *cr, const SaccadeFigureStyle *style, double spacing);

/* An ARGB32 image of @values' cells [r0, r1) x [c0, c1) (row stride @stride floats), one
 * block of @k x @k pixels per cell, coloured through @map after @scale over [vmin, vmax].
 * Causal cells above the diagonal are transparent (drawn by fill_masked underneath); NaN
 * cells too. Caller destroys. */
cairo_surface_t *saccade_figure_cells_image (const float *values, int stride, int r0, int r1,
                                             int c0, int c1, gboolean causal, int k,
                                             SaccadeColormap map, SaccadeScale scale,
                                             double vmin, double vmax);

/* On vector surfaces (PDF, SVG) a matrix of at most this many shown cells is drawn as one
 * filled rectangle per cell, editable and sharp at any zoom; bigger ones are embedded as an
 * image (saccade_figure_cells_image), which keeps files small and viewers fast. */
#define SACCADE_FIGURE_VECTOR_CELLS_MAX (256 * 256)

/* The cells of @cells — an image of one pixel per cell, as saccade_figure_cells_image() and
 * saccade_figure_lod_cells_image() make with k = 1, so the colours are theirs — as filled
 * rectangles of side @side from (x, y); transparent (masked, NaN) cells are left out. */
void saccade_figure_cells_rects (cairo_t *cr, cairo_surface_t *cells, double x, double y,
                                 double side);

/* Device pixels per user unit of @cr: the CTM's scale times the target's device scale
 * (2 on a HiDPI screen, 2 in a PNG export). */
double saccade_figure_pixels_per_unit (cairo_t *cr);

/* TRUE when @cr draws into a vector surface (PDF, SVG, recording), where images are
 * resampled by the viewer: matrices are then embedded with each cell k pixels wide. */
gboolean saccade_figure_target_is_vector (cairo_t *cr);

/* The height a renderer keeps for @title across @width: 0 without one, else @one_line (the
 * band of a one-line title) plus the lines the title wraps to. */
double saccade_figure_title_band (cairo_t *cr, const SaccadeFigureStyle *style,
                                  const char *title, double width, double one_line);

/* The width of @title (may be NULL: 0) in the title font, with the figure's side padding:
 * natural sizes are at least this wide so that titles are not cut. */
double saccade_figure_title_width (cairo_t *cr, const SaccadeFigureStyle *style,
                                   const char *title);

/* Draws @title (may be NULL) in the title font, centred across @width with its top at @y,
 * wrapped at word boundaries when it is wider than @width (never cut). */
void saccade_figure_draw_title (cairo_t *cr, const SaccadeFigureStyle *style,
                                const char *title, double width, double y);

/* The automatic colour range from a matrix's statistics (over its unmasked finite cells:
 * smallest, largest, smallest positive or INFINITY, largest magnitude) for colour map @map
 * drawn on @scale: what saccade_figure_heatmap_range() documents. */
void saccade_figure_range_from_stats (SaccadeColormap map, SaccadeScale scale, double lo,
                                      double hi, double min_pos, double max_abs, double *vmin,
                                      double *vmax);

/* An ARGB32 image of the level-@level cells [i0, i1) x [j0, j1) of @lod, one block of @k x @k
 * pixels per cell, coloured as saccade_figure_cells_image() colours (masked and NaN cells
 * transparent). fp16 levels go through a table of all 65,536 halves' colours. Caller
 * destroys. */
cairo_surface_t *saccade_figure_lod_cells_image (const SaccadeLod *lod, int level, int i0,
                                                 int i1, int j0, int j1, int k,
                                                 SaccadeColormap map, SaccadeScale scale,
                                                 double vmin, double vmax);

/* The same cells as they appear on an image surface: a @w x @h pixel image whose pixel
 * (x, y) is the level-@level cell holding the token at the pixel's centre, token
 * (row0 + (y + 0.5) tokens_per_px, col0 + (x + 0.5) tokens_per_px) — what painting the
 * cells image scaled with CAIRO_FILTER_NEAREST shows, computed directly (pixman's general
 * scaling path cost 10–20 ms a frame at 8,192 tokens). Pixels outside the head, masked or
 * NaN are transparent. Caller destroys. */
cairo_surface_t *saccade_figure_lod_screen_image (const SaccadeLod *lod, int level, double row0,
                                                  double col0, double tokens_per_px, int w,
                                                  int h, SaccadeColormap map,
                                                  SaccadeScale scale, double vmin,
                                                  double vmax);

/* Sizes that fit the figure's labels (user units: points), used by export. */
void saccade_figure_heatmap_lod_natural_size (const SaccadeHeatmapLodFigure *f,
                                              const SaccadeTokenRange *range, double *w,
                                              double *h);
void saccade_figure_heatmap_natural_size (const SaccadeHeatmapFigure *f, double *w, double *h);
void saccade_figure_grid_natural_size (const SaccadeGridFigure *f, double *w, double *h);
void saccade_figure_lines_natural_size (const SaccadeLinesFigure *f, double *w, double *h);
void saccade_figure_profile_natural_size (const SaccadeProfileFigure *f, double *w, double *h);
void saccade_figure_bars_natural_size (const SaccadeBarsFigure *f, double *w, double *h);
void saccade_figure_distance_natural_size (const SaccadeDistanceFigure *f, double *w,
                                           double *h);
void saccade_figure_loss_natural_size (const SaccadeLossFigure *f, double *w, double *h);

/* The one file writer of every figure (saccade-figure-export.c): draws @f with @draw into a
 * PNG, SVG or PDF surface, by @path's extension, of the size @size gives or @opts asks
 * (SaccadeFigureExportOptions; NULL: the natural size, PNG at 144 dpi), collects the bytes
 * and writes them with g_file_set_contents, so a failed export leaves no half file. @title
 * goes into the PDF's metadata (may be NULL). PNGs carry their resolution (pHYs). */
typedef void (*SaccadeFigureDrawFunc) (cairo_t *cr, const void *f, double w, double h);
typedef void (*SaccadeFigureSizeFunc) (const void *f, double *w, double *h);
gboolean saccade_figure_export_drawn (const void *f, const char *title,
                                      SaccadeFigureDrawFunc draw, SaccadeFigureSizeFunc size,
                                      const char *path, const SaccadeFigureExportOptions *opts,
                                      GError **error);
/* Export state carried by the cairo_t being exported to (saccade-figure-svg-text.c):
 * @opts (may be NULL) chooses the font family layouts of the export style use; @svg_text
 * (may be NULL; SVG exports) collects the figure's text as <text> elements, which
 * saccade_figure_layout_draw() writes there instead of drawing glyph outlines. */
void saccade_figure_export_attach (cairo_t *cr, const SaccadeFigureExportOptions *opts,
                                   GString *svg_text);
const SaccadeFigureExportOptions *saccade_figure_export_options_of (cairo_t *cr);
/* Marks @cr as a measuring pass of export (saccade-figure-export.c): the background is not
 * painted, so that the drawing's ink extents are those of its content. */
void saccade_figure_export_set_measuring (cairo_t *cr);
gboolean saccade_figure_export_measuring (cairo_t *cr);
/* Writes @layout at (x, y) as <text> elements when @cr collects SVG text and the layout is
 * not ellipsized; FALSE (nothing written) otherwise. */
gboolean saccade_figure_svg_text_draw (cairo_t *cr, PangoLayout *layout, double x, double y);
/* Inserts @text's elements, grouped, before @svg's closing </svg>. FALSE when there is
 * none. */
gboolean saccade_figure_svg_text_merge (GByteArray *svg, const GString *text);

/* Sets "There is nothing to export" when @empty; returns @empty. */
gboolean saccade_figure_refuse_empty (gboolean empty, GError **error);

G_END_DECLS
