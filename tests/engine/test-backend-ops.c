/* test-backend-ops.c — every backend op, required and optional, against the scalar
 * reference backend "cpu-ref", in the manner of ggml's tests/test-backend-ops.cpp.
 *
 * Two tables drive it:
 *   - backends: each backend under test: "cpu", and "cuda" when the build has the CUDA
 *     backend (SC_HAVE_CUDA), whose cases skip when the machine has no device;
 *   - cases: an op with a shape (odd sizes, threaded sizes, a KV cache with n_q < n_k,
 *     masked keys, head scales, causal / non-causal / windowed attention), and the
 *     tolerance its output is held to, with the reason for it.
 * Each (backend, case) pair is one GTest case, /backend-ops/<backend>/<case>. Inputs are
 * random from a fixed seed per case, built on the host and uploaded, so a device backend
 * runs the same harness. An element passes when |got - ref| <= abs + rel * |ref|; where a
 * case sets nmse, the whole output must also have sum (got - ref)^2 / sum ref^2 <= nmse.
 * Attention is also held to its exact zeros: every probability the reference leaves at 0
 * (causal, window, masked keys) must be exactly 0.
 *
 * The contract itself is checked too: a backend's caps agree with its ops table, and a
 * backend without an optional op or attention option reports SC_ERR_UNSUPPORTED naming it,
 * as sc_backend_attention() reports arguments out of contract.
 */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/backend/sc-backend-impl.h"
#include "engine/core/sc-math.h"
#ifdef SC_HAVE_CUDA
#include "cuda/sc-backend-cuda.h"
#endif

/* ------------------------------------------------------------------------------------ */
/* The backends under test                                                               */

typedef struct {
  const char *name;
  ScBackend *(*make) (void);
  bool fp16_matmul; /* rounds matmul's inputs to fp16: held to TOL_MATMUL_FP16 instead */
} BackendEntry;

static ScBackend *
make_cpu (void)
{
  ScError err = { SC_OK, "" };
  ScBackend *b = sc_backend_cpu_new (2, &err);

  if (b == NULL)
    g_error ("cpu backend: %s", err.message);
  return b;
}

#ifdef SC_HAVE_CUDA
/* NULL (every case then skips) when the machine has no CUDA device. */
static ScBackend *
make_cuda (void)
{
  ScError err = { SC_OK, "" };
  ScBackend *b = sc_backend_cuda_new (0, &err);

  if (b == NULL && err.status != SC_ERR_UNSUPPORTED)
    g_error ("cuda backend: %s", err.message);
  return b;
}
#endif

static const BackendEntry backends[] = {
  { "cpu", make_cpu, false },
#ifdef SC_HAVE_CUDA
  { "cuda", make_cuda, true },
#endif
};

/* ------------------------------------------------------------------------------------ */
/* The cases                                                                             */

typedef enum {
  OP_GET_ROWS,
  OP_RMSNORM,
  OP_MATMUL,
  OP_ROPE,
  OP_ATTENTION,
  OP_SWIGLU,
  OP_ADD,
  OP_COPY,
  OP_COPY_2D,
  OP_LAYER_NORM, /* optional */
  OP_GELU,       /* optional */
  OP_GEGLU,      /* optional */
  OP_ADD_BIAS,   /* optional */
  OP_ROPE_NEOX,  /* optional */
  OP_SCALE,      /* optional */
} Op;

typedef struct {
  double abs, rel; /* per element: |got - ref| <= abs + rel * |ref| */
  double nmse;     /* > 0: also sum (got - ref)^2 / sum ref^2 <= nmse over the output */
} Tol;

/* Copies, gathers, one float addition per element: correctly rounded on any backend. */
#define TOL_EXACT { 0.0, 0.0, 0.0 }
/* Row reductions in double, then a float scale (rmsnorm, layer_norm), RoPE from angles
 * computed in double, silu/gelu with libm: a few float roundings apart from the double
 * reference, ~4 ulp; 1e-6 absolute covers values near 0, where rel means nothing. */
#define TOL_ELEMENTWISE { 1e-6, 1e-6, 0.0 }
/* A float dot product of `in` terms with |x|, |w| <= 1 (sgemm accumulates in float, in
 * blocks) against double: the error grows like sqrt(in) * 6e-8 * |term| on average, up to
 * ~1e-5 at in = 1536; the NMSE bound catches a systematic error the per-element bound
 * would let through. */
#define TOL_MATMUL { 2e-5, 1e-5, 1e-10 }
/* The same with both inputs rounded to fp16 first (the CUDA backend's cuBLAS GEMM, fp32
 * accumulation): each product is off by up to 2^-10 relative, random in sign, so the error
 * of a sum grows like sqrt(in). Simulating exactly that rounding on these cases' shapes and
 * inputs (numpy, float16 inputs, float64 sums) gave at most 0.0125 (in = 1536) and NMSE
 * 6.7e-8; the bounds are twice and ~20 times those. */
#define TOL_MATMUL_FP16 { 2.5e-2, 1e-2, 1.2e-6 }
/* Attention: float scores (d <= 64 terms), sc_expf (<= 2 ulp of expf) and float output
 * sums over n_k <= 128 keys, against double with libm's expf: the fast CPU path stays
 * within ~3e-7 of the reference for probabilities in [0, 1] and outputs of |v| <= 1, NMSE
 * ~1e-14; these bounds leave it a margin of ~5 (and a GPU's different summation order). */
#define TOL_ATTN { 2e-6, 4e-6, 1e-11 }

typedef struct {
  const char *name;
  Op op;
  /* shapes (row-major, as in sc-backend-impl.h); unused fields stay 0 */
  int n;           /* rows (queries for attention) */
  int dim;         /* columns: rmsnorm, layer_norm, get_rows, add_bias; f for swiglu/geglu */
  int in, out;     /* matmul */
  bool accumulate; /* matmul adds into y */
  int heads, kv, hd, n_rot, pos0; /* rope (heads, hd, n_rot, pos0), attention (heads, kv, hd) */
  int n_k;         /* attention: keys (n <= n_k) */
  bool noncausal;  /* attention: every key (the zero value is causal, the llama default) */
  int window;      /* attention: sliding window, 0 = none */
  bool masked;     /* attention: mask some keys (including key 0 and, for the last query
                    * rows of a windowed case, every key in the window) */
  bool head_scaled; /* attention: per-head output scales, one of them 0 */
  bool no_bias;    /* layer_norm without bias */
  int ld_src, ld_dst; /* copy_2d */
  double range;    /* inputs uniform in [-range, range] (default 1) */
  double offset;   /* added to every input (a row mean far from 0, for layer_norm) */
  Tol tol;         /* the main output */
  Tol tol_probs;   /* attention's probabilities */
} OpCase;

