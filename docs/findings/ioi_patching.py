#!/usr/bin/env python3
"""Indirect-object identification (Wang et al. 2022) on SmolLM2-135M by activation patching:
20 clean/corrupted pairs from 5 templates x 4 name pairs, every head denoised (`saccade study
patch`), then the mean effect of each head over the pairs with a 95 % bootstrap interval.

Clean: "When Mary and John went to the store, John gave a drink to" (the indirect object
Mary is the answer). Corrupted: the second mention of the subject replaced by the indirect
object ("..., Mary gave a drink to"), which turns the answer to John. Metric: logit(IO) -
logit(S) at the last position; effect (m - m_corrupted) / (m_clean - m_corrupted).

Beside it, attribution patching (`saccade study attribution-patch`, the first-order estimate
from one backward pass) on the same pairs: Spearman's rho of its 270 effects against exact
patching's, per pair and of the mean maps.

Per head: the mean effect with a 95 % percentile bootstrap interval over pairs (10,000
resamples), how often it is the top head across resamples (a head picked as "the best" out
of 270 is picked by chance too), and a two-sided sign test of "the effect is not centred on
0" over the 20 pairs, Bonferroni-corrected for the 270 heads tested. Per pair, the logit
lens of the clean and corrupted runs (`saccade study lens`, the same contrast): the first
entry at which the two runs' residuals, read through the output head, are at least half as
far apart on m as their outputs.

Usage: ioi_patching.py SACCADE DB OUT.json   (the model: $SACCADE_MODEL or the default)
Runs the captures and studies it does not find stored (a study is reused when stored), then
writes OUT.json with every pair's numbers and the per-head summary, and prints a summary.
Needs numpy (Debian's /usr/bin/python3 after tools/setup.sh).
"""
import json
import math
import subprocess
import sys
import time

import numpy as np

TEMPLATES = [
    "When {A} and {B} went to the store, {B} gave a drink to",
    "When {A} and {B} went to the park, {B} gave a ball to",
    "After {A} and {B} had lunch at the cafe, {B} handed a menu to",
    "While {A} and {B} were working at the office, {B} sent an email to",
    "Then {A} and {B} had a long talk, and afterwards {B} wrote a letter to",
]
NAMES = [("Mary", "John"), ("Tom", "Anna"), ("Sarah", "David"), ("James", "Emma")]
BOOTSTRAP = 10000
SEED = 20261206


def spearman(x, y):
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def run(saccade, *args):
    return subprocess.run([saccade, *args], check=True, capture_output=True, text=True).stdout


def stored_runs(saccade, db):
    """text -> run id of the runs already in @db."""
    try:
        runs = json.loads(run(saccade, "runs", "--db", db, "--json"))
    except subprocess.CalledProcessError:
        return {}
    items = runs["runs"] if isinstance(runs, dict) else runs
    return {(r["text"]["piece"] if isinstance(r["text"], dict) else r["text"]): r["id"]
            for r in items}


def capture(saccade, db, text, have):
    if text not in have:
        have[text] = int(run(saccade, "capture", "--db", db, text).strip().splitlines()[-1])
    return have[text]


