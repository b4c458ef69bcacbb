/* saccade-figure-svg-text.c — text kept as text in exported SVG (saccade-figure-private.h).
 *
 * Cairo's SVG surface turns every glyph into a path (<symbol> outlines): the file looks
 * right but its labels cannot be edited, searched or restyled in Inkscape or Illustrator.
 * Writing whole figures as SVG by hand would duplicate every renderer, so the figure is
 * still drawn through Cairo, and only its text is taken out: while an SVG export runs,
 * saccade_figure_layout_draw() — the one place a renderer draws text — hands each layout to
 * saccade_figure_svg_text_draw(), which writes it as <text> elements (one per line) at the
 * same position, in the same font family, size, weight and colour, under the current
 * transformation (rotated captions stay rotated), instead of drawing its glyphs. The
 * elements are merged into Cairo's document just before its closing </svg>, so text is on
 * top of the drawing, as the renderers draw it last anyway. An ellipsized layout is drawn
 * by Cairo as before: its visible text is not the layout's text.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <string.h>

static const cairo_user_data_key_t svg_text_key;
static const cairo_user_data_key_t export_options_key;
static const cairo_user_data_key_t measuring_key;

void
saccade_figure_export_attach (cairo_t *cr, const SaccadeFigureExportOptions *opts,
                              GString *svg_text)
{
  if (opts != NULL)
    cairo_set_user_data (cr, &export_options_key, (void *) opts, NULL);
  if (svg_text != NULL)
    cairo_set_user_data (cr, &svg_text_key, svg_text, NULL);
}

void
saccade_figure_export_set_measuring (cairo_t *cr)
{
  cairo_set_user_data (cr, &measuring_key, (void *) &measuring_key, NULL);
}

gboolean
saccade_figure_export_measuring (cairo_t *cr)
{
  return cairo_get_user_data (cr, &measuring_key) != NULL;
}

const SaccadeFigureExportOptions *
saccade_figure_export_options_of (cairo_t *cr)
{
  return cairo_get_user_data (cr, &export_options_key);
}

/* Appends @s (@len bytes, -1: to its NUL) with XML's special characters escaped. */
static void
append_escaped (GString *out, const char *s, gssize len)
{
  g_autofree char *e = g_markup_escape_text (s, len);
  g_string_append (out, e);
}

gboolean
saccade_figure_svg_text_draw (cairo_t *cr, PangoLayout *layout, double x, double y)
{
  GString *out = cairo_get_user_data (cr, &svg_text_key);
  const PangoFontDescription *desc;
  PangoLayoutIter *iter;
  const char *text;
  cairo_matrix_t m;
  double r = 0, g = 0, b = 0, a = 1;
  char num[6][G_ASCII_DTOSTR_BUF_SIZE];

  if (out == NULL || pango_layout_is_ellipsized (layout))
    return FALSE;
  desc = pango_layout_get_font_description (layout);
  text = pango_layout_get_text (layout);
  cairo_get_matrix (cr, &m);
  if (cairo_pattern_get_rgba (cairo_get_source (cr), &r, &g, &b, &a) != CAIRO_STATUS_SUCCESS)
    r = g = b = 0, a = 1;

  iter = pango_layout_get_iter (layout);
  do
    {
      PangoLayoutLine *line = pango_layout_iter_get_line_readonly (iter);
      PangoRectangle logical;

      if (line->length == 0)
        continue;
      pango_layout_iter_get_line_extents (iter, NULL, &logical);
      g_string_append (out, "<text xml:space=\"preserve\" transform=\"matrix(");
      g_string_append_printf (out, "%s %s %s %s %s %s",
                              g_ascii_formatd (num[0], sizeof num[0], "%.6g", m.xx),
                              g_ascii_formatd (num[1], sizeof num[1], "%.6g", m.yx),
                              g_ascii_formatd (num[2], sizeof num[2], "%.6g", m.xy),
                              g_ascii_formatd (num[3], sizeof num[3], "%.6g", m.yy),
                              g_ascii_formatd (num[4], sizeof num[4], "%.6g", m.x0),
                              g_ascii_formatd (num[5], sizeof num[5], "%.6g", m.y0));
      g_string_append_printf (
        out, ")\" x=\"%s\" y=\"%s\" font-size=\"%s\" font-family=\"",
        g_ascii_formatd (num[0], sizeof num[0], "%.3f", x + (double) logical.x / PANGO_SCALE),
        g_ascii_formatd (num[1], sizeof num[1], "%.3f",
                         y + (double) pango_layout_iter_get_baseline (iter) / PANGO_SCALE),
        g_ascii_formatd (num[2], sizeof num[2], "%.3f",
                         (double) pango_font_description_get_size (desc) / PANGO_SCALE));
      append_escaped (out, pango_font_description_get_family (desc), -1);
      g_string_append_printf (out, "\"%s fill=\"rgb(%d,%d,%d)\"",
                              pango_font_description_get_weight (desc) >= PANGO_WEIGHT_BOLD
                                ? " font-weight=\"bold\"" : "",
                              (int) (r * 255 + 0.5), (int) (g * 255 + 0.5),
                              (int) (b * 255 + 0.5));
      if (a < 1)
        g_string_append_printf (out, " fill-opacity=\"%s\"",
                                g_ascii_formatd (num[0], sizeof num[0], "%.3f", a));
      g_string_append_c (out, '>');
      append_escaped (out, text + line->start_index, line->length);
      g_string_append (out, "</text>\n");
    }
  while (pango_layout_iter_next_line (iter));
  pango_layout_iter_free (iter);
  return TRUE;
}

gboolean
saccade_figure_svg_text_merge (GByteArray *svg, const GString *text)
{
  static const char close[] = "</svg>";
  gsize n = sizeof close - 1;

  if (text->len == 0)
    return TRUE;
  for (gsize i = svg->len >= n ? svg->len - n + 1 : 0; i-- > 0;)
    if (memcmp (svg->data + i, close, n) == 0)
      {
        g_autoptr (GString) block = g_string_new ("<g id=\"text\">\n");
        gsize tail = svg->len - i;

        g_string_append_len (block, text->str, (gssize) text->len);
        g_string_append (block, "</g>\n");
        g_byte_array_set_size (svg, svg->len + block->len);
        memmove (svg->data + i + block->len, svg->data + i, tail);
        memcpy (svg->data + i, block->str, block->len);
        return TRUE;
      }
  return FALSE;
}
