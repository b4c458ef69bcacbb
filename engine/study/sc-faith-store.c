/* sc-faith-store.c — a faithfulness study in the capture store (sc-faithfulness.h,
 * "Storage"): its params text, writing its series and reading them back with every number
 * checked (an edited or truncated study is refused by name). The computation is
 * sc-faithfulness.c's. */
#include "study/sc-faithfulness.h"
#include "study/sc-faith-private.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sc-sha256.h"
#include "study/sc-attribution.h"
/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_faith_params_json (int64_t run_id, const int32_t *ids, int n, const ScFaithParams *p,
                      char *buf, size_t size)
{
  char run[24], hex[SC_SHA256_HEX_SIZE + 2], target[40], grads[16];
  int len;

  if (p == NULL || buf == NULL || run_id < 0 || (run_id == 0 && (ids == NULL || n < 1))
      || sc_faith_metric_id (p->metric) == NULL || sc_faith_erase_id (p->kind) == NULL)
    return -1;
  if (run_id > 0)
    {
      snprintf (run, sizeof run, "%lld", (long long) run_id);
      strcpy (hex, "null");
    }
  else
    {
      char h[SC_SHA256_HEX_SIZE];
      sc_sha256_int32_hex (ids, n, h);
      strcpy (run, "null");
      snprintf (hex, sizeof hex, "\"%s\"", h);
    }
  if (p->target >= 0)
    snprintf (target, sizeof target, "%d", p->target);
  else
    strcpy (target, "null");
  if (p->contrastive != (p->metric == SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF)
      || (p->contrastive && p->contrast < 0))
    return -1;
  /* without a contrast the text is the one written before contrasts existed */
  if (p->contrastive)
    snprintf (target + strlen (target), sizeof target - strlen (target), ",\"contrast\":%d",
              p->contrast);
  if (p->gradients)
    snprintf (grads, sizeof grads, "%d", p->ig_steps > 0 ? p->ig_steps : SC_ATTR_DEFAULT_STEPS);
  else
    strcpy (grads, "null");
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%s,\"ids\":%s,\"metric\":\"%s\","
                  "\"kind\":\"%s\",\"top_k\":%d,\"target\":%s,\"gradients\":%s%s}",
                  SC_FAITH_STUDY_VERSION, run, hex, sc_faith_metric_id (p->metric), sc_faith_erase_id (p->kind),
                  p->top_k > 0 ? p->top_k : 0, target, grads,
                  p->mixing ? ",\"mixing\":true" : "");
  return len < 0 || (size_t) len >= size ? -1 : len;
}

#define N_AGREE 6
static const char *const HEAD_METRIC[] = { "tau", "tau-p", "rho", "rho-p", "topk", "status" };
static const char *const HEAD_METRIC_NF[] = { "tau-nf", "tau-p-nf", "rho-nf", "rho-p-nf",
                                              "topk-nf", "status-nf" };

static void
agree_values (const ScFaithAgreement *a, double v[N_AGREE])
{
  v[0] = a->tau;
  v[1] = a->tau_p;
  v[2] = a->rho;
  v[3] = a->rho_p;
  v[4] = a->topk;
  v[5] = (double) a->status;
}

