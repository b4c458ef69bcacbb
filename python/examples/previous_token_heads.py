#!/usr/bin/env python3
"""Which heads look at the previous token? An example of saccade_store.

    python3 python/examples/previous_token_heads.py captures.sqlite RUN
    python3 python/examples/previous_token_heads.py run.npz

Reads a run from a capture store (one head at a time, so any length works) or from a
`saccade export RUN --all -o run.npz` file, and prints the run's tokens and the five heads
with the highest previous-token score, mean over queries i >= 1 of A[i, i - 1] (the
definition of docs/metrics.md, which `saccade heads` also reports).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import saccade_store as ss  # noqa: E402


def previous_token(a: np.ndarray) -> float:
    n = a.shape[0]
    return float(np.mean(a[np.arange(1, n), np.arange(0, n - 1)])) if n > 1 else float("nan")


def main(argv):
    scores = []
    if len(argv) == 2 and argv[1].endswith(".npz"):
        z = ss.load_npz(argv[1])
        if z.query_positions[0] != z.key_positions[0] or z.attention.shape[2] != z.attention.shape[3]:
            sys.exit("this example needs a square range (same queries and keys)")
        labels = list(z.token_labels[z.query_positions])
        for l in range(z.attention.shape[0]):
            for h in range(z.attention.shape[1]):
                if z.stored[l, h]:
                    scores.append((previous_token(z.attention[l, h]), l, h))
    elif len(argv) == 3:
        with ss.Store(argv[1]) as st:
            run = st.run(int(argv[2]))
            labels = [t.text for t in st.tokens(run.id)]
            for l, h, a in st.heads(run.id):
                scores.append((previous_token(a), l, h))
    else:
        sys.exit(__doc__)
    print(f"{len(labels)} tokens: " + " ".join(f"[{t}]" for t in labels))
    for s, l, h in sorted(scores, reverse=True)[:5]:
        print(f"layer {l:2d} head {h}: previous-token score {s:.3f}")


if __name__ == "__main__":
    main(sys.argv)
