#!/usr/bin/env python3
"""Activation-patching oracle: the experiments of engine/study/sc-patch-study.h recomputed in
float64 on the independent numpy model of attention_ref.py (which reads the GGUF only through
gguf-py; nothing of Saccade is imported or called, except optionally its tokenizer binary to
re-check the stored ids, see below).

Definitions (binding; restated from the brief and sc-patch-study.h, implemented below without
looking at the C arithmetic):
  runs      two prompts of the same token count, no BOS, plain text (no chat template): a
            clean one ("When Mary and John went to the store, John gave a drink to") and a
            corrupted one that differs only where the behaviour is decided ("... Mary gave
            a drink to"). Each is one float64 forward pass of attention_ref's model.
  metric    target A = the indirect object (" Mary"), contrast B = the subject (" John"),
            both single tokens (with their leading space); at the last position
            m = logit(A) - logit(B) (= ln p(A) - ln p(B)). Also recorded there: ln p(A),
            ln p(B) (log-softmax over the whole vocabulary), the top-1 id (argmax; ties to
            the lowest id) and the top-2 ids and logits.
  head out  the output of head h of layer l at query position p, before the output
            projection W_O: o_h[p] = sum_j P_h[p, j] V_{h // group}[j] (head_dim values;
            GQA group = n_heads / n_kv_heads = 3). The concatenation of o_0..o_8 at p is
            what W_O multiplies.
  head patch (l, h, S)  in the base run, o_h of layer l at the positions in S is replaced by
            the source run's o_h at the same positions (taken from the unpatched source
            run); everything else is computed normally from there on (later layers see the
            changed residual stream, their attention and MLPs are recomputed). S = all
            positions (kind "head", position -1) or one position (kind "head-position").
  residual patch (l, p)  the residual stream entering layer l (l = 0: the token
            embeddings; l > 0: the output of layer l-1 after its attention and MLP residual
            adds) at position p is replaced by the source run's value, before layer l runs
            (kind "residual"; position -1 = every position).
  directions  "denoise": base = the corrupted run, source = the clean run.
            "noise": base = the clean run, source = the corrupted run.
  normalised  (m_patched - m_corrupted) / (m_clean - m_corrupted), also recorded (clean = 1,
            corrupted = 0); the raw m_patched is the primary value.
  scans     "head_scan_denoise" / "head_scan_noise": m_patched of the head patch (all
            positions) of every one of the n_layers * n_heads = 270 heads, layer-major
            (index l * 9 + h). "residual_scan_denoise" (first pair only): m_patched of the
            residual patch at every (layer, position), layer-major (index l * n_tokens + p).

Computation. Every patched run is the base run restarted at the patched layer from the base
run's own residual stream entering that layer (which the patch cannot have changed): prefix
reuse. The script checks on one case per kind that this gives exactly (bit for bit) the
logits of the same patch run from layer 0.
Self-checks (asserted): the plain forward equals attention_ref.Model.forward's last logits
(< 1e-9); the residual patch of every position at layer 0 gives the source run's logits
exactly (both directions); so does the residual patch at layer 0 of just the one position
where the prompts differ (the embeddings are then the source's); a head patch with the base
run's own outputs changes nothing (exactly); the residual patch of every position at a middle
layer gives the source run's logits exactly.

Token ids: from Saccade's tokenizer (`saccade tokenize --ids TEXT`, proven identical to
llama.cpp's by tests/engine), stored below and in the fixture. With $SACCADE_BIN set to a
saccade binary the script re-tokenizes the texts and asserts the ids.

Pairs: "mary_john" (above) and "anna_tom": "When Anna and Tom went to the park, Tom gave a
book to" / "... Anna gave a book to" (A = " Anna", B = " Tom"), 14 tokens each; the prompts
differ at position 9 (the second name), the last position is 13.

Cases per pair: head patches (all positions) of (0,0), (9,4), (17,3), (29,8) and the three
heads of layers >= 8 with the largest |m_patched - m_corrupted| in the denoise scan, both
directions; head-position patches of the three scan-picked heads at the differing position
and at the last position (denoise, and noise for the first of them); residual patches at
layers 15 and 29 at the differing and the last position, both directions; residual patches
of every position at layer 0 and at layer 15, and of the differing position at layer 0, both
directions. Each record: direction, kind, layer, head (-1 for residual), position (-1 =
all), m, logp_target, logp_contrast, top1, plus top2, logit_top1, logit_top2 and normalised.
path_patches (first pair only, a list apart): path patching (sc-path-patch.h) of senders
[23.3] into receivers 24.4, 29.1, 29.0 and of senders [20.0, 23.3] into 29.1, each receiver's
queries, keys and values, both directions: run A = the base ids with every sender's output
(all positions) from the source run and every other head's output frozen at the base run's
own (MLPs recomputed); m of the base run with the receiver's component (that query head only)
taken from run A (Pair.path_row); asserted: prefix reuse = full run.
component_patches (per pair, a list apart so the cases above stay as they were): kinds
"patterns", "queries", "keys", "values" (run()'s comp_patches: the head's P from the source
run with the base's V; its q after RoPE; the k after RoPE / v it reads, for that query head
only, its GQA siblings keeping the base's) of FIXED_HEADS and the picked heads, both
directions, position -1; asserted: a head's own part changes nothing, prefix reuse = full
run.

How to rerun
    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install gguf==0.19.0 numpy==2.4.6
    OPENBLAS_NUM_THREADS=1 /tmp/refvenv/bin/python tests/reference/patch_ref.py [MODEL.gguf]
    (model path as attention_ref.py: argv[1], else $SACCADE_MODEL, else the default model).
Writes patch-fixture.json next to itself (~125 KB). 1,784 patched float64 runs of 14 tokens
(1,752 before the path patches, 1,608 before the component patches): 8.3 min wall on the
2-core dev VM under heavy load from other sessions (load average ~10; 5.6 min at ~4), one
BLAS thread, peak RSS 1.4 GB. Adding the path patches left every earlier value identical.
"""

