/* saccade-figure-cache.h — a figure rendered once into an image and reused until it goes
 * stale: what the widgets draw from, and what the drawing benchmark measures.
 *
 * The cache holds one ARGB32 image at a given size and device scale and, for GTK
 * snapshots, the same pixels as a GdkTexture. saccade_figure_cache_ensure() renders through
 * the caller's function only when the cache was invalidated or the size/scale changed.
 * Not thread-safe: one cache per widget, used on its thread.
 */
#pragma once

#include <cairo.h>
#include <gdk/gdk.h>

G_BEGIN_DECLS

/* Draws the figure into (0, 0, @width, @height) of @cr (user units; the surface's device
 * scale maps them to pixels). */
typedef void (*SaccadeFigureRenderFunc) (cairo_t *cr, double width, double height,
                                         gpointer user_data);

typedef struct _SaccadeFigureCache SaccadeFigureCache;

SaccadeFigureCache *saccade_figure_cache_new (void);
void saccade_figure_cache_free (SaccadeFigureCache *cache); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeFigureCache, saccade_figure_cache_free)

/* Marks the image stale: the next ensure renders again. */
void saccade_figure_cache_invalidate (SaccadeFigureCache *cache);

/* Makes the image current for @width x @height user units at @scale pixels per unit
 * (clamped to at least 1 x 1), rendering through @render when needed. Returns TRUE when it
 * rendered. The image starts fully transparent. */
gboolean saccade_figure_cache_ensure (SaccadeFigureCache *cache, int width, int height,
                                      int scale, SaccadeFigureRenderFunc render,
                                      gpointer user_data);

/* The current image (borrowed; NULL before the first ensure). */
cairo_surface_t *saccade_figure_cache_get_surface (SaccadeFigureCache *cache);

/* The current image as a texture (borrowed; made on first use after each render). */
GdkTexture *saccade_figure_cache_get_texture (SaccadeFigureCache *cache);

/* Paints the current image at (0, 0) of @cr: one cairo_paint of a ready surface. */
void saccade_figure_cache_paint (SaccadeFigureCache *cache, cairo_t *cr);

G_END_DECLS
