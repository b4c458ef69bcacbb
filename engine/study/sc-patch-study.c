/* sc-patch-study.c — activation patching (sc-patch-study.h): the source run's head outputs
 * and residuals taken once, each component patched into the base run in turn through an
 * ScIntervention with prefix reuse, measured on the last position's metric; storage and
 * the study kind. */
#include "study/sc-patch-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sc_patch_direction_names[] = { "denoise", "noise", NULL };
const char *const sc_patch_what_names[] = { "heads", "head-positions", "residual", "patterns",
                                             "queries", "keys", "values", NULL };

/* Below this the two runs do not differ on the metric (sc-patch-study.h). */
#define SAME_METRIC 1e-6

double
sc_patch_metric (const float *row, int V, int target, int contrast)
{
  double logp;

  if (contrast >= 0)
    {
      const double m = (double) row[target] - (double) row[contrast];
      return isfinite (m) ? m : NAN;
    }
  if (sc_log_softmax_at (row, V, target, &logp, NULL) != SC_OK)
    return NAN;
  return logp;
}

double
sc_patch_normalised (const ScPatchResult *r, double m)
{
  const double span = r->metric_clean - r->metric_corrupted;

  if (!(fabs (span) >= SAME_METRIC))
    return NAN;
  return (m - r->metric_corrupted) / span;
}

/* The grid of @what: rows × columns; false when @what is not an ScPatchWhat. */
static bool
grid_of (int what, int L, int H, int n, int *rows, int *cols)
{
  switch (what)
    {
    case SC_PATCH_HEADS:
    case SC_PATCH_PATTERNS:
    case SC_PATCH_QUERIES:
    case SC_PATCH_KEYS:
    case SC_PATCH_VALUES:
      *rows = L;
      *cols = H;
      return true;
    case SC_PATCH_HEAD_POSITIONS:
      *rows = L * H;
      *cols = n;
      return true;
    case SC_PATCH_RESIDUAL:
      *rows = L;
      *cols = n;
      return true;
    default:
      return false;
    }
}

ScPatchResult *
sc_patch_result_new (int n_layers, int n_heads, int n_tokens, int what)
{
  ScPatchResult *r;
  int rows, cols;

  if (n_layers < 1 || n_heads < 1 || n_tokens < 1
      || !grid_of (what, n_layers, n_heads, n_tokens, &rows, &cols)
      || (int64_t) rows * cols > SC_STORE_MAX_TOKENS || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  *r = (ScPatchResult) {
    .n_layers = n_layers, .n_heads = n_heads, .n_tokens = n_tokens, .what = what,
    .n_rows = rows, .n_cols = cols, .target = -1, .contrast = -1, .top1_clean = -1,
    .top1_corrupted = -1, .logp_clean = NAN, .loss_clean = NAN, .metric_clean = NAN,
    .metric_corrupted = NAN,
  };
  if ((r->patched = malloc ((size_t) rows * cols * sizeof *r->patched)) == NULL)
    {
      free (r);
      return NULL;
    }
  for (size_t i = 0; i < (size_t) rows * cols; i++)
    r->patched[i] = NAN;
  return r;
}

void
sc_patch_result_free (ScPatchResult *r)
{
  if (r == NULL)
    return;
  free (r->patched);
  free (r);
}

/* ------------------------------------------------------------------------------------ */
/* The run                                                                               */

/* What the source run hands over (sc-patch-study.h); its attention patterns go into
 * (L, H, n, n) instead (take_pattern). */
typedef ScPatchTake Source;

bool
sc_patch_take_attn_output (void *user, int layer, const float *o, int n_q, int width)
{
  ScPatchTake *s = user;

  for (int p = 0; p < n_q; p++)
    for (int h = 0; h < s->H; h++)
      memcpy (s->heads + (((size_t) layer * s->H + h) * s->n + p) * s->d,
              o + (size_t) p * width + (size_t) h * s->d, (size_t) s->d * sizeof (float));
  return true;
}

static bool
take_pattern (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Source *s = user;

  memcpy (s->heads + ((size_t) layer * s->H + head) * s->n * s->n, probs,
          (size_t) n_q * n_k * sizeof (float));
  return true;
}

bool
sc_patch_take_qkv (void *user, int layer, const float *q, const float *k, const float *v,
                   int n_q, int n_k, int q_width, int kv_width)
{
  ScPatchTake *s = user;
  const int group = s->H / s->Hkv;

  (void) n_k;
  for (int h = 0; h < s->H; h++)
    for (int p = 0; p < n_q; p++)
      {
        const float *from = s->which == SC_PATCH_QUERIES
                                ? q + (size_t) p * q_width + (size_t) h * s->d
                                : (s->which == SC_PATCH_KEYS ? k : v) + (size_t) p * kv_width
                                      + (size_t) (h / group) * s->d;
        memcpy (s->heads + (((size_t) layer * s->H + h) * s->n + p) * s->d, from,
                (size_t) s->d * sizeof (float));
      }
  return true;
}

typedef struct {
  ScSession *session;
  const int32_t *ids;        /* the base run's */
  int n, V;
  ScIntervention iv;
  ScForwardOptions opt;
  float *row;                /* (V) the last position's logits */
  int target, contrast;
} Patcher;

/* One patched run of the base ids from layer @layer on: its metric into *@m. */
static ScStatus
patched_metric (Patcher *pt, int layer, double *m, ScError *err)
{
  ScStatus st;

  pt->opt.start_layer = layer;
  if ((st = sc_forward (pt->session, pt->ids, pt->n, &pt->opt, pt->row, err)) != SC_OK)
    return st;
  *m = sc_patch_metric (pt->row, pt->V, pt->target, pt->contrast);
  if (isnan (*m))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: the patched run's logits hold a "
                         "NaN (layer %d)", layer);
  return SC_OK;
}

