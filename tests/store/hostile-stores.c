/* hostile-stores.c — a real store edited into hostile shapes (see hostile-stores.h). */
#include "tests/store/hostile-stores.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store-study.h"
#include "tests/store/store-fake.h"

#define R1 (1u << 1)
#define R2 (1u << 2)
#define M1 (R1 | R2) /* runs 1 and 2 share model 1 */

/* Run 2 is causal with 6 tokens: each head's BLOB is 6 * 7 / 2 fp16 values, 42 bytes. */
#define HEAD_2_0_0 "run_id = 2 AND layer = 0 AND head = 0"

static const HostileKind kinds[] = {
  /* --- the schema: refused at open ---------------------------------------------------- */
  { "trigger", "a trigger that deletes every earlier run's heads when a head is inserted",
    "CREATE TRIGGER wipe AFTER INSERT ON attention BEGIN "
    "DELETE FROM attention WHERE run_id < NEW.run_id; END",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "holds trigger 'wipe'", 0, 0, 0 },
  { "view-runs", "runs replaced by a view over an endless recursive query",
    "DROP TABLE runs; CREATE VIEW runs AS WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL "
    "SELECT x + 1 FROM c) SELECT x AS id, 1 AS model_id, x'00' AS text, 0 AS created, "
    "'cpu' AS backend, 1 AS n_tokens, NULL AS forward_ms, NULL AS capture_ms, "
    "0 AS attention_bytes, 'complete' AS status FROM c",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "'runs' is a view", 0, 0, 0 },
  { "view-extra", "an extra view", "CREATE VIEW recent AS SELECT * FROM runs",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "holds view 'recent'", 0, 0, 0 },
  { "index-extra", "an extra index", "CREATE INDEX attention_layer ON attention (layer)",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "holds index 'attention_layer'", 0, 0, 0 },
  { "index-missing", "one of our indexes dropped", "DROP INDEX runs_model",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "lacks the index runs_model", 0, 0, 0 },
  { "table-extra", "an extra table", "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "holds table 'notes'", 0, 0, 0 },
  { "analyze", "statistics from ANALYZE (sqlite_stat1)", "ANALYZE",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "holds table 'sqlite_stat1'", 0, 0, 0 },
  { "column-extra", "an extra column in runs", "ALTER TABLE runs ADD COLUMN note TEXT",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "its column 16 is 'note'", 0, 0, 0 },
  { "column-generated", "a generated column in attention that makes a 1 MB value per row",
    "ALTER TABLE attention ADD COLUMN big BLOB GENERATED ALWAYS AS (zeroblob (1000000)) VIRTUAL",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "its column 9 is 'big'", 0, 0, 0 },
  { "check-changed", "a CHECK constraint loosened through writable_schema",
    "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace (sql, "
    "'CHECK (n_tokens > 0)', 'CHECK (n_tokens > -9)') WHERE name = 'runs'",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "the definition of table 'runs' differs", 0, 0, 0 },
  { "virtual-table", "an FTS5 virtual table", "CREATE VIRTUAL TABLE search USING fts5 (body)",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "holds table 'search", 0, 0, HOSTILE_OPTIONAL },

  /* --- a run against its model: refused by listing and getting the run ---------------- */
  { "kv-heads-not-dividing", "n_kv_heads = 2 for 3 heads (passes the CHECK)",
    "UPDATE models SET n_kv_heads = 2 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "n_kv_heads = 2 does not divide n_heads = 3", 0, 0, 0 },
  { "kv-heads-more", "n_kv_heads = 4 for 3 heads (the 10-for-9 of the issue)",
    "UPDATE models SET n_kv_heads = 4 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "n_kv_heads = 4 does not divide n_heads = 3", 0, 0, 0 },
  { "kv-heads-zero", "n_kv_heads = 0 (CHECK bypassed)",
    "UPDATE models SET n_kv_heads = 0 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "n_kv_heads is 0, outside 1..", 0, 0, 0 },
  { "layers-heads-wrap", "n_layers = n_heads = 2^32: their product with n^2 wraps 64 bits",
    "UPDATE models SET n_layers = 4294967296, n_heads = 4294967296 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "n_layers is 4294967296, outside", 0, 0, 0 },
  { "layers-heads-product", "4096 layers x 4096 heads: each in range, the product not",
    "UPDATE models SET n_layers = 4096, n_heads = 4096 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "is more than 65536 heads", 0, 0, 0 },
  { "layers-fewer", "n_layers = 2 for runs that hold 4 layers of heads",
    "UPDATE models SET n_layers = 2 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "runs.attention_bytes is", 0, 0, 0 },
  { "heads-more", "n_heads = 6 for runs that hold 3 heads per layer",
    "UPDATE models SET n_heads = 6 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "12 of the 24 heads the run kept are stored", 0, 0, 0 },
  { "vocab-zero", "n_vocab = 0 (CHECK bypassed)", "UPDATE models SET n_vocab = 0 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "n_vocab is 0", 0, 0, 0 },
  { "head-dim-huge", "head_dim = 2^40", "UPDATE models SET head_dim = 1099511627776 WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "head_dim is 1099511627776", 0, 0, 0 },
  { "sha-short", "a 1-byte model fingerprint (CHECK bypassed)",
    "UPDATE models SET sha256 = x'00' WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "sha256 is not a 32-byte BLOB", 0, 0, 0 },
  { "orphan-run", "the model of runs 1 and 2 deleted with foreign keys off",
    "DELETE FROM models WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "a model the store does not hold", 0, 0, 0 },
  { "model-id-text", "runs.model_id holds text", "UPDATE runs SET model_id = 'one' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.model_id is 'one' (text)", 0, 0, 0 },
  { "name-huge", "a 5 MB model name", "UPDATE models SET name = hex (zeroblob (2500000)) WHERE id = 1",
    HOSTILE_AT_RUN, M1, SC_ERR_FORMAT, "name is 5000000 bytes long", 0, 0, 0 },
  { "backend-huge", "a 5 MB backend name",
    "UPDATE runs SET backend = hex (zeroblob (2500000)) WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "backend is 5000000 bytes long", 0, 0, 0 },
  { "tokens-huge", "n_tokens = 2^63 - 1", "UPDATE runs SET n_tokens = 9223372036854775807 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.n_tokens is 9223372036854775807, outside", 0, 0, 0 },
  { "tokens-negative", "n_tokens = -6 (CHECK bypassed)", "UPDATE runs SET n_tokens = -6 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.n_tokens is -6", 0, 0, 0 },
  { "tokens-text", "n_tokens holds text", "UPDATE runs SET n_tokens = 'six' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.n_tokens is 'six' (text)", 0, 0, 0 },
  { "tokens-real", "n_tokens holds a real", "UPDATE runs SET n_tokens = 6.5 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.n_tokens is 6.5 (a real)", 0, 0, 0 },
  { "created-text", "created holds text", "UPDATE runs SET created = 'yesterday' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.created is 'yesterday' (text)", 0, 0, 0 },
  { "created-negative", "created = -1", "UPDATE runs SET created = -1 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.created is -1", 0, 0, 0 },
  { "forward-text", "forward_ms holds text", "UPDATE runs SET forward_ms = 'fast' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.forward_ms is 'fast' (text)", 0, 0, 0 },
  { "forward-infinite", "forward_ms = infinity", "UPDATE runs SET forward_ms = 9e999 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.forward_ms is inf", 0, 0, 0 },
  { "attention-bytes-negative", "attention_bytes = -5",
    "UPDATE runs SET attention_bytes = -5 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.attention_bytes is -5", 0, 0, 0 },
  { "text-integer", "the text is an integer", "UPDATE runs SET text = 7 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.text holds integer", 0, 0, 0 },
  { "token-missing", "token row at position 3 deleted",
    "DELETE FROM tokens WHERE run_id = 2 AND pos = 3",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "the tokens table has 5 rows", 0, 0, 0 },
  { "token-extra", "a token row at position 6 of a 6-token run",
    "INSERT INTO tokens VALUES (2, 6, 7, x'41')",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "the tokens table has 7 rows", 0, 0, 0 },
  { "token-gap", "position 3 moved to 9", "UPDATE tokens SET pos = 9 WHERE run_id = 2 AND pos = 3",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "at positions 0..9", 0, 0, 0 },
  { "token-pos-negative", "position 0 moved to -1 (CHECK bypassed)",
    "UPDATE tokens SET pos = -1 WHERE run_id = 2 AND pos = 0",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "at positions -1..5", 0, 0, 0 },
  { "token-pos-text", "a position that is text",
    "UPDATE tokens SET pos = 'five' WHERE run_id = 2 AND pos = 5",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "have a position that is not an integer", 0, 0, 0 },
  { "head-missing", "one head deleted", "DELETE FROM attention WHERE run_id = 2 AND layer = 3 AND head = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "11 of the 12 heads the run kept are stored", 0, 0, 0 },
  { "head-extra-layer", "a head of layer 4 in a 4-layer model",
    "INSERT INTO attention (run_id, layer, head, n_query, n_key, layout, dtype, data) "
    "SELECT run_id, 4, head, n_query, n_key, layout, dtype, data FROM attention WHERE " HEAD_2_0_0,
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT,
      "a stored head has layer 4, outside the model's 4 layers", 0, 0, 0 },
  { "head-layer-text", "a head whose layer is text",
    "UPDATE attention SET layer = 'zero' WHERE run_id = 2 AND layer = 0 AND head = 1",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "a stored head has layer 'zero' (text)", 0, 0, 0 },

  /* --- schema v3: the heads a run kept, its sparse EPS -------------------------------- */
  { "kept-none", "runs.kept keeps no head", "UPDATE runs SET kept = x'0000' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.kept keeps no head", 0, 0, 0 },
  { "kept-past", "runs.kept with bits past the model's 12 heads",
    "UPDATE runs SET kept = x'FFFF' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "bits set past the model's 12 heads", 0, 0, 0 },
  { "kept-short", "a 1-byte runs.kept for 12 heads", "UPDATE runs SET kept = x'FF' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "needs a 2-byte bitmap", 0, 0, 0 },
  { "kept-fewer", "runs.kept without layer 3 head 2, which is stored",
    "UPDATE runs SET kept = x'FF07' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "layer 3 head 2 is stored, but the run did not keep it",
    0, 0, 0 },
  { "sparse-eps-text", "runs.sparse_eps holds text",
    "UPDATE runs SET sparse_eps = 'much' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.sparse_eps is 'much' (text)", 0, 0, 0 },
  { "round-bits-wide", "runs.round_bits past fp16's mantissa",
    "PRAGMA ignore_check_constraints = 1; UPDATE runs SET round_bits = 12 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.round_bits is 12", 0, 0, 0 },
  { "zero-below-text", "runs.zero_below holds text",
    "UPDATE runs SET zero_below = 'tiny' WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "runs.zero_below is 'tiny' (text)", 0, 0, 0 },
  { "rounded-sparse", "a run both sparse and rounded",
    "UPDATE runs SET sparse_eps = 0.001, round_bits = 4 WHERE id = 2",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "both sparse and rounded", 0, 0, 0 },
  { "head-twice", "a head stored both as an attention row and as attention_parts",
    "INSERT INTO attention_parts (run_id, layer, head, row0, row1, n_query, n_key, layout, "
    "dtype, data) SELECT run_id, layer, head, 0, 6, n_query, n_key, layout, dtype, data "
    "FROM attention WHERE " HEAD_2_0_0,
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "stored both in attention and in attention_parts",
    0, 0, 0 },

  /* --- tokens against their run ------------------------------------------------------- */
  { "token-id-real", "a token id that is a real",
    "UPDATE tokens SET token_id = 1.5 WHERE run_id = 2 AND pos = 1",
    HOSTILE_AT_TOKENS, R2, SC_ERR_FORMAT, "token_id is 1.5 (a real)", 0, 0, 0 },
  { "token-id-vocab", "a token id equal to the vocabulary size",
    "UPDATE tokens SET token_id = 49152 WHERE run_id = 2 AND pos = 1",
    HOSTILE_AT_TOKENS, R2, SC_ERR_FORMAT,
      "token_id is 49152, outside the model's vocabulary", 0, 0, 0 },
  { "token-id-negative", "a negative token id",
    "UPDATE tokens SET token_id = -1 WHERE run_id = 2 AND pos = 4",
    HOSTILE_AT_TOKENS, R2, SC_ERR_FORMAT, "token_id is -1", 0, 0, 0 },
  { "piece-text", "a piece stored as text", "UPDATE tokens SET piece = 'abc' WHERE run_id = 2 AND pos = 2",
    HOSTILE_AT_TOKENS, R2, SC_ERR_FORMAT, "1 token pieces are not BLOBs", 0, 0, 0 },
  { "piece-huge", "a 1 MB piece", "UPDATE tokens SET piece = zeroblob (1000000) WHERE run_id = 2 AND pos = 2",
    HOSTILE_AT_TOKENS, R2, SC_ERR_FORMAT, "a token piece is 1000000 bytes long", 0, 0, 0 },

  /* --- heads against their run -------------------------------------------------------- */
  { "head-10x10-in-4", "a 10 x 10 head (a valid 110-byte causal BLOB) in a run of 4 tokens",
    "UPDATE attention SET n_query = 10, n_key = 10, data = zeroblob (110) "
    "WHERE run_id = 1 AND layer = 1 AND head = 2",
    HOSTILE_AT_HEAD, R1, SC_ERR_FORMAT, "n_query is 10, but the run has 4 tokens", 1, 2, 0 },
  { "head-n-key", "n_key = 5 in a full layout, with a matching BLOB",
    "UPDATE attention SET layout = 'full', n_key = 5, data = zeroblob (60) WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "n_key is 5, but the run has 6 tokens", 0, 0, 0 },
  { "blob-short", "a 3-byte BLOB (CHECK bypassed)", "UPDATE attention SET data = zeroblob (3) WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "data is blob of 3 bytes", 0, 0, 0 },
  { "blob-text", "the head's data is text (CHECK bypassed)",
    "UPDATE attention SET data = hex (zeroblob (21)) WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "data is text of 42 bytes", 0, 0, 0 },
  { "layout-bogus", "layout 'diagonal' (CHECK bypassed)",
    "UPDATE attention SET layout = 'diagonal' WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "layout is 'diagonal' (text)", 0, 0, 0 },
  { "layout-full-causal-blob", "layout 'full' over a causal BLOB (CHECK bypassed)",
    "UPDATE attention SET layout = 'full' WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "a full 6 x 6 fp16 head has 72", 0, 0, 0 },
  { "dtype-f32", "dtype 'f32' (CHECK bypassed)", "UPDATE attention SET dtype = 'f32' WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_UNSUPPORTED, "has dtype 'f32' (text)", 0, 0, 0 },
  { "value-nan", "a NaN in a head",
    "UPDATE attention SET data = CAST (x'007e' || substr (data, 3) AS BLOB) WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "value 0 is nan, not a probability", 0, 0, 0 },
  { "value-negative", "-1 in a head",
    "UPDATE attention SET data = CAST (substr (data, 1, 6) || x'00bc' || substr (data, 9) AS BLOB) "
    "WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "value 3 is -1, not a probability", 0, 0, 0 },
  { "value-above-one", "2 in a head",
    "UPDATE attention SET data = CAST (substr (data, 1, 40) || x'0040' AS BLOB) WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "value 20 is 2, not a probability", 0, 0, 0 },
  { "value-infinite", "+infinity in a head",
    "UPDATE attention SET data = CAST (x'007c' || substr (data, 3) AS BLOB) WHERE " HEAD_2_0_0,
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "value 0 is inf, not a probability", 0, 0, 0 },
  { "heads-smaller-than-run", "n_tokens = 7 with a 7th token row: every 6 x 6 head is too small",
    "UPDATE runs SET n_tokens = 7 WHERE id = 2; INSERT INTO tokens VALUES (2, 6, 5, x'41')",
    HOSTILE_AT_HEADS, R2, SC_ERR_FORMAT, "n_query is 6, but the run has 7 tokens", 0, 0, 0 },

  /* --- sliding-window layers (schema v4: docs/store.md, "Band heads") ----------------- */
  { "windows-layer-outside", "a layer window for layer 9 of a 4-layer model",
    "INSERT INTO layer_windows VALUES (2, 9, 2)",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "layer_windows has a row for layer 9, outside", 0, 0, 0 },
  { "windows-size-text", "a layer window that is text",
    "INSERT INTO layer_windows VALUES (2, 0, 'wide')",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "has a window of 'wide' (text) tokens", 0, 0, 0 },
  { "band-global-layer", "head 0.0 of run 2 as a band of window 2 in a layer without a window",
    "DELETE FROM attention WHERE " HEAD_2_0_0 "; INSERT INTO attention_bands (run_id, layer, "
    "head, row0, row1, n_query, window_size, dtype, data) VALUES (2, 0, 0, 0, 6, 6, 2, 'f16', "
    "zeroblob (22))",
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "layer_windows has no row: a global layer", 0, 0, 0 },
  { "band-past-run", "head 0.0 of run 2 as a band whose window is the run's length",
    "DELETE FROM attention WHERE " HEAD_2_0_0 "; INSERT INTO layer_windows VALUES (2, 0, 6); "
    "INSERT INTO attention_bands (run_id, layer, head, row0, row1, n_query, window_size, dtype, "
    "data) VALUES (2, 0, 0, 0, 6, 6, 6, 'f16', zeroblob (42))",
    HOSTILE_AT_HEAD, R2, SC_ERR_FORMAT, "window_size is 6; a band of a 6-token run has a window "
    "of 1..5", 0, 0, 0 },
  { "band-twice", "a head stored both as an attention row and as a band",
    "INSERT INTO layer_windows VALUES (2, 0, 2); INSERT INTO attention_bands (run_id, layer, "
    "head, row0, row1, n_query, window_size, dtype, data) VALUES (2, 0, 0, 0, 6, 6, 2, 'f16', "
    "zeroblob (22))",
    HOSTILE_AT_RUN, R2, SC_ERR_FORMAT, "or attention_bands", 0, 0, 0 },

  /* --- the every-table base (hostile_base_every): bands, layer windows, overviews,
   * predictions, head scores, studies, study heads and series, a shard manifest ---------- */
#define EV(name, what, sql, status, needle) \
  { name, what, sql, HOSTILE_SOMEWHERE, 0, status, needle, 0, 0, HOSTILE_EVERY }
#define BAND_1_0_1 "run_id = 1 AND layer = 0 AND head = 1"
#define OV_1_0_0 "run_id = 1 AND layer = 0 AND head = 0"
  /* bands and layer windows against the run */
  EV ("every-band-window-other", "a band head of run 1 whose window is 4 where its layer's is 8",
      "UPDATE attention_bands SET window_size = 4 WHERE " BAND_1_0_1, SC_ERR_FORMAT,
      "window_size is 4, but layer 0's window is 8"),
  EV ("every-band-rows-short", "a band part that ends at row 20 of 24",
      "UPDATE attention_bands SET row1 = 20 WHERE " BAND_1_0_1, SC_ERR_FORMAT,
      "rows 0..20 of a band of window 8 have 264"),
  EV ("every-band-n-query", "a band of n_query 2^31 - 1 in a run of 24 tokens",
      "UPDATE attention_bands SET n_query = 2147483647 WHERE " BAND_1_0_1, SC_ERR_FORMAT,
      "n_query is 2147483647, but the run has 24 tokens"),
  EV ("every-band-nan", "a NaN in a band head",
      "UPDATE attention_bands SET data = CAST (x'007e' || substr (data, 3) AS BLOB) WHERE "
      BAND_1_0_1, SC_ERR_FORMAT, "value 0 is nan, not a probability"),
  EV ("every-band-huge-blob", "a band part's BLOB of 16 MB",
      "UPDATE attention_bands SET data = zeroblob (16000000) WHERE " BAND_1_0_1, SC_ERR_FORMAT,
      "data is blob of 16000000 bytes"),
  EV ("every-band-no-windows", "run 1's layer windows deleted: its bands have no window",
      "DELETE FROM layer_windows WHERE run_id = 1", SC_ERR_FORMAT,
      "layer_windows has no row: a global layer"),
  EV ("every-windows-beyond-layers", "run 1's window of layer 2 moved to layer 4 of 4",
      "UPDATE layer_windows SET layer = 4 WHERE run_id = 1 AND layer = 2", SC_ERR_FORMAT,
      "layer_windows has a row for layer 4, outside the model's 4 layers"),
  EV ("every-windows-huge", "a layer window of 2^63 - 1 tokens",
      "UPDATE layer_windows SET size = 9223372036854775807 WHERE run_id = 1 AND layer = 0",
      SC_ERR_FORMAT, "a window of 9223372036854775807 tokens"),
  EV ("every-windows-negative", "a layer window of -8 tokens (CHECK bypassed)",
      "UPDATE layer_windows SET size = -8 WHERE run_id = 1 AND layer = 0", SC_ERR_FORMAT,
      "a window of -8 tokens"),
  EV ("every-windows-extra-layer", "a window for layer 1, whose heads are causal",
      "INSERT INTO layer_windows VALUES (1, 1, 8)", SC_ERR_FORMAT, NULL),
  /* overviews */
  EV ("every-overview-left-of-band", "an overview cell left of a band head's window is 0.5",
      "UPDATE head_overviews SET data = CAST (substr (data, 1, 1104) || x'0038' || "
      "substr (data, 1107) AS BLOB) WHERE " OV_1_0_0, SC_ERR_FORMAT,
      "cell (23, 0), outside the band (left of the head's window), is 0.5"),
  EV ("every-overview-above-diagonal", "an overview cell above the diagonal of a causal head",
      "UPDATE head_overviews SET data = CAST (substr (data, 1, 10) || x'0038' || "
      "substr (data, 13) AS BLOB) WHERE run_id = 2 AND layer = 1 AND head = 1", SC_ERR_FORMAT,
      "cell (0, 5), above the diagonal of a causal head, is 0.5"),
  EV ("every-overview-size", "an overview of size 100000 with a 12-byte BLOB",
      "UPDATE head_overviews SET size = 100000, data = zeroblob (12) WHERE " OV_1_0_0,
      SC_ERR_FORMAT, "size is 100000; a run of 24 tokens has overviews of 24"),
  EV ("every-overview-huge-blob", "a 16 MB overview BLOB",
      "UPDATE head_overviews SET data = zeroblob (16000000) WHERE " OV_1_0_0, SC_ERR_FORMAT,
      "data is not an f16 BLOB of 1152 bytes"),
  EV ("every-overview-negative", "-1 in an overview",
      "UPDATE head_overviews SET data = CAST (x'00bc' || substr (data, 3) AS BLOB) WHERE "
      OV_1_0_0, SC_ERR_FORMAT, "cell 0 is -1, not a probability"),
  EV ("every-overview-layer-outside", "an overview of layer 9 in a 4-layer model",
      "UPDATE head_overviews SET layer = 9 WHERE " OV_1_0_0, SC_ERR_FORMAT, NULL),
  /* predictions */
  EV ("every-prediction-piece-257", "a prediction piece of 257 bytes (the limit is 256)",
      "UPDATE predictions SET piece = zeroblob (257) WHERE run_id = 1 AND pos = 6 AND rank = 0",
      SC_ERR_FORMAT, "its piece is a 257-byte blob, more than the 256 bytes"),
  EV ("every-prediction-piece-huge", "a prediction piece of 3 MB (issue 25, item 5)",
      "UPDATE predictions SET piece = randomblob (3000000) WHERE run_id = 1 AND pos = 6 AND "
      "rank = 0", SC_ERR_FORMAT, "its piece is a 3000000-byte blob"),
  EV ("every-prediction-piece-text", "a prediction piece that is text",
      "UPDATE predictions SET piece = 'abc' WHERE run_id = 1 AND pos = 2 AND rank = 1",
      SC_ERR_FORMAT, "its piece is text, not a BLOB"),
  EV ("every-prediction-prob-above-one", "a probability of 1.5 (CHECK bypassed)",
      "UPDATE predictions SET prob = 1.5 WHERE run_id = 1 AND pos = 2 AND rank = 0",
      SC_ERR_FORMAT, "prediction (2, 0) has probability 1.5"),
  EV ("every-prediction-prob-order", "rank 1 more probable than rank 0",
      "UPDATE predictions SET prob = 0.9 WHERE run_id = 1 AND pos = 2 AND rank = 1",
      SC_ERR_FORMAT, "prediction (2, 1) has probability 0.9"),
  EV ("every-prediction-token-vocab", "a predicted token id equal to the vocabulary size",
      "UPDATE predictions SET token_id = 49152 WHERE run_id = 1 AND pos = 2 AND rank = 1",
      SC_ERR_FORMAT, "names token 49152, outside the vocabulary"),
  EV ("every-prediction-missing", "one prediction row deleted: 95 rows for 24 x 4",
      "DELETE FROM predictions WHERE run_id = 1 AND pos = 3 AND rank = 1", SC_ERR_FORMAT,
      "95 predictions rows for 24 positions of 4"),
  EV ("every-prediction-position-past", "a prediction at position 24 of a 24-token run",
      "INSERT INTO predictions SELECT run_id, 24, rank, token_id, piece, logit, prob FROM "
      "predictions WHERE run_id = 1 AND pos = 23", SC_ERR_FORMAT,
      "100 predictions rows for 24 positions of 4"),
  EV ("every-prediction-rank-huge", "a prediction of rank 2^31 - 1",
      "UPDATE predictions SET rank = 2147483647 WHERE run_id = 2 AND pos = 5 AND rank = 1",
      SC_ERR_FORMAT, "rank up to 2147483647"),
  EV ("every-prediction-logit-infinite", "a logit of infinity",
      "UPDATE predictions SET logit = 9e999 WHERE run_id = 1 AND pos = 0 AND rank = 0",
      SC_ERR_FORMAT, "has logit inf"),
  EV ("every-prediction-logit-null", "a logit that is NULL (allowed: not stored)",
      "UPDATE predictions SET logit = NULL WHERE run_id = 1 AND pos = 0 AND rank = 0",
      SC_OK, NULL),
  /* head scores */
  EV ("every-score-unkept-head", "a score of a head run 3 did not keep",
      "INSERT INTO head_scores (run_id, layer, head, metric, value) VALUES (3, 0, 1, "
      "'entropy', 0.5)", SC_ERR_FORMAT,
      "layer 0 head 1 has a score, but the run did not keep that head"),
  EV ("every-score-last-top-past", "a last top key of 99 in a 6-token run",
      "UPDATE head_scores SET value = 99 WHERE run_id = 2 AND layer = 0 AND head = 0 AND "
      "metric = 'last-top-key'", SC_ERR_FORMAT, "the last top key is 99"),
  { "every-score-duplicate", "head scores rebuilt without their unique index: a score twice",
      "DROP INDEX head_scores_run; INSERT INTO head_scores (run_id, layer, head, metric, value) "
      "SELECT run_id, layer, head, metric, 4 FROM head_scores WHERE run_id = 2 AND layer = 0 "
      "AND head = 0 AND metric = 'entropy'; CREATE INDEX head_scores_run ON head_scores "
      "(run_id, layer, head, metric) WHERE run_id IS NOT NULL",
    HOSTILE_AT_OPEN, 0, SC_ERR_FORMAT, "the definition of index 'head_scores_run' differs", 0, 0,
    HOSTILE_EVERY },
  /* studies */
  EV ("every-study-layer-outside", "a study head value of layer 99",
      "UPDATE study_heads SET layer = 99 WHERE study_id = 2 AND layer = 0", SC_ERR_FORMAT,
      "a value for head L99.H1, outside the model's 4 layers"),
  EV ("every-study-value-text", "a study value that is text",
      "UPDATE study_heads SET value = 'big' WHERE study_id = 2 AND layer = 0", SC_ERR_FORMAT,
      "head L0.H1 kl is not a finite REAL or NULL"),
  EV ("every-study-value-infinite", "a study value of infinity",
      "UPDATE study_series SET value = 9e999 WHERE study_id = 2 AND pos = 4", SC_ERR_FORMAT,
      "clean[4] is not a finite REAL or NULL"),
  EV ("every-study-value-null", "a study value that is NULL (reads as NaN)",
      "UPDATE study_heads SET value = NULL WHERE study_id = 2 AND layer = 0", SC_OK, NULL),
  EV ("every-study-metric-long", "a study metric name of 100 bytes",
      "UPDATE study_heads SET metric = hex (zeroblob (50)) WHERE study_id = 2 AND layer = 0",
      SC_ERR_FORMAT, "has a metric name Saccade does not write"),
  EV ("every-study-series-past-run", "an ablation study whose 'clean' series has 41 positions "
      "for a run of 24 tokens",
      "WITH RECURSIVE p (x) AS (SELECT 24 UNION ALL SELECT x + 1 FROM p WHERE x < 40) "
      "INSERT INTO study_series SELECT 2, 'clean', x, 0.5 FROM p", SC_OK, NULL),
  EV ("every-study-pos-huge", "a study series position of 99999999999",
      "UPDATE study_series SET pos = 99999999999 WHERE study_id = 2 AND pos = 4", SC_ERR_FORMAT,
      "clean has position 99999999999"),
  EV ("every-study-many-series", "a study of 100 series",
      "WITH RECURSIVE p (x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM p WHERE x < 99) "
      "INSERT INTO study_series SELECT 2, 's' || x, 0, 0.5 FROM p", SC_ERR_FORMAT,
      "in 101 series (at most 64 series"),
  EV ("every-study-params-huge", "a study's params of 5000 bytes",
      "UPDATE studies SET params = '{\"x\":\"' || hex (zeroblob (2500)) || '\"}' WHERE id = 2",
      SC_ERR_FORMAT, "params is not a text of at most 4096 bytes"),
  EV ("every-study-params-blob", "a study's params that are a BLOB",
      "UPDATE studies SET params = x'7b7d00ff' WHERE id = 2", SC_ERR_FORMAT,
      "params is not a text of at most 4096 bytes"),
  EV ("every-study-run-huge", "a study of run 1234567890123456789 (issue 25, item 6)",
      "UPDATE studies SET params = '{\"study\":1,\"run\":1234567890123456789,\"target\":null}' "
      "WHERE id = 2", SC_OK, NULL),
  EV ("every-study-duplicate", "study 2 twice, the copy with no rows",
      "INSERT INTO studies (kind, model_id, run_id, params, created, status) SELECT kind, "
      "model_id, run_id, params, created, status FROM studies WHERE id = 2", SC_OK, NULL),
  EV ("every-study-model-missing", "a study of model 99, which the store does not hold",
      "UPDATE studies SET model_id = 99 WHERE id = 2", SC_ERR_FORMAT, NULL),
  EV ("every-study-created-text", "a study created 'yesterday'",
      "UPDATE studies SET created = 'yesterday' WHERE id = 2", SC_ERR_FORMAT,
      "created is not an integer time"),
  EV ("every-study-writing", "study 3 left 'writing' (an interrupted study)",
      "UPDATE studies SET status = 'writing' WHERE id = 3", SC_OK, NULL),
  EV ("every-study-rows-orphan", "study rows of a study that does not exist",
      "INSERT INTO study_heads VALUES (77, 0, 0, 'kl', 1); INSERT INTO study_series VALUES "
      "(77, 'clean', 0, 1)", SC_OK, NULL),
  /* shard manifests and sentence studies (docs/cluster.md) */
  EV ("every-manifest-shards-max", "a manifest of \"shards\":2147483647 (issue 25, item 8)",
      "UPDATE studies SET params = replace (params, '\"shards\":2,', '\"shards\":2147483647,') "
      "WHERE id = 1; UPDATE study_series SET value = 2147483647 WHERE study_id = 1 AND pos = 1",
      SC_OK, NULL),
  EV ("every-manifest-index-outside", "a manifest of shard 5 of 2",
      "UPDATE study_series SET value = 5 WHERE study_id = 1 AND pos = 0", SC_OK, NULL),
  EV ("every-manifest-index-real", "a manifest of shard 0.5 of 2",
      "UPDATE study_series SET value = 0.5 WHERE study_id = 1 AND pos = 0", SC_OK, NULL),
  EV ("every-manifest-series-missing", "a manifest without its shard series",
      "DELETE FROM study_series WHERE study_id = 1", SC_OK, NULL),
  EV ("every-manifest-twice", "two manifests of the same study: shards 0 and 1 in one file",
      "INSERT INTO studies (kind, model_id, run_id, params, created, status) SELECT kind, "
      "model_id, run_id, params, created, status FROM studies WHERE id = 1; "
      "INSERT INTO study_series VALUES (4, 'shard', 0, 1), (4, 'shard', 1, 2)", SC_OK, NULL),
  EV ("every-manifest-params-other", "a manifest whose params are not a faithfulness manifest",
      "UPDATE studies SET params = '{\"verb\":\"faithfulness\"}' WHERE id = 1", SC_OK, NULL),
  EV ("every-sentence-line-huge", "a sentence study of \"line\":99999999999 (issue 25, item 8)",
      "UPDATE studies SET params = replace (params, '\"line\":3}', '\"line\":99999999999}') "
      "WHERE id = 3", SC_OK, NULL),
  EV ("every-sentence-line-zero", "a sentence study of \"line\":0",
      "UPDATE studies SET params = replace (params, '\"line\":3}', '\"line\":0}') WHERE id = 3",
      SC_OK, NULL),
#undef EV
#undef BAND_1_0_1
#undef OV_1_0_0

  /* --- harmless: every path works and returns the right values ------------------------ */
  { "status-bogus", "run 2's status is 'bogus' (CHECK bypassed): it is not a complete run",
    "UPDATE runs SET status = 'bogus' WHERE id = 2",
    HOSTILE_HIDDEN, R2, SC_ERR_NOT_FOUND, "has no run 2", 0, 0, 0 },
  { "orphan-rows", "tokens and heads of a run that does not exist (foreign keys off)",
    "INSERT INTO tokens VALUES (99, 0, 1, x'00'); "
    "INSERT INTO attention (run_id, layer, head, n_query, n_key, layout, dtype, data) "
    "VALUES (99, 0, 0, 1, 1, 'causal', 'f16', zeroblob (2))",
    HOSTILE_OK, 0, SC_OK, NULL, 0, 0, 0 },
  { "text-as-text", "run texts stored as TEXT instead of BLOB (same bytes)",
    "UPDATE runs SET text = CAST (text AS TEXT)", HOSTILE_OK, 0, SC_OK, NULL, 0, 0, 0 },
  { "journal-delete", "the store switched to a rollback journal (one file to share)",
    "PRAGMA journal_mode = DELETE", HOSTILE_OK, 0, SC_OK, NULL, 0, 0, 0 },
  { "sequence-max", "sqlite_sequence at 2^63 - 1: the next run has no id",
    "UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'runs'",
    HOSTILE_OK, 0, SC_OK, NULL, 0, 0, HOSTILE_SEQUENCE_MAX },
  /* the SQL is a format for the size (hostile_huge_bytes) */
  { "text-huge", "a 300 MB text cell in run 2",
    "UPDATE runs SET text = zeroblob (%" G_GSIZE_FORMAT ") WHERE id = 2",
    HOSTILE_OK, 0, SC_OK, NULL, 0, 0, HOSTILE_HUGE_TEXT },
};

const HostileKind *
hostile_kinds (gsize *n)
{
  *n = G_N_ELEMENTS (kinds);
  return kinds;
}

gsize
hostile_huge_bytes (void)
{
  const char *s = g_getenv ("SC_HOSTILE_HUGE_BYTES");
  return s != NULL && *s != '\0' ? (gsize) g_ascii_strtoull (s, NULL, 10) : 300000000u;
}

void
hostile_base (const char *path)
{
  ScStoreOptions opt = { .writable = TRUE };
  ScStore *s = NULL;
  ScError err = { 0 };

  if (sc_store_open (path, &opt, &s, &err) != SC_OK
      || store_fake_capture (s, 1, 4, TRUE, 0, 0, &err) != 1
      || store_fake_capture (s, 2, 6, TRUE, 0, 0, &err) != 2
      || store_fake_capture (s, 3, 5, FALSE, 1, 0, &err) != 3)
    g_error ("building the base store %s: %s", path, err.message);
  sc_store_close (s);
}

const guint8 HOSTILE_EVERY_KEEP[12] = { 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0 };

/* The faithfulness study's dataset (a SHA-256 in hex) and settings, as app/core's
 * saccade-dataset.c writes them. */
#define EVERY_DATASET "5ac5ade5ac5ade5ac5ade5ac5ade5ac5ade5ac5ade5ac5ade5ac5ade5ac5ade0"
#define EVERY_SETTINGS "{\"study\":2,\"metric\":\"tv\",\"kind\":\"mask\",\"top_k\":3," \
                       "\"target\":null,\"gradients\":null}"

void
hostile_base_every (const char *path)
{
  static const StoreFakeRun runs[HOSTILE_EVERY_RUNS] = {
    { 11, 24, TRUE, 8, NULL, 0, 4 },
    { 12, 6, TRUE, 0, NULL, 0, 2 },
    { 13, 5, TRUE, 0, HOSTILE_EVERY_KEEP, 0, 0 },
  };
  ScStoreOptions opt = { .writable = TRUE };
  ScStore *s = NULL;
  ScStoreStudy *st = NULL;
  ScStoreModel m;
  ScError err = { 0 };
  gboolean ok;

  store_fake_model (&m, 0);
  ok = sc_store_open (path, &opt, &s, &err) == SC_OK
       && sc_store_shard_mark (s, &m, "{\"verb\":\"faithfulness\",\"dataset\":\"" EVERY_DATASET
                               "\",\"sentences\":4,\"shards\":2,\"settings\":" EVERY_SETTINGS "}",
                               0, 2, &err) == SC_OK;
  for (int i = 0; ok && i < HOSTILE_EVERY_RUNS; i++)
    ok = store_fake_capture_run (s, &runs[i], 0, &err) == i + 1;
  ok = ok && sc_store_study_begin (s, "ablate-heads", &m, "{\"study\":1,\"run\":1,\"target\":null}",
                                   &st, &err) == SC_OK
       && sc_store_study_add_head (st, 0, 1, "kl", 0.25, &err) == SC_OK
       && sc_store_study_add_head (st, 1, 2, "kl", 0.5, &err) == SC_OK;
  for (int pos = 0; ok && pos < 24; pos++)
    ok = sc_store_study_add_series (st, "clean", pos, 1.0 / (1 + pos), &err) == SC_OK;
  ok = ok && sc_store_study_commit (st, NULL, &err) == SC_OK;
  ok = ok && sc_store_study_begin (s, "faithfulness", &m, "{\"study\":2,\"run\":null,\"ids\":\""
                                   EVERY_DATASET "\",\"metric\":\"tv\",\"kind\":\"mask\","
                                   "\"top_k\":3,\"target\":null,\"gradients\":null,\"dataset\":\""
                                   EVERY_DATASET "\",\"line\":3}", &st, &err) == SC_OK
       && sc_store_study_add_head (st, 1, 2, "tau", 0.5, &err) == SC_OK
       && sc_store_study_add_series (st, "loo", 0, 0.125, &err) == SC_OK
       && sc_store_study_add_series (st, "loo", 1, 0.25, &err) == SC_OK
       && sc_store_study_commit (st, NULL, &err) == SC_OK;
  if (!ok)
    g_error ("building the every-table base store %s: %s", path, err.message);
  sc_store_close (s);
}

const char *
hostile_base_of (const HostileKind *kind, const char *base, const char *every)
{
  return kind->flags & HOSTILE_EVERY ? every : base;
}

gboolean
hostile_exec (const char *path, const char *sql, char **why)
{
  sqlite3 *db = NULL;
  char *msg = NULL;
  int rc;

  *why = NULL;
  rc = sqlite3_open (path, &db);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, "PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON",
                       NULL, NULL, &msg);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK)
    *why = g_strdup_printf ("%s: %s", sql, msg != NULL ? msg : sqlite3_errmsg (db));
  sqlite3_free (msg);
  sqlite3_close (db);
  return rc == SQLITE_OK;
}

gboolean
hostile_build (const HostileKind *kind, const char *base, const char *path, char **why)
{
  g_autofree char *bytes = NULL, *sql = NULL;
  gsize len = 0;

  *why = NULL;
  if (!g_file_get_contents (base, &bytes, &len, NULL) || !g_file_set_contents (path, bytes, (gssize) len, NULL))
    g_error ("copying %s to %s", base, path);
  if (kind->flags & HOSTILE_HUGE_TEXT)
    {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
      sql = g_strdup_printf (kind->sql, hostile_huge_bytes ());
#pragma GCC diagnostic pop
    }
  else
    sql = g_strdup (kind->sql);
  if (hostile_exec (path, sql, why))
    return TRUE;
  if (!(kind->flags & HOSTILE_OPTIONAL))
    g_error ("building the hostile store '%s': %s", kind->name, *why);
  return FALSE;
}
