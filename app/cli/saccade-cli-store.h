/* saccade-cli-store.h — helpers the capture store's verbs share (saccade-cli-store.c:
 * capture, runs, rm; saccade-cli-show.c: show, export). Command line only: what the
 * window shares with these verbs lives in app/core/ (the JSON writer in saccade-json.h,
 * the exporter in saccade-export.h, text formatting in saccade-format.h).
 */
#pragma once

#include "app/cli/saccade-cli.h"

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* Prints "saccade: MESSAGE" for @err and returns 1 (the exit status). */
int saccade_store_cli_fail (const ScError *err);

/* Parses a run id (a positive integer); prints why not and returns FALSE otherwise. */
gboolean saccade_store_cli_run_id (const char *s, gint64 *id);

/* A token's bytes for a terminal: control bytes and invalid UTF-8 escaped. Caller frees. */
char *saccade_store_cli_piece (const ScStoreToken *t);

/* Prints @s left-aligned in @width terminal columns (wide characters count two). */
void saccade_store_cli_print_padded (const char *s, int width);

/* "1.2 MB" (SI units). Caller frees. */
char *saccade_store_cli_bytes (guint64 bytes);

G_END_DECLS
