/* saccade-figure-cache.c — a rendered figure kept as an image until it goes stale
 * (saccade-figure-cache.h).
 *
 * The widgets hand GTK the texture: after the first frame a redraw is a textured quad on
 * the GPU, and the figure code runs again only when something it draws has changed.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-cache.h"

#include <string.h>

struct _SaccadeFigureCache {
  cairo_surface_t *surface; /* ARGB32, width * scale x height * scale pixels */
  GdkTexture *texture;      /* the same pixels, made on demand; NULL when stale */
  int width, height, scale; /* in user units and pixels per unit */
  gboolean valid;
};

SaccadeFigureCache *
saccade_figure_cache_new (void)
{
  return g_new0 (SaccadeFigureCache, 1);
}

void
saccade_figure_cache_free (SaccadeFigureCache *cache)
{
  if (cache == NULL)
    return;
  g_clear_pointer (&cache->surface, cairo_surface_destroy);
  g_clear_object (&cache->texture);
  g_free (cache);
}

void
saccade_figure_cache_invalidate (SaccadeFigureCache *cache)
{
  cache->valid = FALSE;
}

gboolean
saccade_figure_cache_ensure (SaccadeFigureCache *cache, int width, int height, int scale,
                             SaccadeFigureRenderFunc render, gpointer user_data)
{
  cairo_t *cr;

  width = MAX (width, 1);
  height = MAX (height, 1);
  scale = MAX (scale, 1);
  if (cache->valid && cache->surface != NULL && width == cache->width
      && height == cache->height && scale == cache->scale)
    return FALSE;

  g_clear_object (&cache->texture);
  if (cache->surface == NULL || width != cache->width || height != cache->height
      || scale != cache->scale)
    {
      g_clear_pointer (&cache->surface, cairo_surface_destroy);
      cache->surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width * scale,
                                                   height * scale);
      cairo_surface_set_device_scale (cache->surface, scale, scale);
      cache->width = width;
      cache->height = height;
      cache->scale = scale;
    }
  cr = cairo_create (cache->surface);
  cairo_set_operator (cr, CAIRO_OPERATOR_CLEAR);
  cairo_paint (cr);
  cairo_set_operator (cr, CAIRO_OPERATOR_OVER);
  render (cr, width, height, user_data);
  cairo_destroy (cr);
  cairo_surface_flush (cache->surface);
  cache->valid = TRUE;
  return TRUE;
}

cairo_surface_t *
saccade_figure_cache_get_surface (SaccadeFigureCache *cache)
{
  return cache->surface;
}

GdkTexture *
saccade_figure_cache_get_texture (SaccadeFigureCache *cache)
{
  if (cache->surface == NULL)
    return NULL;
  if (cache->texture == NULL)
    {
      int w = cairo_image_surface_get_width (cache->surface);
      int h = cairo_image_surface_get_height (cache->surface);
      gsize stride = (gsize) cairo_image_surface_get_stride (cache->surface);
      g_autoptr (GBytes) bytes = NULL;

      cairo_surface_flush (cache->surface);
      bytes = g_bytes_new (cairo_image_surface_get_data (cache->surface), stride * (gsize) h);
      /* Cairo's ARGB32 is premultiplied native-endian 32-bit ARGB, which is what GDK
       * calls its default memory format. */
      cache->texture = gdk_memory_texture_new (w, h, GDK_MEMORY_DEFAULT, bytes, stride);
    }
  return cache->texture;
}

void
saccade_figure_cache_paint (SaccadeFigureCache *cache, cairo_t *cr)
{
  if (cache->surface == NULL)
    return;
  cairo_save (cr);
  cairo_set_source_surface (cr, cache->surface, 0, 0);
  cairo_paint (cr);
  cairo_restore (cr);
}
