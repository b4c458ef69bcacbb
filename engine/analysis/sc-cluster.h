/* sc-cluster.h — average-linkage hierarchical clustering of a distance matrix (UPGMA), for
 * putting similar heads next to each other in the head-distance matrix.
 *
 * Agglomerative: start with every item alone, repeatedly merge the two clusters whose mean
 * pairwise distance is smallest (ties: a cluster's index is its smallest leaf; the pair
 * with the smallest lower index wins, then the smaller upper index), until one cluster is
 * left. The distance between a merged cluster
 * and another is the size-weighted mean of its parts' distances (Lance–Williams, average
 * linkage). Written here (not taken from a library): Debian 12's C libraries that a plain
 * C engine could link (GSL, igraph) have no average-linkage clustering of a given matrix;
 * at 270 heads the O(n^3) algorithm takes milliseconds.
 */
#pragma once

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Merge k (0 <= k < n - 1) joins clusters @a and @b: an id < n is leaf @id, an id >= n is
 * the cluster made by merge (id - n). a < b. */
typedef struct {
  int a, b;
  double height; /* the average distance between the two clusters when they merged */
  int size;      /* leaves in the merged cluster */
} ScClusterMerge;

/* Clusters the @n items of the symmetric (n, n) distance matrix @d. Fills @merges (n - 1
 * entries, in merge order, heights non-decreasing for average linkage) and @order (n): the
 * leaves left to right in the dendrogram, each merge placing the cluster with the smaller
 * first leaf on the left. n = 1 gives no merges and order {0}. Errors: SC_ERR_INVALID_ARG
 * (n < 1, NULL, a negative or non-finite or asymmetric distance), SC_ERR_NOMEM. */
ScStatus sc_cluster_average (const double *d, int n, ScClusterMerge *merges, int *order,
                             ScError *err);

#ifdef __cplusplus
}
#endif