/* Checks what sc_patch_run is given. */
static ScStatus
check_args (ScSession *session, const ScModel *model, const int32_t *clean,
            const int32_t *corrupted, int n, const ScPatchParams *p, ScError *err)
{
  const ScModelInfo *info;
  ScStatus st;

  if (p == NULL || corrupted == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: NULL argument");
  if ((st = sc_study_check_ids (session, model, clean, n, 2, p->target, err)) != SC_OK
      || (st = sc_study_check_ids (session, model, corrupted, n, 2, p->contrast, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  if (p->target >= 0 && p->contrast == p->target)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: the contrast is the target "
                         "(token %d): logit(A) − logit(A) is 0 on every run", p->target);
  if (p->direction != SC_PATCH_DENOISE && p->direction != SC_PATCH_NOISE)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: direction %d is not an "
                         "ScPatchDirection", p->direction);
  {
    int rows, cols;
    if (!grid_of (p->what, (int) info->n_layers, (int) info->n_heads, n, &rows, &cols))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: what %d is not an ScPatchWhat",
                           p->what);
    if ((int64_t) rows * cols > SC_STORE_MAX_TOKENS)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: %s over %d tokens is %lld "
                           "patched runs, more than the %u a study may hold; patch heads or "
                           "the residual, or a shorter run", sc_patch_what_names[p->what], n,
                           (long long) rows * cols, SC_STORE_MAX_TOKENS);
  }
  return SC_OK;
}