import os
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json  # noqa: E402
import subprocess  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attention_ref as ar  # noqa: E402  (the independent numpy model; not modified)

OUT_JSON = os.path.join(HERE, "patch-fixture.json")

# Ids from `build-dev/app/saccade tokenize --ids TEXT` (no BOS, plain text).
PAIRS = [
    {"name": "mary_john",
     "clean_text": "When Mary and John went to the store, John gave a drink to",
     "corrupted_text": "When Mary and John went to the store, Mary gave a drink to",
     "clean_ids": [2427, 5099, 284, 2322, 3514, 288, 260, 4249, 28, 2322, 4502, 253, 5968, 288],
     "corrupted_ids": [2427, 5099, 284, 2322, 3514, 288, 260, 4249, 28, 5099, 4502, 253, 5968,
                       288],
     "target_text": " Mary", "target": 5099, "contrast_text": " John", "contrast": 2322},
    {"name": "anna_tom",
     "clean_text": "When Anna and Tom went to the park, Tom gave a book to",
     "corrupted_text": "When Anna and Tom went to the park, Anna gave a book to",
     "clean_ids": [2427, 16435, 284, 8581, 3514, 288, 260, 5949, 28, 8581, 4502, 253, 1863, 288],
     "corrupted_ids": [2427, 16435, 284, 8581, 3514, 288, 260, 5949, 28, 16435, 4502, 253, 1863,
                       288],
     "target_text": " Anna", "target": 16435, "contrast_text": " Tom", "contrast": 8581},
]
FIXED_HEADS = [(0, 0), (9, 4), (17, 3), (29, 8)]
N_PICK = 3          # heads picked from the denoise scan (layers >= PICK_MIN_LAYER)
PICK_MIN_LAYER = 8
MID_LAYER = 15
# a head's parts (sc-patch-study.h): its pattern, its queries, its keys / values for that
# query head only
COMPONENTS = ("patterns", "queries", "keys", "values")


def check_ids_with_saccade(pair):
    exe = os.environ.get("SACCADE_BIN")
    if not exe:
        return False
    for tkey, ikey in (("clean_text", "clean_ids"), ("corrupted_text", "corrupted_ids"),
                       ("target_text", None), ("contrast_text", None)):
        out = subprocess.run([exe, "tokenize", "--ids", pair[tkey]], check=True,
                             capture_output=True, text=True).stdout.split()
        ids = [int(t) for t in out]
        want = pair[ikey] if ikey else [pair[tkey.replace("_text", "")]]
        assert ids == want, (pair["name"], tkey, ids, want)
    return True


