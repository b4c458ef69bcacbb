/* sc-head-types.h — what kind of head a head is: the head types that `saccade compare
 * --model A --model B` and the Compare page's "Two models" view count in each model, so a
 * user can ask whether a type of head appears in both.
 *
 * A head's type is read from numbers Saccade already computes: its statistics on a text
 * (sc-head-stats.h) and, when given, its induction scores on the detector's repeated
 * random sequence (sc-induction.h). Each type has one criterion on one number (the
 * thresholds and why they are where they are: docs/metrics.md, "Head types"):
 *   induction       prefix_matching >= t.induction            (repeated sequence)
 *   previous-token  previous        >= t.previous             (text)
 *   first-token     sink            >= t.sink                 (text: the "attention sink")
 *   broad           entropy_norm    >= t.broad                (text)
 *   local           distance        <= t.local_distance       (text, in tokens)
 * A head may meet several criteria (sc_head_type_flags() says which); its type is the
 * first it meets in the order above — the most specific first: an induction head, measured
 * on a sequence made for it, may park its attention on the first token of an ordinary
 * text; a previous-token head is also local; "broad" is tested before "local" so that a
 * near-uniform head on a short text (mean distance (n - 1) / 4) is not called local — and
 * SC_HEAD_TYPE_OTHER when it meets none. A NaN statistic meets no criterion; without
 * induction scores no head is of type induction.
 *
 * Pure functions, no allocation, any thread.
 */
#pragma once

#include <stdbool.h>

#include "analysis/sc-head-stats.h"
#include "analysis/sc-induction.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In precedence order; the ids are those of sc_head_type_id(). */
typedef enum {
  SC_HEAD_TYPE_INDUCTION,
  SC_HEAD_TYPE_PREVIOUS,
  SC_HEAD_TYPE_SINK,
  SC_HEAD_TYPE_BROAD,
  SC_HEAD_TYPE_LOCAL,
  SC_HEAD_TYPE_OTHER,
  SC_HEAD_N_TYPES
} ScHeadType;

typedef struct {
  double induction;      /* prefix-matching score on the repeated sequence */
  double previous;       /* previous-token score on the text */
  double sink;           /* first-token (sink) mass on the text */
  double broad;          /* normalised entropy on the text */
  double local_distance; /* mean attention distance on the text, tokens */
} ScHeadTypeThresholds;

/* The defaults (docs/metrics.md gives each one's reason). */
#define SC_HEAD_TYPE_DEFAULT_INDUCTION 0.3
#define SC_HEAD_TYPE_DEFAULT_PREVIOUS 0.5
#define SC_HEAD_TYPE_DEFAULT_SINK 0.5
#define SC_HEAD_TYPE_DEFAULT_BROAD 0.8
#define SC_HEAD_TYPE_DEFAULT_LOCAL_DISTANCE 2.0

/* Fills @t with the defaults above. */
void sc_head_type_thresholds_default (ScHeadTypeThresholds *t);

/* Bit (1u << type) for every type whose criterion head (@stats, @induction) meets under
 * @t (NULL: the defaults); never the OTHER bit. @induction may be NULL (no induction
 * scores: the INDUCTION bit is never set). @stats must not be NULL. */
unsigned sc_head_type_flags (const ScHeadStats *stats, const ScInductionScores *induction,
                             const ScHeadTypeThresholds *t);

/* The head's type: the first type of the precedence order whose bit @flags has, else
 * SC_HEAD_TYPE_OTHER. */
ScHeadType sc_head_type_from_flags (unsigned flags);

/* sc_head_type_from_flags (sc_head_type_flags (...)). */
ScHeadType sc_head_type_classify (const ScHeadStats *stats, const ScInductionScores *induction,
                                  const ScHeadTypeThresholds *t);

/* The number @type's criterion reads (prefix matching, previous, sink, entropy_norm,
 * distance; NaN for OTHER, and for INDUCTION without @induction): what ranks the heads of
 * a type, strongest first in the direction of sc_head_type_larger_is_stronger(). */
double sc_head_type_score (ScHeadType type, const ScHeadStats *stats,
                           const ScInductionScores *induction);

/* false for LOCAL (a shorter distance is more local), true otherwise. */
bool sc_head_type_larger_is_stronger (ScHeadType type);

/* "induction", "previous-token", "first-token", "broad", "local", "other"; NULL out of
 * range. The names in JSON and on the page's legend. */
const char *sc_head_type_id (ScHeadType type);

/* The type named @id; false when there is none. */
bool sc_head_type_from_id (const char *id, ScHeadType *out);

#ifdef __cplusplus
}
#endif
