/* saccade-ablation-page.c — the Ablation page (see saccade-ablation-page.h).
 *
 * The studies the page knows are the rows of STUDIES below: each names its study kind
 * (app/core/saccade-ablation.h), the figure stack's child that shows it, how its result is
 * shown, titled and exported as a figure (its CSV is saccade_ablation_csv(), for every
 * kind), whether the metric chooser applies and which options of its own it has. The head
 * sweeps and leave-one-out are drawn here; the further studies' views live in
 * saccade-ablation-views.c. The rest of the page is the same for every study:
 *
 *   1. a run shown (with the model loaded and a database open) starts one lookup per study
 *      kind: saccade_ablation_async() with STORED_ONLY, the default target and the options
 *      as they are, in a worker (the store is never touched on the main thread). What is
 *      found fills the "Stored" drop-down (kind, date, study id) and the chosen study shows
 *      at once; changing a study's option looks for that kind again (lookup_gen drops an
 *      older answer);
 *   2. Run Study computes the chosen study with the chosen target and options on the
 *      model's session (saccade_ablation_async(), which reuses a stored study with the same
 *      parameters first); progress reaches the bar coalesced; Cancel fires the job's
 *      GCancellable, which the study sees at its next run, and nothing is stored;
 *   3. a job that finishes after the run, the model or the database changed, or after
 *      another request, is dropped (its cancellable is no longer the page's).
 *
 * The figures are drawn by ui/figures/ into GtkDrawingAreas with the theme's colours; hover
 * and click find the head or token through the geometry the last draw returned.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-page-private.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-head-means.h"
#include "app/core/saccade-model.h"
#include "app/window/pages/saccade-ablation-table.h"
#include "ui/figures/saccade-figure.h"
#include "ui/figures/saccade-token-label.h"

/* The effects the figures can show (app/core/saccade-ablation.h; docs/metrics.md). */
#define N_METRICS SACCADE_ABLATION_N_METRICS

static const char *const METRIC_NAMES[N_METRICS] = {
  /* Translators: the metric chooser and the colour bar / value axis captions. */
  N_("Δ log p(target) (nats)"),
  N_("Total variation"),
  N_("Jensen–Shannon divergence (nats)"),
  N_("Δ mean loss (nats)"),
};
/* Titles and hover text: short forms. */
static const char *const METRIC_SHORT[N_METRICS] = {
  N_("Δ log p"), N_("TV"), N_("JSD"), N_("Δ loss"),
};

const char *
saccade_ablation_metric_name (int metric)
{
  return _(METRIC_NAMES[CLAMP (metric, 0, N_METRICS - 1)]);
}

const char *
saccade_ablation_metric_short (int metric)
{
  return _(METRIC_SHORT[CLAMP (metric, 0, N_METRICS - 1)]);
}

static double
effect_value (const ScAblationEffect *e, int metric)
{
  return saccade_ablation_effect_value (e, (SaccadeAblationMetric) metric);
}

/* ------------------------------------------------------------------------------------ */
/* The page                                                                              */


G_DEFINE_FINAL_TYPE (SaccadeAblationPage, saccade_ablation_page, SACCADE_TYPE_PAGE)

/* One study the page shows (the header: "a study kind is one table entry"). */
typedef enum {
  OPTIONS_NONE,
  OPTIONS_PERMUTE,              /* the permutations spin button */
  OPTIONS_ERASURE,              /* erasure kind, random orders */
  OPTIONS_SOURCE,               /* faithfulness: the attention source */
} StudyOptions;

typedef struct {
  const char *id;               /* page.study's parameter, the test driver's name */
  const char *name;             /* the chooser's, translated at use */
  SaccadeAblationKind kind;
  const char *child;            /* the figure stack's child */
  void (*show) (SaccadeAblationPage *self, const SaccadeAblation *a);
  gboolean (*export_figure) (SaccadeAblationPage *self, const SaccadeAblation *a,
                             const char *path, GError **error);
  char *(*title) (SaccadeAblationPage *self);
  gboolean metric;              /* the metric chooser applies */
  int default_metric;           /* set when the study is chosen; -1: kept */
  StudyOptions options;
} StudyKind;

#define DECLARE_STUDY(name)                                                                \
  static void show_##name (SaccadeAblationPage *self, const SaccadeAblation *a);           \
  static gboolean export_##name##_figure (SaccadeAblationPage *self, const SaccadeAblation *a, \
                                          const char *path, GError **error);               \
  static char *name##_title (SaccadeAblationPage *self);
DECLARE_STUDY (heads)
DECLARE_STUDY (tokens)
#undef DECLARE_STUDY

/* The page's own studies (here) and those of saccade-ablation-views.c. */
#define STUDY(name) show_##name, export_##name##_figure, name##_title
#define VIEW(name)                                                                         \
  saccade_ablation_show_##name, saccade_ablation_export_##name##_figure,                  \
    saccade_ablation_##name##_title
static const StudyKind STUDIES[] = {
  { "heads", N_("Head sweep — zero-ablation"), SACCADE_ABLATION_HEADS, "heads", STUDY (heads),
    TRUE, -1, OPTIONS_NONE },
  { "heads-mean", N_("Head sweep — mean-ablation"), SACCADE_ABLATION_HEADS_MEAN, "heads",
    STUDY (heads), TRUE, -1, OPTIONS_NONE },
  { "tokens", N_("Token leave-one-out — mask / drop"), SACCADE_ABLATION_TOKENS, "tokens",
    STUDY (tokens), TRUE, -1, OPTIONS_NONE },
  { "permute", N_("Attention permutation"), SACCADE_ABLATION_PERMUTE, "permute", VIEW (perm),
    TRUE, SACCADE_ABLATION_METRIC_TV, OPTIONS_PERMUTE },
  { "erasure", N_("Erasure curves"), SACCADE_ABLATION_ERASURE, "erasure", VIEW (erasure),
    FALSE, -1, OPTIONS_ERASURE },
  { "dla", N_("Direct logit attribution"), SACCADE_ABLATION_DLA, "dla", VIEW (dla), FALSE, -1,
    OPTIONS_NONE },
  { "faithfulness", N_("Faithfulness — attention vs leave-one-out"), SACCADE_ABLATION_FAITH,
    "faith", VIEW (faith), FALSE, -1, OPTIONS_SOURCE },
};
#undef STUDY
#undef VIEW


