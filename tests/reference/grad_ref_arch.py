#!/usr/bin/env python3
"""Gradient oracle for Gemma 3 and Qwen2: activation gradients by PyTorch autograd through
Hugging Face transformers, for Saccade's backward pass on those architectures
(grad_ref.py does SmolLM2; this script imports its helpers rather than repeating them).

Independence. As grad_ref.py: the model is built by transformers from the same GGUF file
(`AutoModelForCausalLM.from_pretrained(dir, gguf_file=name, attn_implementation="eager")`;
transformers dequantizes with gguf-py, and for Gemma subtracts the 1 the GGUF converter added
to every norm weight, which its Gemma3RMSNorm adds back as x / rms(x) * (1 + w)). Every
derivative is taken by torch.autograd; nothing from the Saccade repository is imported.

Float64. `model.double()`, then the spots of modeling_gemma3.py / modeling_qwen2.py that
compute in float32 whatever the model dtype are replaced by the same expressions in the
input's dtype (`patch_float64`):
    Gemma3RMSNorm.forward / Qwen2RMSNorm.forward    x.float() / x.to(float32) before the norm;
    Gemma3RotaryEmbedding / Qwen2RotaryEmbedding    inv_freq built in float32, float32 angles
                                                    (Gemma: one per layer type, its own base);
    eager_attention_forward                         softmax(..., dtype=float32): replaced by
                                                    grad_ref.py's eager64 (with Gemma's
                                                    attention softcap, None here: asserted).
The replaced attention is asserted to run once per layer.

Which tensor is dL/dP: as grad_ref.py says (the eager attention's attn_weights, the tensor
multiplied by V, retained through output_attentions).

Inputs and the embedding scale. x = the GGUF's token_embd rows of the ids (unscaled). Gemma
multiplies them by sqrt(hidden_size) inside its embedding module, so the model is fed
inputs_embeds = s x with s = the model's own embed_scale, and d f / d x = s d f / d(s x);
Qwen2 has no scale (s = 1, checked: the logits from input_ids equal those from x).

What it computes, for one sentence per model ("mixed_30" of attention-fixture-<arch>.json,
its stored llama.cpp ids, no BOS): for the objectives
  "logp": f(x) = log_softmax(logits[n-1])[t], t = the clean top-1 (stable argmax)
  "loss": f(x) = mean_{i=0..n-2} -log_softmax(logits[i])[ids[i+1]]
f, df/dx (n x E), gradient x input per token gxi[i] = sum_d x[i][d] df/dx[i][d], and df/dP
(lower triangles) for every head of the layers in LAYERS[arch]; plus grad_ref.py's finite
difference checks of the autograd values (fd_probs, fd_embd).

Output (next to this script): grad-fixture-<arch>.f32 (raw little-endian float32, values
computed in float64 and rounded once) and grad-fixture-<arch>.json (the index: "offset" in
bytes, "count" in float32 elements; layouts as grad-fixture.json's; tests/reference/README.md).

How to rerun (not in CI):
    OMP_NUM_THREADS=1 python3 tests/reference/grad_ref_arch.py gemma3 [MODEL.gguf]
    OMP_NUM_THREADS=1 python3 tests/reference/grad_ref_arch.py qwen2 [MODEL.gguf]
    (versions as grad_ref.py; the ones used are recorded in the JSON)
"""

import importlib
import importlib.metadata as md
import json
import math
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grad_ref as gr  # noqa: E402  (shared helpers: packing, objectives, FD checks)

MODELS = {
    "gemma3": {"file": "gemma-3-270m-q4_k_m.gguf", "module": "gemma3", "norm_plus_one": True},
    "qwen2": {"file": "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf", "module": "qwen2",
              "norm_plus_one": False},
}
PROMPT = "mixed_30"
# df/dP is stored for every head of these layers (Gemma 3 270M: 18 layers of 4 heads, the
# first, the first two global ones (5, 11) and the last; Qwen2.5-Coder-0.5B: 24 of 14, the
# first and the last), to keep the fixture small
LAYERS = {"gemma3": [0, 5, 11, 17], "qwen2": [0, 23]}


