/* saccade-learn-page.h — the Learn page: the seed articles' hand-worked attention arithmetic,
 * live (issue 13; the formulas and their sources are in docs/learn.md). Five sections, each
 * recomputed on every edit by the pure functions of engine/analysis/sc-learn.h (microseconds:
 * no worker thread), the same ones `saccade learn` prints:
 *   1. the worked example: Q, K, V as editable rows ("1 0; 0 1"), the √d_k switch and a
 *      temperature, then every step as a small table — raw scores, scaled, exponentials,
 *      weights (with row and column sums: rows sum to 1, columns do not), outputs — and per
 *      row the score gap one weight needs to pass 0.99;
 *   2. why √d_k: the spread of q·k with and without the scaling, the largest weight and the
 *      softmax's Jacobian diagonal p (1 − p) at a score gap;
 *   3. heads and budget: d_k = d_model / h;
 *   4. the KV cache: bytes and the time to read it once, with presets (Llama 2 70B as MHA,
 *      GQA, MQA; SmolLM2-135M; the loaded model);
 *   5. FlashAttention's HBM traffic against standard attention's, with GPU presets;
 *   6. "Inside the model" (saccade-neuron-view.h): one head of the run shown, its query and
 *      key vectors, q ∘ k, the scores and the stored probabilities (a worker thread).
 * Sections 1–5 show no run and need neither a capture nor (but for the "Loaded model"
 * preset) a model; section 6 needs both.
 *
 * Page actions, each taking a string and doing what editing its field does: page.example
 * ("000", "004"), page.q, page.k, page.v (rows, "1 0; 0 1"), page.scale ("on", "off"),
 * page.temperature, page.dk, page.gap, page.d-model, page.heads, page.layers,
 * page.kv-heads, page.head-dim, page.len, page.bytes, page.bandwidth, page.n, page.d,
 * page.sram-kb (a number), page.kv-preset (a preset's id, "loaded"), page.gpu ("a100",
 * "h100", "h200"), page.neuron ("L H I": layer, head and query of section 6) and page.show
 * ("example", "sqrt-dk", "heads", "kv-cache", "flash", "neuron": scrolls that section to the
 * top); a value it does not take is refused with a warning.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_LEARN_PAGE (saccade_learn_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeLearnPage, saccade_learn_page, SACCADE, LEARN_PAGE, SaccadePage)

G_END_DECLS
