/* saccade-heads-table.c — the heads table (see saccade-heads-table.h).
 *
 * The rows (saccade-head-table.h) are SaccadeHeadRow objects, a small GObject per head
 * pointing at the run's ScHeadStats, the run kept alive by the table; each column has a
 * GtkCustomSorter comparing its own value, so a click on a header sorts and a second click
 * reverses. NaN values (a metric undefined
 * for the run) sort last and show as "—". 270 rows: building the store takes well under a
 * millisecond, and the column view only creates the visible rows' widgets.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-heads-table.h"
#include "app/window/pages/saccade-table-column.h"

#include <glib/gi18n.h>
#include <math.h>

/* ------------------------------------------------------------------------------------ */
/* One row                                                                               */

#define SACCADE_TYPE_HEAD_ROW (saccade_head_row_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeadRow, saccade_head_row, SACCADE, HEAD_ROW, GObject)

struct _SaccadeHeadRow
{
  GObject parent_instance;
  int layer, head, kv;
  const ScHeadStats *stats; /* borrowed from the run the table holds */
  const char *top_label;    /* borrowed from the run: the last row's top key's token */
};

G_DEFINE_FINAL_TYPE (SaccadeHeadRow, saccade_head_row, G_TYPE_OBJECT)

static void saccade_head_row_class_init (SaccadeHeadRowClass *klass) {}
static void saccade_head_row_init (SaccadeHeadRow *self) {}

/* Columns: the three integers, the nine metrics (SaccadeMetric order), the top key. */
enum { COL_LAYER, COL_HEAD, COL_KV, COL_METRIC0, COL_TOP = COL_METRIC0 + SACCADE_N_METRICS,
       N_COLS };

static double
row_value (const SaccadeHeadRow *r, int col)
{
  switch (col)
    {
    case COL_LAYER: return r->layer;
    case COL_HEAD: return r->head;
    case COL_KV: return r->kv;
    case COL_TOP: return r->stats->last_top_weight;
    default: return sc_head_stats_get (r->stats, (ScHeadMetric) (col - COL_METRIC0));
    }
}

static char *
column_id (int col)
{
  switch (col)
    {
    case COL_LAYER: return g_strdup ("layer");
    case COL_HEAD: return g_strdup ("head");
    case COL_KV: return g_strdup ("kv");
    case COL_TOP: return g_strdup ("top-key");
    default: return g_strdup (saccade_metric_id ((SaccadeMetric) (col - COL_METRIC0)));
    }
}

/* ------------------------------------------------------------------------------------ */
/* The table                                                                             */

struct _SaccadeHeadsTable
{
  SaccadeHeadTable parent_instance;

  GtkColumnView *view;          /* the base's */
  GtkColumnViewColumn *columns[N_COLS];
  SaccadeRun *run;              /* owned reference: the rows borrow its stats */
};

G_DEFINE_FINAL_TYPE (SaccadeHeadsTable, saccade_heads_table, SACCADE_TYPE_HEAD_TABLE)

static int
compare_rows (gconstpointer a, gconstpointer b, gpointer col_p)
{
  int col = GPOINTER_TO_INT (col_p);

  return saccade_table_compare_values (row_value (a, col), row_value (b, col));
}

static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer col_p)
{
  const gboolean text = GPOINTER_TO_INT (col_p) == COL_TOP;

  saccade_table_label_cell (item, text, text);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer col_p)
{
  SaccadeHeadRow *r = gtk_list_item_get_item (item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (item));
  int col = GPOINTER_TO_INT (col_p);
  g_autofree char *text = NULL;
  double v;

  if (col < COL_METRIC0)
    text = g_strdup_printf ("%d", (int) row_value (r, col));
  else if (col == COL_TOP)
    /* Translators: the heads table's top-key cell: position, token, weight. */
    text = g_strdup_printf (_("%d “%s” %.2f"), r->stats->last_top, r->top_label,
                            r->stats->last_top_weight);
  else if (isnan (v = row_value (r, col)))
    text = g_strdup ("—");
  else
    text = g_strdup_printf ("%.3f", v);
  gtk_label_set_text (label, text);
}

