/* test-backend-grad.c — every backward op of the backend contract (sc-backend-impl.h,
 * "Backward ops") against central finite differences of a double-precision forward written
 * here, independently of the engine, and "cpu" against "cpu-ref".
 *
 * Method: for an op y = f(x) and a random direction r, the scalar L = sum r * y has
 * dL/dx = the op's backward with dy = r. The test evaluates L in double with its own
 * forward (the formulas of sc-backend-impl.h, nothing from the engine), perturbs one input
 * element by +-h (h = 1e-5 relative), and compares (L(x + h) - L(x - h)) / 2h, accurate to
 * ~1e-9 here, with what the backend returned in float: an element passes when
 * |got - fd| <= 2e-5 + 2e-4 |fd| (float rounding of sums over at most a few hundred terms).
 * Shapes are tiny (n <= 7, d <= 8) so every element is checked. rope and swiglu run twice:
 * as themselves and as their variants rope_neox (split-halves pairs) and geglu (gelu gate).
 * Then the same inputs through "cpu" and "cpu-ref" must agree within 1e-5 + 1e-4 |ref|
 * (the fast path's sgemm sums in float in another order).
 *
 * Attention runs over the options it has: causal and not, a window, masked keys (with a
 * row whose keys are all masked), head scales, grouped-query heads (4 query heads over 2 KV
 * heads), and a detached head (probabilities set from outside: no gradient to q and k).
 */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/backend/sc-backend-impl.h"
#include "engine/core/sc-math.h"

static const double FD_ABS = 2e-5, FD_REL = 2e-4;
static const double X_ABS = 1e-5, X_REL = 1e-4;

static ScBackend *cpu, *ref;

static guint32 rng_state;

static double
rnd (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return ((rng_state >> 8) / 16777216.0) * 2.0 - 1.0;
}

static void
fill (float *x, size_t n, double scale)
{
  size_t i;
  for (i = 0; i < n; i++)
    x[i] = (float) (rnd () * scale);
}

static void
check_close (const char *what, const float *got, const double *want, size_t n, double abs_tol,
             double rel_tol)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (!(fabs (got[i] - want[i]) <= abs_tol + rel_tol * fabs (want[i])))
      g_error ("%s[%zu]: got %.9g, want %.9g", what, i, got[i], want[i]);
}

static void
check_backends (const char *what, const float *a, const float *b, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (!(fabs (a[i] - b[i]) <= X_ABS + X_REL * fabs (b[i])))
      g_error ("%s[%zu]: cpu %.9g, cpu-ref %.9g", what, i, a[i], b[i]);
}

/* The central difference of @L at @x[i] (a float input, perturbed in double through the
 * shadow @xd the forward reads). */
typedef double (*Objective) (const double *x, void *user);

static void
fd_gradient (Objective L, double *xd, size_t n, void *user, double *out)
{
  size_t i;
  for (i = 0; i < n; i++)
    {
      const double x0 = xd[i], h = 1e-5 * fmax (1.0, fabs (x0));
      double up, down;
      xd[i] = x0 + h;
      up = L (xd, user);
      xd[i] = x0 - h;
      down = L (xd, user);
      xd[i] = x0;
      out[i] = (up - down) / (2 * h);
    }
}

static double *
to_double (const float *x, size_t n)
{
  double *d = g_new (double, n);
  size_t i;
  for (i = 0; i < n; i++)
    d[i] = x[i];
  return d;
}

/* ---- matmul ------------------------------------------------------------------------- */

typedef struct {
  int n, in, out;
  const double *w, *r;
} MatmulCase;

static double
matmul_L (const double *x, void *user)
{
  const MatmulCase *c = user;
  double L = 0.0;
  int i, o, k;
  for (i = 0; i < c->n; i++)
    for (o = 0; o < c->out; o++)
      {
        double y = 0.0;
        for (k = 0; k < c->in; k++)
          y += x[i * c->in + k] * c->w[o * c->in + k];
        L += c->r[i * c->out + o] * y;
      }
  return L;
}

