/* saccade-run.c — stored runs for the window: the sidebar's items, a run loaded in full,
 * and the worker-thread jobs that list, load and delete runs (see saccade-run.h).
 *
 * Each job opens its own connection to the store in the worker (read-only to list and load,
 * writable to delete) and closes it before returning, so no ScStore ever crosses threads.
 */
#define G_LOG_DOMAIN "saccade-run"

#include "app/core/saccade-run.h"

#include <glib/gi18n.h>
#include <string.h>

#include <math.h>

#include "engine/store/sc-store.h"
#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-predictions.h"
#include "engine/store/sc-store-scores.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "ui/figures/saccade-token-label.h"
#include "ui/widgets/saccade-background.h"

/* A run whose heads take at most this much as float is loaded whole ("resident"): every
 * page can then use any head at once. 512 MiB is 270 heads (SmolLM2) of ~700 tokens — far
 * beyond a sentence. A longer run keeps its heads in the store and is read a head, or a
 * range of rows, at a time (docs/window.md, "Long runs"): memory then does not grow with
 * the number of heads, only with what is on screen. */
#define RESIDENT_MAX_BYTES ((guint64) 512 << 20)



/* ------------------------------------------------------------------------------------ */
/* SaccadeRun                                                                            */

static void
run_clear (SaccadeRun *run)
{
  g_free (run->text);
  g_free (run->model_name);
  g_free (run->backend);
  g_strfreev (run->labels);
  sc_store_tokens_free (run->tokens);
  g_free (run->db_path);
  g_free (run->heads);
  g_free (run->kept);
  g_free (run->windows);
  g_free (run->head_windows);
  g_free (run->overviews);
  g_free (run->predicted_probs);
  g_strfreev (run->predicted_labels);
  g_strfreev (run->predicted_texts);
  g_free (run->stats);
  for (int m = 0; m < SACCADE_N_METRICS; m++)
    g_free (run->metric_values[m]);
}

SaccadeRun *
saccade_run_ref (SaccadeRun *run)
{
  return g_atomic_rc_box_acquire (run);
}

void
saccade_run_unref (SaccadeRun *run)
{
  if (run != NULL)
    g_atomic_rc_box_release_full (run, (GDestroyNotify) run_clear);
}

const float *
saccade_run_head (const SaccadeRun *run, int layer, int head)
{
  g_return_val_if_fail (layer >= 0 && layer < run->n_layers, NULL);
  g_return_val_if_fail (head >= 0 && head < run->n_heads, NULL);
  if (!run->resident)
    return NULL;
  return run->heads + ((gsize) layer * run->n_heads + head) * run->n * run->n;
}

const float *
saccade_run_layer (const SaccadeRun *run, int layer)
{
  return saccade_run_head (run, layer, 0);
}

gboolean
saccade_run_has_head (const SaccadeRun *run, int layer, int head)
{
  if (layer < 0 || layer >= run->n_layers || head < 0 || head >= run->n_heads)
    return FALSE;
  return run->kept[(gsize) layer * run->n_heads + head] != 0;
}

const float *
saccade_run_overview (const SaccadeRun *run, int layer, int head)
{
  gsize s2 = (gsize) run->overview_size * run->overview_size;

  g_return_val_if_fail (layer >= 0 && layer < run->n_layers, NULL);
  g_return_val_if_fail (head >= 0 && head < run->n_heads, NULL);
  return run->overviews + ((gsize) layer * run->n_heads + head) * s2;
}

int
saccade_run_resident_max_tokens (int n_layers, int n_heads)
{
  double per_token2 = (double) MAX (1, n_layers) * MAX (1, n_heads) * sizeof (float);
  return (int) floor (sqrt ((double) RESIDENT_MAX_BYTES / per_token2));
}

int
saccade_run_group_size (const SaccadeRun *run)
{
  if (run->n_kv_heads <= 0 || run->n_heads % run->n_kv_heads != 0)
    return 1;
  return run->n_heads / run->n_kv_heads;
}

