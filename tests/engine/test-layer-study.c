/* test-layer-study.c — the layer sweep (engine/study/sc-layer-study.h) and the study table's
 * options (sc-study.h), on the tiny llama of sc-test-gguf (2 layers x 4 heads).
 *
 * 1. Each layer's effect equals, bit for bit, a full run in a fresh session with every head
 *    of that layer scaled to 0, measured by sc-effect.h (prefix reuse changes nothing).
 * 2. Cancelling after the first layer returns SC_ERR_CANCELLED and no result; a target
 *    outside the vocabulary and no tokens are refused.
 * 3. Stored and read back through the study kind's descriptor: the same numbers; other
 *    params not found; a stored value out of range refused as SC_ERR_FORMAT.
 * 4. The option table: a kind's options set its params by name, and bad values are refused
 *    naming the option (an unknown option, a token outside the vocabulary, an int out of
 *    range, a choice not listed, a signed seed).
 * 5. Every kind of the table has a unique short name, defaults that make a params text, and
 *    options whose fields lie inside its params.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-erasure-study.h"
#include "engine/study/sc-layer-study.h"
#include "engine/study/sc-path-patch.h"
#include "engine/study/sc-permutation-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (ids))

static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

static void
assert_same_effect (const ScAblationEffect *a, const ScAblationEffect *b)
{
  assert_same_double (a->next.delta_logp, b->next.delta_logp);
  assert_same_double (a->next.tv, b->next.tv);
  assert_same_double (a->next.jsd, b->next.jsd);
  assert_same_double (a->delta_loss, b->delta_loss);
  g_assert_cmpint (a->next.top1_clean, ==, b->next.top1_clean);
  g_assert_cmpint (a->next.top1_ablated, ==, b->next.top1_ablated);
  g_assert_cmpint (a->flipped, ==, b->flipped);
}

/* 1. */
static void
test_layers_equal_full_runs (void)
{
  ScModel *m = sc_test_tiny_model (), *m2 = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL, *s2 = NULL;
  ScLayerSweepParams p = { .target = -1, .contrast = -1 };
  ScLayerSweepResult *r = NULL;
  ScError err = { 0 };
  g_autofree float *clean = g_new (float, (gsize) N * V);
  g_autofree float *abl = g_new (float, (gsize) N * V);
  g_autofree float *scale = g_new (float, L * H);
  ScForwardOptions opt = { .all_logits = true };
  ScIntervention iv = { .head_scale = scale };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m2, b, &s2, &err), ==, SC_OK);
  g_assert_cmpint (sc_layer_sweep_run (s, m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->n_layers, ==, L);
  g_assert_cmpint (sc_forward (s2, ids, N, &opt, clean, &err), ==, SC_OK);
  g_assert_cmpint (r->top1_clean, ==, sc_logits_top1 (clean + (size_t) (N - 1) * V, V));
  g_assert_cmpint (r->target, ==, r->top1_clean);
  opt.intervention = &iv;
  for (int l = 0; l < L; l++)
    {
      ScAblationEffect e = { 0 };
      for (int i = 0; i < L * H; i++)
        scale[i] = i / H == l ? 0.0f : 1.0f;
      g_assert_cmpint (sc_forward (s2, ids, N, &opt, abl, &err), ==, SC_OK);
      g_assert_cmpint (sc_effect_next_token (clean + (size_t) (N - 1) * V,
                                             abl + (size_t) (N - 1) * V, V, r->target, &e.next,
                                             &err), ==, SC_OK);
      g_assert_cmpint (sc_delta_loss_logits (clean, abl, ids, N, V, &e.delta_loss, &err), ==,
                       SC_OK);
      e.flipped = e.next.top1_ablated != e.next.top1_clean;
      assert_same_effect (&r->layers[l], &e);
      /* taking a layer's attention away changes a random model's output */
      g_assert_cmpfloat (r->layers[l].next.tv, >, 0.0);
    }
  sc_layer_sweep_result_free (r);
  sc_session_free (s);
  sc_session_free (s2);
  sc_backend_free (b);
  sc_model_free (m);
  sc_model_free (m2);
}

