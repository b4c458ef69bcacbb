#!/usr/bin/env python3
"""arch_ref_llama3.py — a tiny Llama with Llama 3's RoPE frequency scaling and random weights,
its GGUF, and Hugging Face's float64 forward on it: the oracle of
tests/engine/test-llama3-model.c (issue 28 item 2).

As arch_ref_qwen3.py (same vocabulary, same fixture layout; tests/reference/README.md section
12): LlamaForCausalLM(LlamaConfig(...)) with rope_parameters {"rope_type": "llama3", factor,
low_freq_factor, high_freq_factor, original_max_position_embeddings} and seeded random
weights, every RMSNorm weight drawn too; written with gguf-py's GGUFWriter as llama.cpp's
converter writes Llama (conversion/llama.py's LlamaModel on TextModel's keys: llama.{
block_count, context_length, embedding_length, feed_forward_length, attention.head_count,
attention.head_count_kv, rope.freq_base, attention.layer_norm_rms_epsilon,
attention.key_length, attention.value_length, vocab_size, rope.dimension_count}, head_dim 16
not being n_embd / heads (8), as in tiny-qwen3; Q and K rows permuted by LlamaModel.permute
for GGUF's adjacent RoPE pairs; no output.weight, the lm_head being tied) and, from
LlamaModel.generate_extra_tensors, the tensor rope_freqs.weight: one factor per RoPE pair,
computed by the converter's own expression in float32 (llama.cpp divides pair c's angle by
factor c).

The scaling matters only for the pairs whose wavelength 2 pi / freq exceeds
original_max_position_embeddings / high_freq_factor: with head_dim 16 and base 10^4 the
8 pairs have wavelengths 6.3 .. 2.0e4, and original_max_position_embeddings 32 with
factors (low 1, high 4) leaves pair 0 alone (factor 1), smooths pair 1 (3.2995) and divides
pairs 2-7 by `factor` 8; the run is N_TOKENS = 96 tokens, three times the original context.

transformers computes RMSNorm, the RoPE angles and the eager softmax in float32 whatever the
model's dtype (README section 6); they are replaced by the same expressions in float64. The
angles are inv_freq = base^(-2c/d) / rope_freqs[c] in float64 with the file's float32
factors (what llama.cpp computes, rounded once); the script asserts that transformers' own
"llama3" inv_freq agrees with them to 1e-6 relative, so the file's factors are Hugging
Face's scaling. The fixture also holds torch autograd's gradient of log p(top-1) at the last
position with respect to the input embeddings, for the backward pass.

  /tmp/h28-venv/bin/python tests/reference/arch_ref_llama3.py --vocab PATH/ggml-vocab-gpt-2.gguf
Writes tests/reference/tiny-llama3.gguf, arch-fixture-llama3.json and arch-fixture-llama3.f32.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np
import torch
import gguf
import transformers
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama import modeling_llama as mod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_ref_gpt2 import read_vocab, N_VOCAB  # noqa: E402  (GPT-2's first 511 tokens)
from arch_ref_common import (add_tensors, add_vocab, finish, float64_eager,  # noqa: E402
                             float64_rms_norm, float64_rope)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 31
N_EMBD, N_FF, N_LAYER, N_HEAD, N_KV, HEAD_DIM, N_CTX = 32, 64, 3, 4, 2, 16, 128
N_TOKENS = 96
EPS = float(np.float32(1e-5))
THETA = 10000.0
ROPE = {"rope_type": "llama3", "rope_theta": THETA, "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 32}


def build_model():
    torch.manual_seed(SEED)
    cfg = LlamaConfig(vocab_size=N_VOCAB, hidden_size=N_EMBD, intermediate_size=N_FF,
                      num_hidden_layers=N_LAYER, num_attention_heads=N_HEAD,
                      num_key_value_heads=N_KV, head_dim=HEAD_DIM, max_position_embeddings=N_CTX,
                      rms_norm_eps=EPS, rope_parameters=dict(ROPE), tie_word_embeddings=True,
                      attention_bias=False, mlp_bias=False, attn_implementation="eager",
                      bos_token_id=N_VOCAB - 1, eos_token_id=N_VOCAB - 1)
    model = LlamaForCausalLM(cfg)
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))
    model.eval()
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "untied"
    return cfg, model


def converter_rope_factors():
    """LlamaModel.generate_extra_tensors of llama.cpp's converter, verbatim in its arithmetic:
    float32 frequencies, factors as a float32 tensor."""
    base, dim = ROPE["rope_theta"], HEAD_DIM
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = ROPE["factor"], ROPE["low_freq_factor"], ROPE["high_freq_factor"]
    old_context_len = ROPE["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low
    high_freq_wavelen = old_context_len / high
    rope_factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            rope_factors.append(1)
        elif wavelen > low_freq_wavelen:
            rope_factors.append(factor)
        else:
            smooth = (old_context_len / wavelen - low) / (high - low)
            rope_factors.append(1 / ((1 - smooth) / factor + smooth))
    return torch.tensor(rope_factors, dtype=torch.float32)


def permute(w, n_head, n_head_kv):
    """LlamaModel.permute: GGUF's Q and K rows for RoPE on adjacent pairs."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def patch_float64(model, ff):
    float64_rms_norm(mod.LlamaRMSNorm)
    rot = model.model.rotary_emb
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM))
    inv = inv / (ff.to(torch.float64) if ff is not None else 1.0)
    if ff is not None:
        hf = rot.inv_freq.to(torch.float64)
        rel = float(((hf - inv).abs() / inv).max())
        assert rel < 1e-6, "the converter's factors are not transformers' llama3 scaling: %g" % rel
        assert rot.attention_scaling == 1.0

    float64_rope(rot, inv)

    float64_eager(mod)


