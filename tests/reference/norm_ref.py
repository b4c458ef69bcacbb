#!/usr/bin/env python3
"""Norm-based attention oracle (Kobayashi et al. 2020, "Attention is Not Only a Weight"):
value-vector norms and norm-based maps in float64 on the independent numpy model of
attention_ref.py (the GGUF read through gguf-py only; nothing of Saccade imported).

Definitions (engine/analysis/sc-norm-attn.h and engine/study/sc-norm-study.h restated,
implemented here without the C code):
  v_j        layer l's value vector at token j: rms(x_j) * attn_norm @ W_V^T (no bias in a
             llama model), KV head g's head_dim values; query head h reads g = h // group.
  f_h(x_j)   = W_O[:, h*d:(h+1)*d] @ v_j[g(h)]   (n_embd values: the head's slice of W_O)
  vnorm      vnorm[h][j] = ||f_h(x_j)||
  head map   N_h[i][j] = ||alpha_h[i][j] f_h(x_j)|| = alpha_h[i][j] * vnorm[h][j]
  layer map  N[i][j] = ||sum_h alpha_h[i][j] f_h(x_j)||, the vectors summed over the heads
             before the norm (computed here as that sum of n_embd-vectors, not through the
             heads' Gram matrix as the C code does)
  maps are raw (rows not renormalised).
  With the residual (Kobayashi et al. 2021, as engine/analysis/sc-norm-attn.h applies it to a
  pre-norm llama): x_i the residual entering the layer, A_ij = sum_h alpha_h[i][j] f_h(x_j),
  t_ij = A_ij + delta_ij x_i (sum_j t_ij = the residual after the attention block, x_mid);
  res_map R[i][j] = ||t_ij||; resnorm_map RN[i][j] = ||ffn_norm * t_ij|| / rms(x_mid_i)
  (rms with the model's eps; sum_j of those vectors = the FFN's input). mix = the
  context-mixing ratio, mean over rows i >= 1 of sum_{j != i} M[i][j] / sum_j M[i][j], of
  the layer map N, of R and of RN.
  Summaries over the query rows i = 1 .. n-1 (row 0 sees only token 0):
  weight_first = mean_i alpha_h[i][0]; norm_first = mean_i N_h[i][0] / sum_j N_h[i][j];
  vnorm_first = vnorm[h][0]; vnorm_rest = mean_{j>=1} vnorm[h][j]; per layer
  layer_weight_first = mean_h weight_first, layer_norm_first = mean_i N[i][0] / sum_j N[i][j].
Case: the clean prompt of patch-fixture.json's first pair ("When Mary and John went to the
store, John gave a drink to", 14 tokens, no BOS, its ids as stored there); the value norms
and every map (each head's, the layer's, R and RN) and the mixing ratios of the middle
layer (n_layer // 2 = 15) and of layer 0, and the summaries of every head of every layer.

Self-checks (asserted): this script's weights equal attention_ref.Model.forward's (< 1e-12);
the residual's terms add up to x_mid and, through the FFN's norm, to the FFN's input
(< 1e-9);
each head map's row equals alpha times the norms; the layer map is at most the sum of the
head maps (the triangle inequality) and equals it for a single head.

Gemma 3 (--gemma): the same on gemma3_ref.py's independent numpy Gemma 3 for Gemma 3 270M
(data/models/gemma-3-270m-q4_k_m.gguf) and the same sentence with its <bos> (GEMMA_IDS, from
Saccade's Gemma tokenizer, which tests/engine/test-gemma-tokenizer.c checks against
llama.cpp), layers 0 and 9 (the middle; a local layer, its window far longer than the
sentence). v after W_V (Gemma 3 has no value norm); f_h(x_j) = W_O^h v_j before the
post-attention RMSNorm; with the residual, that norm frozen at row i's scale:
t_ij = post_attention_norm * A_ij / rms(sum_j A_ij) + delta_ij x_i. Writes
norm-fixture-gemma3.json.

How to rerun
    pip install gguf==0.19.0 numpy==2.4.6
    python3 tests/reference/norm_ref.py [MODEL.gguf]
    python3 tests/reference/norm_ref.py --gemma [GEMMA.gguf]
Writes norm-fixture.json next to itself (~6 s: one forward pass plus loading), or
norm-fixture-gemma3.json (~20 s).
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


def forward_values(m, ids):
    """Each layer's attention weights (H, T, T), the f_h(x_j) vectors (T, H, E), the
    residual entering it (T, E), the residual after its attention block and the FFN's
    input rmsnorm(x_mid) * ffn_norm (both (T, E)) and the ffn_norm weights."""
    W = m.W
    T = len(ids)
    pos = np.arange(T)
    d, H, G = m.head_dim, m.n_head, m.group
    x = W["token_embd.weight"][np.asarray(ids)].copy()
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    out = []
    for l in range(m.n_layer):
        p = "blk.%d." % l
        h = m.rms(x, W[p + "attn_norm.weight"])
        q = (h @ W[p + "attn_q.weight"].T).reshape(T, H, d)
        k = (h @ W[p + "attn_k.weight"].T).reshape(T, m.n_head_kv, d)
        v = (h @ W[p + "attn_v.weight"].T).reshape(T, m.n_head_kv, d)
        q = m.rope(q, pos)
        k = m.rope(k, pos)
        wo = W[p + "attn_output.weight"]  # (E, H*d)
        P = np.zeros((H, T, T))
        f = np.zeros((T, H, m.n_embd))
        o = np.zeros((T, H, d))
        for hq in range(H):
            hk = hq // G
            s = (q[:, hq, :] @ k[:, hk, :].T) * m.kq_scale
            s[mask] = -np.inf
            s = s - s.max(axis=1, keepdims=True)
            e = np.exp(s)
            P[hq] = e / e.sum(axis=1, keepdims=True)
            o[:, hq, :] = P[hq] @ v[:, hk, :]
            f[:, hq, :] = v[:, hk, :] @ wo[:, hq * d:(hq + 1) * d].T
        x_in = x
        x = x + o.reshape(T, -1) @ wo.T
        hh = m.rms(x, W[p + "ffn_norm.weight"])
        out.append((P, f, x_in, x.copy(), hh.copy(), W[p + "ffn_norm.weight"]))
        g = hh @ W[p + "ffn_gate.weight"].T
        u = hh @ W[p + "ffn_up.weight"].T
        x = x + ((g / (1.0 + np.exp(-g))) * u) @ W[p + "ffn_down.weight"].T
    return out


def first_share(M):
    """mean over rows i >= 1 of M[i, 0] / sum_j M[i, j]"""
    return float(np.mean(M[1:, 0] / M[1:].sum(axis=1)))


def mix_ratio(M):
    s = M[1:].sum(axis=1)
    return float(np.mean((s - np.diag(M)[1:]) / s))


def residual_maps(m, P, f, x_in, x_mid, ffn_in, g):
    T = P.shape[1]
    t = np.einsum("hij,jhe->ije", P, f)       # A_ij
    t[np.arange(T), np.arange(T)] += x_in     # + delta_ij x_i
    assert np.max(np.abs(t.sum(axis=1) - x_mid)) < 1e-9   # the terms add up to x_mid
    rms = np.sqrt((x_mid * x_mid).mean(-1) + m.eps)
    z = t * g[None, None, :] / rms[:, None, None]
    assert np.max(np.abs(z.sum(axis=1) - ffn_in)) < 1e-9  # ... and to the FFN's input
    return np.linalg.norm(t, axis=2), np.linalg.norm(z, axis=2)


def layer_record(P, f):
    H, T, _ = P.shape
    vnorm = np.linalg.norm(f, axis=2).T  # (H, T)
    head_maps = P * vnorm[:, None, :]    # (H, T, T)
    # the layer map: sum over heads of alpha_h[i, j] f_h(x_j) (an E-vector per (i, j)), normed
    summed = np.einsum("hij,jhe->ije", P, f)
    layer_map = np.linalg.norm(summed, axis=2)
    # self-checks
    assert np.all(layer_map <= head_maps.sum(axis=0) + 1e-12)
    one = np.linalg.norm(np.einsum("ij,je->ije", P[0], f[:, 0, :]), axis=2)
    assert np.allclose(one, head_maps[0], rtol=0, atol=1e-12)
    return vnorm, head_maps, layer_map


def main():
    path = ar.model_path()
    t0 = time.time()
    m = ar.Model(path)
    fx = json.load(open(os.path.join(HERE, "patch-fixture.json")))
    pair = fx["pairs"][0]
    ids = pair["clean_ids"]
    T = len(ids)
    layers = forward_values(m, ids)
    probs, _, _ = m.forward(ids)
    for l, rec in enumerate(layers):
        assert np.max(np.abs(rec[0] - probs[l])) < 1e-12, l
    heads, layer_sums, kept = [], [], []
    mid = m.n_layer // 2
    for l, (P, f, x_in, x_mid, ffn_in, g) in enumerate(layers):
        vnorm, head_maps, layer_map = layer_record(P, f)
        wf = []
        for h in range(m.n_head):
            w = float(np.mean(P[h, 1:, 0]))
            wf.append(w)
            heads.append({"layer": l, "head": h, "weight_first": w,
                          "norm_first": first_share(head_maps[h]),
                          "vnorm_first": float(vnorm[h, 0]),
                          "vnorm_rest": float(np.mean(vnorm[h, 1:]))})
        layer_sums.append({"layer": l, "layer_weight_first": float(np.mean(wf)),
                           "layer_norm_first": first_share(layer_map)})
        if l in (0, mid):
            R, RN = residual_maps(m, P, f, x_in, x_mid, ffn_in, g)
            kept.append({"layer": l, "vnorm": vnorm.tolist(),
                         "head_maps": head_maps.tolist(), "layer_map": layer_map.tolist(),
                         "res_map": R.tolist(), "resnorm_map": RN.tolist(),
                         "mix": [mix_ratio(layer_map), mix_ratio(R), mix_ratio(RN)]})
    import importlib.metadata as md
    json.dump({"format": "saccade-norm-fixture/1", "generator": "tests/reference/norm_ref.py",
               "model_file": os.path.basename(path),
               "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("Self-checks")[0].strip(),
               "text": pair["clean_text"], "ids": ids, "n_tokens": T,
               "n_layers": m.n_layer, "n_heads": m.n_head, "middle_layer": mid,
               "runtime_s": time.time() - t0, "layers": kept, "heads": heads,
               "layer_summaries": layer_sums},
              open(os.path.join(HERE, "norm-fixture.json"), "w"), indent=1)
    gaps = sorted(heads, key=lambda r: r["norm_first"] - r["weight_first"])[:5]
    for r in gaps:
        print("L%d.H%d weight on token 0 %.3f, norm share %.3f, ||f(x_0)|| %.3f vs rest %.3f"
              % (r["layer"], r["head"], r["weight_first"], r["norm_first"], r["vnorm_first"],
                 r["vnorm_rest"]))
    for k in kept:
        print("layer %d mixing ratio: N %.3f, with the residual %.3f, through the norm %.3f"
              % ((k["layer"],) + tuple(k["mix"])))


GEMMA_IDS = [2, 4420, 8712, 532, 3415, 3939, 531, 506, 4762, 236764, 3415, 5877, 496, 6092,
             531]


def gemma_layers(m, ids):
    """As forward_values, for gemma3_ref.Gemma3 (its forward loop restated to expose v), and
    each layer's post-attention norm weights: (P, f, x_in, x_mid, ffn_in, g_ffn, g_post)."""
    W = m.W
    n = len(ids)
    x = m.E[np.asarray(ids)].astype(np.float64) * np.sqrt(m.n_embd)
    H, D, G = m.n_head, m.head_dim, m.n_head // m.n_kv
    out = []
    for l in range(m.n_layer):
        b = "blk.%d." % l
        h = m.rms(x, W[b + "attn_norm.weight"])
        q = (h @ W[b + "attn_q.weight"].T).reshape(n, H, D)
        k = (h @ W[b + "attn_k.weight"].T).reshape(n, m.n_kv, D)
        v = (h @ W[b + "attn_v.weight"].T).reshape(n, m.n_kv, D)
        q = m.rms(q, W[b + "attn_q_norm.weight"])
        k = m.rms(k, W[b + "attn_k_norm.weight"])
        base = m.rope_base_local if m.local[l] else m.rope_base
        q = m.rope(q, base) * m.q_scale
        k = m.rope(k, base)
        keep = m.mask(n, l)
        wo = W[b + "attn_output.weight"]
        P = np.empty((H, n, n))
        o = np.empty((n, H, D))
        f = np.empty((n, H, m.n_embd))
        for hh in range(H):
            kv = hh // G
            sc = np.where(keep, q[:, hh, :] @ k[:, kv, :].T, -np.inf)
            e = np.exp(sc - sc.max(-1, keepdims=True))
            e[~keep] = 0.0
            P[hh] = e / e.sum(-1, keepdims=True)
            o[:, hh, :] = P[hh] @ v[:, kv, :]
            f[:, hh, :] = v[:, kv, :] @ wo[:, hh * D:(hh + 1) * D].T
        x_in = x
        a = o.reshape(n, H * D) @ wo.T
        x = x + m.rms(a, W[b + "post_attention_norm.weight"])
        hh_ = m.rms(x, W[b + "ffn_norm.weight"])
        out.append((P, f, x_in, x.copy(), hh_, W[b + "ffn_norm.weight"],
                    W[b + "post_attention_norm.weight"]))
        g = m.gelu_tanh(hh_ @ W[b + "ffn_gate.weight"].T) * (hh_ @ W[b + "ffn_up.weight"].T)
        x = x + m.rms(g @ W[b + "ffn_down.weight"].T, W[b + "post_ffw_norm.weight"])
    return out