float *
saccade_run_read_rows (const SaccadeRun *run, int layer, int head, int q0, int q1,
                       GCancellable *cancellable, GError **error)
{
  const gsize n = (gsize) run->n;
  g_autofree float *out = NULL;
  ScStore *store = NULL;
  ScError err = { 0 };

  g_return_val_if_fail (layer >= 0 && layer < run->n_layers, NULL);
  g_return_val_if_fail (head >= 0 && head < run->n_heads, NULL);
  g_return_val_if_fail (q0 >= 0 && q0 < q1 && q1 <= run->n, NULL);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if ((out = g_try_new (float, (gsize) (q1 - q0) * n)) == NULL)
    {
      g_autofree char *need = g_format_size ((guint64) (q1 - q0) * n * sizeof (float));
      g_set_error (error, SACCADE_ERROR, SC_ERR_NOMEM, _("Out of memory reading %s of "
                   "layer %d head %d of run %lld"), need, layer, head, (long long) run->id);
      return NULL;
    }
  if (run->resident)
    {
      memcpy (out, saccade_run_head (run, layer, head) + (gsize) q0 * n,
              (gsize) (q1 - q0) * n * sizeof (float));
      return g_steal_pointer (&out);
    }
  if ((store = saccade_store_open (run->db_path, FALSE, &err)) == NULL
      || sc_store_read_head_rows (store, run->id, layer, head, (guint32) q0, (guint32) q1, out,
                                  NULL, &err) != SC_OK)
    {
      sc_store_close (store);
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  sc_store_close (store);
  return g_steal_pointer (&out);
}

GBytes *
saccade_run_read_head_f16 (const SaccadeRun *run, int layer, int head, gboolean *causal,
                           guint *window, GCancellable *cancellable, GError **error)
{
  ScStoreHeadF16 f16 = { 0 };
  ScStore *store;
  ScError err = { 0 };
  GBytes *bytes;

  g_return_val_if_fail (layer >= 0 && layer < run->n_layers, NULL);
  g_return_val_if_fail (head >= 0 && head < run->n_heads, NULL);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if ((store = saccade_store_open (run->db_path, FALSE, &err)) == NULL
      || sc_store_read_head_f16 (store, run->id, layer, head, &f16, &err) != SC_OK)
    {
      sc_store_close (store);
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  sc_store_close (store);
  *causal = f16.causal;
  if (window != NULL)
    *window = f16.window;
  bytes = g_bytes_new_with_free_func (f16.values, f16.n_values * sizeof (uint16_t), free,
                                      f16.values);
  f16.values = NULL; /* the bytes own it now */
  sc_store_head_f16_clear (&f16);
  return bytes;
}

float *
saccade_run_read_head (const SaccadeRun *run, int layer, int head, GCancellable *cancellable,
                       GError **error)
{
  return saccade_run_read_rows (run, layer, head, 0, run->n, cancellable, error);
}

/* ------------------------------------------------------------------------------------ */
/* Metrics                                                                               */

/* The window's metrics are engine head statistics (engine/analysis/sc-head-stats.h); the
 * ids are the engine's, which the GSettings "metric" key stores. */
G_STATIC_ASSERT (SACCADE_N_METRICS == SC_HEAD_N_METRICS);
G_STATIC_ASSERT ((int) SACCADE_METRIC_SINK == (int) SC_HEAD_METRIC_SINK);
G_STATIC_ASSERT ((int) SACCADE_METRIC_PREVIOUS_TOKEN == (int) SC_HEAD_METRIC_PREVIOUS);
G_STATIC_ASSERT ((int) SACCADE_METRIC_LAST_ENTROPY == (int) SC_HEAD_METRIC_LAST_ENTROPY);

static const struct {
  ScHeadMetric head_metric;
  const char *name;  /* N_() marked */
  const char *short_name; /* N_() marked: a table's column */
} metrics[SACCADE_N_METRICS] = {
  [SACCADE_METRIC_ENTROPY] = { SC_HEAD_METRIC_ENTROPY, N_("Entropy (nats)"), N_("Entropy") },
  [SACCADE_METRIC_ENTROPY_NORM] = { SC_HEAD_METRIC_ENTROPY_NORM, N_("Normalised entropy"),
                                    N_("Norm. entropy") },
  [SACCADE_METRIC_DISTANCE] = { SC_HEAD_METRIC_DISTANCE, N_("Mean attention distance (tokens)"),
                                N_("Distance") },
  [SACCADE_METRIC_CONFIDENCE] = { SC_HEAD_METRIC_CONFIDENCE, N_("Confidence (max weight)"),
                                  N_("Confidence") },
  [SACCADE_METRIC_SINK] = { SC_HEAD_METRIC_SINK, N_("Sink mass"), N_("Sink") },
  [SACCADE_METRIC_SINK_K] = { SC_HEAD_METRIC_SINK_K, N_("Sink mass, first 4 tokens"),
                              N_("Sink (4)") },
  [SACCADE_METRIC_PREVIOUS_TOKEN] = { SC_HEAD_METRIC_PREVIOUS, N_("Previous-token score"),
                                      N_("Previous") },
  [SACCADE_METRIC_SELF] = { SC_HEAD_METRIC_SELF, N_("Self mass"), N_("Self") },
  [SACCADE_METRIC_LAST_ENTROPY] = { SC_HEAD_METRIC_LAST_ENTROPY,
                                    N_("Entropy of the last row (nats)"), N_("Last entropy") },
};

const char *
saccade_metric_id (SaccadeMetric metric)
{
  return sc_head_metric_id (metrics[(guint) metric < SACCADE_N_METRICS ? metric : 0].head_metric);
}

const char *
saccade_metric_name (SaccadeMetric metric)
{
  return _((guint) metric < SACCADE_N_METRICS ? metrics[metric].name : metrics[0].name);
}

const char *
saccade_metric_short_name (SaccadeMetric metric)
{
  return _((guint) metric < SACCADE_N_METRICS ? metrics[metric].short_name
                                              : metrics[0].short_name);
}

gboolean
saccade_metric_from_id (const char *id, SaccadeMetric *out)
{
  guint i;

  for (i = 0; id != NULL && i < SACCADE_N_METRICS; i++)
    if (g_str_equal (id, sc_head_metric_id (metrics[i].head_metric)))
      {
        *out = (SaccadeMetric) i;
        return TRUE;
      }
  return FALSE;
}

const double *
saccade_run_metric (const SaccadeRun *run, SaccadeMetric metric)
{
  return run->metric_values[(guint) metric < SACCADE_N_METRICS ? metric : 0];
}

/* ------------------------------------------------------------------------------------ */
/* Jobs                                                                                  */

typedef struct {
  char *db_path;
  gint64 run_id;
} JobData;

static void
job_data_free (JobData *d)
{
  g_free (d->db_path);
  g_free (d);
}

/* Every job of this file: a task tagged @tag (its _async function) whose data is the
 * store's path and the run's id, run in a worker by @thread. */
static void
job_run (gpointer source_object, const char *db_path, gint64 run_id, gpointer tag,
         GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data,
         GTaskThreadFunc thread)
{
  g_autoptr (GTask) task = g_task_new (source_object, cancellable, callback, user_data);
  JobData *d = g_new0 (JobData, 1);

  d->db_path = g_strdup (db_path);
  d->run_id = run_id;
  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, d, (GDestroyNotify) job_data_free);
  saccade_background_run (task, thread);
}

static void
return_sc_error (GTask *task, const ScError *err)
{
  GError *error = NULL;

  saccade_set_error_from_sc (&error, err);
  g_task_return_error (task, error);
}

static void
list_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  JobData *d = task_data;
  g_autoptr (GListStore) list = g_list_store_new (SACCADE_TYPE_RUN_ITEM);
  ScStoreRunInfo *runs = NULL;
  ScStore *store;
  ScError err = { 0 };
  size_t n = 0, i;

  if (!g_file_test (d->db_path, G_FILE_TEST_EXISTS))
    {
      g_task_return_pointer (task, g_steal_pointer (&list), g_object_unref);
      return;
    }
  if ((store = saccade_store_open (d->db_path, FALSE, &err)) == NULL)
    {
      return_sc_error (task, &err);
      return;
    }
  if (sc_store_list_runs (store, &runs, &n, &err) != SC_OK)
    {
      sc_store_close (store);
      return_sc_error (task, &err);
      return;
    }
  for (i = n; i > 0; i--)
    {
      g_autoptr (SaccadeRunItem) item = saccade_run_item_new (&runs[i - 1]);
      g_list_store_append (list, item);
    }
  sc_store_run_list_free (runs, n);
  sc_store_close (store);
  g_task_return_pointer (task, g_steal_pointer (&list), g_object_unref);
}

