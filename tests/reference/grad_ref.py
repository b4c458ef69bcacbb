#!/usr/bin/env python3
"""Gradient oracle: activation gradients of SmolLM2 by PyTorch autograd, for Saccade's
backward pass (gradients w.r.t. the input embeddings and every head's attention
probabilities, and integrated gradients).

Independence. The model is built by Hugging Face `transformers` from the same GGUF file
(`AutoModelForCausalLM.from_pretrained(dir, gguf_file=name, attn_implementation="eager")`:
transformers dequantizes with gguf-py and undoes llama.cpp's Q/K row permutation itself), and
every derivative is taken by torch.autograd. Nothing from the Saccade repository is imported
and no gradient is written by hand. The numpy model of attention_ref.py is imported only to
cross-check the forward pass (`oracle_vs_numpy_reference`).

Float64. The model is converted with `model.double()`, but three places of transformers'
Llama code (modeling_llama.py, read for the version recorded in the fixture) compute in
float32 whatever the model dtype:
    LlamaRMSNorm.forward          hidden_states.to(torch.float32) before the mean square;
    LlamaRotaryEmbedding          inv_freq built in float32, cos/sin of float32 angles;
    eager_attention_forward       softmax(..., dtype=torch.float32).to(query.dtype).
The script replaces exactly these three by the same expressions in the input's dtype
(`patch_float64`; the softmax replacement is eager_attention_forward line for line with the
dtype argument dropped). Without the patches the model agrees with the numpy float64
reference only to float32 rounding (the unpatched numbers are kept in the JSON, under
`oracle_vs_numpy_reference.unpatched_float32_internals`); with them, to ~1e-12.

Which tensor is dL/dP. eager_attention_forward returns `attn_weights`, the very tensor it
multiplies with V (`attn_output = matmul(attn_weights, value_states)`; dropout in eval mode
returns its input), and transformers' output_attentions recorder hands that tensor back in
`outputs.attentions[l]`. `retain_grad()` on it therefore yields dL/dP[l] with P treated as a
free variable (no renormalisation). This is also checked numerically (`checks.grad_probs_fd`):
an additive perturbation of one P entry inserted between the softmax and the V product, by
central differences, against the retained gradient.

What it computes, for the three prompts of attention-fixture.json (english_cat, chinese_seed,
mixed_30; their stored llama.cpp ids, no BOS, no tokenizer), with x = embed_tokens(ids) (the
GGUF's token_embd rows; Llama has no embedding scale, checked):
  probs       the attention probabilities P[l][h][i][j], j <= i
  objective "logp": f(x) = log_softmax(logits[n-1])[t], t = the clean top-1 (stable argmax)
  objective "loss": f(x) = mean_{i=0..n-2} -log_softmax(logits[i])[ids[i+1]]
  per objective: f, df/dx (n x 576), df/dP for every layer and head (lower triangle)
  "logp" only: integrated gradients, baseline x' = 0, m = 50 and 300 steps, midpoint rule
      alpha_k = (k + 0.5) / m,  attr[i] = sum_d (x - x')[i][d] * mean_k df/dx[i][d] (x' + alpha_k (x - x'))
      sum = sum_i attr[i], gap = |sum - (f(x) - f(x'))| (the completeness gap)

Output (next to this script)
    grad-fixture.f32   raw little-endian float32 (values computed in float64, rounded once),
                       no header; per prompt, in JSON order: probs, then per objective
                       grad_embd, grad_probs, then (logp) the IG attributions of 50 and 300 steps
    grad-fixture.json  the index ("offset" in bytes from the start of grad-fixture.f32,
                       "count" in float32 elements) and the scalars; see tests/reference/README.md
    Packed triangle layout of probs and grad_probs ("[layer][head][query][key<=query]"):
        element (l, h, i, j), j <= i, is at float index ((l*H + h) * n*(n+1)/2 + i*(i+1)/2 + j).
    grad_embd: [n][576] row-major, element (i, d) at float index i*576 + d.
    df/dP above the diagonal (keys the causal mask removed) is not stored: P is 0 there but its
    gradient is not, and no engine needs it.

How to rerun (not in CI; ~10 min with 1 thread on the loaded 2-core dev VM, ~5.6 GB of memory)
    pip install torch==2.9.1 transformers==5.24.0 accelerate==1.15.0 gguf==0.19.0 numpy==2.4.6
    OMP_NUM_THREADS=1 python3 tests/reference/grad_ref.py [MODEL.gguf]
    (model path: argv[1], else $SACCADE_MODEL, else data/models/SmolLM2-135M-Instruct.Q4_1.gguf)
"""

