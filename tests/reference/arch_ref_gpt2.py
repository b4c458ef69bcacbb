#!/usr/bin/env python3
"""arch_ref_gpt2.py — a tiny GPT-2 with random weights, its GGUF, and Hugging Face's float64
forward on it: the oracle of tests/engine/test-gpt2-model.c (issue 28 item 2).

No download: the model is GPT2LMHeadModel(GPT2Config(...)) with seeded random weights (every
LayerNorm weight and bias and every linear bias drawn too, so a missing bias or an RMSNorm in
place of LayerNorm changes the numbers). It is written to GGUF with gguf-py's GGUFWriter as
llama.cpp's converter does for GPT2LMHeadModel (vendor/llama.cpp/conversion/gpt2.py in the
llama-cpp-python 0.3.36 sdist: the keys gpt2.{block_count, context_length, embedding_length,
feed_forward_length = 4 n_embd, attention.head_count, attention.layer_norm_epsilon},
general.file_type; Conv1D weights c_attn, c_proj, c_fc transposed to (out, in); the tensor
names of gguf-py's GPT2 map; no output.weight, as the tied lm_head is not in the state dict).
The vocabulary is GPT-2's own first 511 tokens and 255 merges (from llama.cpp's
models/ggml-vocab-gpt-2.gguf, passed as --vocab) plus <|endoftext|> as id 511, so the file
tokenises like GPT-2 on the bytes and merges it keeps.

Then transformers runs the model in float64 (model.double(), eager attention,
output_attentions=True; GPT-2's eager path has no float32 cast while reorder_and_upcast_attn
is off, which the script asserts) on N_TOKENS random ids, and the fixture keeps the ids, every
position's logits and every head's probabilities.

Usage (tests/reference/README.md section 12):
  /tmp/h28-venv/bin/python tests/reference/arch_ref_gpt2.py --vocab PATH/ggml-vocab-gpt-2.gguf
Writes tests/reference/tiny-gpt2.gguf, arch-fixture-gpt2.json and arch-fixture-gpt2.f32.
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
from transformers import GPT2Config, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 28
N_VOCAB = 512
N_POSITIONS = 128
N_EMBD = 32
N_LAYER = 3
N_HEAD = 4
N_TOKENS = 96
# The file stores the epsilon as float32; HF is given that value so both sides use it.
EPS = float(np.float32(1e-5))


def build_model(activation):
    torch.manual_seed(SEED)
    cfg = GPT2Config(vocab_size=N_VOCAB, n_positions=N_POSITIONS, n_embd=N_EMBD,
                     n_layer=N_LAYER, n_head=N_HEAD, layer_norm_epsilon=EPS,
                     activation_function=activation, resid_pdrop=0.0, embd_pdrop=0.0,
                     attn_pdrop=0.0, bos_token_id=N_VOCAB - 1, eos_token_id=N_VOCAB - 1,
                     attn_implementation="eager")
    model = GPT2LMHeadModel(cfg)
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("wpe.weight"):
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            else:  # wte, and the c_attn, c_proj, c_fc matrices
                p.copy_(0.25 * torch.randn(p.shape, generator=g))
    model.eval()
    assert model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr(), "untied"
    assert not cfg.reorder_and_upcast_attn and not cfg.scale_attn_by_inverse_layer_idx
    return cfg, model


def read_vocab(path):
    r = gguf.GGUFReader(path)

    def strings(key):
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    tokens, merges = strings("tokenizer.ggml.tokens"), strings("tokenizer.ggml.merges")
    n_merges = N_VOCAB - 1 - 256
    toks = tokens[:N_VOCAB - 1]
    # GPT-2's ids 256.. are its merges in order: the kept merges make exactly the kept tokens
    for i in range(n_merges):
        a, b = merges[i].split(" ")
        assert toks[256 + i] == a + b, (i, merges[i], toks[256 + i])
    return toks + ["<|endoftext|>"], merges[:n_merges]


def write_gguf(path, cfg, model, tokens, merges):
    w = gguf.GGUFWriter(path, "gpt2")
    w.add_name("Tiny GPT2 Random")
    w.add_block_count(cfg.n_layer)
    w.add_context_length(cfg.n_positions)
    w.add_embedding_length(cfg.n_embd)
    w.add_feed_forward_length(4 * cfg.n_embd)
    w.add_head_count(cfg.n_head)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * (len(tokens) - 1) + [gguf.TokenType.CONTROL])
    w.add_token_merges(merges)
    w.add_bos_token_id(N_VOCAB - 1)
    w.add_eos_token_id(N_VOCAB - 1)
    names = {"ln_1.weight": "attn_norm.weight", "ln_1.bias": "attn_norm.bias",
             "attn.c_attn.weight": "attn_qkv.weight", "attn.c_attn.bias": "attn_qkv.bias",
             "attn.c_proj.weight": "attn_output.weight", "attn.c_proj.bias": "attn_output.bias",
             "ln_2.weight": "ffn_norm.weight", "ln_2.bias": "ffn_norm.bias",
             "mlp.c_fc.weight": "ffn_up.weight", "mlp.c_fc.bias": "ffn_up.bias",
             "mlp.c_proj.weight": "ffn_down.weight", "mlp.c_proj.bias": "ffn_down.bias"}
    # the safetensors state dict: lm_head is tied to wte, so the converter never sees it
    for name, t in model.state_dict().items():
        if name == "lm_head.weight" or name.endswith((".attn.bias", ".attn.masked_bias")):
            continue
        a = t.detach().to(torch.float32).numpy()
        if name.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight")):
            a = a.T  # Conv1D keeps (in, out)
        if name == "transformer.wte.weight":
            out = "token_embd.weight"
        elif name == "transformer.wpe.weight":
            out = "position_embd.weight"
        elif name.startswith("transformer.ln_f."):
            out = "output_norm." + name.rsplit(".", 1)[1]
        else:
            _, _, layer, rest = name.split(".", 3)
            out = "blk.%s.%s" % (layer, names[rest])
        w.add_tensor(out, np.ascontiguousarray(a))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True, help="llama.cpp's models/ggml-vocab-gpt-2.gguf")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--activation", default="gelu_new",
                    help="HF's activation (gelu_new = GPT-2's tanh form); another one, written "
                         "to another --out, is a fixture test-gpt2-model must fail on")
    args = ap.parse_args()

    cfg, model = build_model(args.activation)
    tokens, merges = read_vocab(args.vocab)
    gguf_path = os.path.join(args.out, "tiny-gpt2.gguf")
    write_gguf(gguf_path, cfg, model, tokens, merges)

    # HF in float64 on the float32 weights the file holds (they are float32 already)
    model = model.double()
    rng = np.random.default_rng(SEED)
    ids = rng.integers(0, N_VOCAB - 1, size=N_TOKENS).tolist()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    logits = out.logits[0].numpy()
    probs = np.stack([a[0].numpy() for a in out.attentions])  # (L, H, n, n)
    assert out.logits.dtype == torch.float64 and out.attentions[0].dtype == torch.float64
    assert probs.shape == (N_LAYER, N_HEAD, N_TOKENS, N_TOKENS)

    f32_path = os.path.join(args.out, "arch-fixture-gpt2.f32")
    blob = np.concatenate([logits.reshape(-1), probs.reshape(-1)]).astype("<f4")
    blob.tofile(f32_path)
    with open(gguf_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "oracle": "transformers %s GPT2LMHeadModel, float64, eager attention" % transformers.__version__,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "gguf": getattr(gguf, "__version__", "0.19.0"), "numpy": np.__version__},
        "model_file": "tiny-gpt2.gguf", "model_sha256": sha, "seed": SEED,
        "config": {"n_vocab": N_VOCAB, "n_positions": N_POSITIONS, "n_embd": N_EMBD,
                   "n_layer": N_LAYER, "n_head": N_HEAD, "n_ff": 4 * N_EMBD,
                   "layer_norm_epsilon": EPS, "activation": args.activation},
        "ids": ids,
        "data_file": "arch-fixture-gpt2.f32",
        "logits": {"offset": 0, "shape": [N_TOKENS, N_VOCAB]},
        "probs": {"offset": N_TOKENS * N_VOCAB, "shape": [N_LAYER, N_HEAD, N_TOKENS, N_TOKENS],
                  "layout": "[layer][head][query][key]"},
        "logit_std": float(logits.std()),
        "max_prob_offdiag": float(probs.max()),
    }
    with open(os.path.join(args.out, "arch-fixture-gpt2.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("wrote", gguf_path, os.path.getsize(gguf_path), "bytes; logits std %.3f" % logits.std())


if __name__ == "__main__":
    sys.exit(main())
