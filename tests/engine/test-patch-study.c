/* test-patch-study.c — activation patching (engine/study/sc-patch-study.h and the patch
 * fields of ScIntervention), on the tiny llama of sc-test-gguf (2 layers × 4 heads) and on
 * the two-layer induction model whose circuit is known by construction.
 *
 * 1. The intervention: the residual entering layer l patched at every position from a
 *    source run gives the source run's logits bit for bit; a run's own head outputs patched
 *    into it change nothing; bad patch fields are refused naming the field.
 * 2. Every cell of the study (heads, head-positions, residual; denoise and noise) equals, bit
 *    for bit, a full run in a fresh session with that patch (prefix reuse changes nothing);
 *    the metric and its normalisation are as defined.
 * 3. By construction: on "…A B … A" against "…A C … A" (target B, contrast C) the only head
 *    that restores the clean prediction is the induction head L1.H0 (effect 1 to 1e-4); every
 *    other head's effect is below 0.01; the residual restores it exactly where the
 *    construction says the information sits (the B/C position, before each layer).
 * 4. Stored and read back through the kind: the same numbers; a tampered cell refused.
 * 5. Bad input: different lengths, the contrast equal to the target, cancel.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/format/sc-gguf.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-patch-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

/* Two sequences of the tiny model's byte vocabulary that differ at positions 3 and 6. */
static const int32_t clean_ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
static const int32_t corrupt_ids[] = { 264, 72, 101, 120, 108, 111, 99, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (clean_ids))

static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

typedef struct {
  float *heads; /* (L, H, n, d) */
  int H, d, n;
} Heads;

static bool
take (void *user, int layer, const float *o, int n_q, int width)
{
  Heads *s = user;

  for (int p = 0; p < n_q; p++)
    for (int h = 0; h < s->H; h++)
      memcpy (s->heads + (((size_t) layer * s->H + h) * s->n + p) * s->d,
              o + (size_t) p * width + (size_t) h * s->d, (size_t) s->d * sizeof (float));
  return true;
}

/* A run of @ids: its (n, V) logits (the last row only, (V), without @all: computed alone,
 * as the study does), and its head outputs (L, H, n, d) and residuals (L, n, E) when asked. */
static void
run_source (ScSession *s, const ScModelInfo *in, const int32_t *ids, int n, bool all,
            float *logits, float *heads, float *resid)
{
  Heads h = { heads, (int) in->n_heads, (int) in->head_dim, n };
  ScObserver obs = { .attn_output = take, .user = &h };
  ScForwardOptions opt = { .all_logits = all, .keep_residuals = true,
                           .observer = heads != NULL ? &obs : NULL };
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (s, ids, n, &opt, logits, &err), ==, SC_OK);
  for (int l = 0; resid != NULL && l < (int) in->n_layers; l++)
    for (int q = 0; q < n; q++)
      g_assert_cmpint (sc_session_residual (s, l, q, resid + ((size_t) l * n + q) * in->n_embd,
                                            &err), ==, SC_OK);
}

/* 1. */
static void
test_intervention (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab,
            E = (int) in->n_embd, d = (int) in->head_dim;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  g_autofree float *src = g_new (float, (gsize) N * V);
  g_autofree float *base = g_new (float, (gsize) N * V);
  g_autofree float *out = g_new (float, (gsize) N * V);
  g_autofree float *resid = g_new (float, (gsize) L * N * E);
  g_autofree float *heads = g_new (float, (gsize) L * H * N * d);
  g_autofree uint8_t *on = g_new (uint8_t, (gsize) L * H * N);
  ScIntervention iv = { .patch_tokens = N };
  ScForwardOptions opt = { .all_logits = true, .intervention = &iv };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  run_source (s, in, clean_ids, N, true, src, NULL, resid);
  run_source (s, in, corrupt_ids, N, true, base, heads, NULL);
  g_assert_cmpint (memcmp (src, base, (gsize) N * V * sizeof *src), !=, 0);

  /* the clean residual entering layer l at every position: the clean logits */
  memset (on, 1, N);
  iv.resid_patch = resid;
  iv.resid_patch_on = on;
  for (int l = 0; l < L; l++)
    {
      iv.resid_patch_layer = l;
      iv.resid_patch = resid + (gsize) l * N * E;
      g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
      g_assert_cmpmem (out, (gsize) N * V * sizeof *out, src, (gsize) N * V * sizeof *src);
    }
  iv.resid_patch = NULL;

  /* a run's own head outputs, every head at every position: nothing changes */
  memset (on, 1, (gsize) L * H * N);
  iv.head_patch = heads;
  iv.head_patch_on = on;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
  g_assert_cmpmem (out, (gsize) N * V * sizeof *out, base, (gsize) N * V * sizeof *base);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, 0);
  memset (on, 0, (gsize) H * N);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, 1);

  /* refused, naming the field */
  iv.patch_tokens = N - 1;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "tokens"));
  iv.patch_tokens = N;
  heads[(((gsize) 1 * H + 2) * N + 4) * d + 1] = NAN;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 1 head 2 position 4"));
  iv.head_patch = NULL;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "head_patch"));
  iv.head_patch_on = NULL;
  iv.resid_patch = resid;
  iv.resid_patch_on = on;
  iv.resid_patch_layer = L;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "resid_patch_layer"));

  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 2. Each cell against a full run in a fresh session. */