def patch_float64(mod, model, arch):
    """The float32 spots of modeling_<arch>.py in the tensors' own dtype (see the docstring)."""
    plus_one = MODELS[arch]["norm_plus_one"]

    def rms_forward(self, x):
        eps = self.eps if hasattr(self, "eps") else self.variance_epsilon
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        return y * (1.0 + self.weight) if plus_one else self.weight * y

    norm_cls = getattr(mod, "Gemma3RMSNorm" if arch == "gemma3" else "Qwen2RMSNorm")
    norm_cls.forward = rms_forward

    rot = model.model.rotary_emb
    cfg = model.config
    dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads

    def inv64(base):
        return 1.0 / (float(base) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))

    def cos_sin(x, position_ids, inv, scaling):
        freqs = position_ids[..., None].to(torch.float64) * inv
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * scaling).to(x.dtype), (emb.sin() * scaling).to(x.dtype)

    if arch == "gemma3":
        invs = {}
        for lt in rot.layer_types:
            p = cfg.rope_parameters[lt]
            assert p["rope_type"] == "default", p
            invs[lt] = inv64(p["rope_theta"])

        def rope_forward(x, position_ids, layer_type):
            return cos_sin(x, position_ids, invs[layer_type],
                           getattr(rot, "%s_attention_scaling" % layer_type))
    else:
        assert cfg.rope_parameters.get("rope_type", "default") == "default", cfg.rope_parameters
        inv = inv64(cfg.rope_parameters["rope_theta"])

        def rope_forward(x, position_ids):
            return cos_sin(x, position_ids, inv, rot.attention_scaling)

    rot.forward = rope_forward

    # grad_ref's float64 eager attention (with its FD perturbation hook); Gemma's softcap
    # argument must be None (Gemma 3 has no attention softcapping)
    eager64 = gr.eager64_for(mod)

    def eager(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
              softcap=None, **kwargs):
        assert softcap is None, "attention softcapping is not handled"
        if scaling is None:
            scaling = module.head_dim ** -0.5
        return eager64(module, query, key, value, attention_mask, scaling, dropout=dropout)

    mod.eager_attention_forward = eager


