#!/usr/bin/env python3
"""QK-attribution oracle: one head's pre-softmax score q_i . k_j split into (query-side
component) x (key-side component), in float64 on the independent numpy model of
attention_ref.py (the GGUF read through gguf-py only; nothing of Saccade imported). The
forward pass below is written here again (attention_ref's does not hand out the heads'
outputs); its weights, RMSNorm and RoPE are attention_ref.Model's.

Definition (engine/study/sc-qk-study.h restated, implemented here without the C code):
  x_p      the residual entering layer l at position p; x^0 = the token embedding.
  parts    embed e_p = x^0_p; head (l', h') for l' < l: a = W_O^{l'}[:, block h'] o_{l',h',p}
           (o the head's attention output before W_O); "MLP l'" = x^{l'+1}_p - x^{l'}_p -
           sum_h' a_{l',h',p}. So x^l_p = embed + sum of every head and MLP below l.
  frozen   rms_p = sqrt(mean(x^l_p^2) + eps), the clean run's, held fixed.
  q, k     q_i^c = RoPE_i(W_Q^h (g * c_i) / rms_i), k_j^c = RoPE_j(W_K^{h//group} (g * c_j) /
           rms_j), g = blk.l.attn_norm.weight.
  part     part[c][c'] = kq_scale * q_i^c . k_j^c'; sum over (c, c') = kq_scale * q_i . k_j,
           the score of the forward pass (asserted here to 1e-9 relative).
  order    components: embed, L0.H0 .. L0.H8, MLP0, L1.H0, ...: C = 1 + l * (n_head + 1).
Case: SmolLM2-135M, the clean ids of patch-fixture.json's "mary_john" pair ("When Mary and
John went to the store, John gave a drink to", 14 tokens, no BOS), layer 16, query = the
last position (13), key = the " Mary" position (1); the head is the one of layer 16 whose
attention from the last position to " Mary" is largest (the clearest name-mover-like
pattern in that layer), chosen by this script and recorded.
Recorded: the score, rms at i and j, both marginals (per query component: the sum over key
components; per key component: the sum over query components), all C of each, and the ten
parts of largest |part|.

Gemma 3 (python3 tests/reference/qk_ref.py gemma3 [MODEL.gguf], on gemma3_ref.Gemma3's
weights, RMSNorm and NeoX RoPE; writes qk-fixture-gemma3.json): the same split with every
nonlinear scale frozen at the clean run's value, as sc-qk-study.h says:
  embed    x^0 = the token embedding times sqrt(n_embd);
  head     a = g_post * (W_O^{l'}[:, block h'] o_{l',h',p}) / rms_post, rms_post = sqrt(mean
           (W_O o)^2 + eps) of the whole attention write of layer l' at p (post-attention
           norm); MLP l' = the rest of the layer's update (its post-FFN norm included);
  q, k     after W_Q / W_K, the QK-norm with its rms frozen at the whole projection's:
           q_i^c = RoPE_neox,i(g_qn * (W_Q^h (g * c_i) / rms_i) / rms_qn_i), likewise k;
           RoPE base rope_base_local on a local layer, rope_base on a global one.
  Case: "When Mary and John went to the store, John gave a drink to" with BOS (15 ids,
  Saccade's tokenizer, stored below), query 14, key 2 (" Mary"), layers 9 (local) and 11
  (global), each with its head of most attention from the query to " Mary".

GPT-2 (python3 tests/reference/qk_ref.py gpt2 [tests/reference/tiny-gpt2.gguf]; writes
qk-fixture-gpt2.json): a GPT-2 forward pass written here in float64 over gguf-py's tensors
(LayerNorm with bias, the fused attn_qkv with its bias, attn_output and its bias, GELU's
tanh form, learned positions; nothing of Saccade or of attention_ref), and the split with
the LayerNorm's sigma frozen:
  x^0      token_embd[id_p] + position_embd[p]; the components "embed" (the token's row)
           and, after every head and MLP, "pos" (the position's row) and "bias";
  MLP l'   the rest of layer l''s update: its MLP, its attention output bias and its MLP
           biases (constants of the residual);
  q, k     q_i^c = W_Q^h (g * (c_i - mean c_i)) / sigma_i, sigma_i = sqrt(var(x_i) + eps),
           q_i^bias = W_Q^h beta + b_Q^h (beta the LayerNorm's bias, b_Q^h the head's rows of
           attn_qkv.bias); likewise k. No RoPE.
  Case: ids 3 17 42 8 99 5 61 23 7 30, query 9, key 4, layer 1 (the last) heads 0 and 1.

Qwen2 (python3 tests/reference/qk_ref.py qwen2 [MODEL.gguf], on qwen2_ref.Qwen2's weights,
RMSNorm and NeoX RoPE; writes qk-fixture-qwen2.json): llama's split (embed, every head and
MLP of the layers below, rms frozen at the clean run's) plus one constant per side, the
projection's bias, which enters after W_Q / W_K and before RoPE:
  q_i      = RoPE_neox,i(W_Q^h (g * x_i) / rms_i + b_Q^h), k_j = RoPE_neox,j(W_K^{h//7}
           (g * x_j) / rms_j + b_K^{h//7}), the forward pass's q and k (g = attn_norm);
  q_i^c    = RoPE_neox,i(W_Q^h (g * c_i) / rms_i) for embed, heads, MLPs (as llama);
  q_i^bias = RoPE_neox,i(b_Q^h), k_j^bias = RoPE_neox,j(b_K^{h//7}): the bias rotated at the
           side's position like every other component (RoPE is linear), the component
           "bias", last on each side (C = 1 + l * (n_head + 1) + 1);
  parts    part[c][c'] = kq_scale * q_i^c . k_j^c' over every pair, the bias rows and
           columns included (bias x bias, bias x c', c x bias); their sum is kq_scale *
           q_i . k_j of the forward pass (asserted to 1e-9 relative), kq_scale = 1/8.
  Case: "When Mary and John went to the store, John gave a drink to", 14 ids without BOS
  (tokenizer.ggml.add_bos_token is false, as in attention-fixture-qwen2.json; the ids are
  Saccade's tokenizer's, stored below and checked by the C test), query 13, key 1
  (" Mary"), layers 12 (the middle, n_layer // 2) and 23 (the last), each with its head of
  most attention from the query to " Mary".

How to rerun
    pip install gguf==0.19.0 numpy==2.4.6
    python3 tests/reference/qk_ref.py [MODEL.gguf]
    python3 tests/reference/qk_ref.py gemma3 [GEMMA.gguf]
    python3 tests/reference/qk_ref.py gpt2 [tests/reference/tiny-gpt2.gguf]
    python3 tests/reference/qk_ref.py qwen2 [QWEN2.gguf]
Writes qk-fixture.json next to itself (~1 min), qk-fixture-gemma3.json (~2 min) or
qk-fixture-gpt2.json (a second) or qk-fixture-qwen2.json.
"""
import hashlib
import json
import os
import sys
import time

