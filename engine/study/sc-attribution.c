/* sc-attribution.c — gradient attributions over tokens (see sc-attribution.h).
 *
 * One clean forward and backward of log p(target) give saliency, gradient × input and,
 * through the backward's per-head observer, gradient-weighted rollout; integrated
 * gradients run one more forward and backward per quadrature point. The quadrature's
 * nodes and weights come from GSL (gsl_integration_glfixed, Gauss-Legendre on [0, 1]),
 * not from a table of our own.
 *
 * Rollout is propagated as one row: the relevance of the objective's query row p after
 * every layer is e_p^T (I + Ā_{L-1}) ... (I + Ā_0) (sc-attribution.h), so from the last
 * layer down, v <- v + v Ā_l — which is the order the backward visits the layers, so each
 * layer's Ā_l (n x n) is used as soon as its heads are seen and never kept: O(L n²) time
 * and n² memory instead of L matrix products.
 */
#include "study/sc-attribution.h"

#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sc-sha256.h"

static const char *const METHOD_ID[SC_ATTR_N_METHODS] = { "saliency", "gradxinput", "ig",
                                                          "grad-rollout" };
static const char *const RULE_ID[SC_ATTR_N_RULES] = { "adaptive", "gauss-legendre", "midpoint" };
static const char *const BASELINE_ID[SC_ATTR_N_BASELINES] = { "zero", "token" };

const char *
sc_attr_method_id (ScAttrMethod m)
{
  return m >= 0 && m < SC_ATTR_N_METHODS ? METHOD_ID[m] : NULL;
}

const char *
sc_attr_rule_id (ScAttrRule r)
{
  return r >= 0 && r < SC_ATTR_N_RULES ? RULE_ID[r] : NULL;
}

const char *
sc_attr_baseline_id (ScAttrBaseline b)
{
  return b >= 0 && b < SC_ATTR_N_BASELINES ? BASELINE_ID[b] : NULL;
}

bool
sc_attr_method_from_id (const char *id, ScAttrMethod *out)
{
  for (int m = 0; id != NULL && m < SC_ATTR_N_METHODS; m++)
    if (strcmp (id, METHOD_ID[m]) == 0)
      {
        *out = (ScAttrMethod) m;
        return true;
      }
  return false;
}

