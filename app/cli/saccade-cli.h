/* saccade-cli.h — the `saccade <verb>` command line: shared option handling and output.
 *
 * Every verb parses its options, computes a result struct and prints it as human text, or
 * as JSON through the one writer of app/core/saccade-json.h with --json. Verbs
 * load the model named by -m/--model, else $SACCADE_MODEL, else the default model fetched
 * by data/fetch-model.sh. This is the GObject side: engine errors become GErrors here.
 */
#pragma once

#include <glib.h>
#include <math.h>
#include <json-glib/json-glib.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-job.h"
#include "app/core/saccade-json.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "engine/forward/sc-backward.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* Options every model verb accepts. */
typedef struct {
  char *model_path;
  gboolean json;
  int threads;
  char *backend;      /* --backend NAME (saccade_backend_choices()), or NULL: auto */
  gboolean reference; /* --reference: the same as --backend cpu-ref */
  unsigned needs;     /* ScBackendCap flags the verb uses (set by the verb, not an option):
                       * auto passes over a backend that lacks one */
} SaccadeCliCommon;

/* Adds -m/--model, --json, --threads, --backend, --reference to @group. */
void saccade_cli_common_add (GOptionContext *ctx, SaccadeCliCommon *common);

/* Frees what option parsing stored in @common. */
void saccade_cli_common_clear (SaccadeCliCommon *common);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SaccadeCliCommon, saccade_cli_common_clear)

/* Options several verbs take with the same meaning, as GOptionEntry initialisers: --json
 * into @json (a gboolean; saccade_cli_common_add's, the store verbs', merge's, bench-draw's)
 * and --threads N into @threads (an int; saccade_cli_common_add's and compare's). */
#define SACCADE_CLI_JSON_OPTION(json)                                                        \
  { "json", 0, 0, G_OPTION_ARG_NONE, (json), "Print JSON", NULL }
#define SACCADE_CLI_THREADS_OPTION(threads)                                                  \
  { "threads", 0, 0, G_OPTION_ARG_INT, (threads), "CPU threads (default: all cores)", "N" }

/* The model path (saccade_model_path() of -m). Never NULL. */
const char *saccade_cli_model_path (const SaccadeCliCommon *common);

/* The backend name @common asks for ("auto" without --backend or --reference); NULL with
 * @error set for an unknown name, or --reference with a --backend other than cpu-ref. */
const char *saccade_cli_backend_name (const SaccadeCliCommon *common, GError **error);

/* Loads the model named by @common (after checking the backend's name, so that a typo
 * fails before the model loads); errors carry the engine's message. */
ScModel *saccade_cli_load_model (const SaccadeCliCommon *common, GError **error);

/* Makes the backend @common asks for (saccade_backend_new()). When "auto" settles on the
 * CPU it prints one notice line on stderr saying why, if the user asked for auto or this
 * saccade has CUDA built in (a CPU-only build's default is the CPU; nothing to say). */
ScBackend *saccade_cli_backend (const SaccadeCliCommon *common, GError **error);

/* A backend as @common asks and a session of @model over it. */
typedef struct {
  ScBackend *backend;
  ScSession *session;
} SaccadeCliSession;

/* Opens @s; on failure @s holds nothing and @error says why. */
gboolean saccade_cli_session_open (SaccadeCliSession *s, const SaccadeCliCommon *common,
                                   ScModel *model, GError **error);
/* Frees what @s holds; a cleared or failed @s is a no-op. */
void saccade_cli_session_close (SaccadeCliSession *s);

/* The contents of @file, or of stdin when @file is "-"; @len receives the length. Caller
 * frees; NULL with @error set when the file cannot be read. */
char *saccade_cli_read_file (const char *file, gsize *len, GError **error);

/* Parses @ctx; on failure prints "saccade: MESSAGE" to stderr and returns FALSE. */
gboolean saccade_cli_parse_options (GOptionContext *ctx, int *argc, char ***argv);

/* The same for a verb whose only option is --json (into @json): adds it to @ctx, then
 * parses. */
