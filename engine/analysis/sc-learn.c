/* sc-learn.c — the Learn page's arithmetic (definitions and contract in sc-learn.h; the
 * derivations and sources in docs/learn.md).
 *
 * The worked example is computed the way the articles compute it by hand, one step per
 * array, so that the page can show each step; the softmax subtracts the row maximum first
 * (the standard guard against overflow: it changes no weight). The sizes in the KV-cache
 * and FlashAttention calculators are int64 products checked for overflow, because the
 * calculator is where a user types an absurd length.
 */
#include "analysis/sc-learn.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. The worked example ------------------------------------------------------------ */

static const char *const example_ids[] = { "000", "004", NULL };

const char *const *
sc_learn_example_ids (void)
{
  return example_ids;
}

static void
set_rows (double *dst, const double *src, int rows, int cols)
{
  memcpy (dst, src, sizeof (double) * (size_t) rows * (size_t) cols);
}

ScStatus
sc_learn_example (const char *id, ScLearnExample *out, ScError *err)
{
  if (id == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "learn example: no id given");
  memset (out, 0, sizeof *out);
  if (strcmp (id, "000") == 0)
    {
      /* Seed 000, "一个手算例子": d_k = 4, q_它 = [1,1,0,0]; keys 猫 [2,2,0,0], 球 [1,0,1,0],
       * 它 [0,0,0,2]; one-hot values so that the output is the weights themselves. */
      static const double q[] = { 1, 1, 0, 0 };
      static const double k[] = { 2, 2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 2 };
      static const double v[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
      out->id = "000";
      out->title = "the query 它 over 猫, 球, 它 (d_k = 4)";
      out->m = 1, out->n = 3, out->d = 4, out->dv = 3;
      set_rows (out->q, q, 1, 4);
      set_rows (out->k, k, 3, 4);
      set_rows (out->v, v, 3, 3);
      out->query_labels[0] = "它";
      out->key_labels[0] = "猫", out->key_labels[1] = "球", out->key_labels[2] = "它";
      return SC_OK;
    }
  if (strcmp (id, "004") == 0)
    {
      /* Seed 004, "手算一遍": d_k = d_v = 2, three positions. V is printed in the article
       * (z_3 = 0.2483 (1,0) + 0.2483 (0,2) + 0.5035 (2,2)); Q and K were lost and are
       * reconstructed from the printed outputs (docs/learn.md, "The 004 vectors"):
       * Q = K = [1,0; 0,1; 1,1] gives the raw scores [1 0 1; 0 1 1; 1 1 2]. */
      static const double qk[] = { 1, 0, 0, 1, 1, 1 };
      static const double v[] = { 1, 0, 0, 2, 2, 2 };
      out->id = "004";
      out->title = "three positions, d_k = d_v = 2";
      out->m = 3, out->n = 3, out->d = 2, out->dv = 2;
      set_rows (out->q, qk, 3, 2);
      set_rows (out->k, qk, 3, 2);
      set_rows (out->v, v, 3, 2);
      for (int i = 0; i < 3; i++)
        {
          static const char *const pos[] = { "1", "2", "3" };
          out->query_labels[i] = pos[i];
          out->key_labels[i] = pos[i];
        }
      return SC_OK;
    }
  return sc_error_set (err, SC_ERR_NOT_FOUND, "learn example '%s': unknown (000 or 004)", id);
}

double
sc_learn_gap_for_weight (int n, double p)
{
  if (n < 1 || !(p > 0 && p < 1))
    return NAN;
  if (n == 1)
    return 0;
  return log (p * (n - 1) / (1 - p));
}

static ScStatus
check_matrix (const double *x, int rows, int cols, const char *name, ScError *err)
{
  if (x == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: NULL matrix", name);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      if (!isfinite (x[r * cols + c]))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: row %d column %d is not finite",
                             name, r + 1, c + 1);
  return SC_OK;
}

static ScStatus
check_dim (int v, const char *what, ScError *err)
{
  if (v < 1 || v > SC_LEARN_MAX_DIM)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s = %d: must be in [1, %d]", what, v,
                         SC_LEARN_MAX_DIM);
  return SC_OK;
}