ScStatus
sc_faith_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                const ScFaithResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  char name[SC_STORE_STUDY_NAME_MAX];
  double v[N_AGREE];
  int n_sources;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: no result to store");
  /* the context-mixing sources only when asked: a study without them is stored as before
   * they existed */
  n_sources = r->mixing ? SC_FAITH_N_SOURCES : SC_FAITH_FIRST_MIXING_SOURCE;
  if ((st = sc_store_study_begin (store, SC_FAITH_KIND, model, params_json, &s, err)) != SC_OK)
    return st;
  for (int j = 0; j < r->n_items; j++)
    {
      if ((st = sc_store_study_add_series (s, "loo", j, r->loo[j], err)) != SC_OK)
        goto fail;
      for (int k = 0; k < n_sources; k++)
        {
          snprintf (name, sizeof name, "attn.%s", sc_faith_source_id ((ScFaithSource) k));
          if ((st = sc_store_study_add_series (s, name, j, r->attn[k][j], err)) != SC_OK)
            goto fail;
        }
    }
  for (int k = 0; k < n_sources; k++)
    {
      agree_values (&r->agree[k], v);
      snprintf (name, sizeof name, "agree.%s", sc_faith_source_id ((ScFaithSource) k));
      for (int c = 0; c < N_AGREE; c++)
        if ((st = sc_store_study_add_series (s, name, c, v[c], err)) != SC_OK)
          goto fail;
    }
  agree_values (&r->attn_vs_grad, v);
  for (int c = 0; c < N_AGREE; c++)
    if ((st = sc_store_study_add_series (s, "agree.attn-vs-grad", c, v[c], err)) != SC_OK)
      goto fail;
  if ((st = sc_store_study_add_series (s, "ig.gap", 0, r->ig_gap_rel, err)) != SC_OK)
    goto fail;
  {
    const double clean[5] = { r->target, r->top1_clean, r->n_tokens, r->top_k, r->contrast };
    for (int c = 0; c < (r->contrast >= 0 ? 5 : 4); c++)
      if ((st = sc_store_study_add_series (s, "clean", c, clean[c], err)) != SC_OK)
        goto fail;
  }
  for (int h = 0; h < r->n_layers * r->n_heads; h++)
    {
      const int l = h / r->n_heads, hh = h % r->n_heads;
      agree_values (&r->heads[h], v);
      for (int c = 0; c < N_AGREE; c++)
        if ((st = sc_store_study_add_head (s, l, hh, HEAD_METRIC[c], v[c], err)) != SC_OK)
          goto fail;
      if (r->heads_nf[h].status != SC_ERR_NOT_FOUND) /* a study read back from before them */
        {
          agree_values (&r->heads_nf[h], v);
          for (int c = 0; c < N_AGREE; c++)
            if ((st = sc_store_study_add_head (s, l, hh, HEAD_METRIC_NF[c], v[c], err))
                != SC_OK)
              goto fail;
        }
      for (int c = 0; c < SC_FAITH_N_HEAD_STATS; c++)
        if ((st = sc_store_study_add_head (s, l, hh, sc_head_metric_id (SC_FAITH_HEAD_STATS[c]),
                                           sc_head_stats_get (&r->head_stats[h],
                                                              SC_FAITH_HEAD_STATS[c]),
                                           err)) != SC_OK)
          goto fail;
    }
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

/* The status values an agreement may hold. */
static bool
status_ok (double v)
{
  return v == SC_OK || v == SC_ERR_RANGE || v == SC_ERR_UNSUPPORTED;
}

/* Sets component @c of @a from a stored value; false when out of range. */
static bool
agree_set (ScFaithAgreement *a, int c, double v)
{
  const bool nan = isnan (v);
  switch (c)
    {
    case 0: a->tau = v; return nan || (v >= -1 && v <= 1);
    case 1: a->tau_p = v; return nan || (v >= 0 && v <= 1);
    case 2: a->rho = v; return nan || (v >= -1 && v <= 1);
    case 3: a->rho_p = v; return nan || (v >= 0 && v <= 1);
    case 4: a->topk = v; return nan || (v >= 0 && v <= 1);
    case 5:
      if (!status_ok (v))
        return false;
      a->status = (ScStatus) (int) v;
      a->reason[0] = '\0';
      if (a->status != SC_OK)
        snprintf (a->reason, sizeof a->reason, "undefined when computed (%s)",
                  sc_status_name (a->status));
      return true;
    default: return false;
    }
}

static bool
stat_set (ScHeadStats *hs, ScHeadMetric m, double v)
{
  const bool nan = isnan (v);
  switch (m)
    {
    case SC_HEAD_METRIC_ENTROPY: hs->entropy = v; return nan || (v >= 0 && isfinite (v));
    case SC_HEAD_METRIC_CONFIDENCE: hs->confidence = v; return nan || (v >= 0 && v <= 1);
    case SC_HEAD_METRIC_SINK: hs->sink = v; return nan || (v >= 0 && v <= 1);
    case SC_HEAD_METRIC_PREVIOUS: hs->previous = v; return nan || (v >= 0 && v <= 1);
    default: return false;
    }
}

