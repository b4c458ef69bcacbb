/* sc-adversarial.c — adversarial attention (see sc-adversarial.h for the definition).
 *
 * Each searched distribution d (a head h, a query row i) has logits z_d over its visible
 * keys, written as a' = softmax(z_d) into row i of the head's replacement matrix, which an
 * SC_ATTN_EDIT_REPLACE edit puts in place of the head's probabilities. Per Adam step:
 *   1. forward from the searched layer (prefix reuse), y' at the last token, TVD(y', y);
 *   2. g_d = (1/D) ½ ln(a'/m)  (the mean JSD's gradient)                 [closed form]
 *      and, only while TVD > ε, - (λ/ε) dTVD/da' through the backward pass down to the
 *      searched layer (its dP of the searched heads);
 *   3. dF/dz = a' ⊙ (g - <a', g>) (the softmax Jacobian), Adam ascent on z.
 */
#include "study/sc-adversarial.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sc-random.h"
#include "core/sc-sha256.h"

const double SC_ADV_DEFAULT_EPSILONS[6] = { 0.001, 0.005, 0.01, 0.02, 0.05, 0.1 };

/* Adam's constants, as Kingma & Ba recommend. */
#define ADAM_B1 0.9
#define ADAM_B2 0.999
#define ADAM_EPS 1e-8

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

void
sc_adv_result_free (ScAdvResult *r)
{
  if (r == NULL)
    return;
  free (r->epsilon);
  free (r->jsd);
  free (r->jsd_max);
  free (r->tvd);
  free (r->adversarial);
  free (r->original);
  free (r->dist_head);
  free (r->dist_row);
  free (r);
}

static ScAdvResult *
result_new (int n_eps, int n_dists, int n)
{
  ScAdvResult *r = calloc (1, sizeof *r);

  if (r == NULL)
    return NULL;
  r->n_epsilons = n_eps;
  r->n_dists = n_dists;
  r->n_tokens = n;
  r->epsilon = calloc ((size_t) n_eps, sizeof (double));
  r->jsd = calloc ((size_t) n_eps, sizeof (double));
  r->jsd_max = calloc ((size_t) n_eps, sizeof (double));
  r->tvd = calloc ((size_t) n_eps, sizeof (double));
  if (!r->epsilon || !r->jsd || !r->jsd_max || !r->tvd)
    {
      sc_adv_result_free (r);
      return NULL;
    }
  return r;
}

/* JSD(p, q) in nats over @m entries; p > 0 (a softmax), q >= 0. */
static double
jsd (const double *p, const double *q, int m)
{
  double s = 0.0;

  for (int j = 0; j < m; j++)
    {
      const double mid = 0.5 * (p[j] + q[j]);
      if (p[j] > 0)
        s += 0.5 * p[j] * log (p[j] / mid);
      if (q[j] > 0)
        s += 0.5 * q[j] * log (q[j] / mid);
    }
  return s < 0 ? 0 : s;
}

/* One searched distribution. */
typedef struct {
  int head, row, m; /* m visible keys, listed in keys */
  int *keys;
  double *a;        /* (m) the original */
  double *z, *best_z, *ap, *g, *adam_m, *adam_v; /* (m) each */
} Dist;

typedef struct {
  int layer, n, H;
  const uint8_t *want;  /* (H) */
  float *P;             /* (H, n, n) the original probabilities of the layer */
} Capture;

static bool
capture_wants (void *user, int layer, int head)
{
  const Capture *c = user;
  return layer == c->layer && c->want[head];
}

static bool
capture_observe (void *user, int layer, int head, const float *probs, int nq, int nk)
{
  Capture *c = user;
  (void) layer;
  (void) nq;
  memcpy (c->P + (size_t) head * nk * nk, probs, (size_t) nk * nk * sizeof (float));
  return true;
}

/* The backward's dP of the searched heads, accumulated into each dist's g with @weight. */
typedef struct {
  int layer;
  Dist *d;
  int n_d;
  double weight;
} DpGrab;

static bool
grab_dp (void *user, int layer, int head, const float *P, const float *dP, int n)
{
  DpGrab *gb = user;
  (void) P;
  if (layer != gb->layer)
    return true;
  for (int k = 0; k < gb->n_d; k++)
    if (gb->d[k].head == head)
      for (int t = 0; t < gb->d[k].m; t++)
        gb->d[k].g[t] += gb->weight * dP[(size_t) gb->d[k].row * n + gb->d[k].keys[t]];
  return true;
}

