/* sc-trace.c — causal tracing (sc-trace.h): the clean run's residuals kept, each sample's
 * noised run as a residual patch of the embeddings, every (layer, item) restored in turn
 * through a residual patch with prefix reuse, measured against the noised run. */
#include "study/sc-trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sc-effect.h"
#include "core/sc-random.h"
#include "forward/sc-intervention.h"

void
sc_trace_result_free (ScTraceResult *r)
{
  if (r == NULL)
    return;
  free (r->tv);
  free (r->jsd);
  free (r->delta_logp);
  free (r->delta_logit_diff);
  free (r);
}

static ScTraceResult *
result_new (int L, int n)
{
  ScTraceResult *r = calloc (1, sizeof *r);
  const size_t cells = (size_t) L * (n - 1);

  if (r == NULL)
    return NULL;
  r->n_layers = L;
  r->n_tokens = n;
  r->tv = calloc (cells, sizeof *r->tv);
  r->jsd = calloc (cells, sizeof *r->jsd);
  r->delta_logp = calloc (cells, sizeof *r->delta_logp);
  r->delta_logit_diff = calloc (cells, sizeof *r->delta_logit_diff);
  if (r->tv == NULL || r->jsd == NULL || r->delta_logp == NULL || r->delta_logit_diff == NULL)
    {
      sc_trace_result_free (r);
      return NULL;
    }
  r->logit_diff_clean = r->logit_diff_noised = NAN;
  return r;
}

