/* saccade-export-csv.c — the exporter's CSV tables (saccade-export.h): one head with its
 * token labels, every head's metrics, one layer, the distance matrix, a value per head, the
 * induction scores; RFC 4180 with CRLF, numbers through saccade-csv.h. */
#include "app/core/saccade-export-private.h"

#include <math.h>
#include <string.h>

#include "app/core/saccade-csv.h"
#include "app/core/saccade-induction.h"
#include "app/core/saccade-model.h"

/* ------------------------------------------------------------------------------------ */
/* CSV                                                                                   */

/* "pos:token" as one field. */
static void
csv_label (GString *out, const char *const *labels, guint pos)
{
  g_autofree char *label = g_strdup_printf ("%u:%s", pos, labels[pos]);
  saccade_csv_field (out, label);
}

GBytes *
saccade_export_head_csv (const SaccadeExportHeadView *v, const char *const *labels)
{
  GString *out = g_string_new ("query\\key");
  guint i, j;

  for (j = 0; j < v->n_key; j++)
    {
      g_string_append_c (out, ',');
      csv_label (out, labels, v->k0 + j);
    }
  g_string_append (out, "\r\n");
  for (i = 0; i < v->n_query; i++)
    {
      csv_label (out, labels, v->q0 + i);
      for (j = 0; j < v->n_key; j++)
        {
          g_string_append_c (out, ',');
          saccade_csv_number (out, v->probs[(gsize) i * v->n_key + j]);
        }
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_export_metrics_csv (SaccadeExportSource *src, GError **error)
{
  g_autofree ScHeadStats *owned_stats = NULL;
  const ScHeadStats *stats = saccade_export_source_stats (src, &owned_stats, error);
  GString *out;
  int l, h, g = saccade_export_source_group_size (src);

  if (stats == NULL)
    return NULL;
  out = g_string_new ("layer,head,kv_head,entropy,sink_mass,previous_token,entropy_norm,"
                      "distance,confidence,sink_k,self,last_entropy,last_top,last_top_token,"
                      "last_top_weight\r\n");
  for (l = 0; l < src->n_layers; l++)
    for (h = 0; h < src->n_heads; h++)
      {
        const ScHeadStats *st = &stats[(gsize) l * src->n_heads + h];
        g_string_append_printf (out, "%d,%d,%d,", l, h, h / g);
        saccade_csv_number (out, st->entropy);
        g_string_append_c (out, ',');
        saccade_csv_number (out, st->sink);
        g_string_append_c (out, ',');
        saccade_csv_number (out, st->previous);
        {
          const double more[] = { st->entropy_norm, st->distance, st->confidence, st->sink_k,
                                  st->self, st->last_entropy };
          for (gsize i = 0; i < G_N_ELEMENTS (more); i++)
            {
              g_string_append_c (out, ',');
              saccade_csv_number (out, more[i]);
            }
        }
        g_string_append_printf (out, ",%d,", st->last_top);
        if (st->last_top >= 0 && st->last_top < src->n)
          saccade_csv_field (out, src->labels[st->last_top]);
        g_string_append_c (out, ',');
        saccade_csv_number (out, st->last_top_weight);
        g_string_append (out, "\r\n");
      }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_export_layer_csv (SaccadeExportSource *src, int layer,
                          GError **error)
{
  const char *const *labels = (const char *const *) src->labels;
  g_autofree float *owned = NULL;
  gboolean causal = FALSE;
  const SaccadeExportRange whole = { 0, src->n, 0, src->n };
  const float *heads = saccade_export_source_block (src, layer, 1, 0, src->n_heads, &whole, &owned, &causal,
                                     error);
  gsize n2 = (gsize) src->n * src->n;
  GString *out;
  int h, i, j;

  if (heads == NULL)
    return NULL;
  out = g_string_new ("layer,head,query,key,query_token,key_token,weight\r\n");
  for (h = 0; h < src->n_heads; h++)
    {
      const float *a = heads + h * n2;
      for (i = 0; i < src->n; i++)
        for (j = 0; j < src->n; j++)
          {
            if (causal && j > i)
              continue;
            g_string_append_printf (out, "%d,%d,%d,%d,", layer, h, i, j);
            saccade_csv_field (out, labels[i]);
            g_string_append_c (out, ',');
            saccade_csv_field (out, labels[j]);
            g_string_append_c (out, ',');
            saccade_csv_number (out, a[(gsize) i * src->n + j]);
            g_string_append (out, "\r\n");
          }
    }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_export_distance_csv (int n, const double *values, const int *order,
                             const char *const *labels)
{
  GString *out = g_string_new ("item");
  int r, c;

  for (c = 0; c < n; c++)
    {
      g_string_append_c (out, ',');
      saccade_csv_field (out, labels[order != NULL ? order[c] : c]);
    }
  g_string_append (out, "\r\n");
  for (r = 0; r < n; r++)
    {
      int a = order != NULL ? order[r] : r;
      saccade_csv_field (out, labels[a]);
      for (c = 0; c < n; c++)
        {
          g_string_append_c (out, ',');
          saccade_csv_number (out, values[(gsize) a * n + (order != NULL ? order[c] : c)]);
        }
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_export_values_csv (SaccadeExportSource *src, const double *values, const char *name)
{
  GString *out = g_string_new ("pos,token,");

  saccade_csv_field (out, name);
  g_string_append (out, "\r\n");
  for (int i = 0; i < src->n; i++)
    {
      g_string_append_printf (out, "%d,", i);
      saccade_csv_field (out, src->labels[i]);
      g_string_append_c (out, ',');
      saccade_csv_number (out, values[i]);
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_export_induction_csv (const SaccadeInduction *ind)
{
  const ScInductionResult *r = ind->result;
  g_autofree int *order = saccade_induction_rank (ind, 0);
  GString *out = g_string_new ("rank,layer,head,prefix_matching,duplicate_token,"
                               "previous_token,copying,positive_share\r\n");

  for (int k = 0; k < r->n_layers * r->n_heads; k++)
    {
      const int i = order[k];
      const double v[] = { r->heads[i].prefix_matching, r->heads[i].duplicate_token,
                           r->heads[i].previous_token, ind->copying[i].copying,
                           ind->copying[i].positive_share };
      g_string_append_printf (out, "%d,%d,%d", k + 1, i / r->n_heads, i % r->n_heads);
      for (gsize c = 0; c < G_N_ELEMENTS (v); c++)
        {
          g_string_append_c (out, ',');
          saccade_csv_number (out, v[c]);
        }
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}
