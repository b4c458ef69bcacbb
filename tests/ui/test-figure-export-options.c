/* test-figure-export-options.c — export options (SaccadeFigureExportOptions), headless
 * (suite "ui"). What is checked:
 *   1. the options: defaults, the journal presets (89 and 183 mm), label styles, limits
 *      refused with a message naming the value, plain labels, title override and none;
 *   2. PNG: a pHYs chunk right after IHDR at the asked resolution with a valid CRC, and the
 *      pixel size width_mm / 25.4 × dpi, the height following the aspect ratio; without
 *      options, 144 dpi at twice the natural size as before;
 *   3. text as text: the SVG holds the title and token labels as <text> (no glyph
 *      outlines), its width the asked one in points; the PDF's MediaBox is the asked size;
 *      a small matrix is drawn as vector cells in the SVG, not as an embedded image;
 *   4. the figures' defects: a grid of Gemma 3's 18 layers (local but for 5, 11, 17)
 *      numbers every layer; a title longer than the page wraps whole, never cut (and the
 *      figure narrowed below its natural width keeps no empty bands); the
 *      profile has a legend of its head colours.
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

#include "ui/figures/saccade-figure.h"
#include "tests/ui/figure-pixels.h"

static const char *const labels3[3] = { "The", "␣cat", "␣sat" };
static const float values3[9] = { 1, 0, 0, 0.5f, 0.5f, 0, 0.2f, 0.3f, 0.5f };

static SaccadeHeatmapFigure
heatmap3 (void)
{
  return (SaccadeHeatmapFigure) {
    .values = values3, .n_rows = 3, .n_cols = 3, .row_labels = labels3,
    .col_labels = labels3, .title = "Layer 5, head 2: the cat sat", .causal = TRUE,
    .colormap = SACCADE_COLORMAP_VIRIDIS,
  };
}

static char *
export_to (const char *dir, const char *name, const SaccadeFigureExportOptions *opts,
           gsize *len)
{
  SaccadeHeatmapFigure f = heatmap3 ();
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  char *bytes = NULL;

  g_assert_true (saccade_figure_export_heatmap (&f, path, opts, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &bytes, len, &error));
  g_assert_cmpint (g_unlink (path), ==, 0);
  return bytes;
}

static guint32
be32 (const char *p)
{
  const guint8 *u = (const guint8 *) p;
  return (guint32) u[0] << 24 | (guint32) u[1] << 16 | (guint32) u[2] << 8 | u[3];
}

static void
test_options (void)
{
  SaccadeFigureExportOptions o;
  SaccadeFigureLabelStyle style;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) plain = NULL;

  saccade_figure_export_options_init (&o);
  g_assert_cmpfloat (o.width_mm, ==, 0);
  g_assert_cmpint (o.labels, ==, SACCADE_FIGURE_LABELS_VISIBLE_SPACE);
  g_assert_true (saccade_figure_export_options_preset (&o, "journal-single", &error));
  g_assert_cmpfloat (o.width_mm, ==, 89);
  g_assert_true (saccade_figure_export_options_preset (&o, "journal-double", &error));
  g_assert_cmpfloat (o.width_mm, ==, 183);
  g_assert_cmpfloat (o.dpi, ==, 300);
  g_assert_true (saccade_figure_export_options_check (&o, &error));
  g_assert_false (saccade_figure_export_options_preset (&o, "poster", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "poster"));
  g_clear_error (&error);

  g_assert_true (saccade_figure_label_style_from_string ("plain", &style, NULL));
  g_assert_cmpint (style, ==, SACCADE_FIGURE_LABELS_PLAIN);
  g_assert_false (saccade_figure_label_style_from_string ("fancy", &style, &error));
  g_assert_nonnull (strstr (error->message, "fancy"));
  g_clear_error (&error);

  o.dpi = 10;
  g_assert_false (saccade_figure_export_options_check (&o, &error));
  g_assert_nonnull (strstr (error->message, "10"));
  g_clear_error (&error);
  o.dpi = 300;
  o.width_mm = -89;
  g_assert_false (saccade_figure_export_options_check (&o, &error));
  g_clear_error (&error);
  o.width_mm = 89;
  o.font_size = NAN;
  g_assert_false (saccade_figure_export_options_check (&o, &error));
  g_clear_error (&error);

  /* Labels: as they are unless plain is asked. */
  saccade_figure_export_options_init (&o);
  g_assert_null (saccade_figure_export_labels (NULL, labels3, 3));
  g_assert_null (saccade_figure_export_labels (&o, labels3, 3));
  o.labels = SACCADE_FIGURE_LABELS_PLAIN;
  plain = saccade_figure_export_labels (&o, labels3, 3);
  g_assert_cmpstr (plain[1], ==, " cat");
  g_assert_null (plain[3]);

  /* Titles: the figure's, an override, none. */
  g_assert_cmpstr (saccade_figure_export_title (NULL, "t"), ==, "t");
  g_assert_cmpstr (saccade_figure_export_title (&o, "t"), ==, "t");
  o.title = "mine";
  g_assert_cmpstr (saccade_figure_export_title (&o, "t"), ==, "mine");
  o.no_title = TRUE;
  g_assert_null (saccade_figure_export_title (&o, "t"));
}

