/* sc-study.c — the table of study kinds and what the study files share (sc-study.h).
 *
 * The table lists the descriptors each study file ends with; nothing else here knows a
 * kind. The helpers are the ones every ablation-like study needs: the effect of an
 * intervention against the clean run of the same ids, and reading an integer back from a
 * canonical params text.
 */
#include "study/sc-study.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/sc-ablation-first.h"
#include "study/sc-ablation-study.h"
#include "study/sc-adversarial.h"
#include "study/sc-attribution.h"
#include "study/sc-dla.h"
#include "study/sc-erasure-study.h"
#include "study/sc-faithfulness.h"
#include "study/sc-head-means.h"
#include "study/sc-layer-study.h"
#include "study/sc-lens-study.h"
#include "study/sc-mixing-study.h"
#include "study/sc-norm-study.h"
#include "study/sc-patch-study.h"
#include "study/sc-path-patch.h"
#include "study/sc-permutation-study.h"
#include "study/sc-qk-study.h"

/* The order `saccade` lists them in: the ablations of a run first, then the attributions,
 * then what is not a run's. */
static const ScStudyKind *const KINDS[] = {
  &sc_study_kind_heads,
  &sc_study_kind_heads_mean,
  &sc_study_kind_heads_first,
  &sc_study_kind_heads_first_mean,
  &sc_study_kind_layers,
  &sc_study_kind_tokens,
  &sc_study_kind_permute,
  &sc_study_kind_erasure,
  &sc_study_kind_dla,
  &sc_study_kind_faithfulness,
  &sc_study_kind_attribution,
  &sc_study_kind_adversarial,
  &sc_study_kind_patch,
  &sc_study_kind_patch_attribution,
  &sc_study_kind_path_patch,
  &sc_study_kind_lens,
  &sc_study_kind_qk,
  &sc_study_kind_norms,
  &sc_study_kind_mixing,
  &sc_study_kind_head_means,
  NULL,
};

const ScStudyKind *const *
sc_study_kinds (size_t *n)
{
  if (n != NULL)
    *n = sizeof KINDS / sizeof KINDS[0] - 1;
  return KINDS;
}

const ScStudyKind *
sc_study_kind_find (const char *name)
{
  if (name == NULL)
    return NULL;
  for (size_t i = 0; KINDS[i] != NULL; i++)
    if (strcmp (KINDS[i]->name, name) == 0)
      return KINDS[i];
  for (size_t i = 0; KINDS[i] != NULL; i++)
    if (strcmp (KINDS[i]->id, name) == 0)
      return KINDS[i];
  return NULL;
}

void *
sc_study_params_dup_default (const ScStudyKind *kind)
{
  void *p;

  if (kind == NULL || (p = malloc (kind->params_size > 0 ? kind->params_size : 1)) == NULL)
    return NULL;
  memcpy (p, kind->params_default, kind->params_size);
  return p;
}