bool
sc_attr_rule_from_id (const char *id, ScAttrRule *out)
{
  for (int r = 0; id != NULL && r < SC_ATTR_N_RULES; r++)
    if (strcmp (id, RULE_ID[r]) == 0)
      {
        *out = (ScAttrRule) r;
        return true;
      }
  return false;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

ScAttrResult *
sc_attr_result_new (int n, int n_layers, int n_heads)
{
  ScAttrResult *r = calloc (1, sizeof *r);

  if (r == NULL)
    return NULL;
  r->n_tokens = n;
  r->n_layers = n_layers;
  r->n_heads = n_heads;
  r->contrast = -1;
  r->value = r->f_baseline = r->ig_sum = r->ig_gap = r->ig_gap_rel = NAN;
  return r;
}

void
sc_attr_result_free (ScAttrResult *r)
{
  if (r == NULL)
    return;
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    free (r->scores[m]);
  free (r);
}

/* ---- gradient-weighted rollout, one row (above) ------------------------------------ */

typedef struct {
  int n, n_heads, position;
  double *abar; /* (n, n) this layer's mean_h (dP ⊙ P)^+ */
  double *v;    /* (n) the relevance row */
  double *tmp;  /* (n) */
} Rollout;

static bool
rollout_observe (void *user, int layer, int head, const float *P, const float *dP, int n)
{
  Rollout *r = user;
  const double w = 1.0 / r->n_heads;
  int i, j;

  (void) layer;
  if (head == 0)
    memset (r->abar, 0, (size_t) n * n * sizeof *r->abar);
  for (i = 0; i < n * n; i++)
    {
      const double x = (double) dP[i] * P[i];
      if (x > 0.0)
        r->abar[i] += w * x;
    }
  if (head == r->n_heads - 1)
    {
      /* v <- v + v Ā_l */
      for (j = 0; j < n; j++)
        r->tmp[j] = r->v[j];
      for (i = 0; i < n; i++)
        if (r->v[i] != 0.0)
          for (j = 0; j <= i; j++) /* Ā is lower triangular (causal) */
            r->tmp[j] += r->v[i] * r->abar[(size_t) i * n + j];
      memcpy (r->v, r->tmp, (size_t) n * sizeof *r->v);
    }
  return true;
}

/* The objective at @position for the last forward of @g: log p(target), or with a
 * @contrast >= 0 logit(target) − logit(contrast); target −1 is the top-1. */
static ScStatus
objective_of (ScGrad *g, int position, int32_t target, int32_t contrast, int V, float *z,
              double *out, int32_t *top1, ScError *err)
{
  double mx = -INFINITY, sum = 0.0;
  ScStatus st;
  int v, best = 0;

  if ((st = sc_grad_logits (g, position, z, err)) != SC_OK)
    return st;
  for (v = 0; v < V; v++)
    {
      mx = fmax (mx, z[v]);
      if (z[v] > z[best])
        best = v;
    }
  for (v = 0; v < V; v++)
    sum += exp ((double) z[v] - mx);
  if (top1 != NULL)
    *top1 = best;
  if (target < 0)
    target = best;
  if (out != NULL)
    *out = contrast >= 0 ? (double) z[target] - (double) z[contrast]
                         : (double) z[target] - mx - log (sum);
  return SC_OK;
}

static ScStatus
check_params (const ScModelInfo *in, const int32_t *ids, int n, const ScAttrParams *p,
              ScError *err)
{
  const int V = (int) in->n_vocab;

  for (int i = 0; i < n; i++)
    if (ids[i] < 0 || ids[i] >= V)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: token %d at position %d is "
                           "outside the vocabulary of %d", (int) ids[i], i, V);
  if (p->methods >= (1u << SC_ATTR_N_METHODS))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: method set 0x%x names no "
                         "method", p->methods);
  if (p->target < -1 || p->target >= V)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: target %d is outside the "
                         "vocabulary of %d", (int) p->target, V);
  if (p->contrast < -1 || p->contrast >= V || (p->contrast >= 0 && p->contrast == p->target))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: contrast %d is outside the "
                         "vocabulary of %d or the target itself", (int) p->contrast, V);
  if (p->position < -1 || p->position >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: position %d is outside "
                         "0..%d", p->position, n - 1);
  if (p->steps > SC_ATTR_MAX_STEPS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: %d steps is over the %d a "
                         "study may take", p->steps, SC_ATTR_MAX_STEPS);
  if (p->rule < 0 || p->rule >= SC_ATTR_N_RULES)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: rule %d is not an ScAttrRule",
                         (int) p->rule);
  if (p->baseline < 0 || p->baseline >= SC_ATTR_N_BASELINES)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: baseline %d is not an "
                         "ScAttrBaseline", (int) p->baseline);
  if (p->baseline == SC_ATTR_BASELINE_TOKEN && (p->baseline_token < 0 || p->baseline_token >= V))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: baseline token %d is outside "
                         "the vocabulary of %d", (int) p->baseline_token, V);
  return SC_OK;
}

/* The quadrature's node @k of @m on (0, 1) and its weight (the weights sum to 1). */
typedef struct {
  ScAttrRule rule;
  int m;
  gsl_integration_glfixed_table *gl;
} Quadrature;

static void
quad_point (const Quadrature *q, int k, double *alpha, double *weight)
{
  if (q->rule == SC_ATTR_RULE_GAUSS_LEGENDRE)
    gsl_integration_glfixed_point (0.0, 1.0, (size_t) k, alpha, weight, q->gl);
  else
    {
      *alpha = (k + 0.5) / q->m;
      *weight = 1.0 / q->m;
    }
}

