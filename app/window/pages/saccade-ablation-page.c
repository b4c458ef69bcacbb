/* saccade-ablation-page.c — the Ablation page (see saccade-ablation-page.h): its results,
 * lookups and jobs. The study table, the choosers and their page.* actions are
 * saccade-ablation-options.c's (saccade-ablation-private.h).
 *
 * The studies the page knows are the rows of the study table: each names its study kind
 * (app/core/saccade-ablation.h), the view that shows it (a SaccadeStudyView of
 * app/window/studies/saccade-study-views.h, one per kind, the head sweeps sharing one),
 * whether the metric chooser applies and which options of its own it has. Its CSV is
 * saccade_ablation_csv(), for every kind. The rest of the page is the same for every study,
 * its jobs kept by SaccadeStudyJobs (app/window/studies/saccade-study-jobs.h):
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
 * A view is handed its result to show and cleared before the page frees it: the page owns
 * every result, a view only what it draws.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-private.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-model.h"
#include "app/window/studies/saccade-study-jobs.h"
#include "app/window/studies/saccade-study-views.h"

G_DEFINE_FINAL_TYPE (SaccadeAblationPage, saccade_ablation_page, SACCADE_TYPE_PAGE)

/* status and fraction: saccade_page_class_install_status */
enum { PROP_0, PROP_STATUS, PROP_FRACTION };

static SaccadeAblation *
shown_result (SaccadeAblationPage *self)
{
  return self->results[ablation_chosen_study (self)->kind];
}

/* ------------------------------------------------------------------------------------ */
/* Status and actions                                                                    */

/* Why the chosen study cannot run on the loaded model (the run was captured with another
 * model, or it needs a backward pass the architecture lacks), or NULL. Caller frees. */
static char *
no_backward (SaccadeAblationPage *self)
{
  SaccadeLoadedModel *loaded = saccade_page_get_model (SACCADE_PAGE (self));
  ScModel *model = loaded != NULL ? saccade_loaded_model_get_model (loaded) : NULL;
  const ScStudyKind *k = saccade_ablation_study_kind (ablation_chosen_study (self)->kind);
  char *other = saccade_page_dup_other_model (SACCADE_PAGE (self));

  if (other != NULL || (other = ablation_circuits_refusal (self, model)) != NULL)
    return other;
  if (model == NULL || !(k->needs & SC_STUDY_NEEDS_BACKWARD) || sc_model_has_backward (model))
    return NULL;
  return g_strdup_printf (_("Needs gradients, and %s models have no backward pass yet: "
                            "load a llama-architecture model such as SmolLM2"),
                          sc_model_info (model)->arch_name);
}

static void
update_actions (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  gboolean busy = saccade_study_jobs_get_running (self->jobs);
  gboolean can = saccade_page_get_run (page) != NULL && saccade_page_get_model (page) != NULL
                 && saccade_page_get_db_path (page) != NULL;

  /* patching needs a second run to set against this one; gradients a backward pass */
  if (ABLATION_NEEDS_PAIR (ablation_chosen_study (self)))
    can = can && ablation_chosen_corrupted (self) > 0;
  if (can)
    {
      g_autofree char *why = no_backward (self);
      can = why == NULL;
    }

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.run-study", can && !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.cancel", busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->study_dropdown), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->target_entry), !busy);
  gtk_widget_set_sensitive (self->permute_box, !busy);
  gtk_widget_set_sensitive (self->erasure_box, !busy);
  gtk_widget_set_sensitive (self->patch_box, !busy);
  gtk_widget_set_sensitive (self->contrast_box, !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->stored_dropdown),
                            !busy && g_list_model_get_n_items (G_LIST_MODEL (self->stored_names))
                                       > 0);
}

static void
set_status (SaccadeAblationPage *self, const char *text)
{
  saccade_study_jobs_set_status (self->jobs, text);
}

/* A token id as the figures show tokens ("“␣tired”"). Caller frees. */
static char *
token_text (SaccadeAblationPage *self, int id)
{
  return saccade_study_token_text (ablation_own_model (self), id);
}