static void
softmax (const double *z, double *p, int m)
{
  double mx = -INFINITY, s = 0.0;
  for (int j = 0; j < m; j++)
    mx = fmax (mx, z[j]);
  for (int j = 0; j < m; j++)
    s += (p[j] = exp (z[j] - mx));
  for (int j = 0; j < m; j++)
    p[j] /= s;
}

/* The next-token distribution (V) in double from @z (float logits). */
static void
distribution (const float *z, double *y, int V)
{
  double mx = -INFINITY, s = 0.0;
  for (int v = 0; v < V; v++)
    mx = fmax (mx, z[v]);
  for (int v = 0; v < V; v++)
    s += (y[v] = exp ((double) z[v] - mx));
  for (int v = 0; v < V; v++)
    y[v] /= s;
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static ScStatus
check_params (const ScModelInfo *in, int n, const ScAdvParams *p, ScError *err)
{
  const ScIntervention *b = p->base;

  if (n < 2)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial attention needs at least 2 "
                         "tokens (a row with one key has nowhere to move)");
  if (p->layer < 0 || p->layer >= (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: layer %d is outside 0..%u",
                         p->layer, in->n_layers - 1);
  if (p->head < -1 || p->head >= (int) in->n_heads)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: head %d is outside 0..%u",
                         p->head, in->n_heads - 1);
  if (p->row != -1 && p->row != SC_ADV_ALL_ROWS && (p->row < 1 || p->row >= n))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: row %d is outside 1..%d (row 0 "
                         "sees one key)", p->row, n - 1);
  if (p->epsilons != NULL && (p->n_epsilons < 1 || p->n_epsilons > SC_ADV_MAX_EPSILONS))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: %d epsilon values (1..%d)",
                         p->n_epsilons, SC_ADV_MAX_EPSILONS);
  for (int e = 0; p->epsilons != NULL && e < p->n_epsilons; e++)
    if (!(p->epsilons[e] > 0 && p->epsilons[e] <= 1))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: epsilon %g is outside (0, 1] "
                           "(a total variation distance)", p->epsilons[e]);
  if (b != NULL && (b->n_edits > 0 || b->head_mean_on != NULL))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: the base intervention may "
                         "scale heads and mask tokens only");
  if (b != NULL && sc_intervention_first_layer (b, in) < p->layer)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: the base intervention changes "
                         "layer %d, below the searched layer %d",
                         sc_intervention_first_layer (b, in), p->layer);
  return SC_OK;
}

static void
free_dists (Dist *d, int n_d)
{
  for (int k = 0; d != NULL && k < n_d; k++)
    free (d[k].keys);
  free (d);
}

/* The searched distributions: each chosen head's chosen rows with two or more visible keys
 * (causal, less the base's masked tokens), their original weights from @P. */
static ScStatus
make_dists (const ScAdvParams *p, const ScModelInfo *in, int n, const float *P, Dist **out,
            int *n_out, ScError *err)
{
  const int H = (int) in->n_heads, h0 = p->head < 0 ? 0 : p->head, h1 = p->head < 0 ? H : p->head + 1;
  const uint8_t *mask = p->base != NULL ? p->base->token_mask : NULL;
  const int r0 = p->row == SC_ADV_ALL_ROWS ? 1 : (p->row < 0 ? n - 1 : p->row);
  const int r1 = p->row == SC_ADV_ALL_ROWS ? n : r0 + 1;
  Dist *d = calloc ((size_t) (h1 - h0) * (r1 - r0), sizeof *d);
  int n_d = 0;

  if (d == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "adversarial: out of memory");
  for (int h = h0; h < h1; h++)
    for (int i = r0; i < r1; i++)
      {
        Dist *x = &d[n_d];
        int m = 0;
        for (int j = 0; j <= i; j++)
          m += mask == NULL || !mask[j];
        if (m < 2)
          continue;
        /* keys, a, z, best_z, ap, g, adam_m, adam_v in one block */
        x->keys = malloc ((size_t) m * (sizeof (int) + 7 * sizeof (double)) + sizeof (double));
        if (x->keys == NULL)
          {
            free_dists (d, n_d);
            return sc_error_set (err, SC_ERR_NOMEM, "adversarial: out of memory");
          }
        x->a = (double *) (x->keys + m + (m & 1)); /* 8-byte aligned after the ints */
        x->z = x->a + m;
        x->best_z = x->z + m;
        x->ap = x->best_z + m;
        x->g = x->ap + m;
        x->adam_m = x->g + m;
        x->adam_v = x->adam_m + m;
        x->head = h;
        x->row = i;
        x->m = 0;
        for (int j = 0; j <= i; j++)
          if (mask == NULL || !mask[j])
            {
              x->keys[x->m] = j;
              x->a[x->m++] = P[((size_t) h * n + i) * n + j];
            }
        n_d++;
      }
  if (n_d == 0)
    {
      free (d);
      return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: no searched row has two or "
                           "more visible keys");
    }
  *out = d;
  *n_out = n_d;
  return SC_OK;
}

