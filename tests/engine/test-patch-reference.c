/* test-patch-reference.c — activation patching on SmolLM2 against an independent oracle.
 *
 * tests/reference/patch_ref.py reruns head and residual patching in float64 on the numpy
 * model of attention_ref.py (the GGUF read through gguf-py, nothing of Saccade imported)
 * and writes tests/reference/patch-fixture.json: for two indirect-object pairs ("When Mary
 * and John went to the store, John gave a drink to" against "..., Mary gave ...", and an
 * Anna/Tom pair), the clean and corrupted runs' metric m = logit(A) − logit(B), ln p(A),
 * ln p(B) and top-1; 36 named patches per pair (a head at every position, a head at one
 * position, the residual entering a layer at one position; denoise and noise); and the
 * whole 270-head scan of both directions; and component patches of named heads (its
 * attention pattern, queries, keys or values at every position, keys and values for that
 * query head only: sc-patch-study.h), both directions. This test checks, with the cpu
 * backend:
 *   1. the clean and corrupted runs, and every named patch run one by one through
 *      sc_forward with the ScIntervention patch fields: m, ln p(A) and ln p(B) within
 *      LOGP_TOL of the reference, the top-1 the reference's;
 *      The component patches likewise, the source run's pattern, q, k and v taken with the
 *      observer (observe, qkv) and patched through an SC_ATTN_EDIT_REPLACE edit or the
 *      q/k/v_patch fields;
 *   2. the study (sc_patch_run): the whole head scan, denoise for the first pair and noise
 *      for the second, each cell's m within LOGP_TOL and the effect within EFFECT_TOL; and
 *      the keys study of the first pair (denoise) and the values study of the second
 *      (noise) at the reference's named heads;
 *   3. that the comparison could fail: at least 20 heads of each scan have a reference m
 *      farther than DISCRIMINATE tolerances from every other head of their layer, so a
 *      patch of the wrong head there would be caught;
 *   4. the logit lens (tests/reference/lens_ref.py, lens-fixture.json: the four runs of the
 *      two pairs, every layer's residual at the last position through the output head):
 *      ln p(A) and m within LOGP_TOL at every layer, the top-1 where the reference's top-2
 *      margin is at least 5e-3, the rank within 2 (a rank counts every logit above A's, and
 *      logits within float32 rounding of it may fall either side), exactly 0 at the last
 *      layer of the clean runs.
 *
 *   5. path patching (sc_path_patch_run, sc-path-patch.h) of the first pair: each (senders,
 *      component, direction) of the reference's path_patches run once as a study, its named
 *      receivers' m within LOGP_TOL and effects within EFFECT_TOL, the cells before the
 *      receivers the base run's m exactly.
 *
 * Tolerances. The engine multiplies the same dequantised Q4_1 weights in float32, the
 * reference in float64; test-ablation-reference.c ties its bound on a difference of
 * log-softmax values (Δ log p) to the float32 rounding measured there: 1e-3 + 1e-3 |ref|.
 * m here is such a difference (logit(A) − logit(B) = ln p(A) − ln p(B)), and so are ln p(A)
 * and ln p(B) against the clean run's, so LOGP_TOL is that bound; the "the same
 * change of the target's log-probability within 1e-3" is the absolute part. EFFECT_TOL
 * follows: the effect divides m − m_corrupted by m_clean − m_corrupted (11.6 and 12.3 here),
 * each within 2 LOGP_TOL, so 3e-3 covers |effect| <= 1.5 with room.
 *
 * Needs the default model (data/fetch-model.sh) with the fixture's SHA-256; otherwise the
 * program says why and exits 77 (skip), which .ci/run counts as a failure.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/core/sc-sha256.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-lens-study.h"
#include "engine/study/sc-patch-study.h"
#include "engine/study/sc-path-patch.h"

#define LOGP_TOL(ref) (1e-3 + 1e-3 * fabs (ref))
#define EFFECT_TOL 3e-3
#define DISCRIMINATE 3.0

static JsonParser *parser;
static JsonObject *root;
static char *skip_reason;
static ScModel *model;
static ScBackend *backend;
static ScSession *session;
static int L, H, D, E, V;

static JsonArray *
pairs (void)
{
  return json_object_get_array_member (root, "pairs");
}

static int32_t *
ids_of (JsonObject *pair, const char *member, int *n)
{
  JsonArray *a = json_object_get_array_member (pair, member);
  int32_t *ids;

  *n = (int) json_array_get_length (a);
  ids = g_new (int32_t, *n);
  for (int i = 0; i < *n; i++)
    ids[i] = (int32_t) json_array_get_int_element (a, i);
  return ids;
}

/* The largest deviation from the reference seen, reported at the end. */
static double max_dev;