/* The needs of @kind that @ctx lacks, as SC_ERR_INVALID_ARG naming the first. */
static ScStatus
check_needs (const ScStudyKind *kind, const ScStudyCtx *ctx, ScError *err)
{
  const unsigned needs = kind->needs;

  if (ctx == NULL || ctx->model == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no model", kind->name);
  if ((needs & SC_STUDY_NEEDS_RUN) && (ctx->ids == NULL || ctx->n_tokens < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no run to study", kind->name);
  if ((needs & SC_STUDY_NEEDS_RUN_PAIR) && (ctx->ids2 == NULL || ctx->n_tokens2 < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no second run to set against the "
                         "first", kind->name);
  if ((needs & SC_STUDY_NEEDS_MEANS) && ctx->means_set == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no reference set named",
                         kind->name);
  if ((needs & SC_STUDY_NEEDS_SENTENCES)
      && (ctx->sentences == NULL || ctx->sentence_lengths == NULL || ctx->n_sentences < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no reference sentences",
                         kind->name);
  return SC_OK;
}

ScStatus
sc_study_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                      char *buf, size_t size, ScError *err)
{
  ScStatus st;

  if (kind == NULL || buf == NULL || size == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study: no kind or no buffer");
  if ((st = check_needs (kind, ctx, err)) != SC_OK)
    return st;
  if (params == NULL)
    params = kind->params_default;
  if (kind->params_json (kind, params, ctx, buf, size, err) < 0)
    {
      if (err != NULL && err->status == SC_OK)
        sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: parameters out of range",
                      kind->name);
      return err != NULL ? err->status : SC_ERR_INVALID_ARG;
    }
  return SC_OK;
}

ScStatus
sc_study_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
              ScError *err)
{
  ScStatus st;

  if (kind == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study: no kind or no result pointer");
  *out = NULL;
  if ((st = check_needs (kind, ctx, err)) != SC_OK)
    return st;
  if ((kind->needs & SC_STUDY_NEEDS_SESSION) && ctx->session == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no session to run on",
                         kind->name);
  if ((kind->needs & SC_STUDY_NEEDS_BACKWARD) && ctx->grad == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no backward pass to run on",
                         kind->name);
  if ((kind->needs & SC_STUDY_NEEDS_MEANS) && ctx->head_mean == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: no head means", kind->name);
  if ((kind->needs & SC_STUDY_NEEDS_RUN) && ctx->n_tokens < kind->min_tokens)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: %d tokens, it needs %d",
                         kind->name, ctx->n_tokens, kind->min_tokens);
  return kind->run (kind, ctx, params != NULL ? params : kind->params_default, out, err);
}

const ScStudyOption *
sc_study_option_find (const ScStudyKind *kind, const char *name)
{
  for (const ScStudyOption *o = kind->options; o != NULL && o->name != NULL; o++)
    if (strcmp (o->name, name) == 0)
      return o;
  return NULL;
}

int64_t
sc_study_params_run2 (const ScStudyKind *kind, const void *params)
{
  int64_t id;

  for (const ScStudyOption *o = kind->options; o != NULL && o->name != NULL; o++)
    if (o->type == SC_STUDY_OPTION_RUN)
      {
        memcpy (&id, (const char *) params + o->offset, sizeof id);
        return id;
      }
  return 0;
}

/* @text as a whole decimal integer (an optional '-'); false when it is not one or overflows. */
static bool
parse_int64 (const char *text, long long *out)
{
  char *end;

  if (text == NULL || *text == '\0')
    return false;
  errno = 0;
  *out = strtoll (text, &end, 10);
  return errno == 0 && *end == '\0';
}

ScStatus
sc_study_option_set (const ScStudyKind *kind, void *params, const char *name,
                     const char *value, uint32_t n_vocab, ScError *err)
{
  const ScStudyOption *o = sc_study_option_find (kind, name);
  char *field = params;
  long long v;

  if (o == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s has no option '%s'", kind->name,
                         name);
  field += o->offset;
  switch (o->type)
    {
    case SC_STUDY_OPTION_TOKEN:
      if (!parse_int64 (value, &v) || v < -1 || (v >= 0 && (unsigned long long) v >= n_vocab))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes a token id below "
                             "%u (or -1: the clean top-1), not '%s'", kind->name, name, n_vocab,
                             value);
      *(int *) field = (int) v;
      return SC_OK;
    case SC_STUDY_OPTION_INT:
      if (!parse_int64 (value, &v) || v < o->min || v > o->max)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes %d to %d, not '%s'",
                             kind->name, name, o->min, o->max, value);
      *(int *) field = (int) v;
      return SC_OK;
    case SC_STUDY_OPTION_UINT64:
      {
        char *end;
        unsigned long long u;
        errno = 0;
        u = value != NULL && *value >= '0' && *value <= '9' ? strtoull (value, &end, 10) : 0;
        if (value == NULL || !(*value >= '0' && *value <= '9') || errno != 0 || *end != '\0')
          return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes an unsigned "
                               "integer, not '%s'", kind->name, name, value);
        *(uint64_t *) field = u;
        return SC_OK;
      }
    case SC_STUDY_OPTION_RUN:
      if (!parse_int64 (value, &v) || v < 1)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes a stored run's id "
                             "(1 or more), not '%s'", kind->name, name, value);
      {
        const int64_t id = v;
        memcpy (field, &id, sizeof id);
      }
      return SC_OK;
    case SC_STUDY_OPTION_HEADS:
      {
        int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT];
        char text[SC_STUDY_HEADS_MAX];
        if (sc_study_heads_parse (value, layer, head, text) < 0)
          return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes a list of at "
                               "most %d heads LAYER.HEAD separated by commas (e.g. 17.4,20.0), "
                               "not '%s'", kind->name, name, SC_STUDY_HEADS_MAX_COUNT,
                               value != NULL ? value : "");
        memcpy (field, text, sizeof text);
      }
      return SC_OK;
    case SC_STUDY_OPTION_BOOL:
      if (value != NULL && (strcmp (value, "yes") == 0 || strcmp (value, "true") == 0
                            || strcmp (value, "1") == 0))
        *(bool *) field = true;
      else if (value != NULL && (strcmp (value, "no") == 0 || strcmp (value, "false") == 0
                                 || strcmp (value, "0") == 0))
        *(bool *) field = false;
      else
        return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes yes or no, not "
                             "'%s'", kind->name, name, value != NULL ? value : "");
      return SC_OK;
    case SC_STUDY_OPTION_CHOICE:
      for (int i = 0; o->choices != NULL && o->choices[i] != NULL; i++)
        if (value != NULL && strcmp (o->choices[i], value) == 0)
          {
            *(int *) field = i;
            return SC_OK;
          }
      {
        char list[160] = "";
        for (int i = 0; o->choices != NULL && o->choices[i] != NULL; i++)
          {
            const size_t at = strlen (list);
            snprintf (list + at, sizeof list - at, "%s%s", i > 0 ? ", " : "", o->choices[i]);
          }
        return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --%s takes one of %s, not "
                             "'%s'", kind->name, name, list, value != NULL ? value : "");
      }
    }
  return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: option '%s' has no type",
                       kind->name, name);
}

