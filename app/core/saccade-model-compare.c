/* saccade-model-compare.c — two models side by side (see saccade-model-compare.h). */
#define G_LOG_DOMAIN "saccade-core"

#include "app/core/saccade-model-compare.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "engine/analysis/sc-head-distance.h"
#include "engine/core/sc-sha256.h"
#include "engine/store/sc-store.h"

/* Shares of the progress bar: loading and running both models are quick; the two
 * detectors dominate when they are not stored; the matrix is last. */
#define SHARE_LOAD 0.05
#define SHARE_FORWARD 0.05
#define SHARE_INDUCTION 0.35
#define SHARE_MATRIX (1.0 - 2 * (SHARE_LOAD + SHARE_FORWARD + SHARE_INDUCTION))

static void
side_clear (SaccadeModelSide *s)
{
  g_free (s->path);
  g_free (s->name);
  g_free (s->ids);
  g_strfreev (s->labels);
  g_free (s->stats);
  saccade_induction_free (s->induction);
  g_free (s->flags);
  g_free (s->types);
  saccade_ablation_free (s->ablation);
  g_free (s->induction_warning);
}

void
saccade_model_compare_free (SaccadeModelCompare *c)
{
  if (c == NULL)
    return;
  for (int i = 0; i < 2; i++)
    side_clear (&c->side[i]);
  g_free (c->cross);
  g_free (c->nearest);
  g_free (c);
}

const char *
saccade_head_type_name (ScHeadType type)
{
  switch (type)
    {
    case SC_HEAD_TYPE_INDUCTION: return _("Induction");
    case SC_HEAD_TYPE_PREVIOUS: return _("Previous token");
    case SC_HEAD_TYPE_SINK: return _("First token");
    case SC_HEAD_TYPE_BROAD: return _("Broad");
    case SC_HEAD_TYPE_LOCAL: return _("Local");
    case SC_HEAD_TYPE_OTHER: return _("Other");
    case SC_HEAD_N_TYPES:
    default: return "";
    }
}

double
saccade_model_side_depth (const SaccadeModelSide *side, int layer)
{
  return (double) layer / side->n_layers;
}

/* ------------------------------------------------------------------------------------ */
/* One model                                                                             */

/* What one side holds while it is computed. */
typedef struct {
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
  float *heads;                 /* (n_layers * n_heads, n, n) when kept for the matrix */
  SaccadeHeadStatsTable table;
} Work;

static void
work_clear (Work *w)
{
  sc_session_free (w->session);
  sc_backend_free (w->backend);
  sc_model_free (w->model);
  g_free (w->heads);
  saccade_head_stats_table_clear (&w->table);
}

typedef struct {
  Work *w;
  int n;
  GCancellable *cancellable;
} Observe;

static bool
observe_head (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Observe *o = user;

  saccade_head_stats_table_observe (&o->w->table, layer, head, probs, n_q, n_k);
  if (o->w->heads != NULL && n_q == o->n && n_k == o->n)
    memcpy (o->w->heads + ((gsize) layer * o->w->table.n_heads + head) * o->n * o->n, probs,
            (gsize) o->n * o->n * sizeof (float));
  return !g_cancellable_is_cancelled (o->cancellable);
}

/* Loads side @i's model and tokenizes the text. */
static gboolean
side_load (SaccadeModelSide *s, Work *w, char which, const char *path, const char *text,
           gssize len, int threads, const char *backend, GError **error)
{
  const ScModelInfo *in;
  g_autoptr (GArray) ids = NULL;
  ScStoreToken *pieces = NULL;
  ScError err = { 0 };

  s->path = g_strdup (path);
  if ((w->model = saccade_model_load (path, threads, error)) == NULL
      || (ids = saccade_tokenize (w->model, text, len, TRUE, error)) == NULL)
    goto fail;
  in = sc_model_info (w->model);
  s->name = g_strdup (in->name[0] != '\0' ? in->name : path);
  s->n_layers = (int) in->n_layers;
  s->n_heads = (int) in->n_heads;
  s->n_kv_heads = (int) in->n_kv_heads;
  if (ids->len == 0)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG, "the text has no tokens");
      goto fail;
    }
  if (ids->len > in->n_ctx_train)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_RANGE, "the text is %u tokens, longer than "
                   "the model's context (%u)", ids->len, in->n_ctx_train);
      goto fail;
    }
  s->n_tokens = (int) ids->len;
  s->ids = g_memdup2 (ids->data, (gsize) ids->len * sizeof (int32_t));
  if (sc_store_tokens_from_ids (sc_model_tokenizer (w->model), s->ids, ids->len, &pieces, &err)
      != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      goto fail;
    }
  s->labels = saccade_token_labels_for_store (pieces, ids->len);
  sc_store_tokens_free (pieces);
  if ((w->backend = saccade_backend_new (backend, threads, 0, NULL, error)) == NULL)
    goto fail;
  if (sc_session_new (w->model, w->backend, &w->session, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      goto fail;
    }
  return TRUE;

fail:
  g_prefix_error (error, "model %c (%s): ", which, path);
  return FALSE;
}

