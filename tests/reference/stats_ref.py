#!/usr/bin/env python3
"""stats_ref.py — the oracle of tests/analysis/test-stats.c (engine/analysis/sc-stats.c).

Prints the C literals that test-stats.c embeds (the test does not run Python):
  1. Holm and Benjamini-Hochberg adjusted p-values of a fixed vector with ties and NaNs,
     by statsmodels.stats.multitest.multipletests ('holm', 'fdr_bh') on the non-NaN
     entries (statsmodels refuses NaN; the C functions pass NaN through, not counted in m);
  2. scipy.stats.kendalltau (tau-b) and spearmanr on a tied pair of vectors;
  3. the exact permutation distribution of Kendall tau-b for n = 6 (all 720 orders of y):
     the two-sided permutation p-value P(|tau*| >= |tau|) that a Monte-Carlo null must
     approach;
  4. the exact two-sided sign test of samples with zeros and ties: scipy.stats.binomtest
     (k, r, 0.5) with r the nonzero values and k the rarer sign's count.
Run:  /tmp/refvenv/bin/python tests/reference/stats_ref.py   (scipy, statsmodels, numpy)
"""
import itertools
import math

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.multitest import multipletests

P = [0.01, 0.04, float("nan"), 0.03, 0.005, 0.04, 0.2, 0.5, float("nan"), 0.0, 1.0, 0.012]


def lit(v):
    return "NAN" if math.isnan(v) else repr(float(v))


def adjusted(method):
    p = np.array(P)
    ok = ~np.isnan(p)
    out = np.full(p.shape, np.nan)
    out[ok] = multipletests(p[ok], method=method)[1]
    return out


print(f"/* scipy {scipy.__version__}, statsmodels {statsmodels.__version__}, numpy {np.__version__} */")
print("static const double P[%d] = { %s };" % (len(P), ", ".join(lit(v) for v in P)))
print("static const double HOLM[%d] = { %s };" % (len(P), ", ".join(lit(v) for v in adjusted("holm"))))
print("static const double BH[%d] = { %s };" % (len(P), ", ".join(lit(v) for v in adjusted("fdr_bh"))))

X = [0.3, 1.2, 1.2, 0.7, 2.5, 0.1, 0.9, 3.0, 0.9, 1.7]
Y = [1.0, 0.4, 2.2, 0.8, 2.0, 0.2, 0.8, 2.9, 1.1, 0.4]
print("static const double X[10] = { %s };" % ", ".join(lit(v) for v in X))
print("static const double Y[10] = { %s };" % ", ".join(lit(v) for v in Y))
print("#define KENDALL_XY %r" % float(stats.kendalltau(X, Y).statistic))
print("#define SPEARMAN_XY %r" % float(stats.spearmanr(X, Y).statistic))

X6 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
Y6 = [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]
t0 = stats.kendalltau(X6, Y6).statistic
taus = [stats.kendalltau(X6, [Y6[i] for i in perm]).statistic
        for perm in itertools.permutations(range(6))]
p_exact = sum(abs(t) >= abs(t0) - 1e-12 for t in taus) / len(taus)
print("/* (1..6) against (2,1,4,3,6,5): tau-b %r; exact permutation p over 720 orders */" % float(t0))
print("#define PERM6_P %r" % float(p_exact))

SIGN = [[0.5] * 20,
        [1.0] * 17 + [-0.2] * 3,
        [0.1, -0.1] * 10,
        [0.0, 0.3, -0.3, 0.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.0],
        [0.0, 0.0, 0.0],
        [-1.0] * 12 + [0.4] + [0.0] * 5]
print("/* the sign test: scipy.stats.binomtest (rarer sign, nonzero count, 0.5).pvalue */")
for i, v in enumerate(SIGN):
    pos, neg = sum(x > 0 for x in v), sum(x < 0 for x in v)
    p = 1.0 if pos + neg == 0 else float(stats.binomtest(min(pos, neg), pos + neg, 0.5).pvalue)
    print("static const double SIGN%d[%d] = { %s };" % (i, len(v), ", ".join(lit(x) for x in v)))
    print("#define SIGN%d_P %r" % (i, p))
