/* test-mixing-study.c — value zeroing and ALTI as a study (engine/study/sc-mixing-study.h)
 * on a two-layer llama written here.
 *
 * The model. E = 8, H = 2 query heads over H_kv = 2 KV heads, head_dim 4 (RoPE on dims 0,
 * 1), F = 6, the byte vocabulary of sc-test-gguf (<s> = 264); every weight drawn from a
 * fixed LCG, except: <s>'s embedding is e_7 and no other token's has a 7th component, and
 * layer 0's W_V has a zero 7th column. So at layer 0 <s>'s value vectors are exactly zero
 * in both heads (x̂_<s> is c·e_7, each product w · x̂ is 0 · c or w · 0), while every other
 * weight, the attention and the FFN are generic. What must follow:
 *   value zeroing, layer 0: zeroing <s>'s values changes nothing, bit for bit (the rerun's
 *     patch equals the reference's), so VZ_0[i][0] = 0 exactly for every row; row 0 (which
 *     sees only <s>) has every distance 0 and stays all 0 (docs/metrics.md: a zero row);
 *   ALTI, layer 0: T_i(x_<s>) = 0 for i >= 1, so d = ‖y_i‖₁ and C_0[i][0] = 0 exactly; row 0
 *     is T_0(x_0) = y_0 alone: C_0[0][0] = 1;
 *   the layer rerun equals the whole model run with the same intervention: VZ_1 from
 *     n + 1 full sc_forward runs (values patched at layer 1, the residual entering layer 2
 *     read back) equals the study's bit for bit;
 *   the rollout is M_1 · M_0; every row of every layer map sums to 1 or is all 0.
 * Then the store round trip through the kind, tampered studies refused, bad input refused,
 * cancel.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-mixing.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-mixing-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

enum { E = 8, H = 2, HKV = 2, D = 4, ROT = 2, F = 6, L = 2, VOCAB = SC_TEST_GGUF_BYTE_VOCAB };
#define BOS 264

static guint32 lcg = 12345;

static float
draw (void)
{
  lcg = lcg * 1664525u + 1013904223u;
  return (float) ((lcg >> 8) / 16777216.0 - 0.5);
}

static void
put (ScTestGguf *g, int layer, const char *name, int64_t ne0, int64_t ne1, const float *w)
{
  g_autofree char *full = layer < 0 ? g_strdup (name) : g_strdup_printf ("blk.%d.%s", layer,
                                                                         name);
  int64_t ne[2] = { ne0, ne1 };
  sc_test_gguf_add_tensor (g, full, ne1 == 1 ? 1 : 2, ne, 0, w, (gsize) (ne0 * ne1) * 4);
}

/* @n random weights into a new array */
static float *
randoms (int n)
{
  float *w = g_new (float, n);
  for (int i = 0; i < n; i++)
    w[i] = draw ();
  return w;
}

