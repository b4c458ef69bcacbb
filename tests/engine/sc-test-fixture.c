/* sc-test-fixture.c — see sc-test-fixture.h. */
#include "sc-test-fixture.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/forward/sc-backward.h"
#include "engine/forward/sc-forward.h"

char *
sc_test_reference_path (const char *name)
{
  const char *dir = g_getenv ("SC_TEST_REFERENCE_DIR");

  if (dir == NULL)
    g_error ("SC_TEST_REFERENCE_DIR is not set (run through meson test)");
  return g_build_filename (dir, name, NULL);
}

JsonObject *
sc_test_fixture_json (const char *name, JsonParser **parser_out)
{
  g_autofree char *path = sc_test_reference_path (name);
  g_autoptr (GError) error = NULL;
  JsonParser *p = json_parser_new ();

  if (!json_parser_load_from_file (p, path, &error))
    g_error ("%s: %s", path, error->message);
  *parser_out = p;
  return json_node_get_object (json_parser_get_root (p));
}

GMappedFile *
sc_test_fixture_map (const char *name)
{
  g_autofree char *path = sc_test_reference_path (name);
  g_autoptr (GError) error = NULL;
  GMappedFile *f = g_mapped_file_new (path, FALSE, &error);

  if (f == NULL)
    g_error ("%s: %s", path, error->message);
  return f;
}

int32_t *
sc_test_fixture_ids (JsonArray *a, int *n)
{
  int32_t *ids;

  *n = (int) json_array_get_length (a);
  ids = g_new (int32_t, *n > 0 ? *n : 1);
  for (int i = 0; i < *n; i++)
    ids[i] = (int32_t) json_array_get_int_element (a, (guint) i);
  return ids;
}

char *
sc_test_file_sha256 (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GMappedFile) map = g_mapped_file_new (path, FALSE, &error);

  if (map == NULL)
    g_error ("%s: %s", path, error->message);
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                      (const guchar *) g_mapped_file_get_contents (map),
                                      g_mapped_file_get_length (map));
}

/* ---- a model against an architecture fixture (arch_ref_*.py) ---------------------- */

typedef struct {
  int L, H, n, n_past;
  float *probs; /* (L, H, n, n): row i of a run with n_past at i + n_past */
} Collect;

static bool
collect (void *user, int layer, int head, const float *p, int nq, int nk)
{
  Collect *c = user;
  float *dst = c->probs + ((size_t) layer * c->H + head) * c->n * c->n;

  for (int i = 0; i < nq; i++)
    memcpy (dst + (size_t) (i + c->n_past) * c->n, p + (size_t) i * nk, (size_t) nk * sizeof *p);
  return true;
}

static const float *
fixture_floats (JsonObject *fixture, GMappedFile *data, const char *member)
{
  JsonObject *o = json_object_get_object_member (fixture, member);

  return (const float *) g_mapped_file_get_contents (data)
         + json_object_get_int_member (o, "offset");
}

/* One run of the fixture's ids on @b, whole or (n_past > 0) in two calls through the KV
 * cache; returns the worst |Δlogit| and |ΔP| against the fixture over the rows computed by
 * the last call. */
void
sc_test_arch_compare (ScModel *model, ScBackend *b, JsonObject *fixture, GMappedFile *data,
                      int n_past, double *logit_err, double *prob_err)
{
  const ScModelInfo *in = sc_model_info (model);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab;
  const float *ref_logits = fixture_floats (fixture, data, "logits"),
              *ref_probs = fixture_floats (fixture, data, "probs");
  g_autofree int32_t *ids = NULL;
  g_autofree float *logits = NULL;
  Collect c = { 0 };
  ScObserver obs = { .observe = collect, .user = &c };
  ScSession *s = NULL;
  ScError err = { 0 };
  int n;

  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  c = (Collect) { .L = L, .H = H, .n = n, .probs = g_new0 (float, (size_t) L * H * n * n) };
  logits = g_new (float, (size_t) n * V);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  if (n_past > 0)
    {
      ScForwardOptions first = { .keep_kv = true };
      g_assert_cmpint (sc_forward (s, ids, n_past, &first, logits, &err), ==, SC_OK);
    }
  {
    ScForwardOptions opt = { .observer = &obs, .all_logits = true, .keep_kv = n_past > 0,
                             .n_past = n_past };
    c.n_past = n_past;
    if (sc_forward (s, ids, n, &opt, logits, &err) != SC_OK)
      g_error ("forward: %s", err.message);
  }
  *logit_err = *prob_err = 0.0;
  for (int i = n_past; i < n; i++)
    for (int v = 0; v < V; v++)
      *logit_err = fmax (*logit_err, fabs ((double) logits[(size_t) (i - n_past) * V + v]
                                           - ref_logits[(size_t) i * V + v]));
  for (int l = 0; l < L; l++)
    for (int h = 0; h < H; h++)
      for (int i = n_past; i < n; i++)
        for (int j = 0; j < n; j++)
          {
            const size_t at = (((size_t) l * H + h) * n + i) * n + j;
            *prob_err = fmax (*prob_err, fabs ((double) c.probs[at] - ref_probs[at]));
            if (j > i)
              g_assert_cmpfloat (c.probs[at], ==, 0.0f);
          }
  sc_session_free (s);
  g_free (c.probs);
}