/* "YYYY-MM-DD HH:MM" in local time. Caller frees. */
static char *
format_date (gint64 ms)
{
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (ms / 1000);
  return t != NULL ? g_date_time_format (t, "%Y-%m-%d %H:%M") : g_strdup ("?");
}


/* Why patching cannot run on the run shown (caller frees), or NULL when it can or another
 * study is chosen; first, why the model cannot run the chosen study. */
static char *
no_corrupted_run (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  char *why = no_backward (self);

  if (why != NULL)
    return why;
  if (run == NULL || !ABLATION_NEEDS_PAIR (ablation_chosen_study (self))
      || ablation_chosen_corrupted (self) > 0)
    return NULL;
  /* Translators: why patching cannot run; %d: the shown run's tokens. */
  return g_strdup_printf (_("Patching needs a corrupted run: capture a sentence of the same "
                            "model with %d tokens that differs where the behaviour is "
                            "decided"), run->n);
}

/* What the status line says when nothing runs. */
static void
show_idle_status (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  const SaccadeAblation *a = shown_result (self);
  g_autofree char *text = NULL, *target = NULL, *when = NULL, *why = NULL;

  if (a != NULL)
    {
      const int t = saccade_ablation_target (a);
      const double logp = saccade_ablation_logp_clean (a);
      g_autofree char *measure = NULL, *contrast = ablation_dup_contrast_status (self, a);
      target = token_text (self, t);
      if (a->study_id > 0)
        when = format_date (a->created_ms);
      if (a->patch != NULL && a->kind == SACCADE_ABLATION_ATTR_PATCH && a->patch_exact != NULL)
        /* Translators: attribution patching against the stored exact patching of the same
         * runs: Spearman's rho over the cells, and that study's id. */
        measure = g_strdup_printf (_(" · m = %.3f clean, %.3f corrupted · ρ %.3f with the "
                                     "exact patching of study %lld"),
                                   a->patch->metric_clean, a->patch->metric_corrupted,
                                   a->patch_rho.rho, (long long) a->patch_exact_id);
      else if (a->patch != NULL && a->kind == SACCADE_ABLATION_ATTR_PATCH)
        measure = g_strdup_printf (_(" · m = %.3f clean, %.3f corrupted · estimates: run "
                                     "Activation patching with these options to set them "
                                     "against the exact effects"),
                                   a->patch->metric_clean, a->patch->metric_corrupted);
      else if (a->patch != NULL)
        /* Translators: patching's metric on the clean and the corrupted run. */
        measure = g_strdup_printf (_(" · m = %.3f clean, %.3f corrupted"),
                                   a->patch->metric_clean, a->patch->metric_corrupted);
      else if (a->first != NULL)
        /* Translators: the first pass's status: its seconds, the exact ablations' count and
         * seconds, Spearman's rho between estimate and exact over those heads. */
        measure = g_strdup_printf (_(" · first pass %1$.1f s, top %2$d exact %3$.1f s · ρ %4$.3f "
                                     "(estimate, exact); hatched heads: estimated only"),
                                   a->first->first_s, a->first->n_exact, a->first->exact_s,
                                   a->first->rho);
      else if (isfinite (logp))
        measure = g_strdup_printf (" · ln p = %.3f%s", logp, contrast != NULL ? contrast : "");
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
      if (a->mixing != NULL || a->qk != NULL)
        {
          /* Translators: context mixing's status (it has no target): the rollout's mixing
           * ratio, then when it was computed or stored, as below; QK attribution's. */
          g_autofree char *lead = a->qk != NULL
            ? g_strdup_printf (_("Score %.4f = sum of the parts %.4f"), a->qk->score, a->qk->total)
            : g_strdup_printf (_("Mixing ratio %.2f, rolled out"),
                               a->mixing->mix[a->mixing->n_layers]);
          if (a->reused)
            text = g_strdup_printf (_("%s · study %lld of %s"), lead, (long long) a->study_id,
                                    when);
          else if (a->study_id > 0)
            text = g_strdup_printf (_("%s · computed in %.1f s · study %lld"), lead, a->seconds,
                                    (long long) a->study_id);
          else
            text = g_strdup_printf (_("%s · computed in %.1f s (not stored)"), lead, a->seconds);
        }
      else if (a->reused)
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
      if ((why = saccade_page_dup_other_model (page)) != NULL)
        {
          /* Translators: a stored study of a run of another model: why it cannot be run
           * again here, then what the status line says of the study. */
          char *ro = g_strdup_printf (_("Read-only: %1$s · %2$s"), why, text);
          g_free (text);
          text = ro;
        }
    }
  else if (saccade_page_get_run (page) == NULL)
    text = g_strdup (_("No run is shown"));
  else if (saccade_page_get_model (page) == NULL)
    text = g_strdup (_("The model is not loaded yet"));
  else if (saccade_study_jobs_get_lookups (self->jobs) > 0)
    text = g_strdup (_("Looking for stored studies…"));
  else if ((text = no_corrupted_run (self)) == NULL)
    text = g_strdup (_("Not studied yet"));
  set_status (self, text);
  /* The line is ellipsized in narrow windows: the whole of it on hover. */
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), text);
}

