#!/usr/bin/env python3
"""Context-mixing oracle: value zeroing (Mohebbi, Zuidema, Chrupala and Alishahi 2023,
"Quantifying Context Mixing in Transformers") and ALTI (Ferrando, Gallego and Costa-jussa
2022, "Measuring the Mixing of Contextual Information in the Transformer"), per layer and
rolled out, in float64 on the independent numpy models of attention_ref.py and gemma3_ref.py
(the GGUF read through gguf-py only; nothing of Saccade imported). The layers' weights,
f_h(x_j) = W_O^h v_j vectors and residuals come from norm_ref.py's forward_values and
gemma_layers (imported, not copied); the FFN is restated here.

Definitions (engine/analysis/sc-mixing.h restated, implemented here without the C code):
  value zeroing  x_i the residual leaving layer l (after its FFN); x_i^{-j} the same with
                 token j's value vectors zero in every head of layer l (so f_h(x_j) = 0 for
                 every h: the attention output of row i loses sum_h alpha_h[i][j] f_h(x_j)),
                 the layer's FFN run on the changed residual;
                 VZ[i][j] = 1 - cos(x_i, x_i^{-j}) for j <= i, 0 above; each row divided by
                 its sum over j <= i (a row summing to 0 stays 0).
  ALTI           A_ij = sum_h alpha_h[i][j] f_h(x_j); T_i(x_j) = P_i(A_ij) + delta_ij x_i with
                 x_i the residual entering the layer and P_i the identity (llama) or Gemma 3's
                 post-attention RMSNorm frozen at row i's scale, post_attention_norm * u /
                 rms(sum_j A_ij); y_i = sum_j T_i(x_j) (asserted equal to the residual after
                 the attention block); d_ij = ||y_i - T_i(x_j)||_1,
                 c_ij = max(0, ||y_i||_1 - d_ij), C[i][j] = c_ij / sum_k c_ik over j <= i.
  rollout        R = M_{L-1} ... M_1 M_0 (no identity added), for either method's maps.
  mix            the mean over rows i >= 1 of sum_{j != i} M[i][j] / sum_j M[i][j].
Case: the sentence of norm-fixture.json ("When Mary and John went to the store, John gave a
drink to", SmolLM2's 14 ids without BOS; Gemma 3 270M: norm_ref.GEMMA_IDS, 15 ids with
<bos>); the maps of layer 0 and the middle layer (n_layer // 2) and the rollout of every
layer, for both methods, and every layer's mixing ratio.

Self-checks (asserted): the T_i(x_j) add up to the residual after the attention block
(< 1e-9 relative); value zeroing with nothing zeroed reproduces the layer's output, i.e. the
next layer's input (< 1e-9 relative); every row of every layer map sums to 1.

How to rerun
    pip install gguf==0.19.0 numpy==2.4.6
    python3 tests/reference/mixing_ref.py [MODEL.gguf]
    python3 tests/reference/mixing_ref.py --gemma [GEMMA.gguf]
Writes mixing-fixture.json (or mixing-fixture-gemma3.json) next to itself.
"""
import hashlib
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_ref as ar  # noqa: E402  (the independent numpy model; not modified)
import norm_ref as nr  # noqa: E402  (its per-layer values; not modified)

HERE = os.path.dirname(os.path.abspath(__file__))


def normalise(M):
    T = M.shape[0]
    M = np.where(np.tril(np.ones((T, T), dtype=bool)), M, 0.0)
    s = M.sum(axis=1, keepdims=True)
    return np.where(s > 0, M / np.where(s > 0, s, 1.0), 0.0)


def cos_distance(a, b):
    return 1.0 - (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1))


def value_zeroing(P, f, layer_out):
    """VZ map of one layer: layer_out(A) gives the layer's output (T, E) from the attention
    output projected, A (T, E) = sum_j A_ij."""
    T = P.shape[1]
    clean = layer_out(np.einsum("hij,jhe->ie", P, f))
    M = np.zeros((T, T))
    for j in range(T):
        fz = f.copy()
        fz[j] = 0.0  # token j's values zero in every head: f_h(x_j) = W_O^h 0 = 0
        out = layer_out(np.einsum("hij,jhe->ie", P, fz))
        M[j:, j] = cos_distance(clean[j:], out[j:])
    return normalise(M), clean


def alti(P, f, x_in, x_mid, post=None):
    T = P.shape[1]
    A = np.einsum("hij,jhe->ije", P, f)  # A_ij
    if post is not None:
        g, eps = post
        r = np.sqrt((A.sum(axis=1) ** 2).mean(-1) + eps)
        A = A * g[None, None, :] / r[:, None, None]
    Tv = A.copy()
    Tv[np.arange(T), np.arange(T)] += x_in
    y = Tv.sum(axis=1)
    assert np.max(np.abs(y - x_mid)) < 1e-9 * (1 + np.abs(x_mid).max())
    d = np.abs(y[:, None, :] - Tv).sum(-1)
    c = np.maximum(0.0, np.abs(y).sum(-1)[:, None] - d)
    return normalise(c)