ScStatus
sc_patch_run (ScSession *session, const ScModel *model, const int32_t *clean,
              const int32_t *corrupted, int n, const ScPatchParams *p,
              ScStudyProgressFn progress, void *progress_user, ScPatchResult **out,
              ScError *err)
{
  const ScModelInfo *info;
  ScPatchResult *r = NULL;
  float *logits = NULL, *resid = NULL;
  uint8_t *on = NULL;
  Source src = { 0 };
  Patcher pt = { 0 };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  ScAttnEdit edit = { 0 };
  int L, H, E, V, d;
  const int32_t *source_ids, *base_ids;
  ScStatus st;

  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: NULL argument");
  if ((st = check_args (session, model, clean, corrupted, n, p, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  E = (int) info->n_embd;
  V = (int) info->n_vocab;
  d = (int) info->head_dim;
  source_ids = p->direction == SC_PATCH_DENOISE ? clean : corrupted;
  base_ids = p->direction == SC_PATCH_DENOISE ? corrupted : clean;

  r = sc_patch_result_new (L, H, n, p->what);
  logits = malloc ((size_t) n * V * sizeof *logits);
  src = (Source) { .H = H, .Hkv = (int) info->n_kv_heads, .d = d, .n = n, .which = p->what };
  if (p->what == SC_PATCH_RESIDUAL)
    resid = malloc ((size_t) L * n * E * sizeof *resid);
  else /* patterns: every head's (n, n) probabilities */
    src.heads = malloc ((size_t) L * H * n * (p->what == SC_PATCH_PATTERNS ? n : d)
                        * sizeof *src.heads);
  on = calloc (p->what == SC_PATCH_RESIDUAL ? (size_t) n : (size_t) L * H * n, 1);
  if (r == NULL || logits == NULL || on == NULL || (resid == NULL && src.heads == NULL))
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "patching: out of memory for %d tokens", n);
      goto out;
    }
  r->direction = p->direction;

  /* 1. The clean run (all logits: the clean measures of sc-study.h), then the corrupted
   *    run (its last row); the source of the two hands over its head outputs or keeps its
   *    residuals, which are copied out before the next run replaces them. */
  if (p->what == SC_PATCH_PATTERNS)
    obs.observe = take_pattern;
  else if (p->what == SC_PATCH_QUERIES || p->what == SC_PATCH_KEYS || p->what == SC_PATCH_VALUES)
    obs.qkv = sc_patch_take_qkv;
  else
    obs.attn_output = sc_patch_take_attn_output;
  obs.user = &src;
  opt.all_logits = true;
  opt.keep_residuals = true;
  opt.observer = src.heads != NULL && source_ids == clean ? &obs : NULL;
  if ((st = sc_forward (session, clean, n, &opt, logits, err)) != SC_OK
      || (st = sc_study_clean_measures (logits, clean, n, V, p->target, &r->target,
                                        &r->top1_clean, &r->logp_clean, &r->loss_clean, err))
             != SC_OK
      || (resid != NULL && source_ids == clean
          && (st = sc_study_kept_residuals (session, L, n, E, resid, err)) != SC_OK))
    goto out;
  /* the clean run's last row is needed after the corrupted run */
  memmove (logits, logits + (size_t) (n - 1) * V, (size_t) V * sizeof *logits);

  opt.all_logits = false;
  opt.observer = src.heads != NULL && source_ids == corrupted ? &obs : NULL;
  if ((st = sc_forward (session, corrupted, n, &opt, logits + V, err)) != SC_OK
      || (resid != NULL && source_ids == corrupted
          && (st = sc_study_kept_residuals (session, L, n, E, resid, err)) != SC_OK))
    goto out;
  r->top1_corrupted = sc_logits_top1 (logits + V, V);
  r->contrast = p->contrast >= 0 ? p->contrast
                : r->top1_corrupted != r->target ? r->top1_corrupted : -1;
  r->metric_clean = sc_patch_metric (logits, V, r->target, r->contrast);
  r->metric_corrupted = sc_patch_metric (logits + V, V, r->target, r->contrast);
  if (isnan (r->metric_clean) || isnan (r->metric_corrupted) || r->top1_corrupted < 0)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "patching: the clean or corrupted logits "
                         "hold a NaN");
      goto out;
    }

  /* 2. The session must keep the base run's residuals for prefix reuse: the corrupted run
   *    just kept them; noising runs the clean ids once more. */
  opt = (ScForwardOptions) { .keep_residuals = true };
  if (base_ids == clean && (st = sc_forward (session, clean, n, &opt, NULL, err)) != SC_OK)
    goto out;

  /* 3. One component at a time. */
  pt = (Patcher) { .session = session, .ids = base_ids, .n = n, .V = V,
                   .target = r->target, .contrast = r->contrast,
                   .row = logits + V };
  pt.iv.patch_tokens = n;
  if (p->what == SC_PATCH_RESIDUAL)
    {
      pt.iv.resid_patch = resid;
      pt.iv.resid_patch_on = on;
    }
  else if (p->what == SC_PATCH_PATTERNS)
    {
      pt.iv.edits = &edit;
      pt.iv.n_edits = 1;
    }
  else if (p->what == SC_PATCH_QUERIES)
    {
      pt.iv.q_patch = src.heads;
      pt.iv.q_patch_on = on;
    }
  else if (p->what == SC_PATCH_KEYS)
    {
      pt.iv.k_patch = src.heads;
      pt.iv.k_patch_on = on;
    }
  else if (p->what == SC_PATCH_VALUES)
    {
      pt.iv.v_patch = src.heads;
      pt.iv.v_patch_on = on;
    }
  else
    {
      pt.iv.head_patch = src.heads;
      pt.iv.head_patch_on = on;
    }
  pt.opt.intervention = &pt.iv;
  {
    const size_t cells = (size_t) r->n_rows * r->n_cols;
    for (size_t c = 0; c < cells; c++)
      {
        const int row = (int) (c / r->n_cols), col = (int) (c % r->n_cols);
        int layer;
        size_t first, count;

        switch (p->what)
          {
          case SC_PATCH_HEADS: /* head (row, col), every position */
            layer = row;
            first = ((size_t) row * H + col) * n;
            count = (size_t) n;
            break;
          case SC_PATCH_PATTERNS: /* head (row, col): its P replaced, no flags */
            layer = row;
            edit = (ScAttnEdit) { .layer = row, .head = col, .kind = SC_ATTN_EDIT_REPLACE,
                                  .probs = src.heads + ((size_t) row * H + col) * n * n };
            first = 0;
            count = 0;
            break;
          case SC_PATCH_QUERIES: /* head (row, col): one (L, H) flag */
          case SC_PATCH_KEYS:
          case SC_PATCH_VALUES:
            layer = row;
            first = (size_t) row * H + col;
            count = 1;
            break;
          case SC_PATCH_HEAD_POSITIONS: /* head row = l·H + h, position col */
            layer = row / H;
            first = (size_t) row * n + col;
            count = 1;
            break;
          default: /* SC_PATCH_RESIDUAL: layer row, position col */
            layer = row;
            pt.iv.resid_patch_layer = row;
            pt.iv.resid_patch = resid + (size_t) row * n * E; /* that layer's rows */
            first = (size_t) col;
            count = 1;
            break;
          }
        memset (on + first, 1, count);
        st = patched_metric (&pt, layer, &r->patched[c], err);
        memset (on + first, 0, count);
        if (st != SC_OK)
          goto out;
        if (progress != NULL && !progress (progress_user, (double) (c + 1) / cells))
          {
            st = sc_error_set (err, SC_ERR_CANCELLED, "patching: cancelled after %zu of %zu "
                               "patched runs", c + 1, cells);
            goto out;
          }
      }
  }
  *out = r;
  r = NULL;
