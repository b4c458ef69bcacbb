/* saccade-adversarial-outputs.c — the outputs of the adversarial attention study of a run
 * (app/core/saccade-adversarial.h): its CSV, figure and texts, and `saccade adversarial`'s
 * JSON and text, the same for the verb and the Attribution page's Adversarial view. The
 * columns are described in docs/metrics.md, "Adversarial attention". */
#define G_LOG_DOMAIN "saccade-adversarial"

#include "app/core/studies/saccade-study-outputs.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-adversarial.h"
#include "app/core/saccade-csv.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "engine/analysis/sc-head-distance.h"

/* The reading's thresholds, as shares of the JSD's ceiling ln 2: from half of it the two
 * rows share little mass (J&W read such heads as poor explanations); under a tenth the
 * attention could hardly move without the output following. A reading aid, not a test. */
#define READING_FAR 0.5
#define READING_SOME 0.1

/* ------------------------------------------------------------------------------------ */
/* Texts, CSV, figure                                                                    */

int
saccade_adversarial_widest (const SaccadeAdversarial *a, int *head, int *row, double *out_jsd)
{
  const ScAdvResult *r = a->result;
  const int n = r->n_tokens;
  int best = -1;
  double best_jsd = -1;

  /* the engine labels each distribution with its head and row (a loaded study has none) */
  if (r->adversarial == NULL || r->original == NULL || r->dist_head == NULL || r->n_dists < 1)
    return -1;
  for (int k = 0; k < r->n_dists; k++)
    {
      const double d = sc_jsd (r->original + (size_t) k * n, r->adversarial + (size_t) k * n, n);
      if (d > best_jsd)
        {
          best_jsd = d;
          best = k;
        }
    }
  if (head != NULL)
    *head = r->dist_head[best];
  if (row != NULL)
    *row = r->dist_row[best];
  if (out_jsd != NULL)
    *out_jsd = best_jsd;
  return best;
}

GBytes *
saccade_adversarial_csv (const SaccadeAdversarial *a)
{
  const ScAdvResult *r = a->result;
  GString *s = g_string_new ("epsilon,jsd,jsd_max,tvd\r\n");

  for (int e = 0; e < r->n_epsilons; e++)
    {
      saccade_csv_number (s, r->epsilon[e]);
      saccade_csv_add_number (s, r->jsd[e]);
      saccade_csv_add_number (s, r->jsd_max[e]);
      saccade_csv_add_number (s, r->tvd[e]);
      g_string_append (s, "\r\n");
    }
  return g_string_free_to_bytes (s);
}

char *
saccade_adversarial_label (const SaccadeAdversarial *a, gboolean translated)
{
  const ScAdvResult *r = a->result;

  if (r->head < 0)
    /* Translators: a curve's label in the adversarial attention figure. */
    return g_strdup_printf (translated ? _("layer %d all heads") : "layer %d all heads",
                            r->layer);
  return g_strdup_printf (translated ? _("layer %d head %d") : "layer %d head %d", r->layer,
                          r->head);
}

char *
saccade_adversarial_title (const SaccadeAdversarial *a)
{
  g_autofree char *label = saccade_adversarial_label (a, TRUE);
  g_autofree char *row = NULL;

  if (a->result->row < 0)
    /* Translators: the searched query rows: every row. */
    row = g_strdup (_("all rows"));
  else
    row = g_strdup_printf (_("row %d"), a->result->row);
  /* Translators: the adversarial figure's title: run id, "layer L head H", the row, the
   * Adam steps per ε. */
  return g_strdup_printf (_("Adversarial attention · run %lld · %s · %s · %d iterations"),
                          (long long) a->base.run.id, label, row, a->params.iterations);
}

char *
saccade_adversarial_reading (const SaccadeAdversarial *a, gboolean translated)
{
  const ScAdvResult *r = a->result;
  const int last = r->n_epsilons - 1;
  const double frac = r->jsd[last] / SACCADE_ADVERSARIAL_JSD_MAX;
  /* Translators: the three judgements of the adversarial reading, strongest move first. */
  const char *far = N_("the attention can move far without changing the output (a weak "
                       "explanation)");
  const char *some = N_("the attention can move some way");
  const char *none = N_("the output depends on this attention");
  const char *judgement = frac >= READING_FAR ? far : frac >= READING_SOME ? some : none;

  if (!translated)
    return g_strdup_printf ("JSD %.3f = %.0f %% of ln 2 = 0.693 (disjoint support) with the "
                            "output within TVD %g: %s", r->jsd[last], 100 * frac,
                            r->epsilon[last], judgement);
  /* Translators: the adversarial study's reading: the JSD reached at the largest ε, the
   * percent of its ceiling ln 2, the ε, then one of the three judgements. */
  return g_strdup_printf (_("JSD %.3f = %.0f %% of ln 2 = 0.693 (disjoint support) with the "
                            "output within TVD %g: %s"), r->jsd[last], 100 * frac,
                          r->epsilon[last], _(judgement));
}

