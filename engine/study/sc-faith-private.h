/* sc-faith-private.h — what the faithfulness study's files share and nobody else uses:
 * sc-faithfulness.c (the computation) and sc-faith-store.c (its storage). */
#pragma once

#include "study/sc-faithfulness.h"

/* Marks @a undefined with @status and @reason (every number NaN). */
void sc_faith_agreement_undefined (ScFaithAgreement *a, ScStatus status, const char *reason);
