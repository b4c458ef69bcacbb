/* sc-attribution-store.c — gradient attributions in the capture store: the params text,
 * storing a result as a study, and reading one back with every number checked (the layout
 * is in sc-attribution.h, "Storage").
 */
#include "study/sc-attribution.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sc-sha256.h"

/* The values of series "clean" (the contrast only when there is one) and the five of
 * "ig.check". */
enum { CLEAN_TARGET, CLEAN_POSITION, CLEAN_N, CLEAN_VALUE, CLEAN_TOP1, CLEAN_CONTRAST, N_CLEAN };
enum { CHECK_FX, CHECK_FBASE, CHECK_SUM, CHECK_GAP, CHECK_GAP_REL, N_CHECK };

int
sc_attr_params_json (int64_t run_id, const int32_t *ids, int n, const ScAttrParams *p, char *buf,
                     size_t size)
{
  char run[24], hex[SC_SHA256_HEX_SIZE + 2], target[32], methods[64] = "", base[24];
  unsigned set;
  int len;

  if (p == NULL || buf == NULL || run_id < 0 || (run_id == 0 && (ids == NULL || n < 1))
      || sc_attr_rule_id (p->rule) == NULL || sc_attr_baseline_id (p->baseline) == NULL
      || p->methods >= (1u << SC_ATTR_N_METHODS))
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
    snprintf (target, sizeof target, "%d", (int) p->target);
  else
    strcpy (target, "null");
  /* a contrast follows the target; without one the text is what it was before contrasts,
   * so the studies stored then are still found */
  if (p->contrast >= 0)
    snprintf (target + strlen (target), sizeof target - strlen (target), ",\"contrast\":%d",
              (int) p->contrast);
  set = p->methods == 0 ? (1u << SC_ATTR_N_METHODS) - 1 : p->methods;
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (set & (1u << m))
      {
        if (methods[0] != '\0')
          strcat (methods, ",");
        strcat (methods, sc_attr_method_id ((ScAttrMethod) m));
      }
  if (p->baseline == SC_ATTR_BASELINE_TOKEN)
    snprintf (base, sizeof base, "\"token:%d\"", (int) p->baseline_token);
  else
    strcpy (base, "\"zero\"");
  /* integrated gradients' settings only matter when it runs: without it they are null, so
   * a saliency study is found whatever --steps said */
  if (set & (1u << SC_ATTR_IG))
    len = snprintf (buf, size, "{\"study\":%d,\"run\":%s,\"ids\":%s,\"methods\":\"%s\","
                    "\"target\":%s,\"position\":%d,\"steps\":%d,\"rule\":\"%s\","
                    "\"baseline\":%s}", SC_ATTR_STUDY_VERSION, run, hex, methods, target,
                    p->position, p->steps > 0 ? p->steps : SC_ATTR_DEFAULT_STEPS,
                    sc_attr_rule_id (p->rule), base);
  else
    len = snprintf (buf, size, "{\"study\":%d,\"run\":%s,\"ids\":%s,\"methods\":\"%s\","
                    "\"target\":%s,\"position\":%d,\"steps\":null,\"rule\":null,"
                    "\"baseline\":null}", SC_ATTR_STUDY_VERSION, run, hex, methods, target,
                    p->position);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_attr_store (ScStore *store, const ScStoreModel *model, const char *params_json,
               const ScAttrResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: no result to store");
  if ((st = sc_store_study_begin (store, SC_ATTR_KIND, model, params_json, &s, err)) != SC_OK)
    return st;
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    for (int j = 0; r->scores[m] != NULL && j < r->n_tokens; j++)
      if ((st = sc_store_study_add_series (s, sc_attr_method_id ((ScAttrMethod) m), j,
                                           r->scores[m][j], err)) != SC_OK)
        goto fail;
  if (r->scores[SC_ATTR_IG] != NULL)
    {
      const double check[N_CHECK] = { r->value, r->f_baseline, r->ig_sum, r->ig_gap,
                                       r->ig_gap_rel };
      for (int c = 0; c < N_CHECK; c++)
        if ((st = sc_store_study_add_series (s, "ig.check", c, check[c], err)) != SC_OK)
          goto fail;
    }
  {
    const double clean[N_CLEAN] = { r->target, r->position, r->n_tokens, r->value, r->top1,
                                    r->contrast };
    for (int c = 0; c < (r->contrast >= 0 ? N_CLEAN : CLEAN_CONTRAST); c++)
      if ((st = sc_store_study_add_series (s, "clean", c, clean[c], err)) != SC_OK)
        goto fail;
  }
  return sc_store_study_commit (s, study_id, err);

fail:
  sc_store_study_abort (s);
  return st;
}

static bool
is_index (double v, double below)
{
  return v >= 0 && v < below && v == floor (v);
}

ScStatus
sc_attr_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
              const char *params_json, const ScAttrParams *params, ScAttrResult **out,
              int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScAttrResult *r = NULL;
  double clean[N_CLEAN], check[N_CHECK];
  char bad[192] = "the clean series";
  int64_t id = 0;
  ScStatus st;
  size_t i;
  int c;

  if (store == NULL || info == NULL || sha256 == NULL || params_json == NULL || params == NULL
      || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attribution: NULL argument");
  *out = NULL;
  if ((st = sc_study_find_and_read (store, SC_ATTR_KIND, sha256, params_json, &d, &id,
                                    err)) != SC_OK)
    return st;
  for (c = 0; c < N_CLEAN; c++)
    clean[c] = NAN;
  for (c = 0; c < N_CHECK; c++)
    check[c] = NAN;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "clean") == 0 && v->pos < N_CLEAN)
        clean[v->pos] = v->value;
      else if (strcmp (v->series, "ig.check") == 0 && v->pos < N_CHECK)
        check[v->pos] = v->value;
    }
  if (!(is_index (clean[CLEAN_N], SC_STORE_MAX_TOKENS + 1.0) && clean[CLEAN_N] >= 1
        && is_index (clean[CLEAN_POSITION], clean[CLEAN_N])
        && is_index (clean[CLEAN_TARGET], info->n_vocab)
        && is_index (clean[CLEAN_TOP1], info->n_vocab) && isfinite (clean[CLEAN_VALUE])))
    goto bad;
  /* the contrast the params name, and then f is a logit difference (any sign); without
   * one f is a log-probability, <= 0 */
  snprintf (bad, sizeof bad, "the clean series (contrast %g, value %g; the parameters say "
            "contrast %d)", clean[CLEAN_CONTRAST], clean[CLEAN_VALUE], (int) params->contrast);
  if (params->contrast >= 0 ? clean[CLEAN_CONTRAST] != params->contrast
                                || clean[CLEAN_CONTRAST] == clean[CLEAN_TARGET]
                            : !isnan (clean[CLEAN_CONTRAST]) || clean[CLEAN_VALUE] > 0)
    goto bad;
  /* the position and target the params name (-1: the last position; the clean top-1): a
   * study whose params say "the last position" reported positions 0 .. 3 (issue 25) */
  snprintf (bad, sizeof bad, "the clean series (position %g, target %g; the parameters say "
            "position %d, target %d)", clean[CLEAN_POSITION], clean[CLEAN_TARGET],
            params->position, (int) params->target);
  if (clean[CLEAN_POSITION] != (params->position < 0 ? clean[CLEAN_N] - 1 : params->position)
      || (params->target >= 0 && clean[CLEAN_TARGET] != params->target)
      || (params->target < 0 && clean[CLEAN_TARGET] != clean[CLEAN_TOP1]))
    goto bad;
  if ((r = sc_attr_result_new ((int) clean[CLEAN_N], (int) info->n_layers,
                                  (int) info->n_heads)) == NULL)
    {
      sc_store_study_data_free (d);
      return sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory");
    }
  r->target = (int32_t) clean[CLEAN_TARGET];
  r->position = (int) clean[CLEAN_POSITION];
  r->value = clean[CLEAN_VALUE];
  r->top1 = (int32_t) clean[CLEAN_TOP1];
  r->contrast = params->contrast >= 0 ? params->contrast : -1;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      ScAttrMethod m;
      if (!sc_attr_method_from_id (v->series, &m))
        continue;
      snprintf (bad, sizeof bad, "series '%s' at %d (value %g)", v->series, v->pos, v->value);
      /* only the methods the params ask for (0: every one) */
      if (params->methods != 0 && !(params->methods & (1u << m)))
        goto bad;
      /* a norm and a rollout relevance are >= 0; every score is finite */
      if (v->pos >= r->n_tokens || !isfinite (v->value)
          || ((m == SC_ATTR_SALIENCY || m == SC_ATTR_GRAD_ROLLOUT) && v->value < 0))
        goto bad;
      if (r->scores[m] == NULL)
        {
          if ((r->scores[m] = malloc ((size_t) r->n_tokens * sizeof (double))) == NULL)
            {
              sc_store_study_data_free (d);
              sc_attr_result_free (r);
              return sc_error_set (err, SC_ERR_NOMEM, "attribution: out of memory");
            }
          for (c = 0; c < r->n_tokens; c++)
            r->scores[m][c] = NAN;
          r->methods |= 1u << m;
        }
      r->scores[m][v->pos] = v->value;
    }
  for (c = 0; c < SC_ATTR_N_METHODS; c++)
    for (int j = 0; r->scores[c] != NULL && j < r->n_tokens; j++)
      if (isnan (r->scores[c][j]))
        {
          snprintf (bad, sizeof bad, "series '%s' (no value at token %d)",
                    sc_attr_method_id ((ScAttrMethod) c), j);
          goto bad;
        }
  if (r->scores[SC_ATTR_IG] != NULL)
    {
      snprintf (bad, sizeof bad, "series 'ig.check'");
      for (c = 0; c < N_CHECK; c++)
        if (!isfinite (check[c]))
          goto bad;
      if (check[CHECK_GAP] < 0 || check[CHECK_GAP_REL] < 0
          || (r->contrast < 0 && check[CHECK_FBASE] > 0))
        goto bad;
      r->f_baseline = check[CHECK_FBASE];
      r->ig_sum = check[CHECK_SUM];
      r->ig_gap = check[CHECK_GAP];
      r->ig_gap_rel = check[CHECK_GAP_REL];
      r->steps = params->steps > 0 ? params->steps : SC_ATTR_DEFAULT_STEPS;
      r->rule = params->rule;
      r->baseline = params->baseline;
      r->baseline_token = params->baseline == SC_ATTR_BASELINE_TOKEN ? params->baseline_token : -1;
    }
  if (study_id != NULL)
    *study_id = id;
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;

