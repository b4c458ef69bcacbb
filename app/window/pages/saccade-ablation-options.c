/* saccade-ablation-options.c — the Ablation page's study table and choosers (see
 * saccade-ablation-private.h): which studies there are and what each shows, the study,
 * metric, target and option choosers (patching's: the corrupted run among the runs of the
 * same model and length, the direction, what is patched, the contrast), the page.* actions
 * that set them as a user does, and
 * what a change of choice does (the options shown, the stored studies looked up again).
 * Not the results, lookups or jobs: those are saccade-ablation-page.c's.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-model.h"
#include "app/core/saccade-run.h"
#include "app/window/studies/saccade-faith-file-window.h"

const StudyKind ablation_studies[] = {
  { "heads", N_("Head sweep — zero-ablation"), SACCADE_ABLATION_HEADS, "heads",
    saccade_heads_view_get_type, TRUE, -1, OPTIONS_NONE, TRUE },
  { "heads-mean", N_("Head sweep — mean-ablation"), SACCADE_ABLATION_HEADS_MEAN, "heads",
    saccade_heads_view_get_type, TRUE, -1, OPTIONS_NONE, TRUE },
  { "heads-first", N_("Head sweep — first-order first pass, top 30 exact"),
    SACCADE_ABLATION_HEADS_FIRST, "heads", saccade_heads_view_get_type, TRUE, -1, OPTIONS_NONE,
    TRUE },
  { "tokens", N_("Token leave-one-out — mask / drop"), SACCADE_ABLATION_TOKENS, "tokens",
    saccade_effect_bars_view_get_type, TRUE, -1, OPTIONS_NONE, TRUE },
  { "permute", N_("Attention permutation"), SACCADE_ABLATION_PERMUTE, "permute",
    saccade_permute_view_get_type, TRUE, SACCADE_ABLATION_METRIC_TV, OPTIONS_PERMUTE },
  { "erasure", N_("Erasure curves"), SACCADE_ABLATION_ERASURE, "erasure",
    saccade_erasure_view_get_type, FALSE, -1, OPTIONS_ERASURE },
  { "dla", N_("Direct logit attribution"), SACCADE_ABLATION_DLA, "dla",
    saccade_dla_view_get_type, FALSE, -1, OPTIONS_NONE, TRUE },
  { "faithfulness", N_("Faithfulness — attention vs leave-one-out"), SACCADE_ABLATION_FAITH,
    "faith", saccade_faith_view_get_type, FALSE, -1, OPTIONS_SOURCE, TRUE },
  { "layers", N_("Layer sweep — each layer's attention zero-ablated"), SACCADE_ABLATION_LAYERS,
    "layers", saccade_effect_bars_view_get_type, TRUE, -1, OPTIONS_NONE, TRUE },
  { "patch", N_("Activation patching"), SACCADE_ABLATION_PATCH,
    "patch", saccade_patch_view_get_type, FALSE, -1, OPTIONS_PATCH, TRUE },
  { "attribution-patch", N_("Attribution patching — first-order estimate"),
    SACCADE_ABLATION_ATTR_PATCH, "attr-patch", saccade_patch_view_get_type, FALSE, -1,
    OPTIONS_PATCH, TRUE },
  { "lens", N_("Logit lens — each layer's prediction"), SACCADE_ABLATION_LENS, "lens",
    saccade_effect_bars_view_get_type, FALSE, -1, OPTIONS_NONE, TRUE },
  { "mixing-vz", N_("Context mixing — value zeroing, rolled out"), SACCADE_ABLATION_MIXING_VZ,
    "mixing", saccade_mixing_view_get_type, FALSE, -1, OPTIONS_NONE },
  { "mixing-alti", N_("Context mixing — ALTI, rolled out"), SACCADE_ABLATION_MIXING_ALTI,
    "mixing", saccade_mixing_view_get_type, FALSE, -1, OPTIONS_NONE },
  { "path-patch", N_("Path patching — senders into receivers"), SACCADE_ABLATION_PATH_PATCH,
    "path-patch", saccade_patch_view_get_type, FALSE, -1, OPTIONS_PATH, TRUE },
  { "qk", N_("QK attribution — why a head attends"), SACCADE_ABLATION_QK, "qk",
    saccade_qk_view_get_type, FALSE, -1, OPTIONS_QK },
};

G_STATIC_ASSERT (G_N_ELEMENTS (ablation_studies) == ABLATION_N_STUDIES);
G_STATIC_ASSERT (SACCADE_ABLATION_DEFAULT_FIRST_TOP == 30); /* "top 30" in the name above */