ScStatus
sc_learn_attention (const double *q, const double *k, const double *v, int m, int n, int d,
                    int dv, bool scale, double temperature, ScLearnAttention *out,
                    ScError *err)
{
  ScStatus st;

  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "learn attention: NULL result");
  if ((st = check_dim (m, "Q rows", err)) || (st = check_dim (n, "K rows", err))
      || (st = check_dim (d, "d_k", err)) || (st = check_dim (dv, "d_v", err)))
    return st;
  if (!isfinite (temperature) || temperature <= 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "temperature %g: must be a number > 0",
                         temperature);
  if ((st = check_matrix (q, m, d, "Q", err)) || (st = check_matrix (k, n, d, "K", err))
      || (st = check_matrix (v, n, dv, "V", err)))
    return st;

  memset (out, 0, sizeof *out);
  out->m = m, out->n = n, out->d = d, out->dv = dv;
  out->scale = scale;
  out->temperature = temperature;
  const double sqrt_d = scale ? sqrt ((double) d) : 1.0;
  out->divisor = sqrt_d * temperature;
  out->gap_needed = sc_learn_gap_for_weight (n, SC_LEARN_HARD_WEIGHT);
  out->gap_needed_raw = out->gap_needed * out->divisor;

  for (int i = 0; i < m; i++)
    {
      double *raw = out->raw + i * n, *scaled = out->scaled + i * n;
      double *logit = out->logits + i * n, *e = out->exps + i * n, *w = out->weights + i * n;

      /* Pass 1: scores. raw_ij = q_i · k_j; scaled = raw / √d; logit = scaled / T. */
      for (int j = 0; j < n; j++)
        {
          double s = 0;
          for (int c = 0; c < d; c++)
            s += q[i * d + c] * k[j * d + c];
          raw[j] = s;
          scaled[j] = s / sqrt_d;
          logit[j] = scaled[j] / temperature;
        }
      /* Pass 2: softmax with the row maximum subtracted (no exp overflows; weights equal). */
      double mx = logit[0];
      int top = 0;
      for (int j = 1; j < n; j++)
        if (logit[j] > mx)
          mx = logit[j], top = j;
      double sum = 0;
      for (int j = 0; j < n; j++)
        sum += e[j] = exp (logit[j] - mx);
      for (int j = 0; j < n; j++)
        w[j] = e[j] / sum;
      out->row_max[i] = mx;
      out->exp_sum[i] = sum;
      out->top[i] = top;
      /* Pass 3: the gap between the top logit and the next largest. */
      double second = -INFINITY;
      for (int j = 0; j < n; j++)
        if (j != top && logit[j] > second)
          second = logit[j];
      out->gap[i] = n > 1 ? mx - second : 0;
      /* Pass 4: the output row, out_i = Σ_j w_ij v_j. */
      for (int c = 0; c < dv; c++)
        {
          double o = 0;
          for (int j = 0; j < n; j++)
            o += w[j] * v[j * dv + c];
          out->out[i * dv + c] = o;
        }
    }
  return SC_OK;
}

ScStatus
sc_learn_check_shapes (int q_cols, int k_rows, int k_cols, int v_rows, ScError *err)
{
  if (q_cols != k_cols)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "Q has %d columns and K has %d: q·k needs the same d_k", q_cols,
                         k_cols);
  if (k_rows != v_rows)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "K has %d rows and V has %d: each key needs one value row", k_rows,
                         v_rows);
  return SC_OK;
}