def write_gguf(path, model, ff, tokens, merges):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("Tiny Llama 3 Random")
    w.add_block_count(N_LAYER)
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_freq_base(THETA)
    w.add_layer_norm_rms_eps(EPS)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_vocab_size(N_VOCAB)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    add_vocab(w, tokens, merges, "llama-bpe")
    names = {"input_layernorm.weight": "attn_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.v_proj.weight": "attn_v.weight",
             "self_attn.o_proj.weight": "attn_output.weight",
             "post_attention_layernorm.weight": "ffn_norm.weight",
             "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight"}
    def convert(name, t):  # the converter's Q/K permutation (LlamaModel.modify_tensors)
        if name.endswith("q_proj.weight"):
            return permute(t, N_HEAD, N_HEAD)
        if name.endswith("k_proj.weight"):
            return permute(t, N_HEAD, N_KV)
        return t

    add_tensors(w, model, names, convert)
    if ff is not None:
        w.add_tensor("rope_freqs.weight", np.ascontiguousarray(ff.numpy()))
    finish(w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True, help="llama.cpp's models/ggml-vocab-gpt-2.gguf")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--no-scaling", action="store_true",
                    help="run HF without the frequency factors (plain RoPE) on the file that "
                         "has them: a fixture test-llama3-model must fail on")
    args = ap.parse_args()

    cfg, model = build_model()
    tokens, merges = read_vocab(args.vocab)
    ff = converter_rope_factors()
    gguf_path = os.path.join(args.out, "tiny-llama3.gguf")
    write_gguf(gguf_path, model, ff, tokens, merges)

    model = model.double()
    patch_float64(model, None if args.no_scaling else ff)
    rng = np.random.default_rng(SEED)
    ids = rng.integers(0, N_VOCAB - 1, size=N_TOKENS).tolist()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    logits = out.logits[0].numpy()
    probs = np.stack([a[0].numpy() for a in out.attentions])
    # torch autograd: d log softmax(logits[n-1])[t] / d input embeddings, t the top-1
    target = int(np.argmax(logits[-1]))
    embd = model.model.embed_tokens(torch.tensor([ids])).detach().requires_grad_(True)
    lp = torch.log_softmax(model(inputs_embeds=embd).logits[0, -1], dim=-1)[target]
    lp.backward()
    grad = embd.grad[0].numpy()
    assert embd.grad.dtype == torch.float64
    assert out.logits.dtype == torch.float64 and out.attentions[0].dtype == torch.float64
    assert probs.shape == (N_LAYER, N_HEAD, N_TOKENS, N_TOKENS)

    f32_path = os.path.join(args.out, "arch-fixture-llama3.f32")
    np.concatenate([logits.reshape(-1), probs.reshape(-1), grad.reshape(-1)]).astype(
        "<f4").tofile(f32_path)
    with open(gguf_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "oracle": "transformers %s LlamaForCausalLM with rope_type llama3, float64 (RMSNorm, "
                  "RoPE angles and softmax patched to float64), eager attention"
                  % transformers.__version__,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "gguf": "0.19.0", "numpy": np.__version__},
        "model_file": "tiny-llama3.gguf", "model_sha256": sha, "seed": SEED,
        "config": {"n_vocab": N_VOCAB, "n_ctx": N_CTX, "n_embd": N_EMBD, "n_layer": N_LAYER,
                   "n_head": N_HEAD, "n_kv_head": N_KV, "head_dim": HEAD_DIM, "n_ff": N_FF,
                   "rms_norm_eps": EPS, "rope_parameters": ROPE,
                   "rope_freqs": [float(x) for x in ff], "scaled": not args.no_scaling},
        "ids": ids,
        "data_file": "arch-fixture-llama3.f32",
        "logits": {"offset": 0, "shape": [N_TOKENS, N_VOCAB]},
        "probs": {"offset": N_TOKENS * N_VOCAB, "shape": [N_LAYER, N_HEAD, N_TOKENS, N_TOKENS],
                  "layout": "[layer][head][query][key]"},
        "grad": {"offset": N_TOKENS * N_VOCAB + N_LAYER * N_HEAD * N_TOKENS * N_TOKENS,
                 "shape": [N_TOKENS, N_EMBD], "objective": "logp", "position": N_TOKENS - 1,
                 "target": target, "value": float(lp.item()),
                 "of": "the input embeddings (token_embd rows)"},
        "logit_std": float(logits.std()),
    }
    with open(os.path.join(args.out, "arch-fixture-llama3.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("wrote", gguf_path, os.path.getsize(gguf_path), "bytes; logits std %.3f" % logits.std(),
          "factors", [round(float(x), 4) for x in ff])


if __name__ == "__main__":
    sys.exit(main())