static const StudyKind *
study_of_kind (SaccadeAblationKind kind)
{
  for (gsize i = 0; i < G_N_ELEMENTS (STUDIES); i++)
    if (STUDIES[i].kind == kind)
      return &STUDIES[i];
  return &STUDIES[0];
}

static const StudyKind *
chosen_study (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->study_dropdown);
  return &STUDIES[i < G_N_ELEMENTS (STUDIES) ? i : 0];
}

int
saccade_ablation_chosen_metric (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->metric_dropdown);
  return i < N_METRICS ? (int) i : SACCADE_ABLATION_METRIC_DELTA_LOGP;
}

static SaccadeAblation *
shown_result (SaccadeAblationPage *self)
{
  return self->results[chosen_study (self)->kind];
}

/* The head sweep shown (zero- or mean-ablation), or NULL. */
static const ScHeadSweepResult *
shown_sweep (SaccadeAblationPage *self)
{
  const SaccadeAblation *a = shown_result (self);
  return a != NULL ? a->heads : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* Status and actions                                                                    */

static void
update_actions (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  gboolean busy = self->job != NULL;
  gboolean can = saccade_page_get_run (page) != NULL && saccade_page_get_model (page) != NULL
                 && saccade_page_get_db_path (page) != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.run-study", can && !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.cancel", busy);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), busy);
  gtk_widget_set_visible (self->cancel_button, busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->study_dropdown), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->target_entry), !busy);
  gtk_widget_set_sensitive (self->permute_box, !busy);
  gtk_widget_set_sensitive (self->erasure_box, !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->stored_dropdown),
                            !busy && g_list_model_get_n_items (G_LIST_MODEL (self->stored_names))
                                       > 0);
}

/* A token id as the figures show tokens ("“ tired”"); "token ID" without a model. Caller
 * frees. */
static char *
token_text (SaccadeAblationPage *self, int id)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  ScStoreToken *pieces = NULL;
  char *label = NULL, *out;

  if (model != NULL && id >= 0
      && sc_store_tokens_from_ids (sc_model_tokenizer (saccade_loaded_model_get_model (model)),
                                   &(int32_t) { id }, 1, &pieces, NULL) == SC_OK)
    label = saccade_token_label ((const char *) pieces[0].piece, pieces[0].len);
  sc_store_tokens_free (pieces);
  if (label == NULL)
    /* Translators: a token shown by its id when it cannot be decoded. */
    return g_strdup_printf (_("token %d"), id);
  out = g_strdup_printf ("“%s”", label);
  g_free (label);
  return out;
}

/* "YYYY-MM-DD HH:MM" in local time. Caller frees. */
static char *
format_date (gint64 ms)
{
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (ms / 1000);
  return t != NULL ? g_date_time_format (t, "%Y-%m-%d %H:%M") : g_strdup ("?");
}

/* What the status line says when nothing runs. */
static void
show_idle_status (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  const SaccadeAblation *a = shown_result (self);
  g_autofree char *text = NULL, *target = NULL, *when = NULL;

  if (a != NULL)
    {
      const int t = saccade_ablation_target (a);
      const double logp = saccade_ablation_logp_clean (a);
      g_autofree char *measure = NULL;
      target = token_text (self, t);
      if (a->study_id > 0)
        when = format_date (a->created_ms);
      if (isfinite (logp))
        measure = g_strdup_printf (" · ln p = %.3f", logp);
      else if (a->dla != NULL)
        /* Translators: the target's logit in the clean run (direct logit attribution). */
        measure = g_strdup_printf (_(" · logit %.3f"), a->dla->logit_clean);
      else
        measure = g_strdup ("");
      if (a->means_computed)
        {
          /* Translators: appended when the reference means were computed for this study. */
          g_autofree char *m = g_strdup_printf (_(" · reference means computed in %.1f s"),
                                                a->means_seconds);
          char *both = g_strconcat (measure, m, NULL);
          g_free (measure);
          measure = both;
        }
      if (a->reused)
        /* Translators: target token, whether it is the clean top-1, ln p, study, date. */
        text = g_strdup_printf (_("Target %s%s%s · study %lld of %s"), target,
                                t == saccade_ablation_top1_clean (a) ? _(" (the clean top-1)") : "",
                                measure, (long long) a->study_id, when);
      else if (a->study_id > 0)
        text = g_strdup_printf (_("Target %s%s%s · computed in %.1f s · study %lld"), target,
                                t == saccade_ablation_top1_clean (a) ? _(" (the clean top-1)") : "",
                                measure, a->seconds, (long long) a->study_id);
      else
        text = g_strdup_printf (_("Target %s · computed in %.1f s (not stored)"), target,
                                a->seconds);
    }
  else if (saccade_page_get_run (page) == NULL)
    text = g_strdup (_("No run is shown"));
  else if (saccade_page_get_model (page) == NULL)
    text = g_strdup (_("The model is not loaded yet"));
  else if (self->lookups_pending > 0)
    text = g_strdup (_("Looking for stored studies…"));
  else
    text = g_strdup (_("Not studied yet"));
  gtk_label_set_text (self->status_label, text);
  /* The line is ellipsized in narrow windows: the whole of it on hover. */
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), text);
}

