/* saccade-figure-types.h — models side by side: one panel per model, its heads as a grid
 * (layers down, query heads across) coloured by a category (the head's type) or by a
 * value through a colour map, the panels' rows scaled to the same height so that a row
 * sits at its layer's relative depth (layer / n_layers) and models of different depths line
 * up; a legend of the categories with each panel's count of each. The renderer of the
 * Compare page's "Two models" view and of its export.
 *
 * Plain data, borrowed for the call (ui/ does not see the engine: the caller passes the
 * category names and each head's category index). Pure functions, any thread.
 */
#pragma once

#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

typedef struct {
  const char *name;          /* the panel's title ("A: SmolLM2 135M"); may be NULL */
  int n_layers, n_heads;
  const int *category;       /* (n_layers, n_heads): index into the figure's categories,
                              * or NULL when coloured by @values */
  const double *values;      /* (n_layers, n_heads), or NULL; NaN cells are hatched */
  const int *counts;         /* (n_categories) heads of each category, or NULL */
} SaccadeTypesPanel;

/* At most this many panels and categories. */
#define SACCADE_TYPES_MAX_PANELS 4
#define SACCADE_TYPES_MAX_CATEGORIES 8

typedef struct {
  int n_panels;                        /* 1 .. SACCADE_TYPES_MAX_PANELS */
  const SaccadeTypesPanel *panels;
  int n_categories;                    /* 0 .. SACCADE_TYPES_MAX_CATEGORIES */
  const char *const *category_names;   /* (n_categories) */
  const char *value_name;              /* the colour bar's caption in value mode; may be NULL */
  SaccadeColormap colormap;            /* value mode */
  const char *title;                   /* may be NULL */
} SaccadeTypesFigure;

/* Category @k's colour (RGB 0..1) of @n: a qualitative palette (Okabe & Ito 2008, readable
 * by colour-blind viewers), the last category grey when @last_is_other. */
void saccade_figure_types_color (int k, int n, gboolean last_is_other, double rgb[3]);

/* Draws into (0, 0, @width, @height); the short form uses the export style. Value mode
 * (every panel's category NULL): one colour range over every panel's finite values. */
void saccade_figure_types_draw (cairo_t *cr, const SaccadeTypesFigure *f, double width,
                                double height);
void saccade_figure_types_draw_full (cairo_t *cr, const SaccadeTypesFigure *f,
                                     const SaccadeFigureStyle *style, double width,
                                     double height);
/* The size export uses (user units). */
void saccade_figure_types_natural_size (const SaccadeTypesFigure *f, double *w, double *h);
/* As saccade_figure_export_heatmap(); a figure without panels is
 * G_IO_ERROR_INVALID_ARGUMENT. */
gboolean saccade_figure_export_types (const SaccadeTypesFigure *f, const char *path,
                                      const SaccadeFigureExportOptions *opts, GError **error);

G_END_DECLS
