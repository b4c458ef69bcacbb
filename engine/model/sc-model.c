/* sc-model.c — loads a model from GGUF (see sc-model.h), for any architecture in the
 * table of sc-arch.c; what differs between architectures (their per-layer tensors) comes
 * from their ScArchDesc, so this file names no tensor of a layer.
 *
 * Passes:
 *   1. hyperparameters from "<arch>.*" keys, each validated (non-zero, divisible, bounded);
 *   2. tokenizer from "tokenizer.ggml.*" keys (sc-tokenizer);
 *   3. every expected tensor looked up by name and its shape checked against pass 1: the
 *      shared ones (token_embd, output_norm, output unless tied), then the architecture's
 *      per-layer table, in its order — before anything is allocated for the weights, so a
 *      file whose dimensions promise more than its tensors hold is refused by name and
 *      the arena is never larger than what the file's tensors dequantise to;
 *   4. the vectors decoded into one float32 arena and the matrices (sc-model.h says which)
 *      checked, in parallel over tensors: every weight must be finite (a matrix's rows by
 *      their blocks' scales, sc_quant_row_finite, decoded only where that cannot tell; a
 *      load of SmolLM2 went from 0.86 s to 0.08 s); the matrices stay in the file and are
 *      decoded into a second arena only when sc_model_weights() first asks for floats
 *      (expand_matrices).
 */
#include "model/sc-model.h"

#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sc-pool.h"
#include "format/sc-quant.h"
#include "model/sc-arch.h"

/* Upper bounds on hyperparameters: far beyond any model this tool can run in memory, low
 * enough that products of two of them cannot overflow 64 bits. */
#define MAX_LAYERS 4096u
#define MAX_DIM (1u << 20)
#define MAX_HEADS 4096u
#define MAX_VOCAB (1u << 24)

typedef struct {
  const ScGgufTensor *tensor;
  float **field;  /* where the weight's pointer goes (set once its arena exists) */
  ScWeightSrc *src; /* a matrix: where its file form goes; NULL for a vector */
  size_t offset;  /* its place in its arena (vectors' or matrices'), in floats */
  float *dst;     /* where it is decoded; NULL: decoded a row at a time and only checked */
} DequantJob;

struct ScModel {
  ScGguf *gguf;
  ScTokenizer *tokenizer;
  ScModelInfo info;
  ScWeights weights;
  float *arena; /* the vectors */
  uint64_t n_params;
  int n_threads;
  /* The matrices as floats (sc_model_weights), made once under @lock: */
  pthread_mutex_t lock;
  bool expanded;
  float *matrix_arena;
  size_t matrix_floats;
  DequantJob *matrix_jobs; /* (n_matrix_jobs) their places in matrix_arena */
  size_t n_matrix_jobs;
};

static ScStatus
get_dim (const ScGguf *g, const char *arch, const char *suffix, uint32_t max, bool required,
         uint32_t fallback, uint32_t *out, ScError *err)
{
  char key[128];
  ScStatus st;

  snprintf (key, sizeof key, "%s.%s", arch, suffix);
  st = sc_gguf_get_u32 (g, key, out, err);
  if (st == SC_ERR_NOT_FOUND && !required)
    {
      *out = fallback;
      return SC_OK;
    }
  if (st != SC_OK)
    return st;
  if (*out == 0 || *out > max)
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %u (expected 1 to %u)", key, *out, max);
  return SC_OK;
}

static ScStatus
get_float (const ScGguf *g, const char *arch, const char *suffix, float fallback, float *out,
           ScError *err)
{
  char key[128];
  ScStatus st;

  snprintf (key, sizeof key, "%s.%s", arch, suffix);
  st = sc_gguf_get_f32 (g, key, out, err);
  if (st == SC_ERR_NOT_FOUND)
    {
      *out = fallback;
      return SC_OK;
    }
  if (st != SC_OK)
    return st;
  if (!isfinite (*out) || *out <= 0.0f)
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %g (expected a positive number)", key,
                         (double) *out);
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* The readable name                                                                     */

/* llama.cpp's llama_ftype (general.file_type) as its quantisation is called; NULL where
 * the id is unused or unknown. The ids are fixed by llama.cpp (include/llama.h). */
