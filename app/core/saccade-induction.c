/* saccade-induction.c — compute or reuse the induction-head detector's result (header). */
#define G_LOG_DOMAIN "saccade-induction"

#include "app/core/saccade-induction.h"

#include <glib/gi18n.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-paths.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-study.h"

static const char *const METRICS[] = { "copying", "duplicate_token", "positive_share",
                                       "prefix_matching", "previous_token" };

void
saccade_induction_free (SaccadeInduction *ind)
{
  if (ind == NULL)
    return;
  sc_induction_result_free (ind->result);
  g_free (ind->copying);
  g_free (ind);
}

static char *
params_json (const ScInductionParams *p)
{
  /* Canonical: fixed key order, no spaces (the store compares the text). */
  return g_strdup_printf ("{\"detector\":%d,\"seq_len\":%d,\"n_seeds\":%d}",
                          SACCADE_INDUCTION_DETECTOR_VERSION, p->seq_len, p->n_seeds);
}

static double *
metric_slot (SaccadeInduction *ind, int i, const char *metric)
{
  if (strcmp (metric, "prefix_matching") == 0)
    return &ind->result->heads[i].prefix_matching;
  if (strcmp (metric, "duplicate_token") == 0)
    return &ind->result->heads[i].duplicate_token;
  if (strcmp (metric, "previous_token") == 0)
    return &ind->result->heads[i].previous_token;
  if (strcmp (metric, "copying") == 0)
    return &ind->copying[i].copying;
  if (strcmp (metric, "positive_share") == 0)
    return &ind->copying[i].positive_share;
  return NULL;
}

/* The head metrics of a stored induction study and their ranges (sc-induction.h): the three
 * attention scores are means of attention weights, in [0, 1]; the copying score is in
 * [-1, 1] and its positive share in [0, 1], both NaN for a head whose OV circuit is zero. */
static const ScStudyValueRule HEAD_RULES[] = {
  { "copying", -1.0 - 1e-9, 1.0 + 1e-9, TRUE },
  { "duplicate_token", 0.0, 1.0 + 1e-9, FALSE },
  { "positive_share", 0.0, 1.0 + 1e-9, TRUE },
  { "prefix_matching", 0.0, 1.0 + 1e-9, FALSE },
  { "previous_token", 0.0, 1.0 + 1e-9, FALSE },
};

/* Fills a result from a stored study, checked as every stored study is (sc-study.h,
 * "Validation"): every head with every metric in range, the loss curve and the ids at each
 * of the 2T (+ a BOS) positions, a loss >= 0 (NaN at position 0, which has no prediction);
 * NULL with @err's message when it does not fit, and the caller recomputes. */