void
sc_test_arch_check (const char *name, ScModel *model, ScBackend *b, JsonObject *fixture,
                    GMappedFile *data, int n_past, double bound)
{
  double le, pe, le2, pe2;

  sc_test_arch_compare (model, b, fixture, data, 0, &le, &pe);
  sc_test_arch_compare (model, b, fixture, data, n_past, &le2, &pe2);
  printf ("# %s vs transformers float64 on %s: max |dlogit| %.3g, max |dP| %.3g (whole "
          "run); %.3g, %.3g (rows %d.. through the KV cache); bound %.0e\n", name,
          sc_backend_name (b), le, pe, le2, pe2, n_past, bound);
  g_assert_cmpfloat (le, <=, bound);
  g_assert_cmpfloat (pe, <=, bound);
  g_assert_cmpfloat (le2, <=, bound);
  g_assert_cmpfloat (pe2, <=, bound);
}

void
sc_test_arch_open (const char *json_name, JsonParser **parser, JsonObject **fixture,
                   GMappedFile **data, char **model_path, ScModel **model)
{
  ScError err = { 0 };
  g_autofree char *sha = NULL;

  *fixture = sc_test_fixture_json (json_name, parser);
  *data = sc_test_fixture_map (json_object_get_string_member (*fixture, "data_file"));
  *model_path = sc_test_reference_path (json_object_get_string_member (*fixture, "model_file"));
  sha = sc_test_file_sha256 (*model_path);
  if (g_strcmp0 (sha, json_object_get_string_member (*fixture, "model_sha256")) != 0)
    g_error ("%s is not the file the fixture was made with (sha256 %s)", *model_path, sha);
  if (sc_model_open (*model_path, 1, model, &err) != SC_OK)
    g_error ("%s", err.message);
}

/* One registered comparison (sc_test_arch_add_vs_transformers). */
typedef struct {
  const char *name;
  ScModel *model;
  JsonObject *fixture;
  GMappedFile *data;
  double bound;
  gboolean reference;
} ArchCheck;

static void
arch_check_test (gconstpointer user)
{
  const ArchCheck *a = user;
  ScError err = { 0 };
  ScBackend *b = a->reference ? sc_backend_cpu_ref_new () : sc_backend_cpu_new (2, &err);

  if (b == NULL)
    g_error ("%s", err.message);
  sc_test_arch_check (a->name, a->model, b, a->fixture, a->data, 61, a->bound);
  sc_backend_free (b);
}

void
sc_test_arch_add_vs_transformers (const char *name, ScModel *model, JsonObject *fixture,
                                  GMappedFile *data, double ref_bound, double cpu_bound)
{
  for (int k = 0; k < 2; k++)
    {
      /* kept for the whole run, as GLib keeps the test's data pointer */
      ArchCheck *a = g_new (ArchCheck, 1);
      g_autofree char *path = g_strdup_printf ("/%s/model/vs-transformers-%s", name,
                                               k == 0 ? "reference-backend" : "cpu");

      *a = (ArchCheck) { name, model, fixture, data, k == 0 ? ref_bound : cpu_bound, k == 0 };
      g_test_add_data_func_full (path, a, arch_check_test, g_free);
    }
}

/* ---- a model against llama.cpp on the same file (llamacpp_arch.py) ----------------- */

