/* saccade-page.c — the base widget of the window's pages (see saccade-page.h): the page's
 * name, title and icon, the run it shows, the shared layer/head cursor, the page.* stepping
 * actions with the keys that reach them, and the figure that takes the keyboard on a click.
 *
 * It draws nothing and lays out its one child (the subclass's template) with a
 * GtkBinLayout; what a page shows is the subclass's.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-page.h"

#include <glib/gi18n.h>

typedef struct
{
  /* Owned */
  char *page_id;
  char *title;
  char *icon_name;
  GSettings *settings;
  GStrv followed;     /* the settings keys the subclass follows, or NULL */
  SaccadePageSettingFunc follow;
  SaccadeRun *run;    /* the run shown, or NULL */
  char *db_path;      /* the window's database, or NULL */
  GListModel *runs;   /* its runs (SaccadeRunItem), or NULL */
  SaccadeLoadedModel *model; /* the window's loaded model, or NULL */
  int layer;          /* the cursor: within the run's shape, 0 without one */
  int head;

  /* Borrowed */
  GtkWidget *figure;  /* a descendant, from the subclass's template */
} SaccadePagePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (SaccadePage, saccade_page, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_PAGE_ID,
  PROP_TITLE,
  PROP_ICON_NAME,
  PROP_SETTINGS,
  PROP_LAYER,
  PROP_HEAD,
  PROP_FIGURE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  QUERY_HOVERED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* Replaces *@field with a copy of @value; TRUE when it changed (GLib 2.74 has no
 * g_set_str). */
static gboolean
set_string (char **field, const char *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return FALSE;
  g_free (*field);
  *field = g_strdup (value);
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* The page's actions                                                                    */

static void
update_actions (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  gboolean has_run = priv->run != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.previous-head", has_run);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.next-head", has_run);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.previous-layer", has_run);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.next-layer", has_run);
}

static void
step_action (GtkWidget *widget, const char *action_name, GVariant *param)
{
  SaccadePage *self = SACCADE_PAGE (widget);
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  int d_layer = 0, d_head = 0;

  if (priv->run == NULL)
    return;
  if (g_str_equal (action_name, "page.previous-head"))
    d_head = -1;
  else if (g_str_equal (action_name, "page.next-head"))
    d_head = 1;
  else if (g_str_equal (action_name, "page.previous-layer"))
    d_layer = -1;
  else
    d_layer = 1;
  saccade_page_select_head (self, priv->layer + d_layer, priv->head + d_head);
}

/* Arrow keys and Page Up/Down that no focused child used (a spin button keeps Up/Down):
 * Left/Right step the head, Up/Down and Page Up/Page Down the layer. Up is the next layer,
 * as in the layer spin button beside the figure (its Up key and its "+" raise the value):
 * the key and the picker it moves never disagree. A key controller in the bubble phase
 * rather than class shortcuts: the e2e test's driver replays keys through key controllers. */
static gboolean
key_pressed (GtkEventControllerKey *controller, guint keyval, guint keycode,
             GdkModifierType state, SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  const char *action;

  if ((state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SHIFT_MASK)) != 0 || priv->run == NULL)
    return FALSE;
  switch (keyval)
    {
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left:
      action = "page.previous-head";
      break;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right:
      action = "page.next-head";
      break;
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
    case GDK_KEY_Page_Up:
    case GDK_KEY_KP_Page_Up:
      action = "page.next-layer";
      break;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
    case GDK_KEY_Page_Down:
    case GDK_KEY_KP_Page_Down:
      action = "page.previous-layer";
      break;
    default:
      return FALSE;
    }
  gtk_widget_activate_action (GTK_WIDGET (self), action, NULL);
  return TRUE;
}

/* A click on the figure gives it the keyboard, so the arrow keys step through heads. */
static void
figure_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
  gtk_widget_grab_focus (gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture)));
}

/* ------------------------------------------------------------------------------------ */
/* Accessors                                                                             */

const char *
saccade_page_get_page_id (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  return priv->page_id;
}

