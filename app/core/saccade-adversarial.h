/* saccade-adversarial.h — the adversarial attention study of a stored run as both faces use
 * it (`saccade adversarial RUN` and the Attribution page's "Adversarial attention" view).
 *
 * Its get (saccade_adversarial_face) reads run @run_id (refused when it is gone or was
 * captured with another model file), then looks up the latest complete stored study of the
 * run with the same parameters and model file (sc_adv_load), else computes one with
 * sc_adv_run on the caller's session and an ScGrad of its own and stores it (sc_adv_store)
 * — Cancel during the search stores nothing. A study read back has no attention rows (the store keeps the curve
 * only: engine/study/sc-adversarial.h); a computed one has the original and adversarial
 * rows at the largest ε.
 *
 * CSV (RFC 4180, CRLF, 9 significant digits): one row per ε,
 *   epsilon,jsd,jsd_max,tvd
 *
 * Not here: the definition (sc-adversarial.h, docs/metrics.md "Adversarial attention"),
 * drawing (ui/figures/saccade-figure-adversarial.c).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-study.h"
#include "engine/store/sc-store.h"
#include "engine/study/sc-adversarial.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* JSD's ceiling in nats (disjoint support), for texts and the figure's dashed line. */
#define SACCADE_ADVERSARIAL_JSD_MAX G_LN2

typedef struct {
  SaccadeStudyFaceBase base;        /* the run, the study's id, reused, the whole call's
                                     * wall time */
  ScAdvParams params;               /* as searched: epsilons points into @epsilons, the
                                     * iterations and rate resolved to their defaults */
  double epsilons[SC_ADV_MAX_EPSILONS];
  ScAdvResult *result;              /* owned; adversarial/original NULL when reused */
  double search_seconds;            /* of which the search (0 when read back) */
} SaccadeAdversarial;

void saccade_adversarial_free (SaccadeAdversarial *a); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeAdversarial, saccade_adversarial_free)

/* @p: layer 0, every head, the last row, the default ε, iterations and rate, seed 0. */
void saccade_adversarial_params_init (ScAdvParams *p);

/* The face of the study (saccade-study.h), run in a worker with saccade_study_face_async()
 * (a STORED_ONLY lookup takes no lock; the params' epsilons must then outlive the job: NULL,
 * the defaults, as the window passes them). Its get: @data a SaccadeStudyGetData of an
 * ScAdvParams (its epsilons copied; NULL params: the defaults) and the run; @flags:
 * STORED_ONLY reads back only (no session needed; G_IO_ERROR_NOT_FOUND when none is
 * stored), RECOMPUTE searches even when one is stored. Returns a SaccadeAdversarial, or
 * NULL with @error: G_IO_ERROR_INVALID_ARGUMENT (no database, a run of another model file,
 * a layer, head, row or ε out of range, named with the run's sizes), G_IO_ERROR_NOT_FOUND
 * (no such run), G_IO_ERROR_CANCELLED (nothing stored), SACCADE_ERROR with the engine's
 * message. A failure to store is put in *@store_warning and the result still returned. Any
 * thread. */
extern const SaccadeStudyFace saccade_adversarial_face;

/* The texts, CSV and figure of a result (app/core/studies/saccade-adversarial-outputs.c,
 * with the verb's JSON and text: saccade_adversarial_outputs). */

/* The distribution of the rows whose JSD from the original is the largest (0 .. n_dists − 1)
 * with its head and query row, or −1 when the result has no rows (read back). */
int saccade_adversarial_widest (const SaccadeAdversarial *a, int *head, int *row, double *jsd);

/* The CSV above. */
GBytes *saccade_adversarial_csv (const SaccadeAdversarial *a);

/* The figure of both faces: the curve of @a as series @series (labelled @label, borrowed),
 * and, when @a has rows, the widest distribution's original and adversarial rows as
 * @original / @adversarial ((n_tokens) each, caller-allocated) over @labels. @fig borrows
 * them and @title. One study: n_series = 1 with @series the caller's. */
void saccade_adversarial_figure (const SaccadeAdversarial *a, const char *label,
                                 const char *const *labels, const char *title,
                                 SaccadeAdvSeries *series, double *original,
                                 double *adversarial, SaccadeAdversarialFigure *fig);

/* A series label: "layer 29 head 3" / "layer 29 all heads" (translated when @translated).
 * Caller frees. */
char *saccade_adversarial_label (const SaccadeAdversarial *a, gboolean translated);

/* The figure's title: "Adversarial attention · run 7 · layer 29 head 3 · row last · 100
 * iterations". Caller frees. */
char *saccade_adversarial_title (const SaccadeAdversarial *a);

/* The reading of the largest ε's JSD against its ceiling ln 2 ("JSD 0.41 of ln 2 = 0.693
 * (disjoint support): the attention moved a lot while the output stayed within TVD 0.1"),
 * in English when not @translated (the CLI's), else in the interface's language. Caller
 * frees. */
char *saccade_adversarial_reading (const SaccadeAdversarial *a, gboolean translated);

G_END_DECLS
