/* saccade-bench-draw.h — `saccade bench-draw`: what drawing the figures costs
 * (saccade-bench-draw.c).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

int saccade_cmd_bench_draw (int argc, char **argv);

G_END_DECLS