static ScStatus ig_node (ScGrad *g, const int32_t *ids, int n, size_t nE, const float *base,
                         const float *x, float *xa, const ScObjective *obj, double alpha,
                         double *f, double *dg, float *grad, ScError *err);

/* The adaptive rule: the trapezoid rule on nodes chosen where it is needed. The path's
 * f(alpha) is known exactly at every node (the forward that gives the node's gradient
 * gives it too), so each segment's error is measured, not estimated: the trapezoid of the
 * scalar integrand d f / d alpha = (x - x') . grad over [a, b] against f(b) - f(a). Start
 * from a uniform grid of m / 5 segments (at least one), then split the segment with the
 * largest error at its middle until m nodes are used. The attribution of every input
 * element is the same trapezoid sum of its own gradient component, so the nodes that fix
 * the total fix the tokens' shares with it. Why: SmolLM2's f along the straight path has
 * narrow spikes (|d f / d alpha| near 1,000 over a few hundredths of alpha, measured in
 * docs/gradients.md); a fixed rule of 50 points misses them, a measured one finds them. */
static ScStatus
ig_adaptive (ScGrad *g, const int32_t *ids, int n, size_t nE, const float *base, const float *x,
             float *xa, const ScObjective *obj, int m, double f0, double f1, double *acc,
             ScAttrProgressFn progress, void *user, ScError *err)
{
  const int K = m / 5 > 1 ? (m / 5 < m - 1 ? m / 5 : m - 1) : 1;
  double *alpha = malloc ((size_t) m * 3 * sizeof *alpha), *f, *dg;
  float *grads = malloc ((size_t) m * nE * sizeof *grads);
  int *right = malloc ((size_t) m * sizeof *right); /* right[i]: the node right of node i */
  ScStatus st = SC_OK;
  int used = 0, i;
  size_t t;

  if (alpha == NULL || grads == NULL || right == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory for %d gradients", m);
      goto out;
    }
  f = alpha + m;
  dg = f + m;
  for (i = 0; i <= K && st == SC_OK; i++)
    {
      alpha[used] = (double) i / K;
      right[used] = i < K ? used + 1 : -1;
      st = ig_node (g, ids, n, nE, base, x, xa, obj, alpha[used], &f[used], &dg[used],
                    grads + (size_t) used * nE, err);
      used++;
    }
  /* the ends are known exactly: the clean run and the baseline's */
  if (st == SC_OK && (fabs (f[0] - f0) > 1e-4 * (1 + fabs (f0)) || fabs (f[K] - f1) > 1e-4 * (1 + fabs (f1))))
    st = sc_error_set (err, SC_ERR_BACKEND, "attribution: the path's ends (%g, %g) are not "
                       "f(x') = %g and f(x) = %g", f[0], f[K], f0, f1);
  while (st == SC_OK && used < m)
    {
      int worst = -1;
      double worst_err = -1.0;
      for (i = 0; i < used; i++)
        if (right[i] >= 0)
          {
            const int b = right[i];
            const double e = fabs (0.5 * (alpha[b] - alpha[i]) * (dg[i] + dg[b]) - (f[b] - f[i]));
            if (e > worst_err)
              {
                worst_err = e;
                worst = i;
              }
          }
      alpha[used] = 0.5 * (alpha[worst] + alpha[right[worst]]);
      right[used] = right[worst];
      right[worst] = used;
      st = ig_node (g, ids, n, nE, base, x, xa, obj, alpha[used], &f[used], &dg[used],
                    grads + (size_t) used * nE, err);
      used++;
      if (st == SC_OK && progress != NULL && !progress (user, (used + 1.0) / (m + 2.0)))
        st = sc_error_set (err, SC_ERR_CANCELLED, "attribution cancelled at point %d of %d",
                           used, m);
    }
  if (st != SC_OK)
    goto out;
  /* every node's trapezoid weight: half of each segment it ends */
  for (i = 0; i < used; i++)
    if (right[i] >= 0)
      {
        const double w = 0.5 * (alpha[right[i]] - alpha[i]);
        const float *ga = grads + (size_t) i * nE, *gb = grads + (size_t) right[i] * nE;
        for (t = 0; t < nE; t++)
          acc[t] += w * ((double) ga[t] + gb[t]);
      }
out:
  free (alpha);
  free (grads);
  free (right);
  return st;
}