/* The search's working state. */
typedef struct {
  ScGrad *g;
  const int32_t *ids;
  int n, V, layer, H;
  Dist *d;
  int n_d;
  float *repl;            /* (H, n, n) replacement matrices of the searched heads */
  ScAttnEdit *edits;
  int n_edits;
  ScIntervention iv;
  const double *y;        /* (V) the clean next-token distribution */
  double *yp;             /* (V) */
  float *z, *dz;          /* (V) logits, d/dlogits */
} Search;

/* Writes softmax(z) of every dist into its head's replacement row. */
static void
put_rows (Search *s)
{
  for (int k = 0; k < s->n_d; k++)
    {
      Dist *x = &s->d[k];
      float *row = s->repl + ((size_t) x->head * s->n + x->row) * s->n;
      softmax (x->z, x->ap, x->m);
      for (int t = 0; t < x->m; t++)
        row[x->keys[t]] = (float) x->ap[t];
    }
}

/* One evaluation at the current z: the forward from the searched layer, TVD and the mean
 * and largest JSD. */
static ScStatus
evaluate (Search *s, double *tvd, double *mean_jsd, double *max_jsd, ScError *err)
{
  ScGradOptions o = { .intervention = &s->iv, .start_layer = s->layer,
                      .lowest_layer = s->layer };
  ScStatus st;
  double t = 0.0, js = 0.0, jm = 0.0;

  put_rows (s);
  if ((st = sc_grad_forward (s->g, s->ids, s->n, &o, err)) != SC_OK
      || (st = sc_grad_logits (s->g, s->n - 1, s->z, err)) != SC_OK)
    return st;
  distribution (s->z, s->yp, s->V);
  for (int v = 0; v < s->V; v++)
    t += fabs (s->yp[v] - s->y[v]);
  for (int k = 0; k < s->n_d; k++)
    {
      const double j = jsd (s->d[k].ap, s->d[k].a, s->d[k].m);
      js += j;
      jm = fmax (jm, j);
    }
  *tvd = 0.5 * t;
  *mean_jsd = js / s->n_d;
  *max_jsd = jm;
  return SC_OK;
}

/* dF/da' into each dist's g at the current a' (after evaluate), with @penalty = λ/ε when
 * the constraint is violated, else 0. */
static ScStatus
gradient (Search *s, double penalty, ScError *err)
{
  for (int k = 0; k < s->n_d; k++)
    {
      Dist *x = &s->d[k];
      for (int t = 0; t < x->m; t++)
        x->g[t] = 0.5 * log (x->ap[t] / (0.5 * (x->ap[t] + x->a[t]))) / s->n_d;
    }
  if (penalty > 0)
    {
      /* d TVD / d logits = y' ⊙ (c - <y', c>), c = ½ sign(y' - y); F has -penalty * TVD */
      ScObjective obj = { SC_OBJECTIVE_DLOGITS, s->n - 1, 0, s->dz };
      DpGrab gb = { s->layer, s->d, s->n_d, 1.0 };
      double dot = 0.0;
      for (int v = 0; v < s->V; v++)
        dot += s->yp[v] * 0.5 * (s->yp[v] > s->y[v] ? 1.0 : s->yp[v] < s->y[v] ? -1.0 : 0.0);
      for (int v = 0; v < s->V; v++)
        {
          const double c = 0.5 * (s->yp[v] > s->y[v] ? 1.0 : s->yp[v] < s->y[v] ? -1.0 : 0.0);
          s->dz[v] = (float) (-penalty * s->yp[v] * (c - dot));
        }
      return sc_grad_backward (s->g, &obj, grab_dp, &gb, NULL, NULL, err);
    }
  return SC_OK;
}