static void
test_matmul (void)
{
  enum { N = 5, IN = 7, OUT = 6 };
  float x[N * IN], w[OUT * IN], r[N * OUT], got[N * IN], got_ref[N * IN], acc[N * IN];
  double fd[N * IN], *xd, *wd, *rd;
  MatmulCase c;
  int i;

  rng_state = 11;
  fill (x, N * IN, 1.0);
  fill (w, OUT * IN, 1.0);
  fill (r, N * OUT, 1.0);
  xd = to_double (x, N * IN);
  wd = to_double (w, OUT * IN);
  rd = to_double (r, N * OUT);
  c = (MatmulCase) { N, IN, OUT, wd, rd };
  fd_gradient (matmul_L, xd, N * IN, &c, fd);
  g_assert_cmpint (cpu->ops->matmul_backward (cpu, got, r, w, N, IN, OUT, false, NULL), ==, SC_OK);
  g_assert_cmpint (ref->ops->matmul_backward (ref, got_ref, r, w, N, IN, OUT, false, NULL), ==,
                   SC_OK);
  check_close ("matmul dx (cpu)", got, fd, N * IN, FD_ABS, FD_REL);
  check_close ("matmul dx (cpu-ref)", got_ref, fd, N * IN, FD_ABS, FD_REL);
  check_backends ("matmul dx", got, got_ref, N * IN);
  /* accumulate adds to what is there */
  for (i = 0; i < N * IN; i++)
    acc[i] = 1.0f;
  g_assert_cmpint (cpu->ops->matmul_backward (cpu, acc, r, w, N, IN, OUT, true, NULL), ==, SC_OK);
  for (i = 0; i < N * IN; i++)
    fd[i] += 1.0;
  check_close ("matmul dx accumulated", acc, fd, N * IN, FD_ABS, FD_REL);
  g_free (xd);
  g_free (wd);
  g_free (rd);
}

/* ---- rmsnorm ------------------------------------------------------------------------ */

typedef struct {
  int n, dim;
  double eps;
  const double *w, *r;
} RmsCase;

static double
rms_L (const double *x, void *user)
{
  const RmsCase *c = user;
  double L = 0.0;
  int i, k;
  for (i = 0; i < c->n; i++)
    {
      double ss = 0.0, s;
      for (k = 0; k < c->dim; k++)
        ss += x[i * c->dim + k] * x[i * c->dim + k];
      s = 1.0 / sqrt (ss / c->dim + c->eps);
      for (k = 0; k < c->dim; k++)
        L += c->r[i * c->dim + k] * x[i * c->dim + k] * s * c->w[k];
    }
  return L;
}

static void
test_rmsnorm (void)
{
  enum { N = 4, DIM = 9 };
  float x[N * DIM], w[DIM], r[N * DIM], got[N * DIM], got_ref[N * DIM];
  double fd[N * DIM], *xd, *wd, *rd;
  RmsCase c;

  rng_state = 12;
  fill (x, N * DIM, 2.0);
  fill (w, DIM, 1.5);
  fill (r, N * DIM, 1.0);
  x[0] = 1e-4f; /* a tiny element: the eps term matters for no row, but the shape does */
  xd = to_double (x, N * DIM);
  wd = to_double (w, DIM);
  rd = to_double (r, N * DIM);
  c = (RmsCase) { N, DIM, 1e-5, wd, rd };
  fd_gradient (rms_L, xd, N * DIM, &c, fd);
  g_assert_cmpint (cpu->ops->rmsnorm_backward (cpu, got, r, x, w, N, DIM, 1e-5f, false, NULL),
                   ==, SC_OK);
  g_assert_cmpint (ref->ops->rmsnorm_backward (ref, got_ref, r, x, w, N, DIM, 1e-5f, false,
                                               NULL), ==, SC_OK);
  check_close ("rmsnorm dx", got, fd, N * DIM, FD_ABS, FD_REL);
  check_backends ("rmsnorm dx", got, got_ref, N * DIM);
  g_free (xd);
  g_free (wd);
  g_free (rd);
}