/* One decimal number below 100000 at *@at, which is moved past it; −1 when there is none. */
static int
parse_small (const char **at)
{
  int v = 0, digits = 0;

  while (**at >= '0' && **at <= '9' && digits < 6)
    v = v * 10 + (*(*at)++ - '0'), digits++;
  return digits == 0 || v >= 100000 ? -1 : v;
}

int
sc_study_heads_parse (const char *text, int *layer, int *head,
                      char canonical[SC_STUDY_HEADS_MAX])
{
  int n = 0;
  const char *at = text;

  if (text == NULL || *text == '\0')
    return -1;
  /* 1. "L.H" items separated by commas, each inserted in (layer, head) order, repeats
   *    dropped */
  for (;;)
    {
      int l, h = -1, i;
      /* "23.3" or, as the window and the command line print heads, "L23.H3" */
      if (*at == 'L')
        at++;
      l = parse_small (&at);
      if (*at == '.')
        {
          if (*++at == 'H')
            at++;
          h = parse_small (&at);
        }
      if (l < 0 || h < 0 || (*at != ',' && *at != '\0'))
        return -1;
      for (i = n; i > 0 && (layer[i - 1] > l || (layer[i - 1] == l && head[i - 1] > h)); i--)
        ;
      if (!(i > 0 && layer[i - 1] == l && head[i - 1] == h))
        {
          if (n == SC_STUDY_HEADS_MAX_COUNT)
            return -1;
          memmove (layer + i + 1, layer + i, (size_t) (n - i) * sizeof *layer);
          memmove (head + i + 1, head + i, (size_t) (n - i) * sizeof *head);
          layer[i] = l;
          head[i] = h;
          n++;
        }
      if (*at++ == '\0')
        break;
    }
  /* 2. the canonical text */
  if (canonical != NULL)
    {
      size_t len = 0;
      canonical[0] = '\0';
      for (int i = 0; i < n; i++)
        {
          const int w = snprintf (canonical + len, SC_STUDY_HEADS_MAX - len, "%s%d.%d",
                                  i > 0 ? "," : "", layer[i], head[i]);
          if (w < 0 || (size_t) w >= SC_STUDY_HEADS_MAX - len)
            return -1;
          len += (size_t) w;
        }
    }
  return n;
}

bool
sc_study_report (const ScStudyCtx *ctx, double fraction)
{
  return ctx == NULL || ctx->progress == NULL || ctx->progress (ctx->progress_user, fraction);
}

/* ------------------------------------------------------------------------------------ */
/* Ablations measured against the clean run                                              */