static const char *
ftype_name (uint32_t ftype)
{
  static const char *const names[] = {
    [0] = "F32", [1] = "F16", [2] = "Q4_0", [3] = "Q4_1", [7] = "Q8_0", [8] = "Q5_0",
    [9] = "Q5_1", [10] = "Q2_K", [11] = "Q3_K_S", [12] = "Q3_K_M", [13] = "Q3_K_L",
    [14] = "Q4_K_S", [15] = "Q4_K_M", [16] = "Q5_K_S", [17] = "Q5_K_M", [18] = "Q6_K",
    [19] = "IQ2_XXS", [20] = "IQ2_XS", [21] = "Q2_K_S", [22] = "IQ3_XS", [23] = "IQ3_XXS",
    [24] = "IQ1_S", [25] = "IQ4_NL", [26] = "IQ3_S", [27] = "IQ3_M", [28] = "IQ2_S",
    [29] = "IQ2_M", [30] = "IQ4_XS", [31] = "IQ1_M", [32] = "BF16", [36] = "TQ1_0",
    [37] = "TQ2_0",
  };
  return ftype < sizeof names / sizeof names[0] ? names[ftype] : NULL;
}

static bool
ieq_n (const char *a, const char *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      char x = a[i], y = b[i];
      if (x >= 'A' && x <= 'Z')
        x = (char) (x - 'A' + 'a');
      if (y >= 'A' && y <= 'Z')
        y = (char) (y - 'A' + 'a');
      if (x != y || x == '\0')
        return false;
    }
  return true;
}

static bool
is_sep (char c)
{
  return c == '-' || c == '.' || c == '_' || c == ' ' || c == '\0';
}

/* Appends @n bytes of @s to @out (@size bytes, NUL-terminated), cutting before a UTF-8
 * sequence that would not fit. */
static void
append (char *out, size_t size, const char *s, size_t n)
{
  size_t at = strlen (out);

  if (at + 1 >= size)
    return;
  if (n > size - 1 - at)
    {
      n = size - 1 - at;
      while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
        n--;
    }
  memcpy (out + at, s, n);
  out[at + n] = '\0';
}

/* The model's name as a reader knows it: "SmolLM2 135M Instruct · Q4_1".
 *
 * GGUF files written by llama.cpp's converter carry general.basename ("smollm2", lower
 * case), general.size_label ("135M") and general.finetune — which for SmolLM2's Instruct
 * file holds the training recipe ("8k-lc100k-mix1-ep2"), while general.name joins them
 * title-cased ("Smollm2 135M 8k Lc100K Mix1 Ep2"): neither says Instruct, nor the
 * quantisation. The file name does, in llama.cpp's naming convention
 * (<BaseName>-<SizeLabel>-<FineTune>-<Version>-<Encoding>.gguf, or ".Q4_1" before the
 * extension as most publishers write it). So:
 *   1. base = general.basename, spelt as the file name spells it when the file name starts
 *      with it ("SmolLM2"); size = general.size_label when the file name has it next;
 *   2. fine-tune = what the file name has between those and its quantisation
 *      ("Instruct", separators as spaces) when it starts with the base name, else
 *      general.finetune;
 *   3. the quantisation from general.file_type (llama_ftype: 3 = "Q4_1");
 *   4. "base size fine-tune · quantisation"; without general.basename, general.name (or the
 *      file's name without ".gguf") takes the place of the first three.
 * Everything from the file is copied as bytes and shown through each face's escaping
 * (a name may hold any bytes). */
