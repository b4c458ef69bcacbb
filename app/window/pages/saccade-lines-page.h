/* saccade-lines-page.h — the Lines page: one layer of the run as token-to-token lines
 * (BertViz's head view), one colour per head; the layer picker.
 * A SaccadePage (saccade-page.h): the window knows it through the base class only.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_LINES_PAGE (saccade_lines_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeLinesPage, saccade_lines_page, SACCADE, LINES_PAGE, SaccadePage)

G_END_DECLS
