/* saccade-view-private.h — what the three figure widgets share (saccade-view-common.c):
 * the figure style taken from the widget's theme and font, and drawing the cached figure
 * into a snapshot. Internal to ui/.
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-figure-cache.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* The theme's foreground colour, a transparent background (the widget's own background
 * shows), and the widget's font at 90 % of its size in pixels. */
void saccade_view_style_init (GtkWidget *widget, SaccadeFigureStyle *style);

/* Renders through @render when @cache is stale or the widget's size or scale changed,
 * then appends the cached image (saccade_view_append_image: a texture where the renderer
 * draws textures; a redraw costs no figure work). Returns TRUE when it rendered. */
gboolean saccade_view_snapshot_cache (GtkWidget *widget, GtkSnapshot *snapshot,
                                      SaccadeFigureCache *cache, SaccadeFigureRenderFunc render,
                                      gpointer user_data);

/* Appends an image at @bounds: @texture as a texture node where the widget's renderer draws
 * textures on the GPU, else (GTK's Cairo renderer, or @texture NULL) @surface, the same
 * pixels as an ARGB32 image, painted through a Cairo node: the Cairo renderer would convert
 * a texture's every pixel through floats on every frame (saccade-view-common.c). */
void saccade_view_append_image (GtkWidget *widget, GtkSnapshot *snapshot, GdkTexture *texture,
                                cairo_surface_t *surface, const graphene_rect_t *bounds);

/* FALSE when the widget is drawn by GTK's Cairo renderer (a texture would be converted on
 * every frame there), TRUE otherwise. */
gboolean saccade_view_draws_textures (GtkWidget *widget);

/* Outlines (x, y, w, h) in the theme's foreground colour: hover and selection marks drawn
 * over the cached figure without rendering it again. */
void saccade_view_snapshot_outline (GtkWidget *widget, GtkSnapshot *snapshot, double x,
                                    double y, double w, double h, double line_width);

/* Replaces *@ptr by a copy of @str unless they are equal; TRUE when it changed (GLib
 * 2.76's g_set_str(), which Debian 12's GLib 2.74 lacks). */
gboolean saccade_view_set_str (char **ptr, const char *str);

/* Copies @n labels (NULL: NULL). g_strfreev() the result. */
char **saccade_view_labels_dup (const char *const *labels, int n);

G_END_DECLS