static void
readable_name (const ScGguf *g, ScModelInfo *info)
{
  const char *path = sc_gguf_path (g), *slash = strrchr (path, '/');
  const char *file = slash != NULL ? slash + 1 : path;
  uint32_t ftype = 0;
  /* An absent general.file_type is not 0 (F32): no quantisation is named then. */
  const char *quant = sc_gguf_get_u32 (g, "general.file_type", &ftype, NULL) == SC_OK
                      ? ftype_name (ftype) : NULL;
  char base[128] = "", size_label[64] = "", finetune[128] = "", stem[256] = "";
  char *out = info->name;
  const size_t cap = sizeof info->name;
  size_t stem_len, at = 0;
  ScGgufStr s;

  snprintf (stem, sizeof stem, "%s", file);
  stem_len = strlen (stem);
  if (stem_len > 5 && ieq_n (stem + stem_len - 5, ".gguf", 5))
    stem[stem_len -= 5] = '\0';
  /* The quantisation at the stem's end (".Q4_1", "-q4_1") is not part of the fine-tune. */
  if (quant != NULL && stem_len > strlen (quant)
      && ieq_n (stem + stem_len - strlen (quant), quant, strlen (quant))
      && is_sep (stem[stem_len - strlen (quant) - 1]) && stem[stem_len - strlen (quant) - 1])
    stem[stem_len -= strlen (quant) + 1] = '\0';

  out[0] = '\0';
  if (sc_gguf_get_str (g, "general.basename", &s, NULL) == SC_OK && s.len > 0)
    {
      sc_gguf_str_copy (s, base, sizeof base);
      /* Pass 1: the base and size as the file name spells them. */
      if (strlen (base) <= stem_len && ieq_n (stem, base, strlen (base))
          && is_sep (stem[strlen (base)]))
        {
          memcpy (base, stem, strlen (base));
          at = strlen (base);
        }
      if (sc_gguf_get_str (g, "general.size_label", &s, NULL) == SC_OK)
        sc_gguf_str_copy (s, size_label, sizeof size_label);
      if (at > 0 && size_label[0] != '\0' && stem[at] != '\0'
          && ieq_n (stem + at + 1, size_label, strlen (size_label))
          && is_sep (stem[at + 1 + strlen (size_label)]))
        at += 1 + strlen (size_label);
      /* Pass 2: the fine-tune. */
      if (at > 0 && stem[at] != '\0')
        {
          snprintf (finetune, sizeof finetune, "%s", stem + at + 1);
          for (char *c = finetune; *c != '\0'; c++)
            if (*c == '-' || *c == '_')
              *c = ' ';
        }
      else if (at == 0 && sc_gguf_get_str (g, "general.finetune", &s, NULL) == SC_OK)
        sc_gguf_str_copy (s, finetune, sizeof finetune);
      append (out, cap, base, strlen (base));
      if (size_label[0] != '\0')
        {
          append (out, cap, " ", 1);
          append (out, cap, size_label, strlen (size_label));
        }
      if (finetune[0] != '\0')
        {
          append (out, cap, " ", 1);
          append (out, cap, finetune, strlen (finetune));
        }
    }
  else if (sc_gguf_get_str (g, "general.name", &s, NULL) == SC_OK && s.len > 0)
    append (out, cap, s.ptr, (size_t) s.len);
  else
    append (out, cap, stem[0] != '\0' ? stem : file, strlen (stem[0] != '\0' ? stem : file));
  /* Pass 3 and 4. */
  if (quant != NULL)
    {
      append (out, cap, " \xc2\xb7 ", 4);
      append (out, cap, quant, strlen (quant));
    }
}

