#!/usr/bin/env python3
"""arch_ref_mistral.py — a tiny Mistral (a llama body with a sliding window on every layer)
with random weights, its GGUF, and Hugging Face's float64 forward on it: the oracle of
tests/engine/test-mistral-model.c (issue 28 item 2).

As arch_ref_llama3.py (same vocabulary, same fixture layout; tests/reference/README.md section
12): MistralForCausalLM(MistralConfig(..., sliding_window=SWA)) with seeded random weights,
every RMSNorm weight drawn too. llama.cpp's converter registers MistralForCausalLM under
LlamaModel (conversion/llama.py): arch "llama", the keys llama.{block_count, context_length,
embedding_length, feed_forward_length, attention.head_count, attention.head_count_kv,
rope.freq_base, attention.layer_norm_rms_epsilon, attention.key_length,
attention.value_length, vocab_size, rope.dimension_count}, Q and K rows through
LlamaModel.permute, no output.weight when tied — and no window: llama.cpp's llama runs every
layer globally (src/models/llama.cpp), so a converted Mistral 7B v0.1 attends past its 4096
keys there. The file written here adds llama.attention.sliding_window = SWA (the key the
converter writes for the families whose window llama.cpp applies), which Saccade's llama
reads as a window on every layer; the comparison is with transformers, which applies it.

head_dim 16 is not n_embd / heads (8); the run is N_TOKENS = 96 tokens, six windows of 16.
transformers' float32 spots (RMSNorm, RoPE angles, eager softmax) are float64 as in
arch_ref_qwen3.py; the script asserts that every probability outside a query's window is 0,
so transformers did apply the window. The fixture also holds torch autograd's gradient of
log p(top-1) at the last position with respect to the input embeddings.

  /tmp/h28-venv/bin/python tests/reference/arch_ref_mistral.py --vocab PATH/ggml-vocab-gpt-2.gguf
Writes tests/reference/tiny-mistral.gguf, arch-fixture-mistral.json and arch-fixture-mistral.f32.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch
import gguf
import transformers
from transformers import MistralConfig, MistralForCausalLM
from transformers.models.mistral import modeling_mistral as mod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_ref_gpt2 import read_vocab, N_VOCAB  # noqa: E402  (GPT-2's first 511 tokens)
from arch_ref_common import (add_tensors, add_vocab, finish, float64_eager,  # noqa: E402
                             float64_rms_norm, float64_rope)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 33
N_EMBD, N_FF, N_LAYER, N_HEAD, N_KV, HEAD_DIM, N_CTX = 32, 64, 3, 4, 2, 16, 128
N_TOKENS = 96
EPS = float(np.float32(1e-5))
THETA = 10000.0
SWA = 16


def build_model():
    torch.manual_seed(SEED)
    cfg = MistralConfig(vocab_size=N_VOCAB, hidden_size=N_EMBD, intermediate_size=N_FF,
                        num_hidden_layers=N_LAYER, num_attention_heads=N_HEAD,
                        num_key_value_heads=N_KV, head_dim=HEAD_DIM,
                        max_position_embeddings=N_CTX, rms_norm_eps=EPS,
                        rope_parameters={"rope_type": "default", "rope_theta": THETA},
                        sliding_window=SWA, tie_word_embeddings=True,
                        attn_implementation="eager", bos_token_id=N_VOCAB - 1,
                        eos_token_id=N_VOCAB - 1)
    model = MistralForCausalLM(cfg)
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


def permute(w, n_head, n_head_kv):
    """LlamaModel.permute: GGUF's Q and K rows for RoPE on adjacent pairs."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def patch_float64(model):
    float64_rms_norm(mod.MistralRMSNorm)
    rot = model.model.rotary_emb
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM))

    float64_rope(rot, inv)

    float64_eager(mod)


def write_gguf(path, model, tokens, merges):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("Tiny Mistral Random")
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
    w.add_sliding_window(SWA)  # not written by the converter for Mistral: see the docstring
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
    finish(w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True, help="llama.cpp's models/ggml-vocab-gpt-2.gguf")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--no-window", action="store_true",
                    help="run HF without the sliding window (sliding_window None, as llama.cpp "
                         "runs a converted Mistral) on the file that has it: a fixture "
                         "test-mistral-model must fail on")
    args = ap.parse_args()

    cfg, model = build_model()
    tokens, merges = read_vocab(args.vocab)
    gguf_path = os.path.join(args.out, "tiny-mistral.gguf")
    write_gguf(gguf_path, model, tokens, merges)

    model = model.double()
    if args.no_window:
        model.config.sliding_window = None
    patch_float64(model)
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
    qi, kj = np.meshgrid(np.arange(N_TOKENS), np.arange(N_TOKENS), indexing="ij")
    outside = (kj <= qi - SWA) | (kj > qi)
    assert (probs[..., outside] == 0).all() or args.no_window, "transformers applied no window"
    assert args.no_window == bool((probs[..., kj <= qi - SWA] > 0).any())

    f32_path = os.path.join(args.out, "arch-fixture-mistral.f32")
    np.concatenate([logits.reshape(-1), probs.reshape(-1), grad.reshape(-1)]).astype(
        "<f4").tofile(f32_path)
    with open(gguf_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "oracle": "transformers %s MistralForCausalLM, float64 (RMSNorm, RoPE angles and "
                  "softmax patched to float64), eager attention, sliding window %s"
                  % (transformers.__version__, "off" if args.no_window else SWA),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "gguf": "0.19.0", "numpy": np.__version__},
        "model_file": "tiny-mistral.gguf", "model_sha256": sha, "seed": SEED,
        "config": {"n_vocab": N_VOCAB, "n_ctx": N_CTX, "n_embd": N_EMBD, "n_layer": N_LAYER,
                   "n_head": N_HEAD, "n_kv_head": N_KV, "head_dim": HEAD_DIM, "n_ff": N_FF,
                   "rms_norm_eps": EPS, "rope_theta": THETA, "sliding_window": SWA,
                   "window_applied": not args.no_window},
        "ids": ids,
        "data_file": "arch-fixture-mistral.f32",
        "logits": {"offset": 0, "shape": [N_TOKENS, N_VOCAB]},
        "probs": {"offset": N_TOKENS * N_VOCAB, "shape": [N_LAYER, N_HEAD, N_TOKENS, N_TOKENS],
                  "layout": "[layer][head][query][key]"},
        "grad": {"offset": N_TOKENS * N_VOCAB + N_LAYER * N_HEAD * N_TOKENS * N_TOKENS,
                 "shape": [N_TOKENS, N_EMBD], "objective": "logp", "position": N_TOKENS - 1,
                 "target": target, "value": float(lp.item()),
                 "of": "the input embeddings (token_embd rows)"},
        "logit_std": float(logits.std()),
    }
    with open(os.path.join(args.out, "arch-fixture-mistral.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("wrote", gguf_path, os.path.getsize(gguf_path), "bytes; logits std %.3f" % logits.std())


if __name__ == "__main__":
    sys.exit(main())