/* The empty state's words for the chosen study. */
static void
show_empty (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  const StudyKind *s = ablation_chosen_study (self);
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
      desc = no_corrupted_run (self);
      if (desc == NULL)
        desc = g_strdup (_("Press Run Study to compute it for this run. It is stored in the "
                         "database, and opens here without computing again next time."));
    }
  adw_status_page_set_description (self->empty_page, desc);
}

void
ablation_show_result (SaccadeAblationPage *self)
{
  const StudyKind *s = ablation_chosen_study (self);
  const SaccadeAblation *a = self->results[s->kind];
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));

  gtk_label_set_text (self->hover_label, "");
  if (a == NULL || run == NULL)
    show_empty (self);
  else
    {
      const SaccadeStudyContext ctx = {
        .run = run, .metric = ablation_chosen_metric (self),
        .source = (int) MIN (gtk_drop_down_get_selected (self->source_dropdown),
                             SACCADE_FAITH_N_CHOICES - 1),
        .model = ablation_own_model (self),
      };
      saccade_study_view_show (self->views[s->kind], a, &ctx);
      gtk_stack_set_visible_child_name (self->figure_stack, s->child);
    }
  if (!saccade_study_jobs_get_running (self->jobs))
    show_idle_status (self);
}

/* The Stored drop-down: one item per study kind with a stored result. */
void
ablation_refresh_stored (SaccadeAblationPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->stored_names)), sel = GTK_INVALID_LIST_POSITION;
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  int k = 0;

  for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
    {
      const SaccadeAblation *a = self->results[ablation_studies[i].kind];
      g_autofree char *when = NULL;
      if (a == NULL || a->study_id <= 0)
        continue;
      when = format_date (a->created_ms);
      /* Translators: a stored study: its name, date and id. */
      g_ptr_array_add (items, g_strdup_printf (_("%s · %s · study %lld"), _(ablation_studies[i].name),
                                               when, (long long) a->study_id));
      if (&ablation_studies[i] == ablation_chosen_study (self))
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

/* Frees the result of @kind, its view cleared first. */
static void
drop_result (SaccadeAblationPage *self, SaccadeAblationKind kind)
{
  if (self->results[kind] == NULL)
    return;
  saccade_study_view_clear (self->views[kind]);
  g_clear_pointer (&self->results[kind], saccade_ablation_free);
}

static void
set_result (SaccadeAblationPage *self, SaccadeAblation *a)
{
  drop_result (self, a->kind);
  self->results[a->kind] = a;
}

/* Drops every result and stops every job (a new run, model or database). */
static void
reset (SaccadeAblationPage *self)
{
  saccade_study_jobs_stop (self->jobs);
  for (int k = 0; k < SACCADE_ABLATION_N_KINDS; k++)
    drop_result (self, (SaccadeAblationKind) k);
  ablation_refresh_stored (self);
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

  if (!saccade_study_jobs_finish_lookup (self->jobs, result))
    {
      saccade_ablation_free (a);
      return;
    }
  if (kind < SACCADE_ABLATION_N_KINDS && (tag >> 4) != self->lookup_gen[kind])
    g_clear_pointer (&a, saccade_ablation_free); /* its options changed meanwhile */
  if (a != NULL && self->results[a->kind] == NULL)
    set_result (self, a);
  else
    {
      saccade_ablation_free (a);
      /* Not found is the usual answer; anything else (a damaged database) is said. */
      if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
          && !saccade_study_jobs_get_running (self->jobs))
        set_status (self, error->message);
    }
  if (saccade_study_jobs_get_lookups (self->jobs) == 0)
    {
      /* Show what was found: the chosen study, or else (when the run was just shown) the
       * first study that has one. */
      if (shown_result (self) == NULL && self->choose_found)
        for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
          if (self->results[ablation_studies[i].kind] != NULL)
            {
              gtk_drop_down_set_selected (self->study_dropdown, (guint) i);
              break;
            }
      self->choose_found = FALSE;
      ablation_refresh_stored (self);
      ablation_show_result (self);
    }
  update_actions (self);
}