const StudyKind *
ablation_study_of_kind (SaccadeAblationKind kind)
{
  for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
    if (ablation_studies[i].kind == kind)
      return &ablation_studies[i];
  return &ablation_studies[0];
}

const StudyKind *
ablation_chosen_study (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->study_dropdown);
  return &ablation_studies[i < ABLATION_N_STUDIES ? i : 0];
}

int
ablation_chosen_metric (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->metric_dropdown);
  return i < SACCADE_ABLATION_N_METRICS ? (int) i : SACCADE_ABLATION_METRIC_DELTA_LOGP;
}

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                               */

static void
metric_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  const char *id = g_variant_get_string (param, NULL);

  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
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
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  const char *id = g_variant_get_string (param, NULL);

  for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
    if (g_strcmp0 (ablation_studies[i].id, id) == 0)
      {
        gtk_drop_down_set_selected (self->study_dropdown, (guint) i);
        return;
      }
  g_warning ("the Ablation page has no study '%s'", id);
}

/* page.target, page.contrast: what typing in their entries does. */
static void
target_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  GtkEntry *entry = g_str_equal (name, "page.contrast") ? self->contrast_entry
                                                        : self->target_entry;

  gtk_editable_set_text (GTK_EDITABLE (entry), g_variant_get_string (param, NULL));
}

/* The index of @value in the NULL-terminated @names, or -1. */
static int
name_index (const char *const *names, const char *value)
{
  for (int i = 0; names[i] != NULL; i++)
    if (g_str_equal (names[i], value))
      return i;
  return -1;
}

/* page.permutations, page.seeds, page.erase-kind, page.source, page.reference (mask, drop,
 * trace), and patching's
 * page.corrupted (a run id of the chooser), page.direction (denoise, noise), page.what
 * (heads, head-positions, residual, patterns, queries, keys, values): what their choosers
 * do. */
static void
option_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  const char *value = g_variant_get_string (param, NULL);
  guint64 v;
  int named;
  ScFaithErase reference;

  if (g_str_equal (name, "page.erase-kind")
      && (g_str_equal (value, "mask") || g_str_equal (value, "drop")))
    {
      gtk_drop_down_set_selected (self->erase_kind_dropdown, g_str_equal (value, "drop"));
      return;
    }
  if (g_str_equal (name, "page.reference") && sc_faith_erase_from_id (value, &reference))
    {
      gtk_drop_down_set_selected (self->reference_dropdown, (guint) reference);
      return;
    }
  if (g_str_equal (name, "page.source"))
    for (int i = 0; i < SACCADE_FAITH_N_CHOICES; i++)
      if (g_str_equal (value, saccade_faith_choice_id ((SaccadeFaithChoice) i)))
        {
          gtk_drop_down_set_selected (self->source_dropdown, (guint) i);
          return;
        }
  if (g_str_equal (name, "page.permutations")
      && g_ascii_string_to_unsigned (value, 10, 1, SC_PERMUTATION_MAX_N, &v, NULL))
    {
      gtk_spin_button_set_value (self->permutations_spin, (double) v);
      return;
    }
  if (g_str_equal (name, "page.seeds")
      && g_ascii_string_to_unsigned (value, 10, 0, SC_ERASURE_MAX_SEEDS, &v, NULL))
    {
      gtk_spin_button_set_value (self->seeds_spin, (double) v);
      return;
    }
  if ((g_str_equal (name, "page.direction")
       && (named = name_index (sc_patch_direction_names, value)) >= 0)
      || (g_str_equal (name, "page.what")
          && (named = name_index (sc_patch_what_names, value)) >= 0))
    {
      gtk_drop_down_set_selected (g_str_equal (name, "page.what") ? self->what_dropdown
                                                                  : self->direction_dropdown,
                                  (guint) named);
      return;
    }
  if (g_str_equal (name, "page.corrupted")
      && g_ascii_string_to_unsigned (value, 10, 1, G_MAXINT64, &v, NULL))
    for (guint k = 0; k < self->corrupted_ids->len; k++)
      if (g_array_index (self->corrupted_ids, gint64, k) == (gint64) v)
        {
          gtk_drop_down_set_selected (self->corrupted_dropdown, k);
          return;
        }
  g_warning ("the Ablation page's %s takes no '%s'", name, value);
}

