/* sc-erasure-study.c — erasure curves (sc-erasure-study.h has the definitions): orders the
 * erasable tokens by the clean run's last-layer attention, by leave-one-out TV
 * (sc_token_loo_run) and at random, then erases them cumulatively in each order (masking
 * or dropping), reading p(target), TV and the top-1 after every step; stores the curves and
 * reads them back checked. The measures themselves come from engine/analysis/sc-effect.c. */
#include "study/sc-erasure-study.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sc-random.h"
#include "study/sc-permutation-study.h"

const char *
sc_erase_ordering_name (ScEraseOrdering o)
{
  switch (o)
    {
    case SC_ERASE_ORDER_ATTENTION: return "attention";
    case SC_ERASE_ORDER_LOO: return "leave-one-out";
    case SC_ERASE_ORDER_RANDOM: return "random";
    case SC_ERASE_ORDER_GRADIENT: return "gradient";
    default: return "?";
    }
}

ScErasureResult *
sc_erasure_result_new (int n, int R)
{
  ScErasureResult *r;
  int c, k;

  if (n < 2 || R < 0 || R > SC_ERASURE_MAX_SEEDS || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_tokens = n;
  r->n_random = R;
  r->target = r->top1_clean = -1;
  r->logp_clean = NAN;
  r->n_curves = 2 + R;
  if ((r->curves = calloc ((size_t) r->n_curves, sizeof *r->curves)) == NULL)
    {
      free (r);
      return NULL;
    }
  for (c = 0; c < r->n_curves; c++)
    {
      ScErasureCurve *cv = &r->curves[c];
      cv->ordering = c == 0 ? SC_ERASE_ORDER_ATTENTION : c == 1 ? SC_ERASE_ORDER_LOO
                                                                : SC_ERASE_ORDER_RANDOM;
      cv->seed_index = c >= 2 ? c - 2 : -1;
      cv->order = malloc ((size_t) (n - 1) * sizeof *cv->order);
      cv->p_target = malloc ((size_t) n * sizeof *cv->p_target);
      cv->tv = malloc ((size_t) n * sizeof *cv->tv);
      cv->top1 = malloc ((size_t) n * sizeof *cv->top1);
      if (cv->order == NULL || cv->p_target == NULL || cv->tv == NULL || cv->top1 == NULL)
        {
          sc_erasure_result_free (r);
          return NULL;
        }
      for (k = 0; k < n; k++)
        {
          if (k < n - 1)
            cv->order[k] = -1;
          cv->p_target[k] = cv->tv[k] = NAN;
          cv->top1[k] = -1;
        }
      cv->flip_k = -1;
      cv->fraction = NAN;
      cv->never_flips = false;
    }
  return r;
}

void
sc_erasure_result_free (ScErasureResult *r)
{
  int c;

  if (r == NULL)
    return;
  for (c = 0; c < r->n_curves && r->curves != NULL; c++)
    {
      free (r->curves[c].order);
      free (r->curves[c].p_target);
      free (r->curves[c].tv);
      free (r->curves[c].top1);
    }
  free (r->curves);
  free (r);
}

void
sc_erasure_curve_find_flip (ScErasureCurve *cv, int n, int top1_clean)
{
  int k;

  cv->flip_k = -1;
  for (k = 1; k < n && cv->flip_k < 0; k++)
    if (cv->top1[k] != top1_clean)
      cv->flip_k = k;
  cv->never_flips = cv->flip_k < 0;
  cv->fraction = cv->never_flips ? NAN : (double) cv->flip_k / (n - 1);
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

double
sc_erasure_random_median (const ScErasureResult *r, bool *never)
{
  double *v, h, med;
  int R, i, c;

  *never = false;
  if (r == NULL || (R = r->n_random) < 1 || (v = malloc ((size_t) R * sizeof *v)) == NULL)
    return NAN;
  for (c = 0; c < R; c++)
    v[c] = r->curves[2 + c].never_flips ? INFINITY : r->curves[2 + c].fraction;
  qsort (v, (size_t) R, sizeof *v, cmp_double);
  h = (R - 1) * 0.5;
  i = (int) h;
  med = h == i ? v[i] : isinf (v[i + 1]) ? INFINITY : sc_quantile_sorted (v, R, 0.5);
  free (v);
  if (isinf (med))
    {
      *never = true;
      return NAN;
    }
  return med;
}

/* ------------------------------------------------------------------------------------ */
/* Orderings                                                                             */

/* @order (m) = 0 .. m − 1 by @score descending, ties by position (a stable insertion sort:
 * m is a sentence's length). A NaN score sorts last. */
static void
order_by_score (const double *score, int m, int *order)
{
  int i, j;

  for (i = 0; i < m; i++)
    {
      const int x = order[i] = i;
      const double sx = isnan (score[x]) ? -INFINITY : score[x];
      for (j = i; j > 0; j--)
        {
          const int y = order[j - 1];
          const double sy = isnan (score[y]) ? -INFINITY : score[y];
          if (!(sx > sy))
            break;
          order[j] = y;
        }
      order[j] = x;
    }
}

/* The random ordering of seed index @r (header). */
static void
order_random (uint64_t seed, int r, int m, int *order)
{
  uint64_t st = sc_permutation_seed (seed, r);
  int t;

  for (t = 0; t < m; t++)
    order[t] = t;
  for (t = m - 1; t > 0; t--)
    {
      const int j = (int) (sc_splitmix64 (&st) % (uint64_t) (t + 1));
      const int tmp = order[t];
      order[t] = order[j];
      order[j] = tmp;
    }
}

/* Sums the last query row of the last layer's heads. */
typedef struct {
  int last_layer;
  double *sum; /* (n) */
} LastRow;

static bool
last_row_wants (void *user, int layer, int head)
{
  (void) head;
  return layer == ((LastRow *) user)->last_layer;
}

static bool
last_row_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  LastRow *lr = user;
  const float *row = probs + (size_t) (n_q - 1) * n_k;
  int j;

  (void) layer;
  (void) head;
  for (j = 0; j < n_k; j++)
    lr->sum[j] += row[j];
  return true;
}

/* Maps the leave-one-out study's progress into the first part of ours. */
typedef struct {
  ScAblationProgressFn fn;
  void *user;
  double scale;
} SubProgress;

static bool
sub_progress (void *user, double fraction)
{
  const SubProgress *s = user;

  return s->fn == NULL || s->fn (s->user, fraction * s->scale);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

ScStatus
sc_erasure_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                const ScErasureParams *p, ScAblationProgressFn progress, void *progress_user,
                ScErasureResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScErasureResult *r = NULL;
  ScTokenLooResult *loo = NULL;
  float *clean = NULL, *abl = NULL;
  double *score = NULL;
  uint8_t *mask = NULL;
  int32_t *dids = NULL;
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { 0 };
  ScObserver obs = { last_row_wants, last_row_observe, NULL, NULL };
  LastRow lr;
  SubProgress sub;
  int V, H, c, k, j, m, done = 0, total;
  ScStatus st;

  if (session == NULL || model == NULL || ids == NULL || p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: NULL argument");
  info = sc_model_info (model);
  V = (int) info->n_vocab;
  H = (int) info->n_heads;
  if (p->gradient)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "erasure: ordering by gradient importance "
                         "needs the backward pass of issue 12 (gradient attributions), which "
                         "is not implemented yet; use the attention, leave-one-out or random "
                         "orderings");
  if (n < 2)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: %d token%s given, at least 2 "
                         "needed (the last token is the query and is never erased)", n,
                         n == 1 ? "" : "s");
  for (k = 0; k < n; k++)
    if (ids[k] < 0 || ids[k] >= V)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: token %d has id %d, outside the "
                           "vocabulary of %d", k, ids[k], V);
  if (p->target < -1 || p->target >= V)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: target %d is outside the "
                         "vocabulary 0..%d", p->target, V - 1);
  if (p->kind != SC_ERASE_MASK && p->kind != SC_ERASE_DROP)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: unknown kind %d", (int) p->kind);
  if (p->n_random < 0 || p->n_random > SC_ERASURE_MAX_SEEDS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: %d random orderings asked, 0 to "
                         "%d allowed", p->n_random, SC_ERASURE_MAX_SEEDS);

  m = n - 1;
  r = sc_erasure_result_new (n, p->n_random);
  clean = malloc ((size_t) V * sizeof *clean);
  abl = malloc ((size_t) V * sizeof *abl);
  score = calloc ((size_t) n, sizeof *score);
  mask = calloc ((size_t) n, 1);
  dids = malloc ((size_t) n * sizeof *dids);
  if (r == NULL || clean == NULL || abl == NULL || score == NULL || mask == NULL
      || dids == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "erasure: out of memory for %d tokens", n);
      goto fail;
    }
  r->kind = p->kind;
  r->seed = p->seed;
  /* Runs: leave-one-out 2m, the clean run 1, each curve m. */
  total = 2 * m + 1 + r->n_curves * m;

  /* 1. Leave-one-out importance (its own clean run). */
  {
    const ScAblationParams lp = { .target = p->target, .contrast = -1 };
    sub = (SubProgress) { progress, progress_user, (double) (2 * m) / total };
    if ((st = sc_token_loo_run (session, model, ids, n, &lp, progress != NULL ? sub_progress
                                                                             : NULL,
                                &sub, &loo, err)) != SC_OK)
      goto fail;
    done = 2 * m;
  }

  /* 2. The clean run, observing the last layer's attention. */
  lr = (LastRow) { (int) info->n_layers - 1, score };
  obs.user = &lr;
  opt.observer = &obs;
  if ((st = sc_forward (session, ids, n, &opt, clean, err)) != SC_OK)
    goto fail;
  opt.observer = NULL;
  r->top1_clean = sc_logits_top1 (clean, V);
  r->target = p->target >= 0 ? p->target : r->top1_clean;
  if ((st = sc_log_softmax_at (clean, V, r->target, &r->logp_clean, err)) != SC_OK)
    goto fail;
  if (++done, progress != NULL && !progress (progress_user, (double) done / total))
    goto cancelled;

  /* 3. The orderings. */
  for (j = 0; j < m; j++)
    score[j] /= H;
  order_by_score (score, m, r->curves[0].order);
  for (j = 0; j < m; j++)
    score[j] = loo->mask[j].next.tv;
  order_by_score (score, m, r->curves[1].order);
  for (c = 2; c < r->n_curves; c++)
    order_random (p->seed, c - 2, m, r->curves[c].order);

  /* 4. Each curve: erase o_1 .. o_k, k = 1 .. m. */
  iv.token_mask = mask;
  for (c = 0; c < r->n_curves; c++)
    {
      ScErasureCurve *cv = &r->curves[c];
      cv->p_target[0] = exp (r->logp_clean);
      cv->tv[0] = 0.0;
      cv->top1[0] = r->top1_clean;
      memset (mask, 0, (size_t) n);
      for (k = 1; k <= m; k++)
        {
          ScEffect e;
          mask[cv->order[k - 1]] = 1;
          if (p->kind == SC_ERASE_MASK)
            {
              opt.intervention = &iv;
              st = sc_forward (session, ids, n, &opt, abl, err);
            }
          else
            {
              int kept = 0;
              for (j = 0; j < n; j++)
                if (!mask[j])
                  dids[kept++] = ids[j];
              opt.intervention = NULL;
              st = sc_forward (session, dids, kept, &opt, abl, err);
            }
          if (st != SC_OK
              || (st = sc_effect_next_token (clean, abl, V, r->target, &e, err)) != SC_OK)
            goto fail;
          cv->p_target[k] = exp (e.logp_ablated);
          cv->tv[k] = e.tv;
          cv->top1[k] = e.top1_ablated;
          if (++done, progress != NULL && !progress (progress_user, (double) done / total))
            goto cancelled;
        }
      sc_erasure_curve_find_flip (cv, n, r->top1_clean);
    }
  sc_token_loo_result_free (loo);
  free (clean);
  free (abl);
  free (score);
  free (mask);
  free (dids);
  *out = r;
  return SC_OK;