def run(m, ids, start=0, x0=None, head_patches=(), resid_patches=(), keep=False,
        comp_patches=()):
    """Forward pass of attention_ref.Model (same operations, in float64) from layer `start`
    with residual stream x0 entering it (start 0, x0 None: the embeddings of ids).

    head_patches: [(l, h, positions, src)] with src (T, head_dim): o_h of layer l at those
    positions := src[those positions]. resid_patches: [(l, positions, src)] with src
    (T, n_embd): the residual entering layer l at those positions := src[...].
    Returns the last position's logits and, with keep, the residual stream entering each
    layer (L+1, T, E; index L = after the last layer) and the head outputs (L, H, T, d).

    comp_patches: [(l, h, kind, src)], query head h of layer l: kind "queries" (src (T, d):
    its q after RoPE), "keys" / "values" (src (T, d): the k after RoPE / v it reads, for
    this query head only: its GQA siblings keep their KV head's), "patterns" (src (T, T):
    its P). With keep, also comps = {kind: (L, H, T, d) or (L, H, T, T)}: each query head's
    q, k and v (of its KV head) and P."""
    W = m.W
    T = len(ids)
    pos = np.arange(T)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    x = W["token_embd.weight"][np.asarray(ids)].copy() if x0 is None else x0.copy()
    resid = outs = comps = None
    if keep:
        resid = np.zeros((m.n_layer + 1, T, m.n_embd))
        outs = np.zeros((m.n_layer, m.n_head, T, m.head_dim_v))
        comps = {"queries": np.zeros((m.n_layer, m.n_head, T, m.head_dim)),
                 "keys": np.zeros((m.n_layer, m.n_head, T, m.head_dim)),
                 "values": np.zeros((m.n_layer, m.n_head, T, m.head_dim_v)),
                 "patterns": np.zeros((m.n_layer, m.n_head, T, T))}
    for l in range(start, m.n_layer):
        for (pl, ps, src) in resid_patches:
            if pl == l:
                x[ps] = src[ps]
        if keep:
            resid[l] = x
        p = "blk.%d." % l
        h = m.rms(x, W[p + "attn_norm.weight"])
        q = (h @ W[p + "attn_q.weight"].T).reshape(T, m.n_head, m.head_dim)
        k = (h @ W[p + "attn_k.weight"].T).reshape(T, m.n_head_kv, m.head_dim)
        v = (h @ W[p + "attn_v.weight"].T).reshape(T, m.n_head_kv, m.head_dim_v)
        q = m.rope(q, pos)
        k = m.rope(k, pos)
        o = np.zeros((T, m.n_head, m.head_dim_v))
        for hq in range(m.n_head):
            hk = hq // m.group
            own = {"queries": q[:, hq, :], "keys": k[:, hk, :], "values": v[:, hk, :]}
            mine = {kind: src for (pl, ph, kind, src) in comp_patches if pl == l and ph == hq}
            qh, kh, vh = (mine.get(part, own[part]) for part in ("queries", "keys", "values"))
            s = (qh @ kh.T) * m.kq_scale
            s[mask] = -np.inf
            s = s - s.max(axis=1, keepdims=True)
            e = np.exp(s)
            P = e / e.sum(axis=1, keepdims=True)
            if keep:
                for part in own:
                    comps[part][l, hq] = own[part]
                comps["patterns"][l, hq] = P
            if "patterns" in mine:
                P = mine["patterns"]
            o[:, hq, :] = P @ vh
        if keep:
            outs[l] = o.transpose(1, 0, 2)
        for (pl, ph, ps, src) in head_patches:
            if pl == l:
                o[ps, ph, :] = src[ps]
        x = x + o.reshape(T, -1) @ W[p + "attn_output.weight"].T
        h = m.rms(x, W[p + "ffn_norm.weight"])
        g = h @ W[p + "ffn_gate.weight"].T
        u = h @ W[p + "ffn_up.weight"].T
        x = x + ((g / (1.0 + np.exp(-g))) * u) @ W[p + "ffn_down.weight"].T
    if keep:
        resid[m.n_layer] = x
    hf = m.rms(x[-1:], W["output_norm.weight"])
    if keep:
        run.comps = comps
    return (hf @ m.out_w.T)[0], resid, outs