/* ------------------------------------------------------------------------------------ */
/* Choosers                                                                              */

/* "≈ 2,160 runs" beside the spin button: N × the model's heads. */
void
ablation_update_runs_label (SaccadeAblationPage *self)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  const int n = gtk_spin_button_get_value_as_int (self->permutations_spin);
  g_autofree char *text = NULL;

  if (model != NULL)
    {
      const ScModelInfo *info = sc_model_info (saccade_loaded_model_get_model (model));
      const int heads = (int) (info->n_layers * info->n_heads);
      /* Translators: the permutation study's size: N × heads = runs of the sentence. */
      text = g_strdup_printf (_("%d × %d heads = %d runs"), n, heads, n * heads);
      /* Past a thousand runs a study takes minutes on a laptop's CPU: say so in colour. */
      if (n * heads > 1000)
        gtk_widget_add_css_class (GTK_WIDGET (self->runs_label), "warning");
      else
        gtk_widget_remove_css_class (GTK_WIDGET (self->runs_label), "warning");
    }
  gtk_label_set_text (self->runs_label, text != NULL ? text : "");
  ablation_circuits_update_ranges (self);
}

/* The chosen study's own choosers shown, the others hidden. */
void
ablation_show_options (SaccadeAblationPage *self)
{
  const StudyKind *s = ablation_chosen_study (self);

  gtk_widget_set_visible (self->metric_box, s->metric);
  gtk_widget_set_visible (self->permute_box, s->options == OPTIONS_PERMUTE);
  gtk_widget_set_visible (self->erasure_box, s->options == OPTIONS_ERASURE);
  gtk_widget_set_visible (self->source_box, s->options == OPTIONS_SOURCE);
  gtk_widget_set_visible (self->patch_box, ABLATION_NEEDS_PAIR (s));
  ablation_circuits_show (self, s);
  gtk_widget_set_visible (self->contrast_box, s->contrast);
  /* empty: patching's default is the corrupted run's top-1, attribution's no contrast */
  gtk_entry_set_placeholder_text (self->contrast_entry, ABLATION_NEEDS_PAIR (s)
                                                          ? _("corrupted top-1")
                                                          /* Translators: no contrast token. */
                                                          : C_("contrast", "none"));
  ablation_update_runs_label (self);
}

gint64
ablation_chosen_corrupted (SaccadeAblationPage *self)
{
  guint i = gtk_drop_down_get_selected (self->corrupted_dropdown);

  return i < self->corrupted_ids->len ? g_array_index (self->corrupted_ids, gint64, i) : 0;
}

void
ablation_fill_corrupted (SaccadeAblationPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  GListModel *runs = saccade_page_get_runs (SACCADE_PAGE (self));
  const gint64 kept = ablation_chosen_corrupted (self);
  const guint n = runs != NULL && run != NULL ? g_list_model_get_n_items (runs) : 0;
  g_autoptr (GtkStringList) names = gtk_string_list_new (NULL);
  guint sel = 0;

  g_array_set_size (self->corrupted_ids, 0);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (SaccadeRunItem) item = g_list_model_get_item (runs, i);
      const gint64 id = saccade_run_item_get_id (item);
      g_autofree char *name = NULL;
      if (id == run->id || saccade_run_item_get_n_tokens (item) != (guint) run->n
          || g_strcmp0 (saccade_run_item_get_model_name (item), run->model_name) != 0)
        continue;
      if (id == kept)
        sel = self->corrupted_ids->len;
      name = saccade_page_dup_run_choice (id, saccade_run_item_get_title (item));
      gtk_string_list_append (names, name);
      g_array_append_val (self->corrupted_ids, id);
    }
  if (self->corrupted_ids->len == 0)
    {
      g_autofree char *none = NULL;
      if (run != NULL)
        /* Translators: the corrupted-run chooser when no run fits; %d: the run's tokens. */
        none = g_strdup_printf (_("none of %d tokens"), run->n);
      gtk_string_list_append (names, none != NULL ? none : _("none"));
    }
  self->updating = TRUE;
  gtk_drop_down_set_model (self->corrupted_dropdown, G_LIST_MODEL (names));
  gtk_drop_down_set_selected (self->corrupted_dropdown, sel);
  self->updating = FALSE;
  gtk_widget_set_sensitive (GTK_WIDGET (self->corrupted_dropdown),
                            self->corrupted_ids->len > 0);
  ablation_circuits_update_ranges (self);
}