/* 2. Cancel and bad input. */
static bool
stop_after_first (void *user, double fraction)
{
  (void) user;
  return fraction < 0.5;
}

static void
test_cancel_and_invalid (void)
{
  ScModel *m = sc_test_tiny_model ();
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScLayerSweepParams p = { .target = -1, .contrast = -1 };
  ScLayerSweepResult *r = NULL;
  ScError err = { 0 };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_layer_sweep_run (s, m, ids, N, &p, stop_after_first,
                                       NULL, &r, &err), ==, SC_ERR_CANCELLED);
  g_assert_null (r);
  p.target = (int) sc_model_info (m)->n_vocab;
  g_assert_cmpint (sc_layer_sweep_run (s, m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target"));
  p.target = -1;
  g_assert_cmpint (sc_layer_sweep_run (s, m, ids, 0, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_null (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 3. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-layers-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const ScStudyKind *k = sc_study_kind_find ("layers");
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScLayerSweepParams p = { .target = -1, .contrast = -1 };
  ScStudyCtx ctx = { 0 };
  void *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  g_assert_nonnull (k);
  g_assert_cmpstr (k->id, ==, SC_LAYER_STUDY_KIND);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);

  ctx = (ScStudyCtx) { .model = m, .session = s, .run_id = 5, .ids = ids, .n_tokens = N };
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null}");
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  g_assert_cmpint (k->result_n_tokens (back), ==, N);
  {
    const ScLayerSweepResult *a = r, *c = back;
    ScStudyClean ca, cc;
    g_assert_cmpint (c->n_layers, ==, a->n_layers);
    for (int l = 0; l < a->n_layers; l++)
      assert_same_effect (&c->layers[l], &a->layers[l]);
    assert_same_double (c->loss_clean, a->loss_clean);
    k->result_clean (a, &ca);
    k->result_clean (c, &cc);
    g_assert_cmpint (ca.target, ==, cc.target);
    g_assert_cmpint (ca.top1_clean, ==, cc.top1_clean);
    assert_same_double (ca.logp_clean, cc.logp_clean);
  }
  k->result_free (back);
  back = NULL;
  /* with a contrast: Δ (logit(target) − logit(B)) per layer, from the same ablated runs;
   * its own params text, stored and read back whole; refused when B is the target */
  {
    const ScLayerSweepResult *a = r;
    const int V = (int) sc_model_info (m)->n_vocab;
    ScLayerSweepResult *c = NULL, *cb = NULL;
    int64_t cid = 0, cid2 = 0;
    char cpj[SC_STUDY_PARAMS_MAX];
    ScLayerSweepParams pc = { .target = -1, .contrast = (a->top1_clean + 1) % V };
    g_autofree char *want = g_strdup_printf ("{\"study\":1,\"run\":5,\"target\":null,"
                                             "\"contrast\":%d}", pc.contrast);
    g_assert_cmpint (sc_study_params_json (k, &pc, &ctx, cpj, sizeof cpj, &err), ==, SC_OK);
    g_assert_cmpstr (cpj, ==, want);
    g_assert_cmpint (sc_layer_sweep_run (s, m, ids, N, &pc, NULL, NULL, &c, &err), ==, SC_OK);
    g_assert_cmpint (c->contrast, ==, pc.contrast);
    g_assert_true (isfinite (c->logit_diff_clean));
    for (int l = 0; l < a->n_layers; l++)
      {
        /* the other measures are the sweep's without a contrast, bit for bit */
        ScAblationEffect e = c->layers[l];
        g_assert_true (isfinite (e.delta_logit_diff));
        e.delta_logit_diff = NAN;
        assert_same_effect (&e, &a->layers[l]);
      }
    g_assert_true (isnan (a->logit_diff_clean) && isnan (a->layers[0].delta_logit_diff));
    g_assert_cmpint (k->store (store, &sm, cpj, c, &cid, &err), ==, SC_OK);
    g_assert_cmpint (sc_layer_sweep_load (store, sc_model_info (m), sm.sha256, cpj, &cb, &cid2,
                                          &err), ==, SC_OK);
    g_assert_cmpint (cid2, ==, cid);
    g_assert_cmpint (cb->contrast, ==, pc.contrast);
    assert_same_double (cb->logit_diff_clean, c->logit_diff_clean);
    for (int l = 0; l < a->n_layers; l++)
      {
        assert_same_effect (&cb->layers[l], &c->layers[l]);
        assert_same_double (cb->layers[l].delta_logit_diff, c->layers[l].delta_logit_diff);
      }
    sc_layer_sweep_result_free (cb);
    sc_layer_sweep_result_free (c);
    c = NULL;
    pc.contrast = a->top1_clean;
    g_assert_cmpint (sc_layer_sweep_run (s, m, ids, N, &pc, NULL, NULL, &c, &err), ==,
                     SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "contrast"));
    g_assert_null (c);
  }
  /* other params: not found */
  p.target = 3;
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  sc_store_close (store);

  /* a stored flip of 2 (someone else's database): refused as malformed, not read */
  {
    g_autofree char *sql = g_strdup_printf ("UPDATE study_series SET value = 2 WHERE "
                                            "study_id = %lld AND series = 'flip' AND pos = 0",
                                            (long long) id);
    sqlite3 *h;
    g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_changes (h), ==, 1);
    sqlite3_close (h);
  }
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  p.target = -1;
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, SC_LAYER_STUDY_KIND));
  g_assert_null (back);
  sc_store_close (store);

  k->result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 4. */