/* ---- rope --------------------------------------------------------------------------- */

typedef struct {
  int n, heads, hd, n_rot, pos0;
  double base;
  const double *r;
  bool neox; /* pairs (k, k + n_rot/2) instead of (2k, 2k + 1) */
} RopeCase;

static double
rope_L (const double *x, void *user)
{
  const RopeCase *c = user;
  double L = 0.0;
  int i, h, k;
  for (i = 0; i < c->n; i++)
    for (h = 0; h < c->heads; h++)
      {
        const double *xh = x + (i * c->heads + h) * c->hd;
        const double *rh = c->r + (i * c->heads + h) * c->hd;
        for (k = 0; k < c->hd; k++)
          L += rh[k] * xh[k]; /* dims past n_rot pass through */
        for (k = 0; k < c->n_rot / 2; k++)
          {
            const double t = (c->pos0 + i) * pow (c->base, -2.0 * k / c->n_rot);
            const int ka = c->neox ? k : 2 * k, kb = c->neox ? k + c->n_rot / 2 : 2 * k + 1;
            const double a = xh[ka], b = xh[kb];
            L -= rh[ka] * a + rh[kb] * b;
            L += rh[ka] * (a * cos (t) - b * sin (t)) + rh[kb] * (a * sin (t) + b * cos (t));
          }
      }
  return L;
}

/* @user: non-NULL for rope_neox's backward (split-halves pairs), NULL for rope's */
static void
test_rope (gconstpointer user)
{
  enum { N = 5, HEADS = 3, HD = 8, NROT = 6, SIZE = N * HEADS * HD };
  const bool neox = user != NULL;
  ScStatus (*back) (ScBackend *, float *, int, int, int, int, int, float, ScError *)
    = neox ? cpu->ops->rope_neox_backward : cpu->ops->rope_backward;
  ScStatus (*back_ref) (ScBackend *, float *, int, int, int, int, int, float, ScError *)
    = neox ? ref->ops->rope_neox_backward : ref->ops->rope_backward;
  ScStatus (*fwd) (ScBackend *, float *, int, int, int, int, int, float, ScError *)
    = neox ? cpu->ops->rope_neox : cpu->ops->rope;
  float r[SIZE], got[SIZE], got_ref[SIZE], x[SIZE];
  double fd[SIZE], *xd, *rd;
  RopeCase c;

  rng_state = 13;
  fill (x, SIZE, 1.0);
  fill (r, SIZE, 1.0);
  xd = to_double (x, SIZE);
  rd = to_double (r, SIZE);
  c = (RopeCase) { N, HEADS, HD, NROT, 3, 10000.0, rd, neox };
  fd_gradient (rope_L, xd, SIZE, &c, fd);
  memcpy (got, r, sizeof r);
  memcpy (got_ref, r, sizeof r);
  g_assert_nonnull (back);
  g_assert_nonnull (back_ref);
  g_assert_cmpint (back (cpu, got, N, HEADS, HD, NROT, 3, 10000.0f, NULL), ==, SC_OK);
  g_assert_cmpint (back_ref (ref, got_ref, N, HEADS, HD, NROT, 3, 10000.0f, NULL), ==, SC_OK);
  check_close ("rope dx", got, fd, SIZE, FD_ABS, FD_REL);
  check_backends ("rope dx", got, got_ref, SIZE);
  /* the backward undoes the forward (a rotation's transpose is its inverse) */
  g_assert_cmpint (fwd (cpu, got, N, HEADS, HD, NROT, 3, 10000.0f, NULL), ==, SC_OK);
  {
    double rr[SIZE];
    int i;
    for (i = 0; i < SIZE; i++)
      rr[i] = r[i];
    check_close ("rope (rope_backward (r))", got, rr, SIZE, 1e-6, 1e-6);
  }
  g_free (xd);
  g_free (rd);
}

