/* saccade-cli-store.h — helpers the capture store's verbs share (saccade-cli-store.c:
 * capture; saccade-cli-runs.c: runs, rm; saccade-cli-show.c: show, export). Command line
 * only: what the window shares with these verbs lives in app/core/ (the JSON writer in
 * saccade-json.h, the exporter in saccade-export.h, text formatting in saccade-format.h).
 */
#pragma once

#include "app/cli/saccade-cli.h"

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* The option every store verb takes: --db FILE into @db (a char *). GOptionEntry
 * initialiser. (Their --json is SACCADE_CLI_JSON_OPTION.) */
#define SACCADE_STORE_CLI_DB_OPTION(db)                                                      \
  { "db", 0, 0, G_OPTION_ARG_FILENAME, (db),                                                 \
    "Capture database (default: $XDG_DATA_HOME/saccade/captures.sqlite)", "FILE" }

/* --recompute into @recompute (a gboolean): the verbs whose study is stored and reused
 * compute it again instead. GOptionEntry initialiser. */
#define SACCADE_STORE_CLI_RECOMPUTE_OPTION(recompute)                                        \
  { "recompute", 0, 0, G_OPTION_ARG_NONE, (recompute), "compute even if stored", NULL }

/* Prints "saccade: MESSAGE" for @err and returns 1 (the exit status). */
int saccade_store_cli_fail (const ScError *err);

/* Parses a run id (a positive integer); prints why not and returns FALSE otherwise. */
gboolean saccade_store_cli_run_id (const char *s, gint64 *id);

/* Parses @ctx, then the one run id that @verb takes as its only argument; prints why not
 * ("saccade: VERB takes one run id …") and returns FALSE otherwise (exit status 2). */
gboolean saccade_store_cli_parse_run (GOptionContext *ctx, int *argc, char ***argv,
                                      const char *verb, gint64 *run);

/* Prints @s left-aligned in @width terminal columns (wide characters count two). */
void saccade_store_cli_print_padded (const char *s, int width);

/* "1.2 MB" (SI units). Caller frees. */
char *saccade_store_cli_bytes (guint64 bytes);

G_END_DECLS