static const OpCase cases[] = {
  { "get_rows", OP_GET_ROWS, .n = 9, .dim = 24, .n_k = 50, .tol = TOL_EXACT },
  { "rmsnorm/5x7", OP_RMSNORM, .n = 5, .dim = 7, .tol = TOL_ELEMENTWISE },
  { "rmsnorm/200x576-threaded", OP_RMSNORM, .n = 200, .dim = 576, .range = 3,
    .tol = TOL_ELEMENTWISE },
  { "matmul/1x576x1536-gemv", OP_MATMUL, .n = 1, .in = 576, .out = 1536, .tol = TOL_MATMUL },
  { "matmul/7x33x65-odd", OP_MATMUL, .n = 7, .in = 33, .out = 65, .tol = TOL_MATMUL },
  { "matmul/7x33x65-accumulate", OP_MATMUL, .n = 7, .in = 33, .out = 65, .accumulate = true,
    .tol = TOL_MATMUL },
  { "matmul/130x300x900-threaded", OP_MATMUL, .n = 130, .in = 300, .out = 900,
    .tol = TOL_MATMUL },
  { "matmul/3x1536x577-accumulate", OP_MATMUL, .n = 3, .in = 1536, .out = 577,
    .accumulate = true, .tol = TOL_MATMUL },
  { "rope/9x3x8-full", OP_ROPE, .n = 9, .heads = 3, .hd = 8, .n_rot = 8, .tol = TOL_ELEMENTWISE },
  /* partial rotation far along the sequence: angles up to 1003 rad */
  { "rope/4x2x64-partial-pos1000", OP_ROPE, .n = 4, .heads = 2, .hd = 64, .n_rot = 32,
    .pos0 = 1000, .tol = TOL_ELEMENTWISE },
  { "attention/causal-13-gqa", OP_ATTENTION, .n = 13, .n_k = 13, .heads = 6, .kv = 2, .hd = 16,
    .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/causal-cache-5of37", OP_ATTENTION, .n = 5, .n_k = 37, .heads = 4, .kv = 4,
    .hd = 8, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/causal-decode-1of50", OP_ATTENTION, .n = 1, .n_k = 50, .heads = 9, .kv = 3,
    .hd = 64, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/causal-masked-scaled", OP_ATTENTION, .n = 11, .n_k = 11, .heads = 4, .kv = 2,
    .hd = 8, .masked = true, .head_scaled = true, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/causal-cache-masked-6of30", OP_ATTENTION, .n = 6, .n_k = 30, .heads = 3,
    .kv = 1, .hd = 16, .masked = true, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  /* 128 x 128 x 64 x 8 multiply-adds: the fast kernel runs one pool task per head */
  { "attention/causal-128-threaded", OP_ATTENTION, .n = 128, .n_k = 128, .heads = 8, .kv = 2,
    .hd = 64, .range = 2, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/noncausal-11-mqa", OP_ATTENTION, .n = 11, .n_k = 11, .heads = 4, .kv = 1,
    .hd = 32, .noncausal = true, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/noncausal-masked-scaled", OP_ATTENTION, .n = 9, .n_k = 9, .heads = 2, .kv = 2,
    .hd = 8, .noncausal = true, .masked = true, .head_scaled = true, .tol = TOL_ATTN,
    .tol_probs = TOL_ATTN },
  { "attention/window4-23", OP_ATTENTION, .n = 23, .n_k = 23, .heads = 4, .kv = 2, .hd = 8,
    .window = 4, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/window9-cache-7of40-masked", OP_ATTENTION, .n = 7, .n_k = 40, .heads = 2,
    .kv = 1, .hd = 16, .window = 9, .masked = true, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/window1-self-only", OP_ATTENTION, .n = 6, .n_k = 6, .heads = 2, .kv = 2, .hd = 4,
    .window = 1, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/noncausal-window5", OP_ATTENTION, .n = 10, .n_k = 10, .heads = 2, .kv = 1,
    .hd = 8, .noncausal = true, .window = 5, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "attention/window16-128-threaded", OP_ATTENTION, .n = 128, .n_k = 128, .heads = 8, .kv = 2,
    .hd = 64, .window = 16, .masked = true, .tol = TOL_ATTN, .tol_probs = TOL_ATTN },
  { "swiglu/3x17", OP_SWIGLU, .n = 3, .dim = 17, .range = 4, .tol = TOL_ELEMENTWISE },
  { "swiglu/70x1536-threaded", OP_SWIGLU, .n = 70, .dim = 1536, .range = 4,
    .tol = TOL_ELEMENTWISE },
  /* NeoX pairs (c, c + n_rot/2), Gemma's: the CPU backends share one implementation (checked
   * against hand-worked values in test-gemma3), so these cases hold a device backend to it */
  { "rope_neox/9x3x8-full", OP_ROPE_NEOX, .n = 9, .heads = 3, .hd = 8, .n_rot = 8,
    .tol = TOL_ELEMENTWISE },
  { "rope_neox/4x1x256-pos1000", OP_ROPE_NEOX, .n = 4, .heads = 1, .hd = 256, .n_rot = 256,
    .pos0 = 1000, .tol = TOL_ELEMENTWISE },
  /* one float product per element, exact-rounded on every path */
  { "scale/1001", OP_SCALE, .n = 1001, .range = 4, .tol = TOL_EXACT },
  { "add/37", OP_ADD, .n = 37, .tol = TOL_EXACT },
  { "add/100000", OP_ADD, .n = 100000, .tol = TOL_EXACT },
  { "copy/129", OP_COPY, .n = 129, .tol = TOL_EXACT },
  { "copy_2d/5x7", OP_COPY_2D, .n = 5, .dim = 7, .ld_src = 19, .ld_dst = 11, .tol = TOL_EXACT },
  { "layer_norm/5x7", OP_LAYER_NORM, .n = 5, .dim = 7, .tol = TOL_ELEMENTWISE },
  { "layer_norm/100x768-threaded", OP_LAYER_NORM, .n = 100, .dim = 768, .range = 3,
    .tol = TOL_ELEMENTWISE },
  { "layer_norm/no-bias", OP_LAYER_NORM, .n = 4, .dim = 33, .no_bias = true,
    .tol = TOL_ELEMENTWISE },
  /* mean 100 and spread 1: a one-pass E[x^2] - E[x]^2 would lose ~8 digits here */
  { "layer_norm/offset-mean", OP_LAYER_NORM, .n = 6, .dim = 64, .offset = 100,
    .tol = TOL_ELEMENTWISE },
  { "gelu/1", OP_GELU, .n = 1, .range = 3, .tol = TOL_ELEMENTWISE },
  /* three blocks of 4096: threaded; +-6 covers both saturated tails of tanh */
  { "gelu/10001-threaded", OP_GELU, .n = 10001, .range = 6, .tol = TOL_ELEMENTWISE },
  { "geglu/3x17", OP_GEGLU, .n = 3, .dim = 17, .range = 4, .tol = TOL_ELEMENTWISE },
  { "geglu/64x512-threaded", OP_GEGLU, .n = 64, .dim = 512, .range = 4, .tol = TOL_ELEMENTWISE },
  { "add_bias/6x13", OP_ADD_BIAS, .n = 6, .dim = 13, .tol = TOL_EXACT },
};

/* ------------------------------------------------------------------------------------ */
/* Running a case                                                                        */

/* A case's host inputs, the same for every backend. */
typedef struct {
  float *a, *b, *c, *d; /* op operands, in the order the op takes them */
  size_t na, nb, nc, nd;
  int32_t *ids;
  uint8_t *mask;
  float *head_scale;
} Inputs;

/* What an op produced, downloaded to the host. */
typedef struct {
  float *out, *probs;
  size_t n_out, n_probs;
} Outputs;

static float *
random_floats (GRand *r, size_t n, double range, double offset)
{
  float *x = g_new (float, n);
  size_t i;

  for (i = 0; i < n; i++)
    x[i] = (float) (g_rand_double_range (r, -range, range) + offset);
  return x;
}

/* A case's seed: FNV-1a of its name (fixed here, not g_str_hash, whose algorithm GLib does
 * not promise), so adding a case does not change the others' inputs. */
static guint32
case_seed (const char *name)
{
  guint32 h = 2166136261u;

  for (; *name != '\0'; name++)
    h = (h ^ (guint8) *name) * 16777619u;
  return h;
}

static void
make_inputs (const OpCase *c, Inputs *in)
{
  GRand *r = g_rand_new_with_seed (case_seed (c->name));
  const double range = c->range > 0 ? c->range : 1.0;
  int i;

  memset (in, 0, sizeof *in);
  switch (c->op)
    {
    case OP_GET_ROWS:
      in->na = (size_t) c->n_k * c->dim; /* the table: n_k rows */
      in->ids = g_new (int32_t, c->n);
      for (i = 0; i < c->n; i++)
        in->ids[i] = g_rand_int_range (r, 0, c->n_k);
      break;
    case OP_RMSNORM:
    case OP_LAYER_NORM:
      in->na = (size_t) c->n * c->dim; /* x */
      in->nb = c->dim;                 /* w */
      in->nc = c->dim;                 /* bias */
      break;
    case OP_MATMUL:
      in->na = (size_t) c->n * c->in;   /* x */
      in->nb = (size_t) c->out * c->in; /* W */
      in->nc = (size_t) c->n * c->out;  /* y before accumulating */
      break;
    case OP_ROPE:
    case OP_ROPE_NEOX:
      in->na = (size_t) c->n * c->heads * c->hd;
      break;
    case OP_SCALE:
      in->na = c->n;
      break;
    case OP_ATTENTION:
      in->na = (size_t) c->n * c->heads * c->hd;  /* q */
      in->nb = (size_t) c->n_k * c->kv * c->hd;   /* k */
      in->nc = in->nb;                            /* v */
      if (c->masked)
        {
          in->mask = g_new0 (uint8_t, c->n_k);
          in->mask[0] = 1; /* the first key: a sink that is gone */
          for (i = 1; i < c->n_k; i++)
            in->mask[i] = g_rand_int_range (r, 0, 4) == 0;
          /* the last query row sees only masked keys (when a window is this small, or the
           * keys before it are masked): a row that attends to itself alone */
          if (c->window > 0)
            for (i = c->n_k - c->window; i < c->n_k; i++)
              if (i >= 0)
                in->mask[i] = 1;
        }
      if (c->head_scaled)
        {
          in->head_scale = g_new (float, c->heads);
          for (i = 0; i < c->heads; i++)
            in->head_scale[i] = i == 0 ? 0.0f : (float) g_rand_double_range (r, 0.25, 2.0);
        }
      break;
    case OP_SWIGLU:
    case OP_GEGLU:
      in->na = (size_t) c->n * 2 * c->dim; /* gu */
      break;
    case OP_ADD:
      in->na = c->n; /* y */
      in->nb = c->n; /* x */
      break;
    case OP_COPY:
      in->na = c->n;
      break;
    case OP_COPY_2D:
      in->na = (size_t) c->n * c->ld_src; /* src */
      in->nb = (size_t) c->n * c->ld_dst; /* dst before the copy */
      break;
    case OP_GELU:
      in->na = c->n;
      break;
    case OP_ADD_BIAS:
      in->na = (size_t) c->n * c->dim; /* y */
      in->nb = c->dim;                 /* bias */
      break;
    }
  if (in->na)
    in->a = random_floats (r, in->na, range, c->offset);
  if (in->nb)
    in->b = random_floats (r, in->nb, 1.0, 0.0);
  if (in->nc)
    in->c = random_floats (r, in->nc, 1.0, 0.0);
  g_rand_free (r);
}

static void
free_inputs (Inputs *in)
{
  g_free (in->a);
  g_free (in->b);
  g_free (in->c);
  g_free (in->d);
  g_free (in->ids);
  g_free (in->mask);
  g_free (in->head_scale);
}

static void
free_outputs (Outputs *o)
{
  g_free (o->out);
  g_free (o->probs);
}

/* A backend buffer holding @n host floats (NULL for n = 0). */
static float *
upload (ScBackend *b, const float *host, size_t n)
{
  ScError err = { SC_OK, "" };
  float *buf;

  if (n == 0)
    return NULL;
  buf = b->ops->alloc (b, n, &err);
  if (buf == NULL)
    g_error ("%s: alloc: %s", b->ops->name, err.message);
  if (host != NULL && b->ops->upload (b, buf, host, n, &err) != SC_OK)
    g_error ("%s: upload: %s", b->ops->name, err.message);
  return buf;
}

static float *
download (ScBackend *b, const float *buf, size_t n)
{
  ScError err = { SC_OK, "" };
  float *host = g_new (float, n);

  if (b->ops->download (b, host, buf, n, &err) != SC_OK)
    g_error ("%s: download: %s", b->ops->name, err.message);
  return host;
}

/* Runs case @c on @b; returns the op's status (with @err) and fills @o on success. */
static ScStatus
run_case (ScBackend *b, const OpCase *c, const Inputs *in, Outputs *o, ScError *err)
{
  float *a = upload (b, in->a, in->na), *bb = NULL, *cc = upload (b, in->c, in->nc);
  float *y = NULL, *probs = NULL;
  size_t n_y = 0, n_probs = 0;
  ScStatus st = SC_OK;

  /* a matmul's weight goes through weight(), the way the forward pass binds weights */
  if (c->op == OP_MATMUL)
    {
      const float *w = b->ops->weight (b, in->b, in->nb, err);
      if (w == NULL)
        g_error ("%s: weight: %s", b->ops->name, err->message);
      bb = (float *) w; /* read only below */
    }
  else
    bb = upload (b, in->b, in->nb);

  switch (c->op)
    {
    case OP_GET_ROWS:
      n_y = (size_t) c->n * c->dim;
      y = upload (b, NULL, n_y);
      st = b->ops->get_rows (b, y, a, in->ids, c->n, c->dim, err);
      break;
    case OP_RMSNORM:
      n_y = in->na;
      y = upload (b, NULL, n_y);
      st = b->ops->rmsnorm (b, y, a, bb, c->n, c->dim, 1e-5f, err);
      break;
    case OP_LAYER_NORM:
      n_y = in->na;
      y = upload (b, NULL, n_y);
      st = sc_backend_layer_norm (b, y, a, bb, c->no_bias ? NULL : cc, c->n, c->dim, 1e-5f, err);
      break;
    case OP_MATMUL:
      n_y = in->nc;
      y = cc, cc = NULL; /* y starts as the random c, which accumulate adds to */
      st = b->ops->matmul (b, y, a, bb, c->n, c->in, c->out, c->accumulate, err);
      break;
    case OP_ROPE:
      n_y = in->na;
      y = a, a = NULL; /* in place */
      st = b->ops->rope (b, y, c->n, c->heads, c->hd, c->n_rot, c->pos0, 10000.0f, err);
      break;
    case OP_ROPE_NEOX:
      n_y = in->na;
      y = a, a = NULL; /* in place */
      st = sc_backend_rope_neox (b, y, c->n, c->heads, c->hd, c->n_rot, c->pos0, 10000.0f, err);
      break;
    case OP_SCALE:
      n_y = in->na;
      y = upload (b, NULL, n_y);
      st = sc_backend_scale (b, y, a, 25.2982f /* sqrt (640), Gemma 3 270M's */, c->n, err);
      break;
    case OP_ATTENTION:
      {
        const ScAttnParams p = { .scale = 1.0f / sqrtf ((float) c->hd), .causal = !c->noncausal,
                                 .window = c->window, .key_mask = in->mask,
                                 .head_scale = in->head_scale };
        n_y = in->na;
        n_probs = (size_t) c->heads * c->n * c->n_k;
        y = upload (b, NULL, n_y);
        probs = upload (b, NULL, n_probs);
        st = sc_backend_attention (b, y, probs, a, bb, cc, c->n, c->n_k, c->heads, c->kv, c->hd,
                                   &p, err);
      }
      break;
    case OP_SWIGLU:
    case OP_GEGLU:
      n_y = (size_t) c->n * c->dim;
      y = upload (b, NULL, n_y);
      st = c->op == OP_SWIGLU ? b->ops->swiglu (b, y, a, c->n, c->dim, err)
                              : sc_backend_geglu (b, y, a, c->n, c->dim, err);
      break;
    case OP_ADD:
      n_y = in->na;
      y = a, a = NULL;
      st = b->ops->add (b, y, bb, c->n, err);
      break;
    case OP_COPY:
      n_y = in->na;
      y = upload (b, NULL, n_y);
      st = b->ops->copy (b, y, a, c->n, err);
      break;
    case OP_COPY_2D:
      n_y = in->nb;
      y = bb, bb = NULL; /* untouched parts of dst must survive */
      st = b->ops->copy_2d (b, y, c->ld_dst, a, c->ld_src, c->n, c->dim, err);
      break;
    case OP_GELU:
      n_y = in->na;
      y = upload (b, NULL, n_y);
      st = sc_backend_gelu (b, y, a, c->n, err);
      break;
    case OP_ADD_BIAS:
      n_y = in->na;
      y = a, a = NULL;
      st = sc_backend_add_bias (b, y, bb, c->n, c->dim, err);
      break;
    }
  if (st == SC_OK)
    {
      o->out = download (b, y, n_y);
      o->n_out = n_y;
      if (probs != NULL)
        {
          o->probs = download (b, probs, n_probs);
          o->n_probs = n_probs;
        }
    }
  if (a != NULL)
    b->ops->free (b, a);
  if (bb != NULL && c->op != OP_MATMUL)
    b->ops->free (b, bb);
  if (cc != NULL)
    b->ops->free (b, cc);
  if (y != NULL)
    b->ops->free (b, y);
  if (probs != NULL)
    b->ops->free (b, probs);
  return st;
}

/* Holds @got to @ref within @tol; @exact_zeros also demands got == 0 wherever ref == 0. */
static void
compare (const char *what, const float *got, const float *ref, size_t n, Tol tol,
         bool exact_zeros)
{
  double err2 = 0.0, ref2 = 0.0, worst = 0.0;
  size_t i, worst_i = 0;

  for (i = 0; i < n; i++)
    {
      const double d = fabs ((double) got[i] - ref[i]);
      const double allowed = tol.abs + tol.rel * fabs (ref[i]);

      if (!(d <= allowed)) /* NaN fails too */
        g_error ("%s[%zu]: got %.9g, reference %.9g (|diff| %.3g > %.3g)", what, i,
                 (double) got[i], (double) ref[i], d, allowed);
      if (exact_zeros && ref[i] == 0.0f && got[i] != 0.0f)
        g_error ("%s[%zu]: got %.9g where the reference has an exact 0 (a masked key)", what,
                 i, (double) got[i]);
      err2 += d * d;
      ref2 += (double) ref[i] * ref[i];
      if (allowed > 0 && d / allowed > worst)
        worst = d / allowed, worst_i = i;
    }
  if (tol.nmse > 0 && ref2 > 0 && err2 / ref2 > tol.nmse)
    g_error ("%s: normalised MSE %.3g > %.3g", what, err2 / ref2, tol.nmse);
  g_test_message ("%s: %zu values, worst at [%zu] %.2f of the tolerance, nmse %.3g", what, n,
                  worst_i, worst, ref2 > 0 ? err2 / ref2 : 0.0);
}

typedef struct {
  const BackendEntry *backend;
  const OpCase *c;
} Pair;

static ScBackend *reference; /* "cpu-ref", shared by every case */

static void
test_case (gconstpointer data)
{
  const Pair *pair = data;
  const OpCase *c = pair->c;
  ScBackend *b = pair->backend->make ();
  ScError err = { SC_OK, "" };
  Inputs in;
  Outputs want = { 0 }, got = { 0 };

  if (b == NULL)
    {
      g_test_skip ("backend not available on this machine");
      return;
    }
  make_inputs (c, &in);
  if (run_case (reference, c, &in, &want, &err) != SC_OK)
    g_error ("cpu-ref: %s: %s", c->name, err.message);
  if (run_case (b, c, &in, &got, &err) != SC_OK)
    g_error ("%s: %s: %s", b->ops->name, c->name, err.message);
  g_assert_cmpuint (got.n_out, ==, want.n_out);
  if (c->op == OP_MATMUL && pair->backend->fp16_matmul)
    compare ("out", got.out, want.out, want.n_out, (Tol) TOL_MATMUL_FP16, false);
  else
    compare ("out", got.out, want.out, want.n_out, c->tol, false);
  if (c->op == OP_ATTENTION)
    {
      compare ("probs", got.probs, want.probs, want.n_probs, c->tol_probs, true);
      /* the reference itself: every row sums to 1 */
      for (size_t row = 0; row < (size_t) c->heads * c->n; row++)
        {
          double sum = 0.0;
          for (int j = 0; j < c->n_k; j++)
            sum += want.probs[row * c->n_k + j];
          g_assert_cmpfloat (fabs (sum - 1.0), <, 1e-6);
        }
    }
  free_outputs (&want);
  free_outputs (&got);
  free_inputs (&in);
  sc_backend_free (b);
}

/* ------------------------------------------------------------------------------------ */
/* The contract                                                                          */

/* Every backend (the reference too): named, required ops present, caps agreeing with the
 * optional ops it fills. */
static void
check_contract (ScBackend *b)
{
  const ScBackendOps *o = b->ops;
  const struct {
    unsigned cap;
    const void *op;
    const char *name;
  } optional[] = {
    { SC_BACKEND_CAP_LAYER_NORM, (const void *) o->layer_norm, "layer_norm" },
    { SC_BACKEND_CAP_GELU, (const void *) o->gelu, "gelu" },
    { SC_BACKEND_CAP_GELU, (const void *) o->geglu, "geglu" },
    { SC_BACKEND_CAP_ADD_BIAS, (const void *) o->add_bias, "add_bias" },
    { SC_BACKEND_CAP_ATTN_CAPTURE, (const void *) o->attention_capture, "attention_capture" },
    { SC_BACKEND_CAP_ATTN_CAPTURE, (const void *) o->capture_wait, "capture_wait" },
    { SC_BACKEND_CAP_ROPE_NEOX, (const void *) o->rope_neox, "rope_neox" },
    { SC_BACKEND_CAP_ROPE_FREQ, (const void *) o->rope_freq, "rope_freq" },
    { SC_BACKEND_CAP_SOFTCAP, (const void *) o->softcap, "softcap" },
    { SC_BACKEND_CAP_SCALE, (const void *) o->scale, "scale" },
  };
  size_t i;

  g_assert_nonnull (sc_backend_name (b));
  g_assert_cmpstr (sc_backend_name (b), ==, o->name);
  g_assert_cmpuint (strlen (sc_backend_description (b)), >, 0);
  g_assert_cmpint (sc_backend_n_threads (b), >=, 1);
  g_assert_true (o->destroy && o->alloc && o->free && o->upload && o->download && o->weight
                 && o->get_rows && o->rmsnorm && o->matmul && o->rope && o->attention
                 && o->swiglu && o->add && o->copy && o->copy_2d);
  for (i = 0; i < G_N_ELEMENTS (optional); i++)
    if (sc_backend_supports (b, optional[i].cap) && optional[i].op == NULL)
      g_error ("%s sets the flag of %s but has no such op", o->name, optional[i].name);
  g_test_message ("%s: caps 0x%x", o->name, sc_backend_caps (b));
}

/* rope_freq (Llama 3's frequency factors), which the CPU backends share and the CUDA
 * backend lacks (so it has no case in the table): on both pairings, factors of 1 give rope's
 * bits exactly; a factor f on pair c turns it as rope at base^(...) would at position
 * pos / f, checked against the angle written out in double; the inverse undoes it. */
static void
test_rope_freq (void)
{
  enum { N = 5, H = 2, D = 16, HALF = D / 2, POS0 = 40 };
  static const float ones[HALF] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  static const float ff[HALF] = { 1.0f, 3.2995f, 8, 8, 8, 8, 8, 8 };
  ScBackend *bs[] = { reference, make_cpu () };
  float x[N * H * D], a[N * H * D], b[N * H * D];
  ScError err = { 0 };

  g_assert_nonnull (bs[1]);
  for (size_t k = 0; k < G_N_ELEMENTS (x); k++)
    x[k] = (float) sin (0.37 * (double) k + 0.1);
  for (gsize i = 0; i < G_N_ELEMENTS (bs); i++)
    for (int neox = 0; neox < 2; neox++)
      {
        ScBackend *be = bs[i];
        double worst = 0.0;

        memcpy (a, x, sizeof x);
        memcpy (b, x, sizeof x);
        g_assert_cmpint (sc_backend_rope_freq (be, a, N, H, D, D, POS0, 1e4f, ones, neox, false,
                                               &err), ==, SC_OK);
        if (neox)
          g_assert_cmpint (sc_backend_rope_neox (be, b, N, H, D, D, POS0, 1e4f, &err), ==, SC_OK);
        else
          g_assert_cmpint (be->ops->rope (be, b, N, H, D, D, POS0, 1e4f, &err), ==, SC_OK);
        g_assert_cmpmem (a, sizeof a, b, sizeof b);

        memcpy (a, x, sizeof x);
        g_assert_cmpint (sc_backend_rope_freq (be, a, N, H, D, D, POS0, 1e4f, ff, neox, false,
                                               &err), ==, SC_OK);
        for (int r = 0; r < N; r++)
          for (int h = 0; h < H; h++)
            for (int c = 0; c < HALF; c++)
              {
                const size_t o = ((size_t) r * H + h) * D;
                const int i0 = neox ? c : 2 * c, i1 = neox ? c + HALF : 2 * c + 1;
                const double th = (POS0 + r) * pow (1e4, -2.0 * c / D) / ff[c];
                const double w0 = x[o + i0] * cos (th) - x[o + i1] * sin (th);
                const double w1 = x[o + i0] * sin (th) + x[o + i1] * cos (th);
                worst = fmax (worst, fmax (fabs (a[o + i0] - w0), fabs (a[o + i1] - w1)));
              }
        g_assert_cmpfloat (worst, <, 1e-6);
        g_assert_cmpint (sc_backend_rope_freq (be, a, N, H, D, D, POS0, 1e4f, ff, neox, true,
                                               &err), ==, SC_OK);
        for (size_t k = 0; k < G_N_ELEMENTS (x); k++)
          g_assert_cmpfloat (fabs (a[k] - x[k]), <, 1e-6);
      }
  sc_backend_free (bs[1]);
}

static void
test_contract (void)
{
  size_t i;

  check_contract (reference);
  g_assert_true (sc_backend_supports (reference, SC_BACKEND_CAP_HOST_MEMORY));
  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      ScBackend *b = backends[i].make ();
      if (b == NULL)
        continue;
      check_contract (b);
      sc_backend_free (b);
    }
}

