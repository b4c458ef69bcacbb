/* test-figure-types.c — ui/figures/saccade-figure-types (models side by side) drawn
 * headless: every cell in its category's colour, with the area the layout promises; rows
 * at their relative depth, so a 2-layer and a 4-layer panel line up; value mode through the
 * colour map; export to each format; an empty figure refused. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure-types.h"

#define W 800
#define H 600
/* The legend sits right of the panels (about 130 units at this size); only the panels'
 * side of the image is scanned, so the legend's swatches are not counted. */
#define SCAN_W 600

static const char *const names[] = { "c0", "c1", "c2", "c3", "c4", "other" };
#define N_CAT 6

typedef struct {
  long count;
  int top, bottom; /* rows of the first and last pixel of the colour */
  int left;        /* column of the leftmost */
} Ink;

static guint32
rgb24 (const double rgb[3])
{
  return ((guint32) lround (rgb[0] * 255) << 16) | ((guint32) lround (rgb[1] * 255) << 8)
         | (guint32) lround (rgb[2] * 255);
}

/* The pixels within ±2 of @want in the part of @s right of @x0 and below @y0 (up to
 * SCAN_W). */
static Ink
ink_in_rect (cairo_surface_t *s, guint32 want, int x0, int y0)
{
  Ink k = { 0, H, -1, W };

  for (int y = y0; y < H; y++)
    for (int x = x0; x < SCAN_W; x++)
      if (color_distance (pixel (s, x, y), want) <= 2)
        {
          k.count++;
          k.top = MIN (k.top, y);
          k.bottom = MAX (k.bottom, y);
          k.left = MIN (k.left, x);
        }
  return k;
}

static Ink
ink_of (cairo_surface_t *s, guint32 want)
{
  return ink_in_rect (s, want, 0, 0);
}

/* Panel A: 2 layers x 1 head, categories 0 and 1. Panel B: 4 layers x 1 head, categories
 * 2, 2, 2, 5 (other). Both panels are equally wide and tall, so: c0 and c1 cover the same
 * area, c2 three times other's; c0 and c2 start at the top (depth 0), c1 and other end at
 * the bottom (depth 1); c1 starts half-way down, other three quarters down. */
static void
test_categories (void)
{
  const int cat_a[] = { 0, 1 }, cat_b[] = { 2, 2, 2, 5 }, counts_a[N_CAT] = { 1, 1 };
  const int counts_b[N_CAT] = { 0, 0, 3, 0, 0, 1 };
  const SaccadeTypesPanel panels[] = {
    { "A", 2, 1, cat_a, NULL, counts_a },
    { "B", 4, 1, cat_b, NULL, counts_b },
  };
  const SaccadeTypesFigure f = { 2, panels, N_CAT, names, NULL, SACCADE_COLORMAP_VIRIDIS, "t" };
  Canvas c;
  Ink k[N_CAT];
  double rgb[3];

  canvas_init (&c, W, H);
  saccade_figure_types_draw (c.cr, &f, W, H);
  for (int i = 0; i < N_CAT; i++)
    {
      saccade_figure_types_color (i, N_CAT, TRUE, rgb);
      k[i] = ink_of (c.surface, rgb24 (rgb));
    }
  /* grey is also in the anti-aliased edges of text: count it inside the panels only */
  saccade_figure_types_color (5, N_CAT, TRUE, rgb);
  k[5] = ink_in_rect (c.surface, rgb24 (rgb), k[0].left, k[0].top);
  for (int i = 0; i < N_CAT; i++)
    if (i != 3 && i != 4)
      g_assert_cmpint (k[i].count, >, 1000);
  g_assert_cmpint (k[3].count, ==, 0);
  g_assert_cmpint (k[4].count, ==, 0);
  g_assert_cmpfloat (fabs ((double) k[0].count / k[1].count - 1), <, 0.03);
  g_assert_cmpfloat (fabs ((double) k[2].count / k[5].count - 3), <, 0.1);
  g_assert_cmpint (abs (k[0].top - k[2].top), <=, 1);
  g_assert_cmpint (abs (k[1].bottom - k[5].bottom), <=, 1);
  {
    const double span = k[1].bottom - k[0].top;
    g_assert_cmpfloat (fabs (k[1].top - (k[0].top + span / 2)), <, 3);
    g_assert_cmpfloat (fabs (k[5].top - (k[0].top + span * 3 / 4)), <, 3);
  }
  canvas_clear (&c);
}