ScStatus
sc_study_check_ids (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                    int min_n, int target, ScError *err)
{
  const ScModelInfo *info;
  int i;

  if (session == NULL || model == NULL || ids == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: NULL argument");
  info = sc_model_info (model);
  if (n < min_n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: %d token%s given, at least %d "
                         "needed%s", n, n == 1 ? "" : "s", min_n,
                         min_n > 1 ? " (the last token is the query and is never erased)" : "");
  for (i = 0; i < n; i++)
    if (ids[i] < 0 || (uint32_t) ids[i] >= info->n_vocab)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: token %d has id %d, outside "
                           "the vocabulary of %u", i, ids[i], info->n_vocab);
  if (target < -1 || (target >= 0 && (uint32_t) target >= info->n_vocab))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: target %d is outside the "
                         "vocabulary 0..%u", target, info->n_vocab - 1);
  return SC_OK;
}

ScStatus
sc_study_kept_residuals (const ScSession *session, int L, int n, int E, float *out,
                         ScError *err)
{
  ScStatus st;

  for (int l = 0; l < L; l++)
    for (int q = 0; q < n; q++)
      if ((st = sc_session_residual (session, l, q, out + ((size_t) l * n + q) * E, err))
          != SC_OK)
        return st;
  return SC_OK;
}