def gemma_residual_maps(m, P, f, x_in, x_mid, ffn_in, g, gp):
    T = P.shape[1]
    A = np.einsum("hij,jhe->ije", P, f)                       # A_ij
    r = np.sqrt((A.sum(axis=1) ** 2).mean(-1) + m.eps)        # rms(sum_j A_ij) per row
    t = A * gp[None, None, :] / r[:, None, None]
    t[np.arange(T), np.arange(T)] += x_in
    assert np.max(np.abs(t.sum(axis=1) - x_mid)) < 1e-7 * (1 + np.abs(x_mid).max())
    rms = np.sqrt((x_mid * x_mid).mean(-1) + m.eps)
    z = t * g[None, None, :] / rms[:, None, None]
    assert np.max(np.abs(z.sum(axis=1) - ffn_in)) < 1e-9 * (1 + np.abs(ffn_in).max())
    return np.linalg.norm(t, axis=2), np.linalg.norm(z, axis=2)


def gemma_main(path):
    import gemma3_ref as gr  # the independent numpy Gemma 3 (not modified)
    t0 = time.time()
    m = gr.Gemma3(path)
    ids = GEMMA_IDS
    layers = gemma_layers(m, ids)
    probs, _, _ = m.forward(ids)
    for l, rec in enumerate(layers):
        assert np.max(np.abs(rec[0] - probs[l])) < 1e-12, l
    heads, layer_sums, kept = [], [], []
    mid = m.n_layer // 2
    for l, (P, f, x_in, x_mid, ffn_in, g, gp) in enumerate(layers):
        vnorm, head_maps, layer_map = layer_record(P, f)
        wf = []
        for h in range(m.n_head):
            w = float(np.mean(P[h, 1:, 0]))
            wf.append(w)
            heads.append({"layer": l, "head": h, "weight_first": w,
                          "norm_first": first_share(head_maps[h]),
                          "vnorm_first": float(vnorm[h, 0]),
                          "vnorm_rest": float(np.mean(vnorm[h, 1:]))})
        layer_sums.append({"layer": l, "layer_weight_first": float(np.mean(wf)),
                           "layer_norm_first": first_share(layer_map)})
        if l in (0, mid):
            R, RN = gemma_residual_maps(m, P, f, x_in, x_mid, ffn_in, g, gp)
            kept.append({"layer": l, "vnorm": vnorm.tolist(),
                         "head_maps": head_maps.tolist(), "layer_map": layer_map.tolist(),
                         "res_map": R.tolist(), "resnorm_map": RN.tolist(),
                         "mix": [mix_ratio(layer_map), mix_ratio(R), mix_ratio(RN)]})
    import importlib.metadata as md
    json.dump({"format": "saccade-norm-fixture/1", "generator":
               "tests/reference/norm_ref.py --gemma", "model_file": os.path.basename(path),
               "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("Self-checks")[0].strip(),
               "text": "When Mary and John went to the store, John gave a drink to",
               "ids": ids, "n_tokens": len(ids), "n_layers": m.n_layer, "n_heads": m.n_head,
               "middle_layer": mid, "runtime_s": time.time() - t0, "layers": kept,
               "heads": heads, "layer_summaries": layer_sums},
              open(os.path.join(HERE, "norm-fixture-gemma3.json"), "w"), indent=1)
    for k in kept:
        print("layer %d mixing ratio: N %.3f, with the residual %.3f, through the norm %.3f"
              % ((k["layer"],) + tuple(k["mix"])))
    for r in sorted(heads, key=lambda r: r["norm_first"] - r["weight_first"])[:5]:
        print("L%d.H%d weight on <bos> %.3f, norm share %.3f, ||f(x_0)|| %.3f vs rest %.3f"
              % (r["layer"], r["head"], r["weight_first"], r["norm_first"], r["vnorm_first"],
                 r["vnorm_rest"]))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--gemma":
        gemma_main(sys.argv[2] if len(sys.argv) > 2 else
                   os.path.join(HERE, "..", "..", "data", "models",
                                "gemma-3-270m-q4_k_m.gguf"))
    else:
        main()
