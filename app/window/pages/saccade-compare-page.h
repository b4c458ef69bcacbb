/* saccade-compare-page.h — the Compare page (DESIGN.md, "The window"): two heads side by
 * side, chosen freely (a run of the open database, a layer, a head for each side), their
 * difference A − B on the diverging colour map and their Jensen–Shannon distance; and the
 * head-distance matrix of the run shown, in average-linkage order with its dendrogram,
 * computed in the background. A click on a cell of the matrix puts that pair into the
 * two sides.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_COMPARE_PAGE (saccade_compare_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeComparePage, saccade_compare_page, SACCADE, COMPARE_PAGE,
                      SaccadePage)

G_END_DECLS