static GBytes *
zero_value_model (void)
{
  ScTestGguf *g = sc_test_gguf_new (3);
  g_autofree float *emb = randoms (VOCAB * E);
  float ones[E];
  GBytes *out;

  sc_test_gguf_add_str (g, "general.architecture", "llama");
  sc_test_gguf_add_str (g, "general.name", "zero-value-by-construction");
  sc_test_gguf_add_u32 (g, "llama.block_count", L);
  sc_test_gguf_add_u32 (g, "llama.embedding_length", E);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count_kv", HKV);
  sc_test_gguf_add_u32 (g, "llama.attention.key_length", D);
  sc_test_gguf_add_u32 (g, "llama.attention.value_length", D);
  sc_test_gguf_add_u32 (g, "llama.rope.dimension_count", ROT);
  sc_test_gguf_add_u32 (g, "llama.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "llama.context_length", 64);
  sc_test_gguf_add_f32 (g, "llama.attention.layer_norm_rms_epsilon", 1e-6f);
  sc_test_gguf_add_byte_vocab (g);
  for (int t = 0; t < VOCAB; t++)
    for (int e = 0; e < E; e++)
      if (e == 7 || t == BOS) /* <s> is e_7; no other token has a 7th component */
        emb[t * E + e] = t == BOS && e == 7 ? 1.0f : 0.0f;
  for (int e = 0; e < E; e++)
    ones[e] = 1.0f;
  put (g, -1, "token_embd.weight", E, VOCAB, emb);
  put (g, -1, "output_norm.weight", E, 1, ones);
  for (int l = 0; l < L; l++)
    {
      g_autofree float *wq = randoms (H * D * E), *wk = randoms (HKV * D * E),
                       *wv = randoms (HKV * D * E), *wo = randoms (E * H * D),
                       *gate = randoms (F * E), *up = randoms (F * E), *down = randoms (E * F);
      if (l == 0) /* W_V [out][in]: nothing read from dimension 7 */
        for (int r = 0; r < HKV * D; r++)
          wv[r * E + 7] = 0.0f;
      for (int k = 0; k < H * D * E; k++)
        wq[k] *= 4.0f; /* sharper attention than uniform */
      put (g, l, "attn_norm.weight", E, 1, ones);
      put (g, l, "attn_q.weight", E, H * D, wq);
      put (g, l, "attn_k.weight", E, HKV * D, wk);
      put (g, l, "attn_v.weight", E, HKV * D, wv);
      put (g, l, "attn_output.weight", H * D, E, wo);
      put (g, l, "ffn_norm.weight", E, 1, ones);
      put (g, l, "ffn_gate.weight", E, F, gate);
      put (g, l, "ffn_up.weight", E, F, up);
      put (g, l, "ffn_down.weight", F, E, down);
    }
  out = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  return out;
}

/* "<s>" then @n − 1 byte tokens */
static int32_t *
make_ids (int n)
{
  int32_t *ids = g_new (int32_t, n);

  ids[0] = BOS;
  for (int i = 1; i < n; i++)
    ids[i] = 'a' + (i * 7) % 26;
  return ids;
}

typedef struct {
  GBytes *bytes;
  char *dir, *model_path, *db_path;
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
} Fixture;

static void
fixture_open (Fixture *f)
{
  gsize len;
  const void *d;
  ScError err = { 0 };

  lcg = 12345;
  f->bytes = zero_value_model ();
  d = g_bytes_get_data (f->bytes, &len);
  f->dir = g_dir_make_tmp ("saccade-mixing-XXXXXX", NULL);
  f->model_path = g_build_filename (f->dir, "zero.gguf", NULL);
  f->db_path = g_build_filename (f->dir, "s.sqlite", NULL);
  g_assert_true (g_file_set_contents (f->model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (f->model_path, 1, &f->model, &err), ==, SC_OK);
  f->backend = sc_backend_cpu_ref_new ();
  g_assert_cmpint (sc_session_new (f->model, f->backend, &f->session, &err), ==, SC_OK);
}

static void
fixture_close (Fixture *f)
{
  sc_session_free (f->session);
  sc_backend_free (f->backend);
  sc_model_free (f->model);
  g_remove (f->db_path);
  g_remove (f->model_path);
  g_rmdir (f->dir);
  g_free (f->db_path);
  g_free (f->model_path);
  g_free (f->dir);
  g_bytes_unref (f->bytes);
}

static ScMixingResult *
run_method (Fixture *f, const int32_t *ids, int n, int method)
{
  const ScMixingParams p = { .method = method };
  ScMixingResult *r = NULL;
  ScError err = { 0 };

  if (sc_mixing_run (f->session, f->model, ids, n, &p, NULL, &r, &err) != SC_OK)
    g_error ("%s", err.message);
  g_assert_cmpint (r->n_layers, ==, L);
  g_assert_cmpint (r->n_tokens, ==, n);
  return r;
}

/* Rows of the layer maps: 1 or all 0; nothing above the diagonal; the rollout M_1 M_0. */
static void
check_shape (const ScMixingResult *r)
{
  const int n = r->n_tokens;
  const float *m0 = sc_mixing_result_map (r, 0), *m1 = sc_mixing_result_map (r, 1),
              *roll = sc_mixing_result_map (r, L);

  for (int l = 0; l < L; l++)
    for (int i = 0; i < n; i++)
      {
        const float *row = sc_mixing_result_map (r, l) + i * n;
        double s = 0.0;
        for (int j = 0; j < n; j++)
          {
            g_assert_cmpfloat (row[j], >=, 0.0f);
            if (j > i)
              g_assert_cmpfloat (row[j], ==, 0.0f);
            s += row[j];
          }
        g_assert_true (s == 0.0 || fabs (s - 1.0) < 1e-6);
      }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      {
        double want = 0.0;
        for (int k = 0; k < n; k++)
          want += (double) m1[i * n + k] * m0[k * n + j];
        g_assert_cmpfloat_with_epsilon (roll[i * n + j], want, 1e-6);
      }
}

static void
test_zero_value (void)
{
  Fixture f = { 0 };
  const int n = 7;
  g_autofree int32_t *ids = make_ids (n);
  ScMixingResult *vz, *al;

  fixture_open (&f);
  vz = run_method (&f, ids, n, SC_MIXING_VALUE_ZEROING);
  al = run_method (&f, ids, n, SC_MIXING_ALTI);
  check_shape (vz);
  check_shape (al);
  for (int i = 0; i < n; i++)
    {
      g_assert_cmpfloat (sc_mixing_result_map (vz, 0)[i * n + 0], ==, 0.0f);
      g_assert_cmpfloat (sc_mixing_result_map (al, 0)[i * n + 0], ==, i == 0 ? 1.0f : 0.0f);
    }
  /* the test can fail: the other keys do mix, and <s> matters at layer 1 */
  for (int i = 1; i < n; i++)
    {
      double s = 0.0;
      g_assert_cmpfloat (sc_mixing_result_map (vz, 0)[i * n + 1], >, 0.0f);
      for (int j = 1; j <= i; j++)
        s += sc_mixing_result_map (al, 0)[i * n + j];
      g_assert_cmpfloat_with_epsilon (s, 1.0, 1e-6); /* all of it on the other keys */
    }
  g_assert_cmpfloat (sc_mixing_result_map (vz, 1)[(n - 1) * n + 0], >, 0.0f);
  sc_mixing_result_free (vz);
  sc_mixing_result_free (al);
  fixture_close (&f);
}

/* The observer's values of layer 1 (n, HKV · D). */
typedef struct {
  float *v;
  int layer;
} Vals;

static bool
take_values (void *user, int layer, const float *q, const float *k, const float *v, int n_q,
             int n_k, int q_width, int kv_width)
{
  Vals *vs = user;

  (void) q, (void) k, (void) n_q, (void) q_width;
  if (layer == vs->layer)
    memcpy (vs->v, v, (size_t) n_k * kv_width * sizeof *v);
  return true;
}

/* The final residual (what leaves layer 1) of a whole run under @iv into @out (n, E). */
static void
whole_run (Fixture *f, const int32_t *ids, int n, const ScIntervention *iv, float *out)
{
  ScForwardOptions fo = { .keep_residuals = true, .intervention = iv };
  g_autofree float *logits = g_new (float, VOCAB);
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (f->session, ids, n, &fo, logits, &err), ==, SC_OK);
  for (int i = 0; i < n; i++)
    g_assert_cmpint (sc_session_residual (f->session, L, i, out + i * E, &err), ==, SC_OK);
}

/* VZ_1 from whole-model runs under the same intervention equals the study's, bit for bit. */
static void
test_layer_rerun (void)
{
  Fixture f = { 0 };
  const int n = 6, layer = 1;
  g_autofree int32_t *ids = make_ids (n);
  g_autofree float *patch = g_new0 (float, (gsize) L * H * n * D);
  g_autofree float *base = g_new (float, n * E), *var = g_new (float, n * E);
  g_autofree float *want = g_new0 (float, n * n), *logits = g_new (float, VOCAB);
  Vals vs = { g_new (float, n * HKV * D), layer };
  ScObserver obs = { .qkv = take_values, .user = &vs };
  ScForwardOptions fo = { .observer = &obs };
  uint8_t on[L * H] = { 0 };
  ScIntervention iv = { .patch_tokens = n, .v_patch = patch, .v_patch_on = on };
  ScError err = { 0 };
  ScMixingResult *vz;

  fixture_open (&f);
  g_assert_cmpint (sc_forward (f.session, ids, n, &fo, logits, &err), ==, SC_OK);
  for (int h = 0; h < H; h++)
    {
      on[layer * H + h] = 1;
      for (int j = 0; j < n; j++)
        memcpy (patch + ((layer * H + h) * n + j) * D, vs.v + j * HKV * D + (h / (H / HKV)) * D,
                D * sizeof (float));
    }
  whole_run (&f, ids, n, &iv, base);
  for (int j = 0; j < n; j++)
    {
      g_autofree float *saved = g_new (float, H * D);
      for (int h = 0; h < H; h++)
        {
          memcpy (saved + h * D, patch + ((layer * H + h) * n + j) * D, D * sizeof (float));
          memset (patch + ((layer * H + h) * n + j) * D, 0, D * sizeof (float));
        }
      whole_run (&f, ids, n, &iv, var);
      for (int h = 0; h < H; h++)
        memcpy (patch + ((layer * H + h) * n + j) * D, saved + h * D, D * sizeof (float));
      for (int i = j; i < n; i++)
        want[i * n + j] = (float) sc_mixing_cos_distance (base + i * E, var + i * E, E);
    }
  sc_mixing_normalise_rows (want, n);
  vz = run_method (&f, ids, n, SC_MIXING_VALUE_ZEROING);
  for (int k = 0; k < n * n; k++)
    g_assert_cmpfloat (sc_mixing_result_map (vz, layer)[k], ==, want[k]);
  g_assert_cmpfloat (want[(n - 1) * n + 2], >, 0.0f); /* not all zero */
  sc_mixing_result_free (vz);
  g_free (vs.v);
  fixture_close (&f);
}

static void
tamper (const char *db_path, const char *sql)
{
  sqlite3 *h;

  g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_changes (h), >=, 1);
  sqlite3_close (h);
}