/* One Adam ascent step on every dist's z from its g (through the softmax Jacobian). */
static void
adam_step (Search *s, int t, double lr)
{
  const double c1 = 1.0 - pow (ADAM_B1, t), c2 = 1.0 - pow (ADAM_B2, t);

  for (int k = 0; k < s->n_d; k++)
    {
      Dist *x = &s->d[k];
      double dot = 0.0;
      for (int j = 0; j < x->m; j++)
        dot += x->ap[j] * x->g[j];
      for (int j = 0; j < x->m; j++)
        {
          const double gz = x->ap[j] * (x->g[j] - dot);
          x->adam_m[j] = ADAM_B1 * x->adam_m[j] + (1 - ADAM_B1) * gz;
          x->adam_v[j] = ADAM_B2 * x->adam_v[j] + (1 - ADAM_B2) * gz * gz;
          x->z[j] += lr * (x->adam_m[j] / c1) / (sqrt (x->adam_v[j] / c2) + ADAM_EPS);
        }
    }
}

ScStatus
sc_adv_run (ScGrad *g, const ScModel *model, const int32_t *ids, int n, const ScAdvParams *params,
            ScAdvProgressFn progress, void *user, ScAdvResult **out, ScError *err)
{
  const ScModelInfo *in;
  ScAdvParams p;
  ScAdvResult *r = NULL;
  Search s = { 0 };
  Capture cap = { 0 };
  uint8_t *want = NULL;
  double *y = NULL, *eps = NULL;
  const double t0 = now_s ();
  uint64_t rng;
  ScStatus st;
  int n_eps, iters, e, it, k;

  if (err != NULL)
    sc_error_clear (err);
  if (out != NULL)
    *out = NULL;
  if (g == NULL || model == NULL || ids == NULL || params == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: NULL argument");
  in = sc_model_info (model);
  p = *params;
  if ((st = check_params (in, n, &p, err)) != SC_OK)
    return st;
  n_eps = p.epsilons != NULL ? p.n_epsilons : (int) (sizeof SC_ADV_DEFAULT_EPSILONS
                                                     / sizeof SC_ADV_DEFAULT_EPSILONS[0]);
  iters = p.iterations > 0 ? p.iterations : SC_ADV_DEFAULT_ITERATIONS;
  s.g = g;
  s.ids = ids;
  s.n = n;
  s.V = (int) in->n_vocab;
  s.layer = p.layer;
  s.H = (int) in->n_heads;
  want = calloc ((size_t) s.H, 1);
  eps = malloc ((size_t) n_eps * sizeof *eps);
  y = malloc ((size_t) s.V * sizeof *y);
  s.yp = malloc ((size_t) s.V * sizeof *s.yp);
  s.z = malloc ((size_t) s.V * sizeof *s.z);
  s.dz = malloc ((size_t) s.V * sizeof *s.dz);
  s.repl = malloc ((size_t) s.H * n * n * sizeof *s.repl);
  s.edits = calloc ((size_t) s.H, sizeof *s.edits);
  if (!want || !eps || !y || !s.yp || !s.z || !s.dz || !s.repl || !s.edits)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "adversarial: out of memory");
      goto out;
    }
  memcpy (eps, p.epsilons != NULL ? p.epsilons : SC_ADV_DEFAULT_EPSILONS,
          (size_t) n_eps * sizeof *eps);
  qsort (eps, (size_t) n_eps, sizeof *eps, cmp_double);
  for (int h = 0; h < s.H; h++)
    want[h] = p.head < 0 || p.head == h;

  /* the clean run: y, the target, the searched heads' original probabilities */
  {
    ScObserver obs = { capture_wants, capture_observe, &cap, NULL, NULL };
    ScGradOptions o = { .intervention = p.base, .observer = &obs };
    cap = (Capture) { p.layer, n, s.H, want, s.repl };
    if ((st = sc_grad_forward (g, ids, n, &o, err)) != SC_OK
        || (st = sc_grad_logits (g, n - 1, s.z, err)) != SC_OK)
      goto out;
    distribution (s.z, y, s.V);
    s.y = y;
  }
  if ((st = make_dists (&p, in, n, s.repl, &s.d, &s.n_d, err)) != SC_OK)
    goto out;
  if ((r = result_new (n_eps, s.n_d, n)) == NULL
      || (r->adversarial = calloc ((size_t) s.n_d * n, sizeof (float))) == NULL
      || (r->original = calloc ((size_t) s.n_d * n, sizeof (float))) == NULL
      || (r->dist_head = malloc ((size_t) s.n_d * sizeof (int))) == NULL
      || (r->dist_row = malloc ((size_t) s.n_d * sizeof (int))) == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "adversarial: out of memory");
      goto out;
    }
  r->layer = p.layer;
  r->head = p.head;
  r->row = p.row == SC_ADV_ALL_ROWS ? -1 : (p.row < 0 ? n - 1 : p.row);
  r->target = 0;
  for (int v = 1; v < s.V; v++)
    if (y[v] > y[r->target])
      r->target = v;
  /* the edits: every searched head replaced by its matrix (rows not searched keep a) */
  s.iv = p.base != NULL ? *p.base : (ScIntervention) { 0 };
  for (int h = 0; h < s.H; h++)
    if (want[h])
      s.edits[s.n_edits++] = (ScAttnEdit) { p.layer, h, SC_ATTN_EDIT_REPLACE, 0,
                                            s.repl + (size_t) h * n * n };
  s.iv.edits = s.edits;
  s.iv.n_edits = s.n_edits;
  /* start: the original logits (floored at 1e-6: log 0 is no start) plus N(0, 1) noise */
  rng = p.seed ^ 0x5ACCADEu;
  for (k = 0; k < s.n_d; k++)
    for (int j = 0; j < s.d[k].m; j++)
      s.d[k].best_z[j] = log (fmax (s.d[k].a[j], 1e-6)) + sc_gaussian (&rng);

  for (e = 0; e < n_eps; e++)
    {
      const double penalty = SC_ADV_PENALTY / eps[e];
      double best = -1.0;
      r->epsilon[e] = eps[e];
      for (k = 0; k < s.n_d; k++)
        {
          memcpy (s.d[k].z, s.d[k].best_z, (size_t) s.d[k].m * sizeof (double));
          memset (s.d[k].adam_m, 0, (size_t) s.d[k].m * sizeof (double));
          memset (s.d[k].adam_v, 0, (size_t) s.d[k].m * sizeof (double));
        }
      for (it = 0; it <= iters; it++)
        {
          double tvd, mj, xj;
          if ((st = evaluate (&s, &tvd, &mj, &xj, err)) != SC_OK)
            goto out;
          if (tvd <= eps[e] && mj > best)
            {
              best = mj;
              r->jsd[e] = mj;
              r->jsd_max[e] = xj;
              r->tvd[e] = tvd;
              for (k = 0; k < s.n_d; k++)
                memcpy (s.d[k].best_z, s.d[k].z, (size_t) s.d[k].m * sizeof (double));
            }
          if (it == iters)
            break;
          if ((st = gradient (&s, tvd > eps[e] ? penalty : 0.0, err)) != SC_OK)
            goto out;
          adam_step (&s, it + 1, p.lr > 0 ? p.lr : SC_ADV_DEFAULT_LR);
          if (progress != NULL
              && !progress (user, (e * (iters + 1.0) + it + 1) / (n_eps * (iters + 1.0))))
            {
              st = sc_error_set (err, SC_ERR_CANCELLED, "adversarial search cancelled");
              goto out;
            }
        }
      if (best < 0) /* nothing feasible moved: a' = a (JSD 0, TVD 0) */
        r->jsd[e] = r->jsd_max[e] = r->tvd[e] = 0.0;
    }
  /* the best a' at the largest ε, and a, for figures */
  for (k = 0; k < s.n_d; k++)
    {
      r->dist_head[k] = s.d[k].head;
      r->dist_row[k] = s.d[k].row;
      softmax (s.d[k].best_z, s.d[k].ap, s.d[k].m);
      for (int j = 0; j < s.d[k].m; j++)
        {
          r->adversarial[(size_t) k * n + s.d[k].keys[j]] = (float) s.d[k].ap[j];
          r->original[(size_t) k * n + s.d[k].keys[j]] = (float) s.d[k].a[j];
        }
    }
  r->search_s = now_s () - t0;
  if (progress != NULL)
    progress (user, 1.0);
  *out = r;
  r = NULL;