/* One node of the path: f and the gradient at x' + alpha (x - x'), and the scalar
 * integrand (x - x') . grad. */
static ScStatus
ig_node (ScGrad *g, const int32_t *ids, int n, size_t nE, const float *base, const float *x,
         float *xa, const ScObjective *obj, double alpha, double *f, double *dg, float *grad,
         ScError *err)
{
  ScGradOptions o = { .input_embd = xa };
  ScStatus st;
  double s = 0.0;
  size_t t;

  for (t = 0; t < nE; t++)
    xa[t] = (float) (base[t] + alpha * ((double) x[t] - base[t]));
  if ((st = sc_grad_forward (g, ids, n, &o, err)) != SC_OK
      || (st = sc_grad_backward (g, obj, NULL, NULL, f, grad, err)) != SC_OK)
    return st;
  for (t = 0; t < nE; t++)
    s += ((double) x[t] - base[t]) * grad[t];
  *dg = s;
  if (!isfinite (s) || !isfinite (*f))
    return sc_error_set (err, SC_ERR_RANGE, "attribution: the gradient overflows at alpha = %g "
                         "on the path from the baseline (near zero embeddings every RMSNorm "
                         "multiplies it by up to 1/sqrt(eps)); choose a token baseline",
                         alpha);
  return SC_OK;
}

/* Integrated gradients into @r (sc-attribution.h): @x the inputs (n, E), @table the
 * model's token embeddings (for a token baseline), @z scratch for one row of logits. */
static ScStatus
run_ig (ScGrad *g, const ScModelInfo *in, const int32_t *ids, int n, const float *x,
        const float *table, const ScAttrParams *p, const ScObjective *obj, float *z,
        ScAttrResult *r, ScAttrProgressFn progress, void *user, ScError *err)
{
  const size_t E = in->n_embd, nE = (size_t) n * E;
  Quadrature q = { p->rule, r->steps, NULL };
  float *base = NULL, *xa = NULL, *grad = NULL;
  double *acc = NULL;
  ScStatus st = SC_OK;
  size_t t;
  int k;

  base = calloc (nE, sizeof *base);
  xa = malloc (nE * sizeof *xa);
  grad = malloc (nE * sizeof *grad);
  acc = calloc (nE, sizeof *acc);
  if (q.rule == SC_ATTR_RULE_GAUSS_LEGENDRE)
    q.gl = gsl_integration_glfixed_table_alloc ((size_t) q.m);
  if (base == NULL || xa == NULL || grad == NULL || acc == NULL
      || (q.rule == SC_ATTR_RULE_GAUSS_LEGENDRE && q.gl == NULL))
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory for integrated "
                         "gradients");
      goto out;
    }
  if (p->baseline == SC_ATTR_BASELINE_TOKEN)
    for (int i = 0; i < n; i++)
      memcpy (base + (size_t) i * E, table + (size_t) p->baseline_token * E, E * sizeof *base);
  /* f(x'): a forward at the baseline */
  {
    ScGradOptions o = { .input_embd = base };
    if ((st = sc_grad_forward (g, ids, n, &o, err)) != SC_OK
        || (st = objective_of (g, r->position, r->target, r->contrast, (int) in->n_vocab, z,
                               &r->f_baseline, NULL, err)) != SC_OK)
      goto out;
  }
  if (q.rule == SC_ATTR_RULE_ADAPTIVE)
    {
      if ((st = ig_adaptive (g, ids, n, nE, base, x, xa, obj, q.m, r->f_baseline, r->value, acc,
                             progress, user, err)) != SC_OK)
        goto out;
    }
  else
    for (k = 0; k < q.m; k++)
      {
        double alpha, w;
        ScGradOptions o = { .input_embd = xa };
        quad_point (&q, k, &alpha, &w);
        for (t = 0; t < nE; t++)
          xa[t] = (float) (base[t] + alpha * ((double) x[t] - base[t]));
        if ((st = sc_grad_forward (g, ids, n, &o, err)) != SC_OK
            || (st = sc_grad_backward (g, obj, NULL, NULL, NULL, grad, err)) != SC_OK)
          goto out;
        for (t = 0; t < nE; t++)
          acc[t] += w * grad[t];
        if (progress != NULL && !progress (user, (k + 2.0) / (q.m + 2.0)))
          {
            st = sc_error_set (err, SC_ERR_CANCELLED, "attribution cancelled at point %d of %d",
                               k + 1, q.m);
            goto out;
          }
      }
  if ((r->scores[SC_ATTR_IG] = malloc ((size_t) n * sizeof (double))) == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      goto out;
    }
  r->ig_sum = 0.0;
  for (int i = 0; i < n; i++)
    {
      double s = 0.0;
      for (t = 0; t < E; t++)
        s += ((double) x[i * E + t] - base[i * E + t]) * acc[i * E + t];
      r->scores[SC_ATTR_IG][i] = s;
      r->ig_sum += s;
    }
  if (!isfinite (r->ig_sum))
    {
      st = sc_error_set (err, SC_ERR_RANGE, "attribution: the gradient overflows on the path "
                         "from the baseline (near zero embeddings every RMSNorm multiplies it "
                         "by up to 1/sqrt(eps)); choose a token baseline");
      goto out;
    }
  r->ig_gap = fabs (r->ig_sum - (r->value - r->f_baseline));
  r->ig_gap_rel = r->ig_gap / fabs (r->value - r->f_baseline);