/* Looks for a stored study of @kind with the default target and the chosen options. */
static void
lookup_kind (SaccadeAblationPage *self, SaccadeAblationKind kind)
{
  SaccadePage *page = SACCADE_PAGE (self);
  SaccadeRun *run = saccade_page_get_run (page);
  SaccadeLoadedModel *model = saccade_page_get_model (page);
  const char *db = saccade_page_get_db_path (page);
  g_autofree char *other_model = saccade_page_dup_other_model (page);
  const gboolean other = other_model != NULL;
  SaccadeAblationParams params;

  if (run == NULL || model == NULL || db == NULL)
    return;
  ablation_current_params (self, -1, &params);
  if ((ABLATION_NEEDS_PAIR (ablation_study_of_kind (kind)) && params.corrupted_run <= 0)
      || (kind == SACCADE_ABLATION_PATH_PATCH && params.senders[0] == '\0'))
    return; /* no second run or no senders: nothing can be stored */
  /* a run of another model: its studies as its own model stored them, read-only (but
   * faithfulness, whose head level is read on the loaded model) */
  if (other && kind == SACCADE_ABLATION_FAITH)
    return;
  self->lookup_gen[kind]++;
  saccade_ablation_async (self, model, db, run->id, kind, &params,
                          SACCADE_STUDY_STORED_ONLY | (other ? SACCADE_STUDY_RUN_MODEL : 0),
                          saccade_study_jobs_lookup (self->jobs), NULL, NULL, lookup_done,
                          LOOKUP_TAG (kind, self->lookup_gen[kind]));
}

static void
start_lookups (SaccadeAblationPage *self)
{
  self->choose_found = TRUE;
  for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
    lookup_kind (self, ablation_studies[i].kind);
}

/* An option of @kind changed: what is shown was for the old value; find the new one. */
void
ablation_options_changed (SaccadeAblationPage *self, SaccadeAblationKind kind)
{
  if (self->updating || saccade_study_jobs_get_running (self->jobs))
    return;
  drop_result (self, kind);
  lookup_kind (self, kind);
  ablation_refresh_stored (self);
  ablation_show_result (self);
  update_actions (self);
}

static void
restart (SaccadeAblationPage *self)
{
  reset (self);
  start_lookups (self);
  ablation_show_result (self);
  update_actions (self);
}

/* ------------------------------------------------------------------------------------ */
/* Running a study                                                                       */

static char *
progress_text (gpointer owner, double fraction)
{
  SaccadeAblationPage *self = owner;

  /* Translators: a study's progress: its name, percent. */
  return g_strdup_printf (_("%s… %.0f %%"), _(ablation_study_of_kind (self->job_kind)->name),
                          100.0 * MAX (fraction, 0.0));
}

static void
study_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (source);
  g_autoptr (GError) error = NULL;
  SaccadeAblation *a = saccade_ablation_finish (result, &error);

  if (!saccade_study_jobs_finish_job (self->jobs, result))
    {
      saccade_ablation_free (a);
      return; /* another run, model, database or request took its place */
    }
  update_actions (self);
  if (a == NULL)
    {
      set_status (self, g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
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
          ablation_options_changed (self, SACCADE_ABLATION_DLA);
        if (self->results[SACCADE_ABLATION_FAITH] != NULL)
          ablation_options_changed (self, SACCADE_ABLATION_FAITH);
      }
  }
  ablation_refresh_stored (self);
  ablation_show_result (self);
}