/* The forward pass: every head's statistics, and the heads themselves with @keep. */
static gboolean
side_forward (SaccadeModelSide *s, Work *w, gboolean keep, GCancellable *cancellable,
              GError **error)
{
  const gsize nh = (gsize) s->n_layers * s->n_heads, nn = (gsize) s->n_tokens * s->n_tokens;
  Observe o = { w, s->n_tokens, cancellable };
  ScObserver obs = { .observe = observe_head, .user = &o };
  ScForwardOptions fo = { .observer = &obs };
  g_autofree float *logits = g_new (float, sc_model_info (w->model)->n_vocab);
  ScError err = { 0 };

  saccade_head_stats_table_init (&w->table, s->n_layers, s->n_heads);
  if (keep && (w->heads = g_try_malloc_n (nh * nn, sizeof (float))) == NULL)
    keep = FALSE; /* no matrix rather than no answer */
  if (sc_forward (w->session, s->ids, s->n_tokens, &fo, logits, &err) != SC_OK)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  s->stats = g_memdup2 (w->table.stats, nh * sizeof (ScHeadStats));
  return TRUE;
}

/* Each stage of the comparison is a part of one progress bar. */
typedef SaccadeProgressPart Stage;

static void
stage_report (Stage *st, double fraction)
{
  saccade_progress_part_report (fraction, st);
}

/* Every head's type, and the count of each. */
static void
side_types (SaccadeModelSide *s, const ScHeadTypeThresholds *t)
{
  const int nh = s->n_layers * s->n_heads;
  const ScInductionResult *r = s->induction->result;

  s->flags = g_new (unsigned, nh);
  s->types = g_new (ScHeadType, nh);
  memset (s->counts, 0, sizeof s->counts);
  for (int i = 0; i < nh; i++)
    {
      s->flags[i] = sc_head_type_flags (&s->stats[i], &r->heads[i], t);
      s->types[i] = sc_head_type_from_flags (s->flags[i]);
      s->counts[s->types[i]]++;
    }
}

/* The zero-ablation head sweep of a stored run of this model file (@ident, @s->sha256) with
 * exactly this text (the newest, when several are); NULL when there is none or no
 * database. A store that cannot be read is not an error here: the comparison goes on
 * without the ablation. */
static gint
cmp_id_desc (gconstpointer a, gconstpointer b)
{
  const gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x < y) - (x > y);
}

