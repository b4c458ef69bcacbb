/* saccade-lines-heads.c — the Lines page's head toggles (saccade-lines-private.h): one
 * toggle button per head, with a swatch in the head's colour of the figure; a click shows
 * or hides the head, a double click or Ctrl+click shows it alone. The heads shown filter
 * the links already chosen (nothing is chosen again). Not here: the links, the range and
 * the page's actions (saccade-lines-page.c).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-lines-private.h"

#include <glib/gi18n.h>

static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  GtkToggleButton *button = user_data;
  int head = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (area), "saccade-head"));
  int n_heads = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (area), "saccade-n-heads"));
  double rgb[3];

  saccade_figure_head_color (head, n_heads, rgb);
  cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
  if (gtk_toggle_button_get_active (button))
    {
      cairo_rectangle (cr, 0, 0, width, height);
      cairo_fill (cr);
    }
  else
    {
      /* off: the colour's outline only */
      cairo_set_line_width (cr, 1.5);
      cairo_rectangle (cr, 0.75, 0.75, width - 1.5, height - 1.5);
      cairo_stroke (cr);
    }
}

/* Shows exactly the heads @on says (n_heads of them), setting the buttons to match. */
void
lines_set_heads (SaccadeLinesPage *self, const gboolean *on)
{
  self->updating = TRUE;
  for (int h = 0; h < self->n_heads; h++)
    {
      self->head_on[h] = on[h];
      gtk_toggle_button_set_active (self->head_buttons[h], on[h]);
    }
  self->updating = FALSE;
  lines_push_view (self);
}

void
lines_solo_head (SaccadeLinesPage *self, int head)
{
  g_autofree gboolean *on = g_new0 (gboolean, MAX (self->n_heads, 1));

  if (head < 0 || head >= self->n_heads)
    return;
  on[head] = TRUE;
  lines_set_heads (self, on);
}

static void
head_toggled (GtkToggleButton *button, SaccadeLinesPage *self)
{
  int head = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "saccade-head"));

  /* the swatch: filled when shown, an outline when hidden */
  gtk_widget_queue_draw (g_object_get_data (G_OBJECT (button), "saccade-swatch"));
  if (self->updating || head < 0 || head >= self->n_heads)
    return;
  self->head_on[head] = gtk_toggle_button_get_active (button);
  lines_push_view (self);
}

/* A double click or Ctrl+click shows the head alone; the press is claimed so that the
 * button does not toggle as well (a double click's first click has toggled it once). */
static void
head_pressed (GtkGestureClick *gesture, int n_press, double x, double y, SaccadeLinesPage *self)
{
  GtkWidget *button = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  GdkModifierType state
    = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));

  if (n_press < 2 && !(state & GDK_CONTROL_MASK))
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  lines_solo_head (self, GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "saccade-head")));
}

/* One toggle button per head of the run (made again when the number of heads changes),
 * every head shown. */
void
lines_rebuild_head_buttons (SaccadeLinesPage *self, int n_heads)
{
  GtkWidget *child;

  if (n_heads == self->n_heads)
    {
      g_autofree gboolean *all = g_new (gboolean, MAX (n_heads, 1));
      for (int h = 0; h < n_heads; h++)
        all[h] = TRUE;
      lines_set_heads (self, all);
      return;
    }
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->heads_box))) != NULL)
    gtk_box_remove (self->heads_box, child);
  g_clear_pointer (&self->head_buttons, g_free);
  g_clear_pointer (&self->head_on, g_free);
  self->n_heads = n_heads;
  self->head_buttons = g_new0 (GtkToggleButton *, MAX (n_heads, 1));
  self->head_on = g_new0 (gboolean, MAX (n_heads, 1));
  for (int h = 0; h < n_heads; h++)
    {
      GtkWidget *button = gtk_toggle_button_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
      GtkWidget *swatch = gtk_drawing_area_new ();
      GtkGesture *gesture = gtk_gesture_click_new ();
      char num[16];
      g_autofree char *tip = NULL;

      g_snprintf (num, sizeof num, "%d", h);
      g_object_set_data (G_OBJECT (button), "saccade-head", GINT_TO_POINTER (h));
      g_object_set_data (G_OBJECT (button), "saccade-swatch", swatch);
      g_object_set_data (G_OBJECT (swatch), "saccade-head", GINT_TO_POINTER (h));
      g_object_set_data (G_OBJECT (swatch), "saccade-n-heads", GINT_TO_POINTER (n_heads));
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), 12);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), 12);
      gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), draw_swatch, button, NULL);
      gtk_box_append (GTK_BOX (box), swatch);
      gtk_box_append (GTK_BOX (box), gtk_label_new (num));
      gtk_button_set_child (GTK_BUTTON (button), box);
      gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (button), TRUE);
      gtk_widget_add_css_class (button, "flat");
      /* Translators: the tooltip of a head's toggle button on the Lines page. */
      tip = g_strdup_printf (_("Head %d: click to show or hide it, double-click or "
                               "Ctrl+click to show it alone"), h);
      gtk_widget_set_tooltip_text (button, tip);
      gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (gesture),
                                                  GTK_PHASE_CAPTURE);
      g_signal_connect (gesture, "pressed", G_CALLBACK (head_pressed), self);
      gtk_widget_add_controller (button, GTK_EVENT_CONTROLLER (gesture));
      g_signal_connect (button, "toggled", G_CALLBACK (head_toggled), self);
      gtk_box_append (self->heads_box, button);
      self->head_buttons[h] = GTK_TOGGLE_BUTTON (button);
      self->head_on[h] = TRUE;
    }
}
