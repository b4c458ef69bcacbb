/* saccade-model-compare.h — two models side by side, as both faces show them: `saccade
 * compare --model A --model B TEXT` and the Compare page's "Two models" view call
 * saccade_model_compare_compute(); neither computes anything itself.
 *
 * For each model (loaded from its file here, so the two sides never share a session):
 *   - the text, tokenized by the model's own tokenizer (special-token text parsed, as
 *     `saccade capture` does) and run once with an observer that computes every head's
 *     statistics (engine/analysis/sc-head-stats.h); the run is not stored (a forward pass
 *     of a sentence takes a fraction of a second);
 *   - the induction detector's scores (saccade-induction.h: a sequence of the model's own
 *     ordinary tokens, repeated; reused from the store when this model file was studied
 *     with the same parameters, else computed and stored);
 *   - every head's type (engine/analysis/sc-head-types.h) and the count of each type;
 *   - the zero-ablation head sweep of a stored run of this model file with exactly this
 *     text, when one is stored (read only: never computed here; `saccade ablate RUN
 *     --heads` makes one).
 * When the two tokenizations are the same ids, also the distance between every head of A
 * and every head of B (sc_head_distance_matrix: mean Jensen–Shannon divergence over the
 * rows) and each A head's nearest B head; when they differ there is no matrix (a head of A
 * and a head of B do not look at the same positions) and only statistics are compared.
 * Heads are compared across models of different depths by relative depth layer / n_layers.
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-job.h"

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-induction.h"
#include "engine/analysis/sc-head-types.h"

G_BEGIN_DECLS

/* The longest text whose heads are kept for the cross-model matrix: both models' heads in
 * float, 2 x 270 x 256^2 x 4 bytes = 140 MB for SmolLM2 twice; past it the statistics
 * are compared and the matrix is left out (the result says so). */
#define SACCADE_MODEL_COMPARE_MATRIX_MAX_TOKENS 256

typedef struct {
  char *path;                   /* the model file, as given */
  char *name;                   /* general.name, or the file's base name */
  char sha256[65];              /* of the file (hex) */
  int n_layers, n_heads, n_kv_heads;
  int n_tokens;
  int32_t *ids;                 /* (n_tokens) */
  char **labels;                /* (n_tokens) display labels, NULL-terminated */
  ScHeadStats *stats;           /* (n_layers * n_heads), layer-major */
  SaccadeInduction *induction;  /* the detector's result for this model */
  unsigned *flags;              /* (n_layers * n_heads) sc_head_type_flags() */
  ScHeadType *types;            /* (n_layers * n_heads) */
  int counts[SC_HEAD_N_TYPES];  /* heads of each type */
  SaccadeAblation *ablation;    /* a stored head sweep of this text, or NULL */
  char *induction_warning;      /* why the induction study was not stored, or NULL */
} SaccadeModelSide;

typedef struct {
  SaccadeModelSide side[2];
  ScHeadTypeThresholds thresholds;
  gboolean same_tokens;         /* the two models gave the same ids */
  gboolean matrix_too_long;     /* same tokens, but more than the MATRIX_MAX_TOKENS */
  double *cross;                /* (nA, nB): distance of A head i and B head j (nats);
                                 * NULL without the matrix */
  int *nearest;                 /* (nA): the B head nearest each A head; NULL likewise */
  double seconds;               /* computing time */
} SaccadeModelCompare;

void saccade_model_compare_free (SaccadeModelCompare *c); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeModelCompare, saccade_model_compare_free)


/* Compares the models at @path_a and @path_b (the same file twice is allowed and gives two
 * identical sides) on the @len bytes of @text (@len < 0: NUL-terminated), with @induction
 * (NULL: the detector's defaults, T shortened for a model whose context is shorter than
 * BOS + 2T, to T = (n_ctx - 1) / 2; given parameters are used as given) and @threads CPU
 * threads (<= 0: all cores) on the backend named @backend (saccade_backend_new(); NULL:
 * auto). @db_path is
 * the capture store the induction studies are read from and stored in, and the ablation
 * studies read from (NULL: none; the detector then always computes). Runs on the calling
 * thread (a worker, for the window): seconds, most of it the two detectors when they are
 * not stored. Errors: SACCADE_ERROR SC_ERR_INVALID_ARG for an empty text or one that
 * tokenizes to nothing; a model that fails to load, or a text longer than its context,
 * with the engine's message after "model A (PATH): "; G_IO_ERROR_CANCELLED when
 * @cancellable fires. */
SaccadeModelCompare *saccade_model_compare_compute (const char *path_a, const char *path_b,
                                                    const char *text, gssize len,
                                                    const char *db_path,
                                                    const ScInductionParams *induction,
                                                    int threads, const char *backend,
                                                    SaccadeProgress progress,
                                                    gpointer user_data,
                                                    GCancellable *cancellable, GError **error);

/* The relative depth of @layer in @side: layer / n_layers, in [0, 1). */
double saccade_model_side_depth (const SaccadeModelSide *side, int layer);

/* The heads of @side whose type is @type, strongest first (sc_head_type_score in the
 * direction of sc_head_type_larger_is_stronger; ties by index); *@n receives how many.
 * Caller frees (NULL when there are none). */
int *saccade_model_side_heads_of_type (const SaccadeModelSide *side, ScHeadType type, int *n);

/* How many equal-width bins of relative depth the ablation profile uses (tenths). */
#define SACCADE_MODEL_COMPARE_DEPTH_BINS 10

/* The mean over @side's heads in each depth bin [b/10, (b+1)/10) of the stored ablation's
 * total variation (TV of the next-token distribution): @out (DEPTH_BINS), NaN for a bin
 * with no head; FALSE (and @out untouched) when @side has no stored ablation. */
gboolean saccade_model_side_ablation_by_depth (const SaccadeModelSide *side, double *out);

/* "Induction", "Previous token", "First token", "Broad", "Local", "Other" — translated. */
const char *saccade_head_type_name (ScHeadType type);

G_END_DECLS