/* Both methods stored through the kind and read back the same; each SQL of @tampers (ID:
 * the study's id) on a fresh copy makes the load refuse it. */
static void
test_store_roundtrip (void)
{
  static const char *const tampers[] = {
    /* a share above 1 */
    "UPDATE study_series SET value = 1.5 WHERE study_id = ID AND series = 'maps' AND pos = 4",
    /* a map cell missing */
    "DELETE FROM study_series WHERE study_id = ID AND series = 'maps' AND pos = 7",
    /* a row that no longer sums to 1 (row 2's first cell) */
    "UPDATE study_series SET value = value + 0.25 WHERE study_id = ID AND series = 'maps' "
    "AND pos = 3",
    /* a length that does not fit the maps stored */
    "UPDATE study_series SET value = 6 WHERE study_id = ID AND series = 'n'",
    /* a mixing ratio outside [0, 1] */
    "UPDATE study_series SET value = -0.5 WHERE study_id = ID AND series = 'mix' AND pos = 1",
    NULL,
  };
  const int n = 5;
  Fixture f = { 0 };
  g_autofree int32_t *ids = make_ids (n);
  const ScStudyKind *k = sc_study_kind_find ("mixing");
  ScStoreOptions so = { .writable = true };
  ScStoreModel sm;
  ScError err = { 0 };

  g_assert_nonnull (k);
  fixture_open (&f);
  g_assert_cmpint (sc_store_model_identify (f.model, f.model_path, &sm, &err), ==, SC_OK);
  for (int m = SC_MIXING_VALUE_ZEROING; m <= SC_MIXING_ALTI; m++)
    {
      ScMixingParams p = { .method = 0 };
      ScStudyCtx ctx = { .model = f.model, .session = f.session, .run_id = 3, .ids = ids,
                         .n_tokens = n };
      char pj[SC_STUDY_PARAMS_MAX], want[96];
      void *r = NULL, *back = NULL;
      int64_t id = 0, id2 = 0;
      ScStore *store = NULL;
      ScMixingResult *a, *b;

      g_assert_cmpint (sc_study_option_set (k, &p, "method", sc_mixing_method_names[m], VOCAB, &err),
                       ==, SC_OK);
      g_assert_cmpint (p.method, ==, m);
      g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
      snprintf (want, sizeof want, "{\"study\":1,\"run\":3,\"method\":\"%s\"}",
                sc_mixing_method_names[m]);
      g_assert_cmpstr (pj, ==, want);
      g_assert_cmpint (sc_store_open (f.db_path, &so, &store, &err), ==, SC_OK);
      g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
      g_assert_cmpint (k->result_n_tokens (r), ==, n);
      g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
      g_assert_cmpint (k->load (store, sc_model_info (f.model), sm.sha256, pj, &p, &back, &id2,
                                &err), ==, SC_OK);
      g_assert_cmpint (id2, ==, id);
      a = r, b = back;
      g_assert_cmpint (b->method, ==, m);
      g_assert_cmpint (b->top1_clean, ==, a->top1_clean);
      g_assert_cmpmem (a->maps, (gsize) (L + 1) * n * n * sizeof (float), b->maps,
                       (gsize) (L + 1) * n * n * sizeof (float));
      for (int l = 0; l <= L; l++)
        g_assert_true (a->mix[l] == b->mix[l]);
      k->result_free (back);
      back = NULL;
      sc_store_close (store);
      for (int t = 0; tampers[t] != NULL; t++)
        {
          g_autofree char *copy = g_strdup_printf ("%s.%d", f.db_path, t);
          g_autofree char *id_text = g_strdup_printf ("%lld", (long long) id);
          GString *sql_s = g_string_new (tampers[t]);
          g_autofree char *sql = (g_string_replace (sql_s, "ID", id_text, 0),
                                  g_string_free (sql_s, FALSE));
          g_autofree char *bytes = NULL;
          gsize len;
          g_assert_true (g_file_get_contents (f.db_path, &bytes, &len, NULL));
          g_assert_true (g_file_set_contents (copy, bytes, (gssize) len, NULL));
          tamper (copy, sql);
          g_assert_cmpint (sc_store_open (copy, &so, &store, &err), ==, SC_OK);
          g_assert_cmpint (k->load (store, sc_model_info (f.model), sm.sha256, pj, &p, &back,
                                    NULL, &err), ==, SC_ERR_FORMAT);
          g_assert_null (back);
          g_test_message ("refused (%s): %s", tampers[t], err.message);
          sc_store_close (store);
          g_remove (copy);
        }
      k->result_free (r);
    }
  fixture_close (&f);
}

