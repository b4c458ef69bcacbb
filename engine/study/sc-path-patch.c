/* sc-path-patch.c — path patching (sc-path-patch.h): the source and base runs' head outputs
 * taken once, run A (senders from the source, every other head frozen at the base) once,
 * then each receiver's queries, keys or values from run A patched into the base run in
 * turn; storage through activation patching's series, and the study kind. Not here: the
 * metric and its normalisation (sc-patch-study.c). */
#include "study/sc-path-patch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sc_path_component_names[] = { "queries", "keys", "values", NULL };

void
sc_path_patch_result_free (ScPathPatchResult *r)
{
  if (r == NULL)
    return;
  sc_patch_result_free (r->grid);
  free (r);
}

/* The senders of @p parsed and checked against @info: the count, the latest sender's layer
 * in *@last; SC_ERR_INVALID_ARG naming what is wrong. */
static ScStatus
check_senders (const ScPathPatchParams *p, const ScModelInfo *info, int *layer, int *head,
               int *n, int *last, ScError *err)
{
  if ((*n = sc_study_heads_parse (p->senders, layer, head, NULL)) < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: the senders '%s' are not a "
                         "list of heads LAYER.HEAD separated by commas (e.g. 17.4,20.0)",
                         p->senders);
  for (int i = 0; i < *n; i++)
    if (layer[i] >= (int) info->n_layers || head[i] >= (int) info->n_heads)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: sender L%d.H%d is not a "
                           "head of %s (%u layers of %u heads)", layer[i], head[i], info->name,
                           info->n_layers, info->n_heads);
  *last = layer[*n - 1]; /* sorted by layer */
  if (*last >= (int) info->n_layers - 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: sender L%d.H%d is in the "
                         "last layer: no receiver head comes after it", layer[*n - 1],
                         head[*n - 1]);
  if (p->component < SC_PATH_QUERIES || p->component > SC_PATH_VALUES)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: component %d is not an "
                         "ScPathComponent", p->component);
  return SC_OK;
}