gboolean saccade_cli_parse_json_only (GOptionContext *ctx, gboolean *json, int *argc,
                                      char ***argv);

/* Prints "saccade: MESSAGE" to stderr, frees @error (taken), returns 1 (the exit status). */
int saccade_cli_fail (GError *error);
/* The same for an engine error: "saccade: MESSAGE", returns 1. */
int saccade_cli_fail_sc (const ScError *err);


/* What a study measures, as the verbs that measure a token take it: --target A and
 * --contrast B, each a token id or the text of one token. With B the measure is
 * logit(A) − logit(B), which is also ln p(A) − ln p(B) (the log-sum-exp cancels). */
typedef struct {
  char *target;
  char *contrast;
} SaccadeCliTarget;

/* The two GOptionEntry rows of @t (a SaccadeCliTarget *); @measured completes "the token
 * ..." (e.g. "whose logit is attributed"). */
#define SACCADE_CLI_TARGET_OPTIONS(t, measured)                                                { "target", 0, 0, G_OPTION_ARG_STRING, &(t)->target,                                         "the token " measured ": an id or the text of one token (default: the clean top-1)",         "TOKEN" },                                                                                 { "contrast", 0, 0, G_OPTION_ARG_STRING, &(t)->contrast,                                     "a second token B: measure logit(target) - logit(B), the log-probability difference "       "(default: none)", "TOKEN" }

/* Parses @t's texts against @model's vocabulary (saccade_parse_token): −1 for one not
 * given; a contrast equal to the named target is refused (G_OPTION_ERROR_BAD_VALUE). */
gboolean saccade_cli_target_parse (ScModel *model, const SaccadeCliTarget *t, int *target,
                                   int *contrast, GError **error);
void saccade_cli_target_clear (SaccadeCliTarget *t);

/* How a verb that writes a figure exports it (SaccadeFigureExportOptions): the same
 * options on every such verb. Doubles start as NAN ("not given") so that a given 0 is
 * refused, not ignored: initialise with SACCADE_CLI_FIGURE_INIT. */
typedef struct {
  double width_mm, width_in, dpi, font_size;
  char *font, *title, *labels, *preset;
  gboolean no_title;
} SaccadeCliFigure;

#define SACCADE_CLI_FIGURE_INIT \
  { .width_mm = NAN, .width_in = NAN, .dpi = NAN, .font_size = NAN }

/* The GOptionEntry rows of @o (a SaccadeCliFigure *). */
#define SACCADE_CLI_FIGURE_OPTIONS(o) \
  { "preset", 0, 0, G_OPTION_ARG_STRING, &(o)->preset, \
    "Figure size preset: journal-single (89 mm wide) or journal-double (183 mm); 300 dpi, " \
    "8 pt text (the options below override it)", "NAME" }, \
  { "width-mm", 0, 0, G_OPTION_ARG_DOUBLE, &(o)->width_mm, \
    "Figure width in millimetres (the height follows; default: the figure's own)", "MM" }, \
  { "width-in", 0, 0, G_OPTION_ARG_DOUBLE, &(o)->width_in, "Figure width in inches", "IN" }, \
  { "dpi", 0, 0, G_OPTION_ARG_DOUBLE, &(o)->dpi, \
    "PNG resolution, written into the file (default 144)", "DPI" }, \
  { "font", 0, 0, G_OPTION_ARG_STRING, &(o)->font, \
    "Figure font family (default: Cantarell, Noto Sans)", "FAMILY" }, \
  { "font-size", 0, 0, G_OPTION_ARG_DOUBLE, &(o)->font_size, \
    "Figure text size in points at the printed width (default 10)", "PT" }, \
  { "title", 0, 0, G_OPTION_ARG_STRING, &(o)->title, "Figure title instead of the default", \
    "TEXT" }, \
  { "no-title", 0, 0, G_OPTION_ARG_NONE, &(o)->no_title, "Figure without a title", NULL }, \
  { "labels", 0, 0, G_OPTION_ARG_STRING, &(o)->labels, \
    "Token labels: visible-space (spaces at a token's ends as \"␣\", default) or plain", \
    "STYLE" }