static void
test_bad_input (void)
{
  Fixture f = { 0 };
  g_autofree int32_t *ids = make_ids (4);
  ScMixingParams p = { .method = 2 };
  ScMixingResult *r = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  const ScStudyKind *k = sc_study_kind_find ("mixing");
  ScStudyCtx ctx;

  fixture_open (&f);
  g_assert_cmpint (sc_mixing_run (f.session, f.model, ids, 4, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "method 2"));
  p.method = SC_MIXING_ALTI;
  g_assert_cmpint (sc_mixing_run (f.session, f.model, ids, 1, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "at least 2 needed"));
  ids[2] = VOCAB;
  g_assert_cmpint (sc_mixing_run (f.session, f.model, ids, 4, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_null (r);
  g_assert_cmpint (sc_study_option_set (k, &p, "method", "lrp", VOCAB, &err), ==, SC_ERR_INVALID_ARG);
  ctx = (ScStudyCtx) { .model = f.model, .session = f.session, .run_id = 1, .ids = ids,
                       .n_tokens = 4 };
  p.method = -1;
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==,
                   SC_ERR_INVALID_ARG);
  /* (L + 1) n(n+1)/2 <= 2^19 */
  g_assert_true (sc_mixing_fits (30, 183));
  g_assert_false (sc_mixing_fits (30, 184));
  g_assert_cmpint (sc_session_layer_output (f.session, ids, 4, L, NULL, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  fixture_close (&f);
}

static bool
stop_now (void *user, double fraction)
{
  (void) user, (void) fraction;
  return false;
}

static void
test_cancel (void)
{
  Fixture f = { 0 };
  g_autofree int32_t *ids = make_ids (6);
  ScStudyCtx ctx = { .progress = stop_now };
  ScError err = { 0 };

  fixture_open (&f);
  for (int m = SC_MIXING_VALUE_ZEROING; m <= SC_MIXING_ALTI; m++)
    {
      const ScMixingParams p = { .method = m };
      ScMixingResult *r = NULL;
      g_assert_cmpint (sc_mixing_run (f.session, f.model, ids, 6, &p, &ctx, &r, &err), ==,
                       SC_ERR_CANCELLED);
      g_assert_null (r);
    }
  fixture_close (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mixing-study/zero-value", test_zero_value);
  g_test_add_func ("/mixing-study/layer-rerun", test_layer_rerun);
  g_test_add_func ("/mixing-study/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/mixing-study/bad-input", test_bad_input);
  g_test_add_func ("/mixing-study/cancel", test_cancel);
  return g_test_run ();
}