void
saccade_page_set_page_id (SaccadePage *self, const char *page_id)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  if (set_string (&priv->page_id, page_id))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PAGE_ID]);
}

const char *
saccade_page_get_title (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  return priv->title;
}

void
saccade_page_set_title (SaccadePage *self, const char *title)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  if (set_string (&priv->title, title))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
}

const char *
saccade_page_get_icon_name (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  return priv->icon_name;
}

void
saccade_page_set_icon_name (SaccadePage *self, const char *icon_name)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  if (set_string (&priv->icon_name, icon_name))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ICON_NAME]);
}

GSettings *
saccade_page_get_settings (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  return priv->settings;
}

static void
followed_changed (SaccadePage *self, const char *key, GSettings *settings)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  g_autofree char *value = NULL;

  if (priv->followed == NULL || !g_strv_contains ((const char *const *) priv->followed, key))
    return;
  value = g_settings_get_string (settings, key);
  priv->follow (self, key, value);
}

void
saccade_page_follow_settings (SaccadePage *self, const char *const *keys,
                              SaccadePageSettingFunc changed)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self) && priv->settings != NULL);
  g_return_if_fail (priv->followed == NULL);
  priv->followed = g_strdupv ((char **) keys);
  priv->follow = changed;
  for (guint i = 0; keys[i] != NULL; i++)
    followed_changed (self, keys[i], priv->settings);
  g_signal_connect_object (priv->settings, "changed", G_CALLBACK (followed_changed), self,
                           G_CONNECT_SWAPPED);
}

SaccadeRun *
saccade_page_get_run (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  return priv->run;
}

int
saccade_page_get_layer (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), 0);
  return priv->layer;
}

int
saccade_page_get_head (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), 0);
  return priv->head;
}

void
saccade_page_set_layer (SaccadePage *self, int layer)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  layer = priv->run != NULL ? CLAMP (layer, 0, priv->run->n_layers - 1) : 0;
  if (layer == priv->layer)
    return;
  priv->layer = layer;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAYER]);
}

void
saccade_page_set_head (SaccadePage *self, int head)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  head = priv->run != NULL ? CLAMP (head, 0, priv->run->n_heads - 1) : 0;
  if (head == priv->head)
    return;
  priv->head = head;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HEAD]);
}

void
saccade_page_select_head (SaccadePage *self, int layer, int head)
{
  g_return_if_fail (SACCADE_IS_PAGE (self));
  saccade_page_set_layer (self, layer);
  saccade_page_set_head (self, head);
}

void
saccade_page_set_run (SaccadePage *self, SaccadeRun *run)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  SaccadeRun *old = priv->run;
  gboolean same_shape;

  g_return_if_fail (SACCADE_IS_PAGE (self));
  same_shape = old != NULL && run != NULL && old->n_layers == run->n_layers
               && old->n_heads == run->n_heads;
  priv->run = run != NULL ? saccade_run_ref (run) : NULL;
  g_clear_pointer (&old, saccade_run_unref);

  /* Keep the layer and head when the next run has the same shape (comparing sentences
   * head by head); else start at the first. */
  if (same_shape)
    saccade_page_select_head (self, priv->layer, priv->head);
  else
    saccade_page_select_head (self, 0, 0);
  if (SACCADE_PAGE_GET_CLASS (self)->set_run != NULL)
    SACCADE_PAGE_GET_CLASS (self)->set_run (self, run);
  update_actions (self);
}

void
saccade_page_set_database (SaccadePage *self, const char *db_path, GListModel *runs)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  if (g_strcmp0 (priv->db_path, db_path) != 0)
    {
      g_free (priv->db_path);
      priv->db_path = g_strdup (db_path);
    }
  g_set_object (&priv->runs, runs);
}

void
saccade_page_set_model (SaccadePage *self, SaccadeLoadedModel *model)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_PAGE (self));
  if (!g_set_object (&priv->model, model))
    return;
  if (SACCADE_PAGE_GET_CLASS (self)->set_model != NULL)
    SACCADE_PAGE_GET_CLASS (self)->set_model (self, model);
}

