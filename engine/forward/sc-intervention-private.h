/* sc-intervention-private.h — the forward pass's use of an ScIntervention
 * (sc-intervention.c), for sc-forward.c only: the checks of its fields, whether a layer
 * needs the edit hook, and the hook itself (ScLayerCtx.edit_heads, model/sc-arch.h).
 */
#pragma once

#include <stdbool.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-arch.h"

/* What sc_intervention_edit_heads() reads besides the layer context (ScLayerCtx.edit_user). */
typedef struct {
  const ScIntervention *iv;
} EditCtx;

/* Every field of @iv against the model and the call's @n tokens; the message names the
 * field and the value (SC_ERR_INVALID_ARG). NULL is SC_OK. */
ScStatus sc_intervention_check (const ScIntervention *iv, const ScModelInfo *in, int n,
                                ScError *err);

/* Does layer @l need the edit hook (an edit, a mean or a patch of one of its @H heads)? */
bool sc_intervention_layer_edited (const ScIntervention *iv, int l, int H);

/* The ScLayerCtx hook (sc-arch.h): applies @c->edit_user's intervention to the layer's
 * chosen heads, their P and o rows (sc-intervention.c says how). */
ScStatus sc_intervention_edit_heads (const ScLayerCtx *c, bool causal, int window,
                                     ScError *err);