def log_softmax(row):
    a = row - row.max()
    return a - np.log(np.exp(a).sum())


def summary(row, A, B):
    ls = log_softmax(row)
    o = np.argsort(-row, kind="stable")[:2]
    return {"m": float(row[A] - row[B]), "logp_target": float(ls[A]),
            "logp_contrast": float(ls[B]), "top1": int(o[0]), "top2": int(o[1]),
            "logit_top1": float(row[o[0]]), "logit_top2": float(row[o[1]])}


class Pair:
    """The two unpatched runs of a pair and the patched runs against them."""

    def __init__(self, m, spec):
        self.m = m
        self.spec = spec
        self.A, self.B = spec["target"], spec["contrast"]
        self.ids = {"clean": spec["clean_ids"], "corrupted": spec["corrupted_ids"]}
        self.full = {}
        self.comps = {}
        for k in ("clean", "corrupted"):
            row, resid, outs = run(m, self.ids[k], keep=True)
            self.full[k] = (row, resid, outs)
            self.comps[k] = run.comps
        self.m_clean = float(self.full["clean"][0][self.A] - self.full["clean"][0][self.B])
        self.m_corr = float(self.full["corrupted"][0][self.A] - self.full["corrupted"][0][self.B])
        self.n_runs = 0
        self.run_a = {}

    def roles(self, direction):
        return ("corrupted", "clean") if direction == "denoise" else ("clean", "corrupted")

    def patched_row(self, direction, kind, layer, head, position, from_zero=False):
        base, src = self.roles(direction)
        T = len(self.ids[base])
        ps = np.arange(T) if position == -1 else np.array([position])
        _, bres, _ = self.full[base]
        _, sres, souts = self.full[src]
        start = 0 if from_zero else layer
        x0 = None if from_zero else bres[layer]
        self.n_runs += 1
        if kind in COMPONENTS:
            return run(self.m, self.ids[base], start, x0,
                       comp_patches=[(layer, head, kind, self.comps[src][kind][layer, head])])[0]
        if kind == "residual":
            return run(self.m, self.ids[base], start, x0, resid_patches=[(layer, ps, sres[layer])])[0]
        return run(self.m, self.ids[base], start, x0,
                   head_patches=[(layer, head, ps, souts[layer, head])])[0]

    def path_row(self, direction, senders, component, rl, rh, from_zero=False):
        """Path patching (sc-path-patch.h): run A = the base ids with every sender's output
        (all positions) from the source run and every other head's output frozen at the
        base run's own (MLPs recomputed); then the base run with receiver (rl, rh)'s
        component (queries, keys or values, that query head only) from run A."""
        base, src = self.roles(direction)
        T = len(self.ids[base])
        allp = np.arange(T)
        _, bres, bouts = self.full[base]
        souts = self.full[src][2]
        key = (direction, tuple(senders))
        if key not in self.run_a:
            patches = [(l, h, allp, souts[l, h] if (l, h) in senders else bouts[l, h])
                       for l in range(self.m.n_layer) for h in range(self.m.n_head)]
            run(self.m, self.ids[base], head_patches=patches, keep=True)
            self.run_a[key] = run.comps
            self.n_runs += 1
        comps = self.run_a[key]
        self.n_runs += 1
        start = 0 if from_zero else rl
        x0 = None if from_zero else bres[rl]
        return run(self.m, self.ids[base], start, x0,
                   comp_patches=[(rl, rh, component, comps[component][rl, rh])])[0]

    def path_case(self, direction, senders, component, rl, rh):
        row = self.path_row(direction, senders, component, rl, rh)
        rec = {"direction": direction,
               "senders": ",".join("%d.%d" % s for s in sorted(senders)),
               "component": component, "layer": rl, "head": rh}
        rec.update(summary(row, self.A, self.B))
        rec["normalised"] = (rec["m"] - self.m_corr) / (self.m_clean - self.m_corr)
        return rec

    def case(self, direction, kind, layer, head, position):
        row = self.patched_row(direction, kind, layer, head, position)
        rec = {"direction": direction, "kind": kind, "layer": layer, "head": head,
               "position": position}
        rec.update(summary(row, self.A, self.B))
        rec["normalised"] = (rec["m"] - self.m_corr) / (self.m_clean - self.m_corr)
        return rec, row


