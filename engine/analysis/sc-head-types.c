/* sc-head-types.c — head types from head statistics and induction scores (see
 * sc-head-types.h; the thresholds' reasons are in docs/metrics.md, "Head types"). */
#include "analysis/sc-head-types.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const type_ids[SC_HEAD_N_TYPES] = {
  [SC_HEAD_TYPE_INDUCTION] = "induction",
  [SC_HEAD_TYPE_PREVIOUS] = "previous-token",
  [SC_HEAD_TYPE_SINK] = "first-token",
  [SC_HEAD_TYPE_BROAD] = "broad",
  [SC_HEAD_TYPE_LOCAL] = "local",
  [SC_HEAD_TYPE_OTHER] = "other",
};

void
sc_head_type_thresholds_default (ScHeadTypeThresholds *t)
{
  t->induction = SC_HEAD_TYPE_DEFAULT_INDUCTION;
  t->previous = SC_HEAD_TYPE_DEFAULT_PREVIOUS;
  t->sink = SC_HEAD_TYPE_DEFAULT_SINK;
  t->broad = SC_HEAD_TYPE_DEFAULT_BROAD;
  t->local_distance = SC_HEAD_TYPE_DEFAULT_LOCAL_DISTANCE;
}

/* A NaN never compares true, so an undefined statistic meets no criterion. */
unsigned
sc_head_type_flags (const ScHeadStats *stats, const ScInductionScores *induction,
                    const ScHeadTypeThresholds *t)
{
  ScHeadTypeThresholds def;
  unsigned f = 0;

  if (t == NULL)
    {
      sc_head_type_thresholds_default (&def);
      t = &def;
    }
  if (induction != NULL && induction->prefix_matching >= t->induction)
    f |= 1u << SC_HEAD_TYPE_INDUCTION;
  if (stats->previous >= t->previous)
    f |= 1u << SC_HEAD_TYPE_PREVIOUS;
  if (stats->sink >= t->sink)
    f |= 1u << SC_HEAD_TYPE_SINK;
  if (stats->entropy_norm >= t->broad)
    f |= 1u << SC_HEAD_TYPE_BROAD;
  if (stats->distance <= t->local_distance)
    f |= 1u << SC_HEAD_TYPE_LOCAL;
  return f;
}

ScHeadType
sc_head_type_from_flags (unsigned flags)
{
  for (int k = 0; k < SC_HEAD_TYPE_OTHER; k++)
    if (flags & (1u << k))
      return (ScHeadType) k;
  return SC_HEAD_TYPE_OTHER;
}

ScHeadType
sc_head_type_classify (const ScHeadStats *stats, const ScInductionScores *induction,
                       const ScHeadTypeThresholds *t)
{
  return sc_head_type_from_flags (sc_head_type_flags (stats, induction, t));
}

double
sc_head_type_score (ScHeadType type, const ScHeadStats *stats,
                    const ScInductionScores *induction)
{
  switch (type)
    {
    case SC_HEAD_TYPE_INDUCTION:
      return induction != NULL ? induction->prefix_matching : NAN;
    case SC_HEAD_TYPE_PREVIOUS:
      return stats->previous;
    case SC_HEAD_TYPE_SINK:
      return stats->sink;
    case SC_HEAD_TYPE_BROAD:
      return stats->entropy_norm;
    case SC_HEAD_TYPE_LOCAL:
      return stats->distance;
    case SC_HEAD_TYPE_OTHER:
    case SC_HEAD_N_TYPES:
    default:
      return NAN;
    }
}

bool
sc_head_type_larger_is_stronger (ScHeadType type)
{
  return type != SC_HEAD_TYPE_LOCAL;
}

const char *
sc_head_type_id (ScHeadType type)
{
  return (int) type >= 0 && type < SC_HEAD_N_TYPES ? type_ids[type] : NULL;
}

bool
sc_head_type_from_id (const char *id, ScHeadType *out)
{
  if (id == NULL)
    return false;
  for (int k = 0; k < SC_HEAD_N_TYPES; k++)
    if (strcmp (id, type_ids[k]) == 0)
      {
        *out = (ScHeadType) k;
        return true;
      }
  return false;
}