ScStatus
sc_learn_parse_matrix (const char *text, const char *name, double *out, int *rows, int *cols,
                       ScError *err)
{
  int r = 0, c = 0, width = -1;
  const char *p = text;

  if (name == NULL)
    name = "matrix";
  if (text == NULL || out == NULL || rows == NULL || cols == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: no text given", name);
  /* One pass over the text: a value ends at a separator; ';' or a newline ends a row. */
  for (;;)
    {
      while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r')
        p++;
      if (*p == ';' || *p == '\n' || *p == '\0')
        {
          if (c > 0)
            {
              if (width >= 0 && c != width)
                return sc_error_set (err, SC_ERR_INVALID_ARG,
                                     "%s: row %d has %d value%s, row 1 has %d (rows must "
                                     "be the same length)", name, r + 1, c, c == 1 ? "" : "s",
                                     width);
              width = c;
              r++;
              c = 0;
            }
          if (*p == '\0')
            break;
          p++;
          continue;
        }
      if (r >= SC_LEARN_MAX_DIM || c >= SC_LEARN_MAX_DIM)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: larger than %d × %d", name,
                             SC_LEARN_MAX_DIM, SC_LEARN_MAX_DIM);
      char *end;
      errno = 0;
      const double x = strtod (p, &end);
      const size_t len = strcspn (p, " \t,;\r\n");
      if (end == p || (size_t) (end - p) != len || errno == ERANGE || !isfinite (x))
        return sc_error_set (err, SC_ERR_INVALID_ARG,
                             "%s: '%.*s' at row %d column %d is not a finite number", name,
                             (int) (len > 40 ? 40 : len), p, r + 1, c + 1);
      /* Row-major with the final width unknown yet: store at the maximum stride, pack below. */
      out[r * SC_LEARN_MAX_DIM + c] = x;
      c++;
      p = end;
    }
  if (r == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: empty (write rows like \"1 0; 0 1\")",
                         name);
  for (int i = 0; i < r; i++)
    for (int j = 0; j < width; j++)
      out[i * width + j] = out[i * SC_LEARN_MAX_DIM + j];
  *rows = r;
  *cols = width;
  return SC_OK;
}

/* ---- 2. Why √d_k ----------------------------------------------------------------------- */

/* The top weight p when one of @n logits exceeds the other n − 1 (equal) by @g, and 1 − p
 * computed without cancellation. */
static void
top_weight (int n, double g, double *p, double *one_minus_p)
{
  const double rest = (n - 1) * exp (-g);
  *p = 1 / (1 + rest);
  *one_minus_p = rest / (1 + rest);
}

ScStatus
sc_learn_sqrt_dk (int d_k, double gap, int n_keys, ScLearnSqrtDk *out, ScError *err)
{
  double p, q;

  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "learn sqrt-dk: NULL result");
  if (d_k < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "d_k = %d: must be at least 1", d_k);
  if (!isfinite (gap) || gap < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "gap %g: must be a finite number >= 0", gap);
  if (n_keys < 2)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "keys = %d: a gap needs at least 2", n_keys);
  memset (out, 0, sizeof *out);
  out->d_k = d_k;
  out->n_keys = n_keys;
  out->gap = gap;
  /* Var (q·k) = Σ Var (q_i k_i) = d_k · E[q_i²] E[k_i²] = d_k for independent N(0, 1). */
  out->std_unscaled = sqrt ((double) d_k);
  out->std_scaled = 1.0;
  out->exp_gap = exp (gap);
  top_weight (n_keys, gap, &p, &q);
  out->p_unscaled = p;
  out->jacobian_unscaled = p * q;
  top_weight (n_keys, gap / sqrt ((double) d_k), &p, &q);
  out->p_scaled = p;
  out->jacobian_scaled = p * q;
  return SC_OK;
}

/* ---- 3. Heads and budget ---------------------------------------------------------------- */

ScStatus
sc_learn_head_dim (int64_t d_model, int64_t heads, int64_t *d_k, ScError *err)
{
  if (d_k == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "learn heads: NULL result");
  if (d_model < 1 || heads < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "d_model = %lld, heads = %lld: both must be at least 1",
                         (long long) d_model, (long long) heads);
  if (d_model % heads != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "d_model = %lld is not divisible by heads = %lld (remainder %lld)",
                         (long long) d_model, (long long) heads,
                         (long long) (d_model % heads));
  *d_k = d_model / heads;
  return SC_OK;
}

/* ---- 4. The KV cache --------------------------------------------------------------------- */

/* Llama 2 70B: Touvron et al. 2023 (arXiv:2307.09288) and its config.json — 80 layers,
 * 64 query heads of 128, 8 KV heads; the MHA and MQA rows are the article's what-ifs.
 * SmolLM2-135M: its GGUF's metadata (`saccade info`) — 30 layers, 9 query heads of 64,
 * 3 KV heads. */
static const ScLearnKvPreset kv_presets[] = {
  { "llama2-70b-mha", "Llama 2 70B as MHA (64 KV heads)", 80, 64, 64, 128,
    "Touvron et al. 2023; MHA is seed 004's what-if" },
  { "llama2-70b-gqa", "Llama 2 70B, GQA (8 KV heads)", 80, 64, 8, 128,
    "Touvron et al. 2023, arXiv:2307.09288" },
  { "llama2-70b-mqa", "Llama 2 70B as MQA (1 KV head)", 80, 64, 1, 128,
    "Touvron et al. 2023; MQA is seed 004's what-if" },
  { "smollm2", "SmolLM2-135M (GQA, 3 KV heads)", 30, 9, 3, 64,
    "the model's GGUF metadata (saccade info)" },
};

const ScLearnKvPreset *
sc_learn_kv_presets (int *n)
{
  if (n)
    *n = (int) (sizeof kv_presets / sizeof kv_presets[0]);
  return kv_presets;
}

