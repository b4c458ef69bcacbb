/* figure-pixels.h — helpers of the headless figure tests (tests/ui/test-figures*.c): an
 * image surface to draw into, and pixels, colour distances and ink read back from it. */
#pragma once

#include <cairo.h>
#include <glib.h>

typedef struct {
  cairo_surface_t *surface;
  cairo_t *cr;
} Canvas;

void canvas_init (Canvas *c, int w, int h);
void canvas_clear (Canvas *c);
guint32 pixel (cairo_surface_t *s, double x, double y);
int color_distance (guint32 a, guint32 b);
int ink_in (cairo_surface_t *s, double x0, double y0, double x1, double y1, guint32 bg);

/* Fails the test when @got is further than @tol from @want (colour_distance()). */
#define assert_color_near(got, want, tol)                                                \
  G_STMT_START {                                                                         \
    guint32 g_ = (got), w_ = (want);                                                     \
    if (color_distance (g_, w_) > (tol))                                                 \
      g_error ("%s:%d: colour #%06x, expected #%06x (± %d)", __FILE__, __LINE__, g_, w_, \
               (int) (tol));                                                             \
  } G_STMT_END

/* An exported file is what its extension says: check_png loads it, check_svg parses it as
 * XML with an <svg> root, check_pdf finds %PDF at the start and %%EOF at the end. */
void check_png (const char *path);
void check_svg (const char *path);
void check_pdf (const char *path);