static void
expect_error (ScStatus st, const ScError *err, ScStatus want, const char *needle)
{
  g_assert_cmpint (st, ==, want);
  g_assert_cmpint (err->status, ==, want);
  if (strstr (err->message, needle) == NULL)
    g_error ("error message \"%s\" does not name \"%s\"", err->message, needle);
}

/* Gemma 2's soft-capping, which the CUDA backend lacks (so no case in the table): the
 * attention of cpu against cpu-ref's, whose scores are capped in double, within the table's
 * attention tolerance, on scores large enough that the cap bends them (|s| up to ~12 against
 * a cap of 4); the cap changes the probabilities; the softcap op is cap tanh(x / cap). */
static void
test_softcap (void)
{
  enum { NQ = 9, H = 2, KV = 1, D = 16 };
  ScAttnParams p = { .scale = 0.25f, .causal = true, .window = 4, .softcap = 4.0f };
  ScBackend *cpu = make_cpu ();
  float q[NQ * H * D], k[NQ * KV * D], v[NQ * KV * D], x[7], y[7];
  float o_ref[NQ * H * D], o_cpu[NQ * H * D], o_plain[NQ * H * D], p_ref[H * NQ * NQ],
      p_cpu[H * NQ * NQ], p_plain[H * NQ * NQ];
  ScError err = { 0 };
  double worst = 0.0, bent = 0.0;

  g_assert_nonnull (cpu);
  for (size_t i = 0; i < G_N_ELEMENTS (q); i++)
    q[i] = (float) (3.0 * sin (0.71 * (double) i + 0.2));
  for (size_t i = 0; i < G_N_ELEMENTS (k); i++)
    {
      k[i] = (float) (3.0 * cos (0.53 * (double) i));
      v[i] = (float) sin (0.29 * (double) i);
    }
  g_assert_cmpint (sc_backend_attention (reference, o_ref, p_ref, q, k, v, NQ, NQ, H, KV, D, &p,
                                         &err), ==, SC_OK);
  g_assert_cmpint (sc_backend_attention (cpu, o_cpu, p_cpu, q, k, v, NQ, NQ, H, KV, D, &p, &err),
                   ==, SC_OK);
  p.softcap = 0.0f;
  g_assert_cmpint (sc_backend_attention (reference, o_plain, p_plain, q, k, v, NQ, NQ, H, KV, D,
                                         &p, &err), ==, SC_OK);
  for (size_t i = 0; i < G_N_ELEMENTS (p_ref); i++)
    {
      worst = fmax (worst, fabs ((double) p_cpu[i] - p_ref[i]));
      bent = fmax (bent, fabs ((double) p_plain[i] - p_ref[i]));
    }
  g_assert_cmpfloat (worst, <, 4e-6);
  g_assert_cmpfloat (bent, >, 0.1);
  p.softcap = -1.0f;
  expect_error (sc_backend_attention (cpu, o_cpu, p_cpu, q, k, v, NQ, NQ, H, KV, D, &p, &err),
                &err, SC_ERR_INVALID_ARG, "softcap");
  for (size_t i = 0; i < G_N_ELEMENTS (x); i++)
    x[i] = (float) i * 3.0f - 9.0f;
  g_assert_cmpint (sc_backend_softcap (cpu, y, x, 3.0f, G_N_ELEMENTS (x), &err), ==, SC_OK);
  for (size_t i = 0; i < G_N_ELEMENTS (x); i++)
    g_assert_cmpfloat (fabs (y[i] - 3.0 * tanh (x[i] / 3.0)), <, 1e-6);
  sc_backend_free (cpu);
}

