/* saccade-json.c — the one JSON writer (see saccade-json.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/saccade-format.h"

void
saccade_json_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

void
saccade_json_add_double (JsonBuilder *b, double value)
{
  if (isfinite (value))
    json_builder_add_double_value (b, value);
  else
    json_builder_add_null_value (b);
}

void
saccade_json_doubles (JsonBuilder *b, const char *name, const double *v, gsize n)
{
  saccade_json_begin_array (b, name);
  for (gsize i = 0; i < n; i++)
    saccade_json_add_double (b, v[i]);
  json_builder_end_array (b);
}

void
saccade_json_matrix (JsonBuilder *b, const char *name, const double *v, gsize rows, gsize cols)
{
  saccade_json_begin_array (b, name);
  for (gsize i = 0; i < rows; i++)
    {
      json_builder_begin_array (b);
      for (gsize j = 0; j < cols; j++)
        saccade_json_add_double (b, v[i * cols + j]);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
}

void
saccade_json_double (JsonBuilder *b, const char *name, double value)
{
  json_builder_set_member_name (b, name);
  saccade_json_add_double (b, value);
}

void
saccade_json_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  if (value != NULL)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

void
saccade_json_bool (JsonBuilder *b, const char *name, gboolean value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_boolean_value (b, value);
}

void
saccade_json_head (JsonBuilder *b, gint64 layer, gint64 head)
{
  saccade_json_int (b, "layer", layer);
  saccade_json_int (b, "head", head);
}

void
saccade_json_begin_object (JsonBuilder *b, const char *name)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
}

void
saccade_json_begin_array (JsonBuilder *b, const char *name)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
}

void
saccade_json_piece (JsonBuilder *b, const guint8 *bytes, gsize len, SaccadeJsonPieceOrder order)
{
  g_autofree char *hex = g_malloc (2 * len + 1);
  gboolean text = g_utf8_validate ((const char *) bytes, (gssize) len, NULL)
                  && memchr (bytes, 0, len) == NULL;
  gsize i;

  for (i = 0; i < len; i++)
    g_snprintf (hex + 2 * i, 3, "%02x", bytes[i]);
  hex[2 * len] = '\0';
  if (order == SACCADE_JSON_HEX_FIRST)
    saccade_json_string (b, "bytes_hex", hex);
  if (text)
    {
      g_autofree char *s = g_strndup ((const char *) bytes, len);
      saccade_json_string (b, "piece", s);
    }
  if (order == SACCADE_JSON_PIECE_FIRST)
    saccade_json_string (b, "bytes_hex", hex);
}

void
saccade_json_tokens (JsonBuilder *b, const ScStoreToken *t, size_t n)
{
  size_t i;

  saccade_json_begin_array (b, "tokens");
  for (i = 0; i < n; i++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "pos", (gint64) i);
      saccade_json_int (b, "id", t[i].id);
      saccade_json_piece (b, t[i].piece, t[i].len, SACCADE_JSON_PIECE_FIRST);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

void
saccade_json_run (JsonBuilder *b, const ScStoreRunInfo *r)
{
  g_autofree char *created = saccade_format_time (r->created_ms, TRUE);

  saccade_json_int (b, "id", r->id);
  saccade_json_string (b, "created", created);
  saccade_json_int (b, "created_ms", r->created_ms);
  saccade_json_begin_object (b, "model");
  saccade_json_int (b, "id", r->model_id);
  saccade_json_string (b, "name", r->model_name);
  saccade_json_string (b, "architecture", r->model_arch);
  saccade_json_string (b, "sha256", r->model_sha256);
  saccade_json_string (b, "path", r->model_path);
  saccade_json_int (b, "layers", r->n_layers);
  saccade_json_int (b, "heads", r->n_heads);
  saccade_json_int (b, "kv_heads", r->n_kv_heads);
  saccade_json_int (b, "head_dim", r->head_dim);
  json_builder_end_object (b);
  saccade_json_string (b, "backend", r->backend);
  saccade_json_int (b, "n_tokens", r->n_tokens);
  /* What the run is (runs.kind): absent for a run stored before the store said it. */
  if (r->kind != SC_RUN_KIND_UNKNOWN)
    saccade_json_string (b, "kind", sc_run_kind_id (r->kind));
  if (r->kind == SC_RUN_KIND_GENERATED)
    saccade_json_int (b, "prompt_tokens", r->n_prompt);
  /* A sliding-window model's local layers (docs/store.md, "Band heads"): each layer's
   * window, 0 for a global layer; absent when every layer is global. */
  if (r->windows != NULL)
    {
      saccade_json_begin_array (b, "layer_windows");
      for (guint32 l = 0; l < r->n_layers; l++)
        json_builder_add_int_value (b, r->windows[l]);
      json_builder_end_array (b);
    }
  if (r->forward_s >= 0)
    saccade_json_double (b, "forward_seconds", r->forward_s);
  if (r->capture_s >= 0)
    saccade_json_double (b, "capture_seconds", r->capture_s);
  saccade_json_int (b, "attention_bytes", (gint64) r->attention_bytes);
  /* The rounded form (docs/store.md, "Rounded heads"): absent for a run stored as fp16. */
  if (r->round_bits > 0 || r->zero_below > 0)
    {
      saccade_json_begin_object (b, "rounded");
      saccade_json_int (b, "mantissa_bits", r->round_bits > 0 ? r->round_bits : 10);
      saccade_json_double (b, "max_relative_error",
                           sc_store_round_relative_error (r->round_bits));
      saccade_json_double (b, "zero_below", r->zero_below);
      json_builder_end_object (b);
    }
  saccade_json_begin_object (b, "text");
  saccade_json_piece (b, (const guint8 *) r->text, r->text_len, SACCADE_JSON_PIECE_FIRST);
  /* A listing carries only the first SC_STORE_LIST_TEXT_BYTES of each text (a shared store
   * may hold a text of any size); `saccade show RUN --json` has it whole. */
  saccade_json_bool (b, "truncated", r->text_truncated);
  json_builder_end_object (b);
}

char *
saccade_json_to_data (JsonBuilder *b, gboolean pretty, gsize *length)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);

  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, pretty);
  return json_generator_to_data (gen, length);
}

void
saccade_json_print (JsonBuilder *b)
{
  g_autofree char *text = saccade_json_to_data (b, TRUE, NULL);

  printf ("%s\n", text);
}