/* ---- swiglu ------------------------------------------------------------------------- */

typedef struct {
  int n, f;
  const double *r;
  bool gelu; /* geglu: gelu (tanh form) of the gate instead of silu */
} SwigluCase;

static double
swiglu_L (const double *gu, void *user)
{
  const SwigluCase *c = user;
  double L = 0.0;
  int i, k;
  for (i = 0; i < c->n; i++)
    for (k = 0; k < c->f; k++)
      {
        const double g = gu[i * 2 * c->f + k], u = gu[i * 2 * c->f + c->f + k];
        const double act = c->gelu ? 0.5 * g * (1.0 + tanh (0.7978845608028654
                                                             * (g + 0.044715 * g * g * g)))
                                   : g / (1.0 + exp (-g));
        L += c->r[i * c->f + k] * act * u;
      }
  return L;
}

/* @user: non-NULL for geglu's backward, NULL for swiglu's */
static void
test_swiglu (gconstpointer user)
{
  enum { N = 3, F = 7 };
  const bool gelu = user != NULL;
  ScStatus (*back) (ScBackend *, float *, const float *, const float *, int, int, ScError *)
    = gelu ? cpu->ops->geglu_backward : cpu->ops->swiglu_backward;
  ScStatus (*back_ref) (ScBackend *, float *, const float *, const float *, int, int, ScError *)
    = gelu ? ref->ops->geglu_backward : ref->ops->swiglu_backward;
  const char *what = gelu ? "geglu dgu" : "swiglu dgu";
  float gu[N * 2 * F], r[N * F], got[N * 2 * F], got_ref[N * 2 * F];
  double fd[N * 2 * F], *gd, *rd;
  SwigluCase c;

  rng_state = 14;
  fill (gu, N * 2 * F, 4.0);
  fill (r, N * F, 1.0);
  gd = to_double (gu, N * 2 * F);
  rd = to_double (r, N * F);
  c = (SwigluCase) { N, F, rd, gelu };
  fd_gradient (swiglu_L, gd, N * 2 * F, &c, fd);
  g_assert_nonnull (back);
  g_assert_nonnull (back_ref);
  g_assert_cmpint (back (cpu, got, r, gu, N, F, NULL), ==, SC_OK);
  g_assert_cmpint (back_ref (ref, got_ref, r, gu, N, F, NULL), ==, SC_OK);
  check_close (what, got, fd, N * 2 * F, FD_ABS, FD_REL);
  check_backends (what, got, got_ref, N * 2 * F);
  g_free (gd);
  g_free (rd);
}

/* ---- get_rows ----------------------------------------------------------------------- */

static void
test_get_rows (void)
{
  enum { V = 6, DIM = 4, N = 5 };
  const int32_t ids[N] = { 3, 0, 3, 5, 3 }; /* a repeated id adds up */
  float table[V * DIM] = { 0 }, dy[N * DIM], y[N * DIM];
  double want[V * DIM] = { 0 };
  int i, c;

  rng_state = 15;
  fill (dy, N * DIM, 1.0);
  for (i = 0; i < N; i++)
    for (c = 0; c < DIM; c++)
      want[ids[i] * DIM + c] += dy[i * DIM + c];
  g_assert_cmpint (cpu->ops->get_rows_backward (cpu, table, dy, ids, N, DIM, NULL), ==, SC_OK);
  check_close ("get_rows dtable", table, want, V * DIM, 1e-6, 1e-6);
  /* and it is the transpose of get_rows: <dy, get_rows (T)> = <get_rows_backward (dy), T> */
  fill (table, V * DIM, 1.0);
  g_assert_cmpint (cpu->ops->get_rows (cpu, y, table, ids, N, DIM, NULL), ==, SC_OK);
  {
    double lhs = 0.0, rhs = 0.0;
    for (i = 0; i < N * DIM; i++)
      lhs += (double) dy[i] * y[i];
    for (i = 0; i < V * DIM; i++)
      rhs += want[i] * table[i];
    g_assert_cmpfloat (fabs (lhs - rhs), <=, 1e-5 * (1.0 + fabs (lhs)));
  }
}

