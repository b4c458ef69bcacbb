/* saccade-prompt-popover.h — the header bar's prompt editor: a popover holding the whole
 * prompt in a multi-line text view, and what goes into a capture besides the text (the
 * model's chat template, a number of tokens to generate after it).
 *
 * The header bar's one-line entry stays the place a sentence is typed and the one the
 * window reads when it runs: saccade_prompt_popover_bind_entry() keeps the entry and the
 * text view showing the same text (the entry shows a multi-line prompt on one line, each
 * newline as a ¶ glyph). Ctrl+Enter in the text view runs (win.run), as in the entry.
 *
 * Main thread only, as every widget.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_PROMPT_POPOVER (saccade_prompt_popover_get_type ())
G_DECLARE_FINAL_TYPE (SaccadePromptPopover, saccade_prompt_popover, SACCADE, PROMPT_POPOVER,
                      GtkPopover)

/* Keeps @entry's text and the popover's text view equal from now on (either may change;
 * @entry is borrowed and must outlive the popover, as the header bar's entry does). */
void saccade_prompt_popover_bind_entry (SaccadePromptPopover *self, GtkEditable *entry);

/* The prompt as the text view holds it (newlines included). Caller frees. */
char *saccade_prompt_popover_dup_text (SaccadePromptPopover *self);
/* Replaces the text view's text with @text (UTF-8); the bound entry follows. */
void saccade_prompt_popover_set_text (SaccadePromptPopover *self, const char *text);

/* The capture's options: wrap the text in the chat template; tokens to generate (>= 0). */
gboolean saccade_prompt_popover_get_chat (SaccadePromptPopover *self);
void saccade_prompt_popover_set_chat (SaccadePromptPopover *self, gboolean chat);
int saccade_prompt_popover_get_n_generate (SaccadePromptPopover *self);
void saccade_prompt_popover_set_n_generate (SaccadePromptPopover *self, int n);

G_END_DECLS