ScStatus
sc_path_patch_run (ScSession *session, const ScModel *model, const int32_t *clean,
                   const int32_t *corrupted, int n, const ScPathPatchParams *p,
                   ScStudyProgressFn progress, void *progress_user, ScPathPatchResult **out,
                   ScError *err)
{
  const ScModelInfo *info;
  ScPathPatchResult *r = NULL;
  ScPatchResult *g;
  float *logits = NULL, *row, *src_heads = NULL, *base_heads = NULL, *run_a = NULL;
  uint8_t *on = NULL;
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT], n_senders, last;
  int L, H, V, d;
  const int32_t *base_ids;
  double m_base;
  ScPatchTake take_src, take_base, take_a;
  ScObserver obs_src = { 0 }, obs_base = { 0 }, obs_a = { 0 };
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { 0 };
  ScStatus st;

  if (out == NULL || p == NULL || model == NULL || corrupted == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: NULL argument");
  if ((st = sc_study_check_ids (session, model, clean, n, 2, p->patch.target, err)) != SC_OK
      || (st = sc_study_check_ids (session, model, corrupted, n, 2, p->patch.contrast, err))
             != SC_OK)
    return st;
  info = sc_model_info (model);
  if ((st = check_senders (p, info, layer, head, &n_senders, &last, err)) != SC_OK)
    return st;
  if (p->patch.target >= 0 && p->patch.contrast == p->patch.target)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: the contrast is the target "
                         "(token %d): logit(A) − logit(A) is 0 on every run", p->patch.target);
  if (p->patch.direction != SC_PATCH_DENOISE && p->patch.direction != SC_PATCH_NOISE)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: direction %d is not an "
                         "ScPatchDirection", p->patch.direction);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  V = (int) info->n_vocab;
  d = (int) info->head_dim;
  base_ids = p->patch.direction == SC_PATCH_DENOISE ? corrupted : clean;

  r = calloc (1, sizeof *r);
  logits = malloc ((size_t) (n + 1) * V * sizeof *logits); /* the clean run's, one row */
  src_heads = malloc ((size_t) L * H * n * d * sizeof *src_heads);
  base_heads = malloc ((size_t) L * H * n * d * sizeof *base_heads);
  run_a = malloc ((size_t) L * H * n * d * sizeof *run_a);
  on = malloc ((size_t) L * H * n);
  if (r == NULL || logits == NULL || src_heads == NULL || base_heads == NULL || run_a == NULL
      || on == NULL
      || (r->grid = sc_patch_result_new (L, H, n, SC_PATCH_QUERIES + p->component)) == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "path patching: out of memory for %d tokens", n);
      goto out;
    }
  g = r->grid;
  row = logits + (size_t) n * V; /* the corrupted run's last row, then each patched run's */
  g->direction = p->patch.direction;
  r->component = p->component;
  r->receivers_from_layer = last + 1;
  sc_study_heads_parse (p->senders, layer, head, r->senders);

  /* 1. The source run, then the base run (keeping its residuals for prefix reuse), each
   *    handing over every head's output; the clean one of the two gives all its logits
   *    (the clean measures of sc-study.h; its last row then moves to row 0), the corrupted
   *    one its last row (row). */
  take_src = (ScPatchTake) { src_heads, H, (int) info->n_kv_heads, d, n,
                             SC_PATCH_QUERIES + p->component };
  take_base = take_src;
  take_base.heads = base_heads;
  obs_src = (ScObserver) { .attn_output = sc_patch_take_attn_output, .user = &take_src };
  obs_base = (ScObserver) { .attn_output = sc_patch_take_attn_output, .user = &take_base };
  for (int i = 0; i < 2; i++)
    {
      const bool is_clean = (i == 0) == (p->patch.direction == SC_PATCH_DENOISE);
      opt = (ScForwardOptions) { .all_logits = is_clean, .keep_residuals = i == 1,
                                 .observer = i == 0 ? &obs_src : &obs_base };
      if ((st = sc_forward (session, is_clean ? clean : corrupted, n, &opt,
                            is_clean ? logits : row, err)) != SC_OK)
        goto out;
      if (is_clean)
        {
          if ((st = sc_study_clean_measures (logits, clean, n, V, p->patch.target, &g->target,
                                             &g->top1_clean, &g->logp_clean, &g->loss_clean,
                                             err)) != SC_OK)
            goto out;
          memmove (logits, logits + (size_t) (n - 1) * V, (size_t) V * sizeof *logits);
        }
    }
  g->top1_corrupted = sc_logits_top1 (row, V);
  g->contrast = p->patch.contrast >= 0 ? p->patch.contrast
                : g->top1_corrupted != g->target ? g->top1_corrupted : -1;
  g->metric_clean = sc_patch_metric (logits, V, g->target, g->contrast);
  g->metric_corrupted = sc_patch_metric (row, V, g->target, g->contrast);
  if (isnan (g->metric_clean) || isnan (g->metric_corrupted) || g->top1_corrupted < 0)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: the clean or corrupted "
                         "logits hold a NaN");
      goto out;
    }
  m_base = p->patch.direction == SC_PATCH_NOISE ? g->metric_clean : g->metric_corrupted;

  /* 2. Run A: every head's output patched at every position, the senders' from the source
   *    run, the others' the base run's own (base_heads becomes the patch); it hands over
   *    the component of every head. Without keep_residuals it leaves the base run's kept
   *    residuals as they are (sc-forward.h). */
  for (int i = 0; i < n_senders; i++)
    {
      const size_t at = ((size_t) layer[i] * H + head[i]) * n * d;
      memcpy (base_heads + at, src_heads + at, (size_t) n * d * sizeof *base_heads);
    }
  memset (on, 1, (size_t) L * H * n);
  iv = (ScIntervention) { .patch_tokens = n, .head_patch = base_heads, .head_patch_on = on };
  take_a = take_src;
  take_a.heads = run_a;
  obs_a = (ScObserver) { .qkv = sc_patch_take_qkv, .user = &take_a };
  opt = (ScForwardOptions) { .intervention = &iv, .observer = &obs_a };
  if ((st = sc_forward (session, base_ids, n, &opt, row, err)) != SC_OK)
    goto out;

  /* 3. Each receiver: its component from run A, from its layer on (prefix reuse); the
   *    layers up to the latest sender hold the base run's m. */
  memset (on, 0, (size_t) L * H);
  iv = (ScIntervention) { .patch_tokens = n };
  if (p->component == SC_PATH_QUERIES)
    iv.q_patch = run_a, iv.q_patch_on = on;
  else if (p->component == SC_PATH_KEYS)
    iv.k_patch = run_a, iv.k_patch_on = on;
  else
    iv.v_patch = run_a, iv.v_patch_on = on;
  for (int c = 0; c < r->receivers_from_layer * H; c++)
    g->patched[c] = m_base;
  for (int c = r->receivers_from_layer * H; c < L * H; c++)
    {
      on[c] = 1;
      opt = (ScForwardOptions) { .intervention = &iv, .start_layer = c / H };
      st = sc_forward (session, base_ids, n, &opt, row, err);
      on[c] = 0;
      if (st != SC_OK)
        goto out;
      g->patched[c] = sc_patch_metric (row, V, g->target, g->contrast);
      if (isnan (g->patched[c]))
        {
          st = sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: the patched run's "
                             "logits hold a NaN (receiver L%d.H%d)", c / H, c % H);
          goto out;
        }
      if (progress != NULL
          && !progress (progress_user, (double) (c + 1 - r->receivers_from_layer * H)
                                           / ((L - r->receivers_from_layer) * H)))
        {
          st = sc_error_set (err, SC_ERR_CANCELLED, "path patching: cancelled");
          goto out;
        }
    }
  *out = r;
  r = NULL;
  st = SC_OK;
