/* saccade-faith-file-window.h — SaccadeFaithFileWindow, faithfulness over a prompt set:
 * the window's twin of `saccade faithfulness --file SENTENCES --db DB`. Opened from the
 * Ablation page's faithfulness options (page.faith-file), it asks for a text file of
 * sentences (one per line, read by saccade_faithfulness_read_sentences as the command line
 * reads it) and the study's options — the leave-one-out importance (TV, JSD, |Δ log p|),
 * masking or dropping, the context-mixing sources, the first token left out or not — and
 * runs the study in a worker on the loaded model, with progress and Cancel
 * (SaccadeStudyJobs). Each sentence's study is read back from, or computed and stored in,
 * the prompt set's own database (saccade_faith_file_store_path, in "prompt-sets" beside the
 * capture database), exactly as the command line stores it, so each reads what the other
 * stored. It shows Jain & Wallace's Table 2 extended to every source (mean τ and ρ with
 * their bootstrap intervals, the shares significant before and after Benjamini–Hochberg),
 * the readings the command line prints, and each source's per-sentence τ as a strip behind
 * its mean (the Table-2 figure of saccade-figure.h, with its points); it exports the table
 * as CSV (saccade_faith_table_csv, the bytes of `--table-csv`) and the figure as PNG, SVG
 * or PDF.
 *
 * Actions (faith-file.*; what its buttons do, and what the window test drives): choose,
 * run, cancel, export-csv, export-figure; metric "tv"|"jsd"|"abs-delta-logp", kind
 * "mask"|"drop", mixing "yes"|"no", exclude-first "yes"|"no". Main thread only.
 */
#pragma once

#include <adwaita.h>

#include "app/core/saccade-capture-task.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_FAITH_FILE_WINDOW (saccade_faith_file_window_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeFaithFileWindow, saccade_faith_file_window, SACCADE,
                      FAITH_FILE_WINDOW, AdwWindow)

/* A new window over @parent (transient for it, not modal). */
SaccadeFaithFileWindow *saccade_faith_file_window_new (GtkWindow *parent);

/* The model the next study runs on (NULL: none loaded; Run says so) and the capture
 * database whose folder holds the prompt sets' databases (NULL: none open). A running
 * study keeps its own. */
void saccade_faith_file_window_set_model (SaccadeFaithFileWindow *self,
                                          SaccadeLoadedModel *model, const char *db_path);

/* A study runs. */
gboolean saccade_faith_file_window_is_busy (SaccadeFaithFileWindow *self);

G_END_DECLS