/* A backend that has only the required ops, as a new backend starts: every optional op and
 * option reports SC_ERR_UNSUPPORTED, naming the op and the backend, and does not run. */
static void
test_unsupported (void)
{
  ScBackendOps bare = *reference->ops;
  ScBackend bare_backend;
  ScError err;
  float x[8] = { 0 }, y[8] = { 0 }, probs[4] = { 0 };
  ScAttnParams p = { .scale = 1.0f, .causal = true };

  bare.name = "bare";
  bare.layer_norm = NULL;
  bare.gelu = NULL;
  bare.geglu = NULL;
  bare.add_bias = NULL;
  bare.rope_neox = NULL;
  bare.rope_freq = NULL;
  bare.softcap = NULL;
  bare.scale = NULL;
  memset (&bare_backend, 0, sizeof bare_backend);
  bare_backend.ops = &bare;
  bare_backend.caps = SC_BACKEND_CAP_HOST_MEMORY;
  bare_backend.n_threads = 1;
  g_assert_false (sc_backend_supports (&bare_backend, SC_BACKEND_CAP_LAYER_NORM));

  expect_error (sc_backend_layer_norm (&bare_backend, y, x, x, x, 1, 8, 1e-5f, &err), &err,
                SC_ERR_UNSUPPORTED, "layer_norm");
  g_assert_nonnull (strstr (err.message, "'bare'"));
  expect_error (sc_backend_gelu (&bare_backend, y, x, 8, &err), &err, SC_ERR_UNSUPPORTED, "gelu");
  expect_error (sc_backend_geglu (&bare_backend, y, x, 1, 4, &err), &err, SC_ERR_UNSUPPORTED, "geglu");
  expect_error (sc_backend_add_bias (&bare_backend, y, x, 1, 8, &err), &err, SC_ERR_UNSUPPORTED,
                "add_bias");
  expect_error (sc_backend_attention_capture (&bare_backend, y, x, x, x, 1, 1, 1, 1, 8, &p, NULL,
                                              0, &err), &err, SC_ERR_UNSUPPORTED,
                "attention_capture");
  /* the reference backend has no capture ops: the forward pass keeps its fp32 path (the
   * fast CPU backend has them: /backend-ops/cpu-capture-same-bits) */
  g_assert_false (sc_backend_supports (reference, SC_BACKEND_CAP_ATTN_CAPTURE));
  expect_error (sc_backend_rope_neox (&bare_backend, x, 1, 1, 8, 8, 0, 1e4f, &err), &err,
                SC_ERR_UNSUPPORTED, "rope_neox");
  expect_error (sc_backend_scale (&bare_backend, y, x, 2.0f, 8, &err), &err, SC_ERR_UNSUPPORTED,
                "scale");
  expect_error (sc_backend_rope_freq (&bare_backend, x, 1, 1, 8, 8, 0, 1e4f, x, false, false,
                                      &err), &err, SC_ERR_UNSUPPORTED, "rope_freq");
  expect_error (sc_backend_softcap (&bare_backend, y, x, 30.0f, 8, &err), &err,
                SC_ERR_UNSUPPORTED, "softcap");
  p.softcap = 50.0f;
  expect_error (sc_backend_attention (&bare_backend, y, probs, x, x, x, 2, 2, 1, 1, 2, &p, &err),
                &err, SC_ERR_UNSUPPORTED, "soft-capped");
  p.softcap = 0.0f;
  p.causal = false;
  expect_error (sc_backend_attention (&bare_backend, y, probs, x, x, x, 2, 2, 1, 1, 2, &p, &err), &err,
                SC_ERR_UNSUPPORTED, "non-causal");
  p.causal = true;
  p.window = 3;
  expect_error (sc_backend_attention (&bare_backend, y, probs, x, x, x, 2, 2, 1, 1, 2, &p, &err), &err,
                SC_ERR_UNSUPPORTED, "sliding-window");
  /* a flag without the op is still refused: the op slot decides as well */
  bare_backend.caps |= SC_BACKEND_CAP_GELU;
  expect_error (sc_backend_gelu (&bare_backend, y, x, 8, &err), &err, SC_ERR_UNSUPPORTED, "gelu");
  /* the required path still works on it */
  p.window = 0;
  g_assert_cmpint (sc_backend_attention (&bare_backend, y, probs, x, x, x, 2, 2, 1, 1, 2, &p, &err), ==,
                   SC_OK);
}