import hashlib
import importlib.metadata as md
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attention_ref as ar  # noqa: E402  (numpy float64 model: forward cross-check only)

OUT_JSON = os.path.join(HERE, "grad-fixture.json")
OUT_F32 = os.path.join(HERE, "grad-fixture.f32")
ATTN_JSON = os.path.join(HERE, "attention-fixture.json")

PROMPTS = ["english_cat", "chinese_seed", "mixed_30"]  # names in attention-fixture.json
IG_STEPS = [50, 300]
IG_PATH = [0.0, 1e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
IG_BATCH = 10  # interpolation points per autograd call: bounds the memory of one backward
THREADS = 1    # fixed (summation order, hence output, reproducible); 1 thread also survives a
               # shared machine far better than OpenMP spinning on 2 contended cores

# Finite-difference checks of the retained gradients (central differences in float64; the
# truncation error is O(eps^2 f''') ~ 1e-10 and the rounding error ~1e-16/eps ~ 1e-11).
FD_EPS = 1e-5
FD_PROBS_PER_OBJECTIVE = 4  # the two largest |df/dP| entries and two seeded random ones
FD_SEED = 20241207


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


def rounded(x):
    """Every float to 9 significant digits (as ablation_ref.py: float32 values round-trip
    exactly, float64 ones keep a relative 1e-9, far below any tolerance)."""
    if isinstance(x, float):
        return float("%.9g" % x)
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x


# --- the float64 patches ---------------------------------------------------------------------

PERTURB = {}   # {layer: (head, i, j, delta)}: added to P after the softmax (FD checks only)
CALLS = [0]    # how often the replacement attention ran (asserted > 0: it is really used)


def patch_float64(ml, model):
    """Make the three float32 spots of modeling_llama compute in the tensors' own dtype."""
    def rms_forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))

    ml.LlamaRMSNorm.forward = rms_forward

    rot = model.model.rotary_emb
    base = float(model.config.rope_parameters["rope_theta"])
    dim = model.config.head_dim
    inv64 = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    rot.inv_freq = inv64
    rot.original_inv_freq = inv64.clone()

    def rope_forward(x, position_ids):
        freqs = position_ids[..., None].to(torch.float64) * rot.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * rot.attention_scaling
        sin = emb.sin() * rot.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    rot.forward = rope_forward

    ml.eager_attention_forward = eager64_for(ml)