/* Pass 1. */
static ScStatus
read_hparams (const ScGguf *g, ScModelInfo *info, ScError *err)
{
  ScGgufStr s;
  uint32_t key_len;
  const ScArchDesc *arch;
  const char *a;
  ScStatus st;

  if ((st = sc_gguf_get_str (g, "general.architecture", &s, err)) != SC_OK)
    return st;
  sc_gguf_str_copy (s, info->arch_name, sizeof info->arch_name);
  if ((arch = sc_arch_find (s)) == NULL)
    {
      char list[128];
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "architecture '%s' is not supported "
                           "(supported: %s)", info->arch_name, sc_arch_list (list, sizeof list));
    }
  info->arch = arch->id;
  a = info->arch_name;


  if ((st = get_dim (g, a, "block_count", MAX_LAYERS, true, 0, &info->n_layers, err)) != SC_OK
      || (st = get_dim (g, a, "embedding_length", MAX_DIM, true, 0, &info->n_embd, err)) != SC_OK
      || (st = get_dim (g, a, "attention.head_count", MAX_HEADS, true, 0, &info->n_heads, err))
             != SC_OK
      || (st = get_dim (g, a, "attention.head_count_kv", MAX_HEADS, false, info->n_heads,
                        &info->n_kv_heads, err)) != SC_OK
      || (st = get_dim (g, a, "feed_forward_length", MAX_DIM, true, 0, &info->n_ff, err)) != SC_OK
      || (st = get_dim (g, a, "context_length", MAX_DIM, false, 2048, &info->n_ctx_train, err))
             != SC_OK)
    return st;
  if (info->n_embd % info->n_heads != 0)
    return sc_error_set (err, SC_ERR_FORMAT, "embedding_length %u is not divisible by head_count %u",
                         info->n_embd, info->n_heads);
  if (info->n_heads % info->n_kv_heads != 0)
    return sc_error_set (err, SC_ERR_FORMAT, "head_count %u is not a multiple of head_count_kv %u",
                         info->n_heads, info->n_kv_heads);
  if ((st = get_dim (g, a, "attention.key_length", MAX_DIM, false, info->n_embd / info->n_heads,
                     &info->head_dim, err)) != SC_OK
      || (st = get_dim (g, a, "attention.value_length", MAX_DIM, false, info->head_dim, &key_len,
                        err)) != SC_OK)
    return st;
  if (key_len != info->head_dim)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key_length %u differs from value_length %u",
                         info->head_dim, key_len);
  if ((st = get_dim (g, a, "rope.dimension_count", info->head_dim, false, info->head_dim,
                     &info->n_rot, err)) != SC_OK)
    return st;
  if (info->n_rot % 2 != 0)
    return sc_error_set (err, SC_ERR_FORMAT, "rope.dimension_count %u is odd", info->n_rot);
  if ((st = get_float (g, a, "rope.freq_base", 10000.0f, &info->rope_base, err)) != SC_OK
      || (st = get_float (g, a, "attention.layer_norm_rms_epsilon", 1e-5f, &info->norm_eps, err))
             != SC_OK
      || (st = get_float (g, a, "attention.scale", 1.0f / sqrtf ((float) info->head_dim),
                          &info->attn_scale, err)) != SC_OK)
    return st;
  {
    char key[128];
    snprintf (key, sizeof key, "%s.rope.scaling.type", a);
    if (sc_gguf_get_str (g, key, &s, NULL) == SC_OK && !sc_gguf_str_eq (s, "none")
        && !sc_gguf_str_eq (s, "linear"))
      {
        char buf[32];
        return sc_error_set (err, SC_ERR_UNSUPPORTED, "RoPE scaling '%s' is not supported",
                             sc_gguf_str_copy (s, buf, sizeof buf));
      }
  }
  if (sc_gguf_get_u32 (g, "general.file_type", &info->file_type, NULL) != SC_OK)
    info->file_type = 0;
  /* what only this architecture has: its own keys and rules */
  if (arch->read_hparams != NULL)
    return arch->read_hparams (g, info, err);
  return SC_OK;
}

/* Pass 3 helper: finds @name and checks it has shape (ne0, ne1) in GGUF order (ne0 = input). */
static ScStatus
expect_tensor (const ScGguf *g, const char *name, int64_t ne0, int64_t ne1,
               const ScGgufTensor **out, ScError *err)
{
  const ScGgufTensor *t = sc_gguf_find_tensor (g, name);
  const ScTypeTraits *tr;

  if (t == NULL)
    return sc_error_set (err, SC_ERR_FORMAT, "tensor '%s' is missing", name);
  if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1)
    return sc_error_set (err, SC_ERR_FORMAT,
                         "tensor '%s' has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld]",
                         name, (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2],
                         (long long) t->ne[3], (long long) ne0, (long long) ne1);
  tr = sc_type_traits (t->type);
  if (tr == NULL || !tr->can_dequant)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor '%s' has type %s (%u), which is not "
                         "supported", name, tr != NULL ? tr->name : "unknown", t->type);
  *out = t;
  return SC_OK;
}

/* Pass 3 helper: a layer tensor ("blk.N.…") past block_count means the file holds more
 * layers than it says; running the first block_count of them is another model (issue 25:
 * block_count 17 in an 18-layer file ran 17 layers). */
static ScStatus
check_block_count (const ScGguf *g, uint32_t n_layers, ScError *err)
{
  for (uint64_t k = 0; k < sc_gguf_n_tensors (g); k++)
    {
      const ScGgufTensor *t = sc_gguf_tensor (g, k);
      char name[96];
      unsigned long layer;
      char *end;

      sc_gguf_str_copy (t->name, name, sizeof name);
      if (strncmp (name, "blk.", 4) != 0 || name[4] < '0' || name[4] > '9')
        continue;
      layer = strtoul (name + 4, &end, 10);
      if (*end == '.' && layer >= n_layers)
        return sc_error_set (err, SC_ERR_FORMAT, "tensor '%s' is past block_count %u: the file "
                             "holds more layers than it says", name, n_layers);
    }
  return SC_OK;
}