SaccadeLoadedModel *
saccade_page_get_model (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  return priv->model;
}

const char *
saccade_page_get_db_path (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  return priv->db_path;
}

GListModel *
saccade_page_get_runs (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  return priv->runs;
}

gboolean
saccade_page_has_export (SaccadePage *self)
{
  g_return_val_if_fail (SACCADE_IS_PAGE (self), FALSE);
  return SACCADE_PAGE_GET_CLASS (self)->export_figure != NULL;
}

gboolean
saccade_page_export_figure (SaccadePage *self, const char *path, GError **error)
{
  g_return_val_if_fail (saccade_page_has_export (self), FALSE);
  return SACCADE_PAGE_GET_CLASS (self)->export_figure (self, path, error);
}

gboolean
saccade_page_export_csv (SaccadePage *self, const char *path, GError **error)
{
  g_return_val_if_fail (SACCADE_IS_PAGE (self), FALSE);
  if (SACCADE_PAGE_GET_CLASS (self)->export_csv == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "this page has no data to export");
      return FALSE;
    }
  return SACCADE_PAGE_GET_CLASS (self)->export_csv (self, path, error);
}

SaccadeExportSource *
saccade_page_new_export_source (SaccadePage *self, GError **error)
{
  SaccadeRun *run;

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  if ((run = saccade_page_get_run (self)) == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("No run is shown"));
      return NULL;
    }
  return saccade_export_source_new_for_run (run, error);
}

gboolean
saccade_page_is_busy (SaccadePage *self)
{
  g_return_val_if_fail (SACCADE_IS_PAGE (self), FALSE);
  return SACCADE_PAGE_GET_CLASS (self)->is_busy != NULL
         && SACCADE_PAGE_GET_CLASS (self)->is_busy (self);
}

char *
saccade_page_dup_figure_title (SaccadePage *self)
{
  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  if (SACCADE_PAGE_GET_CLASS (self)->dup_figure_title == NULL)
    return g_strdup ("");
  return SACCADE_PAGE_GET_CLASS (self)->dup_figure_title (self);
}

GtkWidget *
saccade_page_get_figure (SaccadePage *self)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_PAGE (self), NULL);
  return priv->figure;
}

void
saccade_page_set_figure (SaccadePage *self, GtkWidget *figure)
{
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  GtkGesture *click;

  g_return_if_fail (SACCADE_IS_PAGE (self));
  g_return_if_fail (GTK_IS_WIDGET (figure) && gtk_widget_is_ancestor (figure, GTK_WIDGET (self)));
  g_return_if_fail (priv->figure == NULL); /* once: the click gesture is not taken back */

  priv->figure = figure;
  click = gtk_gesture_click_new ();
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (click), GTK_PHASE_CAPTURE);
  g_signal_connect (click, "pressed", G_CALLBACK (figure_pressed), NULL);
  gtk_widget_add_controller (figure, GTK_EVENT_CONTROLLER (click));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIGURE]);
}

/* How much of the run's text a figure title quotes (characters). */
#define TITLE_TEXT_CHARS 48

char *
saccade_page_dup_quoted_text (SaccadeRun *run)
{
  glong n;

  g_return_val_if_fail (run != NULL, NULL);
  n = g_utf8_strlen (run->text, -1);
  if (n <= TITLE_TEXT_CHARS)
    return g_strdup_printf ("“%s”", run->text);
  return g_strdup_printf ("“%.*s…”",
                          (int) (g_utf8_offset_to_pointer (run->text, TITLE_TEXT_CHARS - 1)
                                 - run->text),
                          run->text);
}

char *
saccade_page_dup_other_model (SaccadePage *self)
{
  return saccade_run_dup_other_model (saccade_page_get_run (self),
                                      saccade_page_get_model (self));
}