static void
study_chosen (SaccadeAblationPage *self)
{
  const StudyKind *s = ablation_chosen_study (self);

  if (s->default_metric >= 0 && !self->updating)
    {
      self->updating = TRUE;
      gtk_drop_down_set_selected (self->metric_dropdown, (guint) s->default_metric);
      self->updating = FALSE;
    }
  ablation_show_options (self);
  if (!self->updating)
    ablation_refresh_stored (self);
  ablation_show_result (self);
}

static void
permutations_changed (SaccadeAblationPage *self)
{
  ablation_update_runs_label (self);
  ablation_options_changed (self, SACCADE_ABLATION_PERMUTE);
}

static void
erasure_options_changed (SaccadeAblationPage *self)
{
  ablation_options_changed (self, SACCADE_ABLATION_ERASURE);
}

static void
faith_options_changed (SaccadeAblationPage *self)
{
  ablation_options_changed (self, SACCADE_ABLATION_FAITH);
}

static void
patch_options_changed (SaccadeAblationPage *self)
{
  /* exact, attribution and path patching share the run and direction */
  ablation_options_changed (self, SACCADE_ABLATION_PATCH);
  ablation_options_changed (self, SACCADE_ABLATION_ATTR_PATCH);
  ablation_options_changed (self, SACCADE_ABLATION_PATH_PATCH);
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
      ablation_show_result (self);
    }
}

void
ablation_faith_file_follow (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);

  if (self->faith_file != NULL)
    saccade_faith_file_window_set_model (SACCADE_FAITH_FILE_WINDOW (self->faith_file),
                                         saccade_page_get_model (page),
                                         saccade_page_get_db_path (page));
}

/* page.faith-file: the prompt-set window over the page's window, on the loaded model and
 * the open database (one window, presented again). */
static void
faith_file_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  GtkRoot *root = gtk_widget_get_root (widget);

  if (self->faith_file == NULL)
    {
      self->faith_file = GTK_WINDOW (saccade_faith_file_window_new (
        GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL));
      g_object_add_weak_pointer (G_OBJECT (self->faith_file), (gpointer *) &self->faith_file);
    }
  ablation_faith_file_follow (self);
  gtk_window_present (self->faith_file);
}