void
saccade_run_list_async (gpointer source_object, const char *db_path, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  job_run (source_object, db_path, 0, saccade_run_list_async, cancellable, callback,
           user_data, list_thread);
}

GListStore *
saccade_run_list_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
fill_metric_values (SaccadeRun *run)
{
  for (int m = 0; m < SACCADE_N_METRICS; m++)
    {
      gsize k, nh = (gsize) run->n_layers * run->n_heads;
      run->metric_values[m] = g_new (double, nh);
      for (k = 0; k < nh; k++)
        run->metric_values[m][k] = run->kept[k]
                                     ? sc_head_stats_get (&run->stats[k], metrics[m].head_metric)
                                     : NAN; /* a head the run did not keep */
    }
}

/* Reads every head of the run into @run and computes the metrics; FALSE with @err set. */
static gboolean
load_heads (ScStore *store, SaccadeRun *run, GCancellable *cancellable, ScError *err)
{
  SaccadeHeadStatsTable sum = { 0 };
  gsize n2 = (gsize) run->n * run->n;
  int l, h;

  saccade_head_stats_table_init (&sum, run->n_layers, run->n_heads);
  run->causal = TRUE;
  run->head_windows = g_new0 (guint, (gsize) run->n_layers * run->n_heads);
  for (l = 0; l < run->n_layers; l++)
    for (h = 0; h < run->n_heads; h++)
      {
        ScStoreHead head = { 0 };
        float *dst = run->heads + ((gsize) l * run->n_heads + h) * n2;

        if (g_cancellable_is_cancelled (cancellable))
          {
            sc_error_set (err, SC_ERR_CANCELLED, "cancelled");
            saccade_head_stats_table_clear (&sum);
            return FALSE;
          }
        if (!saccade_run_has_head (run, l, h))
          {
            memset (dst, 0, n2 * sizeof (float));
            continue;
          }
        if (sc_store_read_head (store, run->id, l, h, &head, err) != SC_OK)
          {
            saccade_head_stats_table_clear (&sum);
            return FALSE;
          }
        if (head.n_query != (guint32) run->n || head.n_key != (guint32) run->n)
          {
            sc_error_set (err, SC_ERR_FORMAT,
                          "%s: run %" G_GINT64_FORMAT " layer %d head %d is %ux%u, not %dx%d",
                          sc_store_path (store), run->id, l, h, head.n_query, head.n_key,
                          run->n, run->n);
            sc_store_head_clear (&head);
            saccade_head_stats_table_clear (&sum);
            return FALSE;
          }
        memcpy (dst, head.probs, n2 * sizeof (float));
        run->causal = run->causal && head.causal;
        run->head_windows[(gsize) l * run->n_heads + h] = head.window;
        saccade_head_stats_table_observe (&sum, l, h, dst, run->n, run->n);
        sc_store_head_clear (&head);
      }
  run->stats = g_steal_pointer (&sum.stats);
  fill_metric_values (run);
  saccade_head_stats_table_clear (&sum);
  return TRUE;
}