/* ---- attention ---------------------------------------------------------------------- */

typedef struct {
  const char *name;
  bool causal;
  int window;
  bool mask;       /* mask keys 1 and 2 (row 1 and 2 of a causal head: row 2 keeps 0) */
  bool mask_all;   /* mask keys 0..1: row 1 of a causal head has every key masked */
  bool scales;     /* head scales 0.5, 1, 2, -1 */
  bool detach;     /* head 1 detached */
  float softcap;   /* > 0: Gemma 2's capped scores, cap tanh(s / cap) */
} AttnCase;

enum { AN = 6, AH = 4, AKV = 2, AD = 5, AQ = AH * AD, AKVW = AKV * AD };

typedef struct {
  const AttnCase *ac;
  ScAttnParams p;
  uint8_t detached[AH];
  const double *r;          /* (AN, AQ) */
  const float *fixed_probs; /* the detached heads' P, held fixed */
  int which;                /* 0: q, 1: k, 2: v varies (the others fixed below) */
  const double *q, *k, *v;
} AttnFd;

/* L = sum r * out, out = hs P V, P = softmax (scale q k^T, capped as cap tanh(s / cap) with a
 * soft-cap) over the visible keys — the formulas of sc-backend-impl.h in double, with the
 * masking rule spelled out here. */
static bool
visible (const AttnFd *a, int i, int j)
{
  int lo, hi, t;
  bool all = true;

  sc_attn_key_range (i, AN, a->p.causal, a->p.window, &lo, &hi);
  if (j < lo || j > hi)
    return false;
  if (a->p.key_mask == NULL)
    return true;
  for (t = lo; t <= hi; t++)
    if (!a->p.key_mask[t])
      all = false;
  return all ? j == i : !a->p.key_mask[j];
}

static void
attn_forward_d (const AttnFd *a, const double *q, const double *k, const double *v, double *out,
                double *P /* (AH, AN, AN) or NULL */)
{
  int h, i, j, c;
  for (h = 0; h < AH; h++)
    for (i = 0; i < AN; i++)
      {
        const int g = h / (AH / AKV);
        const double hs = a->p.head_scale != NULL ? a->p.head_scale[h] : 1.0;
        double s[AN], mx = -INFINITY, sum = 0.0;
        for (j = 0; j < AN; j++)
          {
            s[j] = 0.0;
            if (!visible (a, i, j))
              continue;
            for (c = 0; c < AD; c++)
              s[j] += q[i * AQ + h * AD + c] * k[j * AKVW + g * AD + c];
            s[j] *= a->p.scale;
            if (a->p.softcap > 0.0f)
              s[j] = a->p.softcap * tanh (s[j] / a->p.softcap);
            mx = fmax (mx, s[j]);
          }
        for (j = 0; j < AN; j++)
          {
            s[j] = visible (a, i, j) ? exp (s[j] - mx) : 0.0;
            sum += s[j];
          }
        for (j = 0; j < AN; j++)
          {
            s[j] /= sum;
            if (a->detached[h])
              s[j] = a->fixed_probs[(h * AN + i) * AN + j];
            if (P != NULL)
              P[(h * AN + i) * AN + j] = s[j];
          }
        for (c = 0; c < AD; c++)
          {
            double o = 0.0;
            for (j = 0; j < AN; j++)
              o += s[j] * v[j * AKVW + g * AD + c];
            out[i * AQ + h * AD + c] = hs * o;
          }
      }
}

static double
attn_L (const double *x, void *user)
{
  const AttnFd *a = user;
  double out[AN * AQ], L = 0.0;
  int t;
  attn_forward_d (a, a->which == 0 ? x : a->q, a->which == 1 ? x : a->k, a->which == 2 ? x : a->v,
                  out, NULL);
  for (t = 0; t < AN * AQ; t++)
    L += a->r[t] * out[t];
  return L;
}