static ScStatus
check_args (ScSession *session, const ScModel *model, const int32_t *ids, int n,
            const ScTraceParams *p, ScError *err)
{
  const ScModelInfo *info;
  ScStatus st;

  if (p == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: NULL argument");
  if ((st = sc_study_check_ids (session, model, ids, n, 2, p->target, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  if ((st = sc_study_check_contrast (p->contrast, p->target, (int) info->n_vocab, err))
      != SC_OK)
    return st;
  if (p->samples > SC_TRACE_MAX_SAMPLES)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: %d noise samples, at most "
                         "%d", p->samples, SC_TRACE_MAX_SAMPLES);
  return SC_OK;
}

/* σ of the items' embedding entries (rows 0 .. n − 2 of @x0, (n, E)), in double. */
static double
items_sigma (const float *x0, int n, int E)
{
  const size_t m = (size_t) (n - 1) * E;
  double mean = 0.0, ss = 0.0;

  for (size_t i = 0; i < m; i++)
    mean += x0[i];
  mean /= (double) m;
  for (size_t i = 0; i < m; i++)
    ss += ((double) x0[i] - mean) * ((double) x0[i] - mean);
  return sqrt (ss / (double) m);
}

typedef struct {
  ScSession *session;
  const int32_t *ids;
  int n, V, E, L;
  const float *clean;  /* (L, n, E): the clean run's residuals entering each layer */
  const float *noised; /* (n, E): the sample's embeddings, the items' rows noised */
  float *emb;          /* (n, E): the layer-0 patch of a restored run */
  uint8_t *on;         /* (n) flags */
  float *row;          /* (V) a run's last row */
} Tracer;

/* One run of the ids with the residual entering layer @l patched by @patch ((n, E)) at
 * the positions t->on flags, from layer @l on (the rows below are the previous
 * keep_residuals run's, the noised run's), its last row into t->row. */
static ScStatus
patched_run (Tracer *t, int l, const float *patch, bool keep, ScError *err)
{
  const ScIntervention iv = { .patch_tokens = t->n, .resid_patch = patch,
                              .resid_patch_on = t->on, .resid_patch_layer = l };
  const ScForwardOptions opt = { .intervention = &iv, .start_layer = l,
                                 .keep_residuals = keep };

  return sc_forward (t->session, t->ids, t->n, &opt, t->row, err);
}

/* The restored run of item @j at layer @l (sc-trace.h) into t->row. */
static ScStatus
restored_run (Tracer *t, int l, int j, ScError *err)
{
  const size_t E = (size_t) t->E;
  ScStatus st;

  if (l == 0)
    {
      /* the noised embeddings with item j's clean one among them, every item flagged */
      memcpy (t->emb + j * E, t->clean + j * E, E * sizeof *t->emb);
      memset (t->on, 1, (size_t) t->n - 1);
      st = patched_run (t, 0, t->emb, false, err);
      memcpy (t->emb + j * E, t->noised + j * E, E * sizeof *t->emb);
      memset (t->on, 0, (size_t) t->n - 1);
      return st;
    }
  t->on[j] = 1;
  st = patched_run (t, l, t->clean + (size_t) l * t->n * E, false, err);
  t->on[j] = 0;
  return st;
}

/* Adds @x to the running mean *@mean of @k values so far. */
static void
mean_add (double *mean, double x, int k)
{
  *mean += (x - *mean) / (k + 1);
}

ScStatus
sc_trace_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
              const ScTraceParams *params, ScStudyProgressFn progress, void *progress_user,
              ScTraceResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScTraceResult *r = NULL;
  Tracer t = { 0 };
  float *clean = NULL, *noised = NULL, *clean_row = NULL, *noised_row = NULL;
  int L, E, V, S;
  double nu;
  size_t done = 0, total;
  ScStatus st;

  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: NULL argument");
  if ((st = check_args (session, model, ids, n, params, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  L = (int) info->n_layers;
  E = (int) info->n_embd;
  V = (int) info->n_vocab;
  S = params->samples > 0 ? params->samples : SC_TRACE_DEFAULT_SAMPLES;
  nu = params->noise_zero ? 0.0
       : params->noise > 0.0 && isfinite (params->noise) ? params->noise
                                                          : SC_TRACE_DEFAULT_NOISE;
  total = (size_t) S * L * (n - 1);

  r = result_new (L, n);
  clean = malloc ((size_t) L * n * E * sizeof *clean);
  noised = malloc ((size_t) n * E * sizeof *noised);
  t.emb = malloc ((size_t) n * E * sizeof *t.emb);
  t.on = calloc ((size_t) n, 1);
  clean_row = malloc ((size_t) V * sizeof *clean_row);
  noised_row = malloc ((size_t) V * sizeof *noised_row);
  t.row = malloc ((size_t) V * sizeof *t.row);
  if (r == NULL || clean == NULL || noised == NULL || t.emb == NULL || t.on == NULL
      || clean_row == NULL || noised_row == NULL || t.row == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "causal tracing: out of memory for %d tokens", n);
      goto out;
    }
  t = (Tracer) { .session = session, .ids = ids, .n = n, .V = V, .E = E, .L = L,
                 .clean = clean, .noised = noised, .emb = t.emb, .on = t.on, .row = t.row };
  r->samples = S;
  r->noise = nu;
  r->contrast = params->contrast;
  r->logp_noised = 0.0;

  /* 1. The clean run: its residuals at every layer and its last row. */
  {
    const ScForwardOptions opt = { .keep_residuals = true };
    if ((st = sc_forward (session, ids, n, &opt, clean_row, err)) != SC_OK
        || (st = sc_study_kept_residuals (session, L, n, E, clean, err)) != SC_OK)
      goto out;
  }
  r->top1_clean = sc_logits_top1 (clean_row, V);
  r->target = params->target >= 0 ? params->target : r->top1_clean;
  if (r->top1_clean < 0
      || (st = sc_log_softmax_at (clean_row, V, r->target, &r->logp_clean, err)) != SC_OK)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: the clean run's logits "
                         "hold a NaN or an infinity");
      goto out;
    }
  if (r->contrast == r->target)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: the contrast %d is the "
                         "target (the clean top-1) itself", r->contrast);
      goto out;
    }
  if (r->contrast >= 0)
    {
      r->logit_diff_clean = sc_study_logit_diff (clean_row, r->target, r->contrast);
      r->logit_diff_noised = 0.0; /* a running mean from here */
    }
  r->sigma = items_sigma (clean, n, E);
  if (!(r->sigma > 0.0) || !isfinite (r->sigma))
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: the embeddings of the %d "
                         "token%s before the last have no spread (σ = %g): noise has no "
                         "scale", n - 1, n == 2 ? "" : "s", r->sigma);
      goto out;
    }

  for (int s = 0; s < S; s++)
    {
      uint64_t state = params->seed ^ (0x7ACEull << 32) ^ (uint64_t) s;
      double logp_noised;

      /* 2. The sample's noised run (kept: the restored runs start from its residuals). */
      (void) sc_splitmix64 (&state); /* one step mixes (seed, sample) before the first draw */
      memcpy (noised, clean, (size_t) n * E * sizeof *noised);
      for (size_t i = 0; i < (size_t) (n - 1) * E; i++)
        noised[i] = (float) ((double) noised[i] + nu * r->sigma * sc_gaussian (&state));
      memcpy (t.emb, noised, (size_t) n * E * sizeof *t.emb);
      memset (t.on, 1, (size_t) n - 1);
      st = patched_run (&t, 0, noised, true, err);
      memset (t.on, 0, (size_t) n - 1);
      if (st != SC_OK)
        goto out;
      memcpy (noised_row, t.row, (size_t) V * sizeof *noised_row);
      if ((st = sc_log_softmax_at (noised_row, V, r->target, &logp_noised, err)) != SC_OK)
        goto out;
      mean_add (&r->logp_noised, logp_noised, s);
      if (r->contrast >= 0)
        mean_add (&r->logit_diff_noised,
                  sc_study_logit_diff (noised_row, r->target, r->contrast), s);

      /* 3. Every (layer, item) restored in turn. */
      for (int l = 0; l < L; l++)
        for (int j = 0; j < n - 1; j++)
          {
            const size_t c = (size_t) l * (n - 1) + j;
            ScEffect e;

            if ((st = restored_run (&t, l, j, err)) != SC_OK
                || (st = sc_effect_next_token (noised_row, t.row, V, r->target, &e, err))
                       != SC_OK)
              goto out;
            mean_add (&r->tv[c], e.tv, s);
            mean_add (&r->jsd[c], e.jsd, s);
            mean_add (&r->delta_logp[c], e.delta_logp, s);
            mean_add (&r->delta_logit_diff[c],
                      sc_study_logit_diff (t.row, r->target, r->contrast)
                        - sc_study_logit_diff (noised_row, r->target, r->contrast), s);
            done++;
            if (progress != NULL && !progress (progress_user, (double) done / total))
              {
                st = sc_error_set (err, SC_ERR_CANCELLED, "causal tracing: cancelled after "
                                   "%zu of %zu restored runs", done, total);
                goto out;
              }
          }
    }
  *out = r;
  r = NULL;