/* A long run's statistics: those the capture stored (head_scores), computed from the
 * stored heads one at a time only for a run stored before they were. */
static gboolean
load_scores (ScStore *store, SaccadeRun *run, ScError *err)
{
  ScStoreHeadScores scores = { 0 };

  if (sc_store_read_head_scores (store, run->id, &scores, err) != SC_OK)
    return FALSE;
  if (scores.n_layers != (guint32) run->n_layers || scores.n_heads != (guint32) run->n_heads)
    {
      sc_error_set (err, SC_ERR_FORMAT, "%s: run %" G_GINT64_FORMAT "'s scores are for %u x "
                    "%u heads, not %d x %d", sc_store_path (store), run->id, scores.n_layers,
                    scores.n_heads, run->n_layers, run->n_heads);
      sc_store_head_scores_clear (&scores);
      return FALSE;
    }
  run->stats = g_steal_pointer (&scores.stats);
  run->causal = TRUE; /* checked with each head as it is read (saccade_run_read_rows) */
  fill_metric_values (run);
  sc_store_head_scores_clear (&scores);
  return TRUE;
}

guint
saccade_run_layer_window (const SaccadeRun *run, int layer)
{
  if (run->windows == NULL || layer < 0 || layer >= run->n_layers)
    return 0;
  return run->windows[layer];
}

guint
saccade_run_head_window (const SaccadeRun *run, int layer, int head)
{
  guint w = saccade_run_layer_window (run, layer);

  if (w == 0 || head < 0 || head >= run->n_heads)
    return 0;
  if (run->head_windows != NULL)
    return run->head_windows[(gsize) layer * run->n_heads + head];
  return (guint) run->n > w ? w : 0;
}

int
saccade_head_overview_block (int n)
{
  return (int) sc_store_overview_block ((uint32_t) MAX (n, 1));
}

int
saccade_head_overview_size (int n)
{
  return (int) sc_store_overview_size ((uint32_t) MAX (n, 1));
}