static void
assert_close (const char *what, double got, double want, double tol)
{
  max_dev = MAX (max_dev, fabs (got - want));
  if (!(fabs (got - want) <= tol))
    g_error ("%s: %.9g, the reference %.9g (|δ| %.3g > %.3g)", what, got, want,
             fabs (got - want), tol);
}

/* m, ln p(A), ln p(B) and the top-1 of a last-position logit row against @ref. */
static void
check_row (const char *what, const float *row, int target, int contrast, JsonObject *ref)
{
  const double m = json_object_get_double_member (ref, "m");
  const double la = json_object_get_double_member (ref, "logp_target");
  const double lb = json_object_get_double_member (ref, "logp_contrast");
  double a, b;
  g_autofree char *wm = g_strdup_printf ("%s: m", what);
  g_autofree char *wa = g_strdup_printf ("%s: ln p(A)", what);
  g_autofree char *wb = g_strdup_printf ("%s: ln p(B)", what);

  g_assert_cmpint (sc_log_softmax_at (row, V, target, &a, NULL), ==, SC_OK);
  g_assert_cmpint (sc_log_softmax_at (row, V, contrast, &b, NULL), ==, SC_OK);
  assert_close (wm, sc_patch_metric (row, V, target, contrast), m, LOGP_TOL (m));
  assert_close (wa, a, la, LOGP_TOL (la));
  assert_close (wb, b, lb, LOGP_TOL (lb));
  g_assert_cmpint (sc_logits_top1 (row, V),
                   ==, (int) json_object_get_int_member (ref, "top1"));
}

typedef struct {
  float *heads; /* (L, H, n, D) */
  int n;
} Take;

static bool
take (void *user, int layer, const float *o, int n_q, int width)
{
  Take *t = user;

  for (int p = 0; p < n_q; p++)
    for (int h = 0; h < H; h++)
      memcpy (t->heads + (((size_t) layer * H + h) * t->n + p) * D,
              o + (size_t) p * width + (size_t) h * D, (size_t) D * sizeof (float));
  return true;
}

/* A plain run of @ids (its last logits into @row), its head outputs and residuals kept. */
static void
run (const int32_t *ids, int n, float *row, float *heads, float *resid)
{
  Take t = { heads, n };
  ScObserver obs = { .attn_output = take, .user = &t };
  ScForwardOptions opt = { .keep_residuals = true, .observer = &obs };
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (session, ids, n, &opt, row, &err), ==, SC_OK);
  for (int l = 0; l < L; l++)
    for (int q = 0; q < n; q++)
      g_assert_cmpint (sc_session_residual (session, l, q, resid + ((size_t) l * n + q) * E,
                                            &err), ==, SC_OK);
}

