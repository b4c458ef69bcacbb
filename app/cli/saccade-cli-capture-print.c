/* saccade-cli-capture-print.c — what `saccade capture` prints of a captured text: its run id,
 * the model's next-token predictions, the heads' summary statistics, as text or JSON. */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-capture-private.h"
#include "engine/store/sc-store-heads.h"

#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-dataset.h"
#include "app/core/saccade-observer-tee.h"
#include "engine/forward/sc-predict.h"
#include "ui/figures/saccade-token-label.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* Printing                                                                              */

/* How many of the last position's predictions `saccade capture` prints. */
#define CAPTURE_PRINT_TOP 5

/* Token @id's piece (special tokens shown, at most 256 bytes) into @buf; its length. */
static gsize
capture_piece (const CaptureCtx *c, int32_t id, char buf[256])
{
  return MIN (sc_token_to_bytes (sc_model_tokenizer (c->model), id, true, buf, 256), 256);
}

/* The last position's top CAPTURE_PRINT_TOP next tokens, one per line, to @out. */
static void
capture_print_next (FILE *out, const CaptureCtx *c, const CaptureResult *r)
{
  const ScPredictions *p = &r->pred;
  const size_t last = (size_t) (p->n_positions - 1) * p->k;

  fprintf (out, "Next token after the last position (%.3f s for all %d positions):\n",
           r->predict_seconds, p->n_positions);
  for (int i = 0; i < MIN (CAPTURE_PRINT_TOP, p->k); i++)
    {
      char buf[256];
      gsize n = capture_piece (c, p->ids[last + i], buf);
      g_autofree char *label = saccade_token_label (buf, n);
      fprintf (out, "  %5.1f%%  %6d '%s'\n", 100.0 * p->probs[last + i], p->ids[last + i],
               label);
    }
}

static void
capture_print_summary (const CaptureResult *r)
{
  const SaccadeHeadStatsTable *s = &r->stats;
  g_auto (GStrv) labels = saccade_token_labels_for_store (r->pieces, r->n_tokens);
  int l, h;

  printf ("%u tokens, %d layers x %d heads, %.3f s\n", r->n_tokens, s->n_layers, s->n_heads,
          r->seconds);
  printf ("layer head  entropy(mean,last)  sink   prev   last token -> top key (weight)\n");
  for (l = 0; l < s->n_layers; l++)
    for (h = 0; h < s->n_heads; h++)
      {
        const ScHeadStats *st = saccade_head_stats_table_get (s, l, h);
        printf ("%5d %4d   %6.3f %6.3f     %5.3f  %5.3f  -> %3d '%s' (%.3f)\n", l, h,
                st->entropy, st->last_entropy, st->sink, st->previous, st->last_top,
                labels[st->last_top], st->last_top_weight);
      }
}

void
saccade_cli_capture_print_text (const CaptureResult *r, const CaptureCtx *c)
{
  if (!c->summary)
    {
      /* stdout is the run id alone (scripts read it); the predictions go to a terminal */
      printf ("%" G_GINT64_FORMAT "\n", r->run_id);
      fflush (stdout);
      if (isatty (STDERR_FILENO))
        capture_print_next (stderr, c, r);
    }
  else
    {
      capture_print_summary (r);
      if (r->n_prompt < r->n_tokens)
        printf ("%u prompt tokens, %u generated\n", r->n_prompt, r->n_tokens - r->n_prompt);
      capture_print_next (stdout, c, r);
      if (c->store != NULL)
        {
          g_autofree char *size = saccade_store_cli_bytes (r->attention_bytes);
          printf ("stored as run %" G_GINT64_FORMAT " (%s) in %s\n", r->run_id, size,
                  sc_store_path (c->store));
        }
    }
  fflush (stdout);
}

/* "next_tokens": the last position's top CAPTURE_PRINT_TOP predictions. */
static void
capture_add_json_next (JsonBuilder *b, const CaptureResult *r, const CaptureCtx *c)
{
  const ScPredictions *p = &r->pred;
  const size_t last = (size_t) (p->n_positions - 1) * p->k;

  saccade_json_begin_array (b, "next_tokens");
  for (int i = 0; i < MIN (CAPTURE_PRINT_TOP, p->k); i++)
    {
      char buf[256];
      gsize n = capture_piece (c, p->ids[last + i], buf);
      json_builder_begin_object (b);
      saccade_json_int (b, "id", p->ids[last + i]);
      saccade_json_piece (b, (const guint8 *) buf, n, SACCADE_JSON_HEX_FIRST);
      saccade_json_double (b, "probability", p->probs[last + i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* One element of the "runs" array. */
void
saccade_cli_capture_add_json (JsonBuilder *b, const CaptureResult *r, const CaptureCtx *c)
{
  const SaccadeHeadStatsTable *s = &r->stats;

  json_builder_begin_object (b);
  if (c->store != NULL)
    {
      saccade_json_int (b, "run", r->run_id);
      saccade_json_int (b, "attention_bytes", (gint64) r->attention_bytes);
    }
  saccade_json_int (b, "n_tokens", r->n_tokens);
  saccade_json_int (b, "prompt_tokens", r->n_prompt);
  saccade_json_double (b, "seconds", r->seconds);
  saccade_json_double (b, "predict_seconds", r->predict_seconds);
  capture_add_json_next (b, r, c);
  if (c->summary)
    {
      int group = s->n_heads / (int) sc_model_info (c->model)->n_kv_heads;
      saccade_json_begin_array (b, "heads");
      for (int l = 0; l < s->n_layers; l++)
        for (int h = 0; h < s->n_heads; h++)
          {
            const ScHeadStats *st = saccade_head_stats_table_get (s, l, h);
            json_builder_begin_object (b);
            saccade_json_head (b, l, h);
            saccade_json_int (b, "kv_head", h / group);
            saccade_json_double (b, "mean_entropy", st->entropy);
            saccade_json_double (b, "last_entropy", st->last_entropy);
            saccade_json_double (b, "sink_mass", st->sink);
            saccade_json_double (b, "prev_token", st->previous);
            saccade_json_int (b, "last_top_key", st->last_top);
            saccade_json_double (b, "last_top_weight", st->last_top_weight);
            json_builder_end_object (b);
          }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
}