/* The empty state's words for the chosen study. */
static void
show_empty (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  const StudyKind *s = chosen_study (self);
  g_autofree char *desc = NULL;

  gtk_stack_set_visible_child_name (self->figure_stack, "empty");
  if (saccade_page_get_run (page) == NULL)
    {
      adw_status_page_set_title (self->empty_page, _("No Run Shown"));
      desc = g_strdup (_("Select a run in the sidebar, or type a sentence and press Run"));
    }
  else
    {
      adw_status_page_set_title (self->empty_page, _(s->name));
      desc = g_strdup (_("Press Run Study to compute it for this run. It is stored in the "
                         "database, and opens here without computing again next time."));
    }
  adw_status_page_set_description (self->empty_page, desc);
}

static void
show_result (SaccadeAblationPage *self)
{
  const StudyKind *s = chosen_study (self);
  const SaccadeAblation *a = self->results[s->kind];

  gtk_label_set_text (self->hover_label, "");
  if (a == NULL || saccade_page_get_run (SACCADE_PAGE (self)) == NULL)
    show_empty (self);
  else
    {
      s->show (self, a);
      gtk_stack_set_visible_child_name (self->figure_stack, s->child);
    }
  if (self->job == NULL)
    show_idle_status (self);
}

/* The Stored drop-down: one item per study kind with a stored result. */
static void
refresh_stored (SaccadeAblationPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->stored_names)), sel = GTK_INVALID_LIST_POSITION;
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  int k = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (STUDIES); i++)
    {
      const SaccadeAblation *a = self->results[STUDIES[i].kind];
      g_autofree char *when = NULL;
      if (a == NULL || a->study_id <= 0)
        continue;
      when = format_date (a->created_ms);
      /* Translators: a stored study: its name, date and id. */
      g_ptr_array_add (items, g_strdup_printf (_("%s · %s · study %lld"), _(STUDIES[i].name),
                                               when, (long long) a->study_id));
      if (&STUDIES[i] == chosen_study (self))
        sel = (guint) k;
      self->stored_kinds[k++] = (int) i;
    }
  g_ptr_array_add (items, NULL);
  self->updating = TRUE;
  gtk_string_list_splice (self->stored_names, 0, n, (const char *const *) items->pdata);
  if (k == 0)
    gtk_string_list_append (self->stored_names, _("None for this run"));
  gtk_drop_down_set_selected (self->stored_dropdown, sel != GTK_INVALID_LIST_POSITION ? sel : 0);
  self->updating = FALSE;
  update_actions (self);
}

static void
set_result (SaccadeAblationPage *self, SaccadeAblation *a)
{
  g_clear_pointer (&self->results[a->kind], saccade_ablation_free);
  self->results[a->kind] = a;
}

/* Drops every result and stops every job (a new run, model or database). */
static void
reset (SaccadeAblationPage *self)
{
  if (self->job != NULL)
    g_cancellable_cancel (self->job);
  g_clear_object (&self->job);
  if (self->lookup != NULL)
    g_cancellable_cancel (self->lookup);
  g_clear_object (&self->lookup);
  self->lookups_pending = 0;
  for (int k = 0; k < SACCADE_ABLATION_N_KINDS; k++)
    g_clear_pointer (&self->results[k], saccade_ablation_free);
  refresh_stored (self);
  update_actions (self);
}

/* ------------------------------------------------------------------------------------ */
/* Finding the stored studies                                                            */

/* A lookup's user data: its kind and generation. */
#define LOOKUP_TAG(kind, gen) GUINT_TO_POINTER (((gen) << 4) | (guint) (kind))

static void
lookup_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (source);
  g_autoptr (GError) error = NULL;
  SaccadeAblation *a = saccade_ablation_finish (result, &error);
  const guint tag = GPOINTER_TO_UINT (user_data), kind = tag & 0xf;

  if (g_task_get_cancellable (G_TASK (result)) != self->lookup)
    {
      saccade_ablation_free (a);
      return;
    }
  self->lookups_pending--;
  if (kind < SACCADE_ABLATION_N_KINDS && (tag >> 4) != self->lookup_gen[kind])
    g_clear_pointer (&a, saccade_ablation_free); /* its options changed meanwhile */
  if (a != NULL && self->results[a->kind] == NULL)
    set_result (self, a);
  else
    {
      saccade_ablation_free (a);
      /* Not found is the usual answer; anything else (a damaged database) is said. */
      if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
          && self->job == NULL)
        gtk_label_set_text (self->status_label, error->message);
    }
  if (self->lookups_pending == 0)
    {
      g_clear_object (&self->lookup);
      /* Show what was found: the chosen study, or else (when the run was just shown) the
       * first study that has one. */
      if (shown_result (self) == NULL && self->choose_found)
        for (gsize i = 0; i < G_N_ELEMENTS (STUDIES); i++)
          if (self->results[STUDIES[i].kind] != NULL)
            {
              gtk_drop_down_set_selected (self->study_dropdown, (guint) i);
              break;
            }
      self->choose_found = FALSE;
      refresh_stored (self);
      show_result (self);
    }
  update_actions (self);
}

/* The chosen options as a study's parameters (a kind ignores those it does not use). */
static void
current_params (SaccadeAblationPage *self, int target, SaccadeAblationParams *p)
{
  *p = (SaccadeAblationParams) {
    .target = target,
    .n_permutations = gtk_spin_button_get_value_as_int (self->permutations_spin),
    .seed = 0,
    .erase_kind = gtk_drop_down_get_selected (self->erase_kind_dropdown) == 1 ? SC_ERASE_DROP
                                                                              : SC_ERASE_MASK,
    .n_random = gtk_spin_button_get_value_as_int (self->seeds_spin),
  };
}