def rollout(maps):
    R = maps[0]
    for M in maps[1:]:
        R = M @ R
    return R


def record(maps_vz, maps_alti, keep):
    out = {}
    for name, maps in (("value_zeroing", maps_vz), ("alti", maps_alti)):
        for M in maps:
            assert np.allclose(M.sum(axis=1), 1.0, atol=1e-12)
        R = rollout(maps)
        out[name] = {"layers": [{"layer": l, "map": maps[l].tolist()} for l in keep],
                     "rollout": R.tolist(),
                     "mix": [nr.mix_ratio(M) for M in maps] + [nr.mix_ratio(R)]}
    return out


def dump(path, m, ids, text, t0, out, name, generator):
    import importlib.metadata as md
    json.dump(dict({"format": "saccade-mixing-fixture/1", "generator": generator,
                    "model_file": os.path.basename(path),
                    "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
                    "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
                    "definitions": __doc__.split("Self-checks")[0].strip(),
                    "text": text, "ids": ids, "n_tokens": len(ids), "n_layers": m.n_layer,
                    "middle_layer": m.n_layer // 2, "runtime_s": time.time() - t0}, **out),
              open(os.path.join(HERE, name), "w"), indent=1)
    for k in ("value_zeroing", "alti"):
        R = np.asarray(out[k]["rollout"])
        print("%s: mixing ratio of the middle layer %.3f, of the rollout %.3f; rollout's top "
              "sources of the last token %s" % (k, out[k]["mix"][m.n_layer // 2],
                                                out[k]["mix"][-1],
                                                np.argsort(-R[-1])[:3].tolist()))


def main():
    path = ar.model_path()
    t0 = time.time()
    m = ar.Model(path)
    W = m.W
    fx = json.load(open(os.path.join(HERE, "patch-fixture.json")))
    pair = fx["pairs"][0]
    ids = pair["clean_ids"]
    layers = nr.forward_values(m, ids)
    vz, al = [], []
    for l, (P, f, x_in, x_mid, ffn_in, g) in enumerate(layers):
        p = "blk.%d." % l

        def layer_out(A, x_in=x_in, p=p, g=g):
            x = x_in + A
            hh = m.rms(x, g)
            gg = hh @ W[p + "ffn_gate.weight"].T
            u = hh @ W[p + "ffn_up.weight"].T
            return x + ((gg / (1.0 + np.exp(-gg))) * u) @ W[p + "ffn_down.weight"].T

        M, clean = value_zeroing(P, f, layer_out)
        if l + 1 < len(layers):  # nothing zeroed: the next layer's input
            nxt = layers[l + 1][2]
            assert np.max(np.abs(clean - nxt)) < 1e-9 * (1 + np.abs(nxt).max())
        vz.append(M)
        al.append(alti(P, f, x_in, x_mid))
    out = record(vz, al, (0, m.n_layer // 2))
    dump(path, m, ids, pair["clean_text"], t0, out, "mixing-fixture.json",
         "tests/reference/mixing_ref.py")


def gemma_main(path):
    import gemma3_ref as gr  # the independent numpy Gemma 3 (not modified)
    t0 = time.time()
    m = gr.Gemma3(path)
    W = m.W
    ids = nr.GEMMA_IDS
    layers = nr.gemma_layers(m, ids)
    vz, al = [], []
    for l, (P, f, x_in, x_mid, ffn_in, g, gp) in enumerate(layers):
        b = "blk.%d." % l

        def layer_out(A, x_in=x_in, b=b, g=g, gp=gp):
            x = x_in + m.rms(A, gp)
            hh = m.rms(x, g)
            gg = m.gelu_tanh(hh @ W[b + "ffn_gate.weight"].T) * (hh @ W[b + "ffn_up.weight"].T)
            return x + m.rms(gg @ W[b + "ffn_down.weight"].T, W[b + "post_ffw_norm.weight"])

        M, clean = value_zeroing(P, f, layer_out)
        if l + 1 < len(layers):
            nxt = layers[l + 1][2]
            assert np.max(np.abs(clean - nxt)) < 1e-9 * (1 + np.abs(nxt).max())
        vz.append(M)
        al.append(alti(P, f, x_in, x_mid, (gp, m.eps)))
    out = record(vz, al, (0, m.n_layer // 2))
    dump(path, m, ids, "When Mary and John went to the store, John gave a drink to", t0, out,
         "mixing-fixture-gemma3.json", "tests/reference/mixing_ref.py --gemma")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--gemma":
        gemma_main(sys.argv[2] if len(sys.argv) > 2 else
                   os.path.join(HERE, "..", "..", "data", "models",
                                "gemma-3-270m-q4_k_m.gguf"))
    else:
        main()
