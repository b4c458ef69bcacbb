/* saccade-view-common.c — the figure widgets' shared helpers (saccade-view-private.h).
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-view-private.h"

void
saccade_view_style_init (GtkWidget *widget, SaccadeFigureStyle *style)
{
  PangoContext *ctx = gtk_widget_get_pango_context (widget);
  const PangoFontDescription *font = pango_context_get_font_description (ctx);
  GdkRGBA fg;
  double size = 10.0;

  saccade_figure_style_init (style);
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  style->fg[0] = fg.red;
  style->fg[1] = fg.green;
  style->fg[2] = fg.blue;
  style->fg[3] = fg.alpha;
  style->bg[3] = 0.0;
  if (font != NULL && pango_font_description_get_size (font) > 0)
    {
      size = (double) pango_font_description_get_size (font) / PANGO_SCALE;
      if (!pango_font_description_get_size_is_absolute (font))
        size *= 96.0 / 72.0; /* points to CSS pixels */
    }
  style->font_size = 0.9 * size;
}

gboolean
saccade_view_snapshot_cache (GtkWidget *widget, GtkSnapshot *snapshot, SaccadeFigureCache *cache,
                             SaccadeFigureRenderFunc render, gpointer user_data)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  gboolean rendered;
  GdkTexture *texture;

  if (width <= 0 || height <= 0)
    return FALSE;
  rendered = saccade_figure_cache_ensure (cache, width, height,
                                          gtk_widget_get_scale_factor (widget), render,
                                          user_data);
  if (saccade_figure_cache_get_surface (cache) == NULL)
    return rendered;
  /* the texture is made only for a renderer that uses it (saccade_view_append_image) */
  texture = saccade_view_draws_textures (widget) ? saccade_figure_cache_get_texture (cache) : NULL;
  saccade_view_append_image (widget, snapshot, texture, saccade_figure_cache_get_surface (cache),
                             &GRAPHENE_RECT_INIT (0, 0, width, height));
  return rendered;
}

gboolean
saccade_view_draws_textures (GtkWidget *widget)
{
  GtkNative *native = gtk_widget_get_native (widget);
  GskRenderer *renderer = native != NULL ? gtk_native_get_renderer (native) : NULL;

  return renderer == NULL || !GSK_IS_CAIRO_RENDERER (renderer);
}

void
saccade_view_append_image (GtkWidget *widget, GtkSnapshot *snapshot, GdkTexture *texture,
                           cairo_surface_t *surface, const graphene_rect_t *bounds)
{
  cairo_t *cr;

  if (texture != NULL && saccade_view_draws_textures (widget))
    {
      gtk_snapshot_append_texture (snapshot, texture, bounds);
      return;
    }
  if (surface == NULL)
    return;
  /* GTK 4.8's Cairo renderer draws a texture node by downloading the texture into a new
   * image through GDK's float converter (gdk_memory_convert: every pixel to four floats and
   * back), on every frame: 80-100 ms of the main thread per frame for the Model page's grid
   * (docs/benchmarks.md, "Long runs in the window"). A Cairo node that paints the image is
   * one pixman blit there. The surface is the texture's own pixels, so both paths show the
   * same picture. */
  cr = gtk_snapshot_append_cairo (snapshot, bounds);
  cairo_set_source_surface (cr, surface, bounds->origin.x, bounds->origin.y);
  cairo_paint (cr);
  cairo_destroy (cr);
}

void
saccade_view_snapshot_outline (GtkWidget *widget, GtkSnapshot *snapshot, double x, double y,
                               double w, double h, double line_width)
{
  GskRoundedRect rect;
  GdkRGBA fg;
  float widths[4];
  GdkRGBA colors[4];

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  gsk_rounded_rect_init_from_rect (&rect, &GRAPHENE_RECT_INIT ((float) x, (float) y, (float) w,
                                                               (float) h), 0);
  for (int i = 0; i < 4; i++)
    {
      widths[i] = (float) line_width;
      colors[i] = fg;
    }
  gtk_snapshot_append_border (snapshot, &rect, widths, colors);
}

char **
saccade_view_labels_dup (const char *const *labels, int n)
{
  char **out;

  if (labels == NULL)
    return NULL;
  out = g_new0 (char *, n + 1);
  for (int i = 0; i < n; i++)
    out[i] = g_strdup (labels[i] != NULL ? labels[i] : "");
  return out;
}

gboolean
saccade_view_set_str (char **ptr, const char *str)
{
  if (g_strcmp0 (*ptr, str) == 0)
    return FALSE;
  g_free (*ptr);
  *ptr = g_strdup (str);
  return TRUE;
}
