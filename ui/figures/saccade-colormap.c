/* saccade-colormap.c — colour maps and value scales for the figures.
 *
 * Lookups interpolate linearly between the 256 samples of saccade-colormap-tables.c (the
 * maps are smooth, so this is what matplotlib's 256-entry maps approximate too); "grays" is
 * computed (white at 0, black at 1). Not for: deciding ranges (saccade-figure-common.c).
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-colormap.h"
#include "ui/figures/saccade-colormap-private.h"

#include <glib/gi18n.h>
#include <math.h>

/* The interface's gettext domain (DESIGN.md, "Names"), unless the build names it. */
#ifndef GETTEXT_PACKAGE
#define GETTEXT_PACKAGE "saccade"
#endif

G_DEFINE_ENUM_TYPE (SaccadeColormap, saccade_colormap,
  G_DEFINE_ENUM_VALUE (SACCADE_COLORMAP_VIRIDIS, "viridis"),
  G_DEFINE_ENUM_VALUE (SACCADE_COLORMAP_MAGMA, "magma"),
  G_DEFINE_ENUM_VALUE (SACCADE_COLORMAP_CIVIDIS, "cividis"),
  G_DEFINE_ENUM_VALUE (SACCADE_COLORMAP_GRAYS, "grays"),
  G_DEFINE_ENUM_VALUE (SACCADE_COLORMAP_RDBU, "rdbu"))

G_DEFINE_ENUM_TYPE (SaccadeScale, saccade_scale,
  G_DEFINE_ENUM_VALUE (SACCADE_SCALE_LINEAR, "linear"),
  G_DEFINE_ENUM_VALUE (SACCADE_SCALE_LOG, "log"))

typedef struct {
  const char *id;
  const char *name; /* N_() marked; translated by saccade_colormap_name() */
  const float (*table)[3];
} MapInfo;

static const MapInfo maps[] = {
  [SACCADE_COLORMAP_VIRIDIS] = { "viridis", N_("Viridis"), saccade_colormap_viridis_table },
  [SACCADE_COLORMAP_MAGMA] = { "magma", N_("Magma"), saccade_colormap_magma_table },
  [SACCADE_COLORMAP_CIVIDIS] = { "cividis", N_("Cividis"), saccade_colormap_cividis_table },
  [SACCADE_COLORMAP_GRAYS] = { "grays", N_("Grays"), NULL },
  [SACCADE_COLORMAP_RDBU] = { "rdbu", N_("Red–blue (diverging)"), saccade_colormap_rdbu_table },
};

static const MapInfo *
map_info (SaccadeColormap map)
{
  if ((guint) map >= G_N_ELEMENTS (maps))
    map = SACCADE_COLORMAP_VIRIDIS;
  return &maps[map];
}

const char *
saccade_colormap_id (SaccadeColormap map)
{
  return map_info (map)->id;
}

const char *
saccade_colormap_name (SaccadeColormap map)
{
  return g_dgettext (GETTEXT_PACKAGE, map_info (map)->name);
}

gboolean
saccade_colormap_from_id (const char *id, SaccadeColormap *out)
{
  if (id == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (maps); i++)
    if (g_ascii_strcasecmp (id, maps[i].id) == 0)
      {
        *out = (SaccadeColormap) i;
        return TRUE;
      }
  return FALSE;
}

gboolean
saccade_colormap_is_diverging (SaccadeColormap map)
{
  return map == SACCADE_COLORMAP_RDBU;
}

void
saccade_colormap_rgb (SaccadeColormap map, double t, double rgb[3])
{
  const MapInfo *info = map_info (map);
  double x, frac;
  int i;

  if (!(t > 0.0)) /* NaN too */
    t = 0.0;
  if (t > 1.0)
    t = 1.0;
  if (info->table == NULL)
    {
      rgb[0] = rgb[1] = rgb[2] = 1.0 - t;
      return;
    }
  x = t * 255.0;
  i = (int) x;
  if (i >= 255)
    {
      for (int c = 0; c < 3; c++)
        rgb[c] = info->table[255][c];
      return;
    }
  frac = x - i;
  for (int c = 0; c < 3; c++)
    rgb[c] = info->table[i][c] + frac * (info->table[i + 1][c] - info->table[i][c]);
}

guint32
saccade_colormap_rgb24 (SaccadeColormap map, double t)
{
  double rgb[3];
  guint32 out = 0;

  saccade_colormap_rgb (map, t, rgb);
  for (int c = 0; c < 3; c++)
    out = (out << 8) | (guint32) lround (CLAMP (rgb[c], 0.0, 1.0) * 255.0);
  return out;
}

const char *
saccade_scale_id (SaccadeScale scale)
{
  return scale == SACCADE_SCALE_LOG ? "log" : "linear";
}

gboolean
saccade_scale_from_id (const char *id, SaccadeScale *out)
{
  if (id == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (id, "linear") == 0)
    *out = SACCADE_SCALE_LINEAR;
  else if (g_ascii_strcasecmp (id, "log") == 0)
    *out = SACCADE_SCALE_LOG;
  else
    return FALSE;
  return TRUE;
}

double
saccade_scale_apply (SaccadeScale scale, double v, double vmin, double vmax)
{
  if (scale == SACCADE_SCALE_LOG && vmin > 0.0)
    {
      if (!(v > vmin))
        return 0.0;
      if (vmax <= vmin)
        return 0.5;
      return MIN (1.0, (log (v) - log (vmin)) / (log (vmax) - log (vmin)));
    }
  if (vmax <= vmin)
    return 0.5;
  return CLAMP ((v - vmin) / (vmax - vmin), 0.0, 1.0);
}