out:
  sc_adv_result_free (r);
  free_dists (s.d, s.n_d);
  free (want);
  free (eps);
  free (y);
  free (s.yp);
  free (s.z);
  free (s.dz);
  free (s.repl);
  free (s.edits);
  return st;
}

/* ---- storage ------------------------------------------------------------------------ */

int
sc_adv_params_json (int64_t run_id, const int32_t *ids, int n, const ScAdvParams *p, char *buf,
                    size_t size)
{
  char run[24], hex[SC_SHA256_HEX_SIZE + 2], head[16], row[16], eps[SC_ADV_MAX_EPSILONS * 24];
  const double *e;
  int n_e, len, at = 0;

  if (p == NULL || buf == NULL || run_id < 0 || (run_id == 0 && (ids == NULL || n < 1))
      || p->base != NULL)
    return -1;
  if (run_id > 0)
    {
      snprintf (run, sizeof run, "%lld", (long long) run_id);
      strcpy (hex, "null");
    }
  else
    {
      char h[SC_SHA256_HEX_SIZE];
      sc_sha256_int32_hex (ids, n, h);
      strcpy (run, "null");
      snprintf (hex, sizeof hex, "\"%s\"", h);
    }
  snprintf (head, sizeof head, p->head < 0 ? "null" : "%d", p->head);
  if (p->row == SC_ADV_ALL_ROWS)
    strcpy (row, "\"all\"");
  else
    snprintf (row, sizeof row, p->row < 0 ? "\"last\"" : "%d", p->row);
  e = p->epsilons != NULL ? p->epsilons : SC_ADV_DEFAULT_EPSILONS;
  n_e = p->epsilons != NULL ? p->n_epsilons : 6;
  if (n_e < 1 || n_e > SC_ADV_MAX_EPSILONS)
    return -1;
  /* sorted (the search sorts them too) and with 15 digits, so the same set is the same
   * text whatever order and spelling the user gave */
  {
    double sorted[SC_ADV_MAX_EPSILONS];
    memcpy (sorted, e, (size_t) n_e * sizeof *sorted);
    qsort (sorted, (size_t) n_e, sizeof *sorted, cmp_double);
    eps[0] = '\0';
    for (int k = 0; k < n_e; k++)
      at += snprintf (eps + at, sizeof eps - (size_t) at, "%s%.15g", k ? "," : "", sorted[k]);
  }
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%s,\"ids\":%s,\"layer\":%d,\"head\":%s,"
                  "\"row\":%s,\"epsilons\":[%s],\"iterations\":%d,\"lr\":%.15g,\"seed\":%llu}",
                  SC_ADV_STUDY_VERSION, run, hex, p->layer, head, row, eps,
                  p->iterations > 0 ? p->iterations : SC_ADV_DEFAULT_ITERATIONS,
                  p->lr > 0 ? p->lr : SC_ADV_DEFAULT_LR, (unsigned long long) p->seed);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