static SaccadeInduction *
from_study (const ScStoreStudyData *d, const ScModelInfo *info, const ScInductionParams *p,
            ScError *err)
{
  g_autoptr (SaccadeInduction) ind = g_new0 (SaccadeInduction, 1);
  const ScStudyValueRule any_loss = { "loss", -DBL_MAX, DBL_MAX, TRUE };
  const ScStudyValueRule id_rule = { "ids", 0.0, (double) info->n_vocab - 1, FALSE };
  const ScStudyValueRule mean_rule = { "loss_mean", 0.0, DBL_MAX, FALSE };
  int n_tokens = 0;
  size_t i;

  if (d->n_layers != (int) info->n_layers || d->n_heads != (int) info->n_heads)
    {
      sc_error_set (err, SC_ERR_FORMAT, "study %lld (induction): its model has %d x %d heads, "
                    "%s %u x %u", (long long) d->id, d->n_layers, d->n_heads, info->name,
                    info->n_layers, info->n_heads);
      return NULL;
    }
  for (i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "ids") == 0)
      n_tokens = MAX (n_tokens, d->series[i].pos + 1);
  if (n_tokens - 2 * p->seq_len < 0 || n_tokens - 2 * p->seq_len > 1)
    {
      sc_error_set (err, SC_ERR_FORMAT, "study %lld (induction): %d tokens, not 2 x %d (+ a "
                    "BOS) as its parameters say", (long long) d->id, n_tokens, p->seq_len);
      return NULL;
    }
  if (sc_study_check_unique (d, err) != SC_OK
      || sc_study_check_heads (d, HEAD_RULES, G_N_ELEMENTS (HEAD_RULES), NULL, err) != SC_OK
      || sc_study_check_series (d, &id_rule, n_tokens, err) != SC_OK
      || sc_study_check_series (d, &mean_rule, 2, err) != SC_OK)
    return NULL;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "ids") == 0 && v->value != floor (v->value))
        {
          sc_error_set (err, SC_ERR_FORMAT, "study %lld (induction): id %g at %d is not a "
                        "token id", (long long) d->id, v->value, v->pos);
          return NULL;
        }
    }
  /* the loss at every position, none past them: NaN at 0 (it predicts nothing), a
   * cross-entropy (>= 0) after */
  if (sc_study_check_series (d, &any_loss, n_tokens, err) != SC_OK)
    return NULL;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "loss") == 0
          && !(v->pos == 0 ? isnan (v->value) : isfinite (v->value) && v->value >= 0))
        {
          sc_error_set (err, SC_ERR_FORMAT, "study %lld (induction): the loss at %d is %g (a "
                        "loss is >= 0, and NaN at position 0)", (long long) d->id, v->pos,
                        v->value);
          return NULL;
        }
    }
  ind->result = sc_induction_result_new (d->n_layers, d->n_heads, p->seq_len, p->n_seeds,
                                         n_tokens - 2 * p->seq_len);
  ind->copying = g_new (ScOvCopying, (gsize) d->n_layers * d->n_heads);
  if (ind->result == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "induction: out of memory");
      return NULL;
    }
  for (i = 0; i < (size_t) d->n_layers * d->n_heads; i++)
    ind->copying[i] = (ScOvCopying) { NAN, NAN };
  for (i = 0; i < d->n_head_values; i++)
    {
      double *slot = metric_slot (ind, d->heads[i].layer * d->n_heads + d->heads[i].head,
                                  d->heads[i].metric);
      if (slot != NULL)
        *slot = d->heads[i].value;
    }
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "loss") == 0)
        ind->result->loss[v->pos] = v->value;
      else if (strcmp (v->series, "ids") == 0)
        ind->result->ids[v->pos] = (int32_t) v->value;
      else if (strcmp (v->series, "loss_mean") == 0)
        *(v->pos == 0 ? &ind->result->loss_first : &ind->result->loss_second) = v->value;
    }
  ind->source.study_id = d->id;
  ind->source.reused = TRUE;
  return g_steal_pointer (&ind);
}

static gboolean
store_result (ScStore *store, const ScStoreModel *m, const char *params,
              SaccadeInduction *ind, ScError *err)
{
  const ScInductionResult *r = ind->result;
  ScStoreStudy *st = NULL;
  int64_t id = 0;
  int i;
  gsize k;

  if (sc_store_study_begin (store, "induction", m, params, &st, err) != SC_OK)
    return FALSE;
  for (i = 0; i < r->n_layers * r->n_heads; i++)
    for (k = 0; k < G_N_ELEMENTS (METRICS); k++)
      if (sc_store_study_add_head (st, i / r->n_heads, i % r->n_heads, METRICS[k],
                                   *metric_slot (ind, i, METRICS[k]), err) != SC_OK)
        goto fail;
  for (i = 0; i < r->n_tokens; i++)
    if (sc_store_study_add_series (st, "loss", i, r->loss[i], err) != SC_OK
        || sc_store_study_add_series (st, "ids", i, r->ids[i], err) != SC_OK)
      goto fail;
  if (sc_store_study_add_series (st, "loss_mean", 0, r->loss_first, err) != SC_OK
      || sc_store_study_add_series (st, "loss_mean", 1, r->loss_second, err) != SC_OK)
    goto fail;
  if (sc_store_study_commit (st, &id, err) != SC_OK)
    return FALSE;
  ind->source.study_id = id;
  return TRUE;
fail:
  sc_store_study_abort (st);
  return FALSE;
}

typedef struct {
  SaccadeProgress progress;
  gpointer user_data;
  GCancellable *cancellable;
} Progress;

static bool
on_progress (void *user, double fraction)
{
  Progress *p = user;
  if (p->progress != NULL)
    p->progress (fraction, p->user_data);
  return !g_cancellable_is_cancelled (p->cancellable);
}

