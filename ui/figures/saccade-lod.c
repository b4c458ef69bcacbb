/* saccade-lod.c — the max-pooled level-of-detail pyramid of one head (saccade-lod.h).
 *
 * Building, in three passes:
 *   1. check the shape and take level 0 (a copy of a float matrix, a reference to an fp16
 *      triangle, or an overview);
 *   2. statistics of level 0 (what the automatic colour range needs: max pooling keeps the
 *      maximum but not the minimum);
 *   3. pool: level k + 1 from level k, 2 × 2 maximum, until a single cell is left.
 * fp16 cells are compared as integers through an order-preserving key (sign-magnitude to
 * two's-complement order), so pooling an fp16 level never converts a value; NaN is skipped.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-lod.h"

#include <math.h>
#include <string.h>

#include "ui/widgets/saccade-background.h"

/* The largest side accepted: 2^15 tokens is an fp16 triangle of 1 GiB, past what SQLite
 * stores in one BLOB (sc-store.h caps a head lower still); it also keeps every index of a
 * level below 2^31. */
#define LOD_MAX_SIDE (1 << 15)
/* fp16 bits: the exponent field all ones is inf (mantissa 0) or NaN (mantissa > 0). */
#define F16_EXP_MASK 0x7c00u
#define F16_MANT_MASK 0x03ffu
#define F16_NAN 0x7e00u
/* More than enough levels: ceil(log2(2^15)) + 1 = 16. */
#define LOD_MAX_LEVELS 18

struct _SaccadeLod {
  gatomicrefcount ref;
  int n_rows, n_cols;
  gboolean causal, exact;
  int window;                      /* > 0: a band head (saccade_lod_set_window) */
  int n_levels;
  SaccadeLodLevel levels[LOD_MAX_LEVELS];
  gpointer owned[LOD_MAX_LEVELS];  /* what each level's data was allocated as, or NULL */
  GBytes *bytes;                   /* level 0 when it is a referenced fp16 triangle */
  SaccadeLodStats stats;
};

/* ------------------------------------------------------------------------------------ */
/* fp16                                                                                  */

static float *f16_table; /* (65536): every binary16 bit pattern as a float */

static float
f16_decode (uint16_t h)
{
  int exp = (h & F16_EXP_MASK) >> 10;
  double mant = h & F16_MANT_MASK;
  double v;

  if (exp == 0x1f)
    v = mant != 0 ? NAN : INFINITY;
  else if (exp == 0)
    v = ldexp (mant, -24);                      /* subnormal: mant · 2^-24 */
  else
    v = ldexp (1024 + mant, exp - 25);          /* 1.mant · 2^(exp - 15) */
  return (h & 0x8000u) ? (float) -v : (float) v;
}

float
saccade_fp16_to_float (uint16_t h)
{
  static gsize init;

  if (g_once_init_enter (&init))
    {
      f16_table = g_new (float, 65536);
      for (guint i = 0; i < 65536; i++)
        f16_table[i] = f16_decode ((uint16_t) i);
      g_once_init_leave (&init, 1);
    }
  return f16_table[h];
}

/* An integer key ordered as the values are: positive halves above negative ones, larger
 * magnitudes further out. Callers skip NaN first. */
static inline int
f16_key (uint16_t h)
{
  return (h & 0x8000u) ? -(int) (h & 0x7fffu) : (int) h;
}

static inline gboolean
f16_is_nan (uint16_t h)
{
  return (h & F16_EXP_MASK) == F16_EXP_MASK && (h & F16_MANT_MASK) != 0;
}

/* ------------------------------------------------------------------------------------ */
/* Levels                                                                                */

static inline gsize
tri_start (int i)
{
  return (gsize) i * (i + 1) / 2;
}

static inline gsize
cell_index (const SaccadeLodLevel *L, int i, int j)
{
  return L->tri ? tri_start (i) + j : (gsize) i * L->cols + j;
}

/* Masked: above the diagonal of a causal level (the same rule at every level). */
static inline gboolean
is_masked (const SaccadeLod *lod, int i, int j)
{
  return lod->causal && j > i;
}

int
saccade_lod_band_start (const SaccadeLod *lod, int level, int i)
{
  gint64 b, first;

  if (lod->window <= 0 || level < 0 || level >= lod->n_levels)
    return 0;
  /* Cell (i, j) covers keys up to (j + 1) b - 1; the band of its first row i b starts at
   * key i b - w + 1: the cell is wholly left of it when (j + 1) b - 1 + w <= i b, i.e.
   * j < floor ((i b - w + 1) / b). */
  b = lod->levels[level].block;
  first = (gint64) i * b - lod->window + 1;
  return first > 0 ? (int) (first / b) : 0;
}