import gguf
import numpy as np
from gguf.quants import dequantize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_ref as ar  # noqa: E402  (the independent numpy model; not modified)

HERE = os.path.dirname(os.path.abspath(__file__))
LAYER = 16


def forward_keep(m, ids, upto):
    """Layers 0 .. upto - 1 in float64: the residuals entering 0 .. upto, each layer's
    per-head outputs before W_O (T, H, D), and layer `upto`'s attention probabilities."""
    W = m.W
    T = len(ids)
    pos = np.arange(T)
    x = W["token_embd.weight"][np.asarray(ids)].copy()
    resid, outs = [x.copy()], []
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    for l in range(upto + 1):
        p = "blk.%d." % l
        h = m.rms(x, W[p + "attn_norm.weight"])
        q = m.rope((h @ W[p + "attn_q.weight"].T).reshape(T, m.n_head, m.head_dim), pos)
        k = m.rope((h @ W[p + "attn_k.weight"].T).reshape(T, m.n_head_kv, m.head_dim), pos)
        v = (h @ W[p + "attn_v.weight"].T).reshape(T, m.n_head_kv, m.head_dim_v)
        o = np.zeros((T, m.n_head, m.head_dim_v))
        probs = np.zeros((m.n_head, T, T))
        for hq in range(m.n_head):
            hk = hq // m.group
            s = (q[:, hq, :] @ k[:, hk, :].T) * m.kq_scale
            s[mask] = -np.inf
            e = np.exp(s - s.max(axis=1, keepdims=True))
            P = e / e.sum(axis=1, keepdims=True)
            probs[hq] = P
            o[:, hq, :] = P @ v[:, hk, :]
        if l == upto:
            return resid, outs, probs, q, k
        outs.append(o)
        x = x + o.reshape(T, -1) @ W[p + "attn_output.weight"].T
        h = m.rms(x, W[p + "ffn_norm.weight"])
        g = h @ W[p + "ffn_gate.weight"].T
        u = h @ W[p + "ffn_up.weight"].T
        x = x + ((g / (1.0 + np.exp(-g))) * u) @ W[p + "ffn_down.weight"].T
        resid.append(x.copy())