bad:
  sc_store_study_data_free (d);
  sc_attr_result_free (r);
  return sc_error_set (err, SC_ERR_FORMAT, "attribution study %lld: %s is out of range "
                       "(the database may have been edited)", (long long) id, bad);
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
attr_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx, char *buf,
                  size_t size, ScError *err)
{
  int len = sc_attr_params_json (ctx->run_id, ctx->ids, ctx->n_tokens, params, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
attr_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
          ScError *err)
{
  ScAttrResult *r = NULL;
  ScStatus st = sc_attr_run (ctx->grad, ctx->model, ctx->ids, ctx->n_tokens, params,
                             ctx->progress, ctx->progress_user, &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
attr_store (ScStore *store, const ScStoreModel *model, const char *params_json,
            const void *result, int64_t *study_id, ScError *err)
{
  return sc_attr_store (store, model, params_json, result, study_id, err);
}

static ScStatus
attr_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
           const char *params_json, const void *params, void **out, int64_t *study_id,
           ScError *err)
{
  ScAttrResult *r = NULL;
  ScStatus st = sc_attr_load (store, info, sha256, params_json, params, &r, study_id, err);

  *out = r;
  return st;
}

static int
attr_n_tokens (const void *result)
{
  return ((const ScAttrResult *) result)->n_tokens;
}

static void
attr_clean (const void *result, ScStudyClean *out)
{
  const ScAttrResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1;
  out->logp_clean = NAN;
  out->loss_clean = NAN;
}

static void
attr_free (void *result)
{
  sc_attr_result_free (result);
}

/* A CHOICE option writes an int (sc-study.h): the enum fields must be int-sized. */
_Static_assert (sizeof (ScAttrRule) == sizeof (int), "ScAttrRule is not int-sized");
static const char *const ATTR_RULES[] = { "adaptive", "gauss-legendre", "midpoint", NULL };

static const ScStudyOption ATTR_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScAttrParams, target), 0, 0, NULL,
    "the token whose log-probability is attributed (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScAttrParams, contrast), 0, 0, NULL,
    "a second token: attribute logit(target) - logit(contrast) (default: none)" },
  { "position", SC_STUDY_OPTION_INT, offsetof (ScAttrParams, position), -1, 1 << 20, NULL,
    "the position whose next token is measured (-1: the last)" },
  { "steps", SC_STUDY_OPTION_INT, offsetof (ScAttrParams, steps), 0, SC_ATTR_MAX_STEPS, NULL,
    "integrated gradients' points (0: 50)" },
  { "rule", SC_STUDY_OPTION_CHOICE, offsetof (ScAttrParams, rule), 0, 0, ATTR_RULES,
    "integrated gradients' rule: adaptive (default), gauss-legendre or midpoint" },
  { NULL },
};

/* `saccade attribute RUN`'s defaults: every method, the last position, the clean top-1,
 * integrated gradients with the adaptive rule from the zero baseline. */
static const ScAttrParams ATTR_DEFAULT = { .methods = 0, .target = -1, .contrast = -1,
                                           .position = -1, .steps = 0,
                                           .rule = SC_ATTR_RULE_ADAPTIVE,
                                           .baseline = SC_ATTR_BASELINE_ZERO };

const ScStudyKind sc_study_kind_attribution = {
  .id = SC_ATTR_KIND,
  .name = "attribution",
  .title = "Gradient attributions",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION | SC_STUDY_NEEDS_BACKWARD,
  .min_tokens = 1,
  .params_size = sizeof (ScAttrParams),
  .params_default = &ATTR_DEFAULT,
  .options = ATTR_OPTIONS,
  .params_json = attr_params_json,
  .run = attr_run,
  .store = attr_store,
  .load = attr_load,
  .result_n_tokens = attr_n_tokens,
  .result_clean = attr_clean,
  .result_free = attr_free,
};
