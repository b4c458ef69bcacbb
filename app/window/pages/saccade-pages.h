/* saccade-pages.h — the pages the main window shows, in the view switcher's order. The one
 * place that names the page types: the window includes this and saccade-page.h only, and
 * a new page is one widget with its .ui plus a line in saccade-pages.c.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

/* A new instance of every page (SaccadePage, one strong reference each, sunk), sharing
 * @settings. Free the array with g_ptr_array_unref(). */
GPtrArray *saccade_pages_new (GSettings *settings);

G_END_DECLS