static void
check_cells (ScModel *m, ScModel *m2, const ScPatchParams *p)
{
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab,
            E = (int) in->n_embd, d = (int) in->head_dim;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL, *s2 = NULL;
  ScPatchResult *r = NULL;
  ScError err = { 0 };
  const int32_t *src_ids = p->direction == SC_PATCH_DENOISE ? clean_ids : corrupt_ids;
  const int32_t *base_ids = p->direction == SC_PATCH_DENOISE ? corrupt_ids : clean_ids;
  g_autofree float *clean = g_new (float, (gsize) N * V);
  g_autofree float *corrupt = g_new (float, (gsize) N * V);
  g_autofree float *out = g_new (float, (gsize) N * V);
  g_autofree float *resid = g_new (float, (gsize) L * N * E);
  g_autofree float *heads = g_new (float, (gsize) L * H * N * d);
  g_autofree uint8_t *on = g_new0 (uint8_t, (gsize) L * H * N);
  ScIntervention iv = { .patch_tokens = N };
  ScForwardOptions opt = { .intervention = &iv }; /* the last row, as the study */

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m2, b, &s2, &err), ==, SC_OK);
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, p, NULL, NULL, &r, &err), ==,
                   SC_OK);
  run_source (s2, in, clean_ids, N, true, clean, src_ids == clean_ids ? heads : NULL,
              src_ids == clean_ids ? resid : NULL);
  run_source (s2, in, corrupt_ids, N, false, corrupt, src_ids == corrupt_ids ? heads : NULL,
              src_ids == corrupt_ids ? resid : NULL);

  /* the metric: the target the clean top-1, the contrast the corrupted top-1 */
  {
    const float *lc = clean + (gsize) (N - 1) * V, *lx = corrupt;
    g_assert_cmpint (r->target, ==, sc_logits_top1 (lc, V));
    g_assert_cmpint (r->top1_corrupted, ==, sc_logits_top1 (lx, V));
    if (r->top1_corrupted != r->target)
      {
        g_assert_cmpint (r->contrast, ==, r->top1_corrupted);
        assert_same_double (r->metric_clean,
                            (double) lc[r->target] - (double) lc[r->contrast]);
      }
    assert_same_double (r->metric_clean, sc_patch_metric (lc, V, r->target, r->contrast));
    assert_same_double (r->metric_corrupted, sc_patch_metric (lx, V, r->target, r->contrast));
    g_assert_cmpfloat (fabs (sc_patch_normalised (r, r->metric_clean) - 1.0), <, 1e-12);
    g_assert_cmpfloat (fabs (sc_patch_normalised (r, r->metric_corrupted)), <, 1e-12);
  }

  if (p->what == SC_PATCH_RESIDUAL)
    {
      iv.resid_patch_on = on;
    }
  else
    {
      iv.head_patch = heads;
      iv.head_patch_on = on;
    }
  for (int c = 0; c < r->n_rows * r->n_cols; c++)
    {
      const int row = c / r->n_cols, col = c % r->n_cols;
      memset (on, 0, (gsize) L * H * N);
      if (p->what == SC_PATCH_HEADS)
        memset (on + ((gsize) row * H + col) * N, 1, N);
      else if (p->what == SC_PATCH_HEAD_POSITIONS)
        on[(gsize) row * N + col] = 1;
      else
        {
          on[col] = 1;
          iv.resid_patch_layer = row;
          iv.resid_patch = resid + (gsize) row * N * E;
        }
      g_assert_cmpint (sc_forward (s2, base_ids, N, &opt, out, &err), ==, SC_OK);
      assert_same_double (r->patched[c], sc_patch_metric (out, V, r->target, r->contrast));
    }
  sc_patch_result_free (r);
  sc_session_free (s);
  sc_session_free (s2);
  sc_backend_free (b);
}