out:
  free (logits);
  free (src_heads);
  free (base_heads);
  free (run_a);
  free (on);
  sc_path_patch_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage and the study kind (sc-study.h)                                               */

int
sc_path_patch_params_json (int64_t run_id, const ScPathPatchParams *p, char *buf, size_t size)
{
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT];
  char senders[SC_STUDY_HEADS_MAX];
  char patch[SC_STUDY_PARAMS_MAX];
  ScPatchParams pp;
  int len;

  if (p == NULL || p->component < SC_PATH_QUERIES || p->component > SC_PATH_VALUES
      || sc_study_heads_parse (p->senders, layer, head, senders) < 1)
    return -1;
  /* activation patching's text with its "what" replaced by the senders and component */
  pp = p->patch;
  pp.what = SC_PATCH_QUERIES + p->component;
  len = sc_patch_params_json (run_id, &pp, patch, sizeof patch);
  if (len < 0 || (len = (int) (strstr (patch, ",\"what\":") - patch)) < 0)
    return -1;
  patch[len] = '\0';
  /* the version is activation patching's: ours replaces it */
  if (strncmp (patch, "{\"study\":", 9) != 0)
    return -1;
  len = snprintf (buf, size, "{\"study\":%d%s,\"senders\":\"%s\",\"component\":\"%s\"}",
                  SC_PATH_PATCH_VERSION, strchr (patch, ','), senders,
                  sc_path_component_names[p->component]);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

static int
path_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                  char *buf, size_t size, ScError *err)
{
  const ScPathPatchParams *p = params;
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT], n, last;
  int len;

  if (p->patch.corrupted_run < 1)
    {
      sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: name the corrupted run (--corrupted "
                    "RUN)", kind->name);
      return -1;
    }
  if (p->senders[0] == '\0')
    {
      sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: name the sender heads (--senders "
                    "L.H,L.H)", kind->name);
      return -1;
    }
  if (ctx->model != NULL
      && check_senders (p, sc_model_info (ctx->model), layer, head, &n, &last, err) != SC_OK)
    return -1;
  if (p->patch.target >= 0 && p->patch.contrast == p->patch.target)
    {
      sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the contrast is the target (%d)",
                    kind->name, p->patch.target);
      return -1;
    }
  if ((len = sc_path_patch_params_json (ctx->run_id, p, buf, size)) < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
path_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
          ScError *err)
{
  ScPathPatchResult *r = NULL;
  ScStatus st;

  if (ctx->n_tokens2 != ctx->n_tokens)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: run %lld has %d tokens and the "
                         "corrupted run %lld has %d; patching needs the same length",
                         kind->name, (long long) ctx->run_id, ctx->n_tokens,
                         (long long) ctx->run2_id, ctx->n_tokens2);
  st = sc_path_patch_run (ctx->session, ctx->model, ctx->ids, ctx->ids2, ctx->n_tokens, params,
                          ctx->progress, ctx->progress_user, &r, err);
  *out = r;
  return st;
}

