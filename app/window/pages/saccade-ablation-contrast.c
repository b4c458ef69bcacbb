/* saccade-ablation-contrast.c — the Ablation page's target and contrast (see
 * saccade-ablation-private.h): the tokens its entries name, and the metric chooser
 * following the contrast (a study measured against a contrast B is shown as its Δ logit
 * difference, logit(A) − logit(B)). The entries are set by typing, or from the predictions
 * panel through the window (page.target, page.contrast: saccade-window-targets.c).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-model.h"

gboolean
ablation_parse_token (SaccadeAblationPage *self, SaccadeLoadedModel *model, GtkEntry *entry,
                      int *token)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ids = NULL;

  *token = -1;
  if (text == NULL || *text == '\0')
    return TRUE;
  ids = saccade_tokenize (saccade_loaded_model_get_model (model), text, -1, FALSE, &error);
  if (ids == NULL)
    {
      saccade_study_jobs_set_status (self->jobs, error->message);
      return FALSE;
    }
  if (ids->len != 1)
    {
      g_autofree char *msg =
        entry == self->contrast_entry
          /* Translators: the typed contrast and its number of tokens. */
          ? g_strdup_printf (_("The contrast “%s” is %u tokens: type one token, or nothing"),
                             text, ids->len)
          /* Translators: the typed target and its number of tokens. */
          : g_strdup_printf (_("The target “%s” is %u tokens: type one token (or nothing, for "
                               "the clean top-1)"), text, ids->len);
      saccade_study_jobs_set_status (self->jobs, msg);
      return FALSE;
    }
  *token = g_array_index (ids, int32_t, 0);
  return TRUE;
}

void
ablation_metric_follow_contrast (SaccadeAblationPage *self, int contrast)
{
  const int metric = ablation_chosen_metric (self);

  if (!ablation_chosen_study (self)->metric)
    return;
  if (contrast >= 0 && metric != SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF)
    gtk_drop_down_set_selected (self->metric_dropdown, SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF);
  else if (contrast < 0 && metric == SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF)
    gtk_drop_down_set_selected (self->metric_dropdown, SACCADE_ABLATION_METRIC_DELTA_LOGP);
}

char *
ablation_dup_contrast_status (SaccadeAblationPage *self, const SaccadeAblation *a)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  g_autofree char *measure = NULL;
  int target, contrast;
  double m;

  if (a->heads != NULL)
    target = a->heads->target, contrast = a->heads->contrast, m = a->heads->logit_diff_clean;
  else if (a->tokens != NULL)
    target = a->tokens->target, contrast = a->tokens->contrast, m = a->tokens->logit_diff_clean;
  else if (a->layers != NULL)
    target = a->layers->target, contrast = a->layers->contrast, m = a->layers->logit_diff_clean;
  else
    return NULL;
  measure = saccade_study_dup_contrast (model, target, contrast);
  return measure != NULL ? g_strdup_printf (" · %s = %.3f", measure, m) : NULL;
}