/* Looks for a stored study of @kind with the default target and the chosen options. */
static void
lookup_kind (SaccadeAblationPage *self, SaccadeAblationKind kind)
{
  SaccadePage *page = SACCADE_PAGE (self);
  SaccadeRun *run = saccade_page_get_run (page);
  SaccadeLoadedModel *model = saccade_page_get_model (page);
  const char *db = saccade_page_get_db_path (page);
  SaccadeAblationParams params;

  if (run == NULL || model == NULL || db == NULL)
    return;
  if (self->lookup == NULL)
    self->lookup = g_cancellable_new ();
  current_params (self, -1, &params);
  self->lookups_pending++;
  self->lookup_gen[kind]++;
  saccade_ablation_async (self, model, db, run->id, kind, &params,
                          SACCADE_STUDY_STORED_ONLY, self->lookup, NULL, NULL, lookup_done,
                          LOOKUP_TAG (kind, self->lookup_gen[kind]));
}

static void
start_lookups (SaccadeAblationPage *self)
{
  self->choose_found = TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (STUDIES); i++)
    lookup_kind (self, STUDIES[i].kind);
}

/* An option of @kind changed: what is shown was for the old value; find the new one. */
static void
options_changed (SaccadeAblationPage *self, SaccadeAblationKind kind)
{
  if (self->updating || self->job != NULL)
    return;
  g_clear_pointer (&self->results[kind], saccade_ablation_free);
  lookup_kind (self, kind);
  refresh_stored (self);
  show_result (self);
  update_actions (self);
}

static void
restart (SaccadeAblationPage *self)
{
  reset (self);
  start_lookups (self);
  show_result (self);
  update_actions (self);
}

/* ------------------------------------------------------------------------------------ */
/* Running a study                                                                       */

static void
study_progress (gpointer user_data, double fraction)
{
  SaccadeAblationPage *self = user_data;
  g_autofree char *text = NULL;

  if (self->job == NULL)
    return;
  self->job_fraction = fraction;
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  /* Translators: a study's progress: its name, percent. */
  text = g_strdup_printf (_("%s… %.0f %%"), _(study_of_kind (self->job_kind)->name),
                          100.0 * fraction);
  gtk_label_set_text (self->status_label, text);
}

static void
study_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (source);
  g_autoptr (GError) error = NULL;
  SaccadeAblation *a = saccade_ablation_finish (result, &error);

  if (g_task_get_cancellable (G_TASK (result)) != self->job)
    {
      saccade_ablation_free (a);
      return; /* another run, model, database or request took its place */
    }
  g_clear_object (&self->job);
  self->job_fraction = 0;
  update_actions (self);
  if (a == NULL)
    {
      gtk_label_set_text (self->status_label,
                          g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                            ? _("Cancelled: nothing was stored") : error->message);
      return;
    }
  {
    const SaccadeAblationKind kind = a->kind;
    set_result (self, a);
    /* A zero-ablation sweep is what DLA is set beside and faithfulness's head level: read
     * them again to include it. */
    if (kind == SACCADE_ABLATION_HEADS && a->heads != NULL)
      {
        if (self->results[SACCADE_ABLATION_DLA] != NULL)
          options_changed (self, SACCADE_ABLATION_DLA);
        if (self->results[SACCADE_ABLATION_FAITH] != NULL)
          options_changed (self, SACCADE_ABLATION_FAITH);
      }
  }
  refresh_stored (self);
  show_result (self);
}

/* The target the entry names: -1 for the clean top-1 (empty), else the one token its text
 * is. FALSE with the reason on the status line. */
static gboolean
parse_target (SaccadeAblationPage *self, SaccadeLoadedModel *model, int *target)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->target_entry));
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ids = NULL;

  *target = -1;
  if (text == NULL || *text == '\0')
    return TRUE;
  ids = saccade_tokenize (saccade_loaded_model_get_model (model), text, -1, FALSE, &error);
  if (ids == NULL)
    {
      gtk_label_set_text (self->status_label, error->message);
      return FALSE;
    }
  if (ids->len != 1)
    {
      g_autofree char *msg =
        /* Translators: the typed target and its number of tokens. */
        g_strdup_printf (_("The target “%s” is %u tokens: type one token (or nothing, for "
                           "the clean top-1)"), text, ids->len);
      gtk_label_set_text (self->status_label, msg);
      return FALSE;
    }
  *target = g_array_index (ids, int32_t, 0);
  return TRUE;
}

static gboolean
saccade_ablation_page_run (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  SaccadeRun *run = saccade_page_get_run (page);
  SaccadeLoadedModel *model = saccade_page_get_model (page);
  const char *db = saccade_page_get_db_path (page);
  const StudyKind *s;
  SaccadeAblationParams params;
  int target;

  g_return_val_if_fail (SACCADE_IS_ABLATION_PAGE (self), FALSE);
  if (run == NULL || model == NULL || db == NULL || self->job != NULL)
    return FALSE;
  if (!parse_target (self, model, &target))
    return FALSE;
  current_params (self, target, &params);
  s = chosen_study (self);
  self->job = g_cancellable_new ();
  self->job_kind = s->kind;
  self->job_fraction = 0;
  gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
  study_progress (self, 0.0);
  update_actions (self);
  saccade_ablation_async (self, model, db, run->id, s->kind, &params, SACCADE_STUDY_DEFAULT,
                          self->job, study_progress, self, study_done, NULL);
  return TRUE;
}

static void
saccade_ablation_page_cancel (SaccadeAblationPage *self)
{
  g_return_if_fail (SACCADE_IS_ABLATION_PAGE (self));
  if (self->job != NULL)
    g_cancellable_cancel (self->job);
}

