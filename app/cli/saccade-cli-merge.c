/* saccade-cli-merge.c — `saccade merge OUT.sqlite SHARD.sqlite…`: the databases that the
 * shards of a study wrote, merged into one (engine/store/sc-store-merge.h has the rules:
 * checked inputs, ids given anew, models by file hash, shards of other models or settings
 * refused, OUT replaced atomically). docs/cluster.md shows it in a Slurm job array. */
#define G_LOG_DOMAIN "saccade-cli"

#include <stdio.h>

#include "app/cli/saccade-cli.h"
#include "engine/store/sc-store-merge.h"

int
saccade_cmd_merge (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "OUT.sqlite SHARD.sqlite… - merge shard databases into OUT (kept, then extended)");
  ScStoreMergeStats stats = { 0 };
  ScError err = { 0 };

  if (!saccade_cli_parse_json_only (ctx, &json, &argc, &argv))
    return 2;
  if (argc < 3)
    {
      fprintf (stderr, "saccade: merge takes OUT.sqlite and at least one SHARD.sqlite\n");
      return 2;
    }
  if (sc_store_merge (argv[1], (const char *const *) argv + 2, (size_t) argc - 2, NULL, NULL,
                      &stats, &err) != SC_OK)
    {
      /* one line: SQLite's integrity report inside the message has several */
      g_strdelimit (err.message, "\n", ' ');
      fprintf (stderr, "saccade: %s\n", err.message);
      return 1;
    }
  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      saccade_json_string (b, "out", argv[1]);
      saccade_json_int (b, "inputs", (gint64) stats.n_inputs);
      saccade_json_int (b, "models", (gint64) stats.n_models);
      saccade_json_int (b, "runs_added", (gint64) stats.n_runs_added);
      saccade_json_int (b, "studies_added", (gint64) stats.n_studies_added);
      saccade_json_int (b, "skipped_incomplete", (gint64) stats.n_skipped);
      json_builder_end_object (b);
      saccade_json_print (b);
    }
  else
    printf ("merged %d shard%s into %s: %zu runs and %zu studies added (%zu incomplete left "
            "out), %zu model%s\n", argc - 2, argc - 2 == 1 ? "" : "s", argv[1],
            stats.n_runs_added, stats.n_studies_added, stats.n_skipped, stats.n_models,
            stats.n_models == 1 ? "" : "s");
  return 0;
}