out:
  if (q.gl != NULL)
    gsl_integration_glfixed_table_free (q.gl);
  free (base);
  free (xa);
  free (grad);
  free (acc);
  return st;
}

ScStatus
sc_attr_run (ScGrad *g, const ScModel *model, const int32_t *ids, int n, const ScAttrParams *params,
             ScAttrProgressFn progress, void *user, ScAttrResult **out, ScError *err)
{
  const ScModelInfo *in;
  ScAttrParams p;
  ScAttrResult *r = NULL;
  ScObjective obj = { SC_OBJECTIVE_LOGP, 0, 0, NULL, -1 };
  Rollout ro = { 0 };
  float *x = NULL, *z = NULL, *grad = NULL;
  const float *table;
  const double t0 = now_s ();
  size_t E;
  ScStatus st;

  if (err != NULL)
    sc_error_clear (err);
  if (out != NULL)
    *out = NULL;
  if (g == NULL || model == NULL || ids == NULL || n < 1 || params == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: NULL argument or no tokens");
  in = sc_model_info (model);
  p = *params;
  if (p.methods == 0)
    p.methods = (1u << SC_ATTR_N_METHODS) - 1;
  if ((st = check_params (in, ids, n, &p, err)) != SC_OK)
    return st;
  E = in->n_embd;
  table = sc_model_weights (model)->token_embd;
  r = sc_attr_result_new (n, (int) in->n_layers, (int) in->n_heads);
  x = malloc ((size_t) n * E * sizeof *x);
  z = malloc ((size_t) in->n_vocab * sizeof *z);
  grad = malloc ((size_t) n * E * sizeof *grad);
  if (r == NULL || x == NULL || z == NULL || grad == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory");
      goto fail;
    }
  for (int i = 0; i < n; i++)
    memcpy (x + (size_t) i * E, table + (size_t) ids[i] * E, E * sizeof *x);
  r->methods = p.methods;
  r->position = p.position < 0 ? n - 1 : p.position;
  r->steps = (p.methods & (1u << SC_ATTR_IG)) ? (p.steps > 0 ? p.steps : SC_ATTR_DEFAULT_STEPS) : 0;
  r->rule = p.rule;
  r->baseline = p.baseline;
  r->baseline_token = p.baseline == SC_ATTR_BASELINE_TOKEN ? p.baseline_token : -1;

  /* the clean pass: f(x), the target, and the plain gradient */
  if ((st = sc_grad_forward (g, ids, n, NULL, err)) != SC_OK
      || (st = objective_of (g, r->position, p.target, p.contrast, (int) in->n_vocab, z,
                             &r->value, &r->top1, err)) != SC_OK)
    goto fail;
  r->target = p.target >= 0 ? p.target : r->top1;
  r->contrast = p.contrast;
  if (r->contrast == r->target)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: the contrast %d is the clean "
                         "top-1, the target: name another target or contrast",
                         (int) r->contrast);
      goto fail;
    }
  obj.kind = r->contrast >= 0 ? SC_OBJECTIVE_LOGIT_DIFF : SC_OBJECTIVE_LOGP;
  obj.position = r->position;
  obj.target = r->target;
  obj.contrast = r->contrast;
  if (p.methods & ~(1u << SC_ATTR_IG))
    {
      const bool rollout = (p.methods & (1u << SC_ATTR_GRAD_ROLLOUT)) != 0;
      if (rollout)
        {
          ro.n = n;
          ro.n_heads = (int) in->n_heads;
          ro.position = r->position;
          ro.abar = malloc ((size_t) n * n * sizeof *ro.abar);
          ro.v = calloc ((size_t) n, sizeof *ro.v);
          ro.tmp = malloc ((size_t) n * sizeof *ro.tmp);
          if (ro.abar == NULL || ro.v == NULL || ro.tmp == NULL)
            {
              st = sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory for rollout");
              goto fail;
            }
          ro.v[r->position] = 1.0;
        }
      if ((st = sc_grad_backward (g, &obj, rollout ? rollout_observe : NULL, &ro, NULL, grad,
                                  err)) != SC_OK)
        goto fail;
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (m != SC_ATTR_IG && (p.methods & (1u << m))
            && (r->scores[m] = malloc ((size_t) n * sizeof (double))) == NULL)
          {
            st = sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory");
            goto fail;
          }
      for (int i = 0; i < n; i++)
        {
          double norm = 0.0, gx = 0.0;
          for (size_t t = 0; t < E; t++)
            {
              const double gt = grad[i * E + t];
              norm += gt * gt;
              gx += gt * x[i * E + t];
            }
          if (r->scores[SC_ATTR_SALIENCY] != NULL)
            r->scores[SC_ATTR_SALIENCY][i] = sqrt (norm);
          if (r->scores[SC_ATTR_GRADXINPUT] != NULL)
            r->scores[SC_ATTR_GRADXINPUT][i] = gx;
          if (r->scores[SC_ATTR_GRAD_ROLLOUT] != NULL)
            r->scores[SC_ATTR_GRAD_ROLLOUT][i] = ro.v[i];
        }
    }
  if (progress != NULL && !progress (user, 1.0 / (r->steps + 2.0)))
    {
      st = sc_error_set (err, SC_ERR_CANCELLED, "attribution cancelled");
      goto fail;
    }
  if ((p.methods & (1u << SC_ATTR_IG))
      && (st = run_ig (g, in, ids, n, x, table, &p, &obj, z, r, progress, user, err)) != SC_OK)
    goto fail;
  r->forward_backward_s = now_s () - t0;
  if (progress != NULL)
    progress (user, 1.0);
  free (ro.abar);
  free (ro.v);
  free (ro.tmp);
  free (x);
  free (z);
  free (grad);
  *out = r;
  return SC_OK;

fail:
  free (ro.abar);
  free (ro.v);
  free (ro.tmp);
  free (x);
  free (z);
  free (grad);
  sc_attr_result_free (r);
  return st;
}