double
saccade_ablation_page_get_fraction (SaccadeAblationPage *self)
{
  g_return_val_if_fail (SACCADE_IS_ABLATION_PAGE (self), 0);
  return self->job != NULL ? self->job_fraction : 0;
}

const char *
saccade_ablation_page_get_status (SaccadeAblationPage *self)
{
  g_return_val_if_fail (SACCADE_IS_ABLATION_PAGE (self), "");
  return gtk_label_get_text (self->status_label);
}

gboolean
saccade_ablation_page_set_option (SaccadeAblationPage *self, const char *name,
                                  const char *value)
{
  static const char *const SOURCE_IDS[N_SOURCES] = { "last-mean", "rollout", "flow",
                                                     "best-head" };
  gint64 v;

  g_return_val_if_fail (SACCADE_IS_ABLATION_PAGE (self), FALSE);
  if (g_strcmp0 (name, "erase-kind") == 0)
    {
      if (g_strcmp0 (value, "mask") != 0 && g_strcmp0 (value, "drop") != 0)
        return FALSE;
      gtk_drop_down_set_selected (self->erase_kind_dropdown, g_str_equal (value, "drop"));
      return TRUE;
    }
  if (g_strcmp0 (name, "source") == 0)
    {
      for (int i = 0; i < N_SOURCES; i++)
        if (g_strcmp0 (value, SOURCE_IDS[i]) == 0)
          {
            gtk_drop_down_set_selected (self->source_dropdown, (guint) i);
            return TRUE;
          }
      return FALSE;
    }
  if (value == NULL || !g_ascii_string_to_signed (value, 10, 0, SC_PERMUTATION_MAX_N, &v, NULL))
    return FALSE;
  if (g_strcmp0 (name, "permutations") == 0 && v >= 1)
    gtk_spin_button_set_value (self->permutations_spin, (double) v);
  else if (g_strcmp0 (name, "seeds") == 0 && v <= SC_ERASURE_MAX_SEEDS)
    gtk_spin_button_set_value (self->seeds_spin, (double) v);
  else
    return FALSE;
  return TRUE;
}

void
saccade_ablation_page_set_target (SaccadeAblationPage *self, const char *text)
{
  g_return_if_fail (SACCADE_IS_ABLATION_PAGE (self));
  gtk_editable_set_text (GTK_EDITABLE (self->target_entry), text != NULL ? text : "");
}

static gboolean
saccade_ablation_page_choose (SaccadeAblationPage *self, const char *id)
{
  g_return_val_if_fail (SACCADE_IS_ABLATION_PAGE (self), FALSE);
  for (gsize i = 0; i < G_N_ELEMENTS (STUDIES); i++)
    if (g_strcmp0 (STUDIES[i].id, id) == 0)
      {
        gtk_drop_down_set_selected (self->study_dropdown, (guint) i);
        return TRUE;
      }
  return FALSE;
}

static void
run_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_ablation_page_run (SACCADE_ABLATION_PAGE (widget));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_ablation_page_cancel (SACCADE_ABLATION_PAGE (widget));
}

static void
metric_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  const char *id = g_variant_get_string (param, NULL);

  for (int m = 0; m < N_METRICS; m++)
    if (g_strcmp0 (id, saccade_ablation_metric_id ((SaccadeAblationMetric) m)) == 0)
      {
        gtk_drop_down_set_selected (self->metric_dropdown, (guint) m);
        return;
      }
  g_warning ("the Ablation page has no metric '%s'", id);
}

static void
study_action (GtkWidget *widget, const char *name, GVariant *param)
{
  if (!saccade_ablation_page_choose (SACCADE_ABLATION_PAGE (widget),
                                     g_variant_get_string (param, NULL)))
    g_warning ("the Ablation page has no study '%s'", g_variant_get_string (param, NULL));
}

/* ------------------------------------------------------------------------------------ */
/* The head sweep: map and ranked table                                                  */

static char *
heads_title (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");

  if (chosen_study (self)->kind == SACCADE_ABLATION_HEADS_MEAN)
    /* Translators: the mean-ablation sweep's title: the reference set, the metric, the
     * model, the sentence. */
    return g_strdup_printf (_("Mean-ablating each head (means of %s): %s · %s · %s"),
                            SACCADE_REFERENCE_SET, _(METRIC_SHORT[saccade_ablation_chosen_metric (self)]),
                            run != NULL ? run->model_name : "", quote);
  /* Translators: the head sweep's title: the metric, the model, the sentence. */
  return g_strdup_printf (_("Zero-ablating each head: %s · %s · %s"),
                          _(METRIC_SHORT[saccade_ablation_chosen_metric (self)]),
                          run != NULL ? run->model_name : "", quote);
}

static void
map_figure (SaccadeAblationPage *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScHeadSweepResult *r = shown_sweep (self);

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = r->n_layers, .n_heads = r->n_heads, .values = self->cells,
    .flipped = self->flipped, .value_name = _(METRIC_NAMES[saccade_ablation_chosen_metric (self)]),
    /* Translators: the mark on heads whose ablation changed the predicted token. */
    .flip_name = _("top-1 changed when ablated"), .layer_name = _("Layer"),
    .head_name = _("Head"), .title = title,
  };
}

static void
show_heads (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  const ScHeadSweepResult *r = a->heads;
  const int n = r->n_layers * r->n_heads, metric = saccade_ablation_chosen_metric (self);

  g_free (self->cells);
  g_free (self->flipped);
  self->cells = g_new (double, n);
  self->flipped = g_new (gboolean, n);
  for (int i = 0; i < n; i++)
    {
      self->cells[i] = effect_value (&r->heads[i], metric);
      self->flipped[i] = r->heads[i].flipped;
    }
  saccade_ablation_table_set_result (self->table, r, (SaccadeAblationMetric) metric);
  self->hover_layer = self->hover_head = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->map_area));
}

