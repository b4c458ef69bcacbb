/* figure-pixels.c — reading pixels back from figures drawn into image surfaces, for the
 * headless figure tests (figure-pixels.h). */
#include "tests/ui/figure-pixels.h"

#include <math.h>
#include <string.h>

void
canvas_init (Canvas *c, int w, int h)
{
  c->surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  c->cr = cairo_create (c->surface);
}

void
canvas_clear (Canvas *c)
{
  cairo_destroy (c->cr);
  cairo_surface_destroy (c->surface);
}

/* The opaque pixel at (x, y) as 0xRRGGBB (the figures paint an opaque background). */
guint32
pixel (cairo_surface_t *s, double x, double y)
{
  int ix = (int) floor (x), iy = (int) floor (y);
  guint32 px;

  cairo_surface_flush (s);
  g_assert_cmpint (ix, >=, 0);
  g_assert_cmpint (iy, >=, 0);
  g_assert_cmpint (ix, <, cairo_image_surface_get_width (s));
  g_assert_cmpint (iy, <, cairo_image_surface_get_height (s));
  px = *(guint32 *) (cairo_image_surface_get_data (s) + (gsize) iy * cairo_image_surface_get_stride (s)
                     + (gsize) ix * 4);
  g_assert_cmpuint (px >> 24, ==, 0xff);
  return px & 0xffffff;
}

/* Largest difference of one 8-bit channel. */
int
color_distance (guint32 a, guint32 b)
{
  int d = 0;
  for (int shift = 0; shift <= 16; shift += 8)
    d = MAX (d, abs ((int) ((a >> shift) & 0xff) - (int) ((b >> shift) & 0xff)));
  return d;
}


/* Pixels in the rectangle that differ from @bg by more than 40 in some channel. */
int
ink_in (cairo_surface_t *s, double x0, double y0, double x1, double y1, guint32 bg)
{
  int n = 0;
  x0 = MAX (0, x0);
  y0 = MAX (0, y0);
  x1 = MIN (cairo_image_surface_get_width (s), x1);
  y1 = MIN (cairo_image_surface_get_height (s), y1);
  for (int y = (int) y0; y < (int) y1; y++)
    for (int x = (int) x0; x < (int) x1; x++)
      n += color_distance (pixel (s, x, y), bg) > 40;
  return n;
}

/* ------------------------------------------------------------------------------------ */
/* 1. Colour maps                                                                        */

/* Exports read back: a PNG that loads, an SVG that parses as XML with an <svg> root, a
 * PDF from %PDF to %%EOF. */

typedef struct {
  char *root;
  int depth;
} XmlCheck;

static void
xml_start (GMarkupParseContext *ctx, const char *name, const char **attr_names,
           const char **attr_values, gpointer user, GError **error)
{
  XmlCheck *x = user;
  if (x->depth++ == 0)
    x->root = g_strdup (name);
}

static void
xml_end (GMarkupParseContext *ctx, const char *name, gpointer user, GError **error)
{
  ((XmlCheck *) user)->depth--;
}

void
check_svg (const char *path)
{
  static const GMarkupParser parser = { xml_start, xml_end, NULL, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *data = NULL;
  XmlCheck x = { NULL, 0 };
  GMarkupParseContext *ctx;
  gsize len;

  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (len, >, 500);
  ctx = g_markup_parse_context_new (&parser, 0, &x, NULL);
  g_assert_true (g_markup_parse_context_parse (ctx, data, (gssize) len, &error));
  g_assert_no_error (error);
  g_assert_true (g_markup_parse_context_end_parse (ctx, &error));
  g_assert_no_error (error);
  g_markup_parse_context_free (ctx);
  g_assert_cmpstr (x.root, ==, "svg");
  g_assert_cmpint (x.depth, ==, 0);
  g_free (x.root);
}

void
check_pdf (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *data = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_cmpuint (len, >, 500);
  g_assert_true (g_str_has_prefix (data, "%PDF-"));
  while (len > 0 && g_ascii_isspace (data[len - 1]))
    len--;
  g_assert_cmpuint (len, >, 5);
  g_assert_cmpmem (data + len - 5, 5, "%%EOF", 5);
}

/* A PNG that loads, at twice the natural size, with ink on its white background. */
void
check_png (const char *path)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (s), >, 200);
  g_assert_cmpint (cairo_image_surface_get_height (s), >, 150);
  g_assert_cmphex (pixel (s, 0, 0), ==, 0xffffff);
  g_assert_cmpint (ink_in (s, 0, 0, cairo_image_surface_get_width (s),
                           cairo_image_surface_get_height (s), 0xffffff), >, 2000);
  cairo_surface_destroy (s);
}
