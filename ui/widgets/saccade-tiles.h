/* saccade-tiles.h — a container that lays its children out as equal tiles in the rows and
 * columns that make the figures they draw biggest (the Compare page's A, B and A − B).
 *
 * Each child is taken to draw a square figure with a fixed margin beside it (labels and a
 * colour bar: @overhead_w px across, @overhead_h down). For n children the container tries
 * 1 .. n columns and keeps the one whose tiles hold the biggest square; a last row with
 * fewer children is centred. Its minimum is the children's in one row, as a homogeneous
 * box's, so the window never has to widen for it.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_TILES (saccade_tiles_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeTiles, saccade_tiles, SACCADE, TILES, GtkWidget)

GtkWidget *saccade_tiles_new (void);

/* The margin each child's figure keeps beside its square, in px (defaults 150 × 125). */
void saccade_tiles_set_overhead (SaccadeTiles *self, int overhead_w, int overhead_h);

/* The columns of the last allocation (0 before one). */
int saccade_tiles_get_columns (SaccadeTiles *self);

/* The columns that make the biggest squares for @n children in @width x @height with the
 * margins @overhead_w x @overhead_h, none of the tiles under @min_w x @min_h (one row when
 * none fits); the square's side in *@side (may be NULL). */
int saccade_tiles_best_columns (int n, int width, int height, int overhead_w, int overhead_h,
                                int min_w, int min_h, double *side);

G_END_DECLS