static void
draw_map (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  g_autofree char *title = NULL;
  SaccadeEffectsMapFigure f;
  SaccadeFigureStyle style;

  if (shown_sweep (self) == NULL || self->cells == NULL)
    return;
  title = heads_title (self);
  map_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_effects_map_draw_full (cr, &f, &style, self->hover_layer, self->hover_head,
                                        width, height, &self->map_geom);
}

static void
map_motion (GtkEventControllerMotion *c, double x, double y, SaccadeAblationPage *self)
{
  const ScHeadSweepResult *r = shown_sweep (self);
  int l = -1, h = -1, metric = saccade_ablation_chosen_metric (self);
  g_autofree char *text = NULL;

  if (r == NULL || !saccade_effects_map_geometry_head_at (&self->map_geom, x, y, &l, &h))
    l = h = -1;
  if (l == self->hover_layer && h == self->hover_head)
    return;
  self->hover_layer = l;
  self->hover_head = h;
  if (l >= 0)
    {
      const ScAblationEffect *e = &r->heads[l * r->n_heads + h];
      /* Translators: hover over a head of the sweep: layer, head, metric, value. */
      text = g_strdup_printf (_("layer %d head %d: %s = %.4g%s"), l, h, _(METRIC_SHORT[metric]),
                              effect_value (e, metric),
                              e->flipped ? _(" · top-1 changed") : "");
    }
  gtk_label_set_text (self->hover_label, text != NULL ? text : "");
  gtk_widget_queue_draw (GTK_WIDGET (self->map_area));
}

static void
map_leave (GtkEventControllerMotion *c, SaccadeAblationPage *self)
{
  self->hover_layer = self->hover_head = -1;
  gtk_label_set_text (self->hover_label, "");
  gtk_widget_queue_draw (GTK_WIDGET (self->map_area));
}

void
saccade_ablation_open_head (SaccadeAblationPage *self, int layer, int head)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-head", "(ii)", layer, head);
}

static void
map_released (GtkGestureClick *g, int n_press, double x, double y, SaccadeAblationPage *self)
{
  int l, h;

  if (shown_sweep (self) != NULL
      && saccade_effects_map_geometry_head_at (&self->map_geom, x, y, &l, &h))
    saccade_ablation_open_head (self, l, h);
}

static gboolean
export_heads_figure (SaccadeAblationPage *self, const SaccadeAblation *a, const char *path,
                     GError **error)
{
  g_autofree char *title = heads_title (self);
  SaccadeEffectsMapFigure f;

  map_figure (self, title, &f);
  return saccade_figure_export_effects_map (&f, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Token leave-one-out: paired bars                                                      */

static char *
tokens_title (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autofree char *quote = run != NULL ? saccade_page_dup_quoted_text (run) : g_strdup ("");

  /* Translators: token leave-one-out's title: the metric, the model, the sentence. */
  return g_strdup_printf (_("Erasing each token: %s · %s · %s"),
                          _(METRIC_SHORT[saccade_ablation_chosen_metric (self)]),
                          run != NULL ? run->model_name : "", quote);
}

static void
bars_figure (SaccadeAblationPage *self, const char *title, SaccadePairedBarsFigure *f)
{
  const ScTokenLooResult *r = self->results[SACCADE_ABLATION_TOKENS]->tokens;
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));

  *f = (SaccadePairedBarsFigure) {
    .n = r->n_tokens, .a = self->bars[0], .b = self->bars[1],
    /* Translators: the two kinds of token erasure, the bars' legend. */
    .a_name = _("mask (out of every attention row)"), .b_name = _("drop (from the input)"),
    .labels = run != NULL && run->n == r->n_tokens ? (const char *const *) run->labels : NULL,
    .value_name = _(METRIC_NAMES[saccade_ablation_chosen_metric (self)]), .title = title,
  };
}

static void
show_tokens (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  const ScTokenLooResult *r = a->tokens;
  const int metric = saccade_ablation_chosen_metric (self);

  for (int s = 0; s < 2; s++)
    {
      g_free (self->bars[s]);
      self->bars[s] = g_new (double, r->n_tokens);
      for (int j = 0; j < r->n_tokens; j++)
        self->bars[s][j] = effect_value (s == 0 ? &r->mask[j] : &r->drop[j], metric);
    }
  self->hover_token = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->bars_area));
}

static void
draw_bars (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAblationPage *self = data;
  g_autofree char *title = NULL;
  SaccadePairedBarsFigure f;
  SaccadeFigureStyle style;

  if (self->results[SACCADE_ABLATION_TOKENS] == NULL || self->bars[0] == NULL)
    return;
  title = tokens_title (self);
  bars_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_paired_bars_draw_full (cr, &f, &style, self->hover_token, width, height,
                                        &self->bars_geom);
}

static void
bars_motion (GtkEventControllerMotion *c, double x, double y, SaccadeAblationPage *self)
{
  const SaccadeAblation *a = self->results[SACCADE_ABLATION_TOKENS];
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int t = -1, metric = saccade_ablation_chosen_metric (self);
  g_autofree char *text = NULL;

  if (a == NULL || !saccade_paired_bars_geometry_token_at (&self->bars_geom, x, y, &t))
    t = -1;
  if (t == self->hover_token)
    return;
  self->hover_token = t;
  if (t >= 0 && t == a->tokens->n_tokens - 1)
    /* Translators: hover over the last token, which leave-one-out never erases. */
    text = g_strdup_printf (_("token %d is the query: never erased"), t);
  else if (t >= 0)
    /* Translators: hover over a token: position, label, metric, mask and drop values. */
    text = g_strdup_printf (_("token %d “%s”: %s = %.4g masked, %.4g dropped"), t,
                            run != NULL && t < run->n ? run->labels[t] : "",
                            _(METRIC_SHORT[metric]), effect_value (&a->tokens->mask[t], metric),
                            effect_value (&a->tokens->drop[t], metric));
  gtk_label_set_text (self->hover_label, text != NULL ? text : "");
  gtk_widget_queue_draw (GTK_WIDGET (self->bars_area));
}

