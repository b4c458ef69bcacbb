#!/usr/bin/env python3
"""arch_ref_phi3.py — a tiny Phi-3 with random weights, its GGUF, and Hugging Face's float64
forward on it: the oracle of tests/engine/test-phi3-model.c (issue 28 item 2).

As arch_ref_qwen3.py (same vocabulary, same fixture layout; tests/reference/README.md section
12): Phi3ForCausalLM(Phi3Config(...)) with seeded random weights, every RMSNorm weight drawn
too; written with gguf-py's GGUFWriter as llama.cpp's converter writes Phi3ForCausalLM
(conversion/phi.py's Phi3MiniModel.set_gguf_parameters: phi3.{context_length,
rope.scaling.original_context_length, embedding_length, feed_forward_length, block_count,
attention.head_count, attention.head_count_kv, attention.layer_norm_rms_epsilon,
rope.dimension_count = int(partial_rotary_factor * n_embd) // n_head, rope.freq_base,
attention.sliding_window}, general.file_type; gguf-py's tensor names: qkv_proj as the one
tensor attn_qkv, gate_up_proj as the one tensor ffn_up (gate rows first), lm_head as
output.weight, the model being untied as Phi-3 is; no permutation of Q and K, RoPE being
NeoX's). No LongRoPE (rope_parameters "default": the 4k models; no rope_factors tensors).

The configuration exercises what Phi-3 has beyond llama: a partial rotary factor of 0.75
(Phi-4-mini's; head_dim 8, so n_rot 6: three pairs turn, one does not), grouped-query heads
(4 over 2, as Phi-3-medium), and a sliding window of 32 on every layer over 96 tokens, which
Hugging Face applies (create_sliding_window_causal_mask) and Saccade applies too
(sc-arch-phi3.c; llama.cpp drops it).

transformers computes Phi3RMSNorm, the RoPE angles and the eager softmax in float32 whatever
the model's dtype (README section 6); they are replaced by the same expressions in float64.
The fixture also holds torch autograd's gradient of log p(top-1) at the last position with
respect to the input embeddings, for the backward pass.

  /tmp/h28arch-venv/bin/python tests/reference/arch_ref_phi3.py --vocab PATH/ggml-vocab-gpt-2.gguf
Writes tests/reference/tiny-phi3.gguf, arch-fixture-phi3.json and arch-fixture-phi3.f32.
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
from transformers import Phi3Config, Phi3ForCausalLM
from transformers.models.phi3 import modeling_phi3 as mod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_ref_gpt2 import read_vocab, N_VOCAB  # noqa: E402  (GPT-2's first 511 tokens)
from arch_ref_common import (add_tensors, add_vocab, finish, float64_eager,  # noqa: E402
                             float64_rms_norm, float64_rope)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 35
N_EMBD, N_FF, N_LAYER, N_HEAD, N_KV, N_CTX = 32, 64, 3, 4, 2, 128
HEAD_DIM = N_EMBD // N_HEAD
PARTIAL = 0.75
N_ROT = int(PARTIAL * N_EMBD) // N_HEAD  # the converter's expression
SWA = 32
N_TOKENS = 96
EPS = float(np.float32(1e-5))
THETA = 10000.0


def build_model():
    torch.manual_seed(SEED)
    cfg = Phi3Config(vocab_size=N_VOCAB, hidden_size=N_EMBD, intermediate_size=N_FF,
                     num_hidden_layers=N_LAYER, num_attention_heads=N_HEAD,
                     num_key_value_heads=N_KV, max_position_embeddings=N_CTX,
                     original_max_position_embeddings=N_CTX, rms_norm_eps=EPS,
                     rope_parameters={"rope_type": "default", "rope_theta": THETA,
                                      "partial_rotary_factor": PARTIAL},
                     sliding_window=SWA, tie_word_embeddings=False, resid_pdrop=0.0,
                     embd_pdrop=0.0, attention_dropout=0.0, attn_implementation="eager",
                     bos_token_id=N_VOCAB - 1, eos_token_id=N_VOCAB - 1,
                     pad_token_id=N_VOCAB - 1)
    model = Phi3ForCausalLM(cfg)
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))
    model.eval()
    assert model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr(), "tied"
    assert cfg.hidden_act == "silu"
    assert int(HEAD_DIM * PARTIAL) == N_ROT == 6, "HF's rotary dims are the converter's"
    return cfg, model


def patch_float64(model):
    float64_rms_norm(mod.Phi3RMSNorm)
    rot = model.model.rotary_emb
    inv = 1.0 / (THETA ** (torch.arange(0, N_ROT, 2, dtype=torch.float64) / N_ROT))
    assert torch.allclose(rot.inv_freq.to(torch.float64), inv, rtol=1e-6), "not HF's angles"

    float64_rope(rot, inv)

    float64_eager(mod)


def write_gguf(path, model, tokens, merges):
    w = gguf.GGUFWriter(path, "phi3")
    # not "phi3" or "phi-3" in the name: llama.cpp then sets attributes on "<s>", "</s>" and
    # "<unk>" (llama-vocab.cpp), which this GPT-2 vocabulary lacks, and refuses the file
    w.add_name("Tiny Random Phi 3")
    w.add_context_length(N_CTX)
    w.add_rope_scaling_orig_ctx_len(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_block_count(N_LAYER)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_dimension_count(N_ROT)
    w.add_rope_freq_base(THETA)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_sliding_window(SWA)
    add_vocab(w, tokens, merges, "gpt-2")
    names = {"input_layernorm.weight": "attn_norm.weight",
             "self_attn.qkv_proj.weight": "attn_qkv.weight",
             "self_attn.o_proj.weight": "attn_output.weight",
             "post_attention_layernorm.weight": "ffn_norm.weight",
             "mlp.gate_up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight"}
    add_tensors(w, model, names, tied=False)
    finish(w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True, help="llama.cpp's models/ggml-vocab-gpt-2.gguf")
    ap.add_argument("--out", default=HERE)
    args = ap.parse_args()

    cfg, model = build_model()
    tokens, merges = read_vocab(args.vocab)
    gguf_path = os.path.join(args.out, "tiny-phi3.gguf")
    write_gguf(gguf_path, model, tokens, merges)

    model = model.double()
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
    # transformers applied the window: query i sees keys i - SWA + 1 .. i, every layer
    qi, kj = np.meshgrid(np.arange(N_TOKENS), np.arange(N_TOKENS), indexing="ij")
    assert (probs[..., (kj <= qi - SWA) | (kj > qi)] == 0).all(), "no window applied"
    assert (probs[..., (kj > qi - SWA) & (kj <= qi)] > 0).all(), "a key inside the window masked"

    f32_path = os.path.join(args.out, "arch-fixture-phi3.f32")
    np.concatenate([logits.reshape(-1), probs.reshape(-1), grad.reshape(-1)]).astype(
        "<f4").tofile(f32_path)
    with open(gguf_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "oracle": "transformers %s Phi3ForCausalLM, float64 (RMSNorm, RoPE angles and softmax "
                  "patched to float64), eager attention, sliding window %d"
                  % (transformers.__version__, SWA),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "gguf": "0.19.0", "numpy": np.__version__},
        "model_file": "tiny-phi3.gguf", "model_sha256": sha, "seed": SEED,
        "config": {"n_vocab": N_VOCAB, "n_ctx": N_CTX, "n_embd": N_EMBD, "n_layer": N_LAYER,
                   "n_head": N_HEAD, "n_kv_head": N_KV, "head_dim": HEAD_DIM, "n_ff": N_FF,
                   "n_rot": N_ROT, "partial_rotary_factor": PARTIAL, "rms_norm_eps": EPS,
                   "rope_theta": THETA, "sliding_window": SWA, "tied": False},
        "ids": ids,
        "data_file": "arch-fixture-phi3.f32",
        "logits": {"offset": 0, "shape": [N_TOKENS, N_VOCAB]},
        "probs": {"offset": N_TOKENS * N_VOCAB, "shape": [N_LAYER, N_HEAD, N_TOKENS, N_TOKENS],
                  "layout": "[layer][head][query][key]"},
        "grad": {"offset": N_TOKENS * N_VOCAB + N_LAYER * N_HEAD * N_TOKENS * N_TOKENS,
                 "shape": [N_TOKENS, N_EMBD], "objective": "logp", "position": N_TOKENS - 1,
                 "target": target, "value": float(lp.item()),
                 "of": "the input embeddings (token_embd rows)"},
        "logit_std": float(logits.std()),
    }
    with open(os.path.join(args.out, "arch-fixture-phi3.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("wrote", gguf_path, os.path.getsize(gguf_path), "bytes; logits std %.3f" % logits.std())


if __name__ == "__main__":
    sys.exit(main())