static ScStatus
dequant_job (const DequantJob *job, ScError *err)
{
  const ScGgufTensor *t = job->tensor;
  const ScTypeTraits *tr = sc_type_traits (t->type);
  size_t row_bytes = (size_t) (t->ne[0] / tr->block_size) * tr->type_size;
  int64_t rows = (int64_t) (t->n_elements / (uint64_t) t->ne[0]);
  int64_t r;
  float *scratch = NULL;

  /* A matrix that stays in the file is checked a row at a time: by its scales where they
   * bound every value (sc_quant_row_finite: a twentieth of the bytes, no decoding), else
   * decoded, which finds the element to name. */
  if (job->dst == NULL && (scratch = malloc ((size_t) t->ne[0] * sizeof (float))) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  for (r = 0; r < rows; r++)
    {
      float *row = scratch != NULL ? scratch : job->dst + (size_t) r * (size_t) t->ne[0];
      const void *src = t->data + (size_t) r * row_bytes;
      ScStatus st;
      char name[80];

      if (scratch != NULL && sc_quant_row_finite (t->type, src, t->ne[0]))
        continue;
      st = sc_dequant_row (t->type, src, row, t->ne[0], err);
      if (st != SC_OK)
        {
          free (scratch);
          return (sc_error_prefix (err, "tensor '%s'", sc_gguf_str_copy (t->name, name, sizeof name)), st);
        }
      /* A NaN or infinite weight makes every logit NaN: generate printed nothing and
       * exited 0 (issue 25). Checked here, on the row just written (still in cache). */
      for (int64_t c = 0; c < t->ne[0]; c++)
        if (!isfinite (row[c]))
          {
            /* named before the scratch (which may be @row) is freed */
            sc_error_set (err, SC_ERR_FORMAT, "tensor '%s': element %lld is %s (a weight must "
                          "be finite)", sc_gguf_str_copy (t->name, name, sizeof name),
                          (long long) (r * t->ne[0] + c), isnan (row[c]) ? "NaN"
                          : row[c] > 0 ? "+Inf" : "-Inf");
            free (scratch);
            return SC_ERR_FORMAT;
          }
    }
  free (scratch);
  return SC_OK;
}

typedef struct {
  const DequantJob *jobs;
  ScError first_error;
  pthread_mutex_t lock;
} DequantAll;

static void
dequant_task (void *ctx, int t)
{
  DequantAll *all = ctx;
  ScError e = { SC_OK, "" };

  if (dequant_job (&all->jobs[t], &e) != SC_OK)
    {
      pthread_mutex_lock (&all->lock);
      if (all->first_error.status == SC_OK)
        all->first_error = e;
      pthread_mutex_unlock (&all->lock);
    }
}

/* Runs @jobs on @n_threads threads; the first error, if any. */
static ScStatus
run_jobs (const DequantJob *jobs, size_t n_jobs, int n_threads, ScError *err)
{
  DequantAll all = { jobs, { SC_OK, "" }, PTHREAD_MUTEX_INITIALIZER };
  ScPool *pool = sc_pool_new (n_threads);

  if (pool == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "cannot start threads to load the weights");
  sc_pool_run (pool, (int) n_jobs, dequant_task, &all);
  sc_pool_free (pool);
  pthread_mutex_destroy (&all.lock);
  if (all.first_error.status != SC_OK)
    {
      if (err != NULL)
        *err = all.first_error;
      return all.first_error.status;
    }
  return SC_OK;
}

/* The file form of a layer's matrix whose float field is at @field (an offsetof into
 * ScLayerWeights), or NULL when the field is not a matrix (a norm, a bias). */
static ScWeightSrc *
layer_src (ScLayerWeights *lw, size_t field)
{
  static const struct { size_t field, src; } map[] = {
    { offsetof (ScLayerWeights, wq), offsetof (ScLayerWeights, src_wq) },
    { offsetof (ScLayerWeights, wk), offsetof (ScLayerWeights, src_wk) },
    { offsetof (ScLayerWeights, wv), offsetof (ScLayerWeights, src_wv) },
    { offsetof (ScLayerWeights, wo), offsetof (ScLayerWeights, src_wo) },
    { offsetof (ScLayerWeights, w_gate), offsetof (ScLayerWeights, src_w_gate) },
    { offsetof (ScLayerWeights, w_up), offsetof (ScLayerWeights, src_w_up) },
    { offsetof (ScLayerWeights, w_down), offsetof (ScLayerWeights, src_w_down) },
  };

  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].field == field)
      return (ScWeightSrc *) ((char *) lw + map[i].src);
  return NULL;
}