static void
add_column (SaccadeHeadsTable *self, int col, const char *title)
{
  GtkColumnViewColumn *c = saccade_table_add_column (self->view, col, title,
                                                     G_CALLBACK (setup_cell),
                                                     G_CALLBACK (bind_cell), compare_rows,
                                                     col == COL_TOP);

  g_object_set_data_full (G_OBJECT (c), "saccade-column-id", column_id (col), g_free);
  self->columns[col] = c;
}

static void
saccade_heads_table_dispose (GObject *object)
{
  SaccadeHeadsTable *self = SACCADE_HEADS_TABLE (object);

  /* The rows borrow the run's statistics: they go first. */
  if (self->view != NULL)
    saccade_head_table_set_rows (SACCADE_HEAD_TABLE (self), NULL, 0);
  self->view = NULL;
  g_clear_pointer (&self->run, saccade_run_unref);
  G_OBJECT_CLASS (saccade_heads_table_parent_class)->dispose (object);
}

static void
saccade_heads_table_class_init (SaccadeHeadsTableClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_heads_table_dispose;
  gtk_widget_class_set_css_name (widget_class, "headstable");
}

static void
saccade_heads_table_init (SaccadeHeadsTable *self)
{
  self->view = saccade_head_table_setup (SACCADE_HEAD_TABLE (self), SACCADE_TYPE_HEAD_ROW);

  /* Translators: heads table columns. */
  add_column (self, COL_LAYER, _("Layer"));
  add_column (self, COL_HEAD, _("Head"));
  add_column (self, COL_KV, _("KV head"));
  for (int m = 0; m < SACCADE_N_METRICS; m++)
    add_column (self, COL_METRIC0 + m, saccade_metric_short_name ((SaccadeMetric) m));
  add_column (self, COL_TOP, _("Last top key"));
}

GtkWidget *
saccade_heads_table_new (void)
{
  return g_object_new (SACCADE_TYPE_HEADS_TABLE, NULL);
}

void
saccade_heads_table_set_run (SaccadeHeadsTable *self, SaccadeRun *run)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_object_unref);
  int g;

  g_return_if_fail (SACCADE_IS_HEADS_TABLE (self));
  if (run != NULL)
    {
      g = saccade_run_group_size (run);
      for (int l = 0; l < run->n_layers; l++)
        for (int h = 0; h < run->n_heads; h++)
          {
            SaccadeHeadRow *r = g_object_new (SACCADE_TYPE_HEAD_ROW, NULL);
            r->layer = l;
            r->head = h;
            r->kv = h / g;
            r->stats = &run->stats[(gsize) l * run->n_heads + h];
            r->top_label = r->stats->last_top >= 0 && r->stats->last_top < run->n
                             ? run->labels[r->stats->last_top] : "";
            saccade_head_table_row_set_head (r, l, h);
            g_ptr_array_add (rows, r);
          }
      saccade_run_ref (run);
    }
  /* Replace the rows before dropping the old run: they borrow its statistics. */
  saccade_head_table_set_rows (SACCADE_HEAD_TABLE (self), rows->pdata, rows->len);
  g_clear_pointer (&self->run, saccade_run_unref);
  self->run = run;
}

gboolean
saccade_heads_table_sort (SaccadeHeadsTable *self, const char *id, gboolean descending)
{
  g_return_val_if_fail (SACCADE_IS_HEADS_TABLE (self), FALSE);
  for (int c = 0; c < N_COLS; c++)
    if (g_strcmp0 (g_object_get_data (G_OBJECT (self->columns[c]), "saccade-column-id"), id)
        == 0)
      {
        gtk_column_view_sort_by_column (self->view, self->columns[c],
                                        descending ? GTK_SORT_DESCENDING : GTK_SORT_ASCENDING);
        return TRUE;
      }
  return FALSE;
}

gboolean
saccade_heads_table_get_row (SaccadeHeadsTable *self, guint row, int *layer, int *head)
{
  g_return_val_if_fail (SACCADE_IS_HEADS_TABLE (self), FALSE);
  return saccade_head_table_get_head (SACCADE_HEAD_TABLE (self), row, layer, head);
}