ScStatus
sc_study_clean_measures (const float *logits, const int32_t *ids, int n, int V, int want_target,
                         int *target, int *top1, double *logp, double *loss, ScError *err)
{
  const float *last = logits + (size_t) (n - 1) * V;
  ScStatus st;

  *top1 = sc_logits_top1 (last, V);
  *target = want_target >= 0 ? want_target : *top1;
  if (*top1 < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: the clean logits hold a NaN");
  if ((st = sc_log_softmax_at (last, V, *target, logp, err)) != SC_OK)
    return st;
  *loss = NAN;
  if (n >= 2)
    {
      double *l = malloc ((size_t) (n - 1) * sizeof *l), sum = 0.0;
      int q;
      if (l == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory");
      if ((st = sc_token_losses (logits, ids, n, V, l, err)) != SC_OK)
        {
          free (l);
          return st;
        }
      for (q = 0; q < n - 1; q++)
        sum += l[q];
      *loss = sum / (n - 1);
      free (l);
    }
  return SC_OK;
}

ScStatus
sc_study_clean_losses (const float *clean, const int32_t *ids, int n, int V, double **out,
                       ScError *err)
{
  ScStatus st;

  *out = NULL;
  if (n < 2)
    return SC_OK;
  if ((*out = malloc (2 * (size_t) (n - 1) * sizeof **out)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory for %d losses", n);
  if ((st = sc_token_losses (clean, ids, n, V, *out, err)) != SC_OK)
    {
      free (*out);
      *out = NULL;
    }
  return st;
}

ScStatus
sc_study_same_ids_effect (const float *clean, const float *ablated, const int32_t *ids, int n,
                          int V, int target, double *losses, ScAblationEffect *e, ScError *err)
{
  const size_t last = (size_t) (n - 1) * V;
  ScStatus st;

  if ((st = sc_effect_next_token (clean + last, ablated + last, V, target, &e->next, err))
      != SC_OK)
    return st;
  e->delta_loss = NAN;
  if (n >= 2)
    {
      double *la = losses + (n - 1);
      if ((st = sc_token_losses (ablated, ids, n, V, la, err)) != SC_OK)
        return (sc_error_prefix (err, "ablated"), st);
      if ((st = sc_delta_mean_loss (losses, la, n - 1, &e->delta_loss, err)) != SC_OK)
        return st;
    }
  e->flipped = e->next.top1_ablated != e->next.top1_clean;
  e->delta_logit_diff = NAN;
  return SC_OK;
}

double
sc_study_logit_diff (const float *row, int target, int contrast)
{
  return contrast < 0 ? NAN : (double) row[target] - (double) row[contrast];
}

ScStatus
sc_study_check_contrast (int contrast, int target, int V, ScError *err)
{
  if (contrast < -1 || contrast >= V)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "contrast %d is outside the vocabulary of %d",
                         contrast, V);
  if (contrast >= 0 && contrast == target)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "the contrast %d is the target: a logit "
                         "difference needs two tokens", contrast);
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Effects in the store                                                                  */

const char *const sc_study_effect_metrics[SC_STUDY_N_EFFECT_METRICS] = {
  "delta-logp", "tv", "jsd", "delta-loss", "flip", "top1",
};

void
sc_study_effect_values (const ScAblationEffect *e, double v[SC_STUDY_N_EFFECT_METRICS])
{
  v[0] = e->next.delta_logp;
  v[1] = e->next.tv;
  v[2] = e->next.jsd;
  v[3] = e->delta_loss;
  v[4] = e->next.top1_ablated < 0 ? NAN : e->flipped ? 1.0 : 0.0;
  v[5] = e->next.top1_ablated < 0 ? NAN : (double) e->next.top1_ablated;
}

int
sc_study_effect_metric_index (const char *name)
{
  int k;

  for (k = 0; k < SC_STUDY_N_EFFECT_METRICS; k++)
    if (strcmp (name, sc_study_effect_metrics[k]) == 0)
      return k;
  return -1;
}

bool
sc_study_effect_set (ScAblationEffect *e, int k, double v, int top1_clean, double logp_clean,
                     uint32_t n_vocab)
{
  switch (k)
    {
    case 0:
      e->next.delta_logp = v;
      e->next.logp_clean = logp_clean;
      e->next.logp_ablated = logp_clean + v;
      e->next.top1_clean = top1_clean;
      return true;
    case 1: e->next.tv = v; return true;
    case 2: e->next.jsd = v; return true;
    case 3: e->delta_loss = v; return true;
    case 4: e->flipped = v == 1.0; return isnan (v) || v == 0.0 || v == 1.0;
    case 5:
      if (isnan (v))
        return true;
      if (!(v >= 0 && v < n_vocab && v == floor (v)))
        return false;
      e->next.top1_ablated = (int) v;
      e->next.top1_clean = top1_clean;
      return true;
    default: return false;
    }
}

ScStatus
sc_study_add_clean (ScStoreStudy *s, int target, double logp, int top1, double loss, int n,
                    ScError *err)
{
  const double v[5] = { target, logp, top1, loss, n };
  ScStatus st;
  int k;

  for (k = 0; k < 5; k++)
    if ((st = sc_store_study_add_series (s, "clean", k, v[k], err)) != SC_OK)
      return st;
  return SC_OK;
}

bool
sc_study_read_clean (const ScStoreStudyData *d, uint32_t n_vocab, int *target, double *logp,
                     int *top1, double *loss, int *n)
{
  double v[5] = { NAN, NAN, NAN, NAN, NAN };
  size_t i;

  for (i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "clean") == 0 && d->series[i].pos < 5)
      v[d->series[i].pos] = d->series[i].value;
  if (!(v[0] >= 0 && v[0] < n_vocab && v[2] >= 0 && v[2] < n_vocab && v[4] >= 1
        && v[4] <= SC_STORE_MAX_TOKENS))
    return false;
  *target = (int) v[0];
  *logp = v[1];
  *top1 = (int) v[2];
  *loss = v[3];
  *n = (int) v[4];
  return true;
}

ScStatus
sc_study_find_and_read (ScStore *store, const char *kind,
                        const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                        ScStoreStudyData **d, int64_t *study_id, ScError *err)
{
  int64_t id = 0;
  ScStatus st;

  *d = NULL;
  if ((st = sc_store_find_study (store, kind, sha256, params_json, &id, err)) != SC_OK)
    return st;
  if (study_id != NULL)
    *study_id = id;
  if ((st = sc_store_read_study (store, id, d, err)) != SC_OK)
    return st;
  if ((st = sc_study_check_unique (*d, err)) != SC_OK)
    {
      sc_store_study_data_free (*d);
      *d = NULL;
    }
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Validation of a stored study                                                          */

const ScStudyValueRule sc_study_contrast_rule = { SC_STUDY_CONTRAST_METRIC, -DBL_MAX, DBL_MAX,
                                                  true };

ScStatus
sc_study_add_contrast (ScStoreStudy *s, int contrast, double logit_diff, ScError *err)
{
  ScStatus st;

  if (contrast < 0)
    return SC_OK;
  if ((st = sc_store_study_add_series (s, "clean", 5, contrast, err)) != SC_OK)
    return st;
  return sc_store_study_add_series (s, "clean", 6, logit_diff, err);
}

bool
sc_study_read_contrast (const ScStoreStudyData *d, uint32_t n_vocab, int target, int *contrast,
                        double *logit_diff)
{
  double c = NAN, m = NAN;

  for (size_t i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "clean") == 0)
      {
        if (d->series[i].pos == 5)
          c = d->series[i].value;
        else if (d->series[i].pos == 6)
          m = d->series[i].value;
      }
  *contrast = -1;
  *logit_diff = NAN;
  if (isnan (c) && isnan (m))
    return true;
  if (!(c >= 0 && c < n_vocab && c == floor (c) && (int) c != target && isfinite (m)))
    return false;
  *contrast = (int) c;
  *logit_diff = m;
  return true;
}

const ScStudyValueRule sc_study_effect_rules[SC_STUDY_N_EFFECT_METRICS] = {
  { "delta-logp", -DBL_MAX, DBL_MAX, true },
  /* 1e-9 above the bound: the engine's sums in double may round just past it */
  { "tv", 0.0, 1.0 + 1e-9, true },
  { "jsd", 0.0, 0.6931471805599453 + 1e-9, true },
  { "delta-loss", -DBL_MAX, DBL_MAX, true },
  { "flip", 0.0, 1.0, true },
  { "top1", 0.0, (double) INT32_MAX, true },
};

static bool
value_ok (const ScStudyValueRule *rule, double v)
{
  return isnan (v) ? rule->nan_ok : v >= rule->lo && v <= rule->hi;
}

ScStatus
sc_study_check_unique (const ScStoreStudyData *d, ScError *err)
{
  size_t i;

  /* the reader returns heads ordered by (layer, head, metric) and series by (series, pos):
   * a duplicate is next to its twin */
  for (i = 1; i < d->n_head_values; i++)
    {
      const ScStoreHeadValue *a = &d->heads[i - 1], *b = &d->heads[i];
      if (a->layer == b->layer && a->head == b->head && strcmp (a->metric, b->metric) == 0)
        return sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d holds '%s' twice",
                             (long long) d->id, d->kind, b->layer, b->head, b->metric);
    }
  for (i = 1; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *a = &d->series[i - 1], *b = &d->series[i];
      if (a->pos == b->pos && strcmp (a->series, b->series) == 0)
        return sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): series '%s' holds position "
                             "%d twice", (long long) d->id, d->kind, b->series, b->pos);
    }
  return SC_OK;
}

