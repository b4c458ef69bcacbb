/* saccade-adversarial.c — compute or reuse the adversarial attention study of a run, and
 * turn it into CSV, a figure and its texts (header). */
#define G_LOG_DOMAIN "saccade-adversarial"

#include "app/core/saccade-adversarial.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-csv.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-paths.h"
#include "app/core/saccade-study.h"
#include "engine/analysis/sc-head-distance.h"

/* The reading's thresholds, as shares of the JSD's ceiling ln 2: from half of it the two
 * rows share little mass (J&W read such heads as poor explanations); under a tenth the
 * attention could hardly move without the output following. A reading aid, not a test. */
#define READING_FAR 0.5
#define READING_SOME 0.1

void
saccade_adversarial_free (SaccadeAdversarial *a)
{
  if (a == NULL)
    return;
  sc_store_run_info_clear (&a->run);
  sc_store_tokens_free (a->tokens);
  sc_adv_result_free (a->result);
  g_free (a);
}

void
saccade_adversarial_params_init (ScAdvParams *p)
{
  *p = (ScAdvParams) { .layer = 0, .head = -1, .row = -1, .epsilons = NULL, .n_epsilons = 0,
                       .iterations = SC_ADV_DEFAULT_ITERATIONS, .lr = SC_ADV_DEFAULT_LR,
                       .seed = 0, .base = NULL };
}

/* @p resolved into @a: the epsilons copied (the defaults when NULL), the iterations and the
 * rate defaulted, so that the stored parameters say what was searched. */
static gboolean
resolve_params (SaccadeAdversarial *a, const ScAdvParams *p, GError **error)
{
  const double *e = p->epsilons != NULL ? p->epsilons : SC_ADV_DEFAULT_EPSILONS;
  const int n_e = p->epsilons != NULL ? p->n_epsilons
                                       : (int) G_N_ELEMENTS (SC_ADV_DEFAULT_EPSILONS);

  if (n_e < 1 || n_e > SC_ADV_MAX_EPSILONS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Give 1 to %d values of ε, not %d"), SC_ADV_MAX_EPSILONS, n_e);
      return FALSE;
    }
  for (int k = 0; k < n_e; k++)
    if (!(e[k] > 0 && e[k] <= 1))
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                     _("ε %g is outside (0, 1]: it bounds a total variation distance"), e[k]);
        return FALSE;
      }
  a->params = *p;
  memcpy (a->epsilons, e, (size_t) n_e * sizeof *e);
  a->params.epsilons = a->epsilons;
  a->params.n_epsilons = n_e;
  if (a->params.iterations <= 0)
    a->params.iterations = SC_ADV_DEFAULT_ITERATIONS;
  if (!(a->params.lr > 0))
    a->params.lr = SC_ADV_DEFAULT_LR;
  a->params.base = NULL;
  return TRUE;
}

/* Run @run_id's row and tokens, checked (saccade_study_read_run), and two tokens at least. */
static gboolean
read_run (const char *db_path, gint64 run_id, const ScStoreModel *ident,
          const ScModelInfo *info, SaccadeAdversarial *a, GError **error)
{
  g_autoptr (SaccadeStudyRun) run = saccade_study_read_run_at (db_path, ident, info, run_id,
                                                                error);

  if (run == NULL)
    return FALSE;
  if (run->n_tokens < 2)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld has %zu tokens: adversarial attention needs two or more"),
                   (long long) run_id, (size_t) run->n_tokens);
      return FALSE;
    }
  a->run = run->run;
  memset (&run->run, 0, sizeof run->run);
  a->tokens = g_steal_pointer (&run->tokens);
  a->n_tokens = run->n_tokens;
  return TRUE;
}

/* The layer, head and row against the model and the run, with the user's words (the
 * engine says the same, but the faces should not need to wait for a session). */
static gboolean
check_ranges (const SaccadeAdversarial *a, const ScModelInfo *info, GError **error)
{
  const ScAdvParams *p = &a->params;

  if (p->layer < 0 || p->layer >= (int) info->n_layers)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                 _("Layer %d is outside the model's layers 0 to %u"), p->layer,
                 info->n_layers - 1);
  else if (p->head < -1 || p->head >= (int) info->n_heads)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                 _("Head %d is outside the model's heads 0 to %u"), p->head, info->n_heads - 1);
  else if (p->row != -1 && p->row != SC_ADV_ALL_ROWS && (p->row < 1 || p->row >= a->n_tokens))
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                 _("Row %d is outside 1 to %d (row 0 sees a single key: its attention cannot "
                   "move)"), p->row, a->n_tokens - 1);
  else
    return TRUE;
  return FALSE;
}

