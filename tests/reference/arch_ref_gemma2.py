#!/usr/bin/env python3
"""arch_ref_gemma2.py — a tiny Gemma 2 with random weights, its GGUF, and Hugging Face's
float64 forward on it: the oracle of tests/engine/test-gemma2-model.c (issue 28 item 2).

As arch_ref_qwen3.py (same vocabulary, same fixture layout with the gradient through both
soft-caps;
tests/reference/README.md section 12): Gemma2ForCausalLM(Gemma2Config(...)) with seeded random
weights, every RMSNorm weight drawn too; written with gguf-py's GGUFWriter as llama.cpp's
converter writes Gemma 2 (conversion/gemma.py's Gemma2Model: gemma2.{context_length,
embedding_length, block_count, feed_forward_length, attention.head_count,
attention.head_count_kv, attention.layer_norm_rms_epsilon, attention.key_length,
attention.value_length, attn_logit_softcapping, final_logit_softcapping,
attention.sliding_window}, no rope.freq_base (llama.cpp's default 10^4 is transformers' too);
every norm weight stored as 1 + w, Gemma's RMSNorm scale; no Q/K permutation, Gemma's RoPE
being NeoX's; no output.weight, the lm_head being tied).

The soft-caps are small (attention 4, final 3, where the released models have 50 and 30) so
that with these random weights both bend the numbers: the test must fail with either off.
query_pre_attn_scalar = head_dim makes transformers' scale 1/sqrt(head_dim), which llama.cpp
uses for every Gemma 2 but the 27B. Layers 0 and 2 are local (window 8), 1 and 3 global; the
run is 96 ids.

transformers computes Gemma2RMSNorm (x.float()), the RoPE angles and the eager softmax
(dtype=float32) in float32 whatever the model's dtype; they are replaced by the same
expressions in float64. The embedding scale sqrt(hidden_size) is a float32 buffer in
transformers, the float32 sqrtf(n_embd) of llama.cpp: both use that same value.

  /tmp/h28-venv/bin/python tests/reference/arch_ref_gemma2.py --vocab PATH/ggml-vocab-gpt-2.gguf
Writes tests/reference/tiny-gemma2.gguf, arch-fixture-gemma2.json and arch-fixture-gemma2.f32.
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
from transformers import Gemma2Config, Gemma2ForCausalLM
from transformers.models.gemma2 import modeling_gemma2 as mod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_ref_gpt2 import read_vocab, N_VOCAB  # noqa: E402  (GPT-2's first 511 tokens)
from arch_ref_common import add_tensors, add_vocab, finish  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 34
N_EMBD, N_FF, N_LAYER, N_HEAD, N_KV, HEAD_DIM, N_CTX = 32, 64, 4, 4, 2, 16, 128
N_TOKENS = 96
EPS = float(np.float32(1e-6))
THETA = 10000.0
SWA = 8
ATTN_CAP, FINAL_CAP = 4.0, 3.0


def build_model():
    torch.manual_seed(SEED)
    cfg = Gemma2Config(vocab_size=N_VOCAB, hidden_size=N_EMBD, intermediate_size=N_FF,
                       num_hidden_layers=N_LAYER, num_attention_heads=N_HEAD,
                       num_key_value_heads=N_KV, head_dim=HEAD_DIM,
                       max_position_embeddings=N_CTX, rms_norm_eps=EPS,
                       rope_parameters={"rope_type": "default", "rope_theta": THETA},
                       query_pre_attn_scalar=HEAD_DIM, sliding_window=SWA,
                       attn_logit_softcapping=ATTN_CAP, final_logit_softcapping=FINAL_CAP,
                       hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                       attn_implementation="eager", bos_token_id=N_VOCAB - 1,
                       eos_token_id=N_VOCAB - 1, pad_token_id=N_VOCAB - 1)
    model = Gemma2ForCausalLM(cfg)
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))  # used as 1 + w
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))
    model.eval()
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "untied"
    assert cfg.layer_types == ["sliding_attention", "full_attention"] * (N_LAYER // 2)
    return cfg, model


def patch_float64(model):
    def rms_forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * (1.0 + self.weight)

    mod.Gemma2RMSNorm.forward = rms_forward
    rot = model.model.rotary_emb
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM))

    def rope_forward(x, position_ids, *args, **kwargs):
        freqs = position_ids[..., None].to(torch.float64) * inv
        emb = torch.cat((freqs, freqs), dim=-1)
        return ((emb.cos() * rot.attention_scaling).to(x.dtype),
                (emb.sin() * rot.attention_scaling).to(x.dtype))

    rot.forward = rope_forward

    def eager(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
              softcap=None, **kwargs):
        k = mod.repeat_kv(key, module.num_key_value_groups)
        v = mod.repeat_kv(value, module.num_key_value_groups)
        w = torch.matmul(query, k.transpose(2, 3)) * scaling
        if softcap is not None:
            w = torch.tanh(w / softcap) * softcap
        if attention_mask is not None:
            w = w + attention_mask
        w = torch.softmax(w, dim=-1)  # in the tensors' dtype (float64)
        return torch.matmul(w, v).transpose(1, 2).contiguous(), w

    mod.eager_attention_forward = eager


def write_gguf(path, model, tokens, merges):
    w = gguf.GGUFWriter(path, "gemma2")
    w.add_name("Tiny Gemma 2 Random")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_layer_norm_rms_eps(EPS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_attn_logit_softcapping(ATTN_CAP)
    w.add_final_logit_softcapping(FINAL_CAP)
    w.add_sliding_window(SWA)
    add_vocab(w, tokens, merges, "gpt-2")  # llama.cpp's name; it refuses Saccade's alias "gpt2"
    names = {"input_layernorm.weight": "attn_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.v_proj.weight": "attn_v.weight",
             "self_attn.o_proj.weight": "attn_output.weight",
             "post_attention_layernorm.weight": "post_attention_norm.weight",
             "pre_feedforward_layernorm.weight": "ffn_norm.weight",
             "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
             "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight"}
    def convert(name, t):
        return t + 1 if name.endswith("norm.weight") else t  # Gemma2Model.modify_tensors

    add_tensors(w, model, names, convert)
    finish(w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True, help="llama.cpp's models/ggml-vocab-gpt-2.gguf")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--no-attn-softcap", action="store_true",
                    help="run HF without the attention soft-cap on the file that has it: a "
                         "fixture test-gemma2-model must fail on")
    ap.add_argument("--no-final-softcap", action="store_true",
                    help="the same without the final-logit soft-cap")
    args = ap.parse_args()

    cfg, model = build_model()
    tokens, merges = read_vocab(args.vocab)
    gguf_path = os.path.join(args.out, "tiny-gemma2.gguf")
    write_gguf(gguf_path, model, tokens, merges)

    model = model.double()
    if args.no_attn_softcap:
        for layer in model.model.layers:
            layer.self_attn.attn_logit_softcapping = None
    if args.no_final_softcap:
        model.config.final_logit_softcapping = None
    patch_float64(model)
    rng = np.random.default_rng(SEED)
    ids = rng.integers(0, N_VOCAB - 1, size=N_TOKENS).tolist()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    logits = out.logits[0].numpy()
    probs = np.stack([a[0].numpy() for a in out.attentions])
    assert out.logits.dtype == torch.float64 and out.attentions[0].dtype == torch.float64
    assert probs.shape == (N_LAYER, N_HEAD, N_TOKENS, N_TOKENS)
    qi, kj = np.meshgrid(np.arange(N_TOKENS), np.arange(N_TOKENS), indexing="ij")
    assert (probs[0][:, kj <= qi - SWA] == 0).all(), "layer 0 is not local"
    assert (probs[1][:, kj <= qi - SWA] > 0).any(), "layer 1 is not global"
    if not args.no_final_softcap:
        assert np.abs(logits).max() < FINAL_CAP
    # torch autograd: d log softmax(logits[n-1])[t] / d input embeddings, t the top-1, through
    # both soft-caps. The embeddings are the token_embd rows themselves: transformers' scaled
    # embedding (Gemma2TextScaledWordEmbedding) multiplies them by its sqrt(n_embd) buffer
    # inside embed_tokens, so the rows are taken from its weight and scaled here the same way.
    target = int(np.argmax(logits[-1]))
    emb = model.model.embed_tokens
    embd = emb.weight[torch.tensor([ids])].detach().requires_grad_(True)
    lp = torch.log_softmax(model(inputs_embeds=embd * emb.embed_scale.to(embd.dtype)).logits[0, -1],
                           dim=-1)[target]
    lp.backward()
    grad = embd.grad[0].numpy()
    assert embd.grad.dtype == torch.float64

    f32_path = os.path.join(args.out, "arch-fixture-gemma2.f32")
    np.concatenate([logits.reshape(-1), probs.reshape(-1), grad.reshape(-1)]).astype(
        "<f4").tofile(f32_path)
    with open(gguf_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "oracle": "transformers %s Gemma2ForCausalLM, float64 (RMSNorm, RoPE angles and softmax "
                  "patched to float64), eager attention; attention soft-cap %s, final %s"
                  % (transformers.__version__, "off" if args.no_attn_softcap else ATTN_CAP,
                     "off" if args.no_final_softcap else FINAL_CAP),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "gguf": "0.19.0", "numpy": np.__version__},
        "model_file": "tiny-gemma2.gguf", "model_sha256": sha, "seed": SEED,
        "config": {"n_vocab": N_VOCAB, "n_ctx": N_CTX, "n_embd": N_EMBD, "n_layer": N_LAYER,
                   "n_head": N_HEAD, "n_kv_head": N_KV, "head_dim": HEAD_DIM, "n_ff": N_FF,
                   "rms_norm_eps": EPS, "rope_theta": THETA, "sliding_window": SWA,
                   "attn_logit_softcapping": ATTN_CAP, "final_logit_softcapping": FINAL_CAP},
        "ids": ids,
        "data_file": "arch-fixture-gemma2.f32",
        "logits": {"offset": 0, "shape": [N_TOKENS, N_VOCAB]},
        "probs": {"offset": N_TOKENS * N_VOCAB, "shape": [N_LAYER, N_HEAD, N_TOKENS, N_TOKENS],
                  "layout": "[layer][head][query][key]"},
        "grad": {"offset": N_TOKENS * N_VOCAB + N_LAYER * N_HEAD * N_TOKENS * N_TOKENS,
                 "shape": [N_TOKENS, N_EMBD], "objective": "logp", "position": N_TOKENS - 1,
                 "target": target, "value": float(lp.item()),
                 "of": "the input embeddings (token_embd rows)"},
        "logit_std": float(logits.std()),
    }
    with open(os.path.join(args.out, "arch-fixture-gemma2.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("wrote", gguf_path, os.path.getsize(gguf_path), "bytes; logits std %.3f" % logits.std(),
          "max |logit| %.3f" % np.abs(logits).max())


if __name__ == "__main__":
    sys.exit(main())