def eager64_for(ml):
    """ml.eager_attention_forward (modeling_llama's, or another architecture's module with
    the same repeat_kv), with the softmax in query's dtype (not float32) and PERTURB's
    additive bump of P (FD checks); counts its calls in CALLS. grad_ref_arch.py uses it too."""
    nn = torch.nn

    def eager64(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        # ml.eager_attention_forward, with the softmax in query's dtype (not float32).
        CALLS[0] += 1
        key_states = ml.repeat_kv(key, module.num_key_value_groups)
        value_states = ml.repeat_kv(value, module.num_key_value_groups)
        attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
        pert = PERTURB.get(module.layer_idx)
        if pert is not None:
            h, i, j, delta = pert
            bump = torch.zeros_like(attn_weights)
            bump[:, h, i, j] = delta
            attn_weights = attn_weights + bump
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        return attn_output, attn_weights

    return eager64


# --- objectives ------------------------------------------------------------------------------

def run(model, x, attentions=True):
    """x: (B, n, d) float64 embeddings -> (logits (B, n, V), tuple of (B, H, n, n) or None)."""
    out = model(inputs_embeds=x, output_attentions=attentions, use_cache=False)
    return out.logits, (out.attentions if attentions else None)


def objective(kind, logits, ids, target):
    """Scalar per batch element: (B,) float64."""
    if kind == "logp":
        return torch.log_softmax(logits[:, -1, :], dim=-1)[:, target]
    nxt = torch.tensor(ids[1:], dtype=torch.long)
    lp = torch.log_softmax(logits[:, :-1, :], dim=-1)
    return -lp[:, torch.arange(len(ids) - 1), nxt].mean(dim=-1)


def value_and_grads(model, x0, kind, ids, target):
    """f(x0), df/dx0 (n, d), df/dP (L, H, n, n) from one autograd pass."""
    x = x0.detach().clone().unsqueeze(0).requires_grad_(True)
    logits, atts = run(model, x)
    for a in atts:
        a.retain_grad()
    f = objective(kind, logits, ids, target)[0]
    f.backward()
    gp = torch.stack([a.grad[0] for a in atts]).detach()
    return float(f.detach()), x.grad[0].detach().clone(), gp, atts


def f_only(model, x0, kind, ids, target):
    with torch.no_grad():
        logits, _ = run(model, x0.unsqueeze(0), attentions=False)
        return float(objective(kind, logits, ids, target)[0])


def integrated_gradients(model, x, target, ids, steps):
    """Midpoint-rule IG from the zero baseline: per-token attributions (n,), mean gradient."""
    base = torch.zeros_like(x)
    total = torch.zeros_like(x)
    alphas = [(k + 0.5) / steps for k in range(steps)]
    for s in range(0, steps, IG_BATCH):
        a = torch.tensor(alphas[s:s + IG_BATCH], dtype=x.dtype)[:, None, None]
        xb = (base[None] + a * (x - base)[None]).detach().requires_grad_(True)
        logits, _ = run(model, xb, attentions=False)
        objective("logp", logits, ids, target).sum().backward()
        total += xb.grad.sum(dim=0)
    mean_grad = total / steps
    return ((x - base) * mean_grad).sum(dim=-1)


# --- packing ---------------------------------------------------------------------------------

def pack_tri(a):
    """(L, H, n, n) -> flat float64 array of the lower triangles, layer-major, row by row."""
    L, H, n, _ = a.shape
    r, c = np.tril_indices(n)
    return np.ascontiguousarray(np.asarray(a)[:, :, r, c]).reshape(-1)


class Blob:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.off = 0

    def put(self, arr):
        a = np.asarray(arr, dtype=np.float64).astype("<f4").reshape(-1)
        rec = {"offset": self.off, "count": int(a.size)}
        self.f.write(a.tobytes())
        self.off += a.nbytes
        return rec


def stats(a):
    a = np.asarray(a, dtype=np.float64)
    return {"max_abs": float(np.abs(a).max()), "rms": float(np.sqrt((a * a).mean()))}


# --- checks ----------------------------------------------------------------------------------

def fd_probs(model, x, kind, ids, target, gp, rng):
    """Central differences of f in single entries of P (perturbation inserted before P V)."""
    L, H, n, _ = gp.shape
    r, c = np.tril_indices(n)
    g = gp.numpy()
    tri = np.abs(g[:, :, r, c]).reshape(-1)
    order = np.argsort(-tri, kind="stable")
    picks = list(order[:2]) + list(rng.choice(tri.size, FD_PROBS_PER_OBJECTIVE - 2,
                                              replace=False))
    out = []
    for p in picks:
        lh, t = divmod(int(p), r.size)
        l, h = divmod(lh, H)
        i, j = int(r[t]), int(c[t])
        vals = []
        for sgn in (1.0, -1.0):
            PERTURB.clear()
            PERTURB[l] = (h, i, j, sgn * FD_EPS)
            vals.append(f_only(model, x, kind, ids, target))
        PERTURB.clear()
        fd = (vals[0] - vals[1]) / (2 * FD_EPS)
        ag = float(g[l, h, i, j])
        out.append({"layer": l, "head": h, "query": i, "key": j, "autograd": ag, "fd": fd,
                    "abs_err": abs(fd - ag)})
    return out


def fd_embd(model, x, kind, ids, target, ge, rng):
    """Central difference of f along one seeded random unit direction of the embeddings."""
    u = torch.tensor(rng.standard_normal(tuple(x.shape)), dtype=x.dtype)
    u /= u.norm()
    fp = f_only(model, x + FD_EPS * u, kind, ids, target)
    fm = f_only(model, x - FD_EPS * u, kind, ids, target)
    fd = (fp - fm) / (2 * FD_EPS)
    ag = float((ge * u).sum())
    return {"autograd": ag, "fd": fd, "abs_err": abs(fd - ag)}


def vs_numpy(np_model, att_rec, blob_f32, logits, probs, emb, ids):
    """Differences of the torch model to the numpy float64 reference (recomputed) and to the
    float32 values stored in attention-fixture.f32."""
    p_np, resid_np, lg_np = np_model.forward(ids)
    n = len(ids)
    a = att_rec["attention"]
    att32 = blob_f32[a["offset"] // 4: a["offset"] // 4 + a["count"]].reshape(a["shape"])
    g = att_rec["logits_last"]
    lg32 = blob_f32[g["offset"] // 4: g["offset"] // 4 + g["count"]]
    rs = att_rec["residual"]
    res32 = blob_f32[rs["offset"] // 4: rs["offset"] // 4 + rs["count"]].reshape(rs["shape"])
    return {
        "logits_all_positions_vs_numpy_float64": float(np.abs(logits - lg_np).max()),
        "logits_last_vs_fixture_float32": float(np.abs(logits[-1] - lg32).max()),
        "probs_vs_numpy_float64": float(np.abs(probs - p_np).max()),
        "probs_vs_fixture_float32": float(np.abs(probs - att32).max()),
        "embeddings_vs_fixture_residual0_float32": float(np.abs(emb - res32[0]).max()),
        "embeddings_vs_numpy_token_embd": float(np.abs(emb - resid_np[0]).max()),
        "top1_same_as_numpy": int(np.argmax(logits[-1])) == int(np.argmax(lg_np[-1])),
    }


def float32_sensitivity(model, recs, keep):
    """The same computations with the model in float32 (same patches, so RoPE angles, norms
    and softmax in float32): how far an exact float32 implementation lands from the float64
    values, per quantity, to size a C test's tolerances."""
    torch.nn.Module.float(model)  # transformers refuses model.float() on a GGUF-loaded model
    out = {}
    for rec in recs:
        name, ids = rec["name"], rec["ids"]
        with torch.no_grad():
            x = model.model.embed_tokens(torch.tensor([ids]))[0].clone()
        res = {}
        for o in rec["objectives"]:
            kind = o["kind"]
            target = o.get("target", rec["objectives"][0]["target"])
            f64, ge64, gp64 = keep[(name, kind)]
            f, ge, gp, _ = value_and_grads(model, x, kind, ids, target)
            r = {"value_abs_diff": abs(f - f64),
                 "grad_embd_max_abs_diff": float(np.abs(ge.numpy() - ge64).max()),
                 "grad_probs_max_abs_diff": float(np.abs(pack_tri(gp.numpy())
                                                         - pack_tri(gp64)).max())}
            if kind == "logp":
                r["ig"] = []
                for g in o["ig"]:
                    a32 = integrated_gradients(model, x, target, ids, g["steps"]).numpy()
                    a64 = keep[(name, "ig", g["steps"])]
                    r["ig"].append({"steps": g["steps"],
                                    "attr_max_abs_diff": float(np.abs(a32 - a64).max()),
                                    "attr_max_abs": float(np.abs(a64).max()),
                                    "sum_float32": float(a32.sum())})
            res[kind] = r
        out[name] = res
        print("float32 vs float64 %-12s %s" % (name, json.dumps(rounded(res))))
    return out


def main():
    path = ar.model_path()
    t0 = time.time()
    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(THREADS)
    torch.manual_seed(0)
    attn = json.load(open(ATTN_JSON, encoding="utf-8"))
    digest = sha256(path)
    if attn["model_sha256"] != digest:
        raise SystemExit("%s: sha256 %s, but attention-fixture.json was made from %s"
                         % (path, digest, attn["model_sha256"]))
    att_blob = np.fromfile(os.path.join(HERE, attn["data_file"]), dtype="<f4")
    att_prompts = {p["name"]: p for p in attn["prompts"]}

    from transformers import AutoModelForCausalLM
    import transformers.models.llama.modeling_llama as ml

    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(os.path.abspath(path)), gguf_file=os.path.basename(path),
        attn_implementation="eager")
    model = model.double().eval()
    for p_ in model.parameters():
        p_.requires_grad_(False)  # activation gradients only
    cfg = model.config
    print("loaded in %.1fs: rms_norm_eps %r, rope %r, tie_word_embeddings %r, head_dim %d"
          % (time.time() - t0, cfg.rms_norm_eps, cfg.rope_parameters, cfg.tie_word_embeddings,
             cfg.head_dim))
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    L, H = cfg.num_hidden_layers, cfg.num_attention_heads

    np_model = ar.Model(path)
    assert abs(np_model.eps - cfg.rms_norm_eps) == 0.0
    assert np_model.freq_base == float(cfg.rope_parameters["rope_theta"])

    # Unpatched (float32-internal) forward, for the record.
    unpatched = {}
    with torch.no_grad():
        for name in PROMPTS:
            ids = att_prompts[name]["ids"]
            out = model(input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False)
            lg = out.logits[0].numpy()
            pr = torch.stack([a[0] for a in out.attentions]).numpy()
            p_np, _, lg_np = np_model.forward(ids)
            unpatched[name] = {"logits_all_positions_vs_numpy_float64":
                               float(np.abs(lg - lg_np).max()),
                               "probs_vs_numpy_float64": float(np.abs(pr - p_np).max())}
    patch_float64(ml, model)

    rng = np.random.RandomState(FD_SEED)
    keep = {}  # float64 results per prompt, for the float32 comparison at the end
    blob = Blob(OUT_F32 + ".tmp")
    recs, cmp, checks = [], {}, {}
    for name in PROMPTS:
        t1 = time.time()
        src = att_prompts[name]
        ids = [int(t) for t in src["ids"]]
        n = len(ids)
        ids_t = torch.tensor([ids])
        with torch.no_grad():
            x = model.model.embed_tokens(ids_t)[0].clone()
            # no embedding scale: the logits from input_ids equal those from x
            la = model(input_ids=ids_t, use_cache=False).logits[0]
            lb = model(inputs_embeds=x[None], use_cache=False).logits[0]
            assert torch.equal(la, lb), name
        calls_before = CALLS[0]
        with torch.no_grad():
            logits, atts = run(model, x[None])
        assert CALLS[0] - calls_before == L, "the float64 attention was not used"
        logits = logits[0].numpy()
        probs = torch.stack([a[0] for a in atts]).numpy()
        assert np.allclose(probs.sum(-1), 1.0, atol=1e-12)
        assert not np.any(np.triu(probs, k=1))
        cmp[name] = vs_numpy(np_model, src, att_blob, logits, probs, x.numpy(), ids)

        last = logits[-1]
        top = np.argsort(-last, kind="stable")[:2]
        target = int(top[0])
        margin = float(last[top[0]] - last[top[1]])

        rec = {"name": name, "text": src["text"], "ids": ids, "n": n,
               "probs": blob.put(pack_tri(probs)), "objectives": []}
        checks[name] = {}
        for kind in ("logp", "loss"):
            f, ge, gp, atts_g = value_and_grads(model, x, kind, ids, target)
            # the retained tensors are the forward's probabilities (same values)
            assert np.array_equal(torch.stack([a[0] for a in atts_g]).detach().numpy(), probs)
            ge, gp = ge.numpy(), gp.numpy()
            keep[(name, kind)] = (f, ge, gp)
            o = {"kind": kind}
            if kind == "logp":
                o.update({"position": n - 1, "target": target, "value": f, "margin": margin,
                          "runner_up": int(top[1])})
            else:
                o["value"] = f
            o["grad_embd"] = dict(blob.put(ge), **stats(ge))
            o["grad_probs"] = dict(blob.put(pack_tri(gp)), **stats(pack_tri(gp)))
            checks[name][kind] = {
                "grad_probs_fd": fd_probs(model, x, kind, ids, target, torch.tensor(gp), rng),
                "grad_embd_fd_random_direction": fd_embd(model, x, kind, ids, target,
                                                         torch.tensor(ge), rng)}
            if kind == "logp":
                f0 = f_only(model, torch.zeros_like(x), kind, ids, target)
                o["ig_path"] = {"alpha": IG_PATH,
                                "f": [f_only(model, a * x, kind, ids, target) for a in IG_PATH]}
                o["ig"] = []
                for steps in IG_STEPS:
                    attr = integrated_gradients(model, x, target, ids, steps).numpy()
                    keep[(name, "ig", steps)] = attr
                    s = float(attr.sum())
                    o["ig"].append({"steps": steps, "baseline": "zero", "rule": "midpoint",
                                    "f_baseline": f0, "attr": blob.put(attr), "sum": s,
                                    "gap": abs(s - (f - f0))})
            rec["objectives"].append(o)
        recs.append(rec)
        lo = rec["objectives"][0]
        print("%-12s n=%2d target %d (margin %.4g) logp %.6f loss %.6f | IG gap %s | "
              "vs numpy: logits %.2e probs %.2e | %.1fs" % (
                  name, n, target, margin, lo["value"], rec["objectives"][1]["value"],
                  " ".join("%d:%.3g" % (g["steps"], g["gap"]) for g in lo["ig"]),
                  cmp[name]["logits_all_positions_vs_numpy_float64"],
                  cmp[name]["probs_vs_numpy_float64"], time.time() - t1))
    blob.f.close()
    os.replace(OUT_F32 + ".tmp", OUT_F32)

    sens = float32_sensitivity(model, recs, keep)

    fd_errs = [c["abs_err"] for p in checks.values() for k in p.values()
               for c in k["grad_probs_fd"]]
    fd_rel = [c["abs_err"] / (abs(c["autograd"]) + 1e-6) for p in checks.values()
              for k in p.values() for c in k["grad_probs_fd"]]
    fd_embd_errs = [k["grad_embd_fd_random_direction"]["abs_err"] for p in checks.values()
                    for k in p.values()]
    print("FD checks: df/dP max abs err %.2e (max rel %.2e), df/dx directional max abs err "
          "%.2e" % (max(fd_errs), max(fd_rel), max(fd_embd_errs)))
    assert max(fd_rel) < 1e-5 and max(fd_embd_errs) < 1e-7

    summary = {k: max(c[k] for c in cmp.values()) for k in next(iter(cmp.values()))
               if k != "top1_same_as_numpy"}
    summary["top1_same_as_numpy"] = all(c["top1_same_as_numpy"] for c in cmp.values())
    doc = {
        "format": "saccade-grad-fixture/1",
        "generator": "tests/reference/grad_ref.py",
        "model_file": os.path.basename(path),
        "model_sha256": digest,
        "reference": "PyTorch %s autograd, transformers %s (GGUF loader, eager attention), "
                     "float64" % (torch.__version__, md.version("transformers")),
        "gguf_py_version": md.version("gguf"),
        "torch_version": torch.__version__,
        "transformers_version": md.version("transformers"),
        "accelerate_version": md.version("accelerate"),
        "numpy_version": np.__version__,
        "torch_threads": THREADS,
        "float64_patches": "modeling_llama computes RMSNorm, the RoPE angles and the attention "
                           "softmax in float32 whatever the model dtype; grad_ref.py replaces "
                           "those three by the same expressions in float64 (patch_float64)",
        "ids_source": "attention-fixture.json (llama.cpp tokenizer, no BOS)",
        "data_file": os.path.basename(OUT_F32),
        "dtype": "float32",
        "endianness": "little",
        "offset_units": "bytes from the start of data_file; count in float32 elements",
        "layouts": {
            "probs": "[layer][head][query][key<=query]: per (layer, head) the causal lower "
                     "triangle row by row, i+1 values in row i; element (l,h,i,j) at float "
                     "index (l*H + h)*n*(n+1)/2 + i*(i+1)/2 + j",
            "grad_probs": "same layout as probs: df/dP[l][h][i][j], P a free variable (the "
                          "tensor multiplied by V), j <= i only",
            "grad_embd": "[n][576] row-major: df/dx[i][d], x = token embedding rows",
            "attr": "[n]: integrated-gradients attribution of each token",
        },
        "objectives_note": "logp: ln softmax(logits[n-1])[target], target = clean top-1 "
                           "(stable argmax, float64), margin = its lead over runner_up in "
                           "logits; loss: mean over i = 0..n-2 of -ln softmax(logits[i])"
                           "[ids[i+1]]; ig: baseline x' = 0, alpha_k = (k+0.5)/steps, attr[i] "
                           "= sum_d x[i][d] * mean_k df/dx[i][d](alpha_k x), gap = |sum - "
                           "(value - f_baseline)|",
        "total_bytes": blob.off,
        "oracle_vs_numpy_reference": {
            "summary_max": summary,
            "per_prompt": cmp,
            "unpatched_float32_internals": unpatched,
            "note": "numpy_float64 = attention_ref.Model.forward recomputed in float64; "
                    "fixture_float32 = the values stored in attention-fixture.f32 (float32, "
                    "so these differences are float32 rounding); unpatched = the same torch "
                    "model without patch_float64 (float32 norm, RoPE and softmax)",
        },
        "float32_sensitivity": sens,
        "checks": {
            "grad_probs_fd_max_abs_err": max(fd_errs),
            "grad_probs_fd_max_rel_err": max(fd_rel),
            "grad_embd_fd_max_abs_err": max(fd_embd_errs),
            "fd_eps": FD_EPS,
            "note": "central differences in float64: grad_probs_fd perturbs one entry of P "
                    "between the softmax and the V product (the two largest |df/dP| of each "
                    "objective and two random entries); grad_embd_fd is the derivative along "
                    "a random unit direction of all embeddings against <df/dx, u>",
            "per_prompt": checks,
        },
        "prompts": recs,
    }
    with open(OUT_JSON, "w", encoding="utf-8") as f:
        json.dump(rounded(doc), f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %s and %s (%d bytes) in %.1fs" % (OUT_JSON, OUT_F32, blob.off, time.time() - t0))


if __name__ == "__main__":
    main()