static const char *const SERIES[] = { "epsilon", "jsd", "jsd.max", "tvd" };

ScStatus
sc_adv_store (ScStore *store, const ScStoreModel *model, const char *params_json,
              const ScAdvResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: no result to store");
  if ((st = sc_store_study_begin (store, SC_ADV_KIND, model, params_json, &s, err)) != SC_OK)
    return st;
  for (int e = 0; e < r->n_epsilons; e++)
    {
      const double v[4] = { r->epsilon[e], r->jsd[e], r->jsd_max[e], r->tvd[e] };
      for (int c = 0; c < 4; c++)
        if ((st = sc_store_study_add_series (s, SERIES[c], e, v[c], err)) != SC_OK)
          goto fail;
    }
  {
    const double clean[5] = { r->layer, r->head, r->row, r->n_tokens, r->target };
    for (int c = 0; c < 5; c++)
      if ((st = sc_store_study_add_series (s, "clean", c, clean[c], err)) != SC_OK)
        goto fail;
  }
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_adv_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
             const char *params_json, ScAdvResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScAdvResult *r = NULL;
  double clean[5] = { NAN, NAN, NAN, NAN, NAN };
  char bad[160] = "the clean series";
  int64_t id = 0;
  int n_eps = 0;
  ScStatus st;
  size_t i;

  if (store == NULL || info == NULL || sha256 == NULL || params_json == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: NULL argument");
  *out = NULL;
  if ((st = sc_study_find_and_read (store, SC_ADV_KIND, sha256, params_json, &d, &id,
                                    err)) != SC_OK)
    return st;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "clean") == 0 && v->pos < 5)
        clean[v->pos] = v->value;
      else if (strcmp (v->series, "epsilon") == 0 && v->pos + 1 > n_eps)
        n_eps = v->pos + 1;
    }
  if (!(clean[0] >= 0 && clean[0] < info->n_layers && clean[0] == floor (clean[0])
        && clean[1] >= -1 && clean[1] < info->n_heads && clean[1] == floor (clean[1])
        && clean[3] >= 2 && clean[3] <= SC_STORE_MAX_TOKENS && clean[3] == floor (clean[3])
        && clean[2] >= -1 && clean[2] < clean[3] && clean[2] == floor (clean[2])
        && clean[4] >= 0 && clean[4] < info->n_vocab && clean[4] == floor (clean[4])
        && n_eps >= 1 && n_eps <= SC_ADV_MAX_EPSILONS))
    goto bad;
  if ((r = result_new (n_eps, 0, (int) clean[3])) == NULL)
    {
      sc_store_study_data_free (d);
      return sc_error_set (err, SC_ERR_NOMEM, "adversarial: out of memory");
    }
  r->layer = (int) clean[0];
  r->head = (int) clean[1];
  r->row = (int) clean[2];
  r->target = (int32_t) clean[4];
  /* the distributions a search over these would have had (no base intervention: every row
   * but row 0 has two or more keys) */
  r->n_dists = (r->head < 0 ? (int) info->n_heads : 1) * (r->row < 0 ? r->n_tokens - 1 : 1);
  for (int e = 0; e < n_eps; e++)
    r->epsilon[e] = r->jsd[e] = r->jsd_max[e] = r->tvd[e] = NAN;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      double *dst = NULL;
      for (int c = 0; c < 4; c++)
        if (strcmp (v->series, SERIES[c]) == 0)
          dst = c == 0 ? r->epsilon : c == 1 ? r->jsd : c == 2 ? r->jsd_max : r->tvd;
      if (dst == NULL)
        continue;
      snprintf (bad, sizeof bad, "series '%s' at %d (value %g)", v->series, v->pos, v->value);
      if (v->pos >= n_eps || !isfinite (v->value) || v->value < 0
          || (dst != r->tvd && dst != r->epsilon && v->value > log (2.0) + 1e-12)
          || (dst == r->tvd && v->value > 1) || (dst == r->epsilon && v->value > 1))
        goto bad;
      dst[v->pos] = v->value;
    }
  for (int e = 0; e < n_eps; e++)
    {
      snprintf (bad, sizeof bad, "the values at epsilon %d", e);
      if (isnan (r->epsilon[e]) || isnan (r->jsd[e]) || isnan (r->jsd_max[e]) || isnan (r->tvd[e])
          || (e > 0 && !(r->epsilon[e] > r->epsilon[e - 1])) || r->epsilon[e] <= 0
          || r->tvd[e] > r->epsilon[e] + 1e-12)
        goto bad;
      /* a mean over the distributions is at most their maximum */
      snprintf (bad, sizeof bad, "the JSD mean %g above the JSD max %g at epsilon %d",
                r->jsd[e], r->jsd_max[e], e);
      if (r->jsd[e] > r->jsd_max[e] + 1e-12)
        goto bad;
    }
  if (study_id != NULL)
    *study_id = id;
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  sc_store_study_data_free (d);
  sc_adv_result_free (r);
  return sc_error_set (err, SC_ERR_FORMAT, "adversarial study %lld: %s is out of range (the "
                       "database may have been edited)", (long long) id, bad);
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
adv_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx, char *buf,
                 size_t size, ScError *err)
{
  int len = sc_adv_params_json (ctx->run_id, ctx->ids, ctx->n_tokens, params, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
adv_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
         ScError *err)
{
  ScAdvResult *r = NULL;
  ScStatus st = sc_adv_run (ctx->grad, ctx->model, ctx->ids, ctx->n_tokens, params,
                            ctx->progress, ctx->progress_user, &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
adv_store (ScStore *store, const ScStoreModel *model, const char *params_json,
           const void *result, int64_t *study_id, ScError *err)
{
  return sc_adv_store (store, model, params_json, result, study_id, err);
}

static ScStatus
adv_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
          const char *params_json, const void *params, void **out, int64_t *study_id,
          ScError *err)
{
  const ScAdvParams *p = params;
  ScAdvResult *r = NULL;
  int64_t id = 0;
  const double *eps;
  int n_eps;
  double sorted[SC_ADV_MAX_EPSILONS];
  ScStatus st;

  *out = NULL;
  if (p == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "adversarial: no params to check against");
  eps = p->epsilons != NULL ? p->epsilons : SC_ADV_DEFAULT_EPSILONS;
  n_eps = p->epsilons != NULL ? p->n_epsilons : 6;
  if ((st = sc_adv_load (store, info, sha256, params_json, &r, &id, err)) != SC_OK)
    return st;
  /* the study the params text names: its layer, head, row and epsilons (a study of another
   * head was reused for --layer 3 --head 0, issue 25) */
  if (r->layer != p->layer || r->head != (p->head < 0 ? -1 : p->head)
      || r->row != (p->row == SC_ADV_ALL_ROWS ? -1 : p->row < 0 ? r->n_tokens - 1 : p->row))
    st = sc_error_set (err, SC_ERR_FORMAT, "adversarial study %lld: it holds layer %d head %d "
                       "row %d, its parameters say layer %d head %d row %d", (long long) id,
                       r->layer, r->head, r->row, p->layer, p->head, p->row);
  else if (n_eps != r->n_epsilons || n_eps > SC_ADV_MAX_EPSILONS)
    st = sc_error_set (err, SC_ERR_FORMAT, "adversarial study %lld: %d epsilons, its "
                       "parameters name %d", (long long) id, r->n_epsilons, n_eps);
  else
    {
      memcpy (sorted, eps, (size_t) n_eps * sizeof *sorted);
      qsort (sorted, (size_t) n_eps, sizeof *sorted, cmp_double);
      for (int e = 0; e < n_eps && st == SC_OK; e++)
        if (fabs (r->epsilon[e] - sorted[e]) > 1e-12 * sorted[e])
          st = sc_error_set (err, SC_ERR_FORMAT, "adversarial study %lld: epsilon %d is %g, "
                             "its parameters say %g", (long long) id, e, r->epsilon[e],
                             sorted[e]);
    }
  if (st != SC_OK)
    {
      sc_adv_result_free (r);
      return st;
    }
  if (study_id != NULL)
    *study_id = id;
  *out = r;
  return SC_OK;
}

static int
adv_n_tokens (const void *result)
{
  return ((const ScAdvResult *) result)->n_tokens;
}

static void
adv_clean (const void *result, ScStudyClean *out)
{
  const ScAdvResult *r = result;

  out->target = r->target;
  out->top1_clean = r->target;
  out->logp_clean = NAN;
  out->loss_clean = NAN;
}

static void
adv_free (void *result)
{
  sc_adv_result_free (result);
}

static const ScStudyOption ADV_OPTIONS[] = {
  { "layer", SC_STUDY_OPTION_INT, offsetof (ScAdvParams, layer), 0, 1 << 16, NULL,
    "the layer searched (0)" },
  { "head", SC_STUDY_OPTION_INT, offsetof (ScAdvParams, head), -1, 1 << 16, NULL,
    "one head, or -1: every head of the layer (the default)" },
  { "row", SC_STUDY_OPTION_INT, offsetof (ScAdvParams, row), SC_ADV_ALL_ROWS, 1 << 20, NULL,
    "the query row: an index from 1, -1 the last (default), -2 every row" },
  { "iterations", SC_STUDY_OPTION_INT, offsetof (ScAdvParams, iterations), 0, 1 << 20, NULL,
    "Adam steps per epsilon (0: 100)" },
  { "seed", SC_STUDY_OPTION_UINT64, offsetof (ScAdvParams, seed), 0, 0, NULL,
    "the start's noise seed (0)" },
  { NULL },
};

/* `saccade adversarial RUN --layer 0`'s defaults: every head of layer 0, the last row, the
 * default epsilons and iterations, seed 0 (the verb requires the layer). */
static const ScAdvParams ADV_DEFAULT = { .layer = 0, .head = -1, .row = -1 };

const ScStudyKind sc_study_kind_adversarial = {
  .id = SC_ADV_KIND,
  .name = "adversarial",
  .title = "Adversarial attention",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION | SC_STUDY_NEEDS_BACKWARD,
  .min_tokens = 2,
  .params_size = sizeof (ScAdvParams),
  .params_default = &ADV_DEFAULT,
  .options = ADV_OPTIONS,
  .params_json = adv_params_json,
  .run = adv_run,
  .store = adv_store,
  .load = adv_load,
  .result_n_tokens = adv_n_tokens,
  .result_clean = adv_clean,
  .result_free = adv_free,
};
