/* sc-store-capture.c — a capture's producer side: sc_store_capture_begin() copies what the
 * run is about and hands the job to the store's writer thread (started with the first
 * capture); each head added is checked, its statistics' source packed into fp16 (the lower
 * triangle of a causal head, its sparse form or its band) into a slot of the bounded ring,
 * and published; commit and abort ask the thread to finish and wait for it. The writer
 * thread's side, the pipeline and its locking are in sc-store-writer.c.
 */
#include "core/sc-math.h"
#include "store/sc-store-capture-private.h"
#include "store/sc-store-heads.h"
#include "store/sc-store-private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------ */
/* The producer side                                                                     */

/* A copy of a name (model name, architecture, path, backend) of at most
 * SC_STORE_MAX_NAME_BYTES bytes — the reader's ceiling —, cut before a UTF-8 sequence the
 * cut would split. */
static char *
dup_str (const char *s)
{
  size_t n = s != NULL ? strlen (s) : 0;
  char *d;

  if (n > SC_STORE_MAX_NAME_BYTES)
    {
      n = SC_STORE_MAX_NAME_BYTES;
      for (size_t k = 0; k < 3 && n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80; k++)
        n--;
    }
  if ((d = malloc (n + 1)) != NULL)
    {
      if (n > 0)
        memcpy (d, s, n);
      d[n] = '\0';
    }
  return d;
}

static void
capture_free (ScStoreCapture *cap)
{
  size_t i;

  if (cap->slots != NULL)
    for (i = 0; i < cap->n_slots; i++)
      free (cap->slots[i].buf);
  free (cap->slots);
  free (cap->seen);
  free (cap->keep);
  free (cap->windows);
  sc_store_sparse_clear (&cap->sparse);
  sc_store_predictions_clear (&cap->pred);
  free (cap->model_path);
  free (cap->model_name);
  free (cap->model_arch);
  free (cap->backend);
  free (cap->text);
  free (cap->tokens);
  free (cap);
}

/* Copies @desc's tokens into one block. */
static ScStoreToken *
copy_tokens (const ScStoreToken *src, size_t n)
{
  size_t i, total = 0;
  ScStoreToken *t;
  uint8_t *bytes;

  for (i = 0; i < n; i++)
    total += src[i].len;
  if (n > (SIZE_MAX - total - 1) / sizeof *t || (t = malloc (n * sizeof *t + total + 1)) == NULL)
    return NULL;
  bytes = (uint8_t *) (t + n);
  for (i = 0; i < n; i++)
    {
      t[i] = src[i];
      if (src[i].len > 0)
        memcpy (bytes, src[i].piece, src[i].len);
      t[i].piece = bytes;
      bytes += src[i].len;
    }
  return t;
}

