/* app-fixture-model.h — what app-fixture and app-fixture-long share: the made-up model
 * (4 layers x 6 query heads over 2 KV heads) their runs are stored under, and the
 * deterministic noise their heads are built from.
 */
#pragma once

#include <glib.h>

#include "engine/store/sc-store.h"

#define APP_FIXTURE_LAYERS 4
#define APP_FIXTURE_HEADS 6
#define APP_FIXTURE_KV_HEADS 2

/* The fixture model's identity (the strings are static), with context @n_ctx_train. */
void app_fixture_model (ScStoreModel *model, uint32_t n_ctx_train);

/* A deterministic pseudo-random number in [0, 1) from three integers. */
double app_fixture_noise (guint a, guint b, guint c);
