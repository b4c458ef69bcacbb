/* saccade-ablation-circuits.c — the Ablation page's choosers of the two circuit studies
 * (saccade-ablation-private.h): path patching's senders entry ("L23.H3, L20.H0", parsed
 * as `saccade study path-patch --senders` parses it, spaces allowed) and receiver
 * component, shown beside patching's corrupted run and direction; QK attribution's layer,
 * head, query and key spin buttons. The layer and head follow the head the Heatmap page
 * shows (the page's cursor); the query's −1 is the last token and the key's −1 the token
 * that head attends most from the query (resolved in the study's worker, from the run's
 * stored attention). Built in code, after the patching box of the template.
 *
 * Not here: the study table and the other choosers (saccade-ablation-options.c), the
 * results and jobs (saccade-ablation-page.c).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-ablation-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-model.h"
#include "app/core/saccade-run.h"

enum { QK_LAYER, QK_HEAD, QK_QUERY, QK_KEY };

/* What a spin button at −1 says (translated at use): the query's and the key's defaults. */
static const char *const QK_NONE[4] = {
  NULL, NULL,
  /* Translators: QK attribution's query at its default, the last token. */
  N_("last"),
  /* Translators: QK attribution's key at its default: the token the head attends most. */
  N_("most attended"),
};

/* "L23.H3, L20.H0" without its spaces into @canonical (SC_STUDY_HEADS_MAX): the count of
 * heads, or −1 (sc_study_heads_parse). */
static int
parse_senders (const char *text, int *layer, int *head, char *canonical)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (const char *p = text; p != NULL && *p != '\0'; p++)
    if (!g_ascii_isspace (*p))
      g_string_append_c (s, *p);
  return sc_study_heads_parse (s->str, layer, head, canonical);
}

void
ablation_circuits_params (SaccadeAblationPage *self, SaccadeAblationParams *p)
{
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT];

  if (parse_senders (gtk_editable_get_text (GTK_EDITABLE (self->senders_entry)), layer, head,
                     p->senders) < 1)
    p->senders[0] = '\0';
  p->path_component = (int) MIN (gtk_drop_down_get_selected (self->component_dropdown),
                                 SC_PATH_VALUES);
  p->qk_layer = gtk_spin_button_get_value_as_int (self->qk_spins[QK_LAYER]);
  p->qk_head = gtk_spin_button_get_value_as_int (self->qk_spins[QK_HEAD]);
  p->qk_query = gtk_spin_button_get_value_as_int (self->qk_spins[QK_QUERY]);
  p->qk_key = gtk_spin_button_get_value_as_int (self->qk_spins[QK_KEY]);
}

gboolean
ablation_circuits_check (SaccadeAblationPage *self, const StudyKind *s,
                         SaccadeLoadedModel *model)
{
  const ScModelInfo *info = sc_model_info (saccade_loaded_model_get_model (model));
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->senders_entry));
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT], n;
  char canonical[SC_STUDY_HEADS_MAX];
  g_autofree char *msg = NULL;

  if (s->options != OPTIONS_PATH)
    return TRUE;
  n = parse_senders (text, layer, head, canonical);
  if (n < 1)
    /* Translators: the senders entry of path patching held something else. */
    msg = g_strdup_printf (_("The senders “%s” are not a list of heads like L23.H3, L20.H0"),
                           text);
  for (int i = 0; msg == NULL && i < n; i++)
    if (layer[i] >= (int) info->n_layers || head[i] >= (int) info->n_heads)
      /* Translators: a sender outside the model: the head, the model, its layers and
       * heads. */
      msg = g_strdup_printf (_("The sender L%d.H%d is not a head of %s (%u layers of %u "
                               "heads)"), layer[i], head[i], info->name, info->n_layers,
                             info->n_heads);
  if (msg == NULL && layer[n - 1] >= (int) info->n_layers - 1)
    /* Translators: path patching needs a receiver after the latest sender. */
    msg = g_strdup_printf (_("The sender L%d.H%d is in the last layer: no head receives "
                             "from it"), layer[n - 1], head[n - 1]);
  if (msg == NULL)
    return TRUE;
  saccade_study_jobs_set_status (self->jobs, msg);
  return FALSE;
}

