/* saccade-induction-table.c — the induction heads table (see saccade-induction-table.h).
 *
 * Its rows (saccade-head-table.h) are SaccadeInductionRow objects, one small GObject per
 * head holding its numbers, each column a GtkCustomSorter over its own value, as in
 * saccade-heads-table.c. Rows start in rank
 * order (prefix matching, highest first, NaN last: saccade_induction_rank()). NaN scores
 * (a copying score of a head with no eigenvalue mass) show as "—" and sort last.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-induction-table.h"
#include "app/window/pages/saccade-table-column.h"

#include <glib/gi18n.h>
#include <math.h>

enum { COL_RANK, COL_LAYER, COL_HEAD, COL_PREFIX, COL_DUPLICATE, COL_PREVIOUS, COL_COPYING,
       N_COLS };

#define SACCADE_TYPE_INDUCTION_ROW (saccade_induction_row_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeInductionRow, saccade_induction_row, SACCADE, INDUCTION_ROW,
                      GObject)

struct _SaccadeInductionRow
{
  GObject parent_instance;
  double v[N_COLS];         /* the columns' values; rank, layer and head as integers */
};

G_DEFINE_FINAL_TYPE (SaccadeInductionRow, saccade_induction_row, G_TYPE_OBJECT)

static void saccade_induction_row_class_init (SaccadeInductionRowClass *klass) {}
static void saccade_induction_row_init (SaccadeInductionRow *self) {}

struct _SaccadeInductionTable
{
  SaccadeHeadTable parent_instance;

  GtkColumnView *view;          /* the base's */
};

G_DEFINE_FINAL_TYPE (SaccadeInductionTable, saccade_induction_table, SACCADE_TYPE_HEAD_TABLE)

static int
compare_rows (gconstpointer a, gconstpointer b, gpointer col_p)
{
  int col = GPOINTER_TO_INT (col_p);

  return saccade_table_compare_values (((const SaccadeInductionRow *) a)->v[col],
                                       ((const SaccadeInductionRow *) b)->v[col]);
}

static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer col_p)
{
  saccade_table_label_cell (item, FALSE, FALSE);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer col_p)
{
  SaccadeInductionRow *r = gtk_list_item_get_item (item);
  int col = GPOINTER_TO_INT (col_p);
  g_autofree char *text = NULL;

  if (col <= COL_HEAD)
    text = g_strdup_printf ("%d", (int) r->v[col]);
  else if (isnan (r->v[col]))
    text = g_strdup ("—");
  else
    text = g_strdup_printf ("%.3f", r->v[col]);
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static void
add_column (SaccadeInductionTable *self, int col, const char *title)
{
  saccade_table_add_column (self->view, col, title, G_CALLBACK (setup_cell),
                            G_CALLBACK (bind_cell), compare_rows, col == COL_COPYING);
}

static void
saccade_induction_table_class_init (SaccadeInductionTableClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_css_name (widget_class, "inductiontable");
}

static void
saccade_induction_table_init (SaccadeInductionTable *self)
{
  self->view = saccade_head_table_setup (SACCADE_HEAD_TABLE (self),
                                         SACCADE_TYPE_INDUCTION_ROW);

  /* Translators: induction table columns (docs/metrics.md defines the scores). */
  add_column (self, COL_RANK, _("Rank"));
  add_column (self, COL_LAYER, _("Layer"));
  add_column (self, COL_HEAD, _("Head"));
  add_column (self, COL_PREFIX, _("Prefix match"));
  add_column (self, COL_DUPLICATE, _("Duplicate"));
  add_column (self, COL_PREVIOUS, _("Previous"));
  add_column (self, COL_COPYING, _("Copying"));
}

GtkWidget *
saccade_induction_table_new (void)
{
  return g_object_new (SACCADE_TYPE_INDUCTION_TABLE, NULL);
}

void
saccade_induction_table_set_result (SaccadeInductionTable *self, const SaccadeInduction *ind)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_object_unref);

  g_return_if_fail (SACCADE_IS_INDUCTION_TABLE (self));
  if (ind != NULL)
    {
      const ScInductionResult *r = ind->result;
      g_autofree int *order = saccade_induction_rank (ind, 0);
      for (int k = 0; k < r->n_layers * r->n_heads; k++)
        {
          SaccadeInductionRow *row = g_object_new (SACCADE_TYPE_INDUCTION_ROW, NULL);
          const int i = order[k];
          row->v[COL_RANK] = k + 1;
          row->v[COL_LAYER] = i / r->n_heads;
          row->v[COL_HEAD] = i % r->n_heads;
          row->v[COL_PREFIX] = r->heads[i].prefix_matching;
          row->v[COL_DUPLICATE] = r->heads[i].duplicate_token;
          row->v[COL_PREVIOUS] = r->heads[i].previous_token;
          row->v[COL_COPYING] = ind->copying[i].copying;
          saccade_head_table_row_set_head (row, i / r->n_heads, i % r->n_heads);
          g_ptr_array_add (rows, row);
        }
    }
  saccade_head_table_set_rows (SACCADE_HEAD_TABLE (self), rows->pdata, rows->len);
}
