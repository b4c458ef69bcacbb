/* sc-learn.h — the arithmetic of the Learn page: the seed articles' hand-worked attention
 * numbers as pure functions, so that the page, `saccade learn` and the tests compute them
 * once (docs/learn.md derives every formula and says where each number comes from).
 *
 *   1. The worked example: for Q (m, d), K (n, d), V (n, dv), every step of
 *      softmax (QKᵀ / (√d · T)) V — raw scores, scaled scores, the softmax's input (divided
 *      by the temperature T), exponentials, weights, outputs — and per row the score gap one
 *      weight needs to pass 0.99.
 *   2. Why √d_k: the spread of q·k for random N(0, 1) vectors with and without scaling, the
 *      largest weight and the softmax Jacobian's diagonal p (1 − p) at a score gap.
 *   3. Heads and budget: d_k = d_model / h.
 *   4. The KV cache: 2 × L × h_kv × d_head × len × bytes/elem, and the time to read it once.
 *   5. FlashAttention's IO: HBM element accesses of standard attention (Algorithm 0 of Dao et
 *      al. 2022) and of FlashAttention (their Algorithm 1), counted exactly.
 *
 * Everything is in double; matrices are row-major and small (the page's editable tables, at
 * most SC_LEARN_MAX_DIM a side), held in fixed arrays: nothing here allocates. Inputs are
 * borrowed; every function is pure and safe from any thread. Bad input (a NaN, a size out
 * of range, a product that overflows int64) is SC_ERR_INVALID_ARG or SC_ERR_RANGE with a
 * message naming the value; nothing aborts.
 *
 * Not here: drawing the page, the neuron view of a real model's heads (those read a captured
 * run; this file never runs a model).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest side of a worked-example table: the page shows every cell of every step, and
 * 16 tokens × 16 dimensions is already more than a screen can show legibly. */
#define SC_LEARN_MAX_DIM 16

/* "One weight passes 0.99": the threshold at which the articles call a softmax row a hard
 * choice (004: "想逼近一次硬选择"). */
#define SC_LEARN_HARD_WEIGHT 0.99

/* ---- 1. The worked example ------------------------------------------------------------ */

/* A worked example's inputs: Q (m, d), K (n, d), V (n, dv), row-major, and a label per
 * query row and key row (UTF-8, for the page and the CLI's tables). */
typedef struct {
  const char *id;     /* "000", "004" */
  const char *title;  /* one line in English */
  int m, n, d, dv;
  double q[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];
  double k[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];
  double v[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];
  const char *query_labels[SC_LEARN_MAX_DIM];
  const char *key_labels[SC_LEARN_MAX_DIM];
} ScLearnExample;

/* The seed articles' examples: "000" — d_k = 4, the query 它 over the keys 猫/球/它 with
 * one-hot values (seed 000); "004" — three positions, d_k = d_v = 2 (seed 004; its Q, K, V
 * were reconstructed from its printed outputs, docs/learn.md). Fills @out; SC_ERR_NOT_FOUND
 * for any other @id (NULL included). */
ScStatus sc_learn_example (const char *id, ScLearnExample *out, ScError *err);

/* The ids sc_learn_example() knows, NULL-terminated. Static; never freed. */
const char *const *sc_learn_example_ids (void);

/* Every step of one attention computation. Arrays are (m, n) row-major unless noted. */
typedef struct {
  int m, n, d, dv;
  bool scale;             /* divided by √d */
  double temperature;     /* T > 0 */
  double divisor;         /* what raw scores are divided by before the softmax: √d · T or T */
  double raw[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];     /* QKᵀ: q_i · k_j */
  double scaled[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];  /* raw / √d (raw when !scale) */
  double logits[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];  /* scaled / T: the softmax's input */
  double row_max[SC_LEARN_MAX_DIM];                    /* (m) max_j logits[i, j] */
  /* exp (logit − row max): max-subtracted, so the largest is 1 and nothing overflows;
   * exp (logit) itself is exps × exp (row_max) (004's 2.0281 = 0.4931 × e^1.4142). */
  double exps[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];
  double exp_sum[SC_LEARN_MAX_DIM];                    /* (m) Σ_j exps[i, j] */
  double weights[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM]; /* exps / exp_sum: rows sum to 1 */
  double out[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];     /* (m, dv) weights · V */
  int top[SC_LEARN_MAX_DIM];        /* (m) the key with the largest weight (lowest on ties) */
  double gap[SC_LEARN_MAX_DIM];     /* (m) top logit − the next largest (0 when n = 1) */
  /* The gap, in the softmax's input, that lifts one weight to SC_LEARN_HARD_WEIGHT when the
   * other n − 1 logits are equal (sc_learn_gap_for_weight); and the same in raw-score units
   * (× divisor): what q_i · k_top − q_i · k_other must reach. 0 when n = 1. */
  double gap_needed;
  double gap_needed_raw;
} ScLearnAttention;