char *
ablation_circuits_refusal (SaccadeAblationPage *self, ScModel *model)
{
  const ScModelInfo *info = model != NULL ? sc_model_info (model) : NULL;

  /* sc-qk-study.h: the split is written per architecture (norms, RoPE, biases) */
  if (info == NULL || ablation_chosen_study (self)->options != OPTIONS_QK
      || sc_qk_supports (info))
    return NULL;
  /* Translators: QK attribution refused; %s: the loaded model's architecture. */
  return g_strdup_printf (_("QK attribution splits the scores of llama, gemma3, qwen2, qwen3 "
                            "and gpt2 heads: %s models are not supported"), info->arch_name);
}

/* ------------------------------------------------------------------------------------ */
/* Spin buttons                                                                          */

static gboolean
spin_output (GtkSpinButton *spin, gpointer data)
{
  const char *none = data;

  if (gtk_spin_button_get_value_as_int (spin) >= 0)
    return FALSE;
  gtk_editable_set_text (GTK_EDITABLE (spin), _(none));
  return TRUE;
}

static int
spin_input (GtkSpinButton *spin, double *value, gpointer data)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));

  if (g_strcmp0 (text, _((const char *) data)) != 0)
    return FALSE;
  *value = -1;
  return TRUE;
}

static void cursor_moved (GtkWidget *layer_spin);

void
ablation_circuits_update_ranges (SaccadeAblationPage *self)
{
  SaccadeLoadedModel *loaded = saccade_page_get_model (SACCADE_PAGE (self));
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const ScModelInfo *info = loaded != NULL
                              ? sc_model_info (saccade_loaded_model_get_model (loaded))
                              : NULL;
  const int n = run != NULL ? run->n : 1;
  const gboolean was = self->updating;

  self->updating = TRUE;
  if (info != NULL)
    {
      gtk_spin_button_set_range (self->qk_spins[QK_LAYER], 0, info->n_layers - 1);
      gtk_spin_button_set_range (self->qk_spins[QK_HEAD], 0, info->n_heads - 1);
    }
  gtk_spin_button_set_range (self->qk_spins[QK_QUERY], -1, n - 1);
  gtk_spin_button_set_range (self->qk_spins[QK_KEY], -1, n - 1);
  /* a value clamped before the model was loaded follows the cursor again */
  cursor_moved (GTK_WIDGET (self->qk_spins[QK_LAYER]));
  self->updating = was;
}

/* The Heatmap page's head moved (or the ranges changed): QK attribution studies that
 * head. Connected with the layer spin button as its object, so no call reaches a page whose
 * choosers are gone (a binding may set the cursor while the window is torn down). */
static void
cursor_moved (GtkWidget *layer_spin)
{
  SaccadeAblationPage *self =
    (SaccadeAblationPage *) gtk_widget_get_ancestor (layer_spin, SACCADE_TYPE_ABLATION_PAGE);

  if (self == NULL)
    return;
  gtk_spin_button_set_value (self->qk_spins[QK_LAYER],
                             saccade_page_get_layer (SACCADE_PAGE (self)));
  gtk_spin_button_set_value (self->qk_spins[QK_HEAD],
                             saccade_page_get_head (SACCADE_PAGE (self)));
}

static void
path_changed (SaccadeAblationPage *self)
{
  ablation_options_changed (self, SACCADE_ABLATION_PATH_PATCH);
}

static void
qk_changed (SaccadeAblationPage *self)
{
  ablation_options_changed (self, SACCADE_ABLATION_QK);
}