static void
test_options (void)
{
  const ScStudyKind *permute = sc_study_kind_find ("permute");
  const ScStudyKind *erasure = sc_study_kind_find ("erasure");
  ScPermutationParams pp = *(const ScPermutationParams *) permute->params_default;
  ScErasureParams ep = *(const ScErasureParams *) erasure->params_default;
  ScError err = { 0 };

  g_assert_cmpint (sc_study_option_set (permute, &pp, "n", "16", 1000, &err), ==, SC_OK);
  g_assert_cmpint (pp.n_permutations, ==, 16);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "seed", "18446744073709551615", 1000,
                                        &err), ==, SC_OK);
  g_assert_cmpuint (pp.seed, ==, G_MAXUINT64);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "target", "999", 1000, &err), ==, SC_OK);
  g_assert_cmpint (pp.target, ==, 999);
  g_assert_cmpint (sc_study_option_set (erasure, &ep, "kind", "drop", 1000, &err), ==, SC_OK);
  g_assert_cmpint (ep.kind, ==, SC_ERASE_DROP);
  g_assert_cmpint (sc_study_option_set (erasure, &ep, "seeds", "0", 1000, &err), ==, SC_OK);
  g_assert_cmpint (ep.n_random, ==, 0);

  /* refused, naming the option; the params keep their value */
  g_assert_cmpint (sc_study_option_set (permute, &pp, "n", "0", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "--n"));
  g_assert_cmpint (pp.n_permutations, ==, 16);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "n", "12x", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "n", "99999999999999999999", 1000, &err),
                   ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "target", "1000", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "target", "-2", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "seed", "-1", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (permute, &pp, "seed", "", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (erasure, &ep, "kind", "erase", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "erase"));
  g_assert_cmpint (sc_study_option_set (erasure, &ep, "colour", "red", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "colour"));
  g_assert_cmpint (pp.target, ==, 999);
  g_assert_cmpint (ep.kind, ==, SC_ERASE_DROP);

  /* a head list: stored sorted, repeats dropped; a bad one refused, the field kept */
  {
    const ScStudyKind *path = sc_study_kind_find ("path-patch");
    ScPathPatchParams hp = *(const ScPathPatchParams *) path->params_default;
    static const char *const bad[] = { "", "3", "3.", ".3", "3.4,", ",3.4", "3.4;5.1",
                                       "3.4 ,5.1", "-1.2", "100000.1", "1.2.3", "L3", "L.H3",
                                       "LL3.H4", "L3.HH4", "H3.L4", NULL };
    g_assert_cmpstr (hp.senders, ==, "");
    g_assert_cmpint (sc_study_option_set (path, &hp, "senders", "20.0,17.4,3.10,17.4", 1000,
                                          &err), ==, SC_OK);
    g_assert_cmpstr (hp.senders, ==, "3.10,17.4,20.0");
    /* the printed form "L17.H4" is read too; the canonical text stays "17.4" */
    g_assert_cmpint (sc_study_option_set (path, &hp, "senders", "L20.H0,17.4,L3.H10", 1000,
                                          &err), ==, SC_OK);
    g_assert_cmpstr (hp.senders, ==, "3.10,17.4,20.0");
    for (int i = 0; bad[i] != NULL; i++)
      {
        g_assert_cmpint (sc_study_option_set (path, &hp, "senders", bad[i], 1000, &err), ==,
                         SC_ERR_INVALID_ARG);
        g_assert_nonnull (strstr (err.message, "--senders"));
      }
    g_assert_cmpstr (hp.senders, ==, "3.10,17.4,20.0");
    /* at most SC_STUDY_HEADS_MAX_COUNT heads */
    {
      GString *many = g_string_new ("");
      for (int i = 0; i <= SC_STUDY_HEADS_MAX_COUNT; i++)
        g_string_append_printf (many, "%s0.%d", i > 0 ? "," : "", i);
      g_assert_cmpint (sc_study_option_set (path, &hp, "senders", many->str, 1000, &err), ==,
                       SC_ERR_INVALID_ARG);
      g_string_free (many, TRUE);
    }
  }
}