/* Arguments out of the attention contract are refused before any op runs. */
static void
test_attention_arguments (void)
{
  ScError err;
  float x[16] = { 0 }, y[16], probs[16];
  const ScAttnParams causal = { .scale = 1.0f, .causal = true };
  const ScAttnParams bad_window = { .scale = 1.0f, .causal = true, .window = -1 };

  expect_error (sc_backend_attention (reference, y, probs, x, x, x, 3, 2, 1, 1, 2, &causal, &err),
                &err, SC_ERR_INVALID_ARG, "n_q 3, n_k 2");
  expect_error (sc_backend_attention (reference, y, probs, x, x, x, 2, 2, 3, 2, 2, &causal, &err),
                &err, SC_ERR_INVALID_ARG, "heads 3/2");
  expect_error (sc_backend_attention (reference, y, probs, x, x, x, 2, 2, 1, 1, 2, &bad_window,
                                      &err),
                &err, SC_ERR_INVALID_ARG, "window -1");
  expect_error (sc_backend_attention (reference, y, probs, x, x, x, 0, 2, 1, 1, 2, &causal, &err),
                &err, SC_ERR_INVALID_ARG, "n_q 0");
}

/* Memory that cannot exist is refused with a message, not a crash. */
static void
test_alloc_failure (void)
{
  size_t i;

  for (i = 0; i <= G_N_ELEMENTS (backends); i++)
    {
      ScBackend *b = i < G_N_ELEMENTS (backends) ? backends[i].make () : reference;
      ScError err = { SC_OK, "" };

      if (b == NULL)
        continue;
      g_assert_null (b->ops->alloc (b, SIZE_MAX / 2, &err));
      g_assert_cmpint (err.status, !=, SC_OK);
      g_assert_cmpuint (strlen (err.message), >, 0);
      g_test_message ("%s: %s", b->ops->name, err.message);
      if (b != reference)
        sc_backend_free (b);
    }
}