out:
  free (logits);
  free (resid);
  free (src.heads);
  free (on);
  sc_patch_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Attribution patching                                                                  */

/* The backward's d m / d o per layer, turned into each cell's first-order estimate. */
typedef struct {
  ScPatchResult *r;
  const float *src, *base; /* (L, H, n, d) head outputs of the two runs */
  int H, d, n;
  double m_base;
} Estimate;

static bool
estimate_layer (void *user, int layer, const float *d_o, int n, int width)
{
  Estimate *e = user;
  ScPatchResult *r = e->r;

  for (int h = 0; h < e->H; h++)
    {
      const size_t head = ((size_t) layer * e->H + h) * e->n;
      double sum = 0.0;
      for (int p = 0; p < n; p++)
        {
          const float *a = e->src + (head + p) * e->d, *b = e->base + (head + p) * e->d;
          const float *g = d_o + (size_t) p * width + (size_t) h * e->d;
          double dot = 0.0;
          for (int t = 0; t < e->d; t++)
            dot += ((double) a[t] - (double) b[t]) * (double) g[t];
          if (r->what == SC_PATCH_HEAD_POSITIONS)
            r->patched[(size_t) (layer * e->H + h) * n + p] = e->m_base + dot;
          sum += dot;
        }
      if (r->what == SC_PATCH_HEADS)
        r->patched[layer * e->H + h] = e->m_base + sum;
    }
  return true;
}

/* Reports @fraction: false when the caller asked to cancel. */
static bool
report (ScStudyProgressFn progress, void *user, double fraction)
{
  return progress == NULL || progress (user, fraction);
}