ScStatus
sc_store_capture_begin (ScStore *store, const ScStoreRunDesc *desc, ScStoreCapture **out,
                        ScError *err)
{
  const ScStoreModel *m = desc != NULL ? desc->model : NULL;
  ScStoreCapture *cap;
  size_t n_heads, item_bytes, i;
  ScStatus st;

  *out = NULL;
  if (!store->writable)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s was opened read-only: cannot store runs",
                         store->path);
  if (store->capture != NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: another capture is open on this store",
                         store->path);
  if (m == NULL || desc->tokens == NULL || desc->n_tokens == 0
      || (desc->text == NULL && desc->text_len > 0))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a run needs a model and at least one token");
  /* What the reader will check (the contract in sc-store.h), checked before anything is
   * stored: a run this writer stores can always be read back. */
  if (m->n_layers == 0 || m->n_heads == 0 || m->n_layers > SC_STORE_MAX_LAYERS
      || m->n_heads > SC_STORE_MAX_HEADS
      || (uint64_t) m->n_layers * m->n_heads > SC_STORE_MAX_RUN_HEADS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a model of %u layers x %u heads cannot be "
                         "captured (at most %u x %u, %u heads in all)", m->n_layers, m->n_heads,
                         SC_STORE_MAX_LAYERS, SC_STORE_MAX_HEADS, SC_STORE_MAX_RUN_HEADS);
  if (m->n_kv_heads == 0 || m->n_kv_heads > m->n_heads || m->n_heads % m->n_kv_heads != 0
      || m->head_dim == 0 || m->head_dim > SC_STORE_MAX_HEAD_DIM || m->n_vocab == 0
      || m->n_vocab > INT32_MAX || m->n_embd == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a model of %u heads, %u KV heads, head_dim "
                         "%u, vocabulary %u cannot be captured", m->n_heads, m->n_kv_heads,
                         m->head_dim, m->n_vocab);
  if (!(desc->sparse_eps == 0 || (desc->sparse_eps > 0 && desc->sparse_eps < 1)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a sparse EPS of %g is not between 0 and 1",
                         desc->sparse_eps);
  if (desc->round_bits > SC_STORE_ROUND_BITS_MAX)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "heads cannot be rounded to %u mantissa "
                         "bits: between 1 and %u (fp16 keeps 10)", desc->round_bits,
                         SC_STORE_ROUND_BITS_MAX);
  if (!(desc->zero_below == 0 || (desc->zero_below > 0 && desc->zero_below < 1)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "values below %g cannot be stored as 0: the "
                         "threshold must be between 0 and 1", desc->zero_below);
  if ((desc->round_bits > 0 || desc->zero_below > 0)
      && (!store->compress_heads || desc->sparse_eps > 0))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: rounded heads are stored compressed "
                         "and dense; %s", store->path,
                         desc->sparse_eps > 0 ? "the sparse form cannot be rounded"
                                              : "this store was opened without compression");
  if ((unsigned) desc->kind >= SC_RUN_N_KINDS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%d is not a kind of run", (int) desc->kind);
  if (desc->kind == SC_RUN_KIND_GENERATED
        ? !(desc->n_prompt > 0 && desc->n_prompt < desc->n_tokens) : desc->n_prompt != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a %s run of %zu tokens cannot have a prompt "
                         "of %u", desc->kind == SC_RUN_KIND_GENERATED ? "generated" : "non-generated",
                         desc->n_tokens, desc->n_prompt);
  if (desc->keep != NULL)
    {
      size_t k = 0;
      for (i = 0; i < (size_t) m->n_layers * m->n_heads; i++)
        k += desc->keep[i] != 0;
      if (k == 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "a run must keep at least one head");
    }
  /* Heads are (n, n) fp16: keep n where n^2 cannot overflow anything. */
  if (desc->n_tokens > SC_STORE_MAX_TOKENS)
    return sc_error_set (err, SC_ERR_RANGE, "%zu tokens is more than a run can store (%u)",
                         desc->n_tokens, SC_STORE_MAX_TOKENS);
  for (i = 0; i < desc->n_tokens; i++)
    {
      const ScStoreToken *t = &desc->tokens[i];
      if (t->len > 0 && t->piece == NULL)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "token %zu has no piece", i);
      if (t->len > SC_STORE_MAX_PIECE_BYTES)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "token %zu's piece is %u bytes, more than "
                             "%u", i, t->len, SC_STORE_MAX_PIECE_BYTES);
      if (t->id < 0 || (uint32_t) t->id >= m->n_vocab)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "token %zu has id %d, outside the model's "
                             "vocabulary of %u", i, (int) t->id, m->n_vocab);
    }

  if (store->writer == NULL && (st = sc_store_writer_start (store, &store->writer, err)) != SC_OK)
    return st;

  if ((cap = calloc (1, sizeof *cap)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  cap->store = store;
  cap->w = store->writer;
  cap->n_layers = (int) m->n_layers;
  cap->n_heads = (int) m->n_heads;
  n_heads = (size_t) m->n_layers * m->n_heads;
  cap->model = *m;
  cap->model_path = dup_str (m->path);
  cap->model_name = dup_str (m->name);
  cap->model_arch = dup_str (m->arch);
  cap->backend = dup_str (desc->backend);
  cap->text = malloc (desc->text_len + 1);
  cap->tokens = copy_tokens (desc->tokens, desc->n_tokens);
  cap->n_tokens = desc->n_tokens;
  cap->seen = calloc (n_heads, 1);
  cap->keep = malloc (n_heads);
  cap->sparse_eps = desc->sparse_eps;
  cap->round = sc_store_z_round (desc->round_bits, desc->zero_below);
  cap->zero_below = desc->zero_below;
  cap->kind = desc->kind;
  cap->n_prompt = desc->n_prompt;
  /* Each layer's window, by the engine's one rule (sc-model.h) applied to the model's
   * description. */
  if ((cap->windows = calloc (m->n_layers, sizeof *cap->windows)) != NULL)
    {
      ScModelInfo info = { 0 };
      info.n_layers = m->n_layers;
      info.sliding_window = m->sliding_window;
      info.swa_pattern = m->swa_pattern;
      for (i = 0; i < m->n_layers; i++)
        cap->windows[i] = sc_model_layer_window (&info, (int) i);
    }
  if (cap->keep != NULL)
    {
      cap->n_keep = 0;
      for (i = 0; i < n_heads; i++)
        cap->n_keep += cap->keep[i] = desc->keep == NULL || desc->keep[i] != 0;
      cap->keep_all = cap->n_keep == n_heads;
    }

  /* The ring: as many slots as the budget holds of the largest BLOB a head can need (a
   * full matrix), at least 2 so converting and writing overlap, at most one per head. */
  item_bytes = sc_store_blob_bytes (false, (uint32_t) desc->n_tokens, (uint32_t) desc->n_tokens);
  cap->n_slots = store->queue_bytes / item_bytes;
  if (cap->n_slots < 2)
    cap->n_slots = 2;
  if (cap->n_slots > n_heads)
    cap->n_slots = n_heads < 2 ? 2 : n_heads;
  cap->slots = calloc (cap->n_slots, sizeof *cap->slots);

  if (cap->model_path == NULL || cap->model_name == NULL || cap->model_arch == NULL
      || cap->backend == NULL || cap->text == NULL || cap->tokens == NULL || cap->seen == NULL
      || cap->keep == NULL || cap->windows == NULL || cap->slots == NULL)
    {
      capture_free (cap);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  if (desc->text_len > 0)
    memcpy (cap->text, desc->text, desc->text_len);
  cap->text_len = desc->text_len;
  cap->model.path = cap->model_path;
  cap->model.name = cap->model_name;
  cap->model.arch = cap->model_arch;
  cap->created_ms = sc_store_now_ms ();
  clock_gettime (CLOCK_MONOTONIC, &cap->t0);

  /* Hand the job to the thread now: it takes the write lock while the caller starts the
   * forward pass. */
  pthread_mutex_lock (&cap->w->mu);
  cap->w->job = cap;
  pthread_cond_broadcast (&cap->w->wake);
  pthread_mutex_unlock (&cap->w->mu);
  store->capture = cap;
  *out = cap;
  return SC_OK;
}

/* sc_store_capture_add_head's body, for a head given either as floats (@probs) or as fp16
 * already in the causal triangle layout (@f16: dense runs only; the caller checks). */
static ScStatus
add_head (ScStoreCapture *cap, int layer, int head, const float *probs, const uint16_t *f16,
          int n_query, int n_key, ScError *err)
{
  ScStoreWriter *w = cap->w;
  ScError e = { 0 };
  size_t at, bytes;
  bool causal, sparse;
  uint32_t window = 0;
  Slot *slot;

  if (layer < 0 || layer >= cap->n_layers || head < 0 || head >= cap->n_heads)
    sc_error_set (&e, SC_ERR_INVALID_ARG, "layer %d head %d is outside the run's %d x %d heads",
                  layer, head, cap->n_layers, cap->n_heads);
  else if ((probs == NULL && f16 == NULL) || n_query != n_key || n_query < 0
           || (size_t) n_query != cap->n_tokens)
    sc_error_set (&e, SC_ERR_INVALID_ARG, "layer %d head %d is %d x %d; the run's heads are "
                  "%zu x %zu", layer, head, n_query, n_key, cap->n_tokens, cap->n_tokens);
  else if (cap->seen[(size_t) layer * cap->n_heads + head])
    sc_error_set (&e, SC_ERR_INVALID_ARG, "layer %d head %d was added twice", layer, head);
  if (e.status != SC_OK)
    {
      sc_store_capture_fail (cap, &e);
      if (err != NULL)
        *err = e;
      return e.status;
    }

  at = (size_t) layer * cap->n_heads + head;
  if (!cap->keep[at])
    {
      /* checked as any head (above), then left out */
      cap->seen[at] = 1;
      cap->n_seen++;
      return SC_OK;
    }
  causal = f16 != NULL || sc_store_head_is_causal (probs, (uint32_t) n_query, (uint32_t) n_key);
  bytes = sc_store_blob_bytes (causal, (uint32_t) n_query, (uint32_t) n_key);
  /* A local layer's head as its band when the run is longer than the window and the head
   * has nothing left of it (sc-store-band.c); it is not made sparse then. A head handed
   * over already packed in fp16 (a device backend's capture) stays the causal triangle. */
  if (causal && probs != NULL && cap->windows[layer] > 0 && cap->windows[layer] < (uint32_t) n_query
      && sc_store_head_in_band (probs, (uint32_t) n_query, cap->windows[layer]))
    {
      window = cap->windows[layer];
      bytes = 2 * (size_t) sc_store_band_values (window, 0, (uint32_t) n_query);
    }
  /* The sparse form when it is smaller than the dense one (so a sparse run is never larger
   * than a dense one); built here, in the forward pass's thread, from the float weights. */
  sparse = false;
  if (cap->sparse_eps > 0 && causal && window == 0 && probs != NULL)
    {
      if (!sc_store_sparse_build (&cap->sparse, probs, (uint32_t) n_query, true,
                                  cap->sparse_eps))
        {
          sc_error_set (&e, SC_ERR_NOMEM, "out of memory making layer %d head %d sparse", layer,
                        head);
          sc_store_capture_fail (cap, &e);
          if (err != NULL)
            *err = e;
          return e.status;
        }
      if (sc_store_sparse_bytes ((uint32_t) n_query, cap->sparse.nnz) < bytes)
        {
          sparse = true;
          bytes = (size_t) sc_store_sparse_bytes ((uint32_t) n_query, cap->sparse.nnz);
        }
    }

  /* Reserve the slot after the queued ones (waiting while the ring is full). */
  pthread_mutex_lock (&w->mu);
  while (cap->q_count == cap->n_slots && cap->status == SC_OK)
    pthread_cond_wait (&w->done, &w->mu);
  if (cap->status != SC_OK)
    {
      ScStatus st = cap->status;
      if (err != NULL)
        *err = cap->error;
      pthread_mutex_unlock (&w->mu);
      return st;
    }
  slot = &cap->slots[(cap->q_head + cap->q_count) % cap->n_slots];
  pthread_mutex_unlock (&w->mu);

  /* Fill it outside the lock: it is ours until published. */
  if (slot->cap < bytes)
    {
      uint8_t *buf = realloc (slot->buf, bytes);
      if (buf == NULL)
        {
          sc_error_set (&e, SC_ERR_NOMEM, "out of memory queueing layer %d head %d", layer, head);
          sc_store_capture_fail (cap, &e);
          if (err != NULL)
            *err = e;
          return e.status;
        }
      slot->buf = buf;
      slot->cap = bytes;
    }
  if (sparse)
    sc_store_sparse_serialise (&cap->sparse, slot->buf);
  else if (window > 0)
    sc_store_band_pack (probs, (uint32_t) n_query, window, slot->buf);
  else if (f16 != NULL) /* already the BLOB's values, in host byte order */
    {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      memcpy (slot->buf, f16, bytes);
#else
      for (size_t v = 0; v < bytes / 2; v++)
        {
          slot->buf[2 * v] = (uint8_t) f16[v];
          slot->buf[2 * v + 1] = (uint8_t) (f16[v] >> 8);
        }
#endif
    }
  else
    sc_store_blob_pack (probs, (uint32_t) n_query, (uint32_t) n_key, causal, slot->buf);
  /* The reader refuses a head holding anything but probabilities (sc-store-read.c); so
   * does the writer, rather than store a run nobody can read (a NaN from a broken model). */
  {
    const uint8_t *values = sparse ? slot->buf + bytes - 2 * cap->sparse.nnz : slot->buf;
    const size_t n_values = sparse ? cap->sparse.nnz : bytes / 2;
    const size_t bad = sc_store_blob_first_bad (values, n_values);
    if (bad < n_values)
      {
        float v;
        sc_store_f16_decode (values + 2 * bad, 1, &v);
        sc_error_set (&e, SC_ERR_INVALID_ARG, "layer %d head %d: value %zu (as fp16) is %g, not "
                      "a probability in [0, 1]", layer, head, bad, (double) v);
        sc_store_capture_fail (cap, &e);
        if (err != NULL)
          *err = e;
        return e.status;
      }
  }
  slot->len = bytes;
  slot->layer = layer;
  slot->head = head;
  slot->n = (uint32_t) n_query;
  slot->causal = causal;
  slot->sparse = sparse;
  slot->nnz = sparse ? cap->sparse.nnz : 0;
  slot->window = window;

  pthread_mutex_lock (&w->mu);
  cap->q_count++;
  pthread_cond_broadcast (&w->wake);
  pthread_mutex_unlock (&w->mu);

  cap->seen[at] = 1;
  cap->n_seen++;
  return SC_OK;
}

ScStatus
sc_store_capture_add_head (ScStoreCapture *cap, int layer, int head, const float *probs,
                           int n_query, int n_key, ScError *err)
{
  return add_head (cap, layer, head, probs, NULL, n_query, n_key, err);
}

ScStatus
sc_store_capture_add_head_f16 (ScStoreCapture *cap, int layer, int head, const uint16_t *values,
                               bool packed, int n_query, int n_key, ScError *err)
{
  float *probs;
  ScStatus st;

  if (values == NULL || n_query != n_key || n_query < 0 || (size_t) n_query != cap->n_tokens)
    return add_head (cap, layer, head, NULL, NULL, n_query, n_key, err); /* its error */
  if (packed && cap->sparse_eps == 0
      && !(layer >= 0 && layer < cap->n_layers && cap->windows[layer] > 0
           && cap->windows[layer] < (uint32_t) n_query))
    return add_head (cap, layer, head, NULL, values, n_query, n_key, err);
  /* a sparse run (built from floats), a local layer's head that may be stored as its band
   * (decided from the values), or a full layout: through floats, which is exact — every
   * fp16 is a float and sc_fp32_to_fp16 gives it back unchanged */
  probs = malloc ((size_t) n_query * n_key * sizeof *probs);
  if (probs == NULL)
    {
      ScError e = { 0 };
      sc_error_set (&e, SC_ERR_NOMEM, "out of memory decoding layer %d head %d", layer, head);
      sc_store_capture_fail (cap, &e);
      if (err != NULL)
        *err = e;
      return e.status;
    }
  for (int i = 0; i < n_query; i++)
    for (int j = 0; j < n_key; j++)
      probs[(size_t) i * n_key + j]
          = packed && j > i ? 0.0f
                            : sc_fp16_to_fp32 (values[sc_attn_packed_index (i, j, n_key, packed)]);
  st = add_head (cap, layer, head, probs, NULL, n_query, n_key, err);
  free (probs);
  return st;
}

static bool
capture_observe (void *user, int layer, int head, const float *probs, int n_query, int n_key)
{
  return sc_store_capture_add_head (user, layer, head, probs, n_query, n_key, NULL) == SC_OK;
}

static bool
capture_observe_f16 (void *user, int layer, int head, const uint16_t *values, int n_query,
                     int n_key, bool packed)
{
  return sc_store_capture_add_head_f16 (user, layer, head, values, packed, n_query, n_key, NULL)
         == SC_OK;
}

ScObserver
sc_store_capture_observer (ScStoreCapture *cap)
{
  ScObserver obs = { NULL, capture_observe, cap };

  /* A sparse run keeps the float path: which keys it drops, and the mass it says it
   * dropped, come from the float probabilities (fp16 values would round the row sums) */
  if (cap->sparse_eps == 0)
    obs.observe_f16 = capture_observe_f16;
  return obs;
}

ScStatus
sc_store_capture_status (const ScStoreCapture *cap, ScError *err)
{
  ScStoreWriter *w = cap->w;
  ScStatus st;

  pthread_mutex_lock (&w->mu);
  st = cap->status;
  if (err != NULL)
    {
      if (st != SC_OK)
        *err = cap->error;
      else
        sc_error_clear (err);
    }
  pthread_mutex_unlock (&w->mu);
  return st;
}

/* Asks the thread to finish @cap and waits until it has. */
static void
finish_and_wait (ScStoreCapture *cap, Finish finish, double forward_s)
{
  ScStoreWriter *w = cap->w;

  pthread_mutex_lock (&w->mu);
  cap->finish = finish;
  cap->forward_s = forward_s;
  pthread_cond_broadcast (&w->wake);
  while (!cap->finished)
    pthread_cond_wait (&w->done, &w->mu);
  pthread_mutex_unlock (&w->mu);
}

ScStatus
sc_store_capture_commit (ScStoreCapture *cap, double forward_s, int64_t *run_id, ScError *err)
{
  ScStatus st;

  finish_and_wait (cap, FINISH_COMMIT, forward_s);
  st = cap->status;
  if (st != SC_OK)
    {
      if (err != NULL)
        *err = cap->error;
    }
  else if (run_id != NULL)
    *run_id = cap->run_id;
  cap->store->capture = NULL;
  capture_free (cap);
  return st;
}

ScStatus
sc_store_capture_set_predictions (ScStoreCapture *cap, uint32_t n_positions, uint32_t k,
                                  const int32_t *ids, const float *logits, const double *probs,
                                  const ScStoreToken *pieces, ScError *err)
{
  if (cap == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "no capture");
  if (cap->pred.n_positions > 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: the run's predictions are set already",
                         cap->store->path);
  if ((size_t) n_positions != cap->n_tokens)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: predictions for %u positions, the run "
                         "has %zu", cap->store->path, n_positions, cap->n_tokens);
  /* The producer's side: the writer thread reads cap->pred only once the commit has been
   * asked for (under the writer's mutex). */
  return sc_store_predictions_copy (&cap->pred, n_positions, k, ids, logits, probs, pieces,
                                    err);
}

void
sc_store_capture_abort (ScStoreCapture *cap)
{
  if (cap == NULL)
    return;
  finish_and_wait (cap, FINISH_ABORT, -1.0);
  cap->store->capture = NULL;
  capture_free (cap);
}