const ScLearnKvPreset *
sc_learn_kv_preset (const char *id)
{
  for (size_t i = 0; id && i < sizeof kv_presets / sizeof kv_presets[0]; i++)
    if (strcmp (kv_presets[i].id, id) == 0)
      return &kv_presets[i];
  return NULL;
}

/* *@acc *= @x; false when the product overflows int64 (inputs are ≥ 0). */
static bool
mul_ok (int64_t *acc, int64_t x)
{
  return !__builtin_mul_overflow (*acc, x, acc);
}

static ScStatus
check_bandwidth (double gbs, ScError *err)
{
  if (!isfinite (gbs) || gbs < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bandwidth %g GB/s: must be a number >= 0",
                         gbs);
  return SC_OK;
}

ScStatus
sc_learn_kv_cache (int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t len,
                   int64_t bytes_per_elem, double bandwidth_gbs, ScLearnKvCache *out,
                   ScError *err)
{
  ScStatus st;

  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "learn kv-cache: NULL result");
  if (layers < 1 || kv_heads < 1 || head_dim < 1 || bytes_per_elem < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "layers %lld, KV heads %lld, head dim %lld, bytes per element %lld: "
                         "each must be at least 1", (long long) layers, (long long) kv_heads,
                         (long long) head_dim, (long long) bytes_per_elem);
  if (len < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "length %lld tokens: must be >= 0",
                         (long long) len);
  if ((st = check_bandwidth (bandwidth_gbs, err)))
    return st;
  memset (out, 0, sizeof *out);
  out->layers = layers, out->kv_heads = kv_heads, out->head_dim = head_dim;
  out->len = len, out->bytes_per_elem = bytes_per_elem;
  int64_t per = 2; /* K and V */
  if (!mul_ok (&per, layers) || !mul_ok (&per, kv_heads) || !mul_ok (&per, head_dim)
      || !mul_ok (&per, bytes_per_elem))
    return sc_error_set (err, SC_ERR_RANGE, "KV cache: bytes per token overflow int64");
  int64_t total = per;
  if (!mul_ok (&total, len))
    return sc_error_set (err, SC_ERR_RANGE,
                         "KV cache: %lld bytes per token × %lld tokens overflows int64",
                         (long long) per, (long long) len);
  out->bytes_per_token = per;
  out->bytes = total;
  out->gib = (double) total / (double) (INT64_C (1) << 30);
  out->bandwidth_gbs = bandwidth_gbs;
  out->read_seconds = bandwidth_gbs > 0 ? (double) total / (bandwidth_gbs * 1e9) : NAN;
  return SC_OK;
}

/* ---- 5. FlashAttention's IO ----------------------------------------------------------- */

/* SRAM per SM is the combined L1 cache / shared memory of one streaming multiprocessor, the
 * quantity Dao et al. 2022 (§2.1) call on-chip SRAM. A100: 192 KB × 108 SMs (NVIDIA A100
 * Tensor Core GPU Architecture whitepaper, 2020; Dao et al. §2.1), HBM2e 2,039 GB/s, 80 GB
 * (A100 80GB SXM datasheet; seed 004 quotes 1.5–2.0 TB/s for the 40/80 GB parts).
 * H100 SXM5: 256 KB × 132 SMs (NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022),
 * HBM3 3,350 GB/s, 80 GB (H100 datasheet). H200 SXM: the same Hopper SM (256 KB × 132),
 * HBM3e 4,800 GB/s, 141 GB (H200 datasheet). */
static const ScLearnGpuPreset gpu_presets[] = {
  { "a100", "NVIDIA A100 80GB SXM", 192 * 1024, 108, 2039, 80,
    "A100 architecture whitepaper (2020), A100 datasheet; Dao et al. 2022 §2.1" },
  { "h100", "NVIDIA H100 SXM5", 256 * 1024, 132, 3350, 80,
    "H100 architecture whitepaper (2022), H100 datasheet" },
  { "h200", "NVIDIA H200 SXM", 256 * 1024, 132, 4800, 141,
    "H200 datasheet (Hopper SM as H100)" },
};

const ScLearnGpuPreset *
sc_learn_gpu_presets (int *n)
{
  if (n)
    *n = (int) (sizeof gpu_presets / sizeof gpu_presets[0]);
  return gpu_presets;
}

const ScLearnGpuPreset *
sc_learn_gpu_preset (const char *id)
{
  for (size_t i = 0; id && i < sizeof gpu_presets / sizeof gpu_presets[0]; i++)
    if (strcmp (gpu_presets[i].id, id) == 0)
      return &gpu_presets[i];
  return NULL;
}