SaccadeInduction *
saccade_induction_get (ScModel *model, const char *model_path, ScSession *session,
                       const char *db_path, const ScInductionParams *params,
                       gboolean recompute, SaccadeProgress progress,
                       gpointer user_data, GCancellable *cancellable, char **store_warning,
                       GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autofree char *pj = params_json (params);
  g_autoptr (SaccadeInduction) ind = NULL;
  ScStoreModel m;
  ScStore *store = NULL;
  ScError err = { 0 };
  Progress prog = { progress, user_data, cancellable };
  gint64 t0;
  gboolean have_id = FALSE;

  if (db_path != NULL && sc_store_model_identify (model, model_path, &m, &err) == SC_OK)
    {
      have_id = TRUE;
      store = saccade_store_open (db_path, TRUE, &err);
      if (store == NULL)
        store = saccade_store_open (db_path, FALSE, NULL); /* read what is there */
    }
  if (store != NULL && !recompute)
    {
      int64_t id = 0;
      ScStoreStudyData *d = NULL;
      ScError refused = { 0 };
      ScStatus st = sc_store_find_study (store, "induction", m.sha256, pj, &id, &refused);
      if (st == SC_OK && sc_store_read_study (store, id, &d, &refused) == SC_OK)
        ind = from_study (d, info, params, &refused);
      sc_store_study_data_free (d);
      if (ind != NULL)
        {
          sc_store_close (store);
          return g_steal_pointer (&ind);
        }
      /* a stored study that lies is said so before it is computed again (issue 25) */
      if (st == SC_OK)
        g_message ("stored induction study %lld is refused (%s); computing it again",
                   (long long) id, refused.message);
    }

  ind = g_new0 (SaccadeInduction, 1);
  t0 = g_get_monotonic_time ();
  if (sc_induction_study_run (session, model, params, on_progress, &prog, &ind->result, &err)
      != SC_OK)
    {
      sc_store_close (store);
      if (err.status == SC_ERR_CANCELLED)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
      else
        saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  ind->copying = g_new (ScOvCopying, (gsize) info->n_layers * info->n_heads);
  if (sc_ov_copying_model (model, ind->copying, &err) != SC_OK)
    {
      sc_store_close (store);
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  ind->source.seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  if (store != NULL && have_id && !store_result (store, &m, pj, ind, &err)
      && store_warning != NULL)
    *store_warning = g_strdup (err.message);
  sc_store_close (store);
  return g_steal_pointer (&ind);
}

typedef struct {
  const SaccadeInduction *ind;
  int key;
} Rank;

static double
rank_value (const Rank *r, int i)
{
  const ScInductionScores *s = &r->ind->result->heads[i];
  const double v = r->key == 0 ? s->prefix_matching : s->previous_token;
  return isnan (v) ? -INFINITY : v;
}

static int
rank_cmp (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const int ia = *(const int *) a, ib = *(const int *) b;
  const double va = rank_value (user_data, ia), vb = rank_value (user_data, ib);
  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

int *
saccade_induction_rank (const SaccadeInduction *ind, int key)
{
  const int n = ind->result->n_layers * ind->result->n_heads;
  int *order = g_new (int, n);
  Rank r = { ind, key };
  int i;

  for (i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, rank_cmp, &r);
  return order;
}

void
saccade_induction_loss_figure (const SaccadeInduction *ind, const char *title,
                               SaccadeLossFigure *f)
{
  const ScInductionResult *r = ind->result;

  *f = (SaccadeLossFigure) {
    .n = r->n_tokens, .values = r->loss, .first_start = MAX (1, r->n_prefix),
    .boundary = r->n_prefix + r->seq_len, .mean_first = r->loss_first,
    .mean_second = r->loss_second,
    /* Translators: the loss curve's value axis. */
    .value_name = _("Loss (nats)"), .title = title,
  };
}

char *
saccade_induction_dup_loss_title (const SaccadeInduction *ind, const char *model_name)
{
  const ScInductionResult *r = ind->result;

  /* Translators: the loss curve's title: model, T and the number of seeds. */
  return g_strdup_printf (_("In-context learning · %s · %d random tokens repeated, %d seeds"),
                          model_name, r->seq_len, r->n_seeds);
}
