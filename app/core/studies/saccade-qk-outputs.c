/* saccade-qk-outputs.c — QK attribution's outputs (engine/study/sc-qk-study.h): every part
 * (query component × key component) and both marginals in JSON; the largest parts, the sum
 * beside the forward pass's score and the largest marginals for a terminal. */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>
#include <stdlib.h>

#include "app/core/saccade-json.h"
#include "engine/study/sc-qk-study.h"

/* Per query component (side 0: Σ over keys) or per key component (side 1), into @m (C). */
static void
qk_marginals (const ScQkResult *r, int side, double *m)
{
  const int C = r->n_comp;

  for (int c = 0; c < C; c++)
    m[c] = 0.0;
  for (int a = 0; a < C; a++)
    for (int b = 0; b < C; b++)
      m[side == 0 ? a : b] += r->parts[(size_t) a * C + b];
}

static const double *sort_values;

static int
by_abs_desc (const void *x, const void *y)
{
  const double a = fabs (sort_values[*(const int *) x]);
  const double b = fabs (sort_values[*(const int *) y]);

  return a < b ? 1 : a > b ? -1 : (*(const int *) x > *(const int *) y)
                                      - (*(const int *) x < *(const int *) y);
}

/* The indices 0 .. @n − 1 of @v by |v|, largest first (ties: the lower index). */
static int *
rank_abs (const double *v, int n)
{
  int *order = g_new (int, n);

  for (int k = 0; k < n; k++)
    order[k] = k;
  sort_values = v;
  qsort (order, (size_t) n, sizeof *order, by_abs_desc);
  sort_values = NULL;
  return order;
}

static void
qk_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
         const char *const *labels)
{
  const ScQkResult *r = s->result;
  const int C = r->n_comp;
  double *m = g_new (double, C);
  char name[32];

  (void) tokens, (void) labels;
  saccade_json_int (b, "layer", r->layer);
  saccade_json_int (b, "head", r->head);
  saccade_json_int (b, "query", r->query);
  saccade_json_int (b, "key", r->key);
  saccade_json_double (b, "score", r->score);
  saccade_json_double (b, "sum_of_parts", r->total);
  saccade_json_double (b, "rms_query", r->rms_q);
  saccade_json_double (b, "rms_key", r->rms_k);
  saccade_json_begin_array (b, "components");
  for (int c = 0; c < C; c++)
    {
      sc_qk_component_name (r, c, name, sizeof name);
      json_builder_add_string_value (b, name);
    }
  json_builder_end_array (b);
  /* parts[a][b]: query component a, key component b */
  saccade_json_matrix (b, "parts", r->parts, (gsize) C, (gsize) C);
  qk_marginals (r, 0, m);
  saccade_json_doubles (b, "query_marginals", m, (gsize) C);
  qk_marginals (r, 1, m);
  saccade_json_doubles (b, "key_marginals", m, (gsize) C);
  g_free (m);
}

static void
qk_text_marginals (GString *out, const ScQkResult *r, int side, int top)
{
  const int C = r->n_comp;
  double *m = g_new (double, C);
  int *order;
  char name[32];

  qk_marginals (r, side, m);
  order = rank_abs (m, C);
  g_string_append_printf (out, "\n%s-side components (each summed over the %s side), largest "
                               "|sum| first:\n", side == 0 ? "query" : "key",
                          side == 0 ? "key" : "query");
  for (int k = 0; k < C && k < top; k++)
    {
      sc_qk_component_name (r, order[k], name, sizeof name);
      g_string_append_printf (out, "  %-8s %+12.5f\n", name, m[order[k]]);
    }
  if (C > top)
    g_string_append_printf (out, "  (%d more; all in --json)\n", C - top);
  g_free (order);
  g_free (m);
}

static void
qk_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScQkResult *r = s->result;
  const int C = r->n_comp, n_top = 15;
  int *order;
  char qn[32], kn[32];

  g_string_append_printf (out, "\nQK attribution of head L%d.H%d, query %d", r->layer, r->head,
                          r->query);
  if (labels != NULL)
    g_string_append_printf (out, " (%s)", labels[r->query]);
  g_string_append_printf (out, " -> key %d", r->key);
  if (labels != NULL)
    g_string_append_printf (out, " (%s)", labels[r->key]);
  g_string_append_printf (out, ": the pre-softmax score split by (query-side component) x "
                               "(key-side component),\nthe attention norm's scale frozen "
                               "(%s %.4g at the query, %.4g at the key); %d components a "
                               "side%s\n", r->n_extra == 2 ? "LayerNorm sigma" : "rms",
                          r->rms_q, r->rms_k, C,
                          r->n_extra == 2 ? ", each centred (its own mean out); pos: the "
                                            "learned position embedding; bias: the "
                                            "LayerNorm and QKV biases"
                          : r->n_extra == 1 ? "; bias: the Q and K biases, rotated" : "");
  g_string_append_printf (out, "  score (forward pass) %+.6f   sum of the %d parts %+.6f   "
                               "difference %.3g\n", r->score, C * C, r->total,
                          r->total - r->score);
  order = rank_abs (r->parts, C * C);
  g_string_append_printf (out, "\nlargest parts by |part|:\n");
  for (int k = 0; k < C * C && k < n_top; k++)
    {
      const int a = order[k] / C, b = order[k] % C;
      sc_qk_component_name (r, a, qn, sizeof qn);
      sc_qk_component_name (r, b, kn, sizeof kn);
      g_string_append_printf (out, "  %+12.5f  %s (key) x %s (query)\n", r->parts[order[k]],
                              kn, qn);
    }
  g_free (order);
  if (top < 15)
    top = 15;
  qk_text_marginals (out, r, 0, top);
  qk_text_marginals (out, r, 1, top);
}

const SaccadeStudyOutputs saccade_qk_outputs = {
  .kind = &sc_study_kind_qk,
  .json = qk_json,
  .text = qk_text,
};
