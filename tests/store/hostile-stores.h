/* hostile-stores.h — capture stores edited into hostile shapes, for test-store-hostile.c and
 * for hostile-stores (the program that writes them all into a folder, so that the CLI's
 * reading verbs can be run over the same files).
 *
 * Each kind starts from the same real store that Saccade wrote (three fake runs,
 * store-fake.c) and is edited with SQL only, through the sqlite3 C API, the way someone
 * with the sqlite3 tool could: foreign keys off, CHECK constraints ignored, the schema
 * table written. Each kind says what reading it must yield.
 */
#pragma once

#include <glib.h>

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* The base store: run 1 (seed 1, 4 tokens, causal, model 1), run 2 (seed 2, 6 tokens,
 * causal, model 1), run 3 (seed 3, 5 tokens, full, model 2); 4 layers x 3 heads each. */
#define HOSTILE_RUNS 3

/* Where reading a kind fails. */
typedef enum {
  HOSTILE_OK,         /* every reading path returns SC_OK and the right values */
  HOSTILE_AT_OPEN,    /* opening (read-only and writable) fails */
  HOSTILE_AT_RUN,     /* listing fails, and getting each run in bad_runs */
  HOSTILE_AT_TOKENS,  /* reading the tokens of each run in bad_runs fails */
  HOSTILE_AT_HEAD,    /* reading head (layer, head) of each run in bad_runs fails */
  HOSTILE_AT_HEADS,   /* reading every head of each run in bad_runs fails */
  HOSTILE_HIDDEN,     /* the runs in bad_runs are not there (SC_ERR_NOT_FOUND, not listed) */
  HOSTILE_SOMEWHERE,  /* (HOSTILE_EVERY kinds) every reading path returns SC_OK or a clean
                       * failure, and with a needle, some call fails with status and needle */
} HostileWhere;

typedef struct {
  const char *name;       /* the file is NAME.sqlite */
  const char *what;       /* one line for people */
  const char *sql;        /* run with foreign_keys OFF, ignore_check_constraints ON */
  HostileWhere where;
  guint bad_runs;         /* bit r for run r */
  ScStatus status;        /* of the failing calls */
  const char *needle;     /* in their messages */
  int layer, head;        /* HOSTILE_AT_HEAD */
  guint flags;            /* HOSTILE_* below */
} HostileKind;

/* The kind needs a module that this SQLite may lack (FTS5): skip it when building fails. */
#define HOSTILE_OPTIONAL 1u
/* Run 2's text is huge: check its length rather than its bytes. */
#define HOSTILE_HUGE_TEXT 2u
/* The store's AUTOINCREMENT is exhausted: a capture must fail with SC_ERR_RANGE. */
#define HOSTILE_SEQUENCE_MAX 4u
/* Built from the every-table base (hostile_base_every), not the base. */
#define HOSTILE_EVERY 8u

/* The size of the huge text cell: 300 MB, or $SC_HOSTILE_HUGE_BYTES. */
gsize hostile_huge_bytes (void);

const HostileKind *hostile_kinds (gsize *n);

/* Writes the base store at @path (which must not exist). */
void hostile_base (const char *path);

/* The every-table base: a row in every table of the schema, for the HOSTILE_EVERY kinds.
 * Run 1: 24 tokens, a sliding window of 8 on layers 0 and 2 (layer_windows, band heads in
 * attention_bands), 4 predictions a position; run 2: 6 tokens, causal, 2 predictions a
 * position; run 3: 5 tokens, chosen heads (HOSTILE_EVERY_KEEP). Overviews and head scores
 * with every run. Study 1: a faithfulness shard manifest (shard 0 of 2); study 2: an
 * ablate-heads study of run 1 (two head values, a 'clean' series of 24 positions); study 3:
 * a faithfulness sentence study (line 3 of the manifest's dataset). Model: store_fake_model
 * (variant 0). */
#define HOSTILE_EVERY_RUNS 3
void hostile_base_every (const char *path);
/* Run 3's heads: layer * 3 + head. */
extern const guint8 HOSTILE_EVERY_KEEP[12];

/* The base @kind starts from: @every for HOSTILE_EVERY kinds, else @base. */
const char *hostile_base_of (const HostileKind *kind, const char *base, const char *every);

/* Copies the base store at @base to @path and applies @kind's edits. Returns FALSE (with
 * *@why set, g_free) when an optional kind cannot be built here. */
gboolean hostile_build (const HostileKind *kind, const char *base, const char *path, char **why);

/* Runs @sql on @path through a plain sqlite3 connection with foreign keys off and CHECK
 * constraints ignored. FALSE with *@why (g_free) when SQLite refuses. */
gboolean hostile_exec (const char *path, const char *sql, char **why);

G_END_DECLS
