/* view-harness.h — what the widget tests (suite "ui", run under xvfb-run) share: a window
 * to show a widget in, a frame of it drawn by GTK as a texture, and pixel counts. */
#pragma once

#include <gtk/gtk.h>

/* Turns the main loop enough for a present, a layout and a frame. */
void iterate (void);

/* The widget drawn by GTK (GtkWidgetPaintable → render node → texture on the window's
 * renderer); caller unrefs. With SC_TEST_SCREENSHOT_DIR set, also saved there as
 * "<program>-<type>-<nn>.png". */
GdkTexture *draw_widget (GtkWidget *widget);

/* How many opaque pixels of @texture are within 3 of 0xRRGGBB in every channel. */
int count_color (GdkTexture *texture, guint32 rgb);

/* A 640 x 480 window showing @child, once it is mapped and laid out. */
GtkWidget *show_in_window (GtkWidget *child);
GtkWidget *show_in_window_sized (GtkWidget *child, int width, int height);