ScStatus
sc_patch_attribution_run (ScSession *session, ScGrad *grad, const ScModel *model,
                          const int32_t *clean,
                          const int32_t *corrupted, int n, const ScPatchParams *p,
                          ScStudyProgressFn progress, void *progress_user, ScPatchResult **out,
                          ScError *err)
{
  const ScModelInfo *info = model != NULL ? sc_model_info (model) : NULL;
  ScPatchResult *r = NULL;
  float *logits = NULL, *heads = NULL, *dlogits = NULL;
  Source src = { 0 }, base = { 0 };
  ScObserver src_obs = { .attn_output = sc_patch_take_attn_output },
             base_obs = { .attn_output = sc_patch_take_attn_output };
  ScForwardOptions opt = { 0 };
  ScGradOptions gopt = { 0 };
  Estimate est;
  int L, H, V, d;
  const int32_t *source_ids, *base_ids;
  float *src_row, *base_row;
  ScStatus st;

  if (grad == NULL || out == NULL || info == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution patching: NULL argument");
  if ((st = check_args (session, model, clean, corrupted, n, p, err)) != SC_OK)
    return st;
  if (p->what != SC_PATCH_HEADS && p->what != SC_PATCH_HEAD_POSITIONS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution patching estimates heads and "
                         "head-positions (their outputs); patch the %s exactly",
                         sc_patch_what_names[p->what]);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  V = (int) info->n_vocab;
  d = (int) info->head_dim;
  source_ids = p->direction == SC_PATCH_DENOISE ? clean : corrupted;
  base_ids = p->direction == SC_PATCH_DENOISE ? corrupted : clean;
  r = sc_patch_result_new (L, H, n, p->what);
  /* (n, V) logits of the clean run, then the source's and the base's last rows */
  logits = malloc (((size_t) n + 2) * V * sizeof *logits);
  dlogits = calloc ((size_t) V, sizeof *dlogits);
  heads = malloc (2 * (size_t) L * H * n * d * sizeof *heads);
  if (r == NULL || logits == NULL || dlogits == NULL || heads == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "attribution patching: out of memory for %d "
                         "tokens", n);
      goto out;
    }
  r->direction = p->direction;
  r->estimated = true;
  src_row = logits + (size_t) n * V;
  base_row = src_row + V;
  src = (Source) { .heads = heads, .H = H, .d = d, .n = n };
  base = (Source) { .heads = heads + (size_t) L * H * n * d, .H = H, .d = d, .n = n };
  src_obs.user = &src;
  base_obs.user = &base;

  /* 1. The source run, plainly: its head outputs (and, when it is the clean run, every
   *    row's logits for the clean measures). */
  opt.observer = &src_obs;
  opt.all_logits = source_ids == clean;
  if ((st = sc_forward (session, source_ids, n, &opt, opt.all_logits ? logits : src_row, err))
      != SC_OK)
    goto out;
  if (opt.all_logits)
    memcpy (src_row, logits + (size_t) (n - 1) * V, (size_t) V * sizeof *logits);
  if (!report (progress, progress_user, 1.0 / 3))
    goto cancelled;

  /* 2. The base run with the tape, its head outputs kept. */
  gopt.observer = &base_obs;
  gopt.attn_output_grad = estimate_layer;
  gopt.attn_output_grad_user = &est;
  if ((st = sc_grad_forward (grad, base_ids, n, &gopt, err)) != SC_OK
      || (st = sc_grad_logits (grad, n - 1, base_row, err)) != SC_OK)
    goto out;
  for (int q = 0; q < n - 1 && base_ids == clean; q++)
    if ((st = sc_grad_logits (grad, q, logits + (size_t) q * V, err)) != SC_OK)
      goto out;
  if (base_ids == clean)
    memcpy (logits + (size_t) (n - 1) * V, base_row, (size_t) V * sizeof *logits);
  if ((st = sc_study_clean_measures (logits, clean, n, V, p->target, &r->target,
                                     &r->top1_clean, &r->logp_clean, &r->loss_clean, err))
      != SC_OK)
    goto out;
  {
    const float *corrupt_row = source_ids == corrupted ? src_row : base_row;
    r->top1_corrupted = sc_logits_top1 (corrupt_row, V);
    r->contrast = p->contrast >= 0 ? p->contrast
                  : r->top1_corrupted != r->target ? r->top1_corrupted : -1;
    r->metric_clean = sc_patch_metric (source_ids == clean ? src_row : base_row, V, r->target,
                                       r->contrast);
    r->metric_corrupted = sc_patch_metric (corrupt_row, V, r->target, r->contrast);
  }
  if (isnan (r->metric_clean) || isnan (r->metric_corrupted) || r->top1_corrupted < 0)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "attribution patching: the clean or "
                         "corrupted logits hold a NaN");
      goto out;
    }
  if (!report (progress, progress_user, 2.0 / 3))
    goto cancelled;

  /* 3. d m / d logits at the base's last row: e_A − e_B, or e_A − softmax for ln p(A);
   *    then the backward, each layer's d m / d o turned into its cells' estimates. */
  if (r->contrast >= 0)
    {
      dlogits[r->target] = 1.0f;
      dlogits[r->contrast] = -1.0f;
    }
  else
    {
      double z = 0.0, top = base_row[0];
      for (int t = 1; t < V; t++)
        top = base_row[t] > top ? base_row[t] : top;
      for (int t = 0; t < V; t++)
        z += exp ((double) base_row[t] - top);
      for (int t = 0; t < V; t++)
        dlogits[t] = (float) (-exp ((double) base_row[t] - top) / z);
      dlogits[r->target] += 1.0f;
    }
  est = (Estimate) { .r = r, .src = src.heads, .base = base.heads, .H = H, .d = d, .n = n,
                     .m_base = sc_patch_metric (base_row, V, r->target, r->contrast) };
  {
    const ScObjective obj = { SC_OBJECTIVE_DLOGITS, n - 1, 0, dlogits };
    if ((st = sc_grad_backward (grad, &obj, NULL, NULL, NULL, NULL, err)) != SC_OK)
      goto out;
  }
  if (!report (progress, progress_user, 1.0))
    goto cancelled;
  *out = r;
  r = NULL;
  goto out;