static void
test_named (void)
{
  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  for (guint k = 0; k < json_array_get_length (pairs ()); k++)
    {
      JsonObject *pair = json_array_get_object_element (pairs (), k);
      const char *name = json_object_get_string_member (pair, "name");
      const int A = (int) json_object_get_int_member (pair, "target");
      const int B = (int) json_object_get_int_member (pair, "contrast");
      JsonArray *patches = json_object_get_array_member (pair, "patches");
      int n, n2;
      g_autofree int32_t *clean = ids_of (pair, "clean_ids", &n);
      g_autofree int32_t *corrupt = ids_of (pair, "corrupted_ids", &n2);
      g_autofree float *row = g_new (float, V);
      /* 0 = clean, 1 = corrupted (g_autofree on an array would free its first element
       * only: each buffer has its own variable) */
      g_autofree float *heads_clean = g_new (float, (gsize) L * H * n * D);
      g_autofree float *heads_corrupt = g_new (float, (gsize) L * H * n * D);
      g_autofree float *resid_clean = g_new (float, (gsize) L * n * E);
      g_autofree float *resid_corrupt = g_new (float, (gsize) L * n * E);
      float *const heads[2] = { heads_clean, heads_corrupt };
      float *const resid[2] = { resid_clean, resid_corrupt };
      g_autofree uint8_t *on = g_new0 (uint8_t, (gsize) L * H * n);

      g_assert_cmpint (n, ==, n2);
      /* 0 = clean, 1 = corrupted */
      run (clean, n, row, heads[0], resid[0]);
      check_row (name, row, A, B, json_object_get_object_member (pair, "clean"));
      run (corrupt, n, row, heads[1], resid[1]);
      check_row (name, row, A, B, json_object_get_object_member (pair, "corrupted"));

      for (guint i = 0; i < json_array_get_length (patches); i++)
        {
          JsonObject *p = json_array_get_object_element (patches, i);
          const bool denoise = g_str_equal (json_object_get_string_member (p, "direction"),
                                            "denoise");
          const char *kind = json_object_get_string_member (p, "kind");
          const int l = (int) json_object_get_int_member (p, "layer");
          const int h = (int) json_object_get_int_member (p, "head");
          const int pos = (int) json_object_get_int_member (p, "position");
          const int src = denoise ? 0 : 1;
          ScIntervention iv = { .patch_tokens = n };
          ScForwardOptions opt = { .intervention = &iv };
          ScError err = { 0 };
          g_autofree char *what = g_strdup_printf ("%s %s %s L%d.H%d @ %d", name,
                                                   denoise ? "denoise" : "noise", kind, l, h,
                                                   pos);

          memset (on, 0, (gsize) L * H * n);
          if (g_str_equal (kind, "residual"))
            {
              if (pos < 0)
                memset (on, 1, n);
              else
                on[pos] = 1;
              iv.resid_patch = resid[src] + (gsize) l * n * E;
              iv.resid_patch_on = on;
              iv.resid_patch_layer = l;
            }
          else
            {
              uint8_t *rows = on + ((gsize) l * H + h) * n;
              if (pos < 0)
                memset (rows, 1, n);
              else
                rows[pos] = 1;
              iv.head_patch = heads[src];
              iv.head_patch_on = on;
            }
          g_assert_cmpint (sc_forward (session, denoise ? corrupt : clean, n, &opt, row, &err),
                           ==, SC_OK);
          check_row (what, row, A, B, p);
        }
    }
}

/* A run's per-query-head parts (sc-intervention.h): q, k and v (of its KV head), each
 * (L, H, n, D), and P (L, H, n, n). */
typedef struct {
  float *q, *k, *v, *P;
  int n;
} Parts;

static bool
take_parts (void *user, int layer, const float *q, const float *k, const float *v, int n_q,
            int n_k, int q_width, int kv_width)
{
  Parts *t = user;
  const int group = q_width / kv_width;

  (void) n_k;
  for (int h = 0; h < H; h++)
    for (int p = 0; p < n_q; p++)
      {
        const size_t to = (((size_t) layer * H + h) * t->n + p) * D;
        const size_t kv = (size_t) p * kv_width + (size_t) (h / group) * D;
        memcpy (t->q + to, q + (size_t) p * q_width + (size_t) h * D, D * sizeof (float));
        memcpy (t->k + to, k + kv, D * sizeof (float));
        memcpy (t->v + to, v + kv, D * sizeof (float));
      }
  return true;
}

static bool
take_pattern (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Parts *t = user;

  memcpy (t->P + ((size_t) layer * H + head) * t->n * t->n, probs,
          (size_t) n_q * n_k * sizeof (float));
  return true;
}