static SaccadeAblation *
side_find_ablation (SaccadeModelSide *s, Work *w, const ScStoreModel *ident,
                    const char *db_path, const char *text, gsize len, GCancellable *cancellable)
{
  ScStore *store;
  ScStoreRunInfo *runs = NULL;
  size_t n_runs = 0;
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  SaccadeAblation *found = NULL;
  ScError err = { 0 };

  if (db_path == NULL || !g_file_test (db_path, G_FILE_TEST_EXISTS)
      || (store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    return NULL;
  if (sc_store_list_runs (store, &runs, &n_runs, &err) != SC_OK)
    n_runs = 0;
  sc_store_close (store);
  for (size_t k = 0; k < n_runs; k++)
    {
      const ScStoreRunInfo *r = &runs[k];
      if (strcmp (r->model_sha256, s->sha256) == 0 && r->n_tokens == (uint32_t) s->n_tokens
          && !r->text_truncated && r->text_len == len && memcmp (r->text, text, len) == 0)
        g_array_append_val (ids, r->id);
      sc_store_run_info_clear (&runs[k]);
    }
  g_free (runs);
  g_array_sort (ids, cmp_id_desc); /* the newest run first */
  for (guint k = 0; k < ids->len && found == NULL; k++)
    {
      g_autoptr (GError) error = NULL;
      found = saccade_ablation_get (w->model, ident, NULL, db_path,
                                    g_array_index (ids, gint64, k), SACCADE_ABLATION_HEADS,
                                    NULL, SACCADE_STUDY_STORED_ONLY, NULL, NULL, cancellable,
                                    NULL, &error);
    }
  return found;
}

/* ------------------------------------------------------------------------------------ */
/* Both                                                                                  */

/* The (nA, nB) block of the distance matrix of every head of both models, and each A
 * head's nearest B head (the lowest index on ties). */
static gboolean
compute_cross (SaccadeModelCompare *c, Work *w, int threads, Stage *stage,
               GCancellable *cancellable, GError **error)
{
  const int na = c->side[0].n_layers * c->side[0].n_heads;
  const int nb = c->side[1].n_layers * c->side[1].n_heads, nt = na + nb;
  const int n = c->side[0].n_tokens;
  const gsize nn = (gsize) n * n;
  g_autofree const float **heads = g_new (const float *, nt);
  g_autofree double *all = g_try_malloc_n ((gsize) nt * nt, sizeof (double));
  ScError err = { 0 };

  if (all == NULL)
    return TRUE; /* no matrix rather than no answer */
  for (int i = 0; i < na; i++)
    heads[i] = w[0].heads + (gsize) i * nn;
  for (int j = 0; j < nb; j++)
    heads[na + j] = w[1].heads + (gsize) j * nn;
  if (sc_head_distance_matrix (heads, nt, n, n, threads, saccade_progress_part_count, stage,
                               all, &err)
      != SC_OK)
    {
      if (!g_cancellable_set_error_if_cancelled (cancellable, error))
        saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  c->cross = g_new (double, (gsize) na * nb);
  c->nearest = g_new (int, na);
  for (int i = 0; i < na; i++)
    {
      c->nearest[i] = 0;
      for (int j = 0; j < nb; j++)
        {
          c->cross[(gsize) i * nb + j] = all[(gsize) i * nt + na + j];
          if (c->cross[(gsize) i * nb + j] < c->cross[(gsize) i * nb + c->nearest[i]])
            c->nearest[i] = j;
        }
    }
  return TRUE;
}

static gboolean
same_ids (const SaccadeModelSide *a, const SaccadeModelSide *b)
{
  return a->n_tokens == b->n_tokens
         && memcmp (a->ids, b->ids, (gsize) a->n_tokens * sizeof (int32_t)) == 0;
}

SaccadeModelCompare *
saccade_model_compare_compute (const char *path_a, const char *path_b, const char *text,
                               gssize len, const char *db_path,
                               const ScInductionParams *induction, int threads,
                               const char *backend,
                               SaccadeProgress progress, gpointer user_data,
                               GCancellable *cancellable, GError **error)
{
  g_autoptr (SaccadeModelCompare) c = g_new0 (SaccadeModelCompare, 1);
  const char *paths[2] = { path_a, path_b };
  const ScInductionParams defaults = { SC_INDUCTION_DEFAULT_LEN, SC_INDUCTION_DEFAULT_SEEDS };
  Work w[2] = { { 0 } };
  Stage stage = { progress, user_data, cancellable, 0, SHARE_LOAD };
  gboolean keep, ok = FALSE;
  const gint64 t0 = g_get_monotonic_time ();

  if (len < 0)
    len = text != NULL ? (gssize) strlen (text) : 0;
  if (text == NULL || len == 0)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "no text to compare the models on: the text is empty");
      return NULL;
    }
  const gboolean use_defaults = induction == NULL;

  if (induction == NULL)
    induction = &defaults;
  sc_head_type_thresholds_default (&c->thresholds);
  for (int i = 0; i < 2; i++)
    {
      if (!side_load (&c->side[i], &w[i], (char) ('A' + i), paths[i], text, len, threads, backend,
                      error))
        goto out;
      stage_report (&stage, 1.0);
      stage.base += SHARE_LOAD;
    }
  c->same_tokens = same_ids (&c->side[0], &c->side[1]);
  c->matrix_too_long = c->same_tokens
                       && c->side[0].n_tokens > SACCADE_MODEL_COMPARE_MATRIX_MAX_TOKENS;
  keep = c->same_tokens && !c->matrix_too_long;
  for (int i = 0; i < 2; i++)
    {
      SaccadeModelSide *s = &c->side[i];
      ScStoreModel ident = { 0 };
      ScError err = { 0 };

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        goto out;
      stage.span = SHARE_FORWARD;
      if (!side_forward (s, &w[i], keep, cancellable, error))
        {
          g_prefix_error (error, "model %c (%s): ", 'A' + i, s->path);
          goto out;
        }
      stage_report (&stage, 1.0);
      stage.base += SHARE_FORWARD;
      stage.span = SHARE_INDUCTION;
      {
        ScInductionParams p = *induction;
        const int n_ctx = (int) sc_model_info (w[i].model)->n_ctx_train;
        /* The defaults shortened to fit a small context (BOS + 2T <= n_ctx); given
         * parameters are used as given (and refused by the detector if too long). */
        if (use_defaults && 1 + 2 * p.seq_len > n_ctx)
          p.seq_len = MAX (2, (n_ctx - 1) / 2);
        s->induction = saccade_induction_get (w[i].model, s->path, w[i].session, db_path, &p,
                                              FALSE, saccade_progress_part_report, &stage, cancellable,
                                              &s->induction_warning, error);
      }
      if (s->induction == NULL)
        {
          if (!g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            g_prefix_error (error, "model %c (%s): ", 'A' + i, s->path);
          goto out;
        }
      stage.base += SHARE_INDUCTION;
      side_types (s, &c->thresholds);
      if (sc_store_model_identify (w[i].model, s->path, &ident, &err) == SC_OK)
        {
          sc_sha256_hex (ident.sha256, s->sha256);
          s->ablation = side_find_ablation (s, &w[i], &ident, db_path, text, (gsize) len,
                                            cancellable);
        }
    }
  stage.span = SHARE_MATRIX;
  if (keep && w[0].heads != NULL && w[1].heads != NULL
      && !compute_cross (c, w, threads, &stage, cancellable, error))
    goto out;
  stage_report (&stage, 1.0);
  c->seconds = (g_get_monotonic_time () - t0) / 1e6;
  ok = TRUE;

out:
  for (int i = 0; i < 2; i++)
    work_clear (&w[i]);
  return ok ? g_steal_pointer (&c) : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* Reading a side                                                                        */

int *
saccade_model_side_heads_of_type (const SaccadeModelSide *side, ScHeadType type, int *n)
{
  const int nh = side->n_layers * side->n_heads;
  const ScInductionScores *ind = side->induction->result->heads;
  /* the type's score, its sign turned so that the strongest is the largest */
  const double sign = sc_head_type_larger_is_stronger (type) ? 1.0 : -1.0;
  g_autofree double *strength = NULL;
  int *out = NULL;

  *n = 0;
  for (int i = 0; i < nh; i++)
    if (side->types[i] == type)
      {
        if (out == NULL)
          {
            out = g_new (int, nh);
            strength = g_new (double, nh);
          }
        strength[i] = sign * sc_head_type_score (type, &side->stats[i], &ind[i]);
        out[(*n)++] = i;
      }
  if (out != NULL)
    saccade_rank_by_key (out, *n, strength);
  return out;
}

gboolean
saccade_model_side_ablation_by_depth (const SaccadeModelSide *side, double *out)
{
  const ScHeadSweepResult *r;
  double sum[SACCADE_MODEL_COMPARE_DEPTH_BINS] = { 0 };
  int count[SACCADE_MODEL_COMPARE_DEPTH_BINS] = { 0 };

  if (side->ablation == NULL || (r = side->ablation->heads) == NULL
      || r->n_layers != side->n_layers || r->n_heads != side->n_heads)
    return FALSE;
  for (int l = 0; l < r->n_layers; l++)
    for (int h = 0; h < r->n_heads; h++)
      {
        const double tv = r->heads[l * r->n_heads + h].next.tv;
        const int b = MIN (SACCADE_MODEL_COMPARE_DEPTH_BINS - 1,
                           (int) (saccade_model_side_depth (side, l)
                                  * SACCADE_MODEL_COMPARE_DEPTH_BINS));
        if (isnan (tv))
          continue;
        sum[b] += tv;
        count[b]++;
      }
  for (int b = 0; b < SACCADE_MODEL_COMPARE_DEPTH_BINS; b++)
    out[b] = count[b] > 0 ? sum[b] / count[b] : NAN;
  return TRUE;
}