def self_checks(p, m):
    """The asserted identities (see the docstring). Returns a description for the JSON."""
    n = len(p.ids["clean"])
    diff = [i for i in range(n) if p.ids["clean"][i] != p.ids["corrupted"][i]]
    assert len(diff) == 1, diff
    dpos = diff[0]
    out = {}
    # plain forward == attention_ref's
    worst = 0.0
    for k in ("clean", "corrupted"):
        _, _, ref = m.forward(p.ids[k], last_logits_only=True)
        worst = max(worst, float(np.abs(ref[-1] - p.full[k][0]).max()))
    assert worst < 1e-9, worst
    out["forward_vs_attention_ref_max_abs"] = worst
    for direction in ("denoise", "noise"):
        base, src = p.roles(direction)
        srow = p.full[src][0]
        for layer, pos in ((0, -1), (0, dpos), (MID_LAYER, -1)):
            row = p.patched_row(direction, "residual", layer, -1, pos)
            assert np.array_equal(row, srow), (direction, layer, pos)
        # a head patched with its own run's outputs changes nothing
        brow, bres, bouts = p.full[base]
        for (l, h) in ((0, 0), (MID_LAYER, 4), (29, 8)):
            row = run(m, p.ids[base], l, bres[l],
                      head_patches=[(l, h, np.arange(n), bouts[l, h])])[0]
            assert np.array_equal(row, brow), (direction, l, h)
        # a head's own queries, keys, values or pattern change nothing
        for kind in COMPONENTS:
            for (l, h) in ((0, 0), (MID_LAYER, 4), (29, 8)):
                row = run(m, p.ids[base], l, bres[l],
                          comp_patches=[(l, h, kind, p.comps[base][kind][l, h])])[0]
                assert np.array_equal(row, brow), (direction, kind, l, h)
        # prefix reuse == the full run from layer 0, bit for bit
        for kind, l, h, pos in (("head", 9, 4, -1), ("head-position", 17, 3, n - 1),
                                ("residual", MID_LAYER, -1, dpos), ("patterns", 9, 4, -1),
                                ("queries", 17, 3, -1), ("keys", 9, 4, -1),
                                ("values", 17, 3, -1)):
            a = p.patched_row(direction, kind, l, h, pos)
            b = p.patched_row(direction, kind, l, h, pos, from_zero=True)
            assert np.array_equal(a, b), (direction, kind, l, h, pos)
    out["asserted_exact"] = [
        "residual patch of every position at layer 0 = source run's logits (both directions)",
        "residual patch at layer 0 of the differing position %d = source run's logits" % dpos,
        "residual patch of every position at layer %d = source run's logits" % MID_LAYER,
        "head patch with the base run's own outputs (0.0, %d.4, 29.8) = base run" % MID_LAYER,
        "prefix reuse (start at the patched layer) = full run from layer 0 (head 9.4, "
        "head-position 17.3 @ last, residual %d @ %d)" % (MID_LAYER, dpos),
        "patterns, queries, keys, values of (0.0, %d.4, 29.8) patched with the base run's "
        "own = base run; prefix reuse = full run (patterns 9.4, queries 17.3, keys 9.4, "
        "values 17.3)" % MID_LAYER,
    ]
    return out, dpos