/* 1, the component patches: every head's pattern, queries, keys and values. */
static void
test_components (void)
{
  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  for (guint k = 0; k < json_array_get_length (pairs ()); k++)
    {
      JsonObject *pair = json_array_get_object_element (pairs (), k);
      const char *name = json_object_get_string_member (pair, "name");
      const int A = (int) json_object_get_int_member (pair, "target");
      const int B = (int) json_object_get_int_member (pair, "contrast");
      JsonArray *patches = json_object_get_array_member (pair, "component_patches");
      int n, n2;
      g_autofree int32_t *clean = ids_of (pair, "clean_ids", &n);
      g_autofree int32_t *corrupt = ids_of (pair, "corrupted_ids", &n2);
      g_autofree float *row = g_new (float, V);
      g_autofree uint8_t *on = g_new0 (uint8_t, (gsize) L * H);
      Parts parts[2];

      g_assert_cmpint (n, ==, n2);
      g_assert_cmpuint (json_array_get_length (patches), >=, 4 * 2 * 4);
      for (int r = 0; r < 2; r++) /* 0 = clean, 1 = corrupted */
        {
          ScObserver obs = { .observe = take_pattern, .qkv = take_parts, .user = &parts[r] };
          ScForwardOptions opt = { .observer = &obs };
          ScError err = { 0 };
          parts[r] = (Parts) { g_new (float, (gsize) L * H * n * D),
                               g_new (float, (gsize) L * H * n * D),
                               g_new (float, (gsize) L * H * n * D),
                               g_new (float, (gsize) L * H * n * n), n };
          g_assert_cmpint (sc_forward (session, r == 0 ? clean : corrupt, n, &opt, row, &err),
                           ==, SC_OK);
        }
      for (guint i = 0; i < json_array_get_length (patches); i++)
        {
          JsonObject *p = json_array_get_object_element (patches, i);
          const bool denoise = g_str_equal (json_object_get_string_member (p, "direction"),
                                            "denoise");
          const char *kind = json_object_get_string_member (p, "kind");
          const int l = (int) json_object_get_int_member (p, "layer");
          const int h = (int) json_object_get_int_member (p, "head");
          const Parts *src = &parts[denoise ? 0 : 1];
          ScAttnEdit edit = { .layer = l, .head = h, .kind = SC_ATTN_EDIT_REPLACE,
                              .probs = src->P + ((gsize) l * H + h) * n * n };
          ScIntervention iv = { .patch_tokens = n };
          ScForwardOptions opt = { .intervention = &iv };
          ScError err = { 0 };
          g_autofree char *what = g_strdup_printf ("%s %s %s L%d.H%d", name,
                                                   denoise ? "denoise" : "noise", kind, l, h);

          g_assert_cmpint (json_object_get_int_member (p, "position"), ==, -1);
          memset (on, 0, (gsize) L * H);
          on[(gsize) l * H + h] = 1;
          if (g_str_equal (kind, "patterns"))
            {
              iv.edits = &edit;
              iv.n_edits = 1;
            }
          else if (g_str_equal (kind, "queries"))
            iv.q_patch = src->q, iv.q_patch_on = on;
          else if (g_str_equal (kind, "keys"))
            iv.k_patch = src->k, iv.k_patch_on = on;
          else if (g_str_equal (kind, "values"))
            iv.v_patch = src->v, iv.v_patch_on = on;
          else
            g_error ("%s: unknown kind", what);
          g_assert_cmpint (sc_forward (session, denoise ? corrupt : clean, n, &opt, row, &err),
                           ==, SC_OK);
          check_row (what, row, A, B, p);
        }
      for (int r = 0; r < 2; r++)
        {
          g_free (parts[r].q);
          g_free (parts[r].k);
          g_free (parts[r].v);
          g_free (parts[r].P);
        }
    }
}

/* The study (sc_patch_run) of one component kind: its cells at the named heads against the
 * reference's component patches of that kind and direction. */
static void
check_component_study (JsonObject *pair, int direction, int what)
{
  JsonArray *patches = json_object_get_array_member (pair, "component_patches");
  const ScPatchParams p = {
    .corrupted_run = 2, .target = (int) json_object_get_int_member (pair, "target"),
    .contrast = (int) json_object_get_int_member (pair, "contrast"), .direction = direction,
    .what = what,
  };
  ScPatchResult *r = NULL;
  ScError err = { 0 };
  int n, n2, checked = 0;
  g_autofree int32_t *clean = ids_of (pair, "clean_ids", &n);
  g_autofree int32_t *corrupt = ids_of (pair, "corrupted_ids", &n2);

  g_assert_cmpint (sc_patch_run (session, model, clean, corrupt, n, &p, NULL, NULL, &r, &err),
                   ==, SC_OK);
  g_assert_cmpint (r->n_rows * r->n_cols, ==, L * H);
  for (guint i = 0; i < json_array_get_length (patches); i++)
    {
      JsonObject *c = json_array_get_object_element (patches, i);
      const int l = (int) json_object_get_int_member (c, "layer");
      const int h = (int) json_object_get_int_member (c, "head");
      const double m_want = json_object_get_double_member (c, "m");
      g_autofree char *name = g_strdup_printf ("study %s %s L%d.H%d",
                                               sc_patch_direction_names[direction],
                                               sc_patch_what_names[what], l, h);
      if (!g_str_equal (json_object_get_string_member (c, "kind"), sc_patch_what_names[what])
          || !g_str_equal (json_object_get_string_member (c, "direction"),
                           sc_patch_direction_names[direction]))
        continue;
      assert_close (name, r->patched[l * H + h], m_want, LOGP_TOL (m_want));
      assert_close (name, sc_patch_normalised (r, r->patched[l * H + h]),
                    json_object_get_double_member (c, "normalised"), EFFECT_TOL);
      checked++;
    }
  g_assert_cmpint (checked, >=, 4);
  sc_patch_result_free (r);
}

