/* sc-qk.h — one query against its keys, the neuron view's arithmetic (Vig 2019's BertViz
 * neuron view, DESIGN.md "Learn"): each key's dot product with the query, the scaled score
 * and the softmax weight, from a head's own q and k vectors (the layer's, recomputed by
 * sc_session_layer_qk). The window's neuron view and `saccade neuron` show these numbers
 * beside the stored weights, which they must reproduce.
 *
 *     dot_j    = Σ_d q[d] · k_j[d]            (accumulated in double)
 *     scaled_j = dot_j · scale                (scale: the model's attention scale, 1/√d_k)
 *     weight_j = exp (scaled_j − max) / Σ_j' exp (scaled_j' − max)
 *
 * Pure and plain C (no GLib); the caller passes the keys it may see (a causal query i sees
 * keys 0 .. i).
 */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double dot;     /* q · k_j */
  double scaled;  /* dot · scale */
  double weight;  /* softmax of the scaled scores over the n keys */
} ScQkScore;

/* The scores of query @q (@head_dim floats) against @n >= 1 keys, key j at @k + j ·
 * @k_stride (floats), into @out (@n entries). */
void sc_qk_scores (const float *q, const float *k, size_t k_stride, int head_dim, int n,
                   double scale, ScQkScore *out);

#ifdef __cplusplus
}
#endif
