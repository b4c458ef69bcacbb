/* saccade-colormap.h — the colour maps every figure uses, on screen and in exports.
 *
 * Sequential maps are matplotlib's perceptually uniform viridis, magma and cividis, sampled
 * at 256 points (tools/gen_colormaps.py wrote the tables from matplotlib's published data)
 * and interpolated linearly between samples; "grays" runs white to black; "rdbu" is the
 * ColorBrewer RdBu diverging map (blue for negative, white at the middle, red for positive)
 * for signed data such as differences. Plain functions over constant tables: thread-safe.
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum {
  SACCADE_COLORMAP_VIRIDIS,
  SACCADE_COLORMAP_MAGMA,
  SACCADE_COLORMAP_CIVIDIS,
  SACCADE_COLORMAP_GRAYS,
  SACCADE_COLORMAP_RDBU, /* diverging */
} SaccadeColormap;

#define SACCADE_COLORMAP_LAST SACCADE_COLORMAP_RDBU

typedef enum {
  SACCADE_SCALE_LINEAR,
  SACCADE_SCALE_LOG,
} SaccadeScale;

/* Enum GTypes whose value nicks are the ids below, so that GSettings enum keys bind to the
 * widgets' "colormap" and "scale" properties directly. */
#define SACCADE_TYPE_COLORMAP (saccade_colormap_get_type ())
GType saccade_colormap_get_type (void);
#define SACCADE_TYPE_SCALE (saccade_scale_get_type ())
GType saccade_scale_get_type (void);

/* "viridis", "magma", "cividis", "grays", "rdbu": stable ids (GSettings, CLI). Static
 * strings; an out-of-range value gives "viridis". */
const char *saccade_colormap_id (SaccadeColormap map);

/* A translatable, human name ("Viridis", "Red–blue (diverging)"). Static string. */
const char *saccade_colormap_name (SaccadeColormap map);

/* Parses an id (case-insensitive). Returns FALSE and leaves *@out alone for an unknown
 * id or NULL. */
gboolean saccade_colormap_from_id (const char *id, SaccadeColormap *out);

/* TRUE for maps whose middle is neutral (RdBu): data should be centred on 0. */
gboolean saccade_colormap_is_diverging (SaccadeColormap map);

/* The colour of @t (0..1; clamped; NaN gives 0) as sRGB components in 0..1. */
void saccade_colormap_rgb (SaccadeColormap map, double t, double rgb[3]);

/* The same colour as 0xRRGGBB (components rounded to 8 bits). */
guint32 saccade_colormap_rgb24 (SaccadeColormap map, double t);

/* "linear", "log". Static strings. */
const char *saccade_scale_id (SaccadeScale scale);
gboolean saccade_scale_from_id (const char *id, SaccadeScale *out);

/* Maps @v to 0..1 on the range [@vmin, @vmax]. Linear: (v - vmin) / (vmax - vmin). Log:
 * (ln v - ln vmin) / (ln vmax - ln vmin), with v <= vmin (zeros included) giving 0; the
 * caller chooses vmin > 0 for a log scale (saccade_figure_auto_range() does). A range of
 * width 0 gives 0.5 for every value. */
double saccade_scale_apply (SaccadeScale scale, double v, double vmin, double vmax);

G_END_DECLS