double
sc_test_arch_llamacpp_error (const char *name, ScModel *model, ScBackend *b,
                             JsonObject *fixture, int first, int last)
{
  const int V = (int) sc_model_info (model)->n_vocab;
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GMappedFile) lc_data = NULL;
  g_autofree int32_t *ids = NULL, *lc_ids = NULL;
  g_autofree float *logits = NULL;
  JsonObject *root, *archs, *entry, *shape_o;
  JsonArray *shape;
  ScForwardOptions opt = { .all_logits = true };
  ScSession *s = NULL;
  ScError err = { 0 };
  const float *ref;
  double worst = 0.0;
  int n, lc_n;

  root = sc_test_fixture_json ("arch-llamacpp.json", &parser);
  archs = json_object_get_object_member (root, "archs");
  if (!json_object_has_member (archs, name))
    g_error ("arch-llamacpp.json has no entry '%s'", name);
  entry = json_object_get_object_member (archs, name);
  /* the file llama.cpp ran must be the one the transformers fixture (and this test) use */
  g_assert_cmpstr (json_object_get_string_member (entry, "model_sha256"), ==,
                   json_object_get_string_member (fixture, "model_sha256"));
  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  lc_ids = sc_test_fixture_ids (json_object_get_array_member (entry, "ids"), &lc_n);
  g_assert_cmpint (lc_n, ==, n);
  g_assert_cmpmem (lc_ids, (gsize) n * sizeof *ids, ids, (gsize) n * sizeof *ids);
  shape_o = json_object_get_object_member (entry, "logits");
  shape = json_object_get_array_member (shape_o, "shape");
  g_assert_cmpint (json_array_get_int_element (shape, 0), ==, n);
  g_assert_cmpint (json_array_get_int_element (shape, 1), ==, V);
  g_assert_true (0 <= first && first <= last && last < n);
  lc_data = sc_test_fixture_map (json_object_get_string_member (root, "data_file"));
  g_assert_cmpuint (g_mapped_file_get_length (lc_data), >=,
                    ((gsize) json_object_get_int_member (shape_o, "offset") + (gsize) n * V)
                    * sizeof (float));
  ref = (const float *) g_mapped_file_get_contents (lc_data)
        + json_object_get_int_member (shape_o, "offset");

  logits = g_new (float, (size_t) n * V);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  if (sc_forward (s, ids, n, &opt, logits, &err) != SC_OK)
    g_error ("%s forward: %s", name, err.message);
  for (int i = first; i <= last; i++)
    for (int v = 0; v < V; v++)
      worst = fmax (worst, fabs ((double) logits[(size_t) i * V + v] - ref[(size_t) i * V + v]));
  sc_session_free (s);
  return worst;
}

void
sc_test_arch_check_llamacpp (const char *name, ScModel *model, JsonObject *fixture,
                             double bound)
{
  const int n = (int) json_array_get_length (json_object_get_array_member (fixture, "ids"));
  ScError err = { 0 };
  ScBackend *ref = sc_backend_cpu_ref_new (), *cpu = sc_backend_cpu_new (2, &err);
  double er, ec;

  g_assert_nonnull (cpu);
  er = sc_test_arch_llamacpp_error (name, model, ref, fixture, 0, n - 1);
  ec = sc_test_arch_llamacpp_error (name, model, cpu, fixture, 0, n - 1);
  printf ("# %s vs llama.cpp (F32 KV cache) on the same weights: max |dlogit| %.3g (cpu-ref), "
          "%.3g (cpu); bound %.0e\n", name, er, ec, bound);
  g_assert_cmpfloat (er, <=, bound);
  g_assert_cmpfloat (ec, <=, bound);
  sc_backend_free (ref);
  sc_backend_free (cpu);
}

/* max |dg| / max |g| of the backward on @b against the fixture's "grad"; *@value_err the
 * error of log p. */