void
ablation_circuits_show (SaccadeAblationPage *self, const StudyKind *s)
{
  gtk_widget_set_visible (self->path_box, s->options == OPTIONS_PATH);
  gtk_widget_set_visible (self->qk_box, s->options == OPTIONS_QK);
  /* path patching patches along its component, not `what` */
  gtk_widget_set_visible (GTK_WIDGET (self->what_dropdown), s->options == OPTIONS_PATCH);
}

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                               */

/* page.senders (the entry's text), page.component (queries, keys, values), page.qk-layer,
 * page.qk-head, page.qk-query, page.qk-key (a number; −1 for the query's and the key's
 * defaults), page.qk-each (yes, no: the QK view's "Each head"): what their choosers do. */
static void
circuit_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAblationPage *self = SACCADE_ABLATION_PAGE (widget);
  static const char *const spins[4] = { "page.qk-layer", "page.qk-head", "page.qk-query",
                                        "page.qk-key" };
  const char *value = g_variant_get_string (param, NULL);
  gint64 v;

  if (g_str_equal (name, "page.senders"))
    {
      gtk_editable_set_text (GTK_EDITABLE (self->senders_entry), value);
      return;
    }
  if (g_str_equal (name, "page.qk-each") && (g_str_equal (value, "yes") || g_str_equal (value, "no")))
    {
      saccade_qk_view_set_each_head (SACCADE_QK_VIEW (self->views[SACCADE_ABLATION_QK]),
                                     g_str_equal (value, "yes"));
      return;
    }
  if (g_str_equal (name, "page.component"))
    for (int i = 0; sc_path_component_names[i] != NULL; i++)
      if (g_str_equal (value, sc_path_component_names[i]))
        {
          gtk_drop_down_set_selected (self->component_dropdown, (guint) i);
          return;
        }
  for (int i = 0; i < 4; i++)
    if (g_str_equal (name, spins[i])
        && g_ascii_string_to_signed (value, 10, i < QK_QUERY ? 0 : -1, G_MAXINT, &v, NULL))
      {
        gtk_spin_button_set_value (self->qk_spins[i], (double) v);
        return;
      }
  g_warning ("the Ablation page's %s takes no '%s'", name, value);
}

void
ablation_circuits_class_init (GtkWidgetClass *widget_class)
{
  for (const char *const *a = (const char *const[]) { "page.senders", "page.component",
                                                      "page.qk-layer", "page.qk-head",
                                                      "page.qk-query", "page.qk-key",
                                                      "page.qk-each", NULL };
       *a != NULL; a++)
    gtk_widget_class_install_action (widget_class, *a, "s", circuit_action);
}

/* ------------------------------------------------------------------------------------ */
/* Building                                                                              */

static GtkWidget *
label_for (const char *text, GtkWidget *widget)
{
  GtkWidget *label = gtk_label_new_with_mnemonic (text);

  gtk_label_set_mnemonic_widget (GTK_LABEL (label), widget);
  gtk_widget_set_margin_start (label, 6);
  return label;
}