gboolean
saccade_lod_is_masked (const SaccadeLod *lod, int level, int i, int j)
{
  return is_masked (lod, i, j) || j < saccade_lod_band_start (lod, level, i);
}

void
saccade_lod_set_window (SaccadeLod *lod, int window)
{
  g_return_if_fail (lod != NULL);
  lod->window = MAX (window, 0);
}

int
saccade_lod_get_window (const SaccadeLod *lod)
{
  return lod->window;
}

gboolean
saccade_lod_level_value (const SaccadeLod *lod, int level, int i, int j, float *value)
{
  const SaccadeLodLevel *L;

  g_return_val_if_fail (lod != NULL, FALSE);
  if (level < 0 || level >= lod->n_levels)
    return FALSE;
  L = &lod->levels[level];
  if (i < 0 || j < 0 || i >= L->rows || j >= L->cols || saccade_lod_is_masked (lod, level, i, j))
    return FALSE;
  if (L->fp16)
    *value = saccade_fp16_to_float (((const uint16_t *) L->data)[cell_index (L, i, j)]);
  else
    *value = ((const float *) L->data)[cell_index (L, i, j)];
  return TRUE;
}

/* Level @k + 1 from level @k: cell (I, J) = max of the unmasked, non-NaN cells among
 * (2I .. 2I+1, 2J .. 2J+1) of level k; NaN when there are none. */
static gboolean
pool_level (SaccadeLod *lod, int k)
{
  const SaccadeLodLevel *src = &lod->levels[k];
  SaccadeLodLevel *dst = &lod->levels[k + 1];
  gsize n_cells;

  dst->block = src->block * 2;
  dst->rows = (src->rows + 1) / 2;
  dst->cols = (src->cols + 1) / 2;
  dst->fp16 = src->fp16;
  dst->tri = src->tri;
  n_cells = dst->tri ? tri_start (dst->rows) : (gsize) dst->rows * dst->cols;
  lod->owned[k + 1] = g_try_malloc (n_cells * (dst->fp16 ? sizeof (uint16_t) : sizeof (float)));
  if (lod->owned[k + 1] == NULL)
    return FALSE;
  dst->data = lod->owned[k + 1];

  for (int I = 0; I < dst->rows; I++)
    {
      int j_end = lod->causal ? MIN (dst->cols, I + 1) : dst->cols;
      for (int J = 0; J < j_end; J++)
        {
          gboolean any = FALSE;
          int best_key = 0;
          float best = NAN;
          uint16_t best_h = F16_NAN;
          for (int di = 0; di < 2; di++)
            for (int dj = 0; dj < 2; dj++)
              {
                int i = 2 * I + di, j = 2 * J + dj;
                if (i >= src->rows || j >= src->cols || is_masked (lod, i, j))
                  continue;
                if (src->fp16)
                  {
                    uint16_t h = ((const uint16_t *) src->data)[cell_index (src, i, j)];
                    if (f16_is_nan (h) || (any && f16_key (h) <= best_key))
                      continue;
                    best_h = h;
                    best_key = f16_key (h);
                  }
                else
                  {
                    float v = ((const float *) src->data)[cell_index (src, i, j)];
                    if (isnan (v) || (any && v <= best))
                      continue;
                    best = v;
                  }
                any = TRUE;
              }
          if (dst->fp16)
            ((uint16_t *) lod->owned[k + 1])[cell_index (dst, I, J)] = best_h;
          else
            ((float *) lod->owned[k + 1])[cell_index (dst, I, J)] = best;
        }
      /* Masked cells of a full causal level are never read; give them a defined value. */
      if (!dst->tri)
        for (int J = j_end; J < dst->cols; J++)
          ((float *) lod->owned[k + 1])[(gsize) I * dst->cols + J] = NAN;
    }
  return TRUE;
}

static void
compute_stats (SaccadeLod *lod)
{
  const SaccadeLodLevel *L = &lod->levels[0];
  SaccadeLodStats s = { INFINITY, -INFINITY, INFINITY, 0.0 };

  for (int i = 0; i < L->rows; i++)
    {
      int j_end = lod->causal ? MIN (L->cols, i + 1) : L->cols;
      for (int j = 0; j < j_end; j++)
        {
          double v = L->fp16 ? saccade_fp16_to_float (((const uint16_t *) L->data)[cell_index (L, i, j)])
                             : ((const float *) L->data)[cell_index (L, i, j)];
          if (!isfinite (v))
            continue;
          s.lo = MIN (s.lo, v);
          s.hi = MAX (s.hi, v);
          s.max_abs = MAX (s.max_abs, fabs (v));
          if (v > 0)
            s.min_pos = MIN (s.min_pos, v);
        }
    }
  lod->stats = s;
}