/* "other" is grey and the other categories are not: the palette's promise. */
static void
test_palette (void)
{
  double rgb[3];

  saccade_figure_types_color (5, 6, TRUE, rgb);
  g_assert_cmpfloat (rgb[0], ==, rgb[1]);
  g_assert_cmpfloat (rgb[1], ==, rgb[2]);
  for (int i = 0; i < 5; i++)
    {
      double o[3];
      saccade_figure_types_color (i, 6, TRUE, o);
      g_assert_false (o[0] == o[1] && o[1] == o[2]);
      for (int j = 0; j < i; j++)
        {
          double p[3];
          saccade_figure_types_color (j, 6, TRUE, p);
          g_assert_cmpint (color_distance (rgb24 (o), rgb24 (p)), >, 40);
        }
    }
}

/* Value mode: the lowest value's cell has the colour map's colour at 0 and the highest at
 * 1, over both panels' range; a NaN cell has neither. */
static void
test_values (void)
{
  const double va[] = { 0.0, 1.0 }, vb[] = { NAN, 0.5 };
  const SaccadeTypesPanel panels[] = {
    { "A", 2, 1, NULL, va, NULL },
    { "B", 2, 1, NULL, vb, NULL },
  };
  const SaccadeTypesFigure f = { 2, panels, N_CAT, names, "v", SACCADE_COLORMAP_VIRIDIS, NULL };
  double lo[3], hi[3];
  Canvas c;

  canvas_init (&c, W, H);
  saccade_figure_types_draw (c.cr, &f, W, H);
  saccade_colormap_rgb (SACCADE_COLORMAP_VIRIDIS, 0, lo);
  saccade_colormap_rgb (SACCADE_COLORMAP_VIRIDIS, 1, hi);
  {
    const Ink a = ink_of (c.surface, rgb24 (lo)), b = ink_of (c.surface, rgb24 (hi));
    g_assert_cmpint (a.count, >, 1000);
    g_assert_cmpfloat (fabs ((double) a.count / b.count - 1), <, 0.03);
    g_assert_cmpint (a.bottom, <, b.top); /* layer 0 above layer 1 */
  }
  canvas_clear (&c);
}

static void
test_export (void)
{
  const int cat[] = { 0, 1, 2, 5 }, counts[N_CAT] = { 1, 1, 1, 0, 0, 1 };
  const SaccadeTypesPanel panel = { "A", 2, 2, cat, NULL, counts };
  const SaccadeTypesFigure f = { 1, &panel, N_CAT, names, NULL, SACCADE_COLORMAP_VIRIDIS, "t" };
  const SaccadeTypesFigure empty = { 0 };
  g_autofree char *dir = g_dir_make_tmp ("saccade-types-XXXXXX", NULL);
  const char *ext[] = { "png", "svg", "pdf" };
  g_autoptr (GError) error = NULL;

  for (int i = 0; i < 3; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/f.%s", dir, ext[i]);
      g_assert_true (saccade_figure_export_types (&f, path, NULL, &error));
      g_assert_no_error (error);
      if (i == 0)
        check_png (path);
      else if (i == 1)
        check_svg (path);
      else
        check_pdf (path);
      g_unlink (path);
    }
  {
    g_autofree char *path = g_strdup_printf ("%s/e.png", dir);
    g_assert_false (saccade_figure_export_types (&empty, path, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figure-types/categories", test_categories);
  g_test_add_func ("/figure-types/palette", test_palette);
  g_test_add_func ("/figure-types/values", test_values);
  g_test_add_func ("/figure-types/export", test_export);
  return g_test_run ();
}
