/* saccade-study-outputs.h — what a study of a run looks like outside: its JSON and its text,
 * built once here for both faces (`saccade study` and the verbs that came before it print
 * them; the window's views and exports take the same data). One outputs file per kind
 * group under app/core/studies/ fills SaccadeStudyOutputs; the table in
 * saccade-study-outputs.c lists them.
 *
 * Every study's JSON opens the same way (saccade_study_outputs_json): run, model, study
 * (the store's kind), source ("reused" or "computed"), study_id, seconds, n_tokens, the
 * clean run's target, top1_clean, logp_clean and loss_clean, and the tokens (pos, id,
 * label); the kind's part follows. (This is the shape `saccade ablate --json` always
 * printed; tests/app/golden holds it.) A kind without an outputs file is printed from its stored form
 * (every number the store holds for it, by head and by series), so any kind of the table
 * can be run and read from the command line the day its engine file lands.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "app/core/saccade-study.h"
#include "engine/study/sc-erasure-study.h"
#include "engine/study/sc-mixing-study.h"
#include "engine/study/sc-norm-study.h"
#include "engine/study/sc-patch-study.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

typedef struct {
  const ScStudyKind *kind;
  /* The kind's members of the open JSON object @b; @tokens and @labels: the run's, one per
   * token (s->n_tokens). */
  void (*json) (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
                const char *const *labels);
  /* The kind's table after the header, for a terminal; @top: rows of a ranked table. */
  void (*text) (GString *out, const SaccadeStudy *s, const char *const *labels, int top);
} SaccadeStudyOutputs;

/* The outputs of @kind, or NULL when it has no outputs file. */
const SaccadeStudyOutputs *saccade_study_outputs_find (const ScStudyKind *kind);

/* The whole JSON of study @s of @run (@labels: the run's display labels, one per token),
 * its stored form @stored (may be NULL) printed when the kind has no outputs file. */
JsonBuilder *saccade_study_outputs_json (const SaccadeStudy *s, const ScStoreRunInfo *run,
                                         const ScStoreToken *tokens, const char *const *labels,
                                         const ScStoreStudyData *stored);

/* The text of study @s: where it came from, the clean run (its target and contrast named
 * with @model's labels of them; @model may be NULL: ids alone), then the kind's table (or,
 * for a kind with no outputs file, a count of what it stored and a pointer to --json). */
char *saccade_study_outputs_text (const SaccadeStudy *s, ScModel *model,
                                  const ScStoreRunInfo *run, const char *const *labels,
                                  const ScStoreStudyData *stored, const char *db_path,
                                  const char *warning, int top);

/* A face's text's line on where its study came from (@base, a face's result's): read
 * back from @db_path, computed and stored there, or computed and not stored (@warning, may
 * be NULL, says why). */
void saccade_study_face_source_line (GString *out, const SaccadeStudyFaceBase *base,
                                     const char *db_path, const char *warning);

/* The members every study's JSON opens with: run, model, study (the store's kind @kind_id),
 * source ("reused" or "computed"), study_id. */
void saccade_study_json_head (JsonBuilder *b, gint64 run_id, const char *model,
                              const char *kind_id, gboolean reused, gint64 study_id);

/* An ablation effect's members (sc-study.h): delta_logp, tv, jsd, delta_loss, flip, top1. */
void saccade_study_json_effect (JsonBuilder *b, const ScAblationEffect *e);

/* The erasure figure's data for @r (the window draws it, both faces export it): one series
 * per curve, named @names[c] (the faces name them in their own words), into @series
 * (r->n_curves entries, borrowed by @f), the median of the random orderings, @title. */
void saccade_erasure_figure (const ScErasureResult *r, const char *const *names,
                             const char *title, SaccadeErasureSeries *series,
                             SaccadeErasureFigure *f);

/* Activation patching (saccade-patch-outputs.c): the layer, head (−1: the residual) and
 * position (−1: every position, a whole head) cell @c of @r patched. */
void saccade_patch_cell (const ScPatchResult *r, int c, int *layer, int *head, int *pos);
/* Cell @c's name: "L9.H4", "L9.H4 @ 12 ' John'", "L15 @ 12 ' John'" (@labels: the run's). */
char *saccade_patch_cell_name (const ScPatchResult *r, int c, const char *const *labels);
/* The members of a patch study's JSON object that say its grid and metric: rows, cols,
 * metric, contrast, m_clean, m_corrupted, top1_corrupted, effect (the normalisation). */
void saccade_patch_json_metric (JsonBuilder *b, const ScPatchResult *r);
/* What activation and path patching's texts share: the metric, the runs' m and the scale
 * (and a line when the runs do not differ on the metric); ... */
void saccade_patch_text_metric (GString *out, const ScPatchResult *r);
/* ... the cells @first .. end of @r, most moved from the base run first (by |effect − the
 * base's| where the effect is defined, else by |m − m_base|), into @order (the cells'
 * indices; n_rows · n_cols − @first of them); ... */
void saccade_patch_rank_cells (const ScPatchResult *r, int first, int *order);
/* ... and the (n_layers, n_heads) map of a per-head grid's effects under @title, '.' for
 * the layers below @first_layer (path patching's layers without a path). */
void saccade_patch_text_map (GString *out, const ScPatchResult *r, const char *title,
                             int first_layer);
