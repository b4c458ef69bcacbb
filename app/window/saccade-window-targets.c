/* saccade-window-targets.c — the target and the contrast the studies measure, chosen in
 * the predictions panel (see saccade-window-private.h).
 *
 * The flow is one way: a click (or Enter, Space) on a candidate of the panel changes the
 * window's state through its actions win.target and win.contrast (each a token's text as
 * typed, "" for none); a change of either is handed to every page that measures a target
 * through its page.target / page.contrast actions (the Ablation and Attribution pages'
 * entries), and the panel marks the two candidates "A" and "B". Typing in a page's entry
 * changes that page only: the window's state is what the panel last chose.
 *
 * Choosing: a click (or Enter) on a candidate makes it the target when none is chosen, else
 * the contrast; Ctrl+click (Ctrl+Enter) makes it the contrast at once; a click on the target clears both,
 * on the contrast the contrast.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

static const char *
state_text (SaccadeWindow *self, const char *name)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);
  g_autoptr (GVariant) state = action != NULL ? g_action_get_state (action) : NULL;

  /* the state's string lives as long as the action's state: the action keeps it */
  return state != NULL ? g_variant_get_string (state, NULL) : "";
}

/* Marks the panel's candidates that are the target and the contrast. */
void
saccade_window_targets_mark (SaccadeWindow *self)
{
  SaccadeRun *run = self->run;
  const char *target = state_text (self, "target"), *contrast = state_text (self, "contrast");
  int a = -1, b = -1;

  if (run != NULL && run->predicted_texts != NULL && self->predictions_first >= 0)
    for (int r = 0; r < run->k_predictions; r++)
      {
        const char *text = run->predicted_texts[self->predictions_first + r];
        if (*text == '\0')
          continue;
        if (a < 0 && g_str_equal (text, target))
          a = r;
        else if (b < 0 && g_str_equal (text, contrast))
          b = r;
      }
  saccade_predictions_view_set_marks (self->predictions_view, a, b);
}

/* win.target, win.contrast: the new text, handed to the pages that measure a target. */
static void
target_changed (GSimpleAction *action, GVariant *value, gpointer data)
{
  SaccadeWindow *self = data;
  const char *page_action = g_str_equal (g_action_get_name (G_ACTION (action)), "target")
                              ? "page.target" : "page.contrast";

  g_simple_action_set_state (action, value);
  for (guint i = 0; self->pages != NULL && i < self->pages->len; i++)
    gtk_widget_activate_action (g_ptr_array_index (self->pages, i), page_action, "s",
                                g_variant_get_string (value, NULL));
  saccade_window_targets_mark (self);
}

static void
set_state (SaccadeWindow *self, const char *name, const char *text)
{
  g_action_group_activate_action (G_ACTION_GROUP (self), name, g_variant_new_string (text));
}

/* A candidate of the panel was chosen (see the top of the file). */
static void
candidate_chosen (SaccadePredictionsView *view, int row, gboolean contrast, SaccadeWindow *self)
{
  SaccadeRun *run = self->run;
  g_autofree char *target = g_strdup (state_text (self, "target"));
  g_autofree char *other = g_strdup (state_text (self, "contrast"));
  const char *text;

  if (run == NULL || run->predicted_texts == NULL || self->predictions_first < 0 || row < 0
      || row >= run->k_predictions)
    return;
  text = run->predicted_texts[self->predictions_first + row];
  if (*text == '\0')
    {
      saccade_window_toast (self, _("This candidate is part of a character: it has no text "
                                    "to measure as a target"));
      return;
    }
  if (g_str_equal (text, target))
    {
      set_state (self, "contrast", "");
      set_state (self, "target", "");
    }
  else if (g_str_equal (text, other))
    set_state (self, "contrast", "");
  else if (*target == '\0' && !contrast)
    set_state (self, "target", text);
  else
    set_state (self, "contrast", text);
}

void
saccade_window_targets_init (SaccadeWindow *self)
{
  static const char *const names[] = { "target", "contrast" };

  self->predictions_first = -1;
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GSimpleAction) action =
        g_simple_action_new_stateful (names[i], G_VARIANT_TYPE_STRING, g_variant_new_string (""));
      g_signal_connect (action, "change-state", G_CALLBACK (target_changed), self);
      g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (action));
    }
  saccade_predictions_view_set_choosable (
    self->predictions_view, TRUE,
    _("Click to measure this token (A) on the Ablation and Attribution pages; click a second "
      "to contrast them, logit(A) − logit(B) (Ctrl+click or Ctrl+Enter: make this one B). Click "
      "A again to clear."));
  g_signal_connect (self->predictions_view, "chosen", G_CALLBACK (candidate_chosen), self);
}
