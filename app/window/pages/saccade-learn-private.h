/* saccade-learn-private.h — the Learn page's parts, shared by the files that build it:
 *
 *   saccade-learn-page.c   the page: its column, the worked example (section 1), the model
 *                          and run it hands on, and the test driver's fields
 *   saccade-learn-sizes.c  the four calculators of sizes: why √d_k (2), heads and budget
 *                          (3), the KV cache (4), FlashAttention's IO (5)
 *   saccade-learn-rows.c   the rows every section is built of: groups, spin buttons,
 *                          drop-downs and result labels
 *
 * What other code may use is in saccade-learn-page.h; this header is for these files only.
 */
#pragma once

#include <adwaita.h>

#include "app/window/pages/saccade-learn-page.h"
#include "app/window/pages/saccade-neuron-view.h"
#include "engine/analysis/sc-learn.h"

G_BEGIN_DECLS

struct _SaccadeLearnPage
{
  SaccadePage parent_instance;

  gboolean filling; /* set while code fills fields: no recompute per field */
  int decimals;     /* the worked example's decimals: those its article prints */

  GtkScrolledWindow *scrolled;
  GtkWidget *sections[5]; /* the groups, in order: what "show" scrolls to */
  SaccadeNeuronView *neuron; /* "Inside the model", the last section (saccade-neuron-view.h) */

  /* 1. the worked example */
  GtkDropDown *example_dd;
  GtkEditable *q_entry, *k_entry, *v_entry;
  GtkSwitch *scale_switch;
  GtkSpinButton *temperature_spin;
  GtkLabel *example_error;
  GtkFlowBox *steps;
  GtkLabel *gap_label;
  ScLearnExample example; /* the one chosen: its labels name the rows and columns */

  /* 2. why √d_k */
  GtkSpinButton *dk_spin, *gap_spin;
  GtkLabel *std_label, *unscaled_label, *scaled_label;

  /* 3. heads and budget */
  GtkSpinButton *d_model_spin, *heads_spin;
  GtkLabel *d_k_label;

  /* 4. the KV cache */
  GtkDropDown *kv_dd;
  GtkStringList *kv_names;
  GtkSpinButton *layers_spin, *kv_heads_spin, *head_dim_spin, *len_spin, *bytes_spin;
  GtkSpinButton *bandwidth_spin;
  GtkLabel *kv_bytes_label, *kv_time_label;

  /* 5. FlashAttention's IO */
  GtkDropDown *gpu_dd;
  GtkSpinButton *n_spin, *d_spin, *sram_spin;
  GtkLabel *score_label, *traffic_label, *ratio_label;
};

/* saccade-learn-rows.c: each adds a row to @group (or a group to @column) and returns its
 * widget (owned by the row). @self is what the callbacks get (swapped). */
AdwPreferencesGroup *learn_add_group (GtkBox *column, const char *title,
                                      const char *description);
AdwActionRow *learn_add_row (AdwPreferencesGroup *group, const char *title,
                             const char *subtitle, GtkWidget *suffix);
GtkSpinButton *learn_add_spin (gpointer self, AdwPreferencesGroup *group, const char *title,
                               const char *subtitle, double lower, double upper, double step,
                               int digits, double value, GCallback changed);
/* A drop-down of @names (the drop-down takes its own reference); @chosen on each choice. */
GtkDropDown *learn_add_dropdown (gpointer self, AdwPreferencesGroup *group, const char *title,
                                 const char *subtitle, GtkStringList *names, GCallback chosen);
/* The names of sc-learn.h's @n presets, in order, for a drop-down (caller unrefs): @name
 * points at the first preset's name member and @stride is the size of one preset, so that
 * the KV-cache and the GPU tables, different structs, are listed by one loop. */
GtkStringList *learn_preset_names (const char *const *name, int n, gsize stride);
/* A selectable numeric result label. */
GtkLabel *learn_add_result (AdwPreferencesGroup *group, const char *title);
/* A result label's text, or an error in its place (the "error" style class). */
void learn_set_result (GtkLabel *label, const char *text, gboolean error);
gint64 learn_spin_int (GtkSpinButton *spin);

/* saccade-learn-sizes.c: build_* appends the section to @column; update_* recomputes it
 * from its fields (the page calls each once when built). */
void learn_build_sqrt_dk (SaccadeLearnPage *self, GtkBox *column);
void learn_update_sqrt_dk (SaccadeLearnPage *self);
void learn_build_heads (SaccadeLearnPage *self, GtkBox *column);
void learn_update_heads (SaccadeLearnPage *self);
void learn_build_kv (SaccadeLearnPage *self, GtkBox *column);
void learn_update_kv (SaccadeLearnPage *self);
void learn_build_flash (SaccadeLearnPage *self, GtkBox *column);
void learn_update_flash (SaccadeLearnPage *self);

G_END_DECLS