def main():
    saccade, db, out = sys.argv[1:4]
    have = stored_runs(saccade, db)
    pairs = []
    t0 = time.time()
    for t in TEMPLATES:
        for a, b in NAMES:
            clean = t.format(A=a, B=b)
            corrupt = t.replace("{B} gave", "{A} gave").replace("{B} handed", "{A} handed") \
                       .replace("{B} sent", "{A} sent").replace("{B} wrote", "{A} wrote") \
                       .format(A=a, B=b)
            rc, rx = capture(saccade, db, clean, have), capture(saccade, db, corrupt, have)
            d = json.loads(run(saccade, "study", "patch", str(rc), "--corrupted", str(rx),
                               "--target", " " + a, "--contrast", " " + b, "--db", db,
                               "--json"))
            p = d["patch"]
            ap = json.loads(run(saccade, "study", "attribution-patch", str(rc), "--corrupted",
                                str(rx), "--target", " " + a, "--contrast", " " + b, "--db",
                                db, "--json"))
            est = np.full((p["rows"], p["cols"]), np.nan)
            for c in ap["cells"]:
                est[c["layer"], c["head"]] = c["effect"]
            lens = [json.loads(run(saccade, "study", "lens", str(r), "--target", " " + a,
                                   "--contrast", " " + b, "--db", db, "--json"))["lens"]
                    for r in (rc, rx)]
            eff = np.full((p["rows"], p["cols"]), np.nan)
            for c in d["cells"]:
                eff[c["layer"], c["head"]] = c["effect"]
            pairs.append({"attribution": est.tolist(),
                          "attribution_seconds": ap["seconds"],
                          "spearman": spearman(est.ravel(), eff.ravel()),
                          "clean": clean, "corrupted": corrupt, "clean_run": rc,
                          "corrupted_run": rx, "m_clean": p["m_clean"],
                          "m_corrupted": p["m_corrupted"], "seconds": d["seconds"],
                          "source": d["source"], "effect": eff.tolist(),
                          "lens_m_clean": [x["m"] for x in lens[0]],
                          "lens_m_corrupted": [x["m"] for x in lens[1]]})
            print(f"{len(pairs):2d} m clean {p['m_clean']:+.3f} corrupted "
                  f"{p['m_corrupted']:+.3f}  {d['source']} {d['seconds']}  {clean}",
                  flush=True)
    eff = np.array([p["effect"] for p in pairs])              # (pairs, L, H)
    n, L, H = eff.shape
    mean = eff.mean(axis=0)
    rng = np.random.default_rng(SEED)
    boot = eff[rng.integers(0, n, size=(BOOTSTRAP, n))].mean(axis=1)  # (B, L, H)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    # the interval of the largest mean is not the interval of "the best head": say how
    # often each head is the top one across bootstrap resamples (selection, not just size)
    top = np.bincount(boot.reshape(BOOTSTRAP, -1).argmax(axis=1), minlength=L * H)
    flat = eff.reshape(n, -1)

    def sign_p(col):
        # two-sided exact sign test of the pairs' effects against 0 (zeros dropped)
        pos, neg = int((col > 0).sum()), int((col < 0).sum())
        k, m = min(pos, neg), pos + neg
        if m == 0:
            return 1.0
        return min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m)
    order = np.argsort(-np.abs(mean).ravel())
    heads = [{"layer": int(i // H), "head": int(i % H), "mean": float(mean.ravel()[i]),
              "ci95": [float(lo.ravel()[i]), float(hi.ravel()[i])],
              "top_share": float(top[i] / BOOTSTRAP),
              "pairs_above_0.1": int((flat[:, i] > 0.1).sum()),
              "sign_p": sign_p(flat[:, i]),
              "sign_p_bonferroni": min(1.0, L * H * sign_p(flat[:, i]))}
             for i in order]
    summary = {
        "pairs": n, "model": "SmolLM2-135M-Instruct Q4_1",
        "m_clean_mean": float(np.mean([p["m_clean"] for p in pairs])),
        "m_clean_min": float(np.min([p["m_clean"] for p in pairs])),
        "m_corrupted_mean": float(np.mean([p["m_corrupted"] for p in pairs])),
        "m_corrupted_max": float(np.max([p["m_corrupted"] for p in pairs])),
        "seconds_median": float(np.median([p["seconds"] for p in pairs
                                           if p["seconds"] is not None])),
        "wall_seconds": time.time() - t0,
        # attribution patching against exact patching, per pair and of the mean maps
        "spearman_per_pair": [p["spearman"] for p in pairs],
        "spearman_mean_maps": spearman(np.mean([p["attribution"] for p in pairs],
                                               axis=0).ravel(), mean.ravel()),
        "attribution_seconds_median": float(np.median(
            [p["attribution_seconds"] for p in pairs if p["attribution_seconds"] is not None]
            or [float("nan")])),
        "heads": heads,
        "heads_bonferroni_0.05": sum(h["sign_p_bonferroni"] < 0.05 for h in heads),
        "lens_m_clean_mean": np.mean([p["lens_m_clean"] for p in pairs], axis=0).tolist(),
        "lens_m_corrupted_mean": np.mean([p["lens_m_corrupted"] for p in pairs],
                                         axis=0).tolist(),
        # the first entry of the lens where the clean and corrupted runs are at least half
        # as far apart on m as their outputs are (both runs share the last token, so their
        # early layers read alike)
        "lens_decision_layer": [
            int(np.argmax(np.array(p["lens_m_clean"]) - np.array(p["lens_m_corrupted"])
                          >= 0.5 * (p["m_clean"] - p["m_corrupted"]))) for p in pairs],
        "mean_effect": mean.tolist(),
        "bootstrap": {"resamples": BOOTSTRAP, "seed": SEED, "interval": "percentile 95 %"},
    }
    json.dump({"summary": summary, "pairs": pairs}, open(out, "w"), indent=1)
    print(json.dumps({k: v for k, v in summary.items()
                      if k not in ("heads", "mean_effect", "lens_m_clean_mean",
                                   "lens_m_corrupted_mean")}, indent=1))
    print("lens, mean m of the clean runs by layer:",
          " ".join("%d:%+.2f" % (l, v) for l, v in enumerate(summary["lens_m_clean_mean"])))
    print("lens, mean m of the corrupted runs by layer:",
          " ".join("%d:%+.2f" % (l, v) for l, v in enumerate(summary["lens_m_corrupted_mean"])))
    for h in heads[:12]:
        print(f"L{h['layer']}.H{h['head']}  mean {h['mean']:+.3f}  95% CI "
              f"[{h['ci95'][0]:+.3f}, {h['ci95'][1]:+.3f}]  top in {100 * h['top_share']:.1f} %"
              f" of resamples, > 0.1 in {h['pairs_above_0.1']}/{n} pairs, sign test "
              f"p {h['sign_p']:.2g} (x{L * H}: {h['sign_p_bonferroni']:.2g})")


if __name__ == "__main__":
    main()