/* Passes 2 and 3 over a pyramid whose level 0 is set. Frees @lod and returns NULL when
 * memory runs out. */
static SaccadeLod *
finish_build (SaccadeLod *lod, GError **error)
{
  compute_stats (lod);
  lod->n_levels = 1;
  while (lod->levels[lod->n_levels - 1].rows > 1 || lod->levels[lod->n_levels - 1].cols > 1)
    {
      g_assert (lod->n_levels < LOD_MAX_LEVELS);
      if (!pool_level (lod, lod->n_levels - 1))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "out of memory for level %d of the heatmap pyramid (%d x %d tokens)",
                       lod->n_levels, lod->n_rows, lod->n_cols);
          saccade_lod_unref (lod);
          return NULL;
        }
      lod->n_levels++;
    }
  return lod;
}

static gboolean
check_side (const char *what, int n, GError **error)
{
  if (n >= 1 && n <= LOD_MAX_SIDE)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               "heatmap pyramid: %s %d is outside 1 .. %d", what, n, LOD_MAX_SIDE);
  return FALSE;
}

static SaccadeLod *
lod_alloc (int n_rows, int n_cols, gboolean causal)
{
  SaccadeLod *lod = g_new0 (SaccadeLod, 1);

  g_atomic_ref_count_init (&lod->ref);
  lod->n_rows = n_rows;
  lod->n_cols = n_cols;
  lod->causal = causal;
  return lod;
}

SaccadeLod *
saccade_lod_new_float (const float *values, int n_rows, int n_cols, gboolean causal,
                       GError **error)
{
  SaccadeLod *lod;
  gsize bytes;

  if (!check_side ("rows", n_rows, error) || !check_side ("columns", n_cols, error))
    return NULL;
  g_return_val_if_fail (values != NULL, NULL);
  lod = lod_alloc (n_rows, n_cols, causal);
  lod->exact = TRUE;
  bytes = (gsize) n_rows * n_cols * sizeof (float);
  lod->owned[0] = g_try_malloc (bytes);
  if (lod->owned[0] == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "out of memory for a %d x %d heatmap (%" G_GSIZE_FORMAT " bytes)", n_rows,
                   n_cols, bytes);
      saccade_lod_unref (lod);
      return NULL;
    }
  memcpy (lod->owned[0], values, bytes);
  lod->levels[0] = (SaccadeLodLevel) { .block = 1, .rows = n_rows, .cols = n_cols,
                                       .fp16 = FALSE, .tri = FALSE, .data = lod->owned[0] };
  return finish_build (lod, error);
}

SaccadeLod *
saccade_lod_new_fp16_triangle (GBytes *triangle, int n, GError **error)
{
  SaccadeLod *lod;
  gsize size, want;

  g_return_val_if_fail (triangle != NULL, NULL);
  if (!check_side ("tokens", n, error))
    return NULL;
  size = g_bytes_get_size (triangle);
  want = tri_start (n) * sizeof (uint16_t);
  if (size != want)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "heatmap pyramid: an fp16 triangle of %d tokens is %" G_GSIZE_FORMAT
                   " bytes, this one is %" G_GSIZE_FORMAT, n, want, size);
      return NULL;
    }
  lod = lod_alloc (n, n, TRUE);
  lod->exact = TRUE;
  lod->bytes = g_bytes_ref (triangle);
  lod->levels[0] = (SaccadeLodLevel) { .block = 1, .rows = n, .cols = n, .fp16 = TRUE,
                                       .tri = TRUE, .data = g_bytes_get_data (triangle, NULL) };
  return finish_build (lod, error);
}

static void
build_in_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GBytes *triangle = task_data;
  int n = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (task), "n"));
  GError *error = NULL;
  SaccadeLod *lod = saccade_lod_new_fp16_triangle (triangle, n, &error);

  if (lod == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, lod, (GDestroyNotify) saccade_lod_unref);
}

void
saccade_lod_new_fp16_triangle_async (GBytes *triangle, int n, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_return_if_fail (triangle != NULL);
  g_task_set_source_tag (task, saccade_lod_new_fp16_triangle_async);
  g_task_set_task_data (task, g_bytes_ref (triangle), (GDestroyNotify) g_bytes_unref);
  g_object_set_data (G_OBJECT (task), "n", GINT_TO_POINTER (n));
  g_task_set_return_on_cancel (task, TRUE);
  saccade_background_run (task, build_in_thread);
}

SaccadeLod *
saccade_lod_new_fp16_triangle_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

int
saccade_lod_overview_block (int n, int max_side)
{
  g_return_val_if_fail (n >= 1 && max_side >= 1, 1);
  return (n + max_side - 1) / max_side;
}