cancelled:
  st = sc_error_set (err, SC_ERR_CANCELLED, "attribution patching: cancelled");
out:
  free (logits);
  free (dlogits);
  free (heads);
  sc_patch_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_patch_params_json (int64_t run_id, const ScPatchParams *p, char *buf, size_t size)
{
  char target[16] = "null", contrast[16] = "null";
  int len;

  if (p == NULL || run_id < 1 || p->corrupted_run < 1 || p->target < -1 || p->contrast < -1
      || (p->target >= 0 && p->contrast == p->target) || p->direction < SC_PATCH_DENOISE
      || p->direction > SC_PATCH_NOISE || p->what < SC_PATCH_HEADS || p->what > SC_PATCH_VALUES)
    return -1;
  if (p->target >= 0)
    snprintf (target, sizeof target, "%d", p->target);
  if (p->contrast >= 0)
    snprintf (contrast, sizeof contrast, "%d", p->contrast);
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"corrupted\":%lld,\"target\":%s,"
                  "\"contrast\":%s,\"direction\":\"%s\",\"what\":\"%s\"}", SC_PATCH_STUDY_VERSION,
                  (long long) run_id, (long long) p->corrupted_run, target, contrast,
                  sc_patch_direction_names[p->direction], sc_patch_what_names[p->what]);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_patch_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                const ScPatchResult *r, int64_t *study_id, ScError *err)
{
  return sc_patch_store_kind (store, r != NULL && r->estimated ? SC_PATCH_ATTRIBUTION_KIND
                                                               : SC_PATCH_STUDY_KIND,
                              model, params_json, r, study_id, err);
}

ScStatus
sc_patch_store_kind (ScStore *store, const char *kind_id, const ScStoreModel *model,
                     const char *params_json, const ScPatchResult *r, int64_t *study_id,
                     ScError *err)
{
  const double metric[4] = { r != NULL ? r->contrast : 0, r != NULL ? r->metric_clean : 0,
                             r != NULL ? r->metric_corrupted : 0,
                             r != NULL ? r->top1_corrupted : 0 };
  ScStoreStudy *s = NULL;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "patching: no result to store");
  if ((st = sc_store_study_begin (store, kind_id, model, params_json, &s, err)) != SC_OK)
    return st;
  for (int i = 0; i < r->n_rows * r->n_cols; i++)
    if ((st = sc_store_study_add_series (s, "patched", i, r->patched[i], err)) != SC_OK)
      goto fail;
  for (int i = 0; i < 4; i++)
    if ((st = sc_store_study_add_series (s, "metric", i, metric[i], err)) != SC_OK)
      goto fail;
  if ((st = sc_study_add_clean (s, r->target, r->logp_clean, r->top1_clean, r->loss_clean,
                                r->n_tokens, err)) != SC_OK)
    goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

/* The token id @v stored as a double, or −1 when it is not one below @V (@none_ok: −1
 * itself is allowed). Sets *@ok false on a bad value. */
static int
stored_token (double v, uint32_t V, bool none_ok, bool *ok)
{
  if (v == -1.0 && none_ok)
    return -1;
  if (!(v >= 0.0 && v < (double) V && v == floor (v)))
    {
      *ok = false;
      return -1;
    }
  return (int) v;
}