def components(m, resid, outs, layer, p):
    """(C, n_embd) the components of x^layer_p, and their names."""
    vecs, names = [resid[0][p]], ["embed"]
    D = m.head_dim_v
    for l in range(layer):
        wo = m.W["blk.%d.attn_output.weight" % l]  # (n_embd, n_head * D)
        heads = [wo[:, h * D:(h + 1) * D] @ outs[l][p, h] for h in range(m.n_head)]
        vecs += heads
        names += ["L%d.H%d" % (l, h) for h in range(m.n_head)]
        vecs.append(resid[l + 1][p] - resid[l][p] - np.sum(heads, axis=0))
        names.append("MLP%d" % l)
    return np.array(vecs), names


def side(m, comps, x, wrows, g, pos):
    rms = np.sqrt((x * x).mean() + m.eps)
    proj = ((comps * g[None, :]) @ wrows.T) / rms  # (C, D)
    rot = m.rope(proj[:, None, :], np.full(len(comps), pos))[:, 0, :]
    return rot, rms


def main():
    path = ar.model_path()
    t0 = time.time()
    m = ar.Model(path)
    fx = json.load(open(os.path.join(HERE, "patch-fixture.json")))
    pair = [p for p in fx["pairs"] if p["name"] == "mary_john"][0]
    ids = pair["clean_ids"]
    i, j = len(ids) - 1, ids.index(pair["target"])  # the last position; " Mary"
    resid, outs, probs, q, k = forward_keep(m, ids, LAYER)
    head = int(np.argmax(probs[:, i, j]))
    group = head // m.group
    D = m.head_dim
    p = "blk.%d." % LAYER
    g = m.W[p + "attn_norm.weight"]
    wq = m.W[p + "attn_q.weight"][head * D:(head + 1) * D]
    wk = m.W[p + "attn_k.weight"][group * D:(group + 1) * D]
    ci, names = components(m, resid, outs, LAYER, i)
    cj, _ = components(m, resid, outs, LAYER, j)
    assert np.abs(ci.sum(0) - resid[LAYER][i]).max() < 1e-9
    qc, rms_q = side(m, ci, resid[LAYER][i], wq, g, i)
    kc, rms_k = side(m, cj, resid[LAYER][j], wk, g, j)
    parts = (qc @ kc.T) * m.kq_scale
    score = float(q[i, head] @ k[j, group]) * m.kq_scale
    assert abs(parts.sum() - score) <= 1e-9 * max(1.0, abs(score)), (parts.sum(), score)
    C = len(names)
    flat = np.argsort(-np.abs(parts).ravel(), kind="stable")[:10]
    top = [{"query": int(f // C), "key": int(f % C), "query_name": names[f // C],
            "key_name": names[f % C], "value": float(parts.ravel()[f])} for f in flat]
    import importlib.metadata as md
    json.dump({"format": "saccade-qk-fixture/1", "generator": "tests/reference/qk_ref.py",
               "model_file": os.path.basename(path),
               "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("How to rerun")[0].strip(),
               "runtime_s": time.time() - t0, "ids": ids, "layer": LAYER, "head": head,
               "query": i, "key": j, "attention": float(probs[head, i, j]),
               "attention_all_heads": [float(v) for v in probs[:, i, j]],
               "score": score, "sum_of_parts": float(parts.sum()), "rms_query": float(rms_q),
               "rms_key": float(rms_k), "n_components": C, "components": names,
               "query_marginals": [float(v) for v in parts.sum(1)],
               "key_marginals": [float(v) for v in parts.sum(0)], "top_parts": top},
              open(os.path.join(HERE, "qk-fixture.json"), "w"), indent=1)
    print("head %d.%d  attention %.4f  score %.6f  C %d" % (LAYER, head, probs[head, i, j],
                                                           score, C))
    for t in top:
        print("  %+10.5f  %s (key) x %s (query)" % (t["value"], t["key_name"],
                                                     t["query_name"]))


GEMMA_IDS = [2, 4420, 8712, 532, 3415, 3939, 531, 506, 4762, 236764, 3415, 5877, 496, 6092, 531]
GEMMA_LAYERS = (9, 11)


def gemma_forward_keep(m, ids, upto):
    """gemma3_ref.Gemma3.forward's layers 0 .. upto, keeping the residuals, each layer's
    per-head outputs before W_O, its probabilities and its q (QK-normed, rotated, unscaled)
    and k."""
    W = m.W
    n = len(ids)
    x = m.E[np.asarray(ids)].astype(np.float64) * np.sqrt(m.n_embd)
    resid, outs, probs, qs, ks = [x.copy()], [], [], [], []
    H, D, G = m.n_head, m.head_dim, m.n_head // m.n_kv
    for l in range(upto + 1):
        b = "blk.%d." % l
        h = m.rms(x, W[b + "attn_norm.weight"])
        q = (h @ W[b + "attn_q.weight"].T).reshape(n, H, D)
        k = (h @ W[b + "attn_k.weight"].T).reshape(n, m.n_kv, D)
        v = (h @ W[b + "attn_v.weight"].T).reshape(n, m.n_kv, D)
        q = m.rms(q, W[b + "attn_q_norm.weight"])
        k = m.rms(k, W[b + "attn_k_norm.weight"])
        base = m.rope_base_local if m.local[l] else m.rope_base
        q = m.rope(q, base)
        k = m.rope(k, base)
        keep = m.mask(n, l)
        P = np.empty((H, n, n))
        o = np.empty((n, H, D))
        for hh in range(H):
            kv = hh // G
            sc = (q[:, hh, :] @ k[:, kv, :].T) * m.q_scale
            sc = np.where(keep, sc, -np.inf)
            e = np.exp(sc - sc.max(-1, keepdims=True))
            e[~keep] = 0.0
            P[hh] = e / e.sum(-1, keepdims=True)
            o[:, hh, :] = P[hh] @ v[:, kv, :]
        probs.append(P)
        qs.append(q)
        ks.append(k)
        outs.append(o)
        a = o.reshape(n, H * D) @ W[b + "attn_output.weight"].T
        x = x + m.rms(a, W[b + "post_attention_norm.weight"])
        h = m.rms(x, W[b + "ffn_norm.weight"])
        f = m.gelu_tanh(h @ W[b + "ffn_gate.weight"].T) * (h @ W[b + "ffn_up.weight"].T)
        x = x + m.rms(f @ W[b + "ffn_down.weight"].T, W[b + "post_ffw_norm.weight"])
        resid.append(x.copy())
    return resid, outs, probs, qs, ks


def gemma_components(m, resid, outs, layer, p):
    vecs, names = [resid[0][p]], ["embed"]
    D = m.head_dim
    for l in range(layer):
        b = "blk.%d." % l
        wo = m.W[b + "attn_output.weight"]
        raw = [wo[:, h * D:(h + 1) * D] @ outs[l][p, h] for h in range(m.n_head)]
        tot = np.sum(raw, axis=0)
        rms_post = np.sqrt((tot * tot).mean() + m.eps)
        heads = [m.W[b + "post_attention_norm.weight"] * a / rms_post for a in raw]
        vecs += heads
        names += ["L%d.H%d" % (l, h) for h in range(m.n_head)]
        vecs.append(resid[l + 1][p] - resid[l][p] - np.sum(heads, axis=0))
        names.append("MLP%d" % l)
    return np.array(vecs), names


def gemma_side(m, comps, x, wrows, g, gqn, pos, base):
    rms = np.sqrt((x * x).mean() + m.eps)
    full = wrows @ (g * x) / rms
    rms_qn = np.sqrt((full * full).mean() + m.eps)
    proj = ((comps * g[None, :]) @ wrows.T) / rms * gqn[None, :] / rms_qn  # (C, D)
    # gemma3_ref's rope rotates row r by position r: put each component at row pos
    out = np.empty_like(proj)
    for c in range(len(proj)):
        z = np.zeros((pos + 1, 1, proj.shape[1]))
        z[pos, 0] = proj[c]
        out[c] = m.rope(z, base)[pos, 0]
    return out, rms, rms_qn


def gemma_main(path):
    import gemma3_ref as gr
    t0 = time.time()
    m = gr.Gemma3(path)
    ids = GEMMA_IDS
    i, j = len(ids) - 1, 2
    resid, outs, probs, qs, ks = gemma_forward_keep(m, ids, max(GEMMA_LAYERS))
    cases = []
    D = m.head_dim
    for layer in GEMMA_LAYERS:
        head = int(np.argmax(probs[layer][:, i, j]))
        group = head // (m.n_head // m.n_kv)
        b = "blk.%d." % layer
        g = m.W[b + "attn_norm.weight"]
        base = m.rope_base_local if m.local[layer] else m.rope_base
        ci, names = gemma_components(m, resid, outs, layer, i)
        cj, _ = gemma_components(m, resid, outs, layer, j)
        assert np.abs(ci.sum(0) - resid[layer][i]).max() < 1e-9 * np.abs(resid[layer][i]).max()
        qc, rms_q, rqn = gemma_side(m, ci, resid[layer][i],
                                    m.W[b + "attn_q.weight"][head * D:(head + 1) * D], g,
                                    m.W[b + "attn_q_norm.weight"], i, base)
        kc, rms_k, rkn = gemma_side(m, cj, resid[layer][j],
                                    m.W[b + "attn_k.weight"][group * D:(group + 1) * D], g,
                                    m.W[b + "attn_k_norm.weight"], j, base)
        parts = (qc @ kc.T) * m.q_scale
        score = float(qs[layer][i, head] @ ks[layer][j, group]) * m.q_scale
        assert abs(parts.sum() - score) <= 1e-9 * max(1.0, abs(score)), (parts.sum(), score)
        C = len(names)
        flat = np.argsort(-np.abs(parts).ravel(), kind="stable")[:10]
        top = [{"query": int(f // C), "key": int(f % C), "query_name": names[f // C],
                "key_name": names[f % C], "value": float(parts.ravel()[f])} for f in flat]
        cases.append({"layer": layer, "local": bool(m.local[layer]), "head": head, "query": i,
                      "key": j, "attention": float(probs[layer][head, i, j]), "score": score,
                      "sum_of_parts": float(parts.sum()), "rms_query": float(rms_q),
                      "rms_key": float(rms_k), "rms_qk_norm_query": float(rqn),
                      "rms_qk_norm_key": float(rkn), "n_components": C, "components": names,
                      "query_marginals": [float(v) for v in parts.sum(1)],
                      "key_marginals": [float(v) for v in parts.sum(0)], "top_parts": top})
        print("gemma3 head %d.%d  attention %.4f  score %.6f  C %d" % (
            layer, head, probs[layer][head, i, j], score, C))
        for t in top[:5]:
            print("  %+10.5f  %s (key) x %s (query)" % (t["value"], t["key_name"],
                                                         t["query_name"]))
    import importlib.metadata as md
    json.dump({"format": "saccade-qk-fixture-gemma3/1", "generator": "tests/reference/qk_ref.py",
               "model_file": os.path.basename(path),
               "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("How to rerun")[0].strip(),
               "runtime_s": time.time() - t0, "ids": ids, "cases": cases},
              open(os.path.join(HERE, "qk-fixture-gemma3.json"), "w"), indent=1)


GPT2_IDS = [3, 17, 42, 8, 99, 5, 61, 23, 7, 30]


def gpt2_load(path):
    r = gguf.GGUFReader(path)

    def key(name):
        return r.fields[name].contents()

    assert key("general.architecture") == "gpt2"
    hp = {"n_layer": int(key("gpt2.block_count")), "n_embd": int(key("gpt2.embedding_length")),
          "n_head": int(key("gpt2.attention.head_count")),
          "eps": float(key("gpt2.attention.layer_norm_epsilon"))}
    W = {}
    for t in r.tensors:
        w = dequantize(t.data, t.tensor_type)
        W[t.name] = np.asarray(w, dtype=np.float64).reshape([int(x) for x in reversed(t.shape)])
    return hp, W


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return g * (x - mu) / np.sqrt(var + eps) + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def gpt2_forward_keep(hp, W, ids, upto):
    """Layers 0 .. upto: the residuals entering 0 .. upto, each layer's per-head outputs
    before W_O, layer upto's probabilities, q and k."""
    n, E, H = len(ids), hp["n_embd"], hp["n_head"]
    D = E // H
    x = W["token_embd.weight"][np.asarray(ids)] + W["position_embd.weight"][:n]
    resid, outs = [x.copy()], []
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    for l in range(upto + 1):
        b = "blk.%d." % l
        h = layer_norm(x, W[b + "attn_norm.weight"], W[b + "attn_norm.bias"], hp["eps"])
        qkv = h @ W[b + "attn_qkv.weight"].T + W[b + "attn_qkv.bias"]
        q = qkv[:, :E].reshape(n, H, D)
        k = qkv[:, E:2 * E].reshape(n, H, D)
        v = qkv[:, 2 * E:].reshape(n, H, D)
        P = np.empty((H, n, n))
        o = np.empty((n, H, D))
        for hh in range(H):
            sc = (q[:, hh, :] @ k[:, hh, :].T) / np.sqrt(D)
            sc[mask] = -np.inf
            e = np.exp(sc - sc.max(-1, keepdims=True))
            P[hh] = e / e.sum(-1, keepdims=True)
            o[:, hh, :] = P[hh] @ v[:, hh, :]
        if l == upto:
            return resid, outs, P, q, k
        outs.append(o)
        x = x + o.reshape(n, E) @ W[b + "attn_output.weight"].T + W[b + "attn_output.bias"]
        h = layer_norm(x, W[b + "ffn_norm.weight"], W[b + "ffn_norm.bias"], hp["eps"])
        f = gelu_tanh(h @ W[b + "ffn_up.weight"].T + W[b + "ffn_up.bias"])
        x = x + f @ W[b + "ffn_down.weight"].T + W[b + "ffn_down.bias"]
        resid.append(x.copy())


def gpt2_components(hp, W, ids, resid, outs, layer, p):
    """(C, n_embd) the components of x^layer_p that a residual writes (the bias is not one
    of them: it is added after the norm), and every name, "bias" last."""
    E, H = hp["n_embd"], hp["n_head"]
    D = E // H
    tok = W["token_embd.weight"][ids[p]]
    vecs, names = [tok], ["embed"]
    for l in range(layer):
        wo = W["blk.%d.attn_output.weight" % l]
        heads = [wo[:, h * D:(h + 1) * D] @ outs[l][p, h] for h in range(H)]
        vecs += heads
        names += ["L%d.H%d" % (l, h) for h in range(H)]
        vecs.append(resid[l + 1][p] - resid[l][p] - np.sum(heads, axis=0))
        names.append("MLP%d" % l)
    vecs.append(resid[0][p] - tok)
    names += ["pos", "bias"]
    return np.array(vecs), names


def gpt2_side(hp, comps, x, wrows, brows, g, beta):
    sigma = np.sqrt(((x - x.mean()) ** 2).mean() + hp["eps"])
    centred = comps - comps.mean(1, keepdims=True)
    proj = ((centred * g[None, :]) @ wrows.T) / sigma
    bias = wrows @ beta + brows
    return np.vstack([proj, bias[None, :]]), sigma


def gpt2_main(path):
    t0 = time.time()
    hp, W = gpt2_load(path)
    E, H = hp["n_embd"], hp["n_head"]
    D = E // H
    ids = GPT2_IDS
    i, j = len(ids) - 1, 4
    layer = hp["n_layer"] - 1
    resid, outs, P, q, k = gpt2_forward_keep(hp, W, ids, layer)
    b = "blk.%d." % layer
    g, beta = W[b + "attn_norm.weight"], W[b + "attn_norm.bias"]
    wqkv, bqkv = W[b + "attn_qkv.weight"], W[b + "attn_qkv.bias"]
    cases = []
    for head in range(H):
        ci, names = gpt2_components(hp, W, ids, resid, outs, layer, i)
        cj, _ = gpt2_components(hp, W, ids, resid, outs, layer, j)
        assert np.abs(ci.sum(0) - resid[layer][i]).max() < 1e-9 * np.abs(resid[layer][i]).max()
        rq, rk = slice(head * D, (head + 1) * D), slice(E + head * D, E + (head + 1) * D)
        qc, sq = gpt2_side(hp, ci, resid[layer][i], wqkv[rq], bqkv[rq], g, beta)
        kc, sk = gpt2_side(hp, cj, resid[layer][j], wqkv[rk], bqkv[rk], g, beta)
        parts = (qc @ kc.T) / np.sqrt(D)
        score = float(q[i, head] @ k[j, head]) / np.sqrt(D)
        assert abs(parts.sum() - score) <= 1e-9 * max(1.0, abs(score)), (parts.sum(), score)
        C = len(names)
        flat = np.argsort(-np.abs(parts).ravel(), kind="stable")[:10]
        top = [{"query": int(f // C), "key": int(f % C), "query_name": names[f // C],
                "key_name": names[f % C], "value": float(parts.ravel()[f])} for f in flat]
        cases.append({"layer": layer, "head": head, "query": i, "key": j,
                      "attention": float(P[head, i, j]), "score": score,
                      "sum_of_parts": float(parts.sum()), "rms_query": float(sq),
                      "rms_key": float(sk), "n_components": C, "components": names,
                      "query_marginals": [float(v) for v in parts.sum(1)],
                      "key_marginals": [float(v) for v in parts.sum(0)], "top_parts": top})
        print("gpt2 head %d.%d  attention %.4f  score %.6f  C %d" % (
            layer, head, P[head, i, j], score, C))
        for t in top[:5]:
            print("  %+10.5f  %s (key) x %s (query)" % (t["value"], t["key_name"],
                                                         t["query_name"]))
    import importlib.metadata as md
    json.dump({"format": "saccade-qk-fixture-gpt2/1", "generator": "tests/reference/qk_ref.py",
               "model_file": os.path.basename(path),
               "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("How to rerun")[0].strip(),
               "runtime_s": time.time() - t0, "ids": ids, "cases": cases},
              open(os.path.join(HERE, "qk-fixture-gpt2.json"), "w"), indent=1)


QWEN2_TEXT = "When Mary and John went to the store, John gave a drink to"
QWEN2_IDS = [4498, 10244, 323, 3757, 3937, 311, 279, 3553, 11, 3757, 6551, 264, 7027, 311]


def qwen2_forward_keep(m, ids, upto):
    """qwen2_ref.Qwen2.forward's layers 0 .. upto, keeping the residuals entering each layer,
    each layer's per-head outputs before W_O, its probabilities and its q and k (biases
    added, rotated, unscaled)."""
    n = len(ids)
    x = m.E[np.asarray(ids)].astype(np.float64)
    resid, outs, probs, qs, ks = [x.copy()], [], [], [], []
    H, D, G = m.n_head, m.head_dim, m.n_head // m.n_kv
    keep = np.arange(n)[None, :] <= np.arange(n)[:, None]
    for l in range(upto + 1):
        b = "blk.%d." % l
        h = m.rms(x, m.w64(b + "attn_norm.weight"))
        q = (h @ m.w64(b + "attn_q.weight").T + m.w64(b + "attn_q.bias")).reshape(n, H, D)
        k = (h @ m.w64(b + "attn_k.weight").T + m.w64(b + "attn_k.bias")).reshape(n, m.n_kv, D)
        v = (h @ m.w64(b + "attn_v.weight").T + m.w64(b + "attn_v.bias")).reshape(n, m.n_kv, D)
        q = m.rope(q)
        k = m.rope(k)
        P = np.empty((H, n, n))
        o = np.empty((n, H, D))
        for hh in range(H):
            kv = hh // G
            sc = (q[:, hh, :] @ k[:, kv, :].T) * m.q_scale
            sc = np.where(keep, sc, -np.inf)
            e = np.exp(sc - sc.max(-1, keepdims=True))
            e[~keep] = 0.0
            P[hh] = e / e.sum(-1, keepdims=True)
            o[:, hh, :] = P[hh] @ v[:, kv, :]
        probs.append(P)
        qs.append(q)
        ks.append(k)
        outs.append(o)
        x = x + o.reshape(n, H * D) @ m.w64(b + "attn_output.weight").T
        h = m.rms(x, m.w64(b + "ffn_norm.weight"))
        f = m.silu(h @ m.w64(b + "ffn_gate.weight").T) * (h @ m.w64(b + "ffn_up.weight").T)
        x = x + f @ m.w64(b + "ffn_down.weight").T
        resid.append(x.copy())
    return resid, outs, probs, qs, ks


def qwen2_components(m, resid, outs, layer, p):
    """(C - 1, n_embd) the components of x^layer_p a residual writes (the bias, added after
    the projection, is not one of them), and every name, "bias" last."""
    vecs, names = [resid[0][p]], ["embed"]
    D = m.head_dim
    for l in range(layer):
        wo = m.w64("blk.%d.attn_output.weight" % l)
        heads = [wo[:, h * D:(h + 1) * D] @ outs[l][p, h] for h in range(m.n_head)]
        vecs += heads
        names += ["L%d.H%d" % (l, h) for h in range(m.n_head)]
        vecs.append(resid[l + 1][p] - resid[l][p] - np.sum(heads, axis=0))
        names.append("MLP%d" % l)
    return np.array(vecs), names + ["bias"]


def qwen2_side(m, comps, x, wrows, brows, g, pos):
    """Each component's projection, the bias appended as the last row, all rotated at pos."""
    rms = np.sqrt((x * x).mean() + m.eps)
    proj = np.vstack([((comps * g[None, :]) @ wrows.T) / rms, brows[None, :]])  # (C, D)
    # qwen2_ref's rope rotates row r by position r: put the components at row pos
    z = np.zeros((pos + 1, len(proj), proj.shape[1]))
    z[pos] = proj
    return m.rope(z)[pos], rms


def qwen2_main(path):
    import qwen2_ref as qr
    t0 = time.time()
    m = qr.Qwen2(path)
    ids = QWEN2_IDS
    i, j = len(ids) - 1, 1
    layers = (m.n_layer // 2, m.n_layer - 1)
    resid, outs, probs, qs, ks = qwen2_forward_keep(m, ids, max(layers))
    cases = []
    D, G = m.head_dim, m.n_head // m.n_kv
    for layer in layers:
        head = int(np.argmax(probs[layer][:, i, j]))
        group = head // G
        b = "blk.%d." % layer
        g = m.w64(b + "attn_norm.weight")
        ci, names = qwen2_components(m, resid, outs, layer, i)
        cj, _ = qwen2_components(m, resid, outs, layer, j)
        assert np.abs(ci.sum(0) - resid[layer][i]).max() < 1e-9 * np.abs(resid[layer][i]).max()
        assert np.abs(cj.sum(0) - resid[layer][j]).max() < 1e-9 * np.abs(resid[layer][j]).max()
        rq, rk = slice(head * D, (head + 1) * D), slice(group * D, (group + 1) * D)
        qc, rms_q = qwen2_side(m, ci, resid[layer][i], m.w64(b + "attn_q.weight")[rq],
                               m.w64(b + "attn_q.bias")[rq], g, i)
        kc, rms_k = qwen2_side(m, cj, resid[layer][j], m.w64(b + "attn_k.weight")[rk],
                               m.w64(b + "attn_k.bias")[rk], g, j)
        # the rotated components add up to the forward pass's own q and k
        assert np.abs(qc.sum(0) - qs[layer][i, head]).max() <= 1e-9 * np.abs(qc).max()
        assert np.abs(kc.sum(0) - ks[layer][j, group]).max() <= 1e-9 * np.abs(kc).max()
        parts = (qc @ kc.T) * m.q_scale
        score = float(qs[layer][i, head] @ ks[layer][j, group]) * m.q_scale
        assert abs(parts.sum() - score) <= 1e-9 * max(1.0, abs(score)), (parts.sum(), score)
        C = len(names)
        assert parts.shape == (C, C)
        flat = np.argsort(-np.abs(parts).ravel(), kind="stable")[:10]
        top = [{"query": int(f // C), "key": int(f % C), "query_name": names[f // C],
                "key_name": names[f % C], "value": float(parts.ravel()[f])} for f in flat]
        cases.append({"layer": layer, "head": head, "query": i, "key": j,
                      "attention": float(probs[layer][head, i, j]),
                      "attention_all_heads": [float(v) for v in probs[layer][:, i, j]],
                      "score": score, "sum_of_parts": float(parts.sum()),
                      "bias_x_bias": float(parts[C - 1, C - 1]),
                      "rms_query": float(rms_q), "rms_key": float(rms_k), "n_components": C,
                      "components": names,
                      "query_marginals": [float(v) for v in parts.sum(1)],
                      "key_marginals": [float(v) for v in parts.sum(0)], "top_parts": top})
        print("qwen2 head %d.%d  attention %.4f  score %.6f  bias x bias %.6f  C %d" % (
            layer, head, probs[layer][head, i, j], score, parts[C - 1, C - 1], C))
        for t in top[:5]:
            print("  %+10.5f  %s (key) x %s (query)" % (t["value"], t["key_name"],
                                                         t["query_name"]))
    import importlib.metadata as md
    json.dump({"format": "saccade-qk-fixture-qwen2/1", "generator": "tests/reference/qk_ref.py",
               "model_file": os.path.basename(path), "model_sha256": qr.sha256(path),
               "gguf_version": md.version("gguf"), "numpy_version": np.__version__,
               "definitions": __doc__.split("How to rerun")[0].strip(),
               "runtime_s": time.time() - t0, "text": QWEN2_TEXT, "ids": ids, "cases": cases},
              open(os.path.join(HERE, "qk-fixture-qwen2.json"), "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "qwen2":
        import qwen2_ref
        qwen2_main(sys.argv[2] if len(sys.argv) > 2 else qwen2_ref.DEFAULT_MODEL)
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "gpt2":
        gpt2_main(sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "tiny-gpt2.gguf"))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "gemma3":
        import gemma3_ref
        gemma_main(sys.argv[2] if len(sys.argv) > 2 else gemma3_ref.DEFAULT_MODEL)
    else:
        main()
