/* saccade-adversarial.c — compute or reuse the adversarial attention study of a run
 * (header); its CSV, figure, texts and JSON are studies/saccade-adversarial-outputs.c's. */
#define G_LOG_DOMAIN "saccade-adversarial"

#include "app/core/saccade-adversarial.h"

#include <glib/gi18n.h>
#include <string.h>

void
saccade_adversarial_free (SaccadeAdversarial *a)
{
  if (a == NULL)
    return;
  saccade_study_face_base_clear (&a->base);
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
  if (!saccade_study_read_run_into (db_path, ident, info, run_id, &a->base, error))
    return FALSE;
  if (a->base.n_tokens < 2)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld has %zu tokens: adversarial attention needs two or more"),
                   (long long) run_id, (size_t) a->base.n_tokens);
      return FALSE;
    }
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
  else if (p->row != -1 && p->row != SC_ADV_ALL_ROWS
           && (p->row < 1 || p->row >= a->base.n_tokens))
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                 _("Row %d is outside 1 to %d (row 0 sees a single key: its attention cannot "
                   "move)"), p->row, a->base.n_tokens - 1);
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
                         a->base.run.id, flags, progress, user_data, cancellable, store_warning,
                         error);
  if (s == NULL)
    return FALSE;
  a->result = saccade_study_face_base_take (&a->base, s);
  a->search_seconds = s->seconds;
  return TRUE;
}

static gpointer
adversarial_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                 const char *db_path, gpointer data, SaccadeStudyFlags flags,
                 SaccadeProgress progress, gpointer user_data, GCancellable *cancellable,
                 char **store_warning, GError **error)
{
  const SaccadeStudyGetData *d = data;
  const ScAdvParams *params = d->params;
  const gint64 run_id = d->run_id;
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
  a->base.seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&a);
}

const SaccadeStudyFace saccade_adversarial_face = {
  .kind = &sc_study_kind_adversarial,
  .get = adversarial_get,
  .result_free = (GDestroyNotify) saccade_adversarial_free,
};