/* Every step of softmax (QKᵀ / divisor) V into @out for @q (m, d), @k (n, d), @v (n, dv),
 * divisor = √d · @temperature when @scale, else @temperature. SC_ERR_INVALID_ARG for a
 * NULL pointer, a size outside [1, SC_LEARN_MAX_DIM], a temperature that is not a finite
 * number > 0 or a non-finite entry (naming the matrix, row and column). */
ScStatus sc_learn_attention (const double *q, const double *k, const double *v, int m, int n,
                             int d, int dv, bool scale, double temperature,
                             ScLearnAttention *out, ScError *err);

/* Checks that parsed tables make one attention: Q's width @q_cols equals K's @k_cols (they
 * share d_k) and K's height @k_rows equals V's @v_rows (one value per key). Q's height and
 * V's width are free. SC_ERR_INVALID_ARG naming both sizes otherwise. */
ScStatus sc_learn_check_shapes (int q_cols, int k_rows, int k_cols, int v_rows, ScError *err);

/* The gap g by which one of @n logits must exceed the other n − 1 (all equal) for its
 * softmax weight to reach @p: e^g / (e^g + n − 1) = p  ⇒  g = ln (p (n − 1) / (1 − p)).
 * For n = 3, p = 0.99: ln 198 = 5.288. Returns 0 for n = 1 (one weight is always 1) and NaN
 * for n < 1 or p outside (0, 1). Unequal others need less: this is the worst case. */
double sc_learn_gap_for_weight (int n, double p);

/* Parses a matrix written as rows separated by ';' (or newlines), values by spaces or
 * commas ("1 1 0 0; 2 2 0 0") into @out, which must hold SC_LEARN_MAX_DIM² doubles (the
 * parse fills it at that stride, then packs it row-major); *@rows and *@cols receive its
 * shape, at most SC_LEARN_MAX_DIM a side. @name ("Q") names the matrix in errors:
 * SC_ERR_INVALID_ARG for a value that is not a finite number (quoting it, with its row and
 * column), rows of different lengths, an empty matrix or one too large. */
ScStatus sc_learn_parse_matrix (const char *text, const char *name, double *out, int *rows,
                                int *cols, ScError *err);

/* ---- 2. Why √d_k ----------------------------------------------------------------------- */

typedef struct {
  int d_k;
  int n_keys;             /* keys in the row: the top one and n − 1 equal others */
  double gap;             /* the unscaled score gap */
  double std_unscaled;    /* std of q·k for q, k with i.i.d. N(0, 1) entries: √d_k */
  double std_scaled;      /* of q·k / √d_k: 1 */
  double exp_gap;         /* e^gap (004: e^16 ≈ 8.9e6) */
  double p_unscaled;      /* the top weight at gap: 1 / (1 + (n − 1) e^(−gap)) */
  double jacobian_unscaled; /* its Jacobian diagonal ∂p/∂s = p (1 − p) */
  double p_scaled;        /* the same at gap / √d_k */
  double jacobian_scaled;
} ScLearnSqrtDk;

/* The numbers of "why √d_k" for @d_k ≥ 1, a @gap ≥ 0 between the top score and the n − 1
 * others, @n_keys ≥ 2 (004 uses two scores: d_k = 64, gap 16 → p = 0.99999989,
 * p (1 − p) = 1.125e-7). 1 − p is computed as (n − 1) e^(−g) / (1 + (n − 1) e^(−g)), not by
 * subtraction, so p (1 − p) keeps its digits at large gaps. SC_ERR_INVALID_ARG otherwise. */
ScStatus sc_learn_sqrt_dk (int d_k, double gap, int n_keys, ScLearnSqrtDk *out, ScError *err);

/* ---- 3. Heads and budget ---------------------------------------------------------------- */

/* *@d_k = @d_model / @heads. SC_ERR_INVALID_ARG when either is < 1 or @heads does not divide
 * @d_model (the message gives the remainder). */
ScStatus sc_learn_head_dim (int64_t d_model, int64_t heads, int64_t *d_k, ScError *err);

/* ---- 4. The KV cache --------------------------------------------------------------------- */

