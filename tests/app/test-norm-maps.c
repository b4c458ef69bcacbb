/* test-norm-maps.c — app/window/pages/saccade-norm-maps: what the Heatmap and Model pages
 * hand on of a norm study, checked against hand-written answers on a hand-filled result:
 *   - the Model page's metrics CSV holds each head's weight, norm share and their gap
 *     (weight − norm share), row by row in layer-major order;
 *   - the Heatmap page's Norm CSV is the head's map cut to the range, its corner cell saying
 *     it holds norms; a range outside the run, a head outside the model or a result
 *     without maps gives none;
 *   - why norms cannot be computed: a one-token run, a run past the maps' length (295
 *     tokens for 9 heads: (9 + 3) · n(n+1)/2 ≤ 2^19) or past the value norms' (58,254 for
 *     9 heads: 9 · n ≤ 2^19), no model yet; a run that fits with a model on the way says
 *     the model, not the length;
 *   - the cache keeps one run's results by layer and forgets them for another run. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/window/pages/saccade-norm-maps.h"

static ScNormResult *
hand_result (void)
{
  /* 2 layers × 2 heads, 3 tokens, layer 1's maps */
  ScNormResult *r = sc_norm_result_new (2, 2, 3, 1);
  const double w[4] = { 0.75, 0.5, 0.25, 1.0 }, nf[4] = { 0.25, 0.5, 0.125, 1.0 };

  g_assert_nonnull (r);
  g_assert_nonnull (r->maps);
  for (int i = 0; i < 4; i++)
    {
      r->weight_first[i] = w[i];
      r->norm_first[i] = nf[i];
      r->vnorm_first[i] = 2.0 + i;
      r->vnorm_rest[i] = 10.0 + i;
    }
  /* head 1's map: N[i][j] = 10 i + j + 0.5 on and below the diagonal */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j <= i; j++)
      r->maps[(size_t) (1 * 3 + i) * 3 + j] = (float) (10 * i + j) + 0.5f;
  return r;
}

static char *
bytes_text (GBytes *b)
{
  gsize len;
  const char *data = g_bytes_get_data (b, &len);
  return g_strndup (data, len);
}

static void
test_heads_csv (void)
{
  ScNormResult *r = hand_result ();
  g_autoptr (GBytes) b = saccade_norm_heads_csv (r);
  g_autofree char *text = bytes_text (b);

  g_assert_cmpstr (text, ==,
                   "layer,head,weight_first,norm_first,gap,vnorm_first,vnorm_rest\r\n"
                   "0,0,0.75,0.25,0.5,2,10\r\n"
                   "0,1,0.5,0.5,0,3,11\r\n"
                   "1,0,0.25,0.125,0.125,4,12\r\n"
                   "1,1,1,1,0,5,13\r\n");
  sc_norm_result_free (r);
}

static void
test_map_csv (void)
{
  ScNormResult *r = hand_result ();
  const char *labels[] = { "a", "␣b", "c,d", NULL };
  g_autoptr (GBytes) b = saccade_norm_map_csv (r, 1, labels, 1, 3, 0, 2);
  g_autofree char *text = bytes_text (b);

  /* rows 1..2, keys 0..1; the label with a comma quoted; above the diagonal 0 */
  g_assert_cmpstr (text, ==,
                   "query\\key [norm ||alpha_ij f_h(x_j)||],0:a,1:␣b\r\n"
                   "1:␣b,10.5,11.5\r\n"
                   "\"2:c,d\",20.5,21.5\r\n");
  g_assert_null (saccade_norm_map_csv (r, 1, labels, 0, 4, 0, 3));  /* past the run */
  g_assert_null (saccade_norm_map_csv (r, 1, labels, 2, 2, 0, 3));  /* empty */
  g_assert_null (saccade_norm_map_csv (r, 2, labels, 0, 3, 0, 3));  /* no head 2 */
  free (r->maps); /* the engine's calloc */
  r->maps = NULL;
  g_assert_null (saccade_norm_map_csv (r, 1, labels, 0, 3, 0, 3));  /* maps not kept */
  sc_norm_result_free (r);
}

static void
test_unavailable (void)
{
  SaccadeRun run = { .id = 7, .n_heads = 9, .n = 295 };
  g_autofree char *fits = NULL, *maps = NULL, *heads = NULL, *heads_ok = NULL, *one = NULL;
  g_autofree char *none = saccade_norm_dup_unavailable (NULL, NULL, "x.sqlite",
                                                        SACCADE_NORM_NEED_MAPS);

  g_assert_cmpstr (none, ==, "No run is shown");
  /* 295 tokens fit the maps: what is missing is the model */
  fits = saccade_norm_dup_unavailable (&run, NULL, "x.sqlite", SACCADE_NORM_NEED_MAPS);
  g_assert_nonnull (strstr (fits, "still loading"));
  run.n = 296;
  maps = saccade_norm_dup_unavailable (&run, NULL, "x.sqlite", SACCADE_NORM_NEED_MAPS);
  g_assert_cmpstr (maps, ==, "Run 7 has 296 tokens: norm-based maps are kept for runs of up "
                             "to 295 tokens of this model");
  /* the heads' numbers need only the value norms: 296 tokens are fine */
  heads_ok = saccade_norm_dup_unavailable (&run, NULL, "x.sqlite", SACCADE_NORM_NEED_HEADS);
  g_assert_nonnull (strstr (heads_ok, "still loading"));
  run.n = 58255;
  heads = saccade_norm_dup_unavailable (&run, NULL, "x.sqlite", SACCADE_NORM_NEED_HEADS);
  g_assert_cmpstr (heads, ==, "Run 7 has 58255 tokens: norm-based attention is kept for runs "
                              "of up to 58254 tokens of this model");
  run.n = 1;
  one = saccade_norm_dup_unavailable (&run, NULL, "x.sqlite", SACCADE_NORM_NEED_HEADS);
  g_assert_cmpstr (one, ==, "Run 7 has one token: norm-based attention needs two");
}

static void
test_cache (void)
{
  g_autoptr (SaccadeNormCache) c = saccade_norm_cache_new ();
  ScNormResult *a = sc_norm_result_new (2, 2, 3, 1), *b = sc_norm_result_new (2, 2, 3, 0);

  g_assert_null (saccade_norm_cache_lookup (c, -1));
  saccade_norm_cache_set_run (c, 4);
  saccade_norm_cache_take (c, a);
  g_assert_true (saccade_norm_cache_lookup (c, 1) == a);
  g_assert_null (saccade_norm_cache_lookup (c, 0));
  g_assert_true (saccade_norm_cache_lookup (c, -1) == a); /* any layer's */
  saccade_norm_cache_take (c, b);
  g_assert_true (saccade_norm_cache_lookup (c, 0) == b);
  saccade_norm_cache_set_run (c, 4); /* the same run: kept */
  g_assert_true (saccade_norm_cache_lookup (c, 1) == a);
  saccade_norm_cache_set_run (c, 5); /* another: forgotten (and freed) */
  g_assert_null (saccade_norm_cache_lookup (c, 1));
  g_assert_null (saccade_norm_cache_lookup (c, -1));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/norm-maps/heads-csv", test_heads_csv);
  g_test_add_func ("/norm-maps/map-csv", test_map_csv);
  g_test_add_func ("/norm-maps/unavailable", test_unavailable);
  g_test_add_func ("/norm-maps/cache", test_cache);
  return g_test_run ();
}