static void
test_attention (gconstpointer data)
{
  const AttnCase *ac = data;
  const float scales[AH] = { 0.5f, 1.0f, 2.0f, -1.0f };
  uint8_t key_mask[AN] = { 0 };
  float q[AN * AQ], k[AN * AKVW], v[AN * AKVW], r[AN * AQ], out[AN * AQ], probs[AH * AN * AN];
  float dq[2][AN * AQ], dk[2][AN * AKVW], dv[2][AN * AKVW], dP[2][AH * AN * AN];
  double fdq[AN * AQ], fdk[AN * AKVW], fdv[AN * AKVW], dP_want[AH * AN * AN];
  double *qd, *kd, *vd, *rd;
  AttnFd a = { ac };
  int h, i, j, c, t;

  rng_state = 16 + (guint32) strlen (ac->name);
  fill (q, AN * AQ, 1.5);
  fill (k, AN * AKVW, 1.5);
  fill (v, AN * AKVW, 1.0);
  fill (r, AN * AQ, 1.0);
  if (ac->mask)
    key_mask[1] = key_mask[2] = 1;
  if (ac->mask_all)
    key_mask[0] = key_mask[1] = 1;
  a.p = (ScAttnParams) { .scale = 1.0f / sqrtf ((float) AD), .causal = ac->causal,
                         .window = ac->window,
                         .key_mask = ac->mask || ac->mask_all ? key_mask : NULL,
                         .head_scale = ac->scales ? scales : NULL, .softcap = ac->softcap };
  if (ac->detach)
    a.detached[1] = 1;
  /* the forward through the engine gives the P the backward is handed */
  g_assert_cmpint (sc_backend_attention (ref, out, probs, q, k, v, AN, AN, AH, AKV, AD, &a.p, NULL),
                   ==, SC_OK);
  qd = to_double (q, AN * AQ);
  kd = to_double (k, AN * AKVW);
  vd = to_double (v, AN * AKVW);
  rd = to_double (r, AN * AQ);
  a.r = rd;
  a.fixed_probs = probs;
  a.q = qd;
  a.k = kd;
  a.v = vd;
  a.which = 0;
  fd_gradient (attn_L, qd, AN * AQ, &a, fdq);
  a.which = 1;
  fd_gradient (attn_L, kd, AN * AKVW, &a, fdk);
  a.which = 2;
  fd_gradient (attn_L, vd, AN * AKVW, &a, fdv);
  /* dL/dP (P as a free variable) = hs r_i . v_j on visible keys, 0 elsewhere */
  for (h = 0; h < AH; h++)
    for (i = 0; i < AN; i++)
      for (j = 0; j < AN; j++)
        {
          double s = 0.0;
          const int g = h / (AH / AKV);
          if (visible (&a, i, j))
            for (c = 0; c < AD; c++)
              s += rd[i * AQ + h * AD + c] * vd[j * AKVW + g * AD + c];
          dP_want[(h * AN + i) * AN + j] = (ac->scales ? scales[h] : 1.0) * s;
        }

  for (t = 0; t < 2; t++)
    {
      ScBackend *b = t == 0 ? cpu : ref;
      g_assert_cmpint (b->ops->attention_backward (b, dq[t], dk[t], dv[t], dP[t], r, q, k, v, probs,
                                                   AN, AH, AKV, AD, &a.p,
                                                   ac->detach ? a.detached : NULL, NULL),
                       ==, SC_OK);
      check_close (t == 0 ? "dq (cpu)" : "dq (cpu-ref)", dq[t], fdq, AN * AQ, FD_ABS, FD_REL);
      check_close (t == 0 ? "dk (cpu)" : "dk (cpu-ref)", dk[t], fdk, AN * AKVW, FD_ABS, FD_REL);
      check_close (t == 0 ? "dv (cpu)" : "dv (cpu-ref)", dv[t], fdv, AN * AKVW, FD_ABS, FD_REL);
      check_close (t == 0 ? "dprobs (cpu)" : "dprobs (cpu-ref)", dP[t], dP_want, AH * AN * AN,
                   FD_ABS, FD_REL);
      /* exactly 0 off the visible keys */
      for (h = 0; h < AH; h++)
        for (i = 0; i < AN; i++)
          for (j = 0; j < AN; j++)
            if (!visible (&a, i, j))
              g_assert_cmpfloat (dP[t][(h * AN + i) * AN + j], ==, 0.0f);
    }
  check_backends ("dq", dq[0], dq[1], AN * AQ);
  check_backends ("dk", dk[0], dk[1], AN * AKVW);
  check_backends ("dv", dv[0], dv[1], AN * AKVW);
  check_backends ("dprobs", dP[0], dP[1], AH * AN * AN);
  if (ac->detach)
    for (i = 0; i < AN; i++)
      for (c = 0; c < AD; c++)
        g_assert_cmpfloat (dq[0][i * AQ + 1 * AD + c], ==, 0.0f);
  g_free (qd);
  g_free (kd);
  g_free (vd);
  g_free (rd);
}