/* Points GPT-2's and Phi-3's wk, wv (bk, bv) at the rows of their fused attn_qkv (bias),
 * loaded into wq (bq), and Phi-3's w_up at the second half of its fused ffn_up, loaded into
 * w_gate, so that each group is back to back as the fused projections need. */
static void
split_fused (ScModel *m, bool matrices)
{
  const ScModelInfo *in = &m->info;
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff;

  for (uint32_t l = 0; l < in->n_layers; l++)
    {
      ScLayerWeights *lw = &m->weights.layers[l];
      if (matrices && lw->wq != NULL && lw->src_wk.n_parts == 0)
        {
          lw->wk = lw->wq + Q * E;
          lw->wv = lw->wk + KV * E;
        }
      if (matrices && lw->w_gate != NULL && lw->src_w_up.n_parts == 0)
        lw->w_up = lw->w_gate + F * E;
      if (!matrices && lw->bq != NULL && lw->bk == NULL)
        {
          lw->bk = lw->bq + Q;
          lw->bv = lw->bk + KV;
        }
    }
}

static ScStatus
load_weights (ScModel *m, int n_threads, ScError *err)
{
  const ScModelInfo *in = &m->info;
  const ScArchDesc *arch = sc_arch_for (in->arch);
  const ScGguf *g = m->gguf;
  const int64_t E = in->n_embd, V = in->n_vocab;
  size_t off = 0, moff = 0, i;
  const ScGgufTensor *out_t = NULL;
  DequantJob *jobs;
  size_t n_jobs = 0;
  uint32_t l;
  int t;
  ScStatus st = SC_OK;

  if (arch == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "architecture '%s' has no loader",
                         in->arch_name);
  /* 3. look every tensor up and check its shape */
  jobs = calloc ((size_t) in->n_layers * arch->n_tensors + 5, sizeof *jobs);
  m->weights.layers = calloc (in->n_layers, sizeof *m->weights.layers);
  if (jobs == NULL || m->weights.layers == NULL)
    {
      free (jobs);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  out_t = sc_gguf_find_tensor (g, "output.weight");
  m->info.tied_output = out_t == NULL;
  if ((st = check_block_count (g, in->n_layers, err)) != SC_OK)
    goto out;

  /* Each tensor's place in its arena (a matrix's in the matrices' arena, made only when
   * sc_model_weights asks); its element count is the one the file's tensor holds
   * (expect_tensor checked the shape), so each sum is bounded by the file. */
#define JOB(name, ne0, ne1, field_, src_)                                                     \
  do                                                                                          \
    {                                                                                         \
      const ScGgufTensor *t_;                                                                 \
      size_t *at_;                                                                            \
      if ((st = expect_tensor (g, name, ne0, ne1, &t_, err)) != SC_OK)                        \
        goto out;                                                                             \
      jobs[n_jobs].tensor = t_;                                                               \
      jobs[n_jobs].field = &(field_);                                                         \
      jobs[n_jobs].src = (src_);                                                              \
      at_ = (src_) != NULL ? &moff : &off;                                                    \
      jobs[n_jobs].offset = *at_;                                                             \
      if ((uint64_t) t_->n_elements > SIZE_MAX / sizeof (float) - *at_)                       \
        {                                                                                     \
          st = sc_error_set (err, SC_ERR_RANGE, "the weights do not fit in memory");          \
          goto out;                                                                           \
        }                                                                                     \
      *at_ += (size_t) t_->n_elements;                                                        \
      n_jobs++;                                                                               \
    }                                                                                         \
  while (0)

  JOB ("token_embd.weight", E, V, m->weights.token_embd, &m->weights.src_token_embd);
  JOB ("output_norm.weight", E, 1, m->weights.output_norm, NULL);
  if (in->layer_norm)
    JOB ("output_norm.bias", E, 1, m->weights.output_norm_b, NULL);
  if (in->learned_positions)
    JOB ("position_embd.weight", E, in->n_ctx_train, m->weights.position_embd, NULL);
  if (!m->info.tied_output)
    JOB ("output.weight", E, V, m->weights.output, &m->weights.src_output);
  for (l = 0; l < in->n_layers; l++)
    /* In the table's order, which places the tensors back to back in the arena where the
     * architecture's fused projections need it (sc-arch.h). */
    for (t = 0; t < arch->n_tensors; t++)
      {
        const ScArchTensor *at = &arch->tensors[t];
        ScLayerWeights *lw = &m->weights.layers[l];
        float **field = (float **) ((char *) lw + at->field);
        char name[96];

        snprintf (name, sizeof name, "blk.%u.%s", l, at->name);
        JOB (name, sc_arch_dim (at->ne0, in), sc_arch_dim (at->ne1, in), *field,
             layer_src (lw, at->field));
        if (l == 0 && strcmp (at->name, arch->main_tensor) == 0)
          m->info.main_type = jobs[n_jobs - 1].tensor->type;
      }
#undef JOB

  /* Every tensor is there with its shape: now the vectors' arena, and the matrices' file
   * form. */
  m->arena = malloc ((off > 0 ? off : 1) * sizeof (float));
  if (m->arena == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "out of memory for %zu MB of weights",
                         off * sizeof (float) >> 20);
      goto out;
    }
  for (i = 0; i < n_jobs; i++)
    if (jobs[i].src != NULL)
      {
        const ScGgufTensor *tt = jobs[i].tensor;
        *jobs[i].src = (ScWeightSrc) {
          .cols = tt->ne[0],
          .n_parts = 1,
          .parts = { { tt->type, tt->data, (int64_t) (tt->n_elements / (uint64_t) tt->ne[0]) } },
        };
      }
    else
      *jobs[i].field = jobs[i].dst = m->arena + jobs[i].offset;
  if (m->info.tied_output)
    m->weights.src_output = m->weights.src_token_embd;
  split_fused (m, false);

  /* 4. decode the vectors and check every matrix, in parallel over tensors (the
   *    vocabulary matrix, the largest, is first in the list, which is what balancing
   *    needs). */
  if ((st = run_jobs (jobs, n_jobs, n_threads, err)) != SC_OK)
    goto out;

  /* What sc_model_weights needs to make the matrices' floats later. */
  m->n_threads = n_threads;
  m->matrix_floats = moff;
  for (i = 0; i < n_jobs; i++)
    if (jobs[i].src != NULL)
      jobs[m->n_matrix_jobs++] = jobs[i];
  m->matrix_jobs = jobs;
  jobs = NULL;

  m->n_params = 0;
  for (uint64_t k = 0; k < sc_gguf_n_tensors (g); k++)
    m->n_params += sc_gguf_tensor (g, k)->n_elements;
out:
  free (jobs);
  return st;
}