gboolean
saccade_ablation_page_run (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  SaccadeRun *run = saccade_page_get_run (page);
  SaccadeLoadedModel *model = saccade_page_get_model (page);
  const char *db = saccade_page_get_db_path (page);
  const StudyKind *s = ablation_chosen_study (self);
  SaccadeAblationParams params;
  GCancellable *job;
  int target;

  if (run == NULL || model == NULL || db == NULL || saccade_study_jobs_get_running (self->jobs))
    return FALSE;
  if (!ablation_parse_token (self, model, self->target_entry, &target))
    return FALSE;
  ablation_current_params (self, target, &params);
  if ((ABLATION_NEEDS_PAIR (s) && params.corrupted_run <= 0)
      || !ablation_circuits_check (self, s, model)
      || (s->contrast && !ablation_parse_token (self, model, self->contrast_entry,
                                                &params.contrast)))
    return FALSE;
  ablation_metric_follow_contrast (self, params.contrast);
  self->job_kind = s->kind;
  job = saccade_study_jobs_start (self->jobs, progress_text, self);
  update_actions (self);
  saccade_ablation_async (self, model, db, run->id, s->kind, &params, SACCADE_STUDY_DEFAULT,
                          job, saccade_study_jobs_progress, self->jobs, study_done, NULL);
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                               */

static void
run_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_ablation_page_run (SACCADE_ABLATION_PAGE (widget));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_study_jobs_cancel (SACCADE_ABLATION_PAGE (widget)->jobs);
}

/* A view says what the pointer is over. */
static void
view_hover (SaccadeStudyView *view, const char *text, SaccadeAblationPage *self)
{
  gtk_label_set_text (self->hover_label, text != NULL ? text : "");
}

/* ------------------------------------------------------------------------------------ */
/* SaccadePage                                                                           */

static void
saccade_ablation_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  ablation_fill_corrupted (SACCADE_ABLATION_PAGE (page));
  restart (SACCADE_ABLATION_PAGE (page));
  ablation_faith_file_follow (SACCADE_ABLATION_PAGE (page)); /* another database, maybe */
}

static void
saccade_ablation_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  restart (SACCADE_ABLATION_PAGE (page));
  ablation_update_runs_label (SACCADE_ABLATION_PAGE (page));
  ablation_faith_file_follow (SACCADE_ABLATION_PAGE (page));
}

static char *
saccade_ablation_page_dup_figure_title (SaccadePage *page)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (page);

  if (shown_result (self) == NULL)
    return g_strdup ("");
  return saccade_study_view_dup_title (self->views[ablation_chosen_study (self)->kind]);
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
  return saccade_study_view_export_figure (self->views[ablation_chosen_study (self)->kind], path, error);
}

static gboolean
saccade_ablation_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (page);
  SaccadeRun *run = saccade_page_get_run (page);
  g_autoptr (GBytes) data = NULL;

  if (no_result (self, error))
    return FALSE;
  data = saccade_ablation_csv (shown_result (self), run != NULL ? run->tokens : NULL,
                               run != NULL ? (const char *const *) run->labels : NULL,
                               run != NULL ? run->n : 0);
  return saccade_export_write (data, path, error);
}

static gboolean
saccade_ablation_page_is_busy (SaccadePage *page)
{
  return saccade_study_jobs_get_busy (SACCADE_ABLATION_PAGE (page)->jobs);
}