void
saccade_head_overview (const float *a, int n, int row0, int col0, gboolean causal, guint window,
                       float *out)
{
  const int b = saccade_head_overview_block (n), s = saccade_head_overview_size (n);

  for (int br = 0; br < s; br++)
    {
      int r0 = br * b, r1 = MIN (n, r0 + b);
      for (int bc = 0; bc < s; bc++)
        {
          int c0 = bc * b, c1 = MIN (n, c0 + b);
          float max = 0;
          if ((causal && col0 + c0 > row0 + r1 - 1)
              || (window > 0 && (gint64) col0 + c1 - 1 + window <= (gint64) row0 + r0))
            {
              out[br * s + bc] = NAN;
              continue;
            }
          for (int r = r0; r < r1; r++)
            for (int c = c0; c < c1; c++)
              max = MAX (max, a[(gsize) r * n + c]);
          out[br * s + bc] = max;
        }
    }
}

/* What the model predicted after each position, with display labels for the tokens. */
static gboolean
load_predictions (ScStore *store, SaccadeRun *run, ScError *err)
{
  ScStorePredictions p = { 0 };
  gsize n;

  if (sc_store_read_predictions (store, run->id, &p, err) != SC_OK)
    return FALSE;
  if (p.n_positions == 0)
    return TRUE;
  n = (gsize) p.n_positions * p.k;
  run->n_predictions = (int) p.n_positions;
  run->k_predictions = (int) p.k;
  run->predicted_probs = g_memdup2 (p.probs, n * sizeof (double));
  run->predicted_labels = g_new0 (char *, n + 1);
  run->predicted_texts = g_new0 (char *, n + 1);
  for (gsize i = 0; i < n; i++)
    {
      const char *piece = (const char *) p.pieces[i].piece;
      run->predicted_labels[i] = saccade_token_label (piece, p.pieces[i].len);
      run->predicted_texts[i] = g_utf8_validate_len (piece, p.pieces[i].len, NULL)
                                    && memchr (piece, '\0', p.pieces[i].len) == NULL
                                  ? g_strndup (piece, p.pieces[i].len) : g_strdup ("");
    }
  sc_store_predictions_clear (&p);
  return TRUE;
}

/* Each kept head's overview, as the capture stored it (computed from the head for a run
 * stored before overviews existed); a head the run did not keep is all NaN (masked). */
static gboolean
load_overviews (ScStore *store, SaccadeRun *run, GCancellable *cancellable, ScError *err)
{
  int s = saccade_head_overview_size (run->n);
  gsize s2 = (gsize) s * s;

  run->overview_size = s;
  run->overviews = g_new (float, (gsize) run->n_layers * run->n_heads * s2);
  for (int l = 0; l < run->n_layers; l++)
    for (int h = 0; h < run->n_heads; h++)
      {
        float *dst = run->overviews + ((gsize) l * run->n_heads + h) * s2;
        ScStoreOverview ov = { 0 };

        if (g_cancellable_is_cancelled (cancellable))
          {
            sc_error_set (err, SC_ERR_CANCELLED, "cancelled");
            return FALSE;
          }
        if (!saccade_run_has_head (run, l, h))
          {
            for (gsize k = 0; k < s2; k++)
              dst[k] = NAN;
            continue;
          }
        if (sc_store_read_overview (store, run->id, l, h, &ov, err) != SC_OK)
          return FALSE;
        if (ov.size != (guint32) s)
          {
            sc_error_set (err, SC_ERR_FORMAT, "%s: run %" G_GINT64_FORMAT " layer %d head %d: "
                          "an overview of %u cells a side, not %d", sc_store_path (store),
                          run->id, l, h, ov.size, s);
            sc_store_overview_clear (&ov);
            return FALSE;
          }
        for (guint32 a = 0; a < ov.size; a++)
          for (guint32 b = 0; b < ov.size; b++)
            dst[a * s + b] = sc_store_overview_masked (&ov, a, b) ? NAN
                                                                  : ov.values[a * ov.size + b];
        sc_store_overview_clear (&ov);
      }
  return TRUE;
}