ScStatus
sc_study_check_heads (const ScStoreStudyData *d, const ScStudyValueRule *rules, int n_rules,
                      const bool *wanted, ScError *err)
{
  const size_t n_heads = (size_t) d->n_layers * (size_t) d->n_heads;
  unsigned char *seen;
  ScStatus st = SC_OK;
  size_t i;

  if (n_heads == 0 || n_rules < 1)
    return sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its model has no heads",
                         (long long) d->id, d->kind);
  if ((seen = calloc (n_heads * (size_t) n_rules, 1)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "study %lld: out of memory", (long long) d->id);
  for (i = 0; i < d->n_head_values && st == SC_OK; i++)
    {
      const ScStoreHeadValue *v = &d->heads[i];
      const size_t h = (size_t) v->layer * (size_t) d->n_heads + (size_t) v->head;
      int k;
      for (k = 0; k < n_rules && strcmp (rules[k].name, v->metric) != 0; k++)
        ;
      if (k == n_rules)
        continue;
      if (wanted != NULL && !wanted[h])
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d is not one its "
                           "parameters name, yet holds '%s'", (long long) d->id, d->kind,
                           v->layer, v->head, v->metric);
      else if (!value_ok (&rules[k], v->value))
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d's '%s' is %g, "
                           "outside [%g, %g]", (long long) d->id, d->kind, v->layer, v->head,
                           v->metric, v->value, rules[k].lo, rules[k].hi);
      else if (seen[h * (size_t) n_rules + (size_t) k]++ != 0)
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d holds '%s' twice",
                           (long long) d->id, d->kind, v->layer, v->head, v->metric);
    }
  for (i = 0; i < n_heads && st == SC_OK; i++)
    for (int k = 0; k < n_rules && st == SC_OK; k++)
      if ((wanted == NULL || wanted[i]) && seen[i * (size_t) n_rules + (size_t) k] == 0)
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): head L%d.H%d's '%s' is "
                           "missing", (long long) d->id, d->kind, (int) (i / (size_t) d->n_heads),
                           (int) (i % (size_t) d->n_heads), rules[k].name);
  free (seen);
  return st;
}