/* A stored importance: attention and rollout in [0, 1] (with rounding slack), flow in
 * [0, 1] likewise, leave-one-out finite and >= 0. NaN allowed for an unavailable source. */
static bool
importance_ok (double v, bool allow_nan, bool unit)
{
  if (isnan (v))
    return allow_nan;
  return v >= 0 && isfinite (v) && (!unit || v <= 1 + 1e-6);
}

ScStatus
sc_faith_load (ScStore *store, const ScModelInfo *info,
               const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
               const ScFaithParams *params, ScFaithResult **out, int64_t *study_id,
               ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScFaithResult *r = NULL;
  double clean[5] = { NAN, NAN, NAN, NAN, NAN };
  const char *what = "the clean series";
  char bad[192];
  int64_t id = 0;
  ScStatus st;
  size_t i;

  if (store == NULL || info == NULL || sha256 == NULL || params_json == NULL || params == NULL
      || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: NULL argument");
  if ((st = sc_study_find_and_read (store, SC_FAITH_KIND, sha256, params_json, &d, &id,
                                    err)) != SC_OK)
    return st;
  for (i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "clean") == 0 && d->series[i].pos < 5)
      clean[d->series[i].pos] = d->series[i].value;
  if (d->n_layers != (int) info->n_layers || d->n_heads != (int) info->n_heads)
    {
      what = "the model's shape";
      goto bad;
    }
  if (!(clean[2] >= SC_FAITH_MIN_TOKENS && clean[2] <= SC_STORE_MAX_TOKENS
        && clean[2] == floor (clean[2]) && clean[0] >= 0 && clean[0] < info->n_vocab
        && clean[0] == floor (clean[0]) && clean[1] >= 0 && clean[1] < info->n_vocab
        && clean[1] == floor (clean[1]) && clean[3] >= 1 && clean[3] <= clean[2] - 1
        && clean[3] == floor (clean[3])
        && (isnan (clean[4]) || (clean[4] >= 0 && clean[4] < info->n_vocab
                                 && clean[4] == floor (clean[4]) && clean[4] != clean[0]))))
    goto bad;
  /* a study whose params do not name the contrast asked for (or name another) is refused */
  if ((st = sc_study_check_contrast_params (d, params_json, isnan (clean[4]) ? -1
                                            : (int) clean[4], err)) != SC_OK
      || (params->contrastive && (isnan (clean[4]) || (int) clean[4] != params->contrast)))
    {
      if (st == SC_OK)
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its contrast is not the %d "
                           "asked for", (long long) d->id, SC_FAITH_KIND, params->contrast);
      sc_store_study_data_free (d);
      return st;
    }
  if ((r = sc_faith_result_new (d->n_layers, d->n_heads, (int) clean[2])) == NULL)
    {
      sc_store_study_data_free (d);
      return sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
    }
  r->target = (int) clean[0];
  r->top1_clean = (int) clean[1];
  r->top_k = (int) clean[3];
  r->metric = params->metric;
  r->kind = params->kind;
  r->exclude_first = params->exclude_first;
  r->contrast = isnan (clean[4]) ? -1 : (int) clean[4];
  r->mixing = params->mixing;
  if (!params->mixing) /* stored without them: not asked */
    for (int k = SC_FAITH_FIRST_MIXING_SOURCE; k < SC_FAITH_N_SOURCES; k++)
      sc_faith_agreement_undefined (&r->agree[k], SC_ERR_UNSUPPORTED, "context mixing not asked");
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      int k;
      if (strcmp (v->series, "clean") == 0)
        continue;
      snprintf (bad, sizeof bad, "series '%s' at %d (value %g)", v->series, v->pos, v->value);
      what = bad;
      if (strcmp (v->series, "loo") == 0)
        {
          if (v->pos >= r->n_items || !importance_ok (v->value, false, false))
            goto bad;
          r->loo[v->pos] = v->value;
          continue;
        }
      if (strcmp (v->series, "agree.attn-vs-grad") == 0)
        {
          if (!agree_set (&r->attn_vs_grad, v->pos, v->value))
            goto bad;
          continue;
        }
      if (strcmp (v->series, "ig.gap") == 0)
        {
          if (v->pos != 0 || !importance_ok (v->value, true, false))
            goto bad;
          r->ig_gap_rel = v->value;
          continue;
        }
      for (k = 0; k < (params->mixing ? SC_FAITH_N_SOURCES : SC_FAITH_FIRST_MIXING_SOURCE); k++)
        if (strncmp (v->series, "attn.", 5) == 0 && strcmp (v->series + 5, sc_faith_source_id ((ScFaithSource) k)) == 0)
          {
            /* attention is a weight in [0, 1]; a gradient magnitude is any value >= 0 */
            if (v->pos >= r->n_items
                || !importance_ok (v->value, true, k < SC_FAITH_FIRST_GRADIENT_SOURCE))
              goto bad;
            r->attn[k][v->pos] = v->value;
            break;
          }
        else if (strncmp (v->series, "agree.", 6) == 0
                 && strcmp (v->series + 6, sc_faith_source_id ((ScFaithSource) k)) == 0)
          {
            if (!agree_set (&r->agree[k], v->pos, v->value))
              goto bad;
            break;
          }
    }
  for (int j = 0; j < r->n_items; j++)
    if (isnan (r->loo[j]))
      {
        snprintf (bad, sizeof bad, "series 'loo' lacks position %d", j);
        what = bad;
        goto bad;
      }
  for (i = 0; i < d->n_head_values; i++)
    {
      const ScStoreHeadValue *v = &d->heads[i];
      const int h = v->layer * d->n_heads + v->head;
      ScHeadMetric m;
      int c;
      snprintf (bad, sizeof bad, "head L%d.H%d metric '%s' (value %g)", v->layer, v->head,
                v->metric, v->value);
      what = bad;
      for (c = 0; c < N_AGREE; c++)
        if (strcmp (v->metric, HEAD_METRIC[c]) == 0)
          break;
      if (c < N_AGREE)
        {
          if (!agree_set (&r->heads[h], c, v->value))
            goto bad;
          continue;
        }
      for (c = 0; c < N_AGREE; c++)
        if (strcmp (v->metric, HEAD_METRIC_NF[c]) == 0)
          break;
      if (c < N_AGREE)
        {
          if (!agree_set (&r->heads_nf[h], c, v->value))
            goto bad;
        }
      else if (sc_head_metric_from_id (v->metric, &m)
               && !stat_set (&r->head_stats[h], m, v->value))
        goto bad;
    }
  /* Every agreement must have been stored (its status at least). */
  for (int k = 0; k < SC_FAITH_N_SOURCES + r->n_layers * r->n_heads; k++)
    {
      const ScFaithAgreement *a = k < SC_FAITH_N_SOURCES ? &r->agree[k]
                                                         : &r->heads[k - SC_FAITH_N_SOURCES];
      if (a->status == SC_ERR_NOT_FOUND)
        {
          if (k < SC_FAITH_N_SOURCES)
            snprintf (bad, sizeof bad, "series 'agree.%s' is missing", sc_faith_source_id ((ScFaithSource) k));
          else
            snprintf (bad, sizeof bad, "head L%d.H%d has no agreement",
                      (k - SC_FAITH_N_SOURCES) / r->n_heads, (k - SC_FAITH_N_SOURCES) % r->n_heads);
          what = bad;
          goto bad;
        }
    }
  /* Without the first token: the heads' as stored (none before they were), the sources'
   * from the stored vectors. */
  for (int h = 0; h < r->n_layers * r->n_heads; h++)
    if (r->heads_nf[h].status == SC_ERR_NOT_FOUND)
      sc_faith_agreement_undefined (&r->heads_nf[h], SC_ERR_NOT_FOUND, "not stored (a study stored "
                           "before the agreements without the first token)");
  if ((st = sc_faith_fill_without_first (r, err)) != SC_OK)
    {
      sc_store_study_data_free (d);
      sc_faith_result_free (r);
      return st;
    }
  sc_store_study_data_free (d);
  if (study_id != NULL)
    *study_id = id;
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "%s: study %lld (%s): %s does not fit %s",
                     sc_store_path (store), (long long) d->id, SC_FAITH_KIND, what,
                     info->name[0] != '\0' ? info->name : "the model");
  sc_store_study_data_free (d);
  sc_faith_result_free (r);
  return st;
}