SaccadeRun *
saccade_run_load (const char *db_path, gint64 run_id, GCancellable *cancellable, GError **error)
{
  g_autoptr (SaccadeRun) run = g_atomic_rc_box_new0 (SaccadeRun);
  ScStoreRunInfo info = { 0 };
  ScStoreToken *tokens = NULL;
  ScStore *store = NULL;
  ScError err = { 0 };
  size_t n_tokens = 0;
  guint64 bytes;

  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    goto fail;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    goto out;
  if (sc_store_get_run (store, run_id, &info, &err) != SC_OK
      || sc_store_read_tokens (store, run_id, &tokens, &n_tokens, &err) != SC_OK)
    goto fail;
  if (n_tokens != info.n_tokens || n_tokens == 0 || info.n_layers == 0 || info.n_heads == 0)
    {
      sc_error_set (&err, SC_ERR_FORMAT, "%s: run %" G_GINT64_FORMAT " has %zu tokens stored "
                    "for %u announced, %u layers, %u heads", db_path, run_id, n_tokens,
                    info.n_tokens, info.n_layers, info.n_heads);
      goto fail;
    }
  bytes = (guint64) info.n_layers * info.n_heads * n_tokens * n_tokens * sizeof (float);

  run->id = info.id;
  run->db_path = g_strdup (db_path);
  run->text = saccade_format_one_line (info.text, info.text_len);
  run->model_name = g_strdup (info.model_name);
  memcpy (run->model_sha256, info.model_sha256, sizeof run->model_sha256);
  run->backend = g_strdup (info.backend);
  run->n_layers = (int) info.n_layers;
  run->n_heads = (int) info.n_heads;
  run->n_kv_heads = (int) info.n_kv_heads;
  run->n = (int) n_tokens;
  run->attention_bytes = info.attention_bytes;
  run->forward_s = info.forward_s;
  /* Labels of the whole sequence, so that a character split across byte tokens is named
   * on each of its pieces. */
  run->labels = saccade_token_labels_for_store (tokens, n_tokens);
  run->tokens = g_steal_pointer (&tokens);
  run->kept = g_new (guint8, (gsize) run->n_layers * run->n_heads);
  for (int l = 0; l < run->n_layers; l++)
    for (int h = 0; h < run->n_heads; h++)
      run->kept[(gsize) l * run->n_heads + h] = sc_store_run_has_head (&info, l, h);
  run->n_kept = (int) info.n_kept;
  run->sparse_eps = info.sparse_eps;
  run->round_bits = info.round_bits;
  run->zero_below = info.zero_below;
  if (info.windows != NULL)
    {
      run->windows = g_new (guint, (gsize) run->n_layers);
      for (int l = 0; l < run->n_layers; l++)
        run->windows[l] = sc_store_run_layer_window (&info, l);
    }
  run->resident = bytes <= RESIDENT_MAX_BYTES;
  if (run->resident)
    {
      run->heads = g_try_malloc (bytes);
      if (run->heads == NULL)
        {
          sc_error_set (&err, SC_ERR_NOMEM, "out of memory loading run %" G_GINT64_FORMAT,
                        run_id);
          goto fail;
        }
      if (!load_heads (store, run, cancellable, &err))
        goto fail;
    }
  else if (!load_scores (store, run, &err))
    goto fail;
  if (!load_overviews (store, run, cancellable, &err) || !load_predictions (store, run, &err))
    goto fail;
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  return g_steal_pointer (&run);

fail:
  saccade_set_error_from_sc_cancel (error, &err);
out:
  sc_store_tokens_free (tokens);
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  return NULL;
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  JobData *d = task_data;
  GError *error = NULL;
  SaccadeRun *run = saccade_run_load (d->db_path, d->run_id, cancellable, &error);

  if (run != NULL)
    g_task_return_pointer (task, run, (GDestroyNotify) saccade_run_unref);
  else
    g_task_return_error (task, error);
}

void
saccade_run_load_async (gpointer source_object, const char *db_path, gint64 run_id,
                        GCancellable *cancellable, GAsyncReadyCallback callback,
                        gpointer user_data)
{
  job_run (source_object, db_path, run_id, saccade_run_load_async, cancellable, callback,
           user_data, load_thread);
}

SaccadeRun *
saccade_run_load_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
delete_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  JobData *d = task_data;
  ScError err = { 0 };
  ScStore *store;

  if ((store = saccade_store_open (d->db_path, TRUE, &err)) == NULL)
    {
      return_sc_error (task, &err);
      return;
    }
  if (sc_store_delete_run (store, d->run_id, &err) != SC_OK)
    return_sc_error (task, &err);
  else
    g_task_return_boolean (task, TRUE);
  sc_store_close (store);
}

void
saccade_run_delete_async (gpointer source_object, const char *db_path, gint64 run_id,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  job_run (source_object, db_path, run_id, saccade_run_delete_async, cancellable, callback,
           user_data, delete_thread);
}

gboolean
saccade_run_delete_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