/* Every cell of @r as CSV, one row per cell in the grid's order (both faces export it):
 * layer,head,pos,label,m,effect then what every row repeats — target,contrast,m_clean,
 * m_corrupted,direction,what,run,corrupted,study. head and pos are empty where the cell has
 * none; label is @labels[pos] (@n labels; empty when @labels is NULL or @n is not the
 * study's length); m and effect (sc_patch_normalised) exactly, NaN as an empty field. */
GBytes *saccade_patch_csv (const ScPatchResult *r, const char *const *labels, int n,
                           gint64 run_id, gint64 corrupted_run, gint64 study_id);

/* A (n, n) float map as an array of n rows of n numbers, the value of the member @b has
 * just named (or an element of its open array). */
void saccade_study_json_map (JsonBuilder *b, const float *map, int n);
/* The lower triangle of a causal (n, n) map for a terminal: per row i "  %3d ", @labels[i]
 * (may be NULL) padded to 12 columns, then map[i][j] for j <= i in @width columns, 3
 * decimals. */
void saccade_study_text_triangle (GString *out, const float *map, int n,
                                  const char *const *labels, int width);
/* Context mixing (saccade-mixing-outputs.c): map @k of @r (a layer, or n_layers: the
 * rollout), its last token's @top sources by share, then the map itself (up to 40 tokens). */
void saccade_mixing_text_map (GString *out, const ScMixingResult *r, const char *const *labels,
                              int k, int top);
/* Norm-based attention (saccade-norms-outputs.c): the map of head @head of @r's layer (−1:
 * the layer's map) as rows for a terminal, each row's keys 0 .. i (@labels: the run's, one
 * per token; may be NULL); a line saying why instead when the maps were not kept or the run
 * is wider than a terminal takes. */
void saccade_norms_text_map (GString *out, const ScNormResult *r, const char *const *labels,
                             int head);

/* The outputs of a face's study (SaccadeStudyFace, app/core/saccade-study.h: a result of
 * the face's own type), built once for both faces: the verb's JSON and text, and the CSV,
 * figure title and figure that the verb writes and the window exports. @result is the
 * face's; @labels the run's display labels, one per token (may be NULL where a caller has
 * none: the CSV's labels are then empty); @model (may be NULL) names the target token. */
typedef struct {
  const SaccadeStudyFace *face;
  /* The kind's members of `saccade VERB --json`, after those every study's JSON opens with
   * (saccade_face_outputs_json), into the open object @b. */
  void (*json) (JsonBuilder *b, gconstpointer result, ScModel *model,
                const char *const *labels);
  /* The verb's text (in English: scripts and the docs read it); @db_path and @warning (may
   * be NULL) say where the study is stored, or why not. Caller frees. */
  char *(*text) (gconstpointer result, ScModel *model, const char *const *labels,
                 const char *db_path, const char *warning);
  /* The CSV (the kind's core header describes it); a row is one @csv_row. */
  GBytes *(*csv) (gconstpointer result, const char *const *labels);
  const char *csv_row;
  /* The line the window shows under the figure, in the interface's language (the
   * adversarial reading, integrated gradients' completeness), or NULL. Caller frees. */
  char *(*note) (gconstpointer result);
  /* The figure's title, in the interface's language. Caller frees. */
  char *(*title) (gconstpointer result, ScModel *model);
  /* The figure as PNG, SVG or PDF by @path's extension, its texts in the interface's
   * language but for what the verb prints in English unless @translated; @opts: its size,
   * font, title and labels (NULL: the natural size). */
  gboolean (*export_figure) (gconstpointer result, ScModel *model, const char *const *labels,
                             gboolean translated, const char *path,
                             const SaccadeFigureExportOptions *opts, GError **error);
} SaccadeFaceOutputs;

/* The whole JSON of @o's face's @result: run, model, study, source, study_id
 * (saccade_study_json_head), then the kind's members. */
JsonBuilder *saccade_face_outputs_json (const SaccadeFaceOutputs *o, gconstpointer result,
                                        ScModel *model, const char *const *labels);

extern const SaccadeFaceOutputs saccade_adversarial_outputs;
extern const SaccadeFaceOutputs saccade_attribution_outputs;

/* The outputs of each kind that has an outputs file (app/core/studies/saccade-*-outputs.c). */
extern const SaccadeStudyOutputs saccade_layers_outputs;
extern const SaccadeStudyOutputs saccade_patch_outputs;      /* saccade-patch-outputs.c */
extern const SaccadeStudyOutputs saccade_patch_attribution_outputs;
extern const SaccadeStudyOutputs saccade_path_patch_outputs; /* saccade-path-patch-outputs.c */
extern const SaccadeStudyOutputs saccade_lens_outputs;
extern const SaccadeStudyOutputs saccade_qk_outputs;        /* saccade-qk-outputs.c */
extern const SaccadeStudyOutputs saccade_norms_outputs;      /* saccade-norms-outputs.c */
extern const SaccadeStudyOutputs saccade_mixing_outputs;     /* saccade-mixing-outputs.c */
extern const SaccadeStudyOutputs saccade_heads_outputs;      /* saccade-ablation-outputs.c */
extern const SaccadeStudyOutputs saccade_heads_mean_outputs;
extern const SaccadeStudyOutputs saccade_heads_first_outputs; /* saccade-first-outputs.c */
extern const SaccadeStudyOutputs saccade_heads_first_mean_outputs;
extern const SaccadeStudyOutputs saccade_tokens_outputs;
extern const SaccadeStudyOutputs saccade_permute_outputs;
extern const SaccadeStudyOutputs saccade_erasure_outputs;

G_END_DECLS
