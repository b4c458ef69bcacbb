/* test-ablation-core.c — app/core/saccade-ablation: a stored run's studies computed, stored,
 * reused and refused, on the tiny test llama.
 *
 *   1. computed = the engine's study on the run's ids, bit for bit; stored once; asked
 *      again, read back (same study, same numbers); RECOMPUTE stores a newer one;
 *      STORED_ONLY finds only what is there; the same for permutation, erasure, DLA
 *      (beside a stored zero sweep, ρ = sc_spearman_rho's) and faithfulness (its best
 *      head the highest τ, its row read back from the store within fp16), and their CSVs'
 *      shapes; mean-ablation refused with its reason on a model whose context the
 *      reference set does not fit;
 *   2. Cancel after the first progress call: G_IO_ERROR_CANCELLED, and the store has no
 *      study of that kind (sc_store_find_study is SC_ERR_NOT_FOUND, no 'writing' row);
 *   3. a deleted run is refused by name; a run of another model file is refused;
 *   4. the ranking (|value|, largest first, NaN last) and the CSV (every number read back
 *      bit for bit from its 17 digits, NaN an empty field, labels quoted);
 *   5. the async twin on a SaccadeLoadedModel: progress reaches the main loop, the result
 *      equals the synchronous one, and a cancelled task stores nothing.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-head-means.h"
#include "engine/backend/sc-backend.h"
#include "engine/store/sc-store-study.h"
#include "tests/engine/sc-test-gguf.h"

/* BOS, "Hello", a merge, ",", "!", "\n", two high bytes: 12 tokens of the byte vocabulary. */
static const int32_t IDS[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
#define N ((int) G_N_ELEMENTS (IDS))

/* Every default but small counts, so that each study stays quick on the tiny model. */
static const SaccadeAblationParams sp = { .target = -1, .contrast = -1, .n_permutations = 2,
                                          .n_random = 2 };

typedef struct {
  char *dir, *model_path, *db_path;
  ScModel *m;
  ScBackend *b;
  ScSession *s;
  ScStoreModel sm;
  gint64 run_id;
} Fixture;

/* Captures IDS as a run of the store at f->db_path. */
static gint64
capture (Fixture *f)
{
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreToken *pieces = NULL;
  ScError err = { 0 };
  ScObserver obs;
  ScForwardOptions fo = { 0 };
  g_autofree float *logits = g_new (float, sc_model_info (f->m)->n_vocab);
  int64_t id = 0;

  g_assert_cmpint (sc_store_open (f->db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (f->m), IDS, N, &pieces, &err),
                   ==, SC_OK);
  ScStoreRunDesc desc = { .model = &f->sm, .text = "test", .text_len = 4, .tokens = pieces,
                          .n_tokens = N, .backend = "cpu" };
  g_assert_cmpint (sc_store_capture_begin (store, &desc, &cap, &err), ==, SC_OK);
  obs = sc_store_capture_observer (cap);
  fo.observer = &obs;
  g_assert_cmpint (sc_forward (f->s, IDS, N, &fo, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_commit (cap, 0.1, &id, &err), ==, SC_OK);
  sc_store_tokens_free (pieces);
  sc_store_close (store);
  return id;
}

static void
fixture_init (Fixture *f)
{
  ScError err = { 0 };
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  f->dir = g_dir_make_tmp ("saccade-ablation-core-XXXXXX", NULL);
  f->model_path = g_build_filename (f->dir, "tiny.gguf", NULL);
  f->db_path = g_build_filename (f->dir, "captures.sqlite", NULL);
  g_assert_true (g_file_set_contents (f->model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (f->model_path, 1, &f->m, &err), ==, SC_OK);
  f->b = sc_backend_cpu_new (1, &err);
  g_assert_nonnull (f->b);
  g_assert_cmpint (sc_session_new (f->m, f->b, &f->s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (f->m, f->model_path, &f->sm, &err), ==, SC_OK);
  f->run_id = capture (f);
  g_assert_cmpint (f->run_id, >, 0);
}

static void
fixture_clear (Fixture *f)
{
  sc_session_free (f->s);
  sc_backend_free (f->b);
  sc_model_free (f->m);
  g_remove (f->db_path);
  g_autofree char *wal = g_strconcat (f->db_path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (f->db_path, "-shm", NULL);
  g_remove (wal);
  g_remove (shm);
  g_remove (f->model_path);
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->model_path);
  g_free (f->db_path);
}

static void
assert_same (double a, double b)
{
  /* Bit for bit, NaN equal to NaN. */
  g_assert_true ((isnan (a) && isnan (b)) || memcmp (&a, &b, sizeof a) == 0);
}

static void
assert_same_effect (const ScAblationEffect *a, const ScAblationEffect *b)
{
  assert_same (a->next.delta_logp, b->next.delta_logp);
  assert_same (a->next.tv, b->next.tv);
  assert_same (a->next.jsd, b->next.jsd);
  assert_same (a->delta_loss, b->delta_loss);
  g_assert_cmpint (a->flipped, ==, b->flipped);
  g_assert_cmpint (a->next.top1_ablated, ==, b->next.top1_ablated);
}

/* Rows of the studies table: of @kind (NULL: any) and @status (NULL: any). */
static int
count_studies (const char *db_path, const char *kind, const char *status)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int n;

  g_assert_cmpint (sqlite3_open_v2 (db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count(*) FROM studies WHERE "
                                       "(?1 IS NULL OR kind = ?1) AND "
                                       "(?2 IS NULL OR status = ?2)", -1, &st, NULL),
                   ==, SQLITE_OK);
  if (kind != NULL)
    sqlite3_bind_text (st, 1, kind, -1, SQLITE_STATIC);
  if (status != NULL)
    sqlite3_bind_text (st, 2, status, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  n = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return n;
}

/* sc_store_find_study for the default params of @kind. */
static ScStatus
find_study (Fixture *f, SaccadeAblationKind kind)
{
  const ScAblationParams p = { .target = -1, .contrast = -1 };
  ScStoreOptions so = { 0 };
  ScStore *store = NULL;
  char pj[128];
  int64_t id = 0;
  ScStatus st;

  g_assert_cmpint (sc_ablation_params_json (saccade_ablation_kind_id (kind), f->run_id, &p, pj,
                                            sizeof pj), >, 0);
  g_assert_cmpint (sc_store_open (f->db_path, &so, &store, NULL), ==, SC_OK);
  st = sc_store_find_study (store, saccade_ablation_kind_id (kind), f->sm.sha256, pj, &id, NULL);
  sc_store_close (store);
  return st;
}

/* 1. */
static void
test_compute_reuse (void)
{
  Fixture f = { 0 };
  const ScAblationParams p = { .target = -1, .contrast = -1 };
  g_autoptr (GError) error = NULL;
  ScHeadSweepResult *direct = NULL;
  ScTokenLooResult *tdirect = NULL;
  ScError err = { 0 };
  int i;

  fixture_init (&f);
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, IDS, N, &p, NULL, NULL, &direct, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, IDS, N, &p, NULL, NULL, &tdirect, &err), ==,
                   SC_OK);

  /* Nothing stored yet: STORED_ONLY says so and computes nothing. */
  g_autoptr (SaccadeAblation) none =
    saccade_ablation_get (f.m, &f.sm, NULL, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp,
                          SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (count_studies (f.db_path, NULL, NULL), ==, 0);

  g_autoptr (SaccadeAblation) a =
    saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp, 0,
                          NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (a->reused);
  g_assert_cmpint (a->study_id, >, 0);
  g_assert_cmpint (a->created_ms, >, 0);
  g_assert_nonnull (a->heads);
  g_assert_null (a->tokens);
  g_assert_cmpint (a->heads->n_tokens, ==, N);
  g_assert_cmpint (saccade_ablation_target (a), ==, direct->target);
  g_assert_cmpint (saccade_ablation_top1_clean (a), ==, direct->top1_clean);
  for (i = 0; i < direct->n_layers * direct->n_heads; i++)
    assert_same_effect (&a->heads->heads[i], &direct->heads[i]);
  g_assert_cmpint (count_studies (f.db_path, SC_ABLATION_KIND_HEADS, "complete"), ==, 1);

  /* Again: read back, the same study and numbers. */
  g_autoptr (SaccadeAblation) b =
    saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp, 0,
                          NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (b->reused);
  g_assert_cmpint (b->study_id, ==, a->study_id);
  g_assert_cmpint (b->created_ms, ==, a->created_ms);
  for (i = 0; i < direct->n_layers * direct->n_heads; i++)
    assert_same_effect (&b->heads->heads[i], &direct->heads[i]);
  g_assert_cmpint (count_studies (f.db_path, NULL, NULL), ==, 1);

  /* STORED_ONLY now finds it without a session. */
  g_autoptr (SaccadeAblation) c =
    saccade_ablation_get (f.m, &f.sm, NULL, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp,
                          SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (c->study_id, ==, a->study_id);

  /* RECOMPUTE: a newer study with the same numbers. */
  g_autoptr (SaccadeAblation) d =
    saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp,
                          SACCADE_STUDY_RECOMPUTE, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (d->reused);
  g_assert_cmpint (d->study_id, >, a->study_id);
  for (i = 0; i < direct->n_layers * direct->n_heads; i++)
    assert_same_effect (&d->heads->heads[i], &direct->heads[i]);

  /* Tokens, both kinds of erasure, against the engine directly. */
  g_autoptr (SaccadeAblation) t =
    saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_TOKENS, &sp, 0,
                          NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t->tokens);
  g_assert_false (t->reused);
  for (i = 0; i < N; i++)
    {
      assert_same_effect (&t->tokens->mask[i], &tdirect->mask[i]);
      assert_same_effect (&t->tokens->drop[i], &tdirect->drop[i]);
    }
  g_assert_cmpint (count_studies (f.db_path, SC_ABLATION_KIND_TOKENS, "complete"), ==, 1);

  /* Another target is another study. */
  const SaccadeAblationParams sp3 = { .target = 3, .contrast = -1 };
  g_autoptr (SaccadeAblation) t3 =
    saccade_ablation_get (f.m, &f.sm, NULL, f.db_path, f.run_id, SACCADE_ABLATION_TOKENS, &sp3,
                          SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
  g_assert_null (t3);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_true (saccade_ablation_kind_from_id ("heads", &(SaccadeAblationKind) { 0 }));
  g_assert_true (saccade_ablation_kind_from_id ("permute", &(SaccadeAblationKind) { 0 }));
  g_assert_false (saccade_ablation_kind_from_id ("gradient", &(SaccadeAblationKind) { 0 }));
  g_assert_null (saccade_ablation_kind_id (SACCADE_ABLATION_N_KINDS));

  sc_head_sweep_result_free (direct);
  sc_token_loo_result_free (tdirect);
  fixture_clear (&f);
}


/* 1b. The other kinds: each equals its engine study run directly with the verb's params,
 * is stored once under its kind and read back (the same study) by a later call and by
 * STORED_ONLY; DLA finds a stored zero-ablation sweep and its ρ is sc_spearman_rho's. */
static SaccadeAblation *
get_twice (Fixture *f, SaccadeAblationKind kind, const char *store_kind, int n_before)
{
  g_autoptr (GError) error = NULL;
  SaccadeAblation *a =
    saccade_ablation_get (f->m, &f->sm, f->s, f->db_path, f->run_id, kind, &sp, 0, NULL, NULL,
                          NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (a);
  g_assert_false (a->reused);
  g_assert_cmpint (a->study_id, >, 0);
  g_assert_cmpint (count_studies (f->db_path, store_kind, "complete"), ==, n_before + 1);
  g_autoptr (SaccadeAblation) b =
    saccade_ablation_get (f->m, &f->sm, NULL, f->db_path, f->run_id, kind, &sp,
                          SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (b->reused);
  g_assert_cmpint (b->study_id, ==, a->study_id);
  g_assert_cmpint (count_studies (f->db_path, store_kind, "complete"), ==, n_before + 1);
  return a;
}

/* The number of lines of @csv and its first line (caller frees). */
static int
csv_lines (GBytes *csv, char **header)
{
  gsize len;
  const char *d = g_bytes_get_data (csv, &len);
  g_autofree char *text = g_strndup (d, len);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  int n = 0;

  *header = g_strdup (lines[0]);
  for (int i = 0; lines[i] != NULL; i++)
    n += lines[i][0] != '\0';
  return n;
}

static void
test_other_kinds (void)
{
  Fixture f = { 0 };
  ScError err = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *header = NULL;
  const ScModelInfo *info;
  int nh;

  fixture_init (&f);
  info = sc_model_info (f.m);
  nh = (int) (info->n_layers * info->n_heads);

  /* Attention permutation: N = 2, seed 0, every head. */
  {
    const ScPermutationParams pp = { .target = -1, .n_permutations = 2, .seed = 0 };
    ScPermutationResult *direct = NULL;
    g_assert_cmpint (sc_permutation_run (f.s, f.m, IDS, N, &pp, NULL, NULL, &direct, &err), ==,
                     SC_OK);
    g_autoptr (SaccadeAblation) a = get_twice (&f, SACCADE_ABLATION_PERMUTE, SC_PERMUTATION_KIND, 0);
    g_assert_nonnull (a->perm);
    g_assert_cmpint (a->perm->n_studied, ==, direct->n_studied);
    for (int i = 0; i < direct->n_studied; i++)
      {
        assert_same (a->perm->heads[i].tv.median, direct->heads[i].tv.median);
        assert_same (a->perm->heads[i].delta_logp.q25, direct->heads[i].delta_logp.q25);
        assert_same (a->perm->heads[i].flip_share, direct->heads[i].flip_share);
      }
    g_autoptr (GBytes) csv = saccade_ablation_csv (a, NULL, NULL, 0);
    g_clear_pointer (&header, g_free);
    g_assert_cmpint (csv_lines (csv, &header), ==, 1 + direct->n_studied);
    g_assert_true (g_str_has_prefix (header, "layer,head,delta_logp_min,delta_logp_q25,"));
    sc_permutation_result_free (direct);
  }

  /* Erasure curves: mask, 2 random orders, seed 0. */
  {
    const ScErasureParams ep = { .target = -1, .kind = SC_ERASE_MASK, .n_random = 2, .seed = 0 };
    ScErasureResult *direct = NULL;
    g_assert_cmpint (sc_erasure_run (f.s, f.m, IDS, N, &ep, NULL, NULL, &direct, &err), ==,
                     SC_OK);
    g_autoptr (SaccadeAblation) a = get_twice (&f, SACCADE_ABLATION_ERASURE, SC_ERASURE_KIND, 0);
    g_assert_nonnull (a->erasure);
    g_assert_cmpint (a->erasure->n_curves, ==, 4);
    for (int c = 0; c < direct->n_curves; c++)
      for (int k = 0; k < N; k++)
        assert_same (a->erasure->curves[c].p_target[k], direct->curves[c].p_target[k]);
    g_autoptr (GBytes) csv = saccade_ablation_csv (a, NULL, NULL, 0);
    g_clear_pointer (&header, g_free);
    /* one row per ordering and step k = 0 .. n − 1 */
    g_assert_cmpint (csv_lines (csv, &header), ==, 1 + 4 * N);
    g_assert_true (g_str_has_prefix (header, "ordering,seed_index,k,fraction_removed,"));
    sc_erasure_result_free (direct);
  }

  /* DLA, first alone, then beside a stored zero-ablation sweep. */
  {
    ScDlaResult *direct = NULL;
    ScHeadSweepResult *sweep = NULL;
    const ScAblationParams ap = { .target = -1, .contrast = -1 };
    ScSpearman rho;
    g_assert_cmpint (sc_dla_run (f.s, f.m, IDS, N, -1, -1, &direct, &err), ==, SC_OK);
    g_autoptr (SaccadeAblation) a = get_twice (&f, SACCADE_ABLATION_DLA, SC_DLA_KIND, 0);
    g_assert_nonnull (a->dla);
    g_assert_null (a->dla_sweep);
    g_assert_true (isnan (a->dla_rho.rho));
    for (int i = 0; i < nh; i++)
      assert_same (a->dla->heads[i], direct->heads[i]);
    g_autoptr (SaccadeAblation) h =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp,
                            0, NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_autoptr (SaccadeAblation) b =
      saccade_ablation_get (f.m, &f.sm, NULL, f.db_path, f.run_id, SACCADE_ABLATION_DLA, &sp,
                            SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (b->dla_sweep);
    g_assert_cmpint (sc_head_sweep_run (f.s, f.m, IDS, N, &ap, NULL, NULL, &sweep, &err), ==,
                     SC_OK);
    {
      g_autofree double *dlp = g_new (double, nh);
      for (int i = 0; i < nh; i++)
        dlp[i] = sweep->heads[i].next.delta_logp;
      g_assert_cmpint (sc_spearman_rho (direct->heads, dlp, nh, &rho, &err), ==, SC_OK);
    }
    assert_same (b->dla_rho.rho, rho.rho);
    assert_same (b->dla_rho.p, rho.p);
    g_autoptr (GBytes) csv = saccade_ablation_csv (b, NULL, NULL, 0);
    g_clear_pointer (&header, g_free);
    /* the heads, the embedding, each layer's MLP */
    g_assert_cmpint (csv_lines (csv, &header), ==, 1 + nh + 1 + (int) info->n_layers);
    g_assert_true (g_str_has_prefix (header, "component,layer,head,dla,zero_delta_logp,"));
    sc_dla_result_free (direct);
    sc_head_sweep_result_free (sweep);
  }

  /* Faithfulness (TV of masking, top-3): its leave-one-out is stored as an ablate-tokens
   * study too, and the head level is there (a zero sweep is stored now). */
  {
    const ScFaithParams fp = { SC_FAITH_METRIC_TV, SC_FAITH_ERASE_MASK, 0, -1 };
    ScFaithResult *direct = NULL;
    g_assert_cmpint (sc_faith_run (f.s, f.m, IDS, N, &fp, NULL, NULL, NULL, &direct, NULL, &err),
                     ==, SC_OK);
    g_autoptr (SaccadeAblation) a = get_twice (&f, SACCADE_ABLATION_FAITH, SC_FAITH_KIND, 0);
    g_assert_nonnull (a->faith);
    g_assert_true (a->faith->have_head_level);
    for (int j = 0; j < direct->n_items; j++)
      assert_same (a->faith->result->loo[j], direct->loo[j]);
    assert_same (a->faith->result->agree[SC_FAITH_SOURCE_LAST_MEAN].tau,
                 direct->agree[SC_FAITH_SOURCE_LAST_MEAN].tau);
    g_assert_cmpint (count_studies (f.db_path, SC_ABLATION_KIND_TOKENS, "complete"), ==, 1);
    /* The best head is the highest τ, and a study read back has its row from the store:
     * the computed row rounded to fp16. */
    g_assert_cmpint (a->faith_best_head, >=, 0);
    for (int h = 0; h < nh; h++)
      if (!isnan (direct->heads[h].tau))
        g_assert_cmpfloat (direct->heads[h].tau, <=, direct->heads[a->faith_best_head].tau);
    g_autoptr (SaccadeAblation) b =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_FAITH, &sp,
                            SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (b->faith_best_row);
    for (int j = 0; j < direct->n_items; j++)
      g_assert_cmpfloat_with_epsilon (b->faith_best_row[j], a->faith_best_row[j], 1e-3);
    g_autoptr (GBytes) csv = saccade_ablation_csv (b, NULL, NULL, 0);
    g_clear_pointer (&header, g_free);
    g_assert_cmpint (csv_lines (csv, &header), ==, 1 + direct->n_items);
    g_assert_true (g_str_has_prefix (header, "pos,token_id,label,loo,last_mean,rollout,flow,"));
    sc_faith_result_free (direct);
  }

  /* QK attribution with the key left to the run (the window's default): the key the head
   * attends most from the last query in the run's stored attention; the parts are the
   * engine's for that key, and asking with the key resolved reads the same study. */
  {
    const int layer = (int) info->n_layers - 1, head = (int) info->n_heads - 1;
    SaccadeAblationParams qp = sp;
    ScStoreOptions so = { 0 };
    ScStoreHead h = { 0 };
    ScStore *store = NULL;
    ScQkResult *direct = NULL;
    int best = 0;

    g_assert_cmpint (sc_store_open (f.db_path, &so, &store, NULL), ==, SC_OK);
    g_assert_cmpint (sc_store_read_head (store, f.run_id, layer, head, &h, NULL), ==, SC_OK);
    sc_store_close (store);
    for (int j = 1; j < N; j++)
      if (h.probs[(size_t) (N - 1) * h.n_key + j] > h.probs[(size_t) (N - 1) * h.n_key + best])
        best = j;
    /* and from a middle query, whose row alone is read: keys after it are not candidates */
    const int mid = N / 2;
    int best_mid = 0;
    for (int j = 1; j <= mid; j++)
      if (h.probs[(size_t) mid * h.n_key + j] > h.probs[(size_t) mid * h.n_key + best_mid])
        best_mid = j;
    sc_store_head_clear (&h);
    qp.qk_layer = layer, qp.qk_head = head, qp.qk_query = -1, qp.qk_key = -1;
    g_autoptr (SaccadeAblation) a =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_QK, &qp, 0,
                            NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (a->qk);
    g_assert_cmpint (a->qk->key, ==, best);
    g_assert_cmpint (a->qk->query, ==, N - 1);
    const ScQkParams dp = { layer, head, N - 1, best };
    g_assert_cmpint (sc_qk_run (f.s, f.m, IDS, N, &dp, &direct, &err), ==, SC_OK);
    g_assert_cmpint (a->qk->n_comp, ==, direct->n_comp);
    for (int i = 0; i < direct->n_comp * direct->n_comp; i++)
      assert_same (a->qk->parts[i], direct->parts[i]);
    g_autoptr (GBytes) csv = saccade_ablation_csv (a, NULL, NULL, 0);
    g_clear_pointer (&header, g_free);
    g_assert_cmpint (csv_lines (csv, &header), ==, 1 + direct->n_comp * direct->n_comp);
    g_assert_true (g_str_has_prefix (header, "query_component,key_component,part,"));
    qp.qk_query = N - 1, qp.qk_key = best;
    g_autoptr (SaccadeAblation) b =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_QK, &qp,
                            SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (b->study_id, ==, a->study_id);
    sc_qk_result_free (direct);
    qp.qk_query = mid, qp.qk_key = -1;
    g_autoptr (SaccadeAblation) c =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_QK, &qp, 0,
                            NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (c->qk->query, ==, mid);
    g_assert_cmpint (c->qk->key, ==, best_mid);
  }

  /* Path patching from head 0.0 into each later head's keys, against a second run of the
   * same ids: the engine's grid, borrowed as the patch result too. */
  {
    SaccadeAblationParams pp = sp;
    ScPathPatchResult *direct = NULL;
    ScPathPatchParams dp = { .patch = { .target = -1, .contrast = -1 },
                             .component = SC_PATH_KEYS, .senders = "0.0" };

    pp.corrupted_run = dp.patch.corrupted_run = capture (&f);
    pp.path_component = SC_PATH_KEYS;
    g_strlcpy (pp.senders, "0.0", sizeof pp.senders);
    g_autoptr (SaccadeAblation) a =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_PATH_PATCH,
                            &pp, 0, NULL, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (a->path);
    g_assert_true (a->patch == a->path->grid);
    g_assert_cmpint (a->patch_corrupted, ==, pp.corrupted_run);
    g_assert_cmpint (sc_path_patch_run (f.s, f.m, IDS, IDS, N, &dp, NULL, NULL, &direct, &err),
                     ==, SC_OK);
    g_assert_cmpint (a->path->receivers_from_layer, ==, 1);
    for (int i = 0; i < nh; i++)
      assert_same (a->path->grid->patched[i], direct->grid->patched[i]);
    g_autoptr (GBytes) csv = saccade_ablation_csv (a, NULL, NULL, 0);
    g_clear_pointer (&header, g_free);
    g_assert_cmpint (csv_lines (csv, &header), ==, 1 + nh);
    g_assert_true (g_str_has_prefix (header, "layer,head,receiver,m,effect,"));
    sc_path_patch_result_free (direct);
  }

  /* Mean-ablation needs the shipped reference set, whose sentences are longer than the
   * tiny model's context of 64: refused with the reason, before any study is stored (the
   * window's end-to-end test runs it on SmolLM2). */
  {
    const int before = count_studies (f.db_path, NULL, NULL);
    g_autoptr (SaccadeAblation) a =
      saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS_MEAN,
                            &sp, 0, NULL, NULL, NULL, NULL, &error);
    g_assert_null (a);
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, "context"));
    g_clear_error (&error);
    g_assert_cmpint (count_studies (f.db_path, NULL, NULL), ==, before);
  }
  fixture_clear (&f);
}

/* 2. */
typedef struct {
  GCancellable *cancellable;
  int calls;
} CancelAfterFirst;

static void
cancel_after_first (double fraction, gpointer user_data)
{
  CancelAfterFirst *c = user_data;

  g_assert_cmpfloat (fraction, >, 0.0);
  g_assert_cmpfloat (fraction, <=, 1.0);
  if (++c->calls == 1)
    g_cancellable_cancel (c->cancellable);
}

static void
test_cancel (void)
{
  Fixture f = { 0 };

  SaccadeAblationParams p = sp;

  fixture_init (&f);
  /* patching sets the run against a second one of the same length: the same ids again */
  p.corrupted_run = capture (&f);
  p.contrast = -1;
  g_strlcpy (p.senders, "0.0", sizeof p.senders); /* path patching: one sender */
  for (int k = 0; k < SACCADE_ABLATION_N_KINDS; k++)
    {
      g_autoptr (GCancellable) cancellable = g_cancellable_new ();
      g_autoptr (GError) error = NULL;
      CancelAfterFirst c = { cancellable, 0 };
      g_autoptr (SaccadeAblation) a = NULL;
      if (k == SACCADE_ABLATION_HEADS_MEAN)
        continue; /* the reference set does not fit the tiny model (test_other_kinds) */
      if (k == SACCADE_ABLATION_QK)
        continue; /* one forward pass: the engine reports no progress to cancel at */
      a = saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, (SaccadeAblationKind) k,
                                &p, 0, cancel_after_first, &c, cancellable, NULL, &error);
      g_assert_null (a);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      /* The study stopped at the first progress call that saw the cancel. */
      g_assert_cmpint (c.calls, ==, 1);
      if (k == SACCADE_ABLATION_HEADS || k == SACCADE_ABLATION_TOKENS)
        g_assert_cmpint (find_study (&f, (SaccadeAblationKind) k), ==, SC_ERR_NOT_FOUND);
      g_assert_cmpint (count_studies (f.db_path, NULL, NULL), ==, 0);
    }
  g_assert_cmpint (count_studies (f.db_path, NULL, NULL), ==, 0);
  g_assert_cmpint (count_studies (f.db_path, NULL, "writing"), ==, 0);
  fixture_clear (&f);
}

/* 3. */
static void
test_refused (void)
{
  Fixture f = { 0 };
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel other;
  g_autoptr (GError) error = NULL;
  g_autofree char *want = NULL;

  fixture_init (&f);
  /* Another model file: another SHA-256. */
  other = f.sm;
  other.sha256[0] ^= 0xff;
  g_autoptr (SaccadeAblation) a =
    saccade_ablation_get (f.m, &other, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp, 0,
                          NULL, NULL, NULL, NULL, &error);
  g_assert_null (a);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "another model file"));
  g_clear_error (&error);

  /* No database. */
  g_assert_null (saccade_ablation_get (f.m, &f.sm, f.s, NULL, f.run_id, SACCADE_ABLATION_HEADS,
                                       &sp, 0, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* The run deleted: refused by its id, with or without STORED_ONLY, nothing stored. */
  g_assert_cmpint (sc_store_open (f.db_path, &so, &store, NULL), ==, SC_OK);
  g_assert_cmpint (sc_store_delete_run (store, f.run_id, NULL), ==, SC_OK);
  sc_store_close (store);
  want = g_strdup_printf ("Run %lld is no longer in the database", (long long) f.run_id);
  for (int flags = 0; flags <= SACCADE_STUDY_STORED_ONLY; flags++)
    {
      g_autoptr (SaccadeAblation) b =
        saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_TOKENS,
                              &sp, (SaccadeStudyFlags) flags, NULL, NULL, NULL, NULL, &error);
      g_assert_null (b);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
      g_assert_cmpstr (error->message, ==, want);
      g_clear_error (&error);
    }
  g_assert_cmpint (count_studies (f.db_path, NULL, NULL), ==, 0);
  fixture_clear (&f);
}

/* 4. */
static void
test_rank_csv (void)
{
  Fixture f = { 0 };
  g_autoptr (GError) error = NULL;
  const char *labels[N];
  ScStoreToken tokens[N];

  fixture_init (&f);
  g_autoptr (SaccadeAblation) h =
    saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp, 0,
                          NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  const ScHeadSweepResult *r = h->heads;
  const int nh = r->n_layers * r->n_heads;

  /* A NaN planted in the copy ranks last. */
  r->heads[1].next.tv = NAN;
  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    {
      g_autofree int *order = saccade_ablation_rank_heads (r, (SaccadeAblationMetric) m);
      g_autofree gboolean *seen = g_new0 (gboolean, nh);
      for (int k = 0; k < nh; k++)
        {
          double v = saccade_ablation_effect_value (&r->heads[order[k]], m);
          g_assert_false (seen[order[k]]);
          seen[order[k]] = TRUE;
          if (k > 0)
            {
              double u = saccade_ablation_effect_value (&r->heads[order[k - 1]], m);
              g_assert_true (isnan (v) || (!isnan (u) && fabs (u) >= fabs (v)));
              if (!isnan (v) && fabs (u) == fabs (v))
                g_assert_cmpint (order[k - 1], <, order[k]);
            }
        }
      if (m == SACCADE_ABLATION_METRIC_TV)
        g_assert_cmpint (order[nh - 1], ==, 1);
    }
  g_assert_null (saccade_ablation_metric_id (SACCADE_ABLATION_N_METRICS));

  /* Heads CSV: a header and a row per head; row 1 (head 1) has an empty tv. */
  {
    g_autoptr (GBytes) csv = saccade_ablation_csv (h, NULL, NULL, 0);
    g_autofree char *text = g_strndup (g_bytes_get_data (csv, NULL), g_bytes_get_size (csv));
    g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
    g_assert_cmpuint (g_strv_length (lines), ==, (guint) nh + 2); /* + the final "" */
    g_assert_true (g_str_has_prefix (lines[0], "layer,head,delta_logp,tv,jsd,delta_loss,delta_logit_diff,flipped,"));
    for (int i = 0; i < nh; i++)
      {
        g_auto (GStrv) cells = g_strsplit (lines[1 + i], ",", -1);
        g_assert_cmpuint (g_strv_length (cells), ==, 15);
        g_assert_cmpint (atoi (cells[0]), ==, i / r->n_heads);
        g_assert_cmpint (atoi (cells[1]), ==, i % r->n_heads);
        for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
          {
            double v = saccade_ablation_effect_value (&r->heads[i], m);
            if (isnan (v))
              g_assert_cmpstr (cells[2 + m], ==, "");
            else
              assert_same (g_ascii_strtod (cells[2 + m], NULL), v);
          }
        g_assert_cmpint (atoi (cells[7]), ==, r->heads[i].flipped);
        g_assert_cmpint (atoi (cells[9]), ==, r->target);
        g_assert_cmpint (g_ascii_strtoll (cells[14], NULL, 10), ==, h->study_id);
      }
  }

  /* Tokens CSV: labels quoted, the query's row empty. */
  g_autoptr (SaccadeAblation) t =
    saccade_ablation_get (f.m, &f.sm, f.s, f.db_path, f.run_id, SACCADE_ABLATION_TOKENS, &sp, 0,
                          NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  for (int j = 0; j < N; j++)
    {
      labels[j] = j == 2 ? "say \"hi\"" : "x";
      tokens[j] = (ScStoreToken) { .id = IDS[j] };
    }
  {
    g_autoptr (GBytes) csv = saccade_ablation_csv (t, tokens, labels, N);
    g_autofree char *text = g_strndup (g_bytes_get_data (csv, NULL), g_bytes_get_size (csv));
    g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
    g_assert_cmpuint (g_strv_length (lines), ==, (guint) N + 2);
    g_assert_true (g_str_has_prefix (lines[0], "pos,token_id,label,mask_delta_logp,"));
    g_assert_true (g_str_has_prefix (lines[3], "2,101,\"say \"\"hi\"\"\","));
    g_autofree char *q = g_strdup_printf ("%d,%d,\"x\",,,,,,,,,,,0,-1,0,-1,", N - 1, IDS[N - 1]);
    g_assert_true (g_str_has_prefix (lines[N], q));
    g_auto (GStrv) cells = g_strsplit (lines[1], ",", -1);
    assert_same (g_ascii_strtod (cells[3], NULL), t->tokens->mask[0].next.delta_logp);
    assert_same (g_ascii_strtod (cells[8], NULL), t->tokens->drop[0].next.delta_logp);
  }
  fixture_clear (&f);
}

/* 5. */
typedef struct {
  GMainLoop *loop;
  SaccadeLoadedModel *model;
  SaccadeAblation *result;
  GError *error;
  GCancellable *cancel_on_progress;
  int progress_calls;
  double last_fraction;
} AsyncState;

static void
loaded (GObject *source, GAsyncResult *res, gpointer data)
{
  AsyncState *s = data;
  s->model = saccade_loaded_model_new_finish (res, &s->error);
  g_main_loop_quit (s->loop);
}

static void
async_progress (gpointer data, double fraction)
{
  AsyncState *s = data;

  /* On the main loop's thread (the test's), coalesced: never going backwards. */
  g_assert_true (g_main_context_is_owner (g_main_context_default ()));
  g_assert_cmpfloat (fraction, >=, s->last_fraction);
  s->last_fraction = fraction;
  s->progress_calls++;
  if (s->cancel_on_progress != NULL)
    g_cancellable_cancel (s->cancel_on_progress);
}

static void
studied (GObject *source, GAsyncResult *res, gpointer data)
{
  AsyncState *s = data;
  s->result = saccade_ablation_finish (res, &s->error);
  g_main_loop_quit (s->loop);
}

static void
test_async (void)
{
  Fixture f = { 0 };
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;
  AsyncState s = { loop };

  fixture_init (&f);
  saccade_loaded_model_new_async (f.model_path, NULL, loaded, &s);
  g_main_loop_run (loop);
  g_assert_no_error (s.error);

  /* Cancelled from the first progress the main loop sees: nothing stored. */
  s.cancel_on_progress = cancellable;
  saccade_ablation_async (NULL, s.model, f.db_path, f.run_id, SACCADE_ABLATION_HEADS, &sp, 0,
                          cancellable, async_progress, &s, studied, &s);
  g_main_loop_run (loop);
  /* The worker may finish before the idle runs on a fast machine; then the study is
   * complete and stored, which is also correct. Otherwise: cancelled, nothing stored. */
  if (s.result == NULL)
    {
      g_assert_error (s.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_assert_cmpint (find_study (&f, SACCADE_ABLATION_HEADS), ==, SC_ERR_NOT_FOUND);
      g_assert_cmpint (count_studies (f.db_path, NULL, "writing"), ==, 0);
    }
  g_clear_error (&s.error);
  g_clear_pointer (&s.result, saccade_ablation_free);

  /* Whole: progress reached 1, the result is the synchronous one. */
  s.cancel_on_progress = NULL;
  s.progress_calls = 0;
  s.last_fraction = 0;
  saccade_ablation_async (NULL, s.model, f.db_path, f.run_id, SACCADE_ABLATION_TOKENS, &sp, 0,
                          NULL, async_progress, &s, studied, &s);
  g_main_loop_run (loop);
  g_assert_no_error (s.error);
  g_assert_nonnull (s.result);
  g_assert_nonnull (s.result->tokens);
  g_assert_cmpint (s.result->study_id, >, 0);
  g_autoptr (SaccadeAblation) sync =
    saccade_ablation_get (f.m, &f.sm, NULL, f.db_path, f.run_id, SACCADE_ABLATION_TOKENS, &sp,
                          SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sync->study_id, ==, s.result->study_id);
  for (int i = 0; i < N; i++)
    {
      assert_same_effect (&sync->tokens->mask[i], &s.result->tokens->mask[i]);
      assert_same_effect (&sync->tokens->drop[i], &s.result->tokens->drop[i]);
    }
  g_clear_pointer (&s.result, saccade_ablation_free);
  g_clear_object (&s.model);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ablation-core/compute-reuse", test_compute_reuse);
  g_test_add_func ("/ablation-core/other-kinds", test_other_kinds);
  g_test_add_func ("/ablation-core/cancel", test_cancel);
  g_test_add_func ("/ablation-core/refused", test_refused);
  g_test_add_func ("/ablation-core/rank-csv", test_rank_csv);
  g_test_add_func ("/ablation-core/async", test_async);
  return g_test_run ();
}
