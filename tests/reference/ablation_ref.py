#!/usr/bin/env python3
"""Ablation oracle: the interventions of engine/forward/sc-intervention.h and the effects of
engine/analysis/sc-effect.h, recomputed in float64 on the independent numpy model of
attention_ref.py (which reads the GGUF only through gguf-py; nothing of Saccade is imported).

What each intervention does, restated here from the headers (sc-intervention.h,
sc-forward.c, sc-backend-impl.h) and implemented below without looking at the C arithmetic:
  head_scale s[l,h]   head h of layer l contributes s * (P V) to the concatenation before
                      W_O (0 = zero-ablation).
  head_mean mu[l,h]   the head outputs s * mu at every query row instead of s * P V (its
                      probabilities are still computed and, if edited, edited).
  token_mask M        key j in M is removed from every attention row of every layer and the
                      row is renormalised: row p attends softmax over {j <= p, j not in M};
                      a row whose keys are all masked attends to its own position alone.
  attention edits     after the softmax, on one (layer, head), in every row over its allowed
                      keys (in key order), then o = s * P' V for that head:
    PERMUTE(seed)     Fisher-Yates from the end, j = next() % (t + 1), next() = SplitMix64
                      (Steele, Lea & Flood 2014) on a state folded from (seed, layer, head,
                      pos) by one SplitMix64 step each (sc-forward.c, permute_stream);
    UNIFORM           every allowed key gets 1/m;
    ZERO_TOP          the largest weight (ties: lowest key) becomes 0, the others are divided
                      by their sum; a row with one allowed key is unchanged.
  token drop          (sc-ablation-study.h) the ids without token j, run again.
Effects (sc-effect.h), p = softmax(clean last row), q = softmax(ablated last row):
  delta_logp = ln q_t - ln p_t, tv = 1/2 sum |p - q|, jsd = 1/2 KL(p||m) + 1/2 KL(q||m),
  m = (p + q)/2; loss_q = -ln softmax(logits[q-1])[ids[q]] for q = 1..n-1; delta_loss =
  mean(ablated losses) - mean(clean losses); for a drop of j, the mean over the original
  q in 1..n-1, q != j, with new position q - [q > j] >= 1, of (drop loss - clean loss), the
  effect read at the dropped run's last position n-2. The target t is the clean top-1.

What it computes, for "The cat chased the ball because it was tired." (english_cat, 10
tokens) and "猫追球，它累了。" (chinese_seed, 15 tokens), ids from attention-fixture.json
(llama.cpp's tokenizer; the C test checks Saccade's tokenizer gives the same):
  - the clean run (top-2 at the last position, the losses);
  - the zero-ablation of every one of the 270 heads (the whole head sweep);
  - english_cat only: the mean-ablation of every head, each with its own mean vector = the
    mean over the sentence's 10 positions of that head's clean output P V, rounded to
    float32 (stored in ablation-fixture.f32, read by both sides);
  - token leave-one-out, mask and drop, of every position 0..n-2;
  - named cases run one by one through sc_forward by the C test: zero-ablation of (0,0),
    (9,4), (17,3), (29,8); mean-ablation of (9,4) with the fixed vector written in the JSON
    (the english_cat mean of that head, applied to both sentences); a joint mask of
    positions {0, 1}; PERMUTE (seed 20241201), UNIFORM and ZERO_TOP on one head each, with
    the edited head's last attention row and, for PERMUTE, the permutation of every row.
For each ablation: delta_logp, logp_ablated, tv, jsd, delta_loss, the ablated top-1 and
top-2 ids and logits at the last position (so a test can check the logits that decide the
top-1 and knows where the top-1 is a near-tie), in float64.

Every named case must have a top-1/top-2 logit margin of at least MARGIN_MIN (asserted
here); sweep entries below it are listed as near-ties (the C test then accepts either of
the two tokens).

How to rerun
    pip install gguf==0.19.0 numpy==2.4.6
    python3 tests/reference/ablation_ref.py [MODEL.gguf]
    (model path as attention_ref.py: argv[1], else $SACCADE_MODEL, else the default model).
Writes ablation-fixture.json and ablation-fixture.f32 next to itself (~3.5 min on 2 idle cores,
~1.4 GB of memory; about 900 float64 forward passes of 9-15 tokens).
"""

import hashlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attention_ref as ar  # noqa: E402  (the independent numpy model; not modified)

OUT_JSON = os.path.join(HERE, "ablation-fixture.json")
OUT_F32 = os.path.join(HERE, "ablation-fixture.f32")
ATTN_JSON = os.path.join(HERE, "attention-fixture.json")

SENTENCES = ["english_cat", "chinese_seed"]  # names in attention-fixture.json
ZERO_HEADS = [(0, 0), (9, 4), (17, 3), (29, 8)]
MEAN_HEAD = (9, 4)
JOINT_MASK = [0, 1]
PERMUTE_SEED = 20241201
EDITS = [("permute", (3, 2)), ("uniform", (5, 6)), ("zero_top", (20, 1))]
# Two float32 logit rows whose top-2 are farther apart than this keep their order under the
# engine's float32 rounding with a wide margin: the C test bounds each of those logits'
# error by LOGIT_TOL = 1e-3 (its comment says why), so a margin above 2 * LOGIT_TOL cannot
# swap. Named cases must clear it; sweep entries below it are flagged near-ties.
MARGIN_MIN = 5e-3
# ZERO_TOP picks the largest weight of each row: its top must clear the runner-up by far
# more than the engine's attention error (1e-5 measured, 1e-4 allowed by test-model).
ZERO_TOP_GAP_MIN = 1e-2

U64 = (1 << 64) - 1


def splitmix64(state):
    """One SplitMix64 step: returns (new state, output). Integer arithmetic mod 2^64."""
    state = (state + 0x9E3779B97F4A7C15) & U64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return state, z ^ (z >> 31)


def permute_stream(seed, layer, head, pos):
    st = seed & U64
    st, z = splitmix64(st)
    st = z ^ (layer & 0xFFFFFFFF)
    st, z = splitmix64(st)
    st = z ^ (head & 0xFFFFFFFF)
    st, z = splitmix64(st)
    return z ^ (pos & 0xFFFFFFFF)


def permutation(seed, layer, head, pos, m):
    """perm with edited[t] = original[perm[t]] for a row of m allowed keys."""
    perm = list(range(m))
    st = permute_stream(seed, layer, head, pos)
    for t in range(m - 1, 0, -1):
        st, r = splitmix64(st)
        j = r % (t + 1)
        perm[t], perm[j] = perm[j], perm[t]
    return perm


def forward_iv(m, ids, scale=None, mean=None, mask=(), edits=None, want=None):
    """The float64 forward pass of attention_ref.Model.forward with interventions.

    scale: {(l, h): s}; mean: {(l, h): vector (head_dim)}; mask: positions; edits:
    {(l, h): (kind, seed)}; want: (l, h) whose (edited) probabilities are returned.
    Returns (logits (T, V), probs of `want` or None, head outputs (L, H, T, d) clean P V)."""
    scale = scale or {}
    mean = mean or {}
    edits = edits or {}
    W = m.W
    T = len(ids)
    pos = np.arange(T)
    masked = np.zeros(T, dtype=bool)
    masked[list(mask)] = True
    allowed = np.tril(np.ones((T, T), dtype=bool)) & ~masked[None, :]
    empty = ~allowed.any(axis=1)
    allowed[empty, pos[empty]] = True
    x = W["token_embd.weight"][np.asarray(ids)].copy()
    want_p = None
    outs = np.zeros((m.n_layer, m.n_head, T, m.head_dim_v))
    for l in range(m.n_layer):
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
            s = (q[:, hq, :] @ k[:, hk, :].T) * m.kq_scale
            s[~allowed] = -np.inf
            s = s - s.max(axis=1, keepdims=True)
            e = np.exp(s)
            P = e / e.sum(axis=1, keepdims=True)
            outs[l, hq] = P @ v[:, hk, :]
            ed = edits.get((l, hq))
            if ed is not None:
                P = P.copy()
                for i in range(T):
                    idx = np.nonzero(allowed[i])[0]
                    w = P[i, idx]
                    P[i, idx] = edit_row(ed, l, hq, i, w)
            if (l, hq) == want:
                want_p = P.copy()
            sc = scale.get((l, hq), 1.0)
            if (l, hq) in mean:
                o[:, hq, :] = sc * np.asarray(mean[(l, hq)], dtype=np.float64)[None, :]
            else:
                o[:, hq, :] = sc * (P @ v[:, hk, :])
        x = x + o.reshape(T, -1) @ W[p + "attn_output.weight"].T
        h = m.rms(x, W[p + "ffn_norm.weight"])
        g = h @ W[p + "ffn_gate.weight"].T
        u = h @ W[p + "ffn_up.weight"].T
        x = x + ((g / (1.0 + np.exp(-g))) * u) @ W[p + "ffn_down.weight"].T
    hf = m.rms(x, W["output_norm.weight"])
    return hf @ m.out_w.T, want_p, outs