def main():
    path = ar.model_path()
    t0 = time.time()
    m = ar.Model(path)
    L, H = m.n_layer, m.n_head
    print("loaded %d tensors in %.1fs" % (len(m.W), m.load_s), flush=True)
    recs = []
    for spec in PAIRS:
        t1 = time.time()
        checked = check_ids_with_saccade(spec)
        A, B = spec["target"], spec["contrast"]
        n = len(spec["clean_ids"])
        assert len(spec["corrupted_ids"]) == n
        assert A != B and A in spec["clean_ids"] and B in spec["clean_ids"]
        p = Pair(m, spec)
        checks, dpos = self_checks(p, m)
        last = n - 1
        rec = {"name": spec["name"], "clean_text": spec["clean_text"],
               "corrupted_text": spec["corrupted_text"], "clean_ids": spec["clean_ids"],
               "corrupted_ids": spec["corrupted_ids"], "n_tokens": n,
               "differing_position": dpos, "target": A, "target_text": spec["target_text"],
               "contrast": B, "contrast_text": spec["contrast_text"],
               "ids_rechecked_with_saccade_binary": checked}
        for k in ("clean", "corrupted"):
            s = summary(p.full[k][0], A, B)
            s["top2_logits"] = [s["logit_top1"], s["logit_top2"]]
            s["top2_ids"] = [s["top1"], s["top2"]]
            rec[k] = s

        scans = {}
        for direction in ("denoise", "noise"):
            scans[direction] = [p.case(direction, "head", l, h, -1)[0]["m"]
                                for l in range(L) for h in range(H)]
        rec["head_scan_denoise"] = scans["denoise"]
        rec["head_scan_noise"] = scans["noise"]
        eff = [abs(v - p.m_corr) for v in scans["denoise"]]
        order = sorted(range(L * H), key=lambda i: (-eff[i], i))
        rec["head_scan_denoise_top5"] = [
            {"layer": i // H, "head": i % H, "m": scans["denoise"][i],
             "normalised": (scans["denoise"][i] - p.m_corr) / (p.m_clean - p.m_corr)}
            for i in order[:5]]
        picked = [(i // H, i % H) for i in order
                  if i // H >= PICK_MIN_LAYER and (i // H, i % H) not in FIXED_HEADS][:N_PICK]
        rec["picked_heads"] = [list(x) for x in picked]

        if spec is PAIRS[0]:
            rec["residual_scan_denoise"] = [
                p.case("denoise", "residual", l, -1, q)[0]["m"]
                for l in range(L) for q in range(n)]

        cases = []
        for (l, h) in FIXED_HEADS + picked:
            for direction in ("denoise", "noise"):
                cases.append(p.case(direction, "head", l, h, -1)[0])
        for i, (l, h) in enumerate(picked):
            for q in (dpos, last):
                cases.append(p.case("denoise", "head-position", l, h, q)[0])
                if i == 0:
                    cases.append(p.case("noise", "head-position", l, h, q)[0])
        for l in (MID_LAYER, L - 1):
            for q in (dpos, last):
                for direction in ("denoise", "noise"):
                    cases.append(p.case(direction, "residual", l, -1, q)[0])
        for l, q in ((0, -1), (0, dpos), (MID_LAYER, -1)):
            for direction in ("denoise", "noise"):
                c = p.case(direction, "residual", l, -1, q)[0]
                src = rec["clean" if direction == "denoise" else "corrupted"]
                assert c["m"] == src["m"] and c["top1"] == src["top1"]
                cases.append(c)
        # the scan and the named head cases are the same computation
        for c in cases:
            if c["kind"] == "head":
                sc = rec["head_scan_" + c["direction"]][c["layer"] * H + c["head"]]
                assert sc == c["m"]
        rec["patches"] = cases
        comp = []
        for kind in COMPONENTS:
            for (l, h) in FIXED_HEADS + picked:
                for direction in ("denoise", "noise"):
                    comp.append(p.case(direction, kind, l, h, -1)[0])
        rec["component_patches"] = comp
        if spec is PAIRS[0]:
            # path patching (first pair only; a list apart so the cases above stay as they
            # were): the top denoising head 23.3 alone, and with 20.0, into the later heads
            # that move the metric most
            paths = []
            for senders, receivers in (([(23, 3)], [(24, 4), (29, 1), (29, 0)]),
                                       ([(20, 0), (23, 3)], [(29, 1)])):
                for component in ("queries", "keys", "values"):
                    for direction in ("denoise", "noise"):
                        for (rl, rh) in receivers:
                            paths.append(p.path_case(direction, senders, component, rl, rh))
            # prefix reuse == the full run from layer 0, bit for bit
            for direction in ("denoise", "noise"):
                a = p.path_row(direction, [(23, 3)], "keys", 24, 4)
                b = p.path_row(direction, [(23, 3)], "keys", 24, 4, from_zero=True)
                assert np.array_equal(a, b), direction
            rec["path_patches"] = paths
            for c in paths:
                print("  path %-7s %-9s %-7s -> %2d.%-2d m %+.6f norm %+.4f" % (
                    c["direction"], c["senders"], c["component"], c["layer"], c["head"],
                    c["m"], c["normalised"]), flush=True)
        rec["self_checks"] = checks
        rec["patched_runs"] = p.n_runs
        rec["seconds"] = round(time.time() - t1, 1)
        recs.append(rec)
        print("%s: n=%d differ@%d m_clean %.6f (top1 %d) m_corrupted %.6f (top1 %d); "
              "%d patched runs, %.1fs" % (spec["name"], n, dpos, p.m_clean, rec["clean"]["top1"],
                                         p.m_corr, rec["corrupted"]["top1"], p.n_runs,
                                         rec["seconds"]), flush=True)
        print("  top5 denoise heads:", ", ".join(
            "%d.%d m=%.4f norm=%.3f" % (t["layer"], t["head"], t["m"], t["normalised"])
            for t in rec["head_scan_denoise_top5"]))
        for c in cases + comp:
            print("  %-7s %-13s %2d.%-2d pos %2d  m %+.6f  norm %+.4f  lpA %.4f lpB %.4f "
                  "top1 %d" % (c["direction"], c["kind"], c["layer"], c["head"], c["position"],
                               c["m"], c["normalised"], c["logp_target"], c["logp_contrast"],
                               c["top1"]))

    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:
        gguf_ver = None
    doc = {
        "format": "saccade-patch-fixture/1",
        "generator": "tests/reference/patch_ref.py",
        "model_file": os.path.basename(path),
        "model_sha256": ar.sha256(path),
        "gguf_version": gguf_ver,
        "numpy_version": np.__version__,
        "reference": "float64 numpy forward pass of attention_ref.py (gguf-py %s, numpy %s) "
                     "with head-output and residual-stream patches" % (gguf_ver, np.__version__),
        "tokenizer": "saccade tokenize --ids TEXT (no BOS, plain text; identical to llama.cpp "
                     "tokenize(add_bos=False, special=False))",
        "definitions": (
            "m = logit(target) - logit(contrast) at the last position (= ln p(A) - ln p(B)); "
            "logp_* = log-softmax over the vocabulary there; top1/top2 = argmax order, ties to "
            "the lowest id. Head output o_h[p] = sum_j P_h[p,j] V_{h//group}[j] (head_dim "
            "values, before W_O; group = n_heads/n_kv_heads = 3). kind 'head': o_h of layer l "
            "at every position replaced by the source run's; 'head-position': at one position; "
            "'residual': the residual stream entering layer l (layer 0: the token embeddings; "
            "l>0: the output of layer l-1 after its attention and MLP adds) at position p "
            "(-1 = all) replaced by the source run's before layer l runs; everything after the "
            "patch is recomputed. Source values come from the unpatched source run. "
            "direction 'denoise': base = corrupted run, source = clean run; 'noise': base = "
            "clean, source = corrupted. head = -1 for residual, position = -1 for all "
            "positions. normalised = (m - m_corrupted)/(m_clean - m_corrupted). "
            "head_scan_denoise/head_scan_noise: m of the all-position head patch of every "
            "head, layer-major (l*n_heads + h). residual_scan_denoise: m of the residual patch "
            "at (l, p), layer-major (l*n_tokens + p). component_patches: kind 'patterns' "
            "(head h's P, every query row, from the source run; o = P_src V_base), "
            "'queries' (its q after RoPE at every position from the source run; scores, "
            "softmax and o recomputed with the base's k and v), 'keys' / 'values' (the k "
            "after RoPE / v that query head h reads, at every position, from the source "
            "run, for h only: its GQA siblings keep the base's); position -1. "
            "path_patches (first pair): path patching (sc-path-patch.h) of the senders "
            "(canonical 'L.H,L.H') into receiver (layer, head)'s component: run A = the base "
            "ids with every sender's output (all positions) from the source run and every "
            "other head's output frozen at the base run's (MLPs recomputed); m of the base "
            "run with the receiver's queries / keys / values (that query head only) from "
            "run A. "
            "Floats are float64, full precision."),
        "hparams": m.hparams(),
        "runtime_s": round(time.time() - t0, 1),
        "pairs": recs,
    }
    with open(OUT_JSON + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    os.replace(OUT_JSON + ".tmp", OUT_JSON)
    print("wrote %s (%d bytes) in %.1fs" % (OUT_JSON, os.path.getsize(OUT_JSON),
                                            time.time() - t0))


if __name__ == "__main__":
    main()