/* The fast CPU backend's capture op against its own attention op, bit for bit: o the same
 * floats, each wanted head's fp16 values sc_fp32_to_fp16 of the op's probabilities in the
 * store's layout (triangle when causal over a whole prompt, else full rows), unwanted heads
 * NULL. Shapes cover both kernels' paths: head dimensions 8 (scalar), 16, 48 (a 3-vector
 * P V tile), 64, 128 and 256; row counts on and off the 8-row blocks; row chunks (threaded);
 * GQA; windows; masked keys; head scales (one of them 0); a cache (n_q < n_k); non-causal. */
static void
test_cpu_capture_same_bits (void)
{
  static const struct {
    int n, n_k, heads, kv, hd, window;
    bool noncausal, masked, scaled;
  } shapes[] = {
    { 13, 13, 6, 2, 16, 0, false, false, false },  { 77, 77, 9, 3, 64, 0, false, false, true },
    { 200, 200, 4, 2, 48, 0, false, false, false }, { 130, 130, 3, 1, 128, 0, false, true, false },
    { 41, 41, 2, 1, 256, 0, false, false, true },  { 96, 96, 4, 2, 64, 17, false, true, false },
    { 9, 40, 4, 4, 64, 0, false, false, false },   { 33, 33, 2, 2, 32, 0, true, true, true },
    { 21, 21, 3, 3, 8, 5, false, false, false },   { 300, 300, 2, 1, 64, 0, false, false, false },
  };
  ScError err = { 0 };
  ScBackend *b = sc_backend_cpu_new (2, &err);
  GRand *rng = g_rand_new_with_seed (2029);

  g_assert_nonnull (b);
  g_assert_true (sc_backend_supports (b, SC_BACKEND_CAP_ATTN_CAPTURE));
  for (size_t t = 0; t < G_N_ELEMENTS (shapes); t++)
    {
      const int n = shapes[t].n, nk = shapes[t].n_k, H = shapes[t].heads, KV = shapes[t].kv,
                d = shapes[t].hd;
      const size_t nq_el = (size_t) n * H * d, nk_el = (size_t) nk * KV * d;
      float *q = g_new (float, nq_el), *k = g_new (float, nk_el), *v = g_new (float, nk_el);
      float *o1 = g_new (float, nq_el), *o2 = g_new (float, nq_el);
      float *probs = g_new (float, (size_t) H * n * nk), *hs = g_new (float, H);
      uint8_t *mask = g_new0 (uint8_t, nk), *want = g_new0 (uint8_t, H);
      const uint16_t **heads = g_new0 (const uint16_t *, H);
      const bool packed = !shapes[t].noncausal && n == nk;
      bool got_packed = !packed;
      ScAttnParams p = { .scale = 1.0f / sqrtf ((float) d), .causal = !shapes[t].noncausal,
                         .window = shapes[t].window };

      for (size_t i = 0; i < nq_el; i++)
        q[i] = (float) g_rand_double_range (rng, -3, 3);
      for (size_t i = 0; i < nk_el; i++)
        {
          k[i] = (float) g_rand_double_range (rng, -3, 3);
          v[i] = (float) g_rand_double_range (rng, -1, 1);
        }
      for (int h = 0; h < H; h++)
        {
          hs[h] = h == 1 ? 0.0f : (float) g_rand_double_range (rng, 0.5, 1.5);
          want[h] = h % 3 != 2;
        }
      for (int j = 0; j < nk; j += 5)
        mask[j] = 1;
      p.key_mask = shapes[t].masked ? mask : NULL;
      p.head_scale = shapes[t].scaled ? hs : NULL;
      g_assert_cmpint (sc_backend_attention (b, o1, probs, q, k, v, n, nk, H, KV, d, &p, &err),
                       ==, SC_OK);
      g_assert_cmpint (sc_backend_attention_capture (b, o2, q, k, v, n, nk, H, KV, d, &p, want,
                                                     t % 2, &err), ==, SC_OK);
      g_assert_cmpint (b->ops->capture_wait (b, t % 2, heads, &got_packed, &err), ==, SC_OK);
      g_assert_cmpmem (o1, nq_el * sizeof *o1, o2, nq_el * sizeof *o2);
      g_assert_true (got_packed == packed);
      for (int h = 0; h < H; h++)
        {
          if (!want[h])
            {
              g_assert_null (heads[h]);
              continue;
            }
          g_assert_nonnull (heads[h]);
          for (int i = 0; i < n; i++)
            for (int j = 0; j < (packed ? i + 1 : nk); j++)
              {
                const uint16_t got = heads[h][sc_attn_packed_index (i, j, nk, packed)];
                const uint16_t exp = sc_fp32_to_fp16 (probs[((size_t) h * n + i) * nk + j]);
                if (got != exp)
                  g_error ("shape %zu head %d (%d, %d): capture 0x%04x, attention 0x%04x", t, h,
                           i, j, got, exp);
              }
        }
      g_free (q), g_free (k), g_free (v), g_free (o1), g_free (o2), g_free (probs);
      g_free (hs), g_free (mask), g_free (want), g_free (heads);
    }
  g_rand_free (rng);
  sc_backend_free (b);
}

