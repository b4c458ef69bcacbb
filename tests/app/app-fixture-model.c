/* app-fixture-model.c — the fixtures' model and noise (see the header). */
#include "app-fixture-model.h"

#include <string.h>

void
app_fixture_model (ScStoreModel *model, uint32_t n_ctx_train)
{
  memset (model, 0, sizeof *model);
  model->path = "/nonexistent/fixture-4x6.gguf";
  model->file_size = 1;
  memset (model->sha256, 0x5a, sizeof model->sha256);
  model->name = "Fixture 4x6";
  model->arch = "llama";
  model->n_layers = APP_FIXTURE_LAYERS;
  model->n_heads = APP_FIXTURE_HEADS;
  model->n_kv_heads = APP_FIXTURE_KV_HEADS;
  model->head_dim = 8;
  model->n_embd = 48;
  model->n_vocab = 100;
  model->n_ctx_train = n_ctx_train;
}

double
app_fixture_noise (guint a, guint b, guint c)
{
  guint32 x = a * 2654435761u ^ b * 2246822519u ^ c * 3266489917u;
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  return (x & 0xffffff) / (double) 0x1000000;
}