/* Whether any of @o's options was given. */
gboolean saccade_cli_figure_given (const SaccadeCliFigure *o);
/* @o as export options in @out (borrowing @o's strings): the preset first, then the
 * options given over it. A value out of range, an unknown preset or label style, both
 * widths, or --title with --no-title is G_OPTION_ERROR_BAD_VALUE naming the option. */
gboolean saccade_cli_figure_parse (const SaccadeCliFigure *o, SaccadeFigureExportOptions *out,
                                   GError **error);
void saccade_cli_figure_clear (SaccadeCliFigure *o);
/* For a verb: refuses figure options without a figure (@writes_figure FALSE; @figure_opt
 * names the option that asks for one, e.g. "--figure") and parses them into @out; on
 * failure prints "saccade: MESSAGE", sets *rc to 2 and returns FALSE. */
gboolean saccade_cli_figure_check (const SaccadeCliFigure *o, gboolean writes_figure,
                                   const char *figure_opt, SaccadeFigureExportOptions *out,
                                   int *rc);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SaccadeCliFigure, saccade_cli_figure_clear)

/* The median of @v (sorts it in place); @n >= 1. Benchmarks report medians. */
double saccade_median (double *v, int n);

/* A sweep's --bench (ablate, induction): the sweep timed against the plain passes it
 * replaces. One timing is a member @name holding the median of its repeats in seconds; one
 * ratio is a member @name holding times[@num].seconds / times[@den].seconds. */
typedef struct {
  const char *name;
  double seconds;
} SaccadeBenchTime;
typedef struct {
  const char *name;
  int num, den; /* indices into the times */
} SaccadeBenchRatio;

/* Writes "repeats": @repeats, then the @n_times timings, then the @n_ratios ratios, as
 * members of the object @b is in (the caller writes the model and the sizes first). */
void saccade_json_bench_sweep (JsonBuilder *b, int repeats, const SaccadeBenchTime *times,
                               int n_times, const SaccadeBenchRatio *ratios, int n_ratios);

/* The benchmarks' --sizes: the prompt lengths to time, comma-separated. */
#define SACCADE_BENCH_SIZES_DEFAULT "128,512"

/* The prose of the prompt-length benchmarks' prompts (bench-analysis, bench-gradients; `saccade
 * bench` goes on with two sentences more): realistic text about attention, repeated to length. */
#define SACCADE_BENCH_PROSE                                                                   \
  "Attention in a transformer is a way for each position in a sequence to gather information " \
  "from the other positions. Every token is turned into a query, a key and a value; the query " \
  "is compared with all earlier keys, the scores are scaled and turned into weights by a "      \
  "softmax, and the output is the weighted average of the values. "

/* What the prompt-length benchmarks (saccade-bench.c, saccade-bench-analysis.c,
 * saccade-bench-gradients.c) share: the options every one takes, then the model, one
 * prompt long enough for every size and a session to run it in. Each verb times its own
 * work on them.
 * Lifetime: { .reps = DEFAULT } → saccade_bench_parse → saccade_bench_open →
 * saccade_bench_clear (g_auto). */
typedef struct {
  SaccadeCliCommon common; /* threads: all cores once opened, when not given */
  char *sizes;             /* --sizes, or NULL: SACCADE_BENCH_SIZES_DEFAULT */
  int reps;                /* --reps: the verb's default before parsing, at least 1 after */
  int *lengths;            /* (n_lengths) the prompt lengths --sizes names, once parsed */
  int n_lengths;
  int longest; /* the largest of lengths */
  ScModel *model;
  GArray *ids;                /* int32_t, no BOS: the prompt, at least longest ids */
  SaccadeCliSession session; /* on model, with the backend the common options name */
  int weight_cache_mb;        /* --weight-cache: the cpu backend's budget of weights kept
                               * decoded, in MiB; G_MININT: its default */
} SaccadeBench;