static void
test_component_studies (void)
{
  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  check_component_study (json_array_get_object_element (pairs (), 0), SC_PATCH_DENOISE,
                         SC_PATCH_KEYS);
  check_component_study (json_array_get_object_element (pairs (), 1), SC_PATCH_NOISE,
                         SC_PATCH_VALUES);
}

/* Path patching (sc_path_patch_run, part 5): each study the reference's path_patches name
 * (senders, component, direction) run once on the first pair, its receiver cells against
 * the reference's; the cells before the receivers the base run's m. */
static double max_path_dev;

static void
test_path_studies (void)
{
  JsonObject *pair;
  JsonArray *paths;
  int n, n2, checked = 0;
  g_autofree int32_t *clean = NULL;
  g_autofree int32_t *corrupt = NULL;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  pair = json_array_get_object_element (pairs (), 0);
  paths = json_object_get_array_member (pair, "path_patches");
  clean = ids_of (pair, "clean_ids", &n);
  corrupt = ids_of (pair, "corrupted_ids", &n2);
  g_assert_cmpint (json_array_get_length (paths), >=, 24);
  for (guint i = 0; i < json_array_get_length (paths); i++)
    {
      JsonObject *first = json_array_get_object_element (paths, i);
      const char *senders = json_object_get_string_member (first, "senders");
      const char *component = json_object_get_string_member (first, "component");
      const char *direction = json_object_get_string_member (first, "direction");
      ScPathPatchParams p = {
        .patch = { .corrupted_run = 2, .target = (int) json_object_get_int_member (pair, "target"),
                   .contrast = (int) json_object_get_int_member (pair, "contrast"),
                   .direction = g_str_equal (direction, "denoise") ? SC_PATCH_DENOISE
                                                                   : SC_PATCH_NOISE },
        .component = g_str_equal (component, "queries") ? SC_PATH_QUERIES
                     : g_str_equal (component, "keys")  ? SC_PATH_KEYS
                                                        : SC_PATH_VALUES,
      };
      ScPathPatchResult *r = NULL;
      ScError err = { 0 };
      bool seen = false;

      /* one study per (senders, component, direction): the first record that names it */
      for (guint j = 0; j < i && !seen; j++)
        {
          JsonObject *c = json_array_get_object_element (paths, j);
          seen = g_str_equal (json_object_get_string_member (c, "senders"), senders)
                 && g_str_equal (json_object_get_string_member (c, "component"), component)
                 && g_str_equal (json_object_get_string_member (c, "direction"), direction);
        }
      if (seen)
        continue;
      g_strlcpy (p.senders, senders, sizeof p.senders);
      g_assert_cmpint (sc_path_patch_run (session, model, clean, corrupt, n, &p, NULL, NULL, &r,
                                          &err), ==, SC_OK);
      for (int c = 0; c < r->receivers_from_layer * H; c++)
        g_assert_true (r->grid->patched[c] == (p.patch.direction == SC_PATCH_DENOISE
                                                 ? r->grid->metric_corrupted
                                                 : r->grid->metric_clean));
      for (guint j = i; j < json_array_get_length (paths); j++)
        {
          JsonObject *c = json_array_get_object_element (paths, j);
          const int l = (int) json_object_get_int_member (c, "layer");
          const int h = (int) json_object_get_int_member (c, "head");
          const double m_want = json_object_get_double_member (c, "m");
          const double before = max_dev;
          g_autofree char *name = g_strdup_printf ("path %s %s from %s into L%d.H%d", direction,
                                                   component, senders, l, h);
          if (!g_str_equal (json_object_get_string_member (c, "senders"), senders)
              || !g_str_equal (json_object_get_string_member (c, "component"), component)
              || !g_str_equal (json_object_get_string_member (c, "direction"), direction))
            continue;
          g_assert_cmpint (l, >=, r->receivers_from_layer);
          max_dev = 0.0;
          assert_close (name, r->grid->patched[l * H + h], m_want, LOGP_TOL (m_want));
          assert_close (name, sc_patch_normalised (r->grid, r->grid->patched[l * H + h]),
                        json_object_get_double_member (c, "normalised"), EFFECT_TOL);
          max_path_dev = MAX (max_path_dev, max_dev);
          max_dev = MAX (max_dev, before);
          g_test_message ("%s: m %.6f, the reference %.6f", name, r->grid->patched[l * H + h],
                          m_want);
          checked++;
        }
      sc_path_patch_result_free (r);
    }
  g_assert_cmpint (checked, ==, (int) json_array_get_length (paths));
  g_test_message ("path patching: largest deviation from the reference %.3g", max_path_dev);
}

