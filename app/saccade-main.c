/* saccade-main.c — entry point: dispatches `saccade <verb>`.
 *
 * With no verb the desktop window will open (the app issue); until it exists, `saccade`
 * alone runs the demo verb on the default model.
 */
#define G_LOG_DOMAIN "saccade"

#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "saccade-cli.h"

typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} Verb;

static const Verb verbs[] = {
  { "info", saccade_cmd_info, "architecture, parameter count, KV-cache bytes per token" },
  { "tokenize", saccade_cmd_tokenize, "split text into tokens" },
  { "generate", saccade_cmd_generate, "greedy continuation of a prompt" },
  { "capture", saccade_cmd_capture, "run the model and store every attention head" },
  { "runs", saccade_cmd_runs, "list the stored runs" },
  { "show", saccade_cmd_show, "a stored run's tokens and where each token attends" },
  { "export", saccade_cmd_export, "write one stored head as CSV, .npy or JSON" },
  { "rm", saccade_cmd_rm, "delete stored runs" },
  { "demo", saccade_cmd_demo, "next-token top-5 and per-layer attention for a sample" },
  { "bench", saccade_cmd_bench, "prompt-processing throughput and capture cost" },
  { "bench-store", saccade_cmd_bench_store, "what storing captures costs against memory and dd" },
};

static void
usage (FILE *out)
{
  gsize i;

  fprintf (out, "Usage: saccade [VERB] [OPTIONS...]\n\nVerbs:\n");
  for (i = 0; i < G_N_ELEMENTS (verbs); i++)
    fprintf (out, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
  fprintf (out, "\n`saccade VERB --help` describes a verb's options. The model is -m FILE, "
                "else $SACCADE_MODEL,\nelse the default model fetched by data/fetch-model.sh.\n");
}

int
main (int argc, char **argv)
{
  gsize i;

  setlocale (LC_ALL, "");
  if (argc < 2)
    {
      char *demo_argv[] = { argv[0], NULL };
      return saccade_cmd_demo (1, demo_argv);
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("saccade %s\n", SACCADE_VERSION);
      return 0;
    }
  for (i = 0; i < G_N_ELEMENTS (verbs); i++)
    if (strcmp (argv[1], verbs[i].name) == 0)
      return verbs[i].run (argc - 1, argv + 1);
  fprintf (stderr, "saccade: unknown verb '%s'\n\n", argv[1]);
  usage (stderr);
  return 2;
}