/* ------------------------------------------------------------------------------------ */
/* The study                                                                             */

static gboolean
get_study (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
           SaccadeAdversarial *a, SaccadeStudyFlags flags, SaccadeProgress progress,
           gpointer user_data, GCancellable *cancellable, char **store_warning, GError **error)
{
  g_autoptr (SaccadeStudy) s = NULL;

  s = saccade_study_get (&sc_study_kind_adversarial, &a->params, model, ident, session, db_path,
                         a->run.id, flags, progress, user_data, cancellable, store_warning,
                         error);
  if (s == NULL)
    return FALSE;
  if (s->refused != NULL)
    g_message ("adversarial study of run %lld not reused: %s", (long long) a->run.id,
               s->refused);
  a->result = saccade_study_steal_result (s);
  a->reused = s->reused;
  a->study_id = s->study_id;
  a->search_seconds = s->seconds;
  return TRUE;
}

SaccadeAdversarial *
saccade_adversarial_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                         const char *db_path, gint64 run_id, const ScAdvParams *params,
                         SaccadeStudyFlags flags, SaccadeProgress progress,
                         gpointer user_data, GCancellable *cancellable, char **store_warning,
                         GError **error)
{
  g_autoptr (SaccadeAdversarial) a = g_new0 (SaccadeAdversarial, 1);
  const gint64 t0 = g_get_monotonic_time ();
  ScAdvParams defaults;
  const ScModelInfo *info;

  g_return_val_if_fail (model != NULL && ident != NULL, NULL);
  info = sc_model_info (model);
  if (params == NULL)
    {
      saccade_adversarial_params_init (&defaults);
      params = &defaults;
    }
  if (!resolve_params (a, params, error))
    return NULL;
  if (!saccade_study_check_call ("adversarial", db_path, session, flags, error))
    return NULL;
  if (!read_run (db_path, run_id, ident, info, a, error) || !check_ranges (a, info, error))
    return NULL;
  if (!get_study (model, ident, session, db_path, a, flags, progress, user_data, cancellable,
                  store_warning, error))
    return NULL;
  a->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&a);
}

/* ------------------------------------------------------------------------------------ */
/* In a worker                                                                           */

typedef struct {
  gint64 run_id;
  ScAdvParams params;
  double epsilons[SC_ADV_MAX_EPSILONS];  /* params.epsilons points here */
} Job;

static gpointer
adversarial_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
                  const char *db_path, gpointer data, SaccadeStudyFlags flags,
                  SaccadeProgress progress, gpointer progress_data, GCancellable *cancellable,
                  char **store_warning, GError **error)
{
  Job *job = data;

  return saccade_adversarial_get (model, ident, session, db_path, job->run_id, &job->params,
                                  flags, progress, progress_data, cancellable, store_warning,
                                  error);
}

void
saccade_adversarial_async (gpointer source_object, SaccadeLoadedModel *model,
                           const char *db_path, gint64 run_id, const ScAdvParams *params,
                           SaccadeStudyFlags flags, GCancellable *cancellable,
                           SaccadeJobProgress progress, gpointer progress_data,
                           GAsyncReadyCallback callback, gpointer user_data)
{
  Job *job = g_new0 (Job, 1);

  job->run_id = run_id;
  if (params != NULL)
    job->params = *params;
  else
    saccade_adversarial_params_init (&job->params);
  if (job->params.epsilons != NULL)
    {
      job->params.n_epsilons = CLAMP (job->params.n_epsilons, 0, SC_ADV_MAX_EPSILONS);
      memcpy (job->epsilons, job->params.epsilons,
              (size_t) job->params.n_epsilons * sizeof (double));
      job->params.epsilons = job->epsilons;
    }
  job->params.base = NULL;
  saccade_study_job_async (source_object, saccade_adversarial_async, "adversarial", model,
                           db_path, flags, FALSE, adversarial_func, job, g_free,
                           (GDestroyNotify) saccade_adversarial_free, cancellable, progress,
                           progress_data, callback, user_data);
}

SaccadeAdversarial *
saccade_adversarial_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_adversarial_async, error);
}

/* ------------------------------------------------------------------------------------ */
/* Text, CSV, figure                                                                     */

int
saccade_adversarial_widest (const SaccadeAdversarial *a, int *head, int *row, double *out_jsd)
{
  const ScAdvResult *r = a->result;
  const int n = r->n_tokens;
  int best = -1;
  double best_jsd = -1;

  /* the engine labels each distribution with its head and row (a loaded study has none) */
  if (r->adversarial == NULL || r->original == NULL || r->dist_head == NULL || r->n_dists < 1)
    return -1;
  for (int k = 0; k < r->n_dists; k++)
    {
      const double d = sc_jsd (r->original + (size_t) k * n, r->adversarial + (size_t) k * n, n);
      if (d > best_jsd)
        {
          best_jsd = d;
          best = k;
        }
    }
  if (head != NULL)
    *head = r->dist_head[best];
  if (row != NULL)
    *row = r->dist_row[best];
  if (out_jsd != NULL)
    *out_jsd = best_jsd;
  return best;
}