/* The study's head scan against the reference's, effect and m; and that a wrong head would
 * be caught (part 3). */
static void
check_scan (JsonObject *pair, int direction)
{
  const char *member = direction == SC_PATCH_DENOISE ? "head_scan_denoise" : "head_scan_noise";
  JsonArray *scan = json_object_get_array_member (pair, member);
  const double m_clean = json_object_get_double_member (
    json_object_get_object_member (pair, "clean"), "m");
  const double m_corrupt = json_object_get_double_member (
    json_object_get_object_member (pair, "corrupted"), "m");
  const ScPatchParams p = {
    .corrupted_run = 2, .target = (int) json_object_get_int_member (pair, "target"),
    .contrast = (int) json_object_get_int_member (pair, "contrast"), .direction = direction,
    .what = SC_PATCH_HEADS,
  };
  ScPatchResult *r = NULL;
  ScError err = { 0 };
  int n, n2, separated = 0;
  g_autofree int32_t *clean = ids_of (pair, "clean_ids", &n);
  g_autofree int32_t *corrupt = ids_of (pair, "corrupted_ids", &n2);

  g_assert_cmpuint (json_array_get_length (scan), ==, (guint) (L * H));
  g_assert_cmpint (sc_patch_run (session, model, clean, corrupt, n, &p, NULL, NULL, &r, &err),
                   ==, SC_OK);
  assert_close ("study m_clean", r->metric_clean, m_clean, LOGP_TOL (m_clean));
  assert_close ("study m_corrupted", r->metric_corrupted, m_corrupt, LOGP_TOL (m_corrupt));
  for (int c = 0; c < L * H; c++)
    {
      /* the scan holds each patched run's m; its effect on the reference's own scale */
      const double m_want = json_array_get_double_element (scan, c);
      const double want = (m_want - m_corrupt) / (m_clean - m_corrupt);
      g_autofree char *what = g_strdup_printf ("%s L%d.H%d", member, c / H, c % H);
      assert_close (what, sc_patch_normalised (r, r->patched[c]), want, EFFECT_TOL);
      assert_close (what, r->patched[c], m_want, LOGP_TOL (m_want));
      /* 3. a head whose effect stands out from every other head of its layer by more than
       *    DISCRIMINATE tolerances: computing a neighbour instead would fail */
      bool apart = true;
      for (int h = 0; h < H && apart; h++)
        if (h != c % H)
          apart = fabs (json_array_get_double_element (scan, (c / H) * H + h) - m_want)
                  > DISCRIMINATE * LOGP_TOL (m_want);
      separated += apart;
    }
  /* the scan is not flat: dozens of heads are told apart from their whole layer */
  g_test_message ("%s: %d of %d heads stand apart from their layer", member, separated, L * H);
  g_assert_cmpint (separated, >=, 20);
  sc_patch_result_free (r);
}

static void
test_study_scans (void)
{
  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  check_scan (json_array_get_object_element (pairs (), 0), SC_PATCH_DENOISE);
  check_scan (json_array_get_object_element (pairs (), 1), SC_PATCH_NOISE);
}

