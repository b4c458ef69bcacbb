/* fuzz-gguf.c — libFuzzer target for the GGUF reader and the model loader's checks.
 *
 * Parses the input as a GGUF image; when it parses, touches every key, array element and
 * tensor byte range the reader exposes (so a wrong bound shows up under ASan), and runs
 * the model loader's validation on it (small dimension limits keep allocations bounded).
 * Build: meson setup build-fuzz -Dfuzzing=true (clang); run: build-fuzz/tests/fuzz/fuzz-gguf
 * -max_total_time=600 tests/fuzz/corpus-gguf
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/format/sc-gguf.h"
#include "engine/model/sc-model.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static volatile uint8_t sink;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ScGguf *g = NULL;
  ScModel *m = NULL;
  ScError err;
  uint64_t i, j;

  if (sc_gguf_open_memory (data, size, &g, &err) != SC_OK)
    return 0;
  for (i = 0; i < sc_gguf_n_kv (g); i++)
    {
      const ScGgufKv *kv = sc_gguf_kv (g, i);
      if (kv->key.len > 0)
        sink ^= (uint8_t) kv->key.ptr[kv->key.len - 1];
      if (kv->type == SC_GGUF_TYPE_STRING && kv->v.str.len > 0)
        sink ^= (uint8_t) kv->v.str.ptr[kv->v.str.len - 1];
      if (kv->type == SC_GGUF_TYPE_ARRAY && kv->v.arr.strs != NULL)
        for (j = 0; j < kv->v.arr.count; j++)
          if (kv->v.arr.strs[j].len > 0)
            sink ^= (uint8_t) kv->v.arr.strs[j].ptr[kv->v.arr.strs[j].len - 1];
    }
  for (i = 0; i < sc_gguf_n_tensors (g); i++)
    {
      const ScGgufTensor *t = sc_gguf_tensor (g, i);
      if (t->n_bytes > 0)
        sink ^= t->data[0] ^ t->data[t->n_bytes - 1];
    }
  /* The loader takes ownership of g. Only small models: a fuzzer-made header can declare
   * a 4096-layer model whose dense weights would not fit in memory. */
  {
    uint32_t layers = 0, embd = 0, ff = 0;
    if (sc_gguf_get_u32 (g, "llama.block_count", &layers, NULL) == SC_OK && layers <= 4
        && sc_gguf_get_u32 (g, "llama.embedding_length", &embd, NULL) == SC_OK && embd <= 64
        && sc_gguf_get_u32 (g, "llama.feed_forward_length", &ff, NULL) == SC_OK && ff <= 256)
      {
        if (sc_model_open_gguf (g, 1, &m, &err) == SC_OK)
          sc_model_free (m);
        return 0;
      }
  }
  sc_gguf_close (g);
  return 0;
}