GBytes *
saccade_adversarial_csv (const SaccadeAdversarial *a)
{
  const ScAdvResult *r = a->result;
  GString *s = g_string_new ("epsilon,jsd,jsd_max,tvd\r\n");

  for (int e = 0; e < r->n_epsilons; e++)
    {
      saccade_csv_number (s, r->epsilon[e]);
      saccade_csv_add_number (s, r->jsd[e]);
      saccade_csv_add_number (s, r->jsd_max[e]);
      saccade_csv_add_number (s, r->tvd[e]);
      g_string_append (s, "\r\n");
    }
  return g_string_free_to_bytes (s);
}

char *
saccade_adversarial_label (const SaccadeAdversarial *a, gboolean translated)
{
  const ScAdvResult *r = a->result;

  if (r->head < 0)
    /* Translators: a curve's label in the adversarial attention figure. */
    return g_strdup_printf (translated ? _("layer %d all heads") : "layer %d all heads",
                            r->layer);
  return g_strdup_printf (translated ? _("layer %d head %d") : "layer %d head %d", r->layer,
                          r->head);
}

char *
saccade_adversarial_title (const SaccadeAdversarial *a)
{
  g_autofree char *label = saccade_adversarial_label (a, TRUE);
  g_autofree char *row = NULL;

  if (a->result->row < 0)
    /* Translators: the searched query rows: every row. */
    row = g_strdup (_("all rows"));
  else
    row = g_strdup_printf (_("row %d"), a->result->row);
  /* Translators: the adversarial figure's title: run id, "layer L head H", the row, the
   * Adam steps per ε. */
  return g_strdup_printf (_("Adversarial attention · run %lld · %s · %s · %d iterations"),
                          (long long) a->run.id, label, row, a->params.iterations);
}

char *
saccade_adversarial_reading (const SaccadeAdversarial *a, gboolean translated)
{
  const ScAdvResult *r = a->result;
  const int last = r->n_epsilons - 1;
  const double frac = r->jsd[last] / SACCADE_ADVERSARIAL_JSD_MAX;
  /* Translators: the three judgements of the adversarial reading, strongest move first. */
  const char *far = N_("the attention can move far without changing the output (a weak "
                       "explanation)");
  const char *some = N_("the attention can move some way");
  const char *none = N_("the output depends on this attention");
  const char *judgement = frac >= READING_FAR ? far : frac >= READING_SOME ? some : none;

  if (!translated)
    return g_strdup_printf ("JSD %.3f = %.0f %% of ln 2 = 0.693 (disjoint support) with the "
                            "output within TVD %g: %s", r->jsd[last], 100 * frac,
                            r->epsilon[last], judgement);
  /* Translators: the adversarial study's reading: the JSD reached at the largest ε, the
   * percent of its ceiling ln 2, the ε, then one of the three judgements. */
  return g_strdup_printf (_("JSD %.3f = %.0f %% of ln 2 = 0.693 (disjoint support) with the "
                            "output within TVD %g: %s"), r->jsd[last], 100 * frac,
                          r->epsilon[last], _(judgement));
}

void
saccade_adversarial_figure (const SaccadeAdversarial *a, const char *label,
                            const char *const *labels, const char *title,
                            SaccadeAdvSeries *series, double *original, double *adversarial,
                            SaccadeAdversarialFigure *fig)
{
  const ScAdvResult *r = a->result;
  int head = 0, row = 0;
  const int k = saccade_adversarial_widest (a, &head, &row, NULL);

  *series = (SaccadeAdvSeries) { label, r->n_epsilons, r->epsilon, r->jsd };
  *fig = (SaccadeAdversarialFigure) { .n_series = 1, .series = series, .labels = labels,
                                      .title = title, .n_tokens = 0 };
  if (k < 0)
    return;
  for (int j = 0; j < r->n_tokens; j++)
    {
      original[j] = r->original[(size_t) k * r->n_tokens + j];
      adversarial[j] = r->adversarial[(size_t) k * r->n_tokens + j];
    }
  fig->n_tokens = r->n_tokens;
  fig->original = original;
  fig->adversarial = adversarial;
  fig->rows_head = head;
  fig->rows_row = row;
  fig->rows_epsilon = r->epsilon[r->n_epsilons - 1];
}
