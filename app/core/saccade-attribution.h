/* saccade-attribution.h — gradient attributions of a stored run as both faces use them
 * (`saccade attribute RUN` and the window's Attribution page), with the two per-token
 * importances a reader sets them against.
 *
 * Its get (saccade_attribution_face) reads run @run_id (refused, as the other studies
 * refuse it, when it is gone or was captured with another model file), then
 *   1. the attribution study (engine/study/sc-attribution.h): the latest complete stored
 *      study of the run with the same parameters and model file (sc_attr_load), else one
 *      computed now with sc_attr_run on the caller's session and an ScGrad of its own, and
 *      stored (sc_attr_store) in one transaction — Cancel during it stores nothing (a
 *      Cancel during step 2 finds the attribution complete and already stored);
 *   2. leave-one-out: the token leave-one-out study of saccade-ablation.h (kind TOKENS,
 *      the one `saccade ablate RUN --tokens` stores: read back, else computed and stored),
 *      of which this shows the total variation of the next-token distribution when the
 *      token is masked (docs/metrics.md, "Ablation studies"). It measures the last
 *      position, so it is NaN everywhere when @params asks for another position, and NaN
 *      for the last token itself (never erased);
 *   3. attention: the query row of the attributed position in each of the last layer's
 *      heads, read from the run's stored heads (two bytes a value, no pass run), averaged
 *      over the heads the run kept (attention_heads says how many; all NaN when none).
 * Progress runs over 1 and 2, split by their estimated cost (below).
 *
 * CSV (RFC 4180, CRLF, 9 significant digits, NaN as "nan"): one row per token,
 *   pos,token_id,label,attention,loo_tv,saliency,gradxinput,ig,grad_rollout
 * (a method not computed: an empty column of "nan").
 *
 * Not here: the definitions (sc-attribution.h, docs/metrics.md "Gradient attributions"),
 * drawing (ui/figures/saccade-figure-attribution.c).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-study.h"
#include "engine/store/sc-store.h"
#include "engine/study/sc-attribution.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* The figure's rows: attention and leave-one-out, then one per method. */
#define SACCADE_ATTRIBUTION_N_ROWS (2 + SC_ATTR_N_METHODS)

typedef struct {
  SaccadeStudyFaceBase base;        /* the run, the attribution's study id, reused (read
                                     * back rather than computed), the whole call's wall
                                     * time */
  ScAttrParams params;              /* as asked (target −1: the clean top-1) */
  ScAttrResult *result;             /* owned; result->target is the target used */
  double *attention;                /* (n_tokens): mean over the last layer's kept heads of
                                     * A[position][j]; NaN without a stored head */
  int attention_heads;              /* heads averaged */
  double *loo;                      /* (n_tokens): TV of the next token, token j masked */
  gboolean loo_reused;              /* the leave-one-out study was read back */
  gint64 loo_study_id;              /* 0 when not stored */
  double attr_seconds, loo_seconds; /* of which the attribution, the leave-one-out (found or
                                     * computed); attention is the rest */
} SaccadeAttribution;

void saccade_attribution_free (SaccadeAttribution *a); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeAttribution, saccade_attribution_free)

/* The face of the study (saccade-study.h), run in a worker with saccade_study_face_async()
 * (a STORED_ONLY lookup takes no lock). Its get: @data a SaccadeStudyGetData of an
 * ScAttrParams (NULL: every default) and the run; @flags: STORED_ONLY reads back only (no
 * session needed: G_IO_ERROR_NOT_FOUND when the attribution is not stored; the
 * leave-one-out is then NaN when it is not stored either), RECOMPUTE computes the
 * attribution even when it is stored (a stored leave-one-out is still reused). Returns a
 * SaccadeAttribution, or NULL with @error: G_IO_ERROR_INVALID_ARGUMENT (no database, a run
 * of another model file, a position or token outside the run or the vocabulary),
 * G_IO_ERROR_NOT_FOUND (no such run), G_IO_ERROR_CANCELLED (nothing of the attribution
 * stored), SACCADE_ERROR with the engine's message. A store that cannot be written is only
 * read; a failure to store is put in *@store_warning and the result still returned. */
extern const SaccadeStudyFace saccade_attribution_face;

/* The default parameters: every method, the clean top-1, the last position, the default
 * steps, Gauss-Legendre, a zero baseline. */
/* baseline_token of the default baseline: the model's end-of-text token, resolved when the
 * study runs (a model without one falls back to zero embeddings). */
#define SACCADE_ATTRIBUTION_BASELINE_EOS (-2)

void saccade_attribution_params_init (ScAttrParams *p);

/* "saliency", "gradient × input", "integrated gradients", "gradient rollout" (translated),
 * for tables and figures; "?" outside the enum. */
const char *saccade_attribution_method_name (ScAttrMethod m);

/* The texts, CSV and figure of a result (app/core/studies/saccade-attribution-outputs.c,
 * with the verb's JSON and text: saccade_attribution_outputs). */

/* The completeness line of integrated gradients, "completeness: sum S, f(x) - f(x') D, gap G
 * (P %)": in English when not @translated (the CLI's form, which scripts and the docs read),
 * else in the interface's language; NULL without ig. Caller frees. */
char *saccade_attribution_completeness (const SaccadeAttribution *a, gboolean translated);

/* The CSV above; @labels: (n_tokens) display strings, or NULL (empty labels). */
GBytes *saccade_attribution_csv (const SaccadeAttribution *a, const char *const *labels);

/* The figure of both faces: the rows attention, leave-one-out and each computed method,
 * filled into @rows (SACCADE_ATTRIBUTION_N_ROWS) for @fig to borrow with @labels and
 * @title; @title (may be NULL) is the caller's. */
void saccade_attribution_figure (const SaccadeAttribution *a, const char *const *labels,
                                 const char *title, SaccadeAttrRow *rows,
                                 SaccadeAttributionFigure *fig);

/* The figure's title: "Gradient attribution · run 7 · target ␣Paris · ig 50 gauss-legendre
 * zero" (its settings); with a contrast "… · logit(“␣Mary”) − logit(“␣John”) (id − id) …".
 * Caller frees. @target_label, @contrast_label may be NULL (the ids are shown). */
char *saccade_attribution_title (const SaccadeAttribution *a, const char *target_label,
                                 const char *contrast_label);

G_END_DECLS
