/* saccade-run-item.c — SaccadeRunItem, one row of the runs sidebar (saccade-run.h): a stored
 * run's id, its text on one line, its size and time, its model, and what a search matches.
 */
#define G_LOG_DOMAIN "saccade-run"

#include "app/core/saccade-run.h"

#include <glib/gi18n.h>

#include "app/core/saccade-format.h"

/* ------------------------------------------------------------------------------------ */
/* SaccadeRunItem                                                                        */

struct _SaccadeRunItem
{
  GObject parent_instance;

  gint64 id;
  guint n_tokens;
  char *title;
  char *subtitle;
  char *tooltip;
  char *model_name;
  char *haystack; /* casefolded title + model name */
};

G_DEFINE_FINAL_TYPE (SaccadeRunItem, saccade_run_item, G_TYPE_OBJECT)

static void
saccade_run_item_finalize (GObject *object)
{
  SaccadeRunItem *self = SACCADE_RUN_ITEM (object);

  g_free (self->title);
  g_free (self->subtitle);
  g_free (self->tooltip);
  g_free (self->model_name);
  g_free (self->haystack);
  G_OBJECT_CLASS (saccade_run_item_parent_class)->finalize (object);
}

static void
saccade_run_item_class_init (SaccadeRunItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = saccade_run_item_finalize;
}

static void
saccade_run_item_init (SaccadeRunItem *self)
{
}

char *
saccade_run_kind_label (const ScStoreRunInfo *r)
{
  const gboolean long_text = r->n_tokens >= SACCADE_LONG_TEXT_TOKENS;

  switch (r->kind)
    {
    case SC_RUN_KIND_TEXT:
      /* Translators: a run's kind in the runs list: a text of up to 511 tokens, or longer. */
      return g_strdup (long_text ? _("long text") : _("sentence"));
    case SC_RUN_KIND_CHAT:
      /* Translators: a run's kind: a text in the model's chat template. */
      return g_strdup (_("chat"));
    case SC_RUN_KIND_GENERATED:
      /* Translators: a run's kind: a prompt and the tokens the model generated after it. */
      return g_strdup_printf (_("prompt + %u generated"), r->n_tokens - r->n_prompt);
    case SC_RUN_KIND_IDS:
      /* Translators: a run's kind: token ids, the Induction page's repeated random tokens. */
      return g_strdup (_("induction sequence"));
    case SC_RUN_KIND_UNKNOWN:
    case SC_RUN_N_KINDS:
    default:
      return long_text ? g_strdup (_("long text")) : NULL;
    }
}

char *
saccade_run_rounding_label (guint32 round_bits, double zero_below)
{
  const double percent = 100.0 * sc_store_round_relative_error (round_bits);

  if (round_bits > 0 && zero_below > 0)
    /* Translators: a run stored in the rounded form (docs/store.md, "Rounded heads"): the
     * largest error of a stored attention weight against the fp16 value a lossless store
     * keeps, e.g. "3.12 %", and the threshold under which weights were stored as 0. */
    return g_strdup_printf (_("rounded: each value within %.3g %% of its fp16, values below "
                              "%.2g stored as 0"), percent, zero_below);
  if (round_bits > 0)
    return g_strdup_printf (_("rounded: each value within %.3g %% of its fp16"), percent);
  if (zero_below > 0)
    return g_strdup_printf (_("values below %.2g stored as 0"), zero_below);
  return NULL;
}

SaccadeRunItem *
saccade_run_item_new (const ScStoreRunInfo *r)
{
  g_autofree char *kind = saccade_run_kind_label (r);
  g_autofree char *size = NULL;
  SaccadeRunItem *self = g_object_new (SACCADE_TYPE_RUN_ITEM, NULL);
  g_autofree char *folded = NULL;
  g_autofree char *line = NULL;
  glong n_chars;

  self->id = r->id;
  self->n_tokens = r->n_tokens;
  line = saccade_format_one_line (r->text, r->text_len);
  n_chars = g_utf8_strlen (line, -1);
  /* A row shows a line's width of the title: GTK shapes every character of a label to
   * ellipsize it, on every layout of the runs list, so a long run's 4 KB of text in the
   * row stalled the main loop for most of a second whenever the window's layout changed
   * (selecting the run, changing layer). */
  if (n_chars > SACCADE_RUN_TITLE_CHARS)
    {
      g_autofree char *cut = g_utf8_substring (line, 0, SACCADE_RUN_TITLE_CHARS);
      self->title = g_strconcat (cut, "…", NULL);
    }
  else
    self->title = g_strdup (line);
  self->model_name = g_strdup (r->model_name != NULL ? r->model_name : "");
  /* Translators: a run's size in the runs list, "12 tok", and with its kind,
   * "12 tok · sentence". */
  size = kind != NULL ? g_strdup_printf (_("%u tok · %s"), r->n_tokens, kind)
                      : g_strdup_printf (_("%u tok"), r->n_tokens);
  /* the model first: runs of the same sentence by two models read apart */
  if (r->forward_s >= 0)
    /* Translators: a run's model, size and time in the runs list, e.g.
     * "SmolLM2 135M Instruct · 12 tok · sentence · 0.4 s". */
    self->subtitle = g_strdup_printf (_("%s · %s · %.1f s"), self->model_name, size,
                                      r->forward_s);
  else
    /* Translators: a run's model and size in the runs list, e.g. "SmolLM2 · 12 tok". */
    self->subtitle = g_strdup_printf (_("%s · %s"), self->model_name, size);
  {
    /* the hover text: the run's beginning (not a screen of a long text), then the row's facts */
    g_autofree char *head = g_utf8_substring (line, 0, MIN (n_chars, SACCADE_RUN_TOOLTIP_CHARS));
    /* Translators: a run's tooltip: its text (cut, then "…"), its model, size and id. */
    self->tooltip = g_strdup_printf (_("%s%s\n%s · run %lld"), head,
                                     n_chars > SACCADE_RUN_TOOLTIP_CHARS ? "…" : "",
                                     self->subtitle, (long long) r->id);
  }
  folded = g_strconcat (line, "\n", self->model_name, NULL);
  self->haystack = g_utf8_casefold (folded, -1);
  return self;
}

gint64
saccade_run_item_get_id (SaccadeRunItem *self)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), 0);
  return self->id;
}

const char *
saccade_run_item_get_title (SaccadeRunItem *self)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), NULL);
  return self->title;
}

const char *
saccade_run_item_get_subtitle (SaccadeRunItem *self)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), NULL);
  return self->subtitle;
}

const char *
saccade_run_item_get_tooltip (SaccadeRunItem *self)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), NULL);
  return self->tooltip;
}

const char *
saccade_run_item_get_model_name (SaccadeRunItem *self)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), NULL);
  return self->model_name;
}

guint
saccade_run_item_get_n_tokens (SaccadeRunItem *self)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), 0);
  return self->n_tokens;
}

gboolean
saccade_run_item_matches (SaccadeRunItem *self, const char *casefolded_needle)
{
  g_return_val_if_fail (SACCADE_IS_RUN_ITEM (self), FALSE);
  return casefolded_needle == NULL || strstr (self->haystack, casefolded_needle) != NULL;
}