static ScStatus
path_store (ScStore *store, const ScStoreModel *model, const char *params_json,
            const void *result, int64_t *study_id, ScError *err)
{
  const ScPathPatchResult *r = result;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "path patching: no result to store");
  return sc_patch_store_kind (store, SC_PATH_PATCH_KIND, model, params_json, r->grid, study_id,
                              err);
}

static ScStatus
path_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
           const char *params_json, const void *params, void **out, int64_t *study_id,
           ScError *err)
{
  const ScPathPatchParams *p = params;
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT], n, last;
  ScPatchParams pp = p->patch;
  ScPathPatchResult *r;
  ScStatus st;

  *out = NULL;
  if ((st = check_senders (p, info, layer, head, &n, &last, err)) != SC_OK)
    return st;
  if ((r = calloc (1, sizeof *r)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "path patching: out of memory");
  pp.what = SC_PATCH_QUERIES + p->component;
  if ((st = sc_patch_load_kind (SC_PATH_PATCH_KIND, false, store, info, sha256, params_json,
                                &pp, &r->grid, study_id, err)) != SC_OK)
    {
      free (r);
      return st;
    }
  r->component = p->component;
  r->receivers_from_layer = last + 1;
  sc_study_heads_parse (p->senders, layer, head, r->senders);
  *out = r;
  return SC_OK;
}

static int
path_n_tokens (const void *result)
{
  return ((const ScPathPatchResult *) result)->grid->n_tokens;
}

static void
path_clean (const void *result, ScStudyClean *out)
{
  const ScPatchResult *g = ((const ScPathPatchResult *) result)->grid;

  out->target = g->target;
  out->top1_clean = g->top1_clean;
  out->logp_clean = g->logp_clean;
  out->loss_clean = g->loss_clean;
}

static void
path_free (void *result)
{
  sc_path_patch_result_free (result);
}

static const ScPathPatchParams PATH_DEFAULT = {
  .patch = { .corrupted_run = 0, .target = -1, .contrast = -1, .direction = SC_PATCH_DENOISE,
             .what = SC_PATCH_KEYS },
  .component = SC_PATH_KEYS,
  .senders = "",
};

static const ScStudyOption PATH_OPTIONS[] = {
  { "corrupted", SC_STUDY_OPTION_RUN, offsetof (ScPathPatchParams, patch.corrupted_run), 0, 0,
    NULL, "the corrupted run: a stored run of the same model and token count (required)" },
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScPathPatchParams, patch.target), 0, 0, NULL,
    "token A of the metric logit(A) − logit(B) (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScPathPatchParams, patch.contrast), 0, 0,
    NULL, "token B (default: the corrupted top-1; none when that is A: the metric is ln p(A))" },
  { "direction", SC_STUDY_OPTION_CHOICE, offsetof (ScPathPatchParams, patch.direction), 0, 0,
    sc_patch_direction_names,
    "denoise: the senders' clean outputs into the corrupted run; noise: corrupted into clean" },
  { "senders", SC_STUDY_OPTION_HEADS, offsetof (ScPathPatchParams, senders), 0, 0, NULL,
    "the sender heads, LAYER.HEAD separated by commas (e.g. 17.4,20.0; required)" },
  { "component", SC_STUDY_OPTION_CHOICE, offsetof (ScPathPatchParams, component), 0, 0,
    sc_path_component_names,
    "the receivers' input the path ends in: queries, keys (default) or values" },
  { NULL },
};

const ScStudyKind sc_study_kind_path_patch = {
  .id = SC_PATH_PATCH_KIND,
  .name = "path-patch",
  .title = "Path patching (sender heads into receivers' queries, keys or values)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_RUN_PAIR | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 2,
  .params_size = sizeof (ScPathPatchParams),
  .params_default = &PATH_DEFAULT,
  .options = PATH_OPTIONS,
  .params_json = path_params_json,
  .run = path_run,
  .store = path_store,
  .load = path_load,
  .result_n_tokens = path_n_tokens,
  .result_clean = path_clean,
  .result_free = path_free,
};
