#!/usr/bin/env python3
"""trace-vs-loo.py TRACE.sqlite MASK.sqlite — how far two faithfulness references agree.

For every sentence studied in both databases (`saccade faithfulness --file S --kind trace
--db TRACE.sqlite` and `--kind mask --db MASK.sqlite`, matched by the SHA-256 of the ids in
each study's params), Kendall's tau-b between the two stored reference vectors (the series
`loo`: causal tracing's importance in one, leave-one-out's in the other), with and without
the first token; then the mean over sentences with a 95 % percentile bootstrap interval
(B = 1000, numpy's default_rng seeded 0x5accade). docs/findings.md, "Against patching".
Needs numpy and scipy."""
import json
import sqlite3
import sys

import numpy as np
from scipy.stats import kendalltau


def references(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = {}
    for sid, params in con.execute("SELECT id, params FROM studies WHERE kind = 'faithfulness'"):
        ids = json.loads(params)["ids"]
        out[ids] = np.array([v for (v,) in con.execute(
            "SELECT value FROM study_series WHERE study_id = ? AND series = 'loo' ORDER BY pos",
            (sid,))])
    return out


def mean_ci(taus):
    taus = np.array(taus)
    rng = np.random.default_rng(0x5ACCADE)
    means = [rng.choice(taus, len(taus)).mean() for _ in range(1000)]
    return taus.mean(), np.percentile(means, 2.5), np.percentile(means, 97.5)


def main():
    a, b = references(sys.argv[1]), references(sys.argv[2])
    both = [k for k in a if k in b]
    with_first = [kendalltau(a[k], b[k]).statistic for k in both]
    without = [kendalltau(a[k][1:], b[k][1:]).statistic for k in both]
    print(f"{len(both)} sentences in both")
    print("tau(trace, mask), first token included: %.3f [%.2f, %.2f]" % mean_ci(with_first))
    print("without the first token: %.3f [%.2f, %.2f]" % mean_ci(without))
    print("per sentence:", " ".join(f"{t:.2f}" for t in with_first))


if __name__ == "__main__":
    main()
