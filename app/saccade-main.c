/* saccade-main.c — entry point: `saccade <verb>` runs a command-line verb; `saccade` alone
 * (or with window options such as --db FILE) opens the window (saccade-application.c).
 * Without a display the window cannot open, and `saccade` prints the demo instead.
 */
#define G_LOG_DOMAIN "saccade"

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "app/window/saccade-application.h"
#include "app/cli/saccade-bench-draw.h"
#include "app/cli/saccade-cli.h"

typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} Verb;

static const Verb verbs[] = {
  { "info", saccade_cmd_info, "architecture, parameter count, KV-cache bytes per token" },
  { "models", saccade_cmd_models, "the model files fetched on this machine" },
  { "tokenize", saccade_cmd_tokenize, "split text into tokens" },
  { "generate", saccade_cmd_generate, "greedy continuation of a prompt" },
  { "capture", saccade_cmd_capture, "run the model and store every attention head" },
  { "runs", saccade_cmd_runs, "list the stored runs" },
  { "show", saccade_cmd_show, "a stored run's tokens and where each token attends" },
  { "export", saccade_cmd_export, "write one stored head as CSV, .npy or JSON" },
  { "rm", saccade_cmd_rm, "delete stored runs" },
  { "merge", saccade_cmd_merge, "merge shard databases into one (docs/cluster.md)" },
  { "heads", saccade_cmd_heads, "every head's statistics of a stored run, sortable" },
  { "compare", saccade_cmd_compare, "two heads' distance and differences, or all heads' distances" },
  { "rollout", saccade_cmd_rollout, "attention rollout and flow of a stored run" },
  { "induction", saccade_cmd_induction, "find induction heads (scores, losses, copying)" },
  { "sinks", saccade_cmd_sinks, "attention-sink rate on natural, random and repeated tokens" },
  { "ablate", saccade_cmd_ablate, "each head or token of a stored run ablated in turn" },
  { "dla", saccade_cmd_dla, "direct logit attribution of a stored run's heads" },
  { "study", saccade_cmd_study, "any study of a stored run by its kind (study --list)" },
  { "means", saccade_cmd_means, "each head's mean output over the reference set" },
  { "faithfulness", saccade_cmd_faithfulness, "attention against leave-one-out importance (a run or a file)" },
  { "patch", saccade_cmd_patch, "activation patching of clean/corrupted pairs (one, or a file)" },
  { "norms", saccade_cmd_norms, "norm-based attention: weight times value norm (Kobayashi 2020)" },
  { "mixing", saccade_cmd_mixing, "context mixing per layer and rolled out: value zeroing, ALTI" },
  { "neuron", saccade_cmd_neuron, "one head's scores made from its query and key vectors" },
  { "attribute", saccade_cmd_attribute, "gradient attributions of a stored run's tokens" },
  { "adversarial", saccade_cmd_adversarial, "how far attention moves while the output stays put" },
  { "learn", saccade_cmd_learn, "the seeds' attention arithmetic: examples, √d_k, KV cache, IO" },
  { "demo", saccade_cmd_demo, "next-token top-5 and per-layer attention for a sample" },
  { "bench", saccade_cmd_bench, "prompt-processing throughput and capture cost" },
  { "bench-store", saccade_cmd_bench_store, "what storing captures costs against memory and dd" },
  { "bench-compress", saccade_cmd_bench_compress, "how well a stored run's heads compress (zstd)" },
  { "bench-draw", saccade_cmd_bench_draw, "what drawing figures costs against a plain paint" },
  { "bench-analysis", saccade_cmd_bench_analysis, "the head-distance matrix against a naive loop" },
  { "bench-gradients", saccade_cmd_bench_gradients, "gradients against the forward pass" },
  { "bench-patch", saccade_cmd_bench_patch, "patching every head against plain passes" },
  { "bench-mixing", saccade_cmd_bench_mixing, "value zeroing and ALTI against one forward pass" },
};

static void
usage (FILE *out)
{
  gsize i;

  fprintf (out, "Usage: saccade [--db FILE] [--model FILE]   open the window\n"
                "       saccade VERB [OPTIONS...]            run a command-line verb\n\nVerbs:\n");
  for (i = 0; i < G_N_ELEMENTS (verbs); i++)
    fprintf (out, "  %-14s %s\n", verbs[i].name, verbs[i].summary);
  fprintf (out, "\n`saccade VERB --help` describes a verb's options. The model is -m FILE, "
                "else $SACCADE_MODEL,\nelse the default model fetched by data/fetch-model.sh.\n");
}

/* Translations: the installed ones, or the build folder's for an uninstalled build (the
 * README runs build/app/saccade). */
static void
init_i18n (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  const char *dir = LOCALEDIR;

  if (exe != NULL && g_str_has_prefix (exe, SACCADE_BUILD_ROOT "/"))
    dir = SACCADE_BUILD_LOCALEDIR;
  bindtextdomain (GETTEXT_PACKAGE, dir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}

/* The window; without a display, the demo (what `saccade` printed before the window). */
static int
run_window (int argc, char **argv)
{
  g_autoptr (SaccadeApplication) app = NULL;
  const char *x11 = g_getenv ("DISPLAY"), *wayland = g_getenv ("WAYLAND_DISPLAY");
  int rc;

  if ((x11 == NULL || *x11 == '\0') && (wayland == NULL || *wayland == '\0'))
    {
      char *demo_argv[] = { argv[0], NULL };
      fprintf (stderr, "saccade: no display ($DISPLAY and $WAYLAND_DISPLAY are unset), so the "
                       "window cannot open; here is the demo instead.\n"
                       "         `saccade --help` lists the command-line verbs.\n\n");
      return saccade_cmd_demo (1, demo_argv);
    }
  if (!gtk_init_check ())
    {
      char *demo_argv[] = { argv[0], NULL };
      fprintf (stderr, "saccade: cannot open the display '%s'; here is the demo instead.\n\n",
               wayland != NULL && *wayland != '\0' ? wayland : x11);
      return saccade_cmd_demo (1, demo_argv);
    }
  app = saccade_application_new ();
  rc = g_application_run (G_APPLICATION (app), argc, argv);
  return rc != 0 ? rc : saccade_application_get_exit_status (app);
}

int
main (int argc, char **argv)
{
  gsize i;

  setlocale (LC_ALL, "");
  init_i18n ();
  /* No verb, or only options: the window (`--help` and `--version` stay the CLI's). */
  if (argc < 2
      || (argv[1][0] == '-' && strcmp (argv[1], "--help") != 0 && strcmp (argv[1], "-h") != 0
          && strcmp (argv[1], "--version") != 0))
    return run_window (argc, argv);
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