/* 5. */
static void
test_table (void)
{
  size_t n = 0;
  const ScStudyKind *const *kinds = sc_study_kinds (&n);

  g_assert_cmpuint (n, >=, 11);
  g_assert_null (kinds[n]);
  for (size_t i = 0; i < n; i++)
    {
      const ScStudyKind *k = kinds[i];
      g_assert_nonnull (k->id);
      g_assert_nonnull (k->title);
      g_assert_true (sc_study_kind_find (k->name) == k);
      for (size_t j = 0; j < i; j++)
        g_assert_cmpstr (kinds[j]->name, !=, k->name);
      g_assert_nonnull (k->run);
      g_assert_nonnull (k->store);
      g_assert_nonnull (k->load);
      g_assert_nonnull (k->result_clean);
      g_assert_nonnull (k->result_free);
      for (const ScStudyOption *o = k->options; o != NULL && o->name != NULL; o++)
        {
          const size_t size = o->type == SC_STUDY_OPTION_UINT64 ? sizeof (uint64_t)
                              : o->type == SC_STUDY_OPTION_RUN  ? sizeof (int64_t)
                              : o->type == SC_STUDY_OPTION_HEADS
                                ? (size_t) SC_STUDY_HEADS_MAX
                              : o->type == SC_STUDY_OPTION_BOOL ? sizeof (bool)
                                                                : sizeof (int);
          g_assert_cmpuint (o->offset + size, <=, k->params_size);
          g_assert_nonnull (o->help);
          if (o->type == SC_STUDY_OPTION_CHOICE)
            g_assert_nonnull (o->choices);
        }
    }
  g_assert_null (sc_study_kind_find ("no-such-study"));
  /* the store's id finds the first kind with it: the zero-ablation sweep */
  g_assert_cmpstr (sc_study_kind_find ("ablate-heads")->name, ==, "heads");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/layer-study/equal-full-runs", test_layers_equal_full_runs);
  g_test_add_func ("/layer-study/cancel-invalid", test_cancel_and_invalid);
  g_test_add_func ("/layer-study/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/study/options", test_options);
  g_test_add_func ("/study/table", test_table);
  return g_test_run ();
}