SaccadeLod *
saccade_lod_new_overview (const float *cells, int s_rows, int s_cols, int n_rows, int n_cols,
                          gboolean causal, GError **error)
{
  SaccadeLod *lod;
  int b;

  if (!check_side ("rows", n_rows, error) || !check_side ("columns", n_cols, error)
      || !check_side ("overview rows", s_rows, error)
      || !check_side ("overview columns", s_cols, error))
    return NULL;
  g_return_val_if_fail (cells != NULL, NULL);
  b = (n_rows + s_rows - 1) / s_rows;
  if ((n_rows + b - 1) / b != s_rows || (n_cols + b - 1) / b != s_cols)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "heatmap pyramid: a %d x %d overview of a %d x %d head has no common "
                   "block (rows give %d)", s_rows, s_cols, n_rows, n_cols, b);
      return NULL;
    }
  lod = lod_alloc (n_rows, n_cols, causal);
  lod->exact = FALSE;
  lod->owned[0] = g_memdup2 (cells, (gsize) s_rows * s_cols * sizeof (float));
  lod->levels[0] = (SaccadeLodLevel) { .block = b, .rows = s_rows, .cols = s_cols,
                                       .fp16 = FALSE, .tri = FALSE, .data = lod->owned[0] };
  return finish_build (lod, error);
}

/* ------------------------------------------------------------------------------------ */
/* Reading                                                                               */

SaccadeLod *
saccade_lod_ref (SaccadeLod *lod)
{
  g_return_val_if_fail (lod != NULL, NULL);
  g_atomic_ref_count_inc (&lod->ref);
  return lod;
}

void
saccade_lod_unref (SaccadeLod *lod)
{
  if (lod == NULL || !g_atomic_ref_count_dec (&lod->ref))
    return;
  for (int k = 0; k < LOD_MAX_LEVELS; k++)
    g_free (lod->owned[k]);
  g_clear_pointer (&lod->bytes, g_bytes_unref);
  g_free (lod);
}

int
saccade_lod_get_n_rows (const SaccadeLod *lod)
{
  return lod->n_rows;
}

int
saccade_lod_get_n_cols (const SaccadeLod *lod)
{
  return lod->n_cols;
}

gboolean
saccade_lod_is_causal (const SaccadeLod *lod)
{
  return lod->causal;
}

gboolean
saccade_lod_is_exact (const SaccadeLod *lod)
{
  return lod->exact;
}

int
saccade_lod_get_n_levels (const SaccadeLod *lod)
{
  return lod->n_levels;
}

const SaccadeLodLevel *
saccade_lod_get_level (const SaccadeLod *lod, int level)
{
  g_return_val_if_fail (level >= 0 && level < lod->n_levels, NULL);
  return &lod->levels[level];
}

gsize
saccade_lod_get_size (const SaccadeLod *lod)
{
  gsize total = 0;

  for (int k = 0; k < lod->n_levels; k++)
    {
      const SaccadeLodLevel *L = &lod->levels[k];
      gsize cells = L->tri ? tri_start (L->rows) : (gsize) L->rows * L->cols;
      total += cells * (L->fp16 ? sizeof (uint16_t) : sizeof (float));
    }
  return total;
}

void
saccade_lod_get_stats (const SaccadeLod *lod, SaccadeLodStats *stats)
{
  *stats = lod->stats;
}

int
saccade_lod_pick_level (const SaccadeLod *lod, double tokens_per_pixel)
{
  for (int k = 0; k < lod->n_levels; k++)
    if (lod->levels[k].block >= tokens_per_pixel)
      return k;
  return lod->n_levels - 1;
}

gboolean
saccade_lod_find_max (const SaccadeLod *lod, int level, int i, int j, int *row, int *col,
                      float *value, gboolean *exact)
{
  float v, want;

  if (!saccade_lod_level_value (lod, level, i, j, &want) || isnan (want))
    return FALSE;
  /* Descend: one of the (up to) four children holds the parent's value exactly. */
  for (int k = level; k > 0; k--)
    {
      gboolean found = FALSE;
      for (int d = 0; d < 4 && !found; d++)
        {
          int ci = 2 * i + d / 2, cj = 2 * j + d % 2;
          if (saccade_lod_level_value (lod, k - 1, ci, cj, &v) && v == want)
            {
              i = ci;
              j = cj;
              found = TRUE;
            }
        }
      if (!found) /* cannot happen: max pooling copies a child's value into its parent */
        return FALSE;
    }
  *row = i * lod->levels[0].block;
  *col = j * lod->levels[0].block;
  *value = want;
  *exact = lod->exact;
  return TRUE;
}