void
saccade_adversarial_figure (const SaccadeAdversarial *a, const char *label,
                            const char *const *labels, const char *title,
                            SaccadeAdvSeries *series, double *original, double *adversarial,
                            SaccadeAdversarialFigure *fig)
{
  const ScAdvResult *r = a->result;
  int head = 0, row = 0;
  const int k = saccade_adversarial_widest (a, &head, &row, NULL);

  *series = (SaccadeAdvSeries) { label, r->n_epsilons, r->epsilon, r->jsd };
  *fig = (SaccadeAdversarialFigure) { .n_series = 1, .series = series, .labels = labels,
                                      .title = title, .n_tokens = 0 };
  if (k < 0)
    return;
  for (int j = 0; j < r->n_tokens; j++)
    {
      original[j] = r->original[(size_t) k * r->n_tokens + j];
      adversarial[j] = r->adversarial[(size_t) k * r->n_tokens + j];
    }
  fig->n_tokens = r->n_tokens;
  fig->original = original;
  fig->adversarial = adversarial;
  fig->rows_head = head;
  fig->rows_row = row;
  fig->rows_epsilon = r->epsilon[r->n_epsilons - 1];
}

/* ------------------------------------------------------------------------------------ */
/* `saccade adversarial`                                                                 */

/* A row as the options spell it: the params' SC_ADV_ALL_ROWS and −1 (last), or a result's
 * −1 (every row) when @result. */
static const char *
row_text (int row, gboolean result, char buf[16])
{
  if (row == SC_ADV_ALL_ROWS || (result && row < 0))
    return "all";
  if (row < 0)
    return "last";
  g_snprintf (buf, 16, "%d", row);
  return buf;
}

static char *
adversarial_text (gconstpointer result, ScModel *model, const char *const *labels,
                  const char *db_path, const char *warning)
{
  const SaccadeAdversarial *a = result;
  const ScAdvResult *r = a->result;
  g_autofree char *label = saccade_adversarial_label (a, FALSE);
  g_autofree char *reading = saccade_adversarial_reading (a, FALSE);
  g_autofree char *target_label = saccade_vocab_label (model, r->target);
  GString *out = g_string_new (NULL);
  char rb[16];
  int head, row;
  double wide;

  (void) labels;
  g_string_append_printf (out, "run %" G_GINT64_FORMAT " (%d tokens), %s: %s, query row %s, "
                          "%d distribution%s searched; target (clean top-1) %d %s\n",
                          a->base.run.id, a->base.n_tokens, a->base.run.model_name, label,
                          row_text (r->row, TRUE, rb), r->n_dists, r->n_dists == 1 ? "" : "s",
                          (int) r->target, target_label);
  saccade_study_face_source_line (out, &a->base, db_path, warning);
  g_string_append_printf (out, "%d Adam iterations per epsilon, seed %" G_GUINT64_FORMAT "\n\n",
                          a->params.iterations, a->params.seed);
  g_string_append (out, "  epsilon     JSD mean   JSD max   TVD (<= epsilon)\n");
  for (int e = 0; e < r->n_epsilons; e++)
    g_string_append_printf (out, "  %-9g  %8.4f  %8.4f  %8.5f\n", r->epsilon[e], r->jsd[e],
                            r->jsd_max[e], r->tvd[e]);
  g_string_append_printf (out, "\n%s\n", reading);
  if (saccade_adversarial_widest (a, &head, &row, &wide) >= 0)
    g_string_append_printf (out, "widest move: head %d, row %d, JSD %.4f at epsilon %g\n", head,
                            row, wide, r->epsilon[r->n_epsilons - 1]);
  g_string_append_printf (out, "\ntiming: %.2f s in all: search %.2f s (%s), the rest reading "
                          "the run and the store\n", a->base.seconds,
                          a->base.reused ? 0.0 : a->search_seconds,
                          a->base.reused ? "read back" : "forward and backward passes");
  return g_string_free (out, FALSE);
}

