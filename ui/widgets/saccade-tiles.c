/* saccade-tiles.c — children as equal tiles in the arrangement that makes their square
 * figures biggest (saccade-tiles.h).
 *
 * A row of three heatmaps in a landscape page leaves the page's height unused: at 1600 ×
 * 1000 each Compare figure got 350 px across and 780 down, and drew a 170-px matrix; in two
 * rows (A and B over A − B) they draw 255-px ones. At 1280 × 800 the row is still best.
 * The choice is made anew at each allocation from the tile sizes alone; each child still
 * draws its figure centred in its tile, its aspect kept.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-tiles.h"

struct _SaccadeTiles {
  GtkWidget parent_instance;
  int overhead_w, overhead_h;
  int columns; /* of the last allocation */
};

G_DEFINE_FINAL_TYPE (SaccadeTiles, saccade_tiles, GTK_TYPE_WIDGET)

int
saccade_tiles_best_columns (int n, int width, int height, int overhead_w, int overhead_h,
                            int min_w, int min_h, double *side)
{
  int best_cols = MAX (n, 1);
  double best = -G_MAXDOUBLE;

  for (int cols = MAX (n, 1); cols >= 1; cols--)
    {
      int rows = (n + cols - 1) / cols;
      double tw = (double) width / cols, th = (double) height / MAX (rows, 1);
      double s = MIN (tw - overhead_w, th - overhead_h);

      if (cols < n && (tw < min_w || th < min_h))
        continue;
      /* more columns first: a tie keeps the row */
      if (s > best + 0.5)
        {
          best = s;
          best_cols = cols;
        }
    }
  if (side != NULL)
    *side = best;
  return best_cols;
}

static int
visible_children (GtkWidget *w)
{
  int n = 0;

  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    n += gtk_widget_should_layout (c);
  return n;
}

static void
saccade_tiles_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                       int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  int n = visible_children (widget);

  *minimum = *natural = 0;
  /* One row's needs, as a homogeneous box: n times the largest across, the largest down. */
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      int cmin, cnat;
      if (!gtk_widget_should_layout (c))
        continue;
      gtk_widget_measure (c, orientation, -1, &cmin, &cnat, NULL, NULL);
      if (orientation == GTK_ORIENTATION_HORIZONTAL)
        {
          *minimum = MAX (*minimum, cmin * n);
          *natural = MAX (*natural, cnat * n);
        }
      else
        {
          *minimum = MAX (*minimum, cmin);
          *natural = MAX (*natural, cnat);
        }
    }
}

static void
saccade_tiles_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  SaccadeTiles *self = SACCADE_TILES (widget);
  int n = visible_children (widget), min_w = 0, min_h = 0, cols, rows, i = 0;

  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    if (gtk_widget_should_layout (c))
      {
        int m;
        gtk_widget_measure (c, GTK_ORIENTATION_HORIZONTAL, -1, &m, NULL, NULL, NULL);
        min_w = MAX (min_w, m);
        gtk_widget_measure (c, GTK_ORIENTATION_VERTICAL, -1, &m, NULL, NULL, NULL);
        min_h = MAX (min_h, m);
      }
  if (n == 0)
    return;
  cols = saccade_tiles_best_columns (n, width, height, self->overhead_w, self->overhead_h,
                                     min_w, min_h, NULL);
  rows = (n + cols - 1) / cols;
  self->columns = cols;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      int row, col, in_row, tw = width / cols, th = height / rows;
      if (!gtk_widget_should_layout (c))
        continue;
      row = i / cols;
      col = i % cols;
      in_row = MIN (cols, n - row * cols);
      i++;
      /* a last row with fewer tiles is centred */
      gtk_widget_size_allocate (c,
                                &(GtkAllocation) { (width - in_row * tw) / 2 + col * tw,
                                                   row * th, tw, th },
                                -1);
    }
}

static void
saccade_tiles_dispose (GObject *object)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (object))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (saccade_tiles_parent_class)->dispose (object);
}

static void
saccade_tiles_class_init (SaccadeTilesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = saccade_tiles_dispose;
  widget_class->measure = saccade_tiles_measure;
  widget_class->size_allocate = saccade_tiles_size_allocate;
}

static void
saccade_tiles_init (SaccadeTiles *self)
{
  /* A Compare heatmap of a sentence at the default font: row labels, numbers and the colour
   * bar across; the title, the key caption, the turned key labels and numbers down. */
  self->overhead_w = 150;
  self->overhead_h = 125;
}

GtkWidget *
saccade_tiles_new (void)
{
  return g_object_new (SACCADE_TYPE_TILES, NULL);
}

void
saccade_tiles_set_overhead (SaccadeTiles *self, int overhead_w, int overhead_h)
{
  g_return_if_fail (SACCADE_IS_TILES (self));
  self->overhead_w = MAX (0, overhead_w);
  self->overhead_h = MAX (0, overhead_h);
  gtk_widget_queue_allocate (GTK_WIDGET (self));
}

int
saccade_tiles_get_columns (SaccadeTiles *self)
{
  g_return_val_if_fail (SACCADE_IS_TILES (self), 0);
  return self->columns;
}