def edit_row(ed, layer, head, pos, w):
    kind, seed = ed
    mm = len(w)
    if kind == "permute":
        perm = permutation(seed, layer, head, pos, mm)
        return w[perm]
    if kind == "uniform":
        return np.full(mm, 1.0 / mm)
    if kind == "zero_top":
        if mm == 1:
            return w.copy()
        top = int(np.argmax(w))  # first maximum: ties go to the lowest key
        out = w.copy()
        out[top] = 0.0
        return out / out.sum()
    raise ValueError(kind)


def log_softmax(row):
    a = row - row.max()
    return a - np.log(np.exp(a).sum())


def top2(row):
    o = np.argsort(-row, kind="stable")[:2]
    return int(o[0]), int(o[1]), float(row[o[0]]), float(row[o[1]])


def effect(clean_last, abl_last, target):
    lp, lq = log_softmax(clean_last), log_softmax(abl_last)
    p, q = np.exp(lp), np.exp(lq)
    mid = 0.5 * (p + q)
    lm = np.log(mid)
    jsd = 0.5 * float((p * (lp - lm)).sum()) + 0.5 * float((q * (lq - lm)).sum())
    t1, t2, l1, l2 = top2(abl_last)
    return {"delta_logp": float(lq[target] - lp[target]), "logp_ablated": float(lq[target]),
            "tv": 0.5 * float(np.abs(p - q).sum()), "jsd": jsd,
            "top1": t1, "top2": t2, "logit_top1": l1, "logit_top2": l2, "margin": l1 - l2}


def losses(logits, ids):
    return np.array([-log_softmax(logits[q - 1])[ids[q]] for q in range(1, len(ids))])


def same_ids_effect(clean, abl, ids, target, clean_losses):
    e = effect(clean[-1], abl[-1], target)
    e["delta_loss"] = float(losses(abl, ids).mean() - clean_losses.mean())
    return e


def drop_effect(m, clean, ids, j, target):
    dids = ids[:j] + ids[j + 1:]
    d, _, _ = forward_iv(m, dids)
    e = effect(clean[-1], d[-1], target)
    acc = []
    for q in range(1, len(ids)):
        nq = q - (q > j)
        if q == j or nq < 1:
            continue
        lc = -log_softmax(clean[q - 1])[ids[q]]
        ld = -log_softmax(d[nq - 1])[dids[nq]]
        acc.append(ld - lc)
    e["delta_loss"] = float(np.mean(acc)) if acc else None
    return e


METRICS = ["delta_logp", "logp_ablated", "tv", "jsd", "delta_loss", "top1", "top2",
           "logit_top1", "logit_top2"]


def columns(effects):
    """A list of effect dicts (None for 'not defined') as one array per metric."""
    return {k: [None if e is None else e[k] for e in effects] for k in METRICS}


def near_ties(effects):
    return [i for i, e in enumerate(effects) if e is not None and e["margin"] < MARGIN_MIN]


def rounded(x):
    """Every float to 9 significant digits (float32 values round-trip exactly; float64 ones
    keep a relative 1e-9, far below any tolerance), so the JSON stays small."""
    if isinstance(x, float):
        return float("%.9g" % x)
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


def f32(x):
    """float64 values rounded to float32, as Python floats (exact in JSON)."""
    return [float(v) for v in np.asarray(x, dtype=np.float32)]


