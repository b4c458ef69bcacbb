/* saccade-cli.h — the `saccade <verb>` command line: shared option handling and output.
 *
 * Every verb prints human text by default and JSON (through json-glib) with --json. Verbs
 * load the model named by -m/--model, else $SACCADE_MODEL, else the default model fetched
 * by data/fetch-model.sh. This is the GObject side: engine errors become GErrors here.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "engine/sc-forward.h"
#include "engine/sc-model.h"

G_BEGIN_DECLS

#define SACCADE_ERROR (saccade_error_quark ())
GQuark saccade_error_quark (void);

/* Options every model verb accepts. */
typedef struct {
  char *model_path;
  gboolean json;
  int threads;
  gboolean reference; /* use the scalar reference backend */
} SaccadeCliCommon;

/* Adds -m/--model, --json, --threads, --reference to @group. */
void saccade_cli_common_add (GOptionContext *ctx, SaccadeCliCommon *common);

/* Resolves the model path: option, $SACCADE_MODEL, installed/source default. Never NULL. */
const char *saccade_cli_model_path (const SaccadeCliCommon *common);

/* Loads the model named by @common; errors carry the engine's message. */
ScModel *saccade_cli_load_model (const SaccadeCliCommon *common, GError **error);

/* Makes the backend @common asks for. */
ScBackend *saccade_cli_backend (const SaccadeCliCommon *common, GError **error);

/* Sets @error from an engine error. */
void saccade_set_error_from_sc (GError **error, const ScError *err);

/* Prints @builder's root as pretty JSON on stdout. */
void saccade_cli_print_json (JsonBuilder *builder);

/* Escapes token bytes for a terminal: printable UTF-8 kept, \n \t \r shown as escapes,
 * other control bytes and invalid UTF-8 as \xNN. Caller frees. */
char *saccade_token_display (const char *bytes, gsize len);

/* Tokenizes @text (parse_special as asked); returns ids; errors name the problem. */
GArray *saccade_cli_tokenize (ScModel *model, const char *text, gssize len,
                              gboolean parse_special, GError **error);

/* Wraps @user_text in the model's chat template (ChatML as SmolLM2 uses). */
char *saccade_cli_chat_prompt (ScModel *model, const char *user_text, GError **error);

/* Per-head summaries of one run, as `saccade demo` and `saccade capture --summary` print
 * them (saccade-cli-model.c; definitions in docs/metrics.md). Each array is
 * (n_layers * n_heads), indexed layer * n_heads + head. */
typedef struct {
  int n_layers, n_heads, n;
  double *mean_entropy;   /* mean over rows of -sum a ln a (nats) */
  double *last_entropy;   /* entropy of the last row */
  double *sink;           /* mean attention to position 0 */
  double *prev;           /* mean A[i, i-1], i >= 1 */
  int *last_top;          /* argmax key of the last row */
  double *last_top_w;
} SaccadeHeadSummary;

void saccade_head_summary_init (SaccadeHeadSummary *s, int n_layers, int n_heads, int n);
/* An ScObserver.observe that fills the summary passed as @user. */
bool saccade_head_summary_observe (void *user, int layer, int head, const float *probs, int n_q,
                                   int n_k);
void saccade_head_summary_clear (SaccadeHeadSummary *s);

/* Parses @ctx; on failure prints "saccade: MESSAGE" to stderr and returns FALSE. */
gboolean saccade_cli_parse_options (GOptionContext *ctx, int *argc, char ***argv);

/* Prints "saccade: MESSAGE" to stderr, frees @error (taken), returns 1 (the exit status). */
int saccade_cli_fail (GError *error);

/* The median of @v (sorts it in place); @n >= 1. Benchmarks report medians. */
double saccade_median (double *v, int n);

/* Verbs: each returns the process exit status. */
int saccade_cmd_info (int argc, char **argv);
int saccade_cmd_tokenize (int argc, char **argv);
int saccade_cmd_generate (int argc, char **argv);
int saccade_cmd_demo (int argc, char **argv);
int saccade_cmd_bench (int argc, char **argv);
/* The capture store's verbs (saccade-cli-store.c, saccade-bench-store.c). */
int saccade_cmd_capture (int argc, char **argv);
int saccade_cmd_runs (int argc, char **argv);
int saccade_cmd_show (int argc, char **argv);
int saccade_cmd_export (int argc, char **argv);
int saccade_cmd_rm (int argc, char **argv);
int saccade_cmd_bench_store (int argc, char **argv);

G_END_DECLS