static const AttnCase attn_cases[] = {
  { "causal", true, 0, false, false, false, false },
  { "noncausal", false, 0, false, false, false, false },
  { "window", true, 3, false, false, false, false },
  { "masked", true, 0, true, false, false, false },
  { "all-masked-row", true, 0, false, true, false, false },
  { "head-scales", true, 0, false, false, true, false },
  { "detached", true, 0, false, false, true, true },
  /* scores of std ~2 against a cap of 1.5: tanh bends every one of them */
  { "softcap", true, 0, false, false, false, false, 1.5f },
  { "softcap-window-masked", true, 3, true, false, true, false, 1.5f },
};

/* A backend without the backward ops says so, naming itself. */
static void
test_check_backward (void)
{
  ScError err = { SC_OK, "" };
  ScBackendOps ops = *cpu->ops;
  ScBackend fake = *cpu;

  g_assert_cmpint (sc_backend_check_backward (cpu, NULL), ==, SC_OK);
  g_assert_cmpint (sc_backend_check_backward (ref, NULL), ==, SC_OK);
  ops.name = "lacking";
  ops.attention_backward = NULL;
  fake.ops = &ops;
  g_assert_cmpint (sc_backend_check_backward (&fake, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "'lacking'"));
  g_assert_nonnull (strstr (err.message, "backward"));
}

int
main (int argc, char **argv)
{
  ScError err = { SC_OK, "" };
  size_t i;
  int rc;

  g_test_init (&argc, &argv, NULL);
  cpu = sc_backend_cpu_new (2, &err);
  ref = sc_backend_cpu_ref_new ();
  if (cpu == NULL || ref == NULL)
    g_error ("backends: %s", err.message);
  g_test_add_func ("/backend-grad/matmul", test_matmul);
  g_test_add_func ("/backend-grad/rmsnorm", test_rmsnorm);
  g_test_add_data_func ("/backend-grad/rope", NULL, test_rope);
  g_test_add_data_func ("/backend-grad/rope-neox", "neox", test_rope);
  g_test_add_data_func ("/backend-grad/swiglu", NULL, test_swiglu);
  g_test_add_data_func ("/backend-grad/geglu", "gelu", test_swiglu);
  g_test_add_func ("/backend-grad/get-rows", test_get_rows);
  g_test_add_func ("/backend-grad/check-backward", test_check_backward);
  for (i = 0; i < G_N_ELEMENTS (attn_cases); i++)
    {
      char *path = g_strdup_printf ("/backend-grad/attention/%s", attn_cases[i].name);
      g_test_add_data_func (path, &attn_cases[i], test_attention);
      g_free (path);
    }
  rc = g_test_run ();
  sc_backend_free (cpu);
  sc_backend_free (ref);
  return rc;
}