/* sc_model_weights' first call: the matrices decoded into their arena, in the load's
 * order (wq, wk, wv and w_gate, w_up back to back). Called under m->lock. */
static ScStatus
expand_matrices (ScModel *m, ScError *err)
{
  ScStatus st;

  if ((m->matrix_arena = malloc ((m->matrix_floats > 0 ? m->matrix_floats : 1)
                                 * sizeof (float))) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory for %zu MB of weights",
                         m->matrix_floats * sizeof (float) >> 20);
  for (size_t i = 0; i < m->n_matrix_jobs; i++)
    m->matrix_jobs[i].dst = m->matrix_arena + m->matrix_jobs[i].offset;
  if ((st = run_jobs (m->matrix_jobs, m->n_matrix_jobs, m->n_threads, err)) != SC_OK)
    {
      free (m->matrix_arena);
      m->matrix_arena = NULL;
      return st;
    }
  for (size_t i = 0; i < m->n_matrix_jobs; i++)
    *m->matrix_jobs[i].field = m->matrix_jobs[i].dst;
  if (m->info.tied_output)
    m->weights.output = m->weights.token_embd;
  split_fused (m, true);
  return SC_OK;
}

ScStatus
sc_model_open_gguf (ScGguf *gguf, int n_threads, ScModel **out, ScError *err)
{
  ScModel *m;
  ScStatus st;

  *out = NULL;
  m = calloc (1, sizeof *m);
  if (m == NULL)
    {
      sc_gguf_close (gguf);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  m->gguf = gguf;
  pthread_mutex_init (&m->lock, NULL);

  if ((st = read_hparams (gguf, &m->info, err)) != SC_OK)
    goto fail;
  if ((st = sc_tokenizer_new_from_gguf (gguf, &m->tokenizer, err)) != SC_OK)
    goto fail;
  m->info.n_vocab = sc_tokenizer_n_vocab (m->tokenizer);
  if (m->info.n_vocab == 0 || m->info.n_vocab > MAX_VOCAB)
    {
      st = sc_error_set (err, SC_ERR_RANGE, "vocabulary size %u is out of range", m->info.n_vocab);
      goto fail;
    }
  readable_name (gguf, &m->info);
  if ((st = load_weights (m, n_threads, err)) != SC_OK)
    goto fail;
  *out = m;
  return SC_OK;

fail:
  sc_model_free (m);
  return st;
}

ScStatus
sc_model_open (const char *path, int n_threads, ScModel **out, ScError *err)
{
  ScGguf *g;
  ScStatus st;

  if (out == NULL || path == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_model_open: NULL argument");
  *out = NULL;
  if ((st = sc_gguf_open (path, &g, err)) != SC_OK)
    return st;
  st = sc_model_open_gguf (g, n_threads, out, err);
  if (st != SC_OK)
    sc_error_prefix (err, "%s", path);
  return st;
}

ScStatus
sc_model_peek (const char *path, ScModelInfo *info, ScError *err)
{
  ScGguf *g;
  ScStatus st;

  if (path == NULL || info == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_model_peek: NULL argument");
  memset (info, 0, sizeof *info);
  if ((st = sc_gguf_open (path, &g, err)) != SC_OK)
    return st;
  if ((st = read_hparams (g, info, err)) == SC_OK)
    readable_name (g, info);
  else
    sc_error_prefix (err, "%s", path);
  sc_gguf_close (g);
  return st;
}

void
sc_model_free (ScModel *m)
{
  if (m == NULL)
    return;
  sc_tokenizer_free (m->tokenizer);
  free (m->weights.layers);
  free (m->arena);
  free (m->matrix_arena);
  free (m->matrix_jobs);
  pthread_mutex_destroy (&m->lock);
  sc_gguf_close (m->gguf);
  free (m);
}

const ScModelInfo *sc_model_info (const ScModel *m) { return &m->info; }

bool
sc_model_has_backward (const ScModel *m)
{
  const ScArchDesc *arch = m != NULL ? sc_arch_for (m->info.arch) : NULL;

  return arch != NULL && arch->layer_backward != NULL;
}
const ScWeights *
sc_model_weights (const ScModel *model)
{
  ScModel *m = (ScModel *) model; /* the lazily made arena is not the model's meaning */
  bool ok;

  pthread_mutex_lock (&m->lock);
  if (!m->expanded)
    m->expanded = expand_matrices (m, NULL) == SC_OK;
  ok = m->expanded;
  pthread_mutex_unlock (&m->lock);
  return ok ? &m->weights : NULL;
}

const ScWeights *sc_model_weights_packed (const ScModel *m) { return &m->weights; }

ScStatus
sc_model_matrix_rows (const ScWeightSrc *src, const float *dense, int64_t row0, int64_t n,
                      float *dst, ScError *err)
{
  if (dense == NULL)
    return sc_weight_src_dequant (src, row0, n, dst, err);
  if (row0 < 0 || n < 0 || row0 + n > sc_weight_src_rows (src))
    return sc_error_set (err, SC_ERR_RANGE, "rows %lld .. %lld are outside a matrix of %lld rows",
                         (long long) row0, (long long) (row0 + n),
                         (long long) sc_weight_src_rows (src));
  memcpy (dst, dense + (size_t) row0 * (size_t) src->cols,
          (size_t) n * (size_t) src->cols * sizeof (float));
  return SC_OK;
}
const ScTokenizer *sc_model_tokenizer (const ScModel *m) { return m->tokenizer; }
const ScGguf *sc_model_gguf (const ScModel *m) { return m->gguf; }
uint32_t
sc_model_layer_window (const ScModelInfo *info, int layer)
{
  if (info->sliding_window == 0 || layer < 0 || (uint32_t) layer >= info->n_layers)
    return 0;
  if (info->swa_pattern == 0 || ((uint32_t) layer + 1) % info->swa_pattern == 0)
    return 0;
  return info->sliding_window;
}

uint64_t sc_model_n_params (const ScModel *m) { return m->n_params; }

uint64_t
sc_model_kv_bytes_per_token (const ScModel *m, unsigned bytes_per_elem)
{
  return 2ull * m->info.n_layers * m->info.n_kv_heads * m->info.head_dim * bytes_per_elem;
}
