#!/usr/bin/env python3
"""Logit-lens oracle: every layer's residual stream at the last position through the final
RMSNorm and the unembedding, in float64 on the independent numpy model of attention_ref.py
(the GGUF read through gguf-py only; nothing of Saccade imported).

Definition (engine/study/sc-lens-study.h restated, implemented here without the C code):
  x_l = the residual stream entering layer l at the last position (x_0 = the token
        embedding; x_L = after the last layer, what the model's own output head reads);
  logits_l = rms(x_l) * output_norm @ W_out^T   (W_out = token_embd when tied);
  for target A and contrast B: ln p_l(A) = log_softmax(logits_l)[A], likewise B,
  m_l = logits_l[A] - logits_l[B], rank_l(A) = #{t : logits_l[t] > logits_l[A]} (0 = top-1),
  top1_l = argmax (ties to the lowest id).
Cases: the two indirect-object pairs of patch-fixture.json (their clean and corrupted ids,
target the indirect object, contrast the subject), every layer 0 .. L.

How to rerun
    pip install gguf==0.19.0 numpy==2.4.6
    python3 tests/reference/lens_ref.py [MODEL.gguf]
Writes lens-fixture.json next to itself (~1 min: four forward passes plus loading).
"""
import hashlib
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_ref as ar  # noqa: E402  (the independent numpy model; not modified)

HERE = os.path.dirname(os.path.abspath(__file__))


def log_softmax(row):
    a = row - row.max()
    return a - np.log(np.exp(a).sum())


def lens(m, ids, A, B):
    _, resid, _ = m.forward(ids)
    out = []
    for l in range(m.n_layer + 1):
        hf = m.rms(resid[l][-1:], m.W["output_norm.weight"])
        row = (hf @ m.out_w.T)[0]
        ls = log_softmax(row)
        out.append({"layer": l, "logp_target": float(ls[A]), "logp_contrast": float(ls[B]),
                    "m": float(row[A] - row[B]), "rank": int((row > row[A]).sum()),
                    "top1": int(np.argsort(-row, kind="stable")[0]),
                    "top2_margin": float(np.sort(row)[-1] - np.sort(row)[-2])})
    return out


def main():
    path = ar.model_path()
    t0 = time.time()
    m = ar.Model(path)
    fx = json.load(open(os.path.join(HERE, "patch-fixture.json")))
    cases = []
    for p in fx["pairs"]:
        for which in ("clean", "corrupted"):
            ids = p[which + "_ids"]
            cases.append({"name": p["name"] + "/" + which, "ids": ids, "target": p["target"],
                          "contrast": p["contrast"],
                          "layers": lens(m, ids, p["target"], p["contrast"])})
    import importlib.metadata as md
    json.dump({"format": "saccade-lens-fixture/1", "generator": "tests/reference/lens_ref.py",
               "model_file": os.path.basename(path),
               "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("Cases:")[0].strip(),
               "runtime_s": time.time() - t0, "cases": cases},
              open(os.path.join(HERE, "lens-fixture.json"), "w"), indent=1)
    for c in cases:
        mid = c["layers"][len(c["layers"]) // 2]
        print(c["name"], "layer", mid["layer"], "rank", mid["rank"], "ln p(A) %.4f" %
              mid["logp_target"], "final rank", c["layers"][-1]["rank"])


if __name__ == "__main__":
    main()