/* Parses the command line of a benchmark whose summary line is @summary: -n/--sizes,
 * -r/--reps with the help @reps_help (it names the verb's default), the verb's own @entries
 * (NULL: none), then saccade_cli_common_add's, in that order (the order --help lists them
 * in); raises --reps to at least 1 and reads --sizes, each size at least @min tokens. FALSE
 * (exit status 2) after printing "saccade: MESSAGE" for a bad option, or "saccade: bad size
 * 'S'" (and " (at least MIN tokens)" when @min > 1). */
gboolean saccade_bench_parse (SaccadeBench *bench, const char *summary, const char *reps_help,
                              const GOptionEntry *entries, int min, int *argc, char ***argv);

/* Sets the thread count (all cores unless --threads says), loads the model -m names,
 * tokenizes @prose, repeated, into at least longest ids and opens the session (set
 * common.needs before). FALSE with @error set when any of them fails. */
gboolean saccade_bench_open (SaccadeBench *bench, const char *prose, GError **error);

/* Frees what @bench holds (options, lengths, session, model, prompt); a zeroed @bench is a
 * no-op. The verb frees what it made on the session first. */
void saccade_bench_clear (SaccadeBench *bench);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SaccadeBench, saccade_bench_clear)

/* "model NAME, BACKEND backend, T threads; medians of R rounds" and a newline: the first
 * line the prompt-length benchmarks print, once @bench is open. */
void saccade_bench_print_header (const SaccadeBench *bench);

/* The monotonic clock in seconds, what the benchmarks time with. */
double saccade_bench_now (void);

/* What a timed way runs on: the open benchmark's session and model, the first @n ids of its
 * prompt, a buffer of n_vocab logits, and a gradient context on the session when the verb
 * times gradients (else NULL). */
typedef struct {
  ScSession *session;
  const ScModel *model;
  const int32_t *ids;
  int n;
  float *logits;
  ScGrad *grad;
} SaccadeBenchPass;

/* One way of @n_ways a benchmark compares, @which from 0: runs it once; FALSE with @err
 * set when it fails. */
typedef gboolean (*SaccadeBenchWay) (int which, gpointer data, ScError *err);

/* Times @n_ways ways in @reps rounds, each round running every way once in an order
 * rotated by the round (way (r + k) % n_ways k-th in round r), so drift during a round
 * weighs on every way alike; way w's seconds of round r go to @t[w * reps + r] (@t holds
 * n_ways × reps). FALSE with @err set at the first way that fails. */
gboolean saccade_bench_rotate (int reps, int n_ways, SaccadeBenchWay way, gpointer data,
                               double *t, ScError *err);

/* A benchmark's prompt: the ids (int32_t, no BOS) of @prose repeated until there are at
 * least @n of them (realistic text rather than one token again and again). Caller frees;
 * NULL with @error when it does not tokenize. */
GArray *saccade_bench_prompt (ScModel *model, const char *prose, int n, GError **error);

/* Prints the line that says where a stored study's numbers came from: "reused study ID from
 * DB_PATH (--recompute to compute again)" when @reused, else "computed now in S s, stored
 * as study ID in DB_PATH" when @study_id > 0, else "computed now in S s (not stored)" or
 * "(not stored: WARNING)"; S = @seconds with @decimals digits. */
void saccade_cli_print_study_source (gboolean reused, gint64 study_id, double seconds,
                                     int decimals, const char *db_path, const char *warning);

/* Verbs: each returns the process exit status. */
int saccade_cmd_info (int argc, char **argv);
int saccade_cmd_models (int argc, char **argv);
int saccade_cmd_tokenize (int argc, char **argv);
int saccade_cmd_generate (int argc, char **argv);
int saccade_cmd_demo (int argc, char **argv);
int saccade_cmd_bench (int argc, char **argv);
/* `saccade study KIND RUN [--OPTION VALUE...]`: any study of a run from the table of kinds,
 * its options those of the kind's option table (engine/study/sc-study.h), printed by the
 * kind's outputs file (app/core/studies/), or from its stored form when it has none;
 * `saccade study --list` lists the kinds and their options (saccade-cli-study.c). */