static void
build_path_box (SaccadeAblationPage *self)
{
  g_autoptr (GtkStringList) components = gtk_string_list_new (NULL);

  self->senders_entry = GTK_ENTRY (gtk_entry_new ());
  gtk_entry_set_placeholder_text (self->senders_entry, "L23.H3, L20.H0");
  gtk_editable_set_width_chars (GTK_EDITABLE (self->senders_entry), 14);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->senders_entry),
                               _("The sender heads, as L23.H3, L20.H0: their outputs are "
                                 "patched, and reach each later head only through the "
                                 "component chosen beside"));
  /* Translators: path patching's receiver inputs (ScPathComponent's order). */
  gtk_string_list_append (components, _("Queries"));
  gtk_string_list_append (components, _("Keys"));
  gtk_string_list_append (components, _("Values"));
  self->component_dropdown =
    GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (g_steal_pointer (&components)), NULL));
  /* `saccade study path-patch`'s default */
  gtk_drop_down_set_selected (self->component_dropdown, SC_PATH_KEYS);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->component_dropdown),
                               _("The receivers' input the senders are patched into: each "
                                 "later head's queries, keys or values, everything else "
                                 "frozen"));
  self->path_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  /* Translators: path patching's senders entry. */
  gtk_box_append (GTK_BOX (self->path_box), label_for (_("_Senders"),
                                                       GTK_WIDGET (self->senders_entry)));
  gtk_box_append (GTK_BOX (self->path_box), GTK_WIDGET (self->senders_entry));
  gtk_box_append (GTK_BOX (self->path_box), GTK_WIDGET (self->component_dropdown));
  g_signal_connect_swapped (self->senders_entry, "changed", G_CALLBACK (path_changed), self);
  g_signal_connect_swapped (self->component_dropdown, "notify::selected",
                            G_CALLBACK (path_changed), self);
  g_signal_connect_swapped (self->senders_entry, "activate",
                            G_CALLBACK (saccade_ablation_page_run), self);
}

static void
build_qk_box (SaccadeAblationPage *self)
{
  /* Translators: QK attribution's choosers: the head's layer and index, the query and key
   * positions (mnemonics). */
  const char *labels[4] = { _("_Layer"), _("H_ead"), _("_Query"), _("_Key") };
  const char *tips[4] = {
    _("The head's layer: follows the head shown on the Heatmap page"),
    _("The query head: follows the head shown on the Heatmap page"),
    _("The query position i (last: the last token)"),
    _("The key position j ≤ i (most attended: the token the head attends most from the "
      "query)"),
  };

  self->qk_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  for (int i = 0; i < 4; i++)
    {
      /* the ranges are the model's and the run's (ablation_circuits_update_ranges) */
      GtkSpinButton *spin =
        GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (i < QK_QUERY ? 0 : -1, 0, 1));
      self->qk_spins[i] = spin;
      gtk_spin_button_set_value (spin, i < QK_QUERY ? 0 : -1);
      gtk_editable_set_width_chars (GTK_EDITABLE (spin), i == QK_KEY ? 12 : i == QK_QUERY ? 5 : 3);
      gtk_widget_set_tooltip_text (GTK_WIDGET (spin), tips[i]);
      if (QK_NONE[i] != NULL)
        {
          /* new_with_range makes it numeric, which filters the words out */
          gtk_spin_button_set_numeric (spin, FALSE);
          g_signal_connect (spin, "output", G_CALLBACK (spin_output), (gpointer) QK_NONE[i]);
          g_signal_connect (spin, "input", G_CALLBACK (spin_input), (gpointer) QK_NONE[i]);
        }
      gtk_box_append (GTK_BOX (self->qk_box), label_for (labels[i], GTK_WIDGET (spin)));
      gtk_box_append (GTK_BOX (self->qk_box), GTK_WIDGET (spin));
      g_signal_connect_swapped (spin, "value-changed", G_CALLBACK (qk_changed), self);
    }
}

void
ablation_circuits_init (SaccadeAblationPage *self)
{
  GtkWidget *row = gtk_widget_get_parent (self->patch_box);

  build_path_box (self);
  build_qk_box (self);
  gtk_box_insert_child_after (GTK_BOX (row), self->qk_box, self->patch_box);
  gtk_box_insert_child_after (GTK_BOX (row), self->path_box, self->patch_box);
  ablation_circuits_update_ranges (self);
  g_signal_connect_object (self, "notify::layer", G_CALLBACK (cursor_moved),
                           self->qk_spins[QK_LAYER], G_CONNECT_SWAPPED);
  g_signal_connect_object (self, "notify::head", G_CALLBACK (cursor_moved),
                           self->qk_spins[QK_LAYER], G_CONNECT_SWAPPED);
}