static void
json_params (JsonBuilder *b, const ScAdvParams *p)
{
  char rb[16];

  saccade_json_begin_object (b, "params");
  saccade_json_int (b, "layer", p->layer);
  if (p->head < 0)
    saccade_json_string (b, "head", "all");
  else
    saccade_json_int (b, "head", p->head);
  if (p->row < 0)
    saccade_json_string (b, "row", row_text (p->row, FALSE, rb));
  else
    saccade_json_int (b, "row", p->row);
  saccade_json_doubles (b, "epsilons", p->epsilons, (gsize) p->n_epsilons);
  saccade_json_int (b, "iterations", p->iterations);
  saccade_json_double (b, "lr", p->lr);
  saccade_json_int (b, "seed", (gint64) p->seed);
  json_builder_end_object (b);
}

/* The widest distribution's rows, when the result has them. */
static void
json_rows (JsonBuilder *b, const SaccadeAdversarial *a)
{
  const ScAdvResult *r = a->result;
  int head, row;
  double wide;
  const int k = saccade_adversarial_widest (a, &head, &row, &wide);

  if (k < 0)
    return;
  saccade_json_begin_object (b, "rows");
  saccade_json_int (b, "head", head);
  saccade_json_int (b, "row", row);
  saccade_json_double (b, "jsd", wide);
  saccade_json_begin_array (b, "original");
  for (int j = 0; j < a->base.n_tokens; j++)
    saccade_json_add_double (b, r->original[(size_t) k * a->base.n_tokens + j]);
  json_builder_end_array (b);
  saccade_json_begin_array (b, "adversarial");
  for (int j = 0; j < a->base.n_tokens; j++)
    saccade_json_add_double (b, r->adversarial[(size_t) k * a->base.n_tokens + j]);
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
adversarial_json (JsonBuilder *b, gconstpointer result, ScModel *model,
                  const char *const *labels)
{
  const SaccadeAdversarial *a = result;
  const ScAdvResult *r = a->result;
  g_autofree char *target_label = saccade_vocab_label (model, r->target);

  json_params (b, &a->params);
  saccade_json_int (b, "n_tokens", a->base.n_tokens);
  saccade_json_int (b, "n_dists", r->n_dists);
  saccade_json_int (b, "target", r->target);
  saccade_json_string (b, "target_label", target_label);
  saccade_json_double (b, "jsd_ceiling", SACCADE_ADVERSARIAL_JSD_MAX);
  saccade_json_begin_array (b, "points");
  for (int e = 0; e < r->n_epsilons; e++)
    {
      json_builder_begin_object (b);
      saccade_json_double (b, "epsilon", r->epsilon[e]);
      saccade_json_double (b, "jsd", r->jsd[e]);
      saccade_json_double (b, "jsd_max", r->jsd_max[e]);
      saccade_json_double (b, "tvd", r->tvd[e]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_rows (b, a);
  saccade_json_begin_array (b, "tokens");
  for (int j = 0; j < a->base.n_tokens; j++)
    json_builder_add_string_value (b, labels[j]);
  json_builder_end_array (b);
  saccade_json_begin_object (b, "timing");
  saccade_json_double (b, "total_s", a->base.seconds);
  saccade_json_double (b, "search_s", a->base.reused ? 0.0 : a->search_seconds);
  json_builder_end_object (b);
}

static GBytes *
adversarial_csv (gconstpointer result, const char *const *labels)
{
  (void) labels;
  return saccade_adversarial_csv (result);
}

static char *
adversarial_title (gconstpointer result, ScModel *model)
{
  (void) model;
  return saccade_adversarial_title (result);
}

static char *
adversarial_note (gconstpointer result)
{
  return saccade_adversarial_reading (result, TRUE);
}

static gboolean
adversarial_export (gconstpointer result, ScModel *model, const char *const *labels,
                    gboolean translated, const char *path,
                    const SaccadeFigureExportOptions *opts, GError **error)
{
  const SaccadeAdversarial *a = result;
  g_autofree char *title = saccade_adversarial_title (a);
  g_autofree char *label = saccade_adversarial_label (a, TRUE);
  g_autofree double *buf = g_new (double, 2 * (gsize) a->base.n_tokens);
  SaccadeAdvSeries series;
  SaccadeAdversarialFigure fig;

  (void) model, (void) translated;
  saccade_adversarial_figure (a, label, labels, title, &series, buf, buf + a->base.n_tokens,
                              &fig);
  return saccade_figure_export_adversarial (&fig, path, opts, error);
}

const SaccadeFaceOutputs saccade_adversarial_outputs = {
  .face = &saccade_adversarial_face,
  .json = adversarial_json,
  .text = adversarial_text,
  .csv = adversarial_csv,
  .csv_row = "epsilon",
  .note = adversarial_note,
  .title = adversarial_title,
  .export_figure = adversarial_export,
};