/* The pHYs chunk right after IHDR: @dpi in pixels per metre, unit metre, a valid CRC. */
static void
assert_png_dpi (const char *png, gsize len, double dpi)
{
  const char *c = png + 33; /* signature 8 + IHDR 25 */
  guint32 ppm = (guint32) (dpi / 0.0254 + 0.5);

  g_assert_cmpuint (len, >, 33 + 21);
  g_assert_cmpmem (png + 12, 4, "IHDR", 4);
  g_assert_cmpuint (be32 (c), ==, 9);
  g_assert_cmpmem (c + 4, 4, "pHYs", 4);
  g_assert_cmpuint (be32 (c + 8), ==, ppm);
  g_assert_cmpuint (be32 (c + 12), ==, ppm);
  g_assert_cmpint (c[16], ==, 1);
  g_assert_cmpuint (be32 (c + 17), ==, (guint32) crc32 (0, (const Bytef *) c + 4, 13));
}

static void
test_png (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("saccade-fig-opts-XXXXXX", &error);
  SaccadeFigureExportOptions o;
  gsize len, len0;
  g_autofree char *png = NULL, *png0 = NULL;
  int w0, h0, w, h;

  /* No options: twice the natural size, 144 dpi. */
  png0 = export_to (dir, "natural.png", NULL, &len0);
  assert_png_dpi (png0, len0, 144);
  w0 = (int) be32 (png0 + 16);
  h0 = (int) be32 (png0 + 20);

  saccade_figure_export_options_init (&o);
  g_assert_true (saccade_figure_export_options_preset (&o, "journal-single", NULL));
  png = export_to (dir, "journal.png", &o, &len);
  assert_png_dpi (png, len, 300);
  w = (int) be32 (png + 16);
  h = (int) be32 (png + 20);
  g_assert_cmpint (w, ==, (int) lround (89 / 25.4 * 300));
  g_assert_cmpfloat (fabs ((double) h / w - (double) h0 / w0), <, 0.01);

  /* The figure reads back as an image of that size. */
  {
    g_autofree char *path = g_build_filename (dir, "back.png", NULL);
    cairo_surface_t *s;
    g_assert_true (g_file_set_contents (path, png, (gssize) len, NULL));
    s = cairo_image_surface_create_from_png (path);
    g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
    g_assert_cmpint (cairo_image_surface_get_width (s), ==, w);
    cairo_surface_destroy (s);
    g_unlink (path);
  }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_vector_text (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("saccade-fig-opts-XXXXXX", &error);
  SaccadeFigureExportOptions o;
  gsize len;

  saccade_figure_export_options_init (&o);
  g_assert_true (saccade_figure_export_options_preset (&o, "journal-double", NULL));
  o.font_family = "DejaVu Serif";
  {
    g_autofree char *svg = export_to (dir, "h.svg", &o, &len);

    g_assert_nonnull (strstr (svg, "<text"));
    g_assert_nonnull (strstr (svg, ">␣cat</text>"));
    g_assert_nonnull (strstr (svg, ">Layer 5, head 2: the cat sat</text>"));
    g_assert_nonnull (strstr (svg, "font-family=\"DejaVu Serif\""));
    g_assert_null (strstr (svg, "glyph")); /* no outlines of glyphs */
    /* 183 mm = 518.74 pt */
    g_assert_nonnull (strstr (svg, "width=\"518.7"));
    /* the 3 × 3 matrix as vector cells: no embedded image */
    g_assert_null (strstr (svg, "<image"));
  }
  o.labels = SACCADE_FIGURE_LABELS_PLAIN;
  o.title = "Edited title";
  {
    g_autofree char *svg = export_to (dir, "p.svg", &o, &len);
    g_assert_nonnull (strstr (svg, "> cat</text>"));
    g_assert_null (strstr (svg, "␣"));
    g_assert_nonnull (strstr (svg, ">Edited title</text>"));
  }
  o.no_title = TRUE;
  {
    g_autofree char *svg = export_to (dir, "n.svg", &o, &len);
    g_assert_null (strstr (svg, "Edited title"));
    g_assert_null (strstr (svg, "the cat sat"));
  }
  {
    g_autofree char *pdf = export_to (dir, "h.pdf", &o, &len);
    const char *box = memmem (pdf, len, "/MediaBox [ 0 0 ", 16);
    g_assert_nonnull (box);
    g_assert_cmpfloat (fabs (g_ascii_strtod (box + 16, NULL) - 183 / 25.4 * 72), <, 0.01);
  }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* Whether @svg has a <text> element whose content is exactly @text. */
static gboolean
has_text (const char *svg, const char *text)
{
  g_autofree char *needle = g_strdup_printf (">%s</text>", text);
  return strstr (svg, needle) != NULL;
}

static char *
read_and_unlink (const char *path)
{
  char *bytes = NULL;
  g_assert_true (g_file_get_contents (path, &bytes, NULL, NULL));
  g_assert_cmpint (g_unlink (path), ==, 0);
  return bytes;
}

static void
test_grid_layers (void)
{
  enum { NL = 18, NH = 4, N = 6 };
  g_autofree float *heads = g_new0 (float, NL * NH * N * N);
  unsigned windows[NL];
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "saccade-grid-18.svg", NULL);
  g_autofree char *svg = NULL;
  SaccadeFigureExportOptions o;
  SaccadeGridFigure f = {
    .n_layers = NL, .n_heads = NH, .n_kv_heads = 1, .n = N, .heads = heads,
    .title = "Gemma 3", .layer_windows = windows,
  };

  for (int i = 0; i < NL * NH; i++)
    for (int q = 0; q < N; q++)
      for (int k = 0; k <= q; k++)
        heads[((gsize) i * N + q) * N + k] = 1.0f / (q + 1);
  for (int l = 0; l < NL; l++)
    windows[l] = l % 6 == 5 ? 0 : 512;
  saccade_figure_export_options_init (&o);
  g_assert_true (saccade_figure_export_options_preset (&o, "journal-double", NULL));
  g_assert_true (saccade_figure_export_grid (&f, path, &o, NULL));
  svg = read_and_unlink (path);
  for (int l = 0; l < NL; l++)
    {
      char num[8];
      g_snprintf (num, sizeof num, "%d", l);
      if (!has_text (svg, num))
        g_error ("layer %d is not labelled", l);
    }
}

static void
test_title_wraps (void)
{
  const char *title = "Layer 5, head 2 of SmolLM2-135M on a sentence about a cat that "
                      "chased a ball because it was tired";
  SaccadeHeatmapFigure f = heatmap3 ();
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "saccade-title.svg", NULL);
  g_autofree char *svg = NULL;
  g_auto (GStrv) words = g_strsplit (title, " ", -1);
  SaccadeFigureExportOptions o;

  f.title = title;
  saccade_figure_export_options_init (&o);
  g_assert_true (saccade_figure_export_options_preset (&o, "journal-single", NULL));
  o.font_size = 12;
  g_assert_true (saccade_figure_export_heatmap (&f, path, &o, NULL));
  svg = read_and_unlink (path);
  g_assert_null (strstr (svg, "…"));
  g_assert_false (has_text (svg, title)); /* it did not fit on one line ... */
  for (int i = 0; words[i] != NULL; i++)  /* ... and every word is there */
    g_assert_nonnull (strstr (svg, words[i]));

  /* Narrower than its natural size (the long title's width), the figure has no empty
   * bands above and below: ink within the top and bottom twentieth of the page. */
  {
    g_autofree char *png = g_build_filename (g_get_tmp_dir (), "saccade-title.png", NULL);
    cairo_surface_t *s;
    int w, h;

    g_assert_true (saccade_figure_export_heatmap (&f, png, &o, NULL));
    s = cairo_image_surface_create_from_png (png);
    w = cairo_image_surface_get_width (s);
    h = cairo_image_surface_get_height (s);
    g_assert_cmpint (w, ==, (int) lround (89 / 25.4 * 300));
    g_assert_cmpint (ink_in (s, 0, 0, w, h / 20.0, 0xffffff), >, 0);
    g_assert_cmpint (ink_in (s, 0, h - h / 20.0, w, h, 0xffffff), >, 0);
    cairo_surface_destroy (s);
    g_assert_cmpint (g_unlink (png), ==, 0);
  }
}

static void
test_profile_legend (void)
{
  double values[3 * 4];
  SaccadeProfileFigure f = { .n_layers = 3, .n_heads = 4, .values = values,
                             .metric_name = "Entropy", .title = "Profile" };
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "saccade-profile.svg", NULL);
  g_autofree char *svg = NULL;

  for (int i = 0; i < 12; i++)
    values[i] = 0.1 * i;
  g_assert_true (saccade_figure_export_profile (&f, path, NULL, NULL));
  svg = read_and_unlink (path);
  g_assert_true (has_text (svg, "mean"));
  g_assert_true (has_text (svg, "3")); /* head 3: layers are 0-2, ticks 0-1.1 */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/export-options/options", test_options);
  g_test_add_func ("/ui/export-options/png", test_png);
  g_test_add_func ("/ui/export-options/vector-text", test_vector_text);
  g_test_add_func ("/ui/export-options/grid-layers", test_grid_layers);
  g_test_add_func ("/ui/export-options/title-wraps", test_title_wraps);
  g_test_add_func ("/ui/export-options/profile-legend", test_profile_legend);
  return g_test_run ();
}