static void
test_cells_equal_full_runs (void)
{
  ScModel *m = sc_test_tiny_model (), *m2 = sc_test_tiny_model ();

  for (int dir = SC_PATCH_DENOISE; dir <= SC_PATCH_NOISE; dir++)
    for (int what = SC_PATCH_HEADS; what <= SC_PATCH_RESIDUAL; what++)
      {
        const ScPatchParams p = { .corrupted_run = 2, .target = -1, .contrast = -1,
                                  .direction = dir, .what = what };
        check_cells (m, m2, &p);
      }
  sc_model_free (m);
  sc_model_free (m2);
}

/* 3. The induction model: BOS, then x A B y z A (clean) and x A C y z A (corrupted). The
 *    previous-token head L0.H0 writes "the previous token is A" at B's (C's) position; at
 *    the last A the induction head L1.H0 finds that position and copies its token. */
static void
test_by_construction (void)
{
  enum { TA = 'a', TB = 'b', TC = 'c', BOS = 257 };
  g_autoptr (GBytes) bytes = sc_test_gguf_induction_llama (64);
  const int32_t clean[] = { BOS, 'x', TA, TB, 'y', 'z', TA };
  const int32_t corrupt[] = { BOS, 'x', TA, TC, 'y', 'z', TA };
  const int n = (int) G_N_ELEMENTS (clean), at_b = 3;
  ScGguf *g = NULL;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (1, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  gsize len;
  const void *data = g_bytes_get_data (bytes, &len);

  g_assert_cmpint (sc_gguf_open_memory (data, len, &g, &err), ==, SC_OK);
  g_assert_cmpint (sc_model_open_gguf (g, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  for (int dir = SC_PATCH_DENOISE; dir <= SC_PATCH_NOISE; dir++)
    {
      ScPatchParams p = { .corrupted_run = 2, .target = TB, .contrast = TC, .direction = dir,
                          .what = SC_PATCH_HEADS };
      ScPatchResult *r = NULL;
      /* the effect that means "this component moved the run all the way" */
      const double moved = dir == SC_PATCH_DENOISE ? 1.0 : 0.0;

      g_assert_cmpint (sc_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, &err), ==,
                       SC_OK);
      g_test_message ("%s: m clean %.4f, corrupted %.4f", sc_patch_direction_names[dir],
                      r->metric_clean, r->metric_corrupted);
      g_assert_cmpfloat (r->metric_clean, >, 5.0);    /* B well above C ... */
      g_assert_cmpfloat (r->metric_corrupted, <, -5.0); /* ... and the other way round */
      for (int c = 0; c < r->n_rows * r->n_cols; c++)
        {
          const double e = sc_patch_normalised (r, r->patched[c]);
          g_test_message ("  L%d.H%d effect %.6f", c / r->n_cols, c % r->n_cols, e);
          if (c == 1 * r->n_cols + 0) /* L1.H0, the induction head */
            g_assert_cmpfloat (fabs (e - moved), <, 1e-4);
          else
            g_assert_cmpfloat (fabs (e - (1.0 - moved)), <, 0.01);
        }
      sc_patch_result_free (r);

      /* the residual: the B/C position before either layer carries it all; the last
       * position's residual entering layer 1 (its own token and "previous is z", the same
       * in both runs) nothing */
      p.what = SC_PATCH_RESIDUAL;
      g_assert_cmpint (sc_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, &err), ==,
                       SC_OK);
      for (int l = 0; l < 2; l++)
        for (int q = 0; q < n; q++)
          {
            const double e = sc_patch_normalised (r, r->patched[l * n + q]);
            g_test_message ("  resid L%d @ %d effect %.6f", l, q, e);
            if (q == at_b)
              g_assert_cmpfloat (fabs (e - moved), <, 1e-4);
            else
              g_assert_cmpfloat (fabs (e - (1.0 - moved)), <, 0.01);
          }
      sc_patch_result_free (r);
    }
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 4. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-patch-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const ScStudyKind *k = sc_study_kind_find ("patch");
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScPatchParams p = *(const ScPatchParams *) k->params_default;
  ScStudyCtx ctx;
  void *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);

  ctx = (ScStudyCtx) { .model = m, .session = s, .run_id = 5, .ids = clean_ids, .n_tokens = N,
                       .run2_id = 6, .ids2 = corrupt_ids, .n_tokens2 = N };
  /* the corrupted run must be named */
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "--corrupted"));
  g_assert_cmpint (sc_study_option_set (k, &p, "corrupted", "6", 1000, &err), ==, SC_OK);
  g_assert_cmpint (sc_study_option_set (k, &p, "corrupted", "0", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (k, &p, "direction", "noise", 1000, &err), ==, SC_OK);
  g_assert_cmpint (sc_study_option_set (k, &p, "what", "head-positions", 1000, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_study_params_run2 (k, &p), ==, 6);
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"corrupted\":6,\"target\":null,"
                           "\"contrast\":null,\"direction\":\"noise\",\"what\":\"head-positions\"}");
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  {
    const ScPatchResult *a = r, *c = back;
    g_assert_cmpint (c->n_rows, ==, a->n_rows);
    g_assert_cmpint (c->n_cols, ==, a->n_cols);
    g_assert_cmpint (c->target, ==, a->target);
    g_assert_cmpint (c->contrast, ==, a->contrast);
    g_assert_cmpint (c->top1_corrupted, ==, a->top1_corrupted);
    g_assert_cmpint (c->direction, ==, SC_PATCH_NOISE);
    assert_same_double (c->metric_clean, a->metric_clean);
    assert_same_double (c->metric_corrupted, a->metric_corrupted);
    for (int i = 0; i < a->n_rows * a->n_cols; i++)
      assert_same_double (c->patched[i], a->patched[i]);
  }
  k->result_free (back);
  back = NULL;
  sc_store_close (store);

  /* someone else's database: a cell missing, then a contrast that is the target */
  {
    g_autofree char *drop = g_strdup_printf ("DELETE FROM study_series WHERE study_id = %lld "
                                             "AND series = 'patched' AND pos = 7", (long long) id);
    g_autofree char *same = g_strdup_printf ("UPDATE study_series SET value = (SELECT value "
                                             "FROM study_series WHERE study_id = %1$lld AND "
                                             "series = 'clean' AND pos = 0) WHERE study_id = "
                                             "%1$lld AND series = 'metric' AND pos = 0",
                                             (long long) id);
    const char *const edits[] = { drop, same };
    for (gsize e = 0; e < G_N_ELEMENTS (edits); e++)
      {
        const char *sql = edits[e];
        sqlite3 *h;
        g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
        g_assert_cmpint (sqlite3_exec (h, "BEGIN", NULL, NULL, NULL), ==, SQLITE_OK);
        g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
        g_assert_cmpint (sqlite3_changes (h), ==, 1);
        g_assert_cmpint (sqlite3_exec (h, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
        sqlite3_close (h);
        g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
        g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL,
                                  &err), ==, SC_ERR_FORMAT);
        g_assert_nonnull (strstr (err.message, SC_PATCH_STUDY_KIND));
        g_assert_null (back);
        sc_store_close (store);
        if (e == 0) /* put the cell back, so that the next edit is the only fault */
          {
            g_autofree char *put = g_strdup_printf (
              "INSERT INTO study_series (study_id, series, pos, value) VALUES (%lld, "
              "'patched', 7, %.17g)", (long long) id, ((const ScPatchResult *) r)->patched[7]);
            g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
            g_assert_cmpint (sqlite3_exec (h, put, NULL, NULL, NULL), ==, SQLITE_OK);
            sqlite3_close (h);
          }
      }
  }

  k->result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 5. */
static bool
stop_early (void *user, double fraction)
{
  (void) user;
  return fraction < 0.25;
}

static void
test_invalid (void)
{
  ScModel *m = sc_test_tiny_model ();
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  const ScStudyKind *k = sc_study_kind_find ("patch");
  ScPatchParams p = { .corrupted_run = 2, .target = 44, .contrast = 44 };
  ScPatchResult *r = NULL;
  void *any = NULL;
  ScError err = { 0 };
  ScStudyCtx ctx;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast is the target"));
  p.contrast = -1;
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, &p, stop_early, NULL, &r,
                                 &err), ==, SC_ERR_CANCELLED);
  g_assert_null (r);
  ctx = (ScStudyCtx) { .model = m, .session = s, .run_id = 1, .ids = clean_ids, .n_tokens = N,
                       .run2_id = 2, .ids2 = corrupt_ids, .n_tokens2 = N - 1 };
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &any, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "same length"));
  g_assert_null (any);
  ctx.ids2 = NULL;
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &any, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "second run"));
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/patch/intervention", test_intervention);
  g_test_add_func ("/patch/cells-equal-full-runs", test_cells_equal_full_runs);
  g_test_add_func ("/patch/by-construction", test_by_construction);
  g_test_add_func ("/patch/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/patch/invalid", test_invalid);
  return g_test_run ();
}