static void
bars_leave (GtkEventControllerMotion *c, SaccadeAblationPage *self)
{
  self->hover_token = -1;
  gtk_label_set_text (self->hover_label, "");
  gtk_widget_queue_draw (GTK_WIDGET (self->bars_area));
}

static gboolean
export_tokens_figure (SaccadeAblationPage *self, const SaccadeAblation *a, const char *path,
                      GError **error)
{
  g_autofree char *title = tokens_title (self);
  SaccadePairedBarsFigure f;

  bars_figure (self, title, &f);
  return saccade_figure_export_paired_bars (&f, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Choosers                                                                              */

/* The chosen study's own choosers shown, the others hidden. */
static void
show_options (SaccadeAblationPage *self)
{
  const StudyKind *s = chosen_study (self);

  gtk_widget_set_visible (self->metric_box, s->metric);
  gtk_widget_set_visible (self->permute_box, s->options == OPTIONS_PERMUTE);
  gtk_widget_set_visible (self->erasure_box, s->options == OPTIONS_ERASURE);
  gtk_widget_set_visible (self->source_box, s->options == OPTIONS_SOURCE);
  saccade_ablation_update_runs_label (self);
}

static void
study_chosen (SaccadeAblationPage *self)
{
  const StudyKind *s = chosen_study (self);

  if (s->default_metric >= 0 && !self->updating)
    {
      self->updating = TRUE;
      gtk_drop_down_set_selected (self->metric_dropdown, (guint) s->default_metric);
      self->updating = FALSE;
    }
  show_options (self);
  if (!self->updating)
    refresh_stored (self);
  show_result (self);
}

static void
permutations_changed (SaccadeAblationPage *self)
{
  saccade_ablation_update_runs_label (self);
  options_changed (self, SACCADE_ABLATION_PERMUTE);
}

static void
erasure_options_changed (SaccadeAblationPage *self)
{
  options_changed (self, SACCADE_ABLATION_ERASURE);
}

static void
source_chosen (SaccadeAblationPage *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self->faith_area));
}

static void
stored_chosen (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->stored_dropdown);
  int n = 0;

  if (self->updating)
    return;
  for (int k = 0; k < SACCADE_ABLATION_N_KINDS; k++)
    n += self->results[k] != NULL && self->results[k]->study_id > 0;
  if (i < (guint) n)
    {
      self->updating = TRUE;
      gtk_drop_down_set_selected (self->study_dropdown, (guint) self->stored_kinds[i]);
      self->updating = FALSE;
      show_result (self);
    }
}

/* ------------------------------------------------------------------------------------ */
/* SaccadePage                                                                           */

static void
saccade_ablation_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  restart (SACCADE_ABLATION_PAGE (page));
}

static void
saccade_ablation_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  restart (SACCADE_ABLATION_PAGE (page));
  saccade_ablation_update_runs_label (SACCADE_ABLATION_PAGE (page));
}

static char *
saccade_ablation_page_dup_figure_title (SaccadePage *page)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (page);

  if (shown_result (self) == NULL)
    return g_strdup ("");
  return chosen_study (self)->title (self);
}

static gboolean
no_result (SaccadeAblationPage *self, GError **error)
{
  if (shown_result (self) != NULL)
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("There is nothing to export: run the study first"));
  return TRUE;
}

static gboolean
saccade_ablation_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (page);

  if (no_result (self, error))
    return FALSE;
  return chosen_study (self)->export_figure (self, shown_result (self), path, error);
}

static gboolean
saccade_ablation_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (page);
  g_autoptr (GBytes) data = NULL;

  if (no_result (self, error))
    return FALSE;
  {
    SaccadeRun *run = saccade_page_get_run (page);
    data = saccade_ablation_csv (shown_result (self), run != NULL ? run->tokens : NULL,
                                 run != NULL ? (const char *const *) run->labels : NULL,
                                 run != NULL ? run->n : 0);
  }
  return saccade_export_write (data, path, error);
}

static gboolean
saccade_ablation_page_is_busy (SaccadePage *page)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (page);

  return self->job != NULL || self->lookups_pending > 0;
}

static void
saccade_ablation_page_dispose (GObject *object)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (object);

  if (self->job != NULL)
    g_cancellable_cancel (self->job);
  g_clear_object (&self->job);
  if (self->lookup != NULL)
    g_cancellable_cancel (self->lookup);
  g_clear_object (&self->lookup);
  for (int k = 0; k < SACCADE_ABLATION_N_KINDS; k++)
    g_clear_pointer (&self->results[k], saccade_ablation_free);
  g_clear_object (&self->stored_names);
  g_clear_pointer (&self->cells, g_free);
  g_clear_pointer (&self->flipped, g_free);
  g_clear_pointer (&self->bars[0], g_free);
  g_clear_pointer (&self->bars[1], g_free);
  saccade_ablation_views_clear (self);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_ABLATION_PAGE);
  G_OBJECT_CLASS (saccade_ablation_page_parent_class)->dispose (object);
}

