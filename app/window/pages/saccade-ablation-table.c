/* saccade-ablation-table.c — the head sweep's ranked heads (see saccade-ablation-table.h).
 * One row object per head holding copies of its numbers; the columns are label cells bound
 * by their index (0 rank, 1 head, 2.. the metrics in COLUMN_METRIC's order, then the flip
 * mark).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-table.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/window/pages/saccade-table-column.h"

#define N_METRICS SACCADE_ABLATION_N_METRICS

/* ------------------------------------------------------------------------------------ */
/* A ranked head                                                                         */

#define SACCADE_TYPE_ABLATION_ROW (saccade_ablation_row_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeAblationRow, saccade_ablation_row, SACCADE, ABLATION_ROW, GObject)

struct _SaccadeAblationRow
{
  GObject parent_instance;
  int rank, layer, head;
  double values[N_METRICS];
  gboolean flipped;
};

G_DEFINE_FINAL_TYPE (SaccadeAblationRow, saccade_ablation_row, G_TYPE_OBJECT)

static void
saccade_ablation_row_class_init (SaccadeAblationRowClass *klass)
{
}

static void
saccade_ablation_row_init (SaccadeAblationRow *self)
{
}

/* ------------------------------------------------------------------------------------ */
/* The table                                                                             */

struct _SaccadeAblationTable
{
  SaccadeHeadTable parent_instance;
  GtkColumnViewColumn *contrast_column; /* Δ logit diff: shown for a sweep with a contrast */
};

/* The metric columns' order: the Δ logit difference first (shown only with a contrast, it is
 * what the sweep was asked to measure), then the enum's. */
static const int COLUMN_METRIC[N_METRICS] = {
  SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF, SACCADE_ABLATION_METRIC_DELTA_LOGP,
  SACCADE_ABLATION_METRIC_TV, SACCADE_ABLATION_METRIC_JSD, SACCADE_ABLATION_METRIC_DELTA_LOSS,
};

G_DEFINE_FINAL_TYPE (SaccadeAblationTable, saccade_ablation_table, SACCADE_TYPE_HEAD_TABLE)

/* Short headings (the page's metric chooser has the long names). */
static const char *const METRIC_HEADINGS[N_METRICS] = {
  /* Translators: the ranked heads' column headings. */
  N_("Δ log p"), N_("TV"), N_("JSD"), N_("Δ loss"), N_("Δ logit diff"),
};

void
saccade_ablation_table_set_result (SaccadeAblationTable *self, const ScHeadSweepResult *r,
                                   SaccadeAblationMetric metric)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree int *order = NULL;
  int n;

  g_return_if_fail (SACCADE_IS_ABLATION_TABLE (self));
  if (r != NULL)
    {
      n = r->n_layers * r->n_heads;
      order = saccade_ablation_rank_heads (r, metric);
      for (int k = 0; k < n; k++)
        {
          SaccadeAblationRow *row = g_object_new (SACCADE_TYPE_ABLATION_ROW, NULL);
          const ScAblationEffect *e = &r->heads[order[k]];
          row->rank = k + 1;
          row->layer = order[k] / r->n_heads;
          row->head = order[k] % r->n_heads;
          for (int m = 0; m < N_METRICS; m++)
            row->values[m] = saccade_ablation_effect_value (e, (SaccadeAblationMetric) m);
          row->flipped = e->flipped;
          saccade_head_table_row_set_head (row, row->layer, row->head);
          g_ptr_array_add (rows, row);
        }
    }
  saccade_head_table_set_rows (SACCADE_HEAD_TABLE (self), rows->pdata, rows->len);
  gtk_column_view_column_set_visible (self->contrast_column, r != NULL && r->contrast >= 0);
}

gboolean
saccade_ablation_table_get_row (SaccadeAblationTable *self, guint row, int *layer, int *head)
{
  g_return_val_if_fail (SACCADE_IS_ABLATION_TABLE (self), FALSE);
  return saccade_head_table_get_head (SACCADE_HEAD_TABLE (self), row, layer, head);
}

static void
cell_setup (GtkSignalListItemFactory *f, GtkListItem *item, gpointer col)
{
  saccade_table_label_cell (item, GPOINTER_TO_INT (col) == 1, FALSE);
}

static void
cell_bind (GtkSignalListItemFactory *f, GtkListItem *item, gpointer col)
{
  SaccadeAblationRow *row = gtk_list_item_get_item (item);
  const int c = GPOINTER_TO_INT (col);
  g_autofree char *text = NULL;

  if (c == 0)
    text = g_strdup_printf ("%d", row->rank);
  else if (c == 1)
    text = g_strdup_printf ("L%d.H%d", row->layer, row->head);
  else if (c < 2 + N_METRICS)
    text = isnan (row->values[COLUMN_METRIC[c - 2]])
             ? g_strdup ("—") : g_strdup_printf ("%.4f", row->values[COLUMN_METRIC[c - 2]]);
  else
    text = g_strdup (row->flipped ? "●" : "");
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static void
saccade_ablation_table_class_init (SaccadeAblationTableClass *klass)
{
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "ablationtable");
}

static void
saccade_ablation_table_init (SaccadeAblationTable *self)
{
  const char *titles[2 + N_METRICS + 1];
  GtkColumnView *view;

  titles[0] = "#";
  titles[1] = _("Head");
  for (int m = 0; m < N_METRICS; m++)
    titles[2 + m] = _(METRIC_HEADINGS[COLUMN_METRIC[m]]);
  /* Translators: the column marking heads whose ablation changed the top-1. */
  titles[2 + N_METRICS] = _("Flip");
  view = saccade_head_table_setup (SACCADE_HEAD_TABLE (self), SACCADE_TYPE_ABLATION_ROW);
  for (gsize c = 0; c < G_N_ELEMENTS (titles); c++)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      GtkColumnViewColumn *column;
      g_signal_connect (factory, "setup", G_CALLBACK (cell_setup), GINT_TO_POINTER ((int) c));
      g_signal_connect (factory, "bind", G_CALLBACK (cell_bind), GINT_TO_POINTER ((int) c));
      column = gtk_column_view_column_new (titles[c], factory);
      gtk_column_view_column_set_expand (column, c >= 2);
      gtk_column_view_append_column (view, column);
      if (c == 2) /* COLUMN_METRIC[0] */
        {
          self->contrast_column = column;
          gtk_column_view_column_set_visible (column, FALSE);
        }
      g_object_unref (column);
    }
  gtk_scrolled_window_set_policy (
    GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (GTK_WIDGET (view), GTK_TYPE_SCROLLED_WINDOW)),
    GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
}