def main():
    path = ar.model_path()
    t0 = time.time()
    m = ar.Model(path)
    L, H, d = m.n_layer, m.n_head, m.head_dim_v
    print("loaded %d tensors in %.1fs" % (len(m.W), m.load_s))
    attn = json.load(open(ATTN_JSON, encoding="utf-8"))
    if attn["model_sha256"] != sha256(path):
        raise SystemExit("attention-fixture.json was made from another model file")
    prompts = {p["name"]: p for p in attn["prompts"]}

    # The fixed mean vectors: english_cat's clean per-head outputs averaged over positions.
    eng_ids = prompts["english_cat"]["ids"]
    _, _, outs = forward_iv(m, eng_ids)
    means32 = outs.mean(axis=2).astype("<f4")  # (L, H, d)
    means = means32.astype(np.float64)

    blob = means32.tobytes()
    recs = []
    for name in SENTENCES:
        pr = prompts[name]
        ids = [int(t) for t in pr["ids"]]
        n = len(ids)
        t1 = time.time()
        clean, _, _ = forward_iv(m, ids)
        ref_probs, _, ref_logits = m.forward(ids)
        # forward_iv without interventions is attention_ref's forward
        assert np.abs(clean - ref_logits).max() < 1e-9
        c1, c2, cl1, cl2 = top2(clean[-1])
        target = c1
        assert cl1 - cl2 >= MARGIN_MIN, "%s: clean top-2 margin %.3g" % (name, cl1 - cl2)
        cl = losses(clean, ids)
        rec = {"name": name, "text": pr["text"], "ids": ids, "n": n, "target": target,
               "clean": {"top1": c1, "top2": c2, "logit_top1": cl1, "logit_top2": cl2,
                         "margin": cl1 - cl2,
                         "logp_target": float(log_softmax(clean[-1])[target]),
                         "loss_mean": float(cl.mean()), "losses": [float(x) for x in cl]}}

        # 1. the whole zero-ablation head sweep
        sweep = []
        for l in range(L):
            for h in range(H):
                a, _, _ = forward_iv(m, ids, scale={(l, h): 0.0})
                sweep.append(same_ids_effect(clean, a, ids, target, cl))
        rec["head_sweep_zero"] = columns(sweep)
        rec["head_sweep_zero"]["near_ties"] = near_ties(sweep)

        # 2. english_cat: the mean-ablation sweep with each head's own mean
        if name == "english_cat":
            msweep = []
            for l in range(L):
                for h in range(H):
                    a, _, _ = forward_iv(m, ids, mean={(l, h): means[l, h]})
                    msweep.append(same_ids_effect(clean, a, ids, target, cl))
            rec["head_sweep_mean"] = columns(msweep)
            rec["head_sweep_mean"]["near_ties"] = near_ties(msweep)
            rec["head_sweep_mean"]["means"] = {
                "offset": 0, "count": L * H * d, "shape": [L, H, d],
                "layout": "[layer][head][dim] row-major, float32"}

        # 3. token leave-one-out, every position but the query
        mask_e, drop_e = [], []
        for j in range(n - 1):
            a, _, _ = forward_iv(m, ids, mask=[j])
            mask_e.append(same_ids_effect(clean, a, ids, target, cl))
            drop_e.append(drop_effect(m, clean, ids, j, target))
        mask_e.append(None)
        drop_e.append(None)
        rec["token_loo"] = {"mask": columns(mask_e), "drop": columns(drop_e),
                            "mask_near_ties": near_ties(mask_e),
                            "drop_near_ties": near_ties(drop_e)}

        # 4. the named cases
        cases = []

        def add(case, e):
            assert e["margin"] >= MARGIN_MIN, "%s %s: top-2 margin %.3g" % (
                name, case["name"], e["margin"])
            case["effect"] = e
            cases.append(case)

        for (l, h) in ZERO_HEADS:
            add({"name": "zero %d.%d" % (l, h), "kind": "zero", "layer": l, "head": h},
                sweep[l * H + h])
        mv = means[MEAN_HEAD]
        a, _, _ = forward_iv(m, ids, mean={MEAN_HEAD: mv})
        add({"name": "mean %d.%d" % MEAN_HEAD, "kind": "mean", "layer": MEAN_HEAD[0],
             "head": MEAN_HEAD[1], "mean": f32(mv)},
            same_ids_effect(clean, a, ids, target, cl))
        for j in sorted({0, n // 2, n - 2}):
            add({"name": "mask %d" % j, "kind": "mask", "positions": [j]}, mask_e[j])
            add({"name": "drop %d" % j, "kind": "drop", "positions": [j]}, drop_e[j])
        a, _, _ = forward_iv(m, ids, mask=JOINT_MASK)
        add({"name": "mask %s" % ",".join(map(str, JOINT_MASK)), "kind": "mask",
             "positions": JOINT_MASK}, same_ids_effect(clean, a, ids, target, cl))
        for kind, (l, h) in EDITS:
            seed = PERMUTE_SEED if kind == "permute" else 0
            a, pe, _ = forward_iv(m, ids, edits={(l, h): (kind, seed)}, want=(l, h))
            _, pc, _ = forward_iv(m, ids, want=(l, h))
            assert np.allclose(pe.sum(axis=1), 1.0, atol=1e-12)
            case = {"name": "%s %d.%d" % (kind, l, h), "kind": kind, "layer": l, "head": h,
                    "seed": seed, "edited_last_row": f32(pe[-1])}
            if kind == "permute":
                case["permutations"] = [permutation(seed, l, h, i, i + 1) for i in range(n)]
                # the stream really moves weights: most rows are not the identity
                assert sum(p != list(range(len(p))) for p in case["permutations"]) >= n - 2
            if kind == "zero_top":
                gaps = [float(np.sort(pc[i, :i + 1])[-1] - np.sort(pc[i, :i + 1])[-2])
                        for i in range(1, n)]
                assert min(gaps) >= ZERO_TOP_GAP_MIN, "zero_top gaps %s" % gaps
                case["min_top_gap"] = min(gaps)
            add(case, same_ids_effect(clean, a, ids, target, cl))
        rec["cases"] = cases
        recs.append(rec)
        print("%s: n=%d target %d (margin %.4f), %d zero near-ties, %d cases, %.1fs" % (
            name, n, target, cl1 - cl2, len(rec["head_sweep_zero"]["near_ties"]), len(cases),
            time.time() - t1))
        for c in cases:
            e = c["effect"]
            print("  %-14s dlogp %+.5f tv %.5f jsd %.6f dloss %+.5f top1 %d margin %.3f" % (
                c["name"], e["delta_logp"], e["tv"], e["jsd"], e["delta_loss"], e["top1"],
                e["margin"]))

    with open(OUT_F32 + ".tmp", "wb") as f:
        f.write(blob)
    os.replace(OUT_F32 + ".tmp", OUT_F32)
    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:
        gguf_ver = None
    doc = {
        "format": "saccade-ablation-fixture/1",
        "generator": "tests/reference/ablation_ref.py",
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path),
        "reference": "float64 numpy forward pass of attention_ref.py (gguf-py %s, numpy %s) "
                     "with the interventions of sc-intervention.h" % (gguf_ver, np.__version__),
        "tokenizer": "ids of attention-fixture.json (llama.cpp, add_bos=False, special=False)",
        "definitions": "sc-effect.h and sc-ablation-study.h; target = the clean top-1; "
                       "heads are layer-major (index l * n_heads + h); token entries are "
                       "indexed by the erased position j, null at j = n - 1",
        "margin_min": MARGIN_MIN,
        "permute_seed": PERMUTE_SEED,
        "data_file": os.path.basename(OUT_F32),
        "dtype": "float32", "endianness": "little",
        "offset_units": "bytes from the start of data_file; count in float32 elements",
        "total_bytes": len(blob),
        "sentences": recs,
    }
    with open(OUT_JSON, "w", encoding="utf-8") as f:
        json.dump(rounded(doc), f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote %s (%d bytes) and %s (%d bytes) in %.1fs" % (
        OUT_JSON, os.path.getsize(OUT_JSON), OUT_F32, len(blob), time.time() - t0))


if __name__ == "__main__":
    main()