out:
  sc_trace_result_free (r);
  free (clean);
  free (noised);
  free (t.emb);
  free (t.on);
  free (clean_row);
  free (noised_row);
  free (t.row);
  return st;
}

ScStatus
sc_trace_importance (const ScTraceResult *r, ScTraceMeasure measure, double *out, int *layer,
                     ScError *err)
{
  const double *grid;

  if (r == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: NULL argument");
  switch (measure)
    {
    case SC_TRACE_TV: grid = r->tv; break;
    case SC_TRACE_JSD: grid = r->jsd; break;
    case SC_TRACE_ABS_DELTA_LOGP: grid = r->delta_logp; break;
    case SC_TRACE_ABS_DELTA_LOGIT_DIFF:
      if (r->contrast < 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: the result has no "
                             "contrast, and abs-delta-logit-diff measures one");
      grid = r->delta_logit_diff;
      break;
    default:
      return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: measure %d is not an "
                           "ScTraceMeasure", (int) measure);
    }
  for (int j = 0; j < r->n_tokens - 1; j++)
    {
      double best = -1.0;
      int at = 0;
      for (int l = 0; l < r->n_layers; l++)
        {
          const double v = fabs (grid[(size_t) l * (r->n_tokens - 1) + j]);
          if (isnan (v))
            return sc_error_set (err, SC_ERR_INVALID_ARG, "causal tracing: the effect of "
                                 "token %d at layer %d is NaN", j, l);
          if (v > best)
            best = v, at = l;
        }
      out[j] = best;
      if (layer != NULL)
        layer[j] = at;
    }
  return SC_OK;
}
