/* saccade-json.h — the one JSON writer of both faces: a thin layer over json-glib's
 * JsonBuilder that adds members of each type, a token's bytes, a stored run's description,
 * and turns the result into text.
 *
 * Output is always valid JSON (RFC 8259): a double that is not finite (NaN, ±Infinity —
 * the previous-token score of a one-token run is 0/0) is written as null, never as the
 * "nan.0" json-glib would print. Readers treat null as "undefined for this input".
 *
 * Not here: what a verb reports (each verb builds its own object from its result struct).
 * Thread safety: a builder belongs to one thread; the functions keep no state.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* Members of @b's open object: the member's name, then its value. */
void saccade_json_int (JsonBuilder *b, const char *name, gint64 value);
/* Non-finite @value: null. */
void saccade_json_double (JsonBuilder *b, const char *name, double value);
/* NULL @value: null. */
void saccade_json_string (JsonBuilder *b, const char *name, const char *value);
void saccade_json_bool (JsonBuilder *b, const char *name, gboolean value);
/* A head's place: members "layer" then "head". */
void saccade_json_head (JsonBuilder *b, gint64 layer, gint64 head);
/* Opens an object / array as member @name (close it with json_builder_end_*). */
void saccade_json_begin_object (JsonBuilder *b, const char *name);
void saccade_json_begin_array (JsonBuilder *b, const char *name);

/* An element of @b's open array; non-finite @value: null. */
void saccade_json_add_double (JsonBuilder *b, double value);
/* Member @name: an array of the @n values @v (saccade_json_add_double each). */
void saccade_json_doubles (JsonBuilder *b, const char *name, const double *v, gsize n);
/* Member @name: the (@rows, @cols) row-major matrix @v as an array of @rows arrays. */
void saccade_json_matrix (JsonBuilder *b, const char *name, const double *v, gsize rows,
                          gsize cols);

/* Where "piece" goes beside "bytes_hex": the store's verbs have always written the piece
 * first, `tokenize` the hex first; each keeps its order so that its output is unchanged. */
typedef enum {
  SACCADE_JSON_PIECE_FIRST,
  SACCADE_JSON_HEX_FIRST,
} SaccadeJsonPieceOrder;

/* A token's bytes as members of the open object: "piece" (the bytes as a string, only when
 * they are valid UTF-8 without NUL) and "bytes_hex" (always; lower-case hex, two digits a
 * byte), in @order. */
void saccade_json_piece (JsonBuilder *b, const guint8 *bytes, gsize len,
                         SaccadeJsonPieceOrder order);

/* Member "tokens": [{pos, id, piece?, bytes_hex}] for @n stored tokens. */
void saccade_json_tokens (JsonBuilder *b, const ScStoreToken *t, size_t n);

/* A stored run's description as members of the open object: id, created (ISO 8601 UTC),
 * created_ms, model {id, name, architecture, sha256, path, layers, heads, kv_heads,
 * head_dim}, backend, n_tokens, forward_seconds and capture_seconds (when known),
 * attention_bytes, text {piece?, bytes_hex, truncated: the listing holds only its first
 * SC_STORE_LIST_TEXT_BYTES}. */
void saccade_json_run (JsonBuilder *b, const ScStoreRunInfo *r);

/* @b's root as text, pretty-printed (json-glib's two-space indent) when @pretty; @length
 * (optional) receives its length. Caller frees. */
char *saccade_json_to_data (JsonBuilder *b, gboolean pretty, gsize *length);

/* Prints @b's root pretty on stdout with a final newline: every verb's --json. */
void saccade_json_print (JsonBuilder *b);

G_END_DECLS