def main():
    arch = sys.argv[1] if len(sys.argv) > 1 else ""
    if arch not in MODELS:
        raise SystemExit("usage: grad_ref_arch.py {gemma3|qwen2} [MODEL.gguf]")
    path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        HERE, "..", "..", "data", "models", MODELS[arch]["file"])
    out_json = os.path.join(HERE, "grad-fixture-%s.json" % arch)
    out_f32 = os.path.join(HERE, "grad-fixture-%s.f32" % arch)
    t0 = time.time()
    torch.set_num_threads(gr.THREADS)
    torch.set_num_interop_threads(gr.THREADS)
    torch.manual_seed(0)

    attn = json.load(open(os.path.join(HERE, "attention-fixture-%s.json" % arch),
                          encoding="utf-8"))
    digest = gr.sha256(path)
    if attn["model_sha256"] != digest:
        raise SystemExit("%s: sha256 %s, but attention-fixture-%s.json was made from %s"
                         % (path, digest, arch, attn["model_sha256"]))
    src = next(p for p in attn["prompts"] if p["name"] == PROMPT)
    ids = [int(t) for t in src["ids"]]
    n = len(ids)

    from transformers import AutoModelForCausalLM
    mod = importlib.import_module("transformers.models.%s.modeling_%s"
                                  % (MODELS[arch]["module"], MODELS[arch]["module"]))
    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(os.path.abspath(path)), gguf_file=os.path.basename(path),
        attn_implementation="eager")
    model = model.double().eval()
    for p_ in model.parameters():
        p_.requires_grad_(False)
    cfg = model.config
    L, H = cfg.num_hidden_layers, cfg.num_attention_heads
    E = cfg.hidden_size
    layer_types = list(getattr(cfg, "layer_types", None) or ["full_attention"] * L)
    final_softcap = getattr(cfg, "final_logit_softcapping", None)
    print("loaded %s in %.1fs: L %d H %d E %d, eps %r, rope %r, sliding_window %r, "
          "layer_types %s, final_logit_softcapping %r" % (
              arch, time.time() - t0, L, H, E, cfg.rms_norm_eps, cfg.rope_parameters,
              getattr(cfg, "sliding_window", None), layer_types, final_softcap))
    if arch == "qwen2":
        assert all(t == "full_attention" for t in layer_types)
    else:
        # sliding layers exist, but the sentence is shorter than the window: record it
        assert n <= cfg.sliding_window
        assert final_softcap is None and getattr(cfg, "attn_logit_softcapping", None) is None

    ids_t = torch.tensor([ids])
    with torch.no_grad():
        table = model.model.embed_tokens.weight
        x = table[ids_t[0]].clone()  # the GGUF's token_embd rows, unscaled
        s = float(model.model.embed_tokens.embed_scale) if arch == "gemma3" else 1.0
        if arch == "gemma3":
            assert abs(s - math.sqrt(E)) < 1e-5 * math.sqrt(E), s
        la = model(input_ids=ids_t, use_cache=False).logits[0]
        lb = model(inputs_embeds=(s * x)[None], use_cache=False).logits[0]
        assert torch.equal(la, lb), "the logits from ids and from s x differ"
    patch_float64(mod, model, arch)

    calls = gr.CALLS[0]
    with torch.no_grad():
        logits, atts = gr.run(model, (s * x)[None])
    assert gr.CALLS[0] - calls == L, "the float64 attention was not used"
    last = logits[0, -1].numpy()
    top = np.argsort(-last, kind="stable")[:2]
    target = int(top[0])
    margin = float(last[top[0]] - last[top[1]])
    probs = torch.stack([a[0] for a in atts]).numpy()
    assert np.allclose(probs.sum(-1), 1.0, atol=1e-12)

    rng = np.random.RandomState(gr.FD_SEED)
    blob = gr.Blob(out_f32 + ".tmp")
    objectives, checks = [], {}
    for kind in ("logp", "loss"):
        t1 = time.time()
        f, ge_s, gp, _ = gr.value_and_grads(model, s * x, kind, ids, target)
        ge = (ge_s * s).numpy()  # d f / d x = s d f / d(s x)
        gxi = (x.numpy() * ge).sum(axis=-1)
        gp = gp.numpy()
        o = {"kind": kind, "value": f}
        if kind == "logp":
            o.update({"position": n - 1, "target": target, "margin": margin,
                      "runner_up": int(top[1])})
        o["grad_embd"] = dict(blob.put(ge), **gr.stats(ge))
        o["grad_x_input"] = dict(blob.put(gxi), **gr.stats(gxi))
        o["grad_probs"] = []
        for l in LAYERS[arch]:
            tri = gr.pack_tri(gp[l:l + 1])
            o["grad_probs"].append(dict(blob.put(tri), layer=l, **gr.stats(tri)))
        checks[kind] = {
            "grad_probs_fd": gr.fd_probs(model, s * x, kind, ids, target, torch.tensor(gp), rng),
            "grad_embd_fd_random_direction": gr.fd_embd(model, s * x, kind, ids, target,
                                                        torch.tensor(ge / s), rng)}
        objectives.append(o)
        print("%s %s: f %.9g, |df/dx| max %.4g, gxi %s | %.1fs" % (
            arch, kind, f, o["grad_embd"]["max_abs"],
            " ".join("%.3g" % v for v in gxi), time.time() - t1))
    blob.f.close()
    os.replace(out_f32 + ".tmp", out_f32)

    fd_rel = [c["abs_err"] / (abs(c["autograd"]) + 1e-6) for k in checks.values()
              for c in k["grad_probs_fd"]]
    fd_embd = [k["grad_embd_fd_random_direction"]["abs_err"] for k in checks.values()]
    print("FD checks: df/dP max rel err %.2e, df/dx directional max abs err %.2e"
          % (max(fd_rel), max(fd_embd)))
    assert max(fd_rel) < 1e-5 and max(fd_embd) < 1e-6

    doc = {
        "format": "saccade-grad-fixture-arch/1",
        "generator": "tests/reference/grad_ref_arch.py",
        "arch": arch,
        "model_file": os.path.basename(path),
        "model_sha256": digest,
        "reference": "PyTorch %s autograd, transformers %s (GGUF loader, eager attention), "
                     "float64" % (torch.__version__, md.version("transformers")),
        "gguf_py_version": md.version("gguf"),
        "numpy_version": np.__version__,
        "torch_threads": gr.THREADS,
        "float64_patches": "modeling_%s's RMSNorm, RoPE angles and attention softmax computed "
                           "in float64 (patch_float64)" % MODELS[arch]["module"],
        "hparams": {"n_layers": L, "n_heads": H, "n_embd": E,
                    "sliding_window": getattr(cfg, "sliding_window", None),
                    "layer_types": layer_types, "embd_scale": s,
                    "final_logit_softcapping": final_softcap},
        "ids_source": "attention-fixture-%s.json prompt %s (llama.cpp tokenizer, no BOS)"
                      % (arch, PROMPT),
        "data_file": os.path.basename(out_f32),
        "dtype": "float32",
        "endianness": "little",
        "offset_units": "bytes from the start of data_file; count in float32 elements",
        "layouts": {
            "grad_embd": "[n][E] row-major: df/dx[i][d], x = the token_embd rows (before "
                         "Gemma's embedding scale)",
            "grad_x_input": "[n]: sum_d x[i][d] df/dx[i][d]",
            "grad_probs": "one record per stored layer: [head][query][key<=query], element "
                          "(h,i,j) at h*n*(n+1)/2 + i*(i+1)/2 + j; df/dP with P a free variable",
        },
        "checks": {"grad_probs_fd_max_rel_err": max(fd_rel),
                   "grad_embd_fd_max_abs_err": max(fd_embd), "fd_eps": gr.FD_EPS,
                   "per_objective": checks},
        "total_bytes": blob.off,
        "prompt": {"name": PROMPT, "text": src["text"], "ids": ids, "n": n,
                   "objectives": objectives},
    }
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(gr.rounded(doc), f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %s and %s (%d bytes) in %.1fs" % (out_json, out_f32, blob.off, time.time() - t0))


if __name__ == "__main__":
    main()