int
main (int argc, char **argv)
{
  GPtrArray *pairs = g_ptr_array_new_with_free_func (g_free);
  size_t i, j;
  int rc;

  g_test_init (&argc, &argv, NULL);
  reference = sc_backend_cpu_ref_new ();
  g_assert_nonnull (reference);

  g_test_add_func ("/backend-ops/contract", test_contract);
  g_test_add_func ("/backend-ops/unsupported", test_unsupported);
  g_test_add_func ("/backend-ops/rope-freq", test_rope_freq);
  g_test_add_func ("/backend-ops/softcap", test_softcap);
  g_test_add_func ("/backend-ops/attention-arguments", test_attention_arguments);
  g_test_add_func ("/backend-ops/alloc-failure", test_alloc_failure);
  g_test_add_func ("/backend-ops/cpu-capture-same-bits", test_cpu_capture_same_bits);
  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    for (j = 0; j < G_N_ELEMENTS (cases); j++)
      {
        Pair *p = g_new (Pair, 1);
        char *path = g_strdup_printf ("/backend-ops/%s/%s", backends[i].name, cases[j].name);

        p->backend = &backends[i];
        p->c = &cases[j];
        g_ptr_array_add (pairs, p);
        g_test_add_data_func (path, p, test_case);
        g_free (path);
      }
  rc = g_test_run ();
  sc_backend_free (reference);
  g_ptr_array_free (pairs, TRUE);
  return rc;
}