ScStatus
sc_patch_load_kind (const char *kind_id, bool estimated, ScStore *store,
                    const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                    const char *params_json, const ScPatchParams *p, ScPatchResult **out,
                    int64_t *study_id, ScError *err)
{
  /* the metric is a logit difference or a log-probability: finite, far inside ±1e6 */
  static const ScStudyValueRule patched_rule = { "patched", -1e6, 1e6, false };
  static const ScStudyValueRule metric_rule = { "metric", -1e6, 1e6, false };
  ScStoreStudyData *d = NULL;
  ScPatchResult *r = NULL;
  double metric[4] = { NAN, NAN, NAN, NAN };
  int target, top1, n;
  double logp, loss;
  bool ok = true;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, kind_id, sha256, params_json, &d, study_id, err))
      != SC_OK)
    return st;
  if (d->n_layers != (int) info->n_layers || d->n_heads != (int) info->n_heads
      || !sc_study_read_clean (d, info->n_vocab, &target, &logp, &top1, &loss, &n) || n < 2
      || (r = sc_patch_result_new (d->n_layers, d->n_heads, n, p->what)) == NULL)
    goto bad;
  /* every cell patched, each value in range, the target the params name */
  if ((st = sc_study_check_target (d, params_json, target, err)) != SC_OK
      || (st = sc_study_check_series (d, &patched_rule, r->n_rows * r->n_cols, err)) != SC_OK
      || (st = sc_study_check_series (d, &metric_rule, 4, err)) != SC_OK)
    {
      sc_store_study_data_free (d);
      sc_patch_result_free (r);
      return st;
    }
  r->direction = p->direction;
  r->estimated = estimated;
  r->target = target;
  r->top1_clean = top1;
  r->logp_clean = logp;
  r->loss_clean = loss;
  for (size_t i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "patched") == 0)
        r->patched[v->pos] = v->value;
      else if (strcmp (v->series, "metric") == 0)
        metric[v->pos] = v->value;
    }
  r->contrast = stored_token (metric[0], info->n_vocab, true, &ok);
  r->metric_clean = metric[1];
  r->metric_corrupted = metric[2];
  r->top1_corrupted = stored_token (metric[3], info->n_vocab, false, &ok);
  /* a contrast the params name is the one measured; none is never the target */
  if (!ok || r->contrast == r->target || (p->contrast >= 0 && r->contrast != p->contrast))
    goto bad;
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s and its "
                     "parameters", (long long) d->id, kind_id, info->name);
  sc_store_study_data_free (d);
  sc_patch_result_free (r);
  return st;
}

ScStatus
sc_patch_load (ScStore *store, const ScModelInfo *info,
               const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
               const ScPatchParams *p, ScPatchResult **out, int64_t *study_id, ScError *err)
{
  return sc_patch_load_kind (SC_PATCH_STUDY_KIND, false, store, info, sha256, params_json, p,
                             out, study_id, err);
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
patch_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                   char *buf, size_t size, ScError *err)
{
  const ScPatchParams *p = params;
  const int len = sc_patch_params_json (ctx->run_id, p, buf, size);

  if (p->corrupted_run < 1)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: name the corrupted run (--corrupted "
                  "RUN)", kind->name);
  else if (kind == &sc_study_kind_patch_attribution && p->what != SC_PATCH_HEADS
           && p->what != SC_PATCH_HEAD_POSITIONS)
    {
      sc_error_set (err, SC_ERR_INVALID_ARG, "study %s estimates heads and head-positions "
                    "(their outputs); patch the %s exactly (study patch --what %s)",
                    kind->name, sc_patch_what_names[p->what], sc_patch_what_names[p->what]);
      return -1;
    }
  else if (p->target >= 0 && p->contrast == p->target)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the contrast is the target (%d)",
                  kind->name, p->target);
  else if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return p->corrupted_run < 1 ? -1 : len;
}

static ScStatus
patch_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
           ScError *err)
{
  ScPatchResult *r = NULL;
  ScStatus st;

  if (ctx->n_tokens2 != ctx->n_tokens)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: run %lld has %d tokens and the "
                         "corrupted run %lld has %d; patching needs the same length",
                         kind->name, (long long) ctx->run_id, ctx->n_tokens,
                         (long long) ctx->run2_id, ctx->n_tokens2);
  /* the two kinds of this file: exact patching, and its first-order estimate */
  if (kind == &sc_study_kind_patch_attribution)
    st = sc_patch_attribution_run (ctx->session, ctx->grad, ctx->model, ctx->ids, ctx->ids2,
                                   ctx->n_tokens, params, ctx->progress, ctx->progress_user,
                                   &r, err);
  else
    st = sc_patch_run (ctx->session, ctx->model, ctx->ids, ctx->ids2, ctx->n_tokens, params,
                       ctx->progress, ctx->progress_user, &r, err);
  *out = r;
  return st;
}