static void
saccade_ablation_page_class_init (SaccadeAblationPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_ablation_page_dispose;
  page_class->set_run = saccade_ablation_page_set_run;
  page_class->set_model = saccade_ablation_page_set_model;
  page_class->dup_figure_title = saccade_ablation_page_dup_figure_title;
  page_class->export_figure = saccade_ablation_page_export_figure;
  page_class->export_csv = saccade_ablation_page_export_csv;
  page_class->is_busy = saccade_ablation_page_is_busy;
  gtk_widget_class_install_action (widget_class, "page.run-study", NULL, run_action);
  gtk_widget_class_install_action (widget_class, "page.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "page.study", "s", study_action);
  gtk_widget_class_install_action (widget_class, "page.metric", "s", metric_action);

  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  g_type_ensure (SACCADE_TYPE_ABLATION_TABLE);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-ablation-page.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SaccadeAblationPage, name)
  CHILD (study_dropdown);
  CHILD (target_entry);
  CHILD (progress_bar);
  CHILD (cancel_button);
  CHILD (status_label);
  CHILD (stored_dropdown);
  CHILD (metric_dropdown);
  CHILD (hover_label);
  CHILD (figure_stack);
  CHILD (empty_page);
  CHILD (map_area);
  CHILD (table);
  CHILD (bars_area);
  CHILD (metric_box);
  CHILD (permute_box);
  CHILD (permutations_spin);
  CHILD (runs_label);
  CHILD (erasure_box);
  CHILD (erase_kind_dropdown);
  CHILD (seeds_spin);
  CHILD (source_box);
  CHILD (source_dropdown);
  CHILD (perm_area);
  CHILD (erasure_area);
  CHILD (dla_area);
  CHILD (dla_beside);
  CHILD (dla_sweep_area);
  CHILD (dla_scatter_area);
  CHILD (dla_note);
  CHILD (faith_area);
  CHILD (faith_head_title);
  CHILD (faith_grid);
#undef CHILD
}

static void
add_pointer (SaccadeAblationPage *self, GtkDrawingArea *area, GCallback motion, GCallback leave)
{
  GtkEventController *c = gtk_event_controller_motion_new ();

  g_signal_connect (c, "motion", motion, self);
  g_signal_connect (c, "leave", leave, self);
  gtk_widget_add_controller (GTK_WIDGET (area), c);
}

static void
saccade_ablation_page_init (SaccadeAblationPage *self)
{
  g_autoptr (GtkStringList) studies = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) metrics = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) kinds = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) sources = gtk_string_list_new (NULL);
  GtkGesture *click;

  gtk_widget_init_template (GTK_WIDGET (self));
  for (gsize i = 0; i < G_N_ELEMENTS (STUDIES); i++)
    gtk_string_list_append (studies, _(STUDIES[i].name));
  gtk_drop_down_set_model (self->study_dropdown, G_LIST_MODEL (studies));
  for (int m = 0; m < N_METRICS; m++)
    gtk_string_list_append (metrics, _(METRIC_NAMES[m]));
  gtk_drop_down_set_model (self->metric_dropdown, G_LIST_MODEL (metrics));
  /* Translators: the erasure kinds: taken out of every attention row, or from the input. */
  gtk_string_list_append (kinds, _("mask"));
  gtk_string_list_append (kinds, _("drop"));
  gtk_drop_down_set_model (self->erase_kind_dropdown, G_LIST_MODEL (kinds));
  for (int i = 0; i < N_SOURCES; i++)
    gtk_string_list_append (sources, saccade_ablation_source_name ((FaithSource) i));
  gtk_drop_down_set_model (self->source_dropdown, G_LIST_MODEL (sources));
  self->stored_names = gtk_string_list_new (NULL);
  gtk_drop_down_set_model (self->stored_dropdown, G_LIST_MODEL (self->stored_names));
  self->hover_layer = self->hover_head = self->hover_token = -1;
  self->perm_hover = self->dla_hover = -1;
  g_signal_connect_swapped (self->table, "head-activated", G_CALLBACK (saccade_ablation_open_head), self);

  gtk_drawing_area_set_draw_func (self->map_area, draw_map, self, NULL);
  gtk_drawing_area_set_draw_func (self->bars_area, draw_bars, self, NULL);
  saccade_ablation_views_init (self);
  add_pointer (self, self->map_area, G_CALLBACK (map_motion), G_CALLBACK (map_leave));
  add_pointer (self, self->bars_area, G_CALLBACK (bars_motion), G_CALLBACK (bars_leave));
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (map_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self->map_area), GTK_EVENT_CONTROLLER (click));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->hover_label),
                               _("Click a head in the map or the table to open it on the "
                                 "Heatmap page"));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->map_area));

  g_signal_connect_swapped (self->study_dropdown, "notify::selected", G_CALLBACK (study_chosen),
                            self);
  g_signal_connect_swapped (self->metric_dropdown, "notify::selected", G_CALLBACK (show_result),
                            self);
  g_signal_connect_swapped (self->stored_dropdown, "notify::selected",
                            G_CALLBACK (stored_chosen), self);
  g_signal_connect_swapped (self->permutations_spin, "value-changed",
                            G_CALLBACK (permutations_changed), self);
  g_signal_connect_swapped (self->seeds_spin, "value-changed",
                            G_CALLBACK (erasure_options_changed), self);
  g_signal_connect_swapped (self->erase_kind_dropdown, "notify::selected",
                            G_CALLBACK (erasure_options_changed), self);
  g_signal_connect_swapped (self->source_dropdown, "notify::selected",
                            G_CALLBACK (source_chosen), self);
  show_options (self);
  g_signal_connect_swapped (self->target_entry, "activate", G_CALLBACK (saccade_ablation_page_run),
                            self);
  refresh_stored (self);
  show_result (self);
  update_actions (self);
}