cancelled:
  st = sc_error_set (err, SC_ERR_CANCELLED, "erasure: cancelled after %d of %d runs", done,
                     total);
fail:
  sc_token_loo_result_free (loo);
  free (clean);
  free (abl);
  free (score);
  free (mask);
  free (dids);
  sc_erasure_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_erasure_params_json (int64_t run_id, const ScErasureParams *p, char *buf, size_t size)
{
  char target[16];
  int len;

  if (p == NULL || buf == NULL)
    return -1;
  if (p->target >= 0)
    snprintf (target, sizeof target, "%d", p->target);
  else
    strcpy (target, "null");
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%s,\"kind\":\"%s\","
                  "\"seeds\":%d,\"seed\":%" PRIu64 "}", SC_ERASURE_STUDY_VERSION,
                  (long long) run_id, target, p->kind == SC_ERASE_DROP ? "drop" : "mask",
                  p->n_random, p->seed);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

static const char *
class_name (int c)
{
  return c == 0 ? "attention" : c == 1 ? "loo" : "random";
}

ScStatus
sc_erasure_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                  const ScErasureResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;
  int c, k, n;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: no result to store");
  n = r->n_tokens;
  if ((int64_t) (r->n_random > 0 ? r->n_random : 1) * n >= (int64_t) SC_STORE_MAX_TOKENS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: %d random orderings of %d tokens "
                         "do not fit a stored series", r->n_random, n);
  if ((st = sc_store_study_begin (store, SC_ERASURE_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *cv = &r->curves[c];
      const int ri = c >= 2 ? c - 2 : 0;
      char name[SC_STORE_STUDY_NAME_MAX];
      for (k = 0; k < n; k++)
        {
          const double v[3] = { cv->p_target[k], cv->tv[k], cv->top1[k] };
          static const char *const SUFFIX[3] = { "p", "tv", "top1" };
          int f;
          if (k < n - 1)
            {
              snprintf (name, sizeof name, "%s.order", class_name (c));
              if ((st = sc_store_study_add_series (s, name, ri * (n - 1) + k, cv->order[k],
                                                   err)) != SC_OK)
                goto fail;
            }
          for (f = 0; f < 3; f++)
            {
              snprintf (name, sizeof name, "%s.%s", class_name (c), SUFFIX[f]);
              if ((st = sc_store_study_add_series (s, name, ri * n + k, v[f], err)) != SC_OK)
                goto fail;
            }
        }
    }
  {
    const double cl[5] = { r->target, r->logp_clean, r->top1_clean, NAN, n };
    for (k = 0; k < 5; k++)
      if ((st = sc_store_study_add_series (s, "clean", k, cl[k], err)) != SC_OK)
        goto fail;
  }
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_erasure_load (ScStore *store, const ScModelInfo *info,
                 const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                 ScErasureResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScErasureResult *r = NULL;
  double cl[5] = { NAN, NAN, NAN, NAN, NAN };
  uint64_t R = 0, seed = 0;
  uint8_t *seen = NULL;
  int64_t id = 0;
  int n, c, k;
  size_t j;
  ScStatus st;
  const char *why = "";

  if (params_json == NULL || !sc_study_params_uint (params_json, "seeds", &R)
      || !sc_study_params_uint (params_json, "seed", &seed) || R > SC_ERASURE_MAX_SEEDS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "erasure: params without valid seeds and "
                         "seed: %s", params_json != NULL ? params_json : "(null)");
  if ((st = sc_study_find_and_read (store, SC_ERASURE_KIND, sha256, params_json, &d, &id,
                                    err)) != SC_OK)
    return st;
#define BAD(text)                                                                        \
  do                                                                                     \
    {                                                                                    \
      why = text;                                                                        \
      goto bad;                                                                          \
    }                                                                                    \
  while (0)
  for (j = 0; j < d->n_series_values; j++)
    if (strcmp (d->series[j].series, "clean") == 0 && d->series[j].pos < 5)
      cl[d->series[j].pos] = d->series[j].value;
  if (!(cl[0] >= 0 && cl[0] < info->n_vocab && cl[0] == floor (cl[0]) && cl[2] >= 0
        && cl[2] < info->n_vocab && cl[2] == floor (cl[2]) && cl[4] >= 2
        && cl[4] * (R > 0 ? (double) R : 1.0) < SC_STORE_MAX_TOKENS && cl[4] == floor (cl[4])
        && isfinite (cl[1]) && cl[1] <= 0.0))
    BAD ("its clean run is missing or out of range");
  n = (int) cl[4];
  if ((r = sc_erasure_result_new (n, (int) R)) == NULL
      || (seen = calloc ((size_t) r->n_curves * 4 * n, 1)) == NULL)
    {
      sc_store_study_data_free (d);
      sc_erasure_result_free (r);
      return sc_error_set (err, SC_ERR_NOMEM, "erasure: out of memory reading study %lld",
                           (long long) id);
    }
  r->kind = strstr (params_json, "\"kind\":\"drop\"") != NULL ? SC_ERASE_DROP : SC_ERASE_MASK;
  r->seed = seed;
  r->target = (int) cl[0];
  r->logp_clean = cl[1];
  r->top1_clean = (int) cl[2];

  /* 1. Every value, range-checked, into its curve. */
  for (j = 0; j < d->n_series_values; j++)
    {
      const ScStoreSeriesValue *v = &d->series[j];
      const char *dot = strchr (v->series, '.');
      const double x = v->value;
      size_t len;
      int cls, f, ri, kk;
      ScErasureCurve *cv;
      if (dot == NULL)
        continue;
      len = (size_t) (dot - v->series);
      if (len == 9 && strncmp (v->series, "attention", 9) == 0)
        cls = 0;
      else if (len == 3 && strncmp (v->series, "loo", 3) == 0)
        cls = 1;
      else if (len == 6 && strncmp (v->series, "random", 6) == 0)
        cls = 2;
      else
        continue;
      f = strcmp (dot + 1, "order") == 0 ? 0 : strcmp (dot + 1, "p") == 0 ? 1
          : strcmp (dot + 1, "tv") == 0  ? 2 : strcmp (dot + 1, "top1") == 0 ? 3 : -1;
      if (f < 0)
        continue;
      ri = f == 0 ? v->pos / (n - 1) : v->pos / n;
      kk = f == 0 ? v->pos % (n - 1) : v->pos % n;
      if ((cls < 2 && ri != 0) || (cls == 2 && ri >= (int) R))
        BAD ("a value past its orderings");
      c = cls < 2 ? cls : 2 + ri;
      cv = &r->curves[c];
      seen[((size_t) c * 4 + f) * n + kk] = 1;
      switch (f)
        {
        case 0:
          if (!(x >= 0 && x < n - 1 && x == floor (x)))
            BAD ("an erased position outside the sentence");
          cv->order[kk] = (int) x;
          break;
        case 1:
          if (!(x >= 0.0 && x <= 1.0))
            BAD ("a p(target) outside [0, 1]");
          cv->p_target[kk] = x;
          break;
        case 2:
          if (!(x >= 0.0 && x <= 1.0))
            BAD ("a TV outside [0, 1]");
          cv->tv[kk] = x;
          break;
        default:
          if (!(x >= 0 && x < info->n_vocab && x == floor (x)))
            BAD ("a top-1 outside the vocabulary");
          cv->top1[kk] = (int) x;
          break;
        }
    }
  /* 2. Every curve whole: all values there, an order that is a permutation, k = 0 clean. */
  {
    uint8_t *used = calloc ((size_t) n, 1);
    if (used == NULL)
      BAD ("out of memory");
    for (c = 0; c < r->n_curves; c++)
      {
        ScErasureCurve *cv = &r->curves[c];
        int f;
        for (f = 0; f < 4; f++)
          for (k = 0; k < (f == 0 ? n - 1 : n); k++)
            if (!seen[((size_t) c * 4 + f) * n + k])
              {
                free (used);
                BAD ("a curve with a missing value");
              }
        memset (used, 0, (size_t) n);
        for (k = 0; k < n - 1; k++)
          if (used[cv->order[k]]++)
            {
              free (used);
              BAD ("an order that erases a position twice");
            }
        if (cv->top1[0] != r->top1_clean || cv->tv[0] != 0.0)
          {
            free (used);
            BAD ("a curve that does not start at the clean run");
          }
        sc_erasure_curve_find_flip (cv, n, r->top1_clean);
      }
    free (used);
  }
#undef BAD
  if (study_id != NULL)
    *study_id = id;
  sc_store_study_data_free (d);
  free (seen);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): %s for %s", (long long) id,
                     SC_ERASURE_KIND, why, info->name);
  sc_store_study_data_free (d);
  free (seen);
  sc_erasure_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
erasure_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                     char *buf, size_t size, ScError *err)
{
  const ScErasureParams *p = params;
  int len = -1;

  if (p->n_random < 0 || p->n_random > SC_ERASURE_MAX_SEEDS)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: %d random orderings, outside 0 .. %d",
                  kind->name, p->n_random, SC_ERASURE_MAX_SEEDS);
  else if ((len = sc_erasure_params_json (ctx->run_id, p, buf, size)) < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
erasure_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
             ScError *err)
{
  ScErasureResult *r = NULL;
  ScStatus st = sc_erasure_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params,
                                ctx->progress, ctx->progress_user, &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
erasure_store (ScStore *store, const ScStoreModel *model, const char *params_json,
               const void *result, int64_t *study_id, ScError *err)
{
  return sc_erasure_store (store, model, params_json, result, study_id, err);
}

static ScStatus
erasure_load (ScStore *store, const ScModelInfo *info,
              const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
              const void *params, void **out, int64_t *study_id, ScError *err)
{
  ScErasureResult *r = NULL;
  ScStatus st = sc_erasure_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params;
  *out = r;
  return st;
}

static int
erasure_n_tokens (const void *result)
{
  return ((const ScErasureResult *) result)->n_tokens;
}

static void
erasure_clean (const void *result, ScStudyClean *out)
{
  const ScErasureResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = NAN;
}

static void
erasure_free (void *result)
{
  sc_erasure_result_free (result);
}

/* A CHOICE option writes an int (sc-study.h): the enum fields must be int-sized. */
_Static_assert (sizeof (ScEraseKind) == sizeof (int), "ScEraseKind is not int-sized");
static const char *const ERASE_KINDS[] = { "mask", "drop", NULL };

static const ScStudyOption ERASURE_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScErasureParams, target), 0, 0, NULL,
    "the token whose probability is measured (default: the clean top-1)" },
  { "kind", SC_STUDY_OPTION_CHOICE, offsetof (ScErasureParams, kind), 0, 0, ERASE_KINDS,
    "mask (out of every attention row; the default) or drop (from the input)" },
  { "seeds", SC_STUDY_OPTION_INT, offsetof (ScErasureParams, n_random), 0,
    SC_ERASURE_MAX_SEEDS, NULL, "random orderings (8)" },
  { "seed", SC_STUDY_OPTION_UINT64, offsetof (ScErasureParams, seed), 0, 0, NULL,
    "the base seed of the random orderings (0)" },
  { NULL },
};

/* `saccade ablate RUN --erasure`'s defaults: masking, 8 random orderings, seed 0. */
static const ScErasureParams ERASURE_DEFAULT = { .target = -1, .kind = SC_ERASE_MASK,
                                                 .n_random = 8 };

const ScStudyKind sc_study_kind_erasure = {
  .id = SC_ERASURE_KIND,
  .name = "erasure",
  .title = "Erasure curves",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 2,
  .params_size = sizeof (ScErasureParams),
  .params_default = &ERASURE_DEFAULT,
  .options = ERASURE_OPTIONS,
  .params_json = erasure_params_json,
  .run = erasure_run,
  .store = erasure_store,
  .load = erasure_load,
  .result_n_tokens = erasure_n_tokens,
  .result_clean = erasure_clean,
  .result_free = erasure_free,
};