static ScStatus
patch_store (ScStore *store, const ScStoreModel *model, const char *params_json,
             const void *result, int64_t *study_id, ScError *err)
{
  return sc_patch_store (store, model, params_json, result, study_id, err);
}

static ScStatus
patch_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
            const char *params_json, const void *params, void **out, int64_t *study_id,
            ScError *err)
{
  ScPatchResult *r = NULL;
  ScStatus st = sc_patch_load (store, info, sha256, params_json, params, &r, study_id, err);

  *out = r;
  return st;
}

static ScStatus
attribution_load (ScStore *store, const ScModelInfo *info,
                  const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                  const void *params, void **out, int64_t *study_id, ScError *err)
{
  ScPatchResult *r = NULL;
  ScStatus st = sc_patch_load_kind (SC_PATCH_ATTRIBUTION_KIND, true, store, info, sha256,
                                    params_json, params, &r, study_id, err);

  *out = r;
  return st;
}

static int
patch_n_tokens (const void *result)
{
  return ((const ScPatchResult *) result)->n_tokens;
}

static void
patch_clean (const void *result, ScStudyClean *out)
{
  const ScPatchResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = r->loss_clean;
}

static void
patch_free (void *result)
{
  sc_patch_result_free (result);
}

static const ScPatchParams PATCH_DEFAULT = {
  .corrupted_run = 0, .target = -1, .contrast = -1, .direction = SC_PATCH_DENOISE,
  .what = SC_PATCH_HEADS,
};

static const ScStudyOption PATCH_OPTIONS[] = {
  { "corrupted", SC_STUDY_OPTION_RUN, offsetof (ScPatchParams, corrupted_run), 0, 0, NULL,
    "the corrupted run: a stored run of the same model and token count (required)" },
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScPatchParams, target), 0, 0, NULL,
    "token A of the metric logit(A) − logit(B) (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScPatchParams, contrast), 0, 0, NULL,
    "token B (default: the corrupted top-1; none when that is A: the metric is ln p(A))" },
  { "direction", SC_STUDY_OPTION_CHOICE, offsetof (ScPatchParams, direction), 0, 0,
    sc_patch_direction_names,
    "denoise: clean activations into the corrupted run; noise: corrupted into clean" },
  { "what", SC_STUDY_OPTION_CHOICE, offsetof (ScPatchParams, what), 0, 0, sc_patch_what_names,
    "heads (every position), head-positions (one head at one position), residual (the "
    "stream entering a layer at one position), patterns (a head's attention pattern), "
    "queries, keys or values (a head's, every position; keys and values for that query head "
    "only)" },
  { NULL },
};

const ScStudyKind sc_study_kind_patch = {
  .id = SC_PATCH_STUDY_KIND,
  .name = "patch",
  .title = "Activation patching (clean and corrupted runs)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_RUN_PAIR | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 2,
  .params_size = sizeof (ScPatchParams),
  .params_default = &PATCH_DEFAULT,
  .options = PATCH_OPTIONS,
  .params_json = patch_params_json,
  .run = patch_run,
  .store = patch_store,
  .load = patch_load,
  .result_n_tokens = patch_n_tokens,
  .result_clean = patch_clean,
  .result_free = patch_free,
};

const ScStudyKind sc_study_kind_patch_attribution = {
  .id = SC_PATCH_ATTRIBUTION_KIND,
  .name = "attribution-patch",
  .title = "Attribution patching (first-order estimate of activation patching)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_RUN_PAIR | SC_STUDY_NEEDS_SESSION
           | SC_STUDY_NEEDS_BACKWARD,
  .min_tokens = 2,
  .params_size = sizeof (ScPatchParams),
  .params_default = &PATCH_DEFAULT,
  .options = PATCH_OPTIONS,
  .params_json = patch_params_json,
  .run = patch_run,
  .store = patch_store,
  .load = attribution_load,
  .result_n_tokens = patch_n_tokens,
  .result_clean = patch_clean,
  .result_free = patch_free,
};