ScStatus
sc_study_check_series (const ScStoreStudyData *d, const ScStudyValueRule *rule, int n,
                       ScError *err)
{
  bool *seen;
  ScStatus st = SC_OK;
  size_t i;
  int p;

  if (n < 0 || (seen = calloc ((size_t) (n > 0 ? n : 1), sizeof *seen)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "study %lld: out of memory", (long long) d->id);
  for (i = 0; i < d->n_series_values && st == SC_OK; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, rule->name) != 0)
        continue;
      if (v->pos >= n)
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): series '%s' has position %d, "
                           "past its %d", (long long) d->id, d->kind, v->series, v->pos, n);
      else if (!value_ok (rule, v->value))
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): series '%s' at %d is %g, "
                           "outside [%g, %g]", (long long) d->id, d->kind, v->series, v->pos,
                           v->value, rule->lo, rule->hi);
      else if (seen[v->pos])
        st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): series '%s' holds position "
                           "%d twice", (long long) d->id, d->kind, v->series, v->pos);
      else
        seen[v->pos] = true;
    }
  for (p = 0; p < n && st == SC_OK; p++)
    if (!seen[p])
      st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): series '%s' lacks position %d "
                         "of its %d", (long long) d->id, d->kind, rule->name, p, n);
  free (seen);
  return st;
}

bool
sc_study_params_uint (const char *params, const char *key, uint64_t *out)
{
  char pat[32];
  const char *at;
  char *end;

  if (params == NULL || key == NULL
      || (size_t) snprintf (pat, sizeof pat, "\"%s\":", key) >= sizeof pat
      || (at = strstr (params, pat)) == NULL)
    return false;
  at += strlen (pat);
  if (*at < '0' || *at > '9')
    return false;
  *out = strtoull (at, &end, 10);
  return end != at;
}

ScStatus
sc_study_check_target (const ScStoreStudyData *d, const char *params_json, int target,
                       ScError *err)
{
  uint64_t want;

  if (sc_study_params_uint (params_json, "target", &want) && want != (uint64_t) target)
    return sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its parameters name target "
                         "%llu, its clean series %d", (long long) d->id, d->kind,
                         (unsigned long long) want, target);
  return SC_OK;
}

ScStatus
sc_study_check_contrast_params (const ScStoreStudyData *d, const char *params_json,
                                int contrast, ScError *err)
{
  uint64_t want;
  const bool named = sc_study_params_uint (params_json, "contrast", &want);

  if (named != (contrast >= 0) || (named && want != (uint64_t) contrast))
    return sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its parameters name %s, its "
                         "clean series contrast %d", (long long) d->id, d->kind,
                         named ? "a contrast" : "no contrast", contrast);
  return SC_OK;
}

int64_t
sc_study_tri_pos (int k, int n, int i, int j)
{
  return (int64_t) k * n * (n + 1) / 2 + (int64_t) i * (i + 1) / 2 + j;
}

bool
sc_study_tri_unpos (int64_t pos, int n, int *k, int *i, int *j)
{
  const int64_t T = (int64_t) n * (n + 1) / 2;
  int64_t rem, row;

  if (pos < 0 || n < 1)
    return false;
  *k = (int) (pos / T);
  rem = pos % T;
  row = (int64_t) ((sqrt (8.0 * (double) rem + 1.0) - 1.0) / 2.0);
  while (row * (row + 1) / 2 > rem) /* the square root's rounding, either way */
    row--;
  while ((row + 1) * (row + 2) / 2 <= rem)
    row++;
  *i = (int) row;
  *j = (int) (rem - row * (row + 1) / 2);
  return true;
}

double
sc_study_series_at0 (const ScStoreStudyData *d, const char *name)
{
  for (size_t i = 0; i < d->n_series_values; i++)
    if (d->series[i].pos == 0 && strcmp (d->series[i].series, name) == 0)
      return d->series[i].value;
  return NAN;
}