static double
grad_error (const char *name, ScModel *model, ScBackend *b, JsonObject *fixture,
            GMappedFile *data, double *value_err)
{
  const ScModelInfo *in = sc_model_info (model);
  JsonObject *go = json_object_get_object_member (fixture, "grad");
  const float *ref = (const float *) g_mapped_file_get_contents (data)
                     + json_object_get_int_member (go, "offset");
  const int E = (int) in->n_embd;
  g_autofree int32_t *ids = NULL;
  g_autofree float *grad = NULL;
  ScObjective obj = { .kind = SC_OBJECTIVE_LOGP, .position = -1,
                      .target = (int32_t) json_object_get_int_member (go, "target") };
  ScGradOptions opt = { 0 };
  ScSession *s = NULL;
  ScGrad *g = NULL;
  ScError err = { 0 };
  double value = 0.0, worst = 0.0, scale = 0.0;
  int n;

  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  grad = g_new (float, (size_t) n * E);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  if (sc_grad_new (s, &g, &err) != SC_OK || sc_grad_forward (g, ids, n, &opt, &err) != SC_OK
      || sc_grad_backward (g, &obj, NULL, NULL, &value, grad, &err) != SC_OK)
    g_error ("%s backward: %s", name, err.message);
  for (size_t k = 0; k < (size_t) n * E; k++)
    {
      worst = fmax (worst, fabs ((double) grad[k] - ref[k]));
      scale = fmax (scale, fabs ((double) ref[k]));
    }
  *value_err = fabs (value - json_object_get_double_member (go, "value"));
  sc_grad_free (g);
  sc_session_free (s);
  return worst / scale;
}

void
sc_test_arch_check_gradients (const char *name, ScModel *model, JsonObject *fixture,
                              GMappedFile *data, double grad_bound, double ref_bound,
                              double cpu_bound)
{
  ScError err = { 0 };
  ScBackend *ref = sc_backend_cpu_ref_new (), *cpu = sc_backend_cpu_new (2, &err);
  double vr, vc, er, ec;

  g_assert_nonnull (cpu);
  er = grad_error (name, model, ref, fixture, data, &vr);
  ec = grad_error (name, model, cpu, fixture, data, &vc);
  printf ("# %s gradient of log p vs torch autograd (float64): max |dg| / max |g| %.3g "
          "(cpu-ref), %.3g (cpu); |d log p| %.3g, %.3g; bound %.0e\n", name, er, ec, vr, vc,
          grad_bound);
  g_assert_cmpfloat (er, <=, grad_bound);
  g_assert_cmpfloat (ec, <=, grad_bound);
  g_assert_cmpfloat (vr, <=, ref_bound);
  g_assert_cmpfloat (vc, <=, cpu_bound);
  sc_backend_free (ref);
  sc_backend_free (cpu);
}

void
sc_test_arch_check_qk (const char *name, ScModel *model, JsonObject *fixture,
                       const ScQkParams *cases, int n_cases, double bound)
{
  g_autofree int32_t *ids = NULL;
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  ScError err = { 0 };
  double worst = 0.0;
  int n;

  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  for (int c = 0; c < n_cases; c++)
    {
      ScQkResult *r = NULL;
      if (sc_qk_run (s, model, ids, n, &cases[c], &r, &err) != SC_OK)
        g_error ("qk attribution on %s: %s", name, err.message);
      g_assert_cmpfloat (fabs (r->score), >, 1e-3);
      worst = fmax (worst, fabs (r->total - r->score) / fabs (r->score));
      sc_qk_result_free (r);
    }
  printf ("# %s QK attribution: parts sum to the forward's score within %.3g (relative)\n",
          name, worst);
  g_assert_cmpfloat (worst, <=, bound);
  sc_session_free (s);
  sc_backend_free (b);
}

char *
sc_test_edited_copy (const char *path, const char *tmpl, const void *from, const void *to,
                     gsize n)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *bytes = NULL;
  char *tmp = NULL;
  gsize len, hits = 0;
  int fd;

  g_assert_true (g_file_get_contents (path, &bytes, &len, &error));
  for (gsize i = 0; i + n <= len; i++)
    if (memcmp (bytes + i, from, n) == 0)
      memcpy (bytes + i, to, n), hits++;
  g_assert_cmpuint (hits, ==, 1);
  fd = g_file_open_tmp (tmpl, &tmp, &error);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (tmp, bytes, (gssize) len, &error));
  return tmp;
}

void
sc_test_assert_refused (const char *path, ScStatus status, const char *a, const char *b)
{
  ScModel *m = NULL;
  ScError err = { 0 };

  if (sc_model_open (path, 1, &m, &err) != status)
    g_error ("expected %s, got: %s", sc_status_name (status), err.message);
  printf ("# refused: %s\n", err.message);
  g_assert_nonnull (strstr (err.message, a));
  g_assert_nonnull (strstr (err.message, b));
}