char *
saccade_run_dup_other_model (SaccadeRun *run, SaccadeLoadedModel *model)
{
  const ScStoreModel *ident = model != NULL ? saccade_loaded_model_get_ident (model) : NULL;
  char hex[SC_SHA256_HEX_SIZE];

  if (run == NULL || ident == NULL)
    return NULL;
  sc_sha256_hex (ident->sha256, hex);
  if (strcmp (hex, run->model_sha256) == 0)
    return NULL;
  /* Translators: the run, its model's name and the loaded model's (as the command line's
   * refusal), then what to do. */
  return g_strdup_printf (_("Run %lld was captured with %s, another model file than the "
                            "loaded %s: open that model to study it"),
                          (long long) run->id, run->model_name,
                          saccade_loaded_model_get_name (model));
}

char *
saccade_page_dup_run_title (SaccadePage *self, const char *what)
{
  SaccadeRun *run = saccade_page_get_run (self);
  g_autofree char *quote = NULL;

  if (run == NULL)
    return g_strdup ("");
  quote = saccade_page_dup_quoted_text (run);
  /* Translators: a figure's title: what it shows, the model, the sentence in quotes. */
  return g_strdup_printf (_("%s · %s · %s"), what, run->model_name, quote);
}

/* ------------------------------------------------------------------------------------ */
/* GObject                                                                               */