void
ablation_options_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "page.faith-file", NULL, faith_file_action);
  gtk_widget_class_install_action (widget_class, "page.study", "s", study_action);
  gtk_widget_class_install_action (widget_class, "page.metric", "s", metric_action);
  gtk_widget_class_install_action (widget_class, "page.target", "s", target_action);
  gtk_widget_class_install_action (widget_class, "page.permutations", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.seeds", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.erase-kind", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.reference", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.source", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.contrast", "s", target_action);
  gtk_widget_class_install_action (widget_class, "page.corrupted", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.direction", "s", option_action);
  gtk_widget_class_install_action (widget_class, "page.what", "s", option_action);
  ablation_circuits_class_init (widget_class);
}

void
ablation_options_init (SaccadeAblationPage *self)
{
  g_autoptr (GtkStringList) studies = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) metrics = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) kinds = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) sources = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) directions = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) whats = gtk_string_list_new (NULL);
  g_autoptr (GtkStringList) references = gtk_string_list_new (NULL);

  for (gsize i = 0; i < ABLATION_N_STUDIES; i++)
    gtk_string_list_append (studies, _(ablation_studies[i].name));
  gtk_drop_down_set_model (self->study_dropdown, G_LIST_MODEL (studies));
  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    gtk_string_list_append (metrics, saccade_study_metric_name (m));
  gtk_drop_down_set_model (self->metric_dropdown, G_LIST_MODEL (metrics));
  saccade_page_run_dropdown_init (self->corrupted_dropdown);
  /* Translators: the erasure kinds: taken out of every attention row, or from the input. */
  gtk_string_list_append (kinds, _("mask"));
  gtk_string_list_append (kinds, _("drop"));
  gtk_drop_down_set_model (self->erase_kind_dropdown, G_LIST_MODEL (kinds));
  for (int i = 0; i < SACCADE_FAITH_N_CHOICES; i++)
    gtk_string_list_append (sources, saccade_faith_choice_name ((SaccadeFaithChoice) i));
  gtk_drop_down_set_model (self->source_dropdown, G_LIST_MODEL (sources));
  for (int k = 0; k < SC_FAITH_N_ERASE; k++)
    gtk_string_list_append (references, saccade_faith_reference_name ((ScFaithErase) k));
  gtk_drop_down_set_model (self->reference_dropdown, G_LIST_MODEL (references));
  /* Translators: patching's directions (ScPatchDirection's order): which run is computed
   * and where the patched activation comes from. */
  gtk_string_list_append (directions, _("Denoise"));
  gtk_string_list_append (directions, _("Noise"));
  gtk_drop_down_set_model (self->direction_dropdown, G_LIST_MODEL (directions));
  /* Translators: what patching moves between the runs (ScPatchWhat's order). */
  gtk_string_list_append (whats, _("Heads"));
  gtk_string_list_append (whats, _("Heads × positions"));
  gtk_string_list_append (whats, _("Residual"));
  /* Translators: per query head, its attention pattern alone, or its query, key or value
   * input alone (ScPatchWhat's order, after Residual). */
  gtk_string_list_append (whats, _("Patterns"));
  gtk_string_list_append (whats, _("Queries"));
  gtk_string_list_append (whats, _("Keys"));
  gtk_string_list_append (whats, _("Values"));
  gtk_drop_down_set_model (self->what_dropdown, G_LIST_MODEL (whats));
  self->corrupted_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  ablation_circuits_init (self);
  ablation_fill_corrupted (self);
  g_signal_connect_swapped (self->study_dropdown, "notify::selected", G_CALLBACK (study_chosen),
                            self);
  g_signal_connect_swapped (self->metric_dropdown, "notify::selected", G_CALLBACK (ablation_show_result),
                            self);
  g_signal_connect_swapped (self->stored_dropdown, "notify::selected",
                            G_CALLBACK (stored_chosen), self);
  g_signal_connect_swapped (self->permutations_spin, "value-changed",
                            G_CALLBACK (permutations_changed), self);
  g_signal_connect_swapped (self->seeds_spin, "value-changed",
                            G_CALLBACK (erasure_options_changed), self);
  g_signal_connect_swapped (self->erase_kind_dropdown, "notify::selected",
                            G_CALLBACK (erasure_options_changed), self);
  g_signal_connect_swapped (self->reference_dropdown, "notify::selected",
                            G_CALLBACK (faith_options_changed), self);
  /* a new source is the same study drawn again */
  g_signal_connect_swapped (self->source_dropdown, "notify::selected", G_CALLBACK (ablation_show_result),
                            self);
  /* another corrupted run, direction or component is another patching study */
  for (GtkDropDown **dd = (GtkDropDown *[]) { self->corrupted_dropdown, self->direction_dropdown,
                                              self->what_dropdown, NULL };
       *dd != NULL; dd++)
    g_signal_connect_swapped (*dd, "notify::selected", G_CALLBACK (patch_options_changed), self);
  ablation_show_options (self);
}

/* The chosen options as a study's parameters (a kind ignores those it does not use). */
void
ablation_current_params (SaccadeAblationPage *self, int target, SaccadeAblationParams *p)
{
  *p = (SaccadeAblationParams) {
    .target = target,
    .n_permutations = gtk_spin_button_get_value_as_int (self->permutations_spin),
    .seed = 0,
    .erase_kind = gtk_drop_down_get_selected (self->erase_kind_dropdown) == 1 ? SC_ERASE_DROP
                                                                              : SC_ERASE_MASK,
    .faith_kind = (ScFaithErase) MIN (gtk_drop_down_get_selected (self->reference_dropdown),
                                      SC_FAITH_ERASE_TRACE),
    .n_random = gtk_spin_button_get_value_as_int (self->seeds_spin),
    .corrupted_run = ablation_chosen_corrupted (self),
    .contrast = -1,
    .patch_direction = (int) MIN (gtk_drop_down_get_selected (self->direction_dropdown),
                                  SC_PATCH_NOISE),
    .patch_what = (int) MIN (gtk_drop_down_get_selected (self->what_dropdown), SC_PATCH_VALUES),
  };
  ablation_circuits_params (self, p);
}

SaccadeLoadedModel *
ablation_own_model (SaccadeAblationPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  g_autofree char *other = saccade_page_dup_other_model (page);

  return other == NULL ? saccade_page_get_model (page) : NULL;
}