static void
test_lens (void)
{
  g_autofree char *path = NULL;
  g_autoptr (JsonParser) lp = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonArray *cases;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  path = g_build_filename (g_getenv ("SC_TEST_REFERENCE_DIR"), "lens-fixture.json", NULL);
  if (!json_parser_load_from_file (lp, path, &error))
    g_error ("%s: %s", path, error->message);
  cases = json_object_get_array_member (json_node_get_object (json_parser_get_root (lp)),
                                        "cases");
  g_assert_cmpuint (json_array_get_length (cases), ==, 4);
  for (guint k = 0; k < json_array_get_length (cases); k++)
    {
      JsonObject *c = json_array_get_object_element (cases, k);
      JsonArray *layers = json_object_get_array_member (c, "layers");
      const char *name = json_object_get_string_member (c, "name");
      const ScLensParams p = { (int) json_object_get_int_member (c, "target"),
                               (int) json_object_get_int_member (c, "contrast") };
      ScLensResult *r = NULL;
      ScError err = { 0 };
      int n;
      g_autofree int32_t *ids = ids_of (c, "ids", &n);

      g_assert_cmpint (sc_lens_run (session, model, ids, n, &p, &r, &err), ==, SC_OK);
      g_assert_cmpuint (json_array_get_length (layers), ==, (guint) (L + 1));
      for (int l = 0; l <= L; l++)
        {
          JsonObject *o = json_array_get_object_element (layers, l);
          const double la = json_object_get_double_member (o, "logp_target");
          const double m = json_object_get_double_member (o, "m");
          const int rank = (int) json_object_get_int_member (o, "rank");
          g_autofree char *what = g_strdup_printf ("lens %s layer %d", name, l);
          assert_close (what, r->logp[l], la, LOGP_TOL (la));
          assert_close (what, r->m[l], m, LOGP_TOL (m));
          g_assert_cmpint (abs (r->rank[l] - rank), <=, 2);
          if (json_object_get_double_member (o, "top2_margin") >= 5e-3)
            g_assert_cmpint (r->top1[l], ==, (int) json_object_get_int_member (o, "top1"));
        }
      if (g_str_has_suffix (name, "/clean"))
        g_assert_cmpint (r->rank[L], ==, 0);
      sc_lens_result_free (r);
    }
}

static void
setup (void)
{
  const char *refdir = g_getenv ("SC_TEST_REFERENCE_DIR");
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = NULL, *json_path = NULL;
  g_autoptr (GError) error = NULL;
  uint8_t digest[SC_SHA256_DIGEST_SIZE];
  char hex[SC_SHA256_HEX_SIZE];
  const ScModelInfo *in;
  ScError err = { 0 };

  if (refdir == NULL)
    g_error ("SC_TEST_REFERENCE_DIR is not set (run through meson test)");
  path = env != NULL ? g_strdup (env)
                     : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                         "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
  json_path = g_build_filename (refdir, "patch-fixture.json", NULL);
  parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, json_path, &error))
    g_error ("%s: %s", json_path, error->message);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "format"), ==,
                   "saccade-patch-fixture/1");
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      skip_reason = g_strdup_printf ("the default model is not fetched (%s); run "
                                     "data/fetch-model.sh", path);
      return;
    }
  if (sc_sha256_file (path, digest, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_sha256_hex (digest, hex);
  if (strcmp (hex, json_object_get_string_member (root, "model_sha256")) != 0)
    {
      skip_reason = g_strdup_printf ("%s has SHA-256 %s, the fixture was made from %s", path,
                                     hex, json_object_get_string_member (root, "model_sha256"));
      return;
    }
  if (sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s", err.message);
  in = sc_model_info (model);
  L = (int) in->n_layers;
  H = (int) in->n_heads;
  D = (int) in->head_dim;
  E = (int) in->n_embd;
  V = (int) in->n_vocab;
  backend = sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (backend);
  if (sc_session_new (model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  setup ();
  g_test_add_func ("/patch-reference/named", test_named);
  g_test_add_func ("/patch-reference/study-scans", test_study_scans);
  g_test_add_func ("/patch-reference/components", test_components);
  g_test_add_func ("/patch-reference/component-studies", test_component_studies);
  g_test_add_func ("/patch-reference/path-studies", test_path_studies);
  g_test_add_func ("/lens-reference/layers", test_lens);
  rc = g_test_run ();
  g_test_message ("largest deviation from the reference: %.3g", max_dev);
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  g_clear_object (&parser);
  if (skip_reason != NULL)
    {
      g_printerr ("skipped: %s\n", skip_reason);
      g_free (skip_reason);
      return 77;
    }
  return rc;
}