static void
saccade_page_dispose (GObject *object)
{
  SaccadePage *self = SACCADE_PAGE (object);
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);
  GtkWidget *child;

  /* Subclasses dispose their templates first; anything left is unparented here. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  priv->figure = NULL;
  g_clear_pointer (&priv->run, saccade_run_unref);
  g_clear_object (&priv->runs);
  g_clear_object (&priv->model);
  g_clear_pointer (&priv->db_path, g_free);
  g_clear_object (&priv->settings);
  g_clear_pointer (&priv->followed, g_strfreev);
  G_OBJECT_CLASS (saccade_page_parent_class)->dispose (object);
}

static void
saccade_page_finalize (GObject *object)
{
  SaccadePage *self = SACCADE_PAGE (object);
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  g_free (priv->page_id);
  g_free (priv->title);
  g_free (priv->icon_name);
  G_OBJECT_CLASS (saccade_page_parent_class)->finalize (object);
}

static void
saccade_page_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SaccadePage *self = SACCADE_PAGE (object);

  switch (prop_id)
    {
    case PROP_PAGE_ID:
      g_value_set_string (value, saccade_page_get_page_id (self));
      break;
    case PROP_TITLE:
      g_value_set_string (value, saccade_page_get_title (self));
      break;
    case PROP_ICON_NAME:
      g_value_set_string (value, saccade_page_get_icon_name (self));
      break;
    case PROP_SETTINGS:
      g_value_set_object (value, saccade_page_get_settings (self));
      break;
    case PROP_LAYER:
      g_value_set_int (value, saccade_page_get_layer (self));
      break;
    case PROP_HEAD:
      g_value_set_int (value, saccade_page_get_head (self));
      break;
    case PROP_FIGURE:
      g_value_set_object (value, saccade_page_get_figure (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_page_set_property (GObject *object, guint prop_id, const GValue *value,
                           GParamSpec *pspec)
{
  SaccadePage *self = SACCADE_PAGE (object);
  SaccadePagePrivate *priv = saccade_page_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_PAGE_ID:
      saccade_page_set_page_id (self, g_value_get_string (value));
      break;
    case PROP_TITLE:
      saccade_page_set_title (self, g_value_get_string (value));
      break;
    case PROP_ICON_NAME:
      saccade_page_set_icon_name (self, g_value_get_string (value));
      break;
    case PROP_SETTINGS:
      priv->settings = g_value_dup_object (value);
      break;
    case PROP_LAYER:
      saccade_page_set_layer (self, g_value_get_int (value));
      break;
    case PROP_HEAD:
      saccade_page_set_head (self, g_value_get_int (value));
      break;
    case PROP_FIGURE:
      saccade_page_set_figure (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_page_class_init (SaccadePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = saccade_page_dispose;
  object_class->finalize = saccade_page_finalize;
  object_class->get_property = saccade_page_get_property;
  object_class->set_property = saccade_page_set_property;

  /**
   * SaccadePage::query-hovered:
   * @position: the run position under the pointer, or -1 when none
   *
   * The user points at a query token (the Heatmap page's rows): the window shows what the
   * model predicted after it.
   */
  signals[QUERY_HOVERED] =
    g_signal_new ("query-hovered", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_INT);

  /* The view stack's name for the page: "heatmap", "model", "lines" (win.show-page). */
  properties[PROP_PAGE_ID] = g_param_spec_string ("page-id", NULL, NULL, NULL, flags);
  /* The view switcher's label and icon. */
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL, flags);
  properties[PROP_ICON_NAME] = g_param_spec_string ("icon-name", NULL, NULL, NULL, flags);
  properties[PROP_SETTINGS] =
    g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* The cursor (clamped to the run's shape; 0 without a run). */
  properties[PROP_LAYER] = g_param_spec_int ("layer", NULL, NULL, 0, G_MAXINT, 0, flags);
  properties[PROP_HEAD] = g_param_spec_int ("head", NULL, NULL, 0, G_MAXINT, 0, flags);
  properties[PROP_FIGURE] = g_param_spec_object ("figure", NULL, NULL, GTK_TYPE_WIDGET, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* Inherited by every page. */
  gtk_widget_class_install_action (widget_class, "page.previous-head", NULL, step_action);
  gtk_widget_class_install_action (widget_class, "page.next-head", NULL, step_action);
  gtk_widget_class_install_action (widget_class, "page.previous-layer", NULL, step_action);
  gtk_widget_class_install_action (widget_class, "page.next-layer", NULL, step_action);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_page_init (SaccadePage *self)
{
  GtkEventController *keys = gtk_event_controller_key_new ();

  g_signal_connect (keys, "key-pressed", G_CALLBACK (key_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  update_actions (self);
}

void
saccade_page_hover_query (SaccadePage *self, int position)
{
  g_return_if_fail (SACCADE_IS_PAGE (self));
  g_signal_emit (self, signals[QUERY_HOVERED], 0, position);
}

void
saccade_page_figure_style (GtkWidget *widget, SaccadeFigureStyle *style)
{
  PangoContext *ctx = gtk_widget_get_pango_context (widget);
  const PangoFontDescription *font = pango_context_get_font_description (ctx);
  GdkRGBA fg;
  double size = 10.0;

  saccade_figure_style_init (style);
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  style->fg[0] = fg.red;
  style->fg[1] = fg.green;
  style->fg[2] = fg.blue;
  style->fg[3] = fg.alpha;
  style->bg[3] = 0.0;
  if (font != NULL && pango_font_description_get_size (font) > 0)
    {
      size = (double) pango_font_description_get_size (font) / PANGO_SCALE;
      /* points to pixels at 96 dpi */
      if (!pango_font_description_get_size_is_absolute (font))
        size *= 96.0 / 72.0;
    }
  /* a figure's text a little smaller than the interface's, as the ui/widgets views */
  style->font_size = 0.9 * size;
}

void
saccade_page_class_install_status (GObjectClass *klass, guint status_id)
{
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  g_object_class_install_property (klass, status_id,
                                   g_param_spec_string ("status", NULL, NULL, "", flags));
  g_object_class_install_property (klass, status_id + 1,
                                   g_param_spec_double ("fraction", NULL, NULL, 0, 1, 0,
                                                        flags));
}

void
saccade_page_forward_status (GObject *owner, SaccadeStudyJobs *jobs)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (owner);

  saccade_study_jobs_forward (jobs, owner, g_object_class_find_property (klass, "status"),
                              g_object_class_find_property (klass, "fraction"));
}

gboolean
saccade_page_get_status (SaccadeStudyJobs *jobs, guint status_id, guint prop_id, GValue *value)
{
  if (prop_id == status_id)
    g_value_set_string (value, saccade_study_jobs_get_status (jobs));
  else if (prop_id == status_id + 1)
    g_value_set_double (value, saccade_study_jobs_get_fraction (jobs));
  else
    return FALSE;
  return TRUE;
}