static void
saccade_ablation_page_get_property (GObject *object, guint prop_id, GValue *value,
                                    GParamSpec *pspec)
{
  if (!saccade_page_get_status (SACCADE_ABLATION_PAGE (object)->jobs, PROP_STATUS, prop_id,
                                value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
saccade_ablation_page_dispose (GObject *object)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (object);

  if (self->jobs != NULL)
    saccade_study_jobs_stop (self->jobs);
  for (int k = 0; k < SACCADE_ABLATION_N_KINDS; k++)
    if (self->views[k] != NULL)
      drop_result (self, (SaccadeAblationKind) k);
  memset (self->views, 0, sizeof self->views);
  if (self->faith_file != NULL)
    {
      GtkWindow *w = self->faith_file;
      g_object_remove_weak_pointer (G_OBJECT (w), (gpointer *) &self->faith_file);
      self->faith_file = NULL;
      gtk_window_destroy (w);
    }
  g_clear_object (&self->jobs);
  g_clear_object (&self->stored_names);
  g_clear_pointer (&self->corrupted_ids, g_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_ABLATION_PAGE);
  G_OBJECT_CLASS (saccade_ablation_page_parent_class)->dispose (object);
}

static void
saccade_ablation_page_class_init (SaccadeAblationPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->dispose = saccade_ablation_page_dispose;
  object_class->get_property = saccade_ablation_page_get_property;
  page_class->set_run = saccade_ablation_page_set_run;
  page_class->set_model = saccade_ablation_page_set_model;
  page_class->dup_figure_title = saccade_ablation_page_dup_figure_title;
  page_class->export_figure = saccade_ablation_page_export_figure;
  page_class->export_csv = saccade_ablation_page_export_csv;
  page_class->is_busy = saccade_ablation_page_is_busy;

  /* SaccadeAblationPage:status: the status line. :fraction: of the running study, 0 when
   * none runs. */
  saccade_page_class_install_status (object_class, PROP_STATUS);

  gtk_widget_class_install_action (widget_class, "page.run-study", NULL, run_action);
  gtk_widget_class_install_action (widget_class, "page.cancel", NULL, cancel_action);
  ablation_options_class_init (widget_class);

  g_type_ensure (ADW_TYPE_STATUS_PAGE);
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
  CHILD (metric_box);
  CHILD (permute_box);
  CHILD (permutations_spin);
  CHILD (runs_label);
  CHILD (erasure_box);
  CHILD (erase_kind_dropdown);
  CHILD (seeds_spin);
  CHILD (source_box);
  CHILD (source_dropdown);
  CHILD (reference_dropdown);
  CHILD (contrast_box);
  CHILD (contrast_entry);
  CHILD (patch_box);
  CHILD (corrupted_dropdown);
  CHILD (direction_dropdown);
  CHILD (what_dropdown);
#undef CHILD
}

/* One view per kind in the figure stack, under its study's child name (the head sweeps
 * share theirs). */
static void
add_views (SaccadeAblationPage *self)
{
  for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
    {
      GtkWidget *view = gtk_stack_get_child_by_name (self->figure_stack, ablation_studies[i].child);
      if (view == NULL)
        {
          view = g_object_new (ablation_studies[i].view_type (), NULL);
          gtk_stack_add_named (self->figure_stack, view, ablation_studies[i].child);
          g_signal_connect (view, "hover", G_CALLBACK (view_hover), self);
        }
      self->views[ablation_studies[i].kind] = SACCADE_STUDY_VIEW (view);
    }
}

static void
saccade_ablation_page_init (SaccadeAblationPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->jobs = saccade_study_jobs_new (self->status_label, self->progress_bar,
                                       self->cancel_button);
  saccade_page_forward_status (G_OBJECT (self), self->jobs);
  ablation_options_init (self);
  self->stored_names = gtk_string_list_new (NULL);
  gtk_drop_down_set_model (self->stored_dropdown, G_LIST_MODEL (self->stored_names));

  add_views (self);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->hover_label),
                               _("Click a head in the map or the table to open it on the "
                                 "Heatmap page"));
  saccade_page_set_figure (SACCADE_PAGE (self),
                           saccade_study_view_get_figure (self->views[SACCADE_ABLATION_HEADS]));

  g_signal_connect_swapped (self->target_entry, "activate", G_CALLBACK (saccade_ablation_page_run),
                            self);
  g_signal_connect_swapped (self->contrast_entry, "activate",
                            G_CALLBACK (saccade_ablation_page_run), self);
  ablation_refresh_stored (self);
  ablation_show_result (self);
  update_actions (self);
}