typedef struct {
  const char *id;        /* "llama2-70b-mha", ... */
  const char *name;      /* "Llama 2 70B (MHA, 64 KV heads)" */
  int64_t layers, query_heads, kv_heads, head_dim;
  const char *source;    /* where the numbers come from */
} ScLearnKvPreset;

/* The KV-cache presets (Llama 2 70B as MHA / GQA / MQA, SmolLM2-135M); *@n receives their
 * count. Static; never freed. */
const ScLearnKvPreset *sc_learn_kv_presets (int *n);
/* The preset named @id, or NULL. */
const ScLearnKvPreset *sc_learn_kv_preset (const char *id);

typedef struct {
  int64_t layers, kv_heads, head_dim, len, bytes_per_elem;
  int64_t bytes_per_token;   /* 2 × L × h_kv × d_head × bytes/elem */
  int64_t bytes;             /* bytes_per_token × len */
  double gib;                /* bytes / 2^30 */
  double bandwidth_gbs;      /* 10^9 bytes per second; 0: no time */
  double read_seconds;       /* bytes / bandwidth: reading the cache once, per token */
} ScLearnKvCache;

/* The KV cache of @layers × @kv_heads × @head_dim at @len tokens and @bytes_per_elem into
 * @out, and (when @bandwidth_gbs > 0) the time to read it once at that bandwidth.
 * SC_ERR_INVALID_ARG for a count < 1 (len ≥ 0), a bandwidth < 0 or not finite;
 * SC_ERR_RANGE when the product overflows int64. */
ScStatus sc_learn_kv_cache (int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t len,
                            int64_t bytes_per_elem, double bandwidth_gbs, ScLearnKvCache *out,
                            ScError *err);

/* ---- 5. FlashAttention's IO ----------------------------------------------------------- */

typedef struct {
  const char *id;          /* "a100", "h100", "h200" */
  const char *name;
  int64_t sram_bytes_per_sm; /* on-chip SRAM (L1 + shared memory) of one SM */
  int64_t n_sm;
  double hbm_gbs;          /* HBM bandwidth, 10^9 bytes per second */
  double hbm_gb;           /* HBM capacity, 10^9 bytes */
  const char *source;
} ScLearnGpuPreset;

/* The GPU presets; *@n receives their count. Static; never freed. */
const ScLearnGpuPreset *sc_learn_gpu_presets (int *n);
/* The preset named @id, or NULL. */
const ScLearnGpuPreset *sc_learn_gpu_preset (const char *id);

typedef struct {
  int64_t n, d, bytes_per_elem, sram_bytes;
  int64_t m_elems;          /* M = sram_bytes / bytes_per_elem: SRAM in elements */
  int64_t score_bytes;      /* n² × bytes/elem: one head's S (or P) in one layer */
  int64_t block_c, block_r; /* B_c = ⌈M / 4d⌉ (≤ n), B_r = min (B_c, d) */
  int64_t t_c, t_r;         /* ⌈n / B_c⌉, ⌈n / B_r⌉ */
  int64_t standard_elems;   /* Algorithm 0: 4nd + 4n² */
  int64_t flash_elems;      /* Algorithm 1: 3nd + 2n + T_c (3nd + 4n) */
  double ratio;             /* standard / flash */
  double bandwidth_gbs;     /* 0: no times */
  double standard_seconds, flash_seconds; /* elems × bytes/elem / bandwidth */
} ScLearnFlash;

/* HBM element accesses of one head's attention over @n tokens of dimension @d with
 * @sram_bytes of SRAM, standard (Algorithm 0) against FlashAttention (Algorithm 1) of Dao
 * et al. 2022, counted line by line (docs/learn.md):
 *   standard: read Q, K, write S (2nd + n²); read S, write P (2n²); read P, V, write O
 *             (n² + 2nd) — Θ(nd + n²), Theorem 2;
 *   flash:    write O, ℓ, m initialised (nd + 2n); read each K_j, V_j once (2nd); for each
 *             of the T_c blocks of K, V read Q_i, O_i, ℓ_i, m_i and write O_i, ℓ_i, m_i for
 *             every i (3nd + 4n) — Θ(n²d²/M) since T_c = ⌈4nd / M⌉.
 * Times at @bandwidth_gbs (0: none). SC_ERR_INVALID_ARG for n, d, bytes/elem < 1, SRAM that
 * cannot hold the four blocks (M < 4d) or a bad bandwidth; SC_ERR_RANGE on overflow. */
ScStatus sc_learn_flash (int64_t n, int64_t d, int64_t sram_bytes, int64_t bytes_per_elem,
                         double bandwidth_gbs, ScLearnFlash *out, ScError *err);

#ifdef __cplusplus
}
#endif
