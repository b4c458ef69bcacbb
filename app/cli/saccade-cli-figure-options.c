/* saccade-cli-figure-options.c — the options of every verb that writes a figure: size,
 * resolution, font, title and token label style (SaccadeCliFigure, saccade-cli.h), turned
 * into the figure export's options (SaccadeFigureExportOptions, ui/figures).
 */
#include "app/cli/saccade-cli.h"

#include <math.h>
#include <stdio.h>

gboolean
saccade_cli_figure_given (const SaccadeCliFigure *o)
{
  return !isnan (o->width_mm) || !isnan (o->width_in) || !isnan (o->dpi)
         || !isnan (o->font_size) || o->font != NULL || o->title != NULL || o->labels != NULL
         || o->preset != NULL || o->no_title;
}

/* Copies the given @v into @out, refusing a value outside [lo, hi] (0 included). */
static gboolean
take (double v, double lo, double hi, const char *option, const char *unit, double *out,
      GError **error)
{
  if (isnan (v))
    return TRUE;
  if (!isfinite (v) || v < lo || v > hi)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s %g is outside %g-%g %s", option, v, lo, hi, unit);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

gboolean
saccade_cli_figure_parse (const SaccadeCliFigure *o, SaccadeFigureExportOptions *out,
                          GError **error)
{
  saccade_figure_export_options_init (out);
  if (o->preset != NULL && !saccade_figure_export_options_preset (out, o->preset, error))
    {
      g_prefix_error (error, "--preset: ");
      return FALSE;
    }
  if (!isnan (o->width_mm) && !isnan (o->width_in))
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--width-mm and --width-in both give the width: use one");
      return FALSE;
    }
  if (o->no_title && o->title != NULL)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--title and --no-title contradict each other: use one");
      return FALSE;
    }
  if (!take (o->width_mm, SACCADE_FIGURE_MIN_WIDTH_MM, SACCADE_FIGURE_MAX_WIDTH_MM,
             "--width-mm", "mm", &out->width_mm, error)
      || !take (o->width_in, SACCADE_FIGURE_MIN_WIDTH_MM / 25.4,
                SACCADE_FIGURE_MAX_WIDTH_MM / 25.4, "--width-in", "in", &out->width_mm, error)
      || !take (o->dpi, SACCADE_FIGURE_MIN_DPI, SACCADE_FIGURE_MAX_DPI, "--dpi", "dpi",
                &out->dpi, error)
      || !take (o->font_size, SACCADE_FIGURE_MIN_FONT_PT, SACCADE_FIGURE_MAX_FONT_PT,
                "--font-size", "pt", &out->font_size, error))
    return FALSE;
  if (!isnan (o->width_in))
    out->width_mm = o->width_in * 25.4;
  if (o->font != NULL)
    {
      if (*o->font == '\0')
        {
          g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                               "--font needs a font family name");
          return FALSE;
        }
      out->font_family = o->font;
    }
  if (o->labels != NULL && !saccade_figure_label_style_from_string (o->labels, &out->labels,
                                                                    error))
    {
      g_prefix_error (error, "--labels: ");
      return FALSE;
    }
  out->title = o->title;
  out->no_title = o->no_title;
  return TRUE;
}

gboolean
saccade_cli_figure_check (const SaccadeCliFigure *o, gboolean writes_figure,
                          const char *figure_opt, SaccadeFigureExportOptions *out, int *rc)
{
  g_autoptr (GError) error = NULL;

  if (!writes_figure && saccade_cli_figure_given (o))
    {
      fprintf (stderr, "saccade: --preset, --width-mm, --dpi, --font, --title and the other "
                       "figure options go with %s\n", figure_opt);
      *rc = 2;
      return FALSE;
    }
  if (!saccade_cli_figure_parse (o, out, &error))
    {
      fprintf (stderr, "saccade: %s\n", error->message);
      *rc = 2;
      return FALSE;
    }
  return TRUE;
}

void
saccade_cli_figure_clear (SaccadeCliFigure *o)
{
  g_clear_pointer (&o->font, g_free);
  g_clear_pointer (&o->title, g_free);
  g_clear_pointer (&o->labels, g_free);
  g_clear_pointer (&o->preset, g_free);
}
