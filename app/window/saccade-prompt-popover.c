/* saccade-prompt-popover.c — the prompt editor of the header bar (see
 * saccade-prompt-popover.h): a text view kept equal to the header bar's entry, the chat
 * template switch and the tokens to generate. It holds no capture logic: the window reads
 * the text from its entry and the options from here when it runs.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-prompt-popover.h"

/* The most tokens the window generates after a prompt: enough to watch a pattern form over
 * a few sentences, few enough that generating them and the forward pass over the whole run
 * stay within a few tens of seconds on a laptop CPU (greedy decoding of SmolLM2 runs at
 * ~100 tokens/s there). The CLI (`saccade capture --generate N`) has no such limit. */
#define MAX_GENERATE 1024

struct _SaccadePromptPopover
{
  GtkPopover parent_instance;

  /* Template widgets */
  GtkTextView *text_view;
  GtkCheckButton *chat_check;
  GtkSpinButton *generate_spin;

  /* Borrowed */
  GtkEditable *entry;
  /* Owned */
  gboolean syncing;  /* one side is being set from the other: do not echo it back */
};

G_DEFINE_FINAL_TYPE (SaccadePromptPopover, saccade_prompt_popover, GTK_TYPE_POPOVER)

static void
buffer_changed (SaccadePromptPopover *self)
{
  g_autofree char *text = NULL;

  if (self->syncing || self->entry == NULL)
    return;
  text = saccade_prompt_popover_dup_text (self);
  self->syncing = TRUE;
  gtk_editable_set_text (self->entry, text);
  self->syncing = FALSE;
}

static void
entry_changed (SaccadePromptPopover *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->text_view);
  GtkTextIter end;

  if (self->syncing)
    return;
  self->syncing = TRUE;
  gtk_text_buffer_set_text (buffer, gtk_editable_get_text (self->entry), -1);
  /* the editor opens where typing goes on: after the text */
  gtk_text_buffer_get_end_iter (buffer, &end);
  gtk_text_buffer_place_cursor (buffer, &end);
  self->syncing = FALSE;
}

void
saccade_prompt_popover_bind_entry (SaccadePromptPopover *self, GtkEditable *entry)
{
  g_return_if_fail (SACCADE_IS_PROMPT_POPOVER (self));
  g_return_if_fail (GTK_IS_EDITABLE (entry) && self->entry == NULL);

  self->entry = entry;
  g_signal_connect_object (entry, "changed", G_CALLBACK (entry_changed), self,
                           G_CONNECT_SWAPPED);
  entry_changed (self);
}

char *
saccade_prompt_popover_dup_text (SaccadePromptPopover *self)
{
  GtkTextBuffer *buffer;
  GtkTextIter start, end;

  g_return_val_if_fail (SACCADE_IS_PROMPT_POPOVER (self), NULL);
  buffer = gtk_text_view_get_buffer (self->text_view);
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

void
saccade_prompt_popover_set_text (SaccadePromptPopover *self, const char *text)
{
  g_return_if_fail (SACCADE_IS_PROMPT_POPOVER (self) && text != NULL);
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->text_view), text, -1);
}

gboolean
saccade_prompt_popover_get_chat (SaccadePromptPopover *self)
{
  g_return_val_if_fail (SACCADE_IS_PROMPT_POPOVER (self), FALSE);
  return gtk_check_button_get_active (self->chat_check);
}

void
saccade_prompt_popover_set_chat (SaccadePromptPopover *self, gboolean chat)
{
  g_return_if_fail (SACCADE_IS_PROMPT_POPOVER (self));
  gtk_check_button_set_active (self->chat_check, chat);
}

int
saccade_prompt_popover_get_n_generate (SaccadePromptPopover *self)
{
  g_return_val_if_fail (SACCADE_IS_PROMPT_POPOVER (self), 0);
  return gtk_spin_button_get_value_as_int (self->generate_spin);
}

void
saccade_prompt_popover_set_n_generate (SaccadePromptPopover *self, int n)
{
  g_return_if_fail (SACCADE_IS_PROMPT_POPOVER (self));
  gtk_spin_button_set_value (self->generate_spin, CLAMP (n, 0, MAX_GENERATE));
}

static void
saccade_prompt_popover_class_init (SaccadePromptPopoverClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/saccade/Saccade/"
                                               "saccade-prompt-popover.ui");
  gtk_widget_class_bind_template_child (widget_class, SaccadePromptPopover, text_view);
  gtk_widget_class_bind_template_child (widget_class, SaccadePromptPopover, chat_check);
  gtk_widget_class_bind_template_child (widget_class, SaccadePromptPopover, generate_spin);
}

static void
saccade_prompt_popover_init (SaccadePromptPopover *self)
{
  GtkEventController *keys = gtk_shortcut_controller_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  /* Ctrl+Enter runs from the text view too, where Enter (with or without Ctrl) is a
   * newline: the capture phase takes the key before the text view sees it. */
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  gtk_shortcut_controller_add_shortcut (
    GTK_SHORTCUT_CONTROLLER (keys),
    gtk_shortcut_new (gtk_alternative_trigger_new (
                        gtk_keyval_trigger_new (GDK_KEY_Return, GDK_CONTROL_MASK),
                        gtk_keyval_trigger_new (GDK_KEY_KP_Enter, GDK_CONTROL_MASK)),
                      gtk_named_action_new ("win.run")));
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (self->generate_spin), MAX_GENERATE);
  g_signal_connect_object (gtk_text_view_get_buffer (self->text_view), "changed",
                           G_CALLBACK (buffer_changed), self, G_CONNECT_SWAPPED);
}
