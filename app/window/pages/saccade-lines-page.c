/* saccade-lines-page.c — the Lines page (see saccade-lines-page.h): hands the layer under
 * the cursor to SaccadeLinesView and keeps the layer spin button on the cursor (a
 * GtkAdjustment bound to SaccadePage:layer). The head part of the cursor is not shown
 * here (every head is), but the arrow keys still move it, as on every page.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-lines-page.h"

#include <glib/gi18n.h>

#include "ui/widgets/saccade-lines-view.h"

struct _SaccadeLinesPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkAdjustment *layer_adjustment;
  SaccadeLinesView *lines_view;
};

G_DEFINE_FINAL_TYPE (SaccadeLinesPage, saccade_lines_page, SACCADE_TYPE_PAGE)

static char *
saccade_lines_page_dup_figure_title (SaccadePage *page)
{
  SaccadeRun *run = saccade_page_get_run (page);
  g_autofree char *quote = NULL;

  if (run == NULL)
    return g_strdup ("");
  quote = saccade_page_dup_quoted_text (run);
  /* Translators: the lines figure's title, e.g. "Layer 5, all 9 heads · “The cat…”". */
  return g_strdup_printf (_("Layer %d, all %d heads · %s"), saccade_page_get_layer (page),
                          run->n_heads, quote);
}

static void
refresh (SaccadeLinesPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autofree char *title = NULL;

  if (run == NULL)
    {
      saccade_lines_view_set_data (self->lines_view, 0, 0, NULL, NULL);
      return;
    }
  title = saccade_lines_page_dup_figure_title (SACCADE_PAGE (self));
  saccade_lines_view_set_data (self->lines_view, run->n_heads, run->n,
                               saccade_run_layer (run, saccade_page_get_layer (SACCADE_PAGE (self))),
                               (const char *const *) run->labels);
  saccade_lines_view_set_title (self->lines_view, title);
}

static void
saccade_lines_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  SaccadeLinesPage *self = SACCADE_LINES_PAGE (page);

  /* The base class has moved the cursor into @run's shape: give the picker that range. */
  gtk_adjustment_configure (self->layer_adjustment, saccade_page_get_layer (page), 0,
                            run != NULL ? run->n_layers - 1 : 0, 1, 5, 0);
  refresh (self);
}

static void
saccade_lines_page_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_LINES_PAGE);
  G_OBJECT_CLASS (saccade_lines_page_parent_class)->dispose (object);
}

static void
saccade_lines_page_class_init (SaccadeLinesPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->dispose = saccade_lines_page_dispose;
  page_class->set_run = saccade_lines_page_set_run;
  page_class->dup_figure_title = saccade_lines_page_dup_figure_title;

  /* The template names the view by type name. */
  g_type_ensure (SACCADE_TYPE_LINES_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-lines-page.ui");
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, layer_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SaccadeLinesPage, lines_view);
}

static void
saccade_lines_page_init (SaccadeLinesPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->lines_view));
  g_object_bind_property (self, "layer", self->layer_adjustment, "value",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  g_signal_connect_swapped (self, "notify::layer", G_CALLBACK (refresh), self);
}
