"""arch_ref_common.py — what the tiny-architecture oracles (arch_ref_{qwen3,llama3,mistral,
phi3,gemma2}.py) share: transformers' float32 spots replaced by float64 (RMSNorm, the RoPE
angles, the eager softmax) and the GGUF file's vocabulary and tensors written as llama.cpp's
converter writes them. Each script keeps what is its own: the model, its hyperparameter keys,
its tensor names and its fixture. Not a test itself; see tests/reference/README.md section 12.
"""
import numpy as np
import torch
import gguf

from arch_ref_gpt2 import N_VOCAB


def float64_rms_norm(rms_class):
    """RMSNorm x * rsqrt(mean(x^2) + eps) * w in the tensors' dtype (transformers casts to
    float32 inside)."""
    def rms_forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * y

    rms_class.forward = rms_forward


def float64_rope(rot, inv):
    """The rotary embedding's cos and sin from the float64 inverse frequencies @inv (NeoX
    halves: the angles repeated), scaled as transformers scales them."""
    def rope_forward(x, position_ids):
        freqs = position_ids[..., None].to(torch.float64) * inv
        emb = torch.cat((freqs, freqs), dim=-1)
        return ((emb.cos() * rot.attention_scaling).to(x.dtype),
                (emb.sin() * rot.attention_scaling).to(x.dtype))

    rot.forward = rope_forward


def float64_eager(mod):
    """The eager attention of modeling module @mod with its softmax in the tensors' dtype
    (transformers' runs in float32)."""
    def eager(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        k = mod.repeat_kv(key, module.num_key_value_groups)
        v = mod.repeat_kv(value, module.num_key_value_groups)
        w = torch.matmul(query, k.transpose(2, 3)) * scaling
        if attention_mask is not None:
            w = w + attention_mask
        w = torch.softmax(w, dim=-1)  # in the tensors' dtype (float64)
        return torch.matmul(w, v).transpose(1, 2).contiguous(), w

    mod.eager_attention_forward = eager


def add_vocab(w, tokens, merges, pre):
    """GPT-2's first tokens (arch_ref_gpt2.read_vocab) as a "gpt2" BPE vocabulary with the
    pre-tokenizer @pre, the last token a control token and both BOS and EOS."""
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * (len(tokens) - 1) + [gguf.TokenType.CONTROL])
    w.add_token_merges(merges)
    w.add_bos_token_id(N_VOCAB - 1)
    w.add_eos_token_id(N_VOCAB - 1)


def add_tensors(w, model, names, convert=None, tied=True):
    """Every tensor of @model in float32 under llama.cpp's name: token_embd, output_norm,
    output (untied only: a tied lm_head is not in the safetensors the converter reads) and
    blk.N.<names[rest]>; @convert(name, tensor) may rewrite a tensor first (the converter's
    Q/K permutation, Gemma's norm + 1)."""
    for name, t in model.state_dict().items():
        if name == "lm_head.weight" and tied:
            continue
        t = t.detach().to(torch.float32)
        if convert is not None:
            t = convert(name, t)
        a = np.ascontiguousarray(t.numpy())
        if name == "model.embed_tokens.weight":
            out = "token_embd.weight"
        elif name == "model.norm.weight":
            out = "output_norm.weight"
        elif name == "lm_head.weight":
            out = "output.weight"
        else:
            _, _, layer, rest = name.split(".", 3)
            out = "blk.%s.%s" % (layer, names[rest])
        w.add_tensor(out, a)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