int saccade_cmd_study (int argc, char **argv);
/* Ablation studies of a stored run (saccade-cli-ablate.c). */
int saccade_cmd_ablate (int argc, char **argv);
/* The induction-head detector (saccade-cli-induction.c). */
int saccade_cmd_induction (int argc, char **argv);
/* The capture store's verbs (saccade-cli-store.c, saccade-bench-store.c). */
int saccade_cmd_capture (int argc, char **argv);
int saccade_cmd_runs (int argc, char **argv);
int saccade_cmd_show (int argc, char **argv);
int saccade_cmd_export (int argc, char **argv);
int saccade_cmd_rm (int argc, char **argv);
int saccade_cmd_bench_store (int argc, char **argv);
int saccade_cmd_bench_compress (int argc, char **argv);
/* Head analysis over stored runs (saccade-cli-heads.c, saccade-bench-analysis.c). */
int saccade_cmd_heads (int argc, char **argv);
int saccade_cmd_compare (int argc, char **argv);
/* `compare --model A --model B`: two models' heads side by side on a text given as @text,
 * read from @file, the text of stored run @run (> 0) of the store @db, or as the arguments
 * @argv[1..], on the backend named @backend (NULL: auto) (saccade-cli-compare-models.c). */
int saccade_cli_compare_models (char **models, const char *text, const char *file,
                                gint64 run, int argc, char **argv, const char *db,
                                int seq_len, int n_seeds, int threads, const char *backend,
                                gboolean json);
int saccade_cmd_rollout (int argc, char **argv);
int saccade_cmd_bench_analysis (int argc, char **argv);
/* Gradients against the forward pass (saccade-bench-gradients.c). */
int saccade_cmd_bench_gradients (int argc, char **argv);
int saccade_cmd_bench_patch (int argc, char **argv);
int saccade_cmd_bench_mixing (int argc, char **argv);

/* Direct logit attribution of a stored run, and the reference means (saccade-cli-dla.c). */
int saccade_cmd_dla (int argc, char **argv);
int saccade_cmd_means (int argc, char **argv);

G_END_DECLS

G_BEGIN_DECLS
/* Attention against leave-one-out importance (saccade-cli-faithfulness.c). */
int saccade_cmd_faithfulness (int argc, char **argv);
/* Gradient attributions of a stored run (saccade-cli-attribute.c). */
int saccade_cmd_attribute (int argc, char **argv);
/* Adversarial attention of a stored run (saccade-cli-adversarial.c). */
int saccade_cmd_adversarial (int argc, char **argv);
/* The Learn page's arithmetic: `saccade learn TOPIC` (saccade-cli-learn.c). */
int saccade_cmd_learn (int argc, char **argv);
/* One head's scores from its query and key vectors (saccade-cli-neuron.c). */
int saccade_cmd_neuron (int argc, char **argv);
/* Activation patching of one stored pair or a file of pairs (saccade-cli-patch.c). */
int saccade_cmd_patch (int argc, char **argv);
/* Norm-based attention of a stored run (saccade-cli-norms.c). */
int saccade_cmd_norms (int argc, char **argv);
/* Context mixing (value zeroing, ALTI) of a stored run (saccade-cli-mixing.c). */
int saccade_cmd_mixing (int argc, char **argv);
/* Shard databases merged into one (saccade-cli-merge.c). */
int saccade_cmd_merge (int argc, char **argv);
/* The attention-sink rate on three kinds of input (saccade-cli-sinks.c). */
int saccade_cmd_sinks (int argc, char **argv);
/* The progress bar every long verb draws on stderr ("[#####.....]  50% "): a SaccadeProgress
 * (@user_data unused). saccade_cli_progress() is it when stderr is a terminal, else NULL (a
 * pipe or a log gets no bar); saccade_cli_progress_end() clears the bar's line, if stderr
 * is a terminal, before a result is printed. */
void saccade_cli_progress_bar (double fraction, gpointer user_data);
SaccadeProgress saccade_cli_progress (void);
void saccade_cli_progress_end (void);

G_END_DECLS
