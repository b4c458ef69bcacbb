/* saccade-pages.c — which pages the window shows, in order (see saccade-pages.h). */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-pages.h"

#include "app/window/pages/saccade-ablation-page.h"
#include "app/window/pages/saccade-attribution-page.h"
#include "app/window/pages/saccade-compare-page.h"
#include "app/window/pages/saccade-heatmap-page.h"
#include "app/window/pages/saccade-induction-page.h"
#include "app/window/pages/saccade-learn-page.h"
#include "app/window/pages/saccade-lines-page.h"
#include "app/window/pages/saccade-model-page.h"
#include "app/window/pages/saccade-rollout-page.h"

GPtrArray *
saccade_pages_new (GSettings *settings)
{
  /* The switcher's order; Alt+1, Alt+2, ... follow it (saccade-application.c). */
  const GType types[] = {
    SACCADE_TYPE_HEATMAP_PAGE,
    SACCADE_TYPE_MODEL_PAGE,
    SACCADE_TYPE_LINES_PAGE,
    SACCADE_TYPE_ROLLOUT_PAGE,
    SACCADE_TYPE_COMPARE_PAGE,
    SACCADE_TYPE_INDUCTION_PAGE,
    SACCADE_TYPE_ABLATION_PAGE,
    SACCADE_TYPE_ATTRIBUTION_PAGE,
    SACCADE_TYPE_LEARN_PAGE,
  };
  GPtrArray *pages = g_ptr_array_new_with_free_func (g_object_unref);
  gsize i;

  g_return_val_if_fail (G_IS_SETTINGS (settings), pages);
  for (i = 0; i < G_N_ELEMENTS (types); i++)
    g_ptr_array_add (pages, g_object_ref_sink (g_object_new (types[i], "settings", settings,
                                                             NULL)));
  return pages;
}
