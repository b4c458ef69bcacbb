/* saccade-figure-options.c — how a figure is exported: size, resolution, font, title and
 * token label style (SaccadeFigureExportOptions, saccade-figure.h), its presets and checks.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>
#include <string.h>

/* "␣": how saccade_token_label() shows a space at either end of a token. */
#define VISIBLE_SPACE "\xe2\x90\xa3"

void
saccade_figure_export_options_init (SaccadeFigureExportOptions *opts)
{
  *opts = (SaccadeFigureExportOptions) { .labels = SACCADE_FIGURE_LABELS_VISIBLE_SPACE };
}

gboolean
saccade_figure_export_options_preset (SaccadeFigureExportOptions *opts, const char *name,
                                      GError **error)
{
  double width;

  if (g_strcmp0 (name, "journal-single") == 0)
    width = SACCADE_FIGURE_JOURNAL_SINGLE_MM;
  else if (g_strcmp0 (name, "journal-double") == 0)
    width = SACCADE_FIGURE_JOURNAL_DOUBLE_MM;
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Unknown figure preset “%s”: use journal-single (89 mm) or "
                     "journal-double (183 mm)"),
                   name != NULL ? name : "");
      return FALSE;
    }
  /* Print resolution and the usual size of a journal figure's text. */
  opts->width_mm = width;
  opts->dpi = 300;
  opts->font_size = 8;
  return TRUE;
}

gboolean
saccade_figure_label_style_from_string (const char *name, SaccadeFigureLabelStyle *out,
                                        GError **error)
{
  if (g_strcmp0 (name, "plain") == 0)
    *out = SACCADE_FIGURE_LABELS_PLAIN;
  else if (g_strcmp0 (name, "visible-space") == 0)
    *out = SACCADE_FIGURE_LABELS_VISIBLE_SPACE;
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Unknown label style “%s”: use plain or visible-space"),
                   name != NULL ? name : "");
      return FALSE;
    }
  return TRUE;
}

/* FALSE with an error naming @what when @v (0: unset) is outside [lo, hi]. */
static gboolean
check_range (double v, double lo, double hi, const char *what, const char *unit,
             GError **error)
{
  if (v == 0 || (isfinite (v) && v >= lo && v <= hi))
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               /* Translators: what (a figure's width, resolution or font size), its value,
                * the smallest and largest allowed, their unit */
               _("The figure's %1$s %2$g is outside %3$g–%4$g %5$s"), what, v, lo, hi, unit);
  return FALSE;
}

gboolean
saccade_figure_export_options_check (const SaccadeFigureExportOptions *opts, GError **error)
{
  return check_range (opts->width_mm, SACCADE_FIGURE_MIN_WIDTH_MM, SACCADE_FIGURE_MAX_WIDTH_MM,
                      _("width"), "mm", error)
         && check_range (opts->dpi, SACCADE_FIGURE_MIN_DPI, SACCADE_FIGURE_MAX_DPI,
                         _("resolution"), "dpi", error)
         && check_range (opts->font_size, SACCADE_FIGURE_MIN_FONT_PT,
                         SACCADE_FIGURE_MAX_FONT_PT, _("font size"), "pt", error);
}

char **
saccade_figure_export_labels (const SaccadeFigureExportOptions *opts,
                              const char *const *labels, int n)
{
  char **out;

  if (opts == NULL || opts->labels != SACCADE_FIGURE_LABELS_PLAIN || labels == NULL)
    return NULL;
  out = g_new0 (char *, n + 1);
  for (int i = 0; i < n; i++)
    {
      GString *s = g_string_new (labels[i] != NULL ? labels[i] : "");
      g_string_replace (s, VISIBLE_SPACE, " ", 0);
      out[i] = g_string_free (s, FALSE);
    }
  return out;
}

const char *
saccade_figure_export_title (const SaccadeFigureExportOptions *opts, const char *title)
{
  if (opts == NULL)
    return title;
  if (opts->no_title)
    return NULL;
  return opts->title != NULL ? opts->title : title;
}
