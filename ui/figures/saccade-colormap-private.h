/* saccade-colormap-private.h — the sampled colour map tables (saccade-colormap-tables.c,
 * written by tools/gen_colormaps.py). Internal to ui/.
 */
#pragma once

extern const float saccade_colormap_viridis_table[256][3];
extern const float saccade_colormap_magma_table[256][3];
extern const float saccade_colormap_cividis_table[256][3];
extern const float saccade_colormap_rdbu_table[256][3];