static int64_t
ceil_div (int64_t a, int64_t b)
{
  return a / b + (a % b != 0);
}

ScStatus
sc_learn_flash (int64_t n, int64_t d, int64_t sram_bytes, int64_t bytes_per_elem,
                double bandwidth_gbs, ScLearnFlash *out, ScError *err)
{
  ScStatus st;

  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "learn flash: NULL result");
  if (n < 1 || d < 1 || bytes_per_elem < 1 || sram_bytes < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "n %lld, d %lld, SRAM %lld bytes, bytes per element %lld: each must "
                         "be at least 1", (long long) n, (long long) d, (long long) sram_bytes,
                         (long long) bytes_per_elem);
  if ((st = check_bandwidth (bandwidth_gbs, err)))
    return st;
  memset (out, 0, sizeof *out);
  out->n = n, out->d = d, out->sram_bytes = sram_bytes, out->bytes_per_elem = bytes_per_elem;
  out->m_elems = sram_bytes / bytes_per_elem;
  /* Algorithm 1 keeps blocks of Q, K, V and O on chip: B_c·d + B_c·d + B_r·d + B_r·d ≤ M
   * needs M ≥ 4d even for one-row blocks. */
  int64_t four_d = 4;
  if (!mul_ok (&four_d, d) || out->m_elems < four_d)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "SRAM of %lld elements cannot hold Algorithm 1's four blocks of "
                         "d = %lld (needs M >= 4d)", (long long) out->m_elems, (long long) d);

  /* S = n² elements per head and layer. */
  int64_t n2 = n, nd = n;
  if (!mul_ok (&n2, n) || !mul_ok (&nd, d))
    return sc_error_set (err, SC_ERR_RANGE, "n = %lld, d = %lld: n² or nd overflows int64",
                         (long long) n, (long long) d);
  out->score_bytes = n2;
  if (!mul_ok (&out->score_bytes, bytes_per_elem))
    return sc_error_set (err, SC_ERR_RANGE, "n = %lld: the score matrix's bytes overflow int64",
                         (long long) n);

  /* Block sizes of Algorithm 1 line 1: B_c = ⌈M / 4d⌉, B_r = min (⌈M / 4d⌉, d); a block
   * larger than the sequence is the whole sequence. */
  out->block_c = ceil_div (out->m_elems, four_d);
  out->block_r = out->block_c < d ? out->block_c : d;
  if (out->block_c > n)
    out->block_c = n;
  if (out->block_r > n)
    out->block_r = n;
  out->t_c = ceil_div (n, out->block_c);
  out->t_r = ceil_div (n, out->block_r);

  /* Algorithm 0: 2nd + n² (read Q, K; write S) + 2n² (read S; write P) + n² + 2nd (read P,
   * V; write O) = 4nd + 4n². */
  int64_t a = nd, b = n2;
  if (!mul_ok (&a, 4) || !mul_ok (&b, 4) || __builtin_add_overflow (a, b, &out->standard_elems))
    return sc_error_set (err, SC_ERR_RANGE, "n = %lld: standard attention's traffic overflows "
                         "int64", (long long) n);
  /* Algorithm 1: nd + 2n (line 2, initialise O, ℓ, m in HBM) + 2nd (line 6, each K_j, V_j
   * once) + T_c × (2nd + 2n reads of Q_i, O_i, ℓ_i, m_i at line 8 and nd + 2n writes at lines
   * 12–13, summed over i) = 3nd + 2n + T_c (3nd + 4n). */
  int64_t pass = nd, once = nd, n_x = n;
  if (!mul_ok (&pass, 3) || !mul_ok (&n_x, 4) || __builtin_add_overflow (pass, n_x, &pass)
      || !mul_ok (&pass, out->t_c) || !mul_ok (&once, 3)
      || __builtin_add_overflow (once, 2 * n, &once)
      || __builtin_add_overflow (once, pass, &out->flash_elems))
    return sc_error_set (err, SC_ERR_RANGE, "n = %lld: FlashAttention's traffic overflows int64",
                         (long long) n);
  out->ratio = (double) out->standard_elems / (double) out->flash_elems;
  out->bandwidth_gbs = bandwidth_gbs;
  if (bandwidth_gbs > 0)
    {
      const double bps = bandwidth_gbs * 1e9;
      out->standard_seconds = (double) out->standard_elems * (double) bytes_per_elem / bps;
      out->flash_seconds = (double) out->flash_elems * (double) bytes_per_elem / bps;
    }
  else
    out->standard_seconds = out->flash_seconds = NAN;
  return SC_OK;
}
