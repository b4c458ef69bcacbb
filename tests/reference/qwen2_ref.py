#!/usr/bin/env python3
"""Independent float64 numpy Qwen2 forward pass; writes attention-fixture-qwen2.{json,f32}.

What it is
    A from-the-definition Qwen2 forward pass (GGUF arch "qwen2": Qwen2, Qwen2.5, Qwen2.5-Coder)
    that imports nothing from the repository and reads the GGUF only through gguf-py
    (gguf.GGUFReader, gguf.quants.dequantize). Every weight is the exact float32 value of its
    dequantised block, widened to float64 where it is used; all arithmetic is float64. It is the
    oracle for Saccade's attention probabilities (every layer and head, max abs error <= 1e-4)
    and for its logits in exact arithmetic.

Sources for the architecture (read, not copied)
    - llama.cpp src/models/qwen2.cpp (the copy vendored in llama-cpp-python 0.3.36): RMSNorm
      before attention and FFN, Q, K, V projections with biases (create_tensor_qkv: attn_q.bias,
      attn_k.bias, attn_v.bias added to the projections), RoPE on Q and K after the biases,
      kq_scale 1/sqrt(head_dim), attention output without bias, residual, SwiGLU FFN
      (LLM_FFN_SILU + LLM_FFN_PAR: silu(gate) * up), final RMSNorm, output.weight (or the token
      embedding when the file has none), optional output.bias (absent here);
      llama_model_rope_type: LLM_ARCH_QWEN2 is LLAMA_ROPE_TYPE_NEOX (pair i with i + d/2).
    - Hugging Face transformers models/qwen2/modeling_qwen2.py (Qwen2Attention: q_proj, k_proj,
      v_proj with bias=True, o_proj without; rotate_half RoPE, i.e. the same NEOX pairing;
      scaling head_dim ** -0.5; GQA repeat_kv; Qwen2MLP down(act(gate(x)) * up(x)) with silu).
    GGUF convention: Qwen2's Q and K rows are stored unpermuted (convert_hf_to_gguf.py's Qwen2Model
    does not apply LlamaModel.permute), which is why the rotation pairs (i, i + d/2).

Forward (n tokens at positions 0..n-1, no KV cache, no BOS: tokenizer.ggml.add_bos_token false)
    x = E[ids]
    per layer l: h = rms(x) * attn_norm; q = h Wq^T + bq, k = h Wk^T + bk, v = h Wv^T + bv
    (14 query heads, 2 kv heads, head_dim 64; query head h uses kv head h // 7);
    q, k = RoPE_NEOX(q, k; base rope.freq_base = 1e6); P = softmax(q k^T / 8) over keys j <= i
    (masked cells exactly 0); o = P v; x += o Wo^T; h = rms(x) * ffn_norm;
    x += (silu(h Wg^T) * (h Wu^T)) Wd^T.  logits = (rms(x) * output_norm) W_out^T with
    W_out = output.weight (this file has one, Q8_0). eps = qwen2.attention.layer_norm_rms_epsilon
    (float32 1e-6) inside the square root.

What it writes (next to this script)
    attention-fixture-qwen2.f32   raw little-endian float32, no header
    attention-fixture-qwen2.json  offsets (bytes) and counts (float32 elements), as the Gemma 3
                                  attention fixture (gemma3_ref.py); see tests/reference/README.md.
    Per prompt: "attention" [24][14][len(rows)][n] (layer, head, stored query row, key), the full
    row of every stored query (zeros included); "rows": all positions for the short prompts, a
    sample for the long one. "logits" at the stored logit positions: the strided vocabulary
    slice (ids 0, 128, ...), plus the reference's top-32 ids and logits and the full-row
    mean/std in the JSON.

Cross-check with llama.cpp (optional, --llamacpp): llama.cpp's logits on the same ids, on the
real Q4_K_M file (F16 KV cache) and on an all-F32 copy of it (F32 KV cache), compared with the
reference's (max|d|/std, rms/std, top-1); recorded under "reference_vs_llamacpp".

How to rerun
    pip install gguf==0.19.0 numpy [llama-cpp-python==0.3.36 for --llamacpp, see README]
    python3 tests/reference/qwen2_ref.py [--llamacpp] [MODEL.gguf]
    (model: argument, else $SACCADE_QWEN2_MODEL, else
    data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf). The ids are tokenized by llama.cpp
    (vocab_only), so llama-cpp-python is needed in any case.
    python3 tests/reference/qwen2_ref.py --1.5b [--llamacpp [--no-f32-copy]] [MODEL.gguf]
    does the same for Qwen2.5-Coder-1.5B-Instruct (28 layers, 12 query heads over 2 KV heads of
    128; model: argument, else $SACCADE_QWEN2_15B_MODEL, else
    data/models/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf) and writes
    attention-fixture-qwen2-1.5b.{json,f32}, with fewer stored rows (VARIANTS).
    --no-f32-copy leaves out llama.cpp on the all-F32 copy (7.1 GB for the 1.5B; the 0.5B's
    copy validated this same code to float32 rounding), keeping the Q4_K_M comparison.

Memory: weights are dequantised a layer at a time for all prompts together (forward_many), so
the float64 pass holds one layer (0.37 GB for the 1.5B) rather than the model.
"""

import hashlib
import json
import os
import sys
import time

import numpy as np
import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf")
DEFAULT_MODEL_15B = os.path.join(ROOT, "data", "models",
                                 "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf")

VOCAB_STRIDE = 128      # stored logit slice: ids 0, 128, ..., 151808 (1187 entries)
TOP_K = 32
FULL_ROWS_MAX = 40      # prompts up to this length store every query row


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


class Qwen2:
    """The model's weights (float32 as dequantised; widened to float64 where used) and
    hyperparameters."""

    def __init__(self, path):
        self.path = path
        r = gguf.GGUFReader(path)
        self.reader = r

        def key(name, default=None):
            f = r.fields.get(name)
            return default if f is None else f.contents()

        assert key("general.architecture") == "qwen2", key("general.architecture")
        p = "qwen2."
        self.n_layer = int(key(p + "block_count"))
        self.n_embd = int(key(p + "embedding_length"))
        self.n_head = int(key(p + "attention.head_count"))
        self.n_kv = int(key(p + "attention.head_count_kv"))
        self.head_dim = int(key(p + "attention.key_length", self.n_embd // self.n_head))
        assert int(key(p + "attention.value_length", self.head_dim)) == self.head_dim
        self.n_rot = int(key(p + "rope.dimension_count", self.head_dim))
        assert self.n_rot == self.head_dim  # llama.cpp asserts it for qwen2
        self.n_ff = int(key(p + "feed_forward_length"))
        self.eps = float(np.float32(key(p + "attention.layer_norm_rms_epsilon")))
        self.rope_base = float(np.float32(key(p + "rope.freq_base", 10000.0)))
        assert key(p + "rope.scaling.type") is None and key(p + "rope.scaling.factor") is None
        assert key(p + "attention.sliding_window") is None
        self.q_scale = 1.0 / np.sqrt(self.head_dim)
        self.T = {t.name: t for t in r.tensors}
        assert "output.bias" not in self.T
        # Nothing is dequantised here: a layer's matrices are dequantised when the forward
        # pass reaches it and dropped after (the 1.5B model is 7.1 GB in float32), the
        # embedding rows of the ids only, the output matrix in chunks of rows. Blocks are
        # dequantised whole either way, so the values are those of dequantising the tensor.
        E = self.T["token_embd.weight"]
        self.n_vocab = int(E.shape[1])
        assert [int(x) for x in E.shape] == [self.n_embd, self.n_vocab]
        self.tied = "output.weight" not in self.T
        self.out_name = "token_embd.weight" if self.tied else "output.weight"
        assert [int(x) for x in self.T[self.out_name].shape] == [self.n_embd, self.n_vocab]

    @property
    def E(self):
        """The whole token embedding, float32 (qk_ref.py's forward reads it)."""
        return self.dequant("token_embd.weight")

    def dequant(self, name, rows=None):
        """Tensor @name as float32 (rows, cols) or (n,), as dequantised; @rows: only those
        rows (an index array or a slice) of a matrix."""
        t = self.T[name]
        data = t.data if rows is None else t.data[rows]
        w = np.asarray(gguf.quants.dequantize(data, t.tensor_type), dtype=np.float32)
        if len(t.shape) == 1:
            return w.reshape(int(t.shape[0]))
        return w.reshape(-1, int(t.shape[0]))

    def hparams(self):
        return {"n_layer": self.n_layer, "n_embd": self.n_embd, "n_head": self.n_head,
                "n_head_kv": self.n_kv, "head_dim": self.head_dim, "n_rot": self.n_rot,
                "n_ff": self.n_ff, "n_vocab": self.n_vocab, "rms_eps": self.eps,
                "rope_freq_base": self.rope_base, "query_scale": self.q_scale,
                "tied_output": self.tied, "qkv_bias": True,
                "rope": "NEOX (pairs i, i + head_dim/2)", "ffn": "silu(gate) * up",
                "tensor_types": sorted({t.tensor_type.name for t in self.reader.tensors})}

    def w64(self, name):
        return self.dequant(name).astype(np.float64)

    def rms(self, x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps) * w

    def rope(self, x):
        """x: (n, heads, d); NEOX rotation of pair (i, i + d/2) by pos * base^(-2i/d)."""
        n, _, d = x.shape
        half = d // 2
        inv = self.rope_base ** (-np.arange(half, dtype=np.float64) * 2.0 / d)
        ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)

    @staticmethod
    def silu(x):
        return x / (1.0 + np.exp(-x))

    def forward_many(self, ids_list, rows_list, lpos_list):
        """Every prompt of @ids_list through the model, layer by layer (each layer's weights
        dequantised once for all prompts). Returns, per prompt, (probs: [L] of (H, R, n)
        float64, the query rows rows_list[k] of each head, {pos: logits f64} at
        lpos_list[k])."""
        H, D, G = self.n_head, self.head_dim, self.n_head // self.n_kv
        xs = [self.dequant("token_embd.weight", np.asarray(ids)).astype(np.float64)
              for ids in ids_list]
        probs = [[] for _ in ids_list]
        for l in range(self.n_layer):
            b = "blk.%d." % l
            w = {k: self.w64(b + k) for k in (
                "attn_norm.weight", "attn_q.weight", "attn_q.bias", "attn_k.weight",
                "attn_k.bias", "attn_v.weight", "attn_v.bias", "attn_output.weight",
                "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight")}
            for pi, x in enumerate(xs):
                n = x.shape[0]
                keep = np.arange(n)[None, :] <= np.arange(n)[:, None]
                h = self.rms(x, w["attn_norm.weight"])
                q = (h @ w["attn_q.weight"].T + w["attn_q.bias"]).reshape(n, H, D)
                k = (h @ w["attn_k.weight"].T + w["attn_k.bias"]).reshape(n, self.n_kv, D)
                v = (h @ w["attn_v.weight"].T + w["attn_v.bias"]).reshape(n, self.n_kv, D)
                q = self.rope(q) * self.q_scale
                k = self.rope(k)
                P = np.empty((H, n, n))
                o = np.empty((n, H, D))
                for hh in range(H):
                    kv = hh // G
                    sc = q[:, hh, :] @ k[:, kv, :].T
                    sc = np.where(keep, sc, -np.inf)
                    e = np.exp(sc - sc.max(-1, keepdims=True))
                    e[~keep] = 0.0
                    P[hh] = e / e.sum(-1, keepdims=True)
                    o[:, hh, :] = P[hh] @ v[:, kv, :]
                probs[pi].append(P[:, rows_list[pi], :])
                x = x + o.reshape(n, H * D) @ w["attn_output.weight"].T
                h = self.rms(x, w["ffn_norm.weight"])
                f = self.silu(h @ w["ffn_gate.weight"].T) * (h @ w["ffn_up.weight"].T)
                xs[pi] = x + f @ w["ffn_down.weight"].T
            del w
        on = self.w64("output_norm.weight")
        hfs = [self.rms(x, on) for x in xs]
        logits = [{p: np.zeros(self.n_vocab) for p in lpos} for lpos in lpos_list]
        for c0 in range(0, self.n_vocab, 32768):
            wc = self.dequant(self.out_name, slice(c0, c0 + 32768)).astype(np.float64)
            for pi, lpos in enumerate(lpos_list):
                for p in lpos:
                    logits[pi][p][c0:c0 + 32768] = wc @ hfs[pi][p]
        return list(zip(probs, logits))


# ---- prompts ------------------------------------------------------------------------------

SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def chat(user):
    """Qwen2.5's chat template (tokenizer.chat_template of the GGUF) for one user turn, with
    its default system prompt."""
    return ("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n" + user
            + "<|im_end|>\n<|im_start|>assistant\n")


LONG_TEXT = (
    "Attention in a transformer is a way for each position in a sequence to gather information "
    "from the other positions. Every token is turned into three vectors: a query, a key and a "
    "value. The query of the current token is compared with the keys of earlier tokens by a dot "
    "product, the scores are scaled, and a softmax turns them into weights that sum to one. "
    "Qwen2 adds a bias to every query, key and value, and rotates queries and keys by their "
    "position with a base of one million, so that far tokens still get distinct angles. "
    "注意力的本质是可微的软寻址：用一个提问去匹配所有候选的索引标签，按匹配度加权取回内容。"
    "def softmax(x):\n    e = np.exp(x - x.max())\n    return e / e.sum()\n"
    "Whether the attention weights explain the decisions of a model is a question that has been "
    "debated for years; a careful study compares the weights with the effect of removing a "
    "token or a head. "
)

PY_FIB = ("def fibonacci(n):\n    if n < 2:\n        return n\n"
          "    return fibonacci(n - 1) + fibonacci(n - 2)\n")

PROMPTS = [
    # (name, text, parse_special, truncate_to) -- ids = tokenize(text, add_bos=False)[:n]
    ("english_cat", "The cat chased the ball because it was tired.", False, None),
    ("chinese_seed", "猫追球，它累了。", False, None),
    ("mixed_30", "The pronoun 它 attends to 猫 with weight 0.736, not to 球 (0.164).", False, None),
    ("code_fib", PY_FIB, False, None),
    ("chat_france", chat("What is the capital of France?"), True, None),
    ("long_200", LONG_TEXT * 2, False, 200),
]

LONG_ROWS = (0, 1, 2, 50, 100, 150, 198, 199)

# What is stored per model. The 0.5B: every row of prompts up to 40 tokens, LONG_ROWS of
# the long one (7.15 MB). The 1.5B (--1.5b; 28 x 12 heads, as many as the 0.5B's 24 x 14):
# every row up to 16 tokens only, rows 0, 1, 2, 15, n/2, n-2, n-1 of the others and 0, 100,
# 198, 199 of the long one, to keep its fixture near 2 MB.
VARIANTS = {
    "0.5b": {"model": DEFAULT_MODEL, "env": "SACCADE_QWEN2_MODEL",
             "out": "attention-fixture-qwen2", "full_rows_max": FULL_ROWS_MAX,
             "sample_rows": LONG_ROWS},
    "1.5b": {"model": DEFAULT_MODEL_15B, "env": "SACCADE_QWEN2_15B_MODEL",
             "out": "attention-fixture-qwen2-1.5b", "full_rows_max": 16,
             "sample_rows": (0, 1, 2, 15, 100, 198)},
}


def tokenize_all(path):
    import llama_cpp

    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    out = []
    for name, text, ps, trunc in PROMPTS:
        ids = [int(t) for t in llm.tokenize(text.encode("utf-8"), add_bos=False, special=ps)]
        if trunc is not None:
            assert len(ids) >= trunc, (name, len(ids))
            ids = ids[:trunc]
        out.append(ids)
    return out, llama_cpp.__version__


def llamacpp_logits(path, ids_list, f32_kv=False):
    import llama_cpp

    kw = dict(model_path=path, n_ctx=512, n_batch=512, n_ubatch=512, n_threads=2,
              n_threads_batch=2, logits_all=True, verbose=False, flash_attn=False)
    if f32_kv:
        kw.update(type_k=0, type_v=0)  # GGML_TYPE_F32
    llm = llama_cpp.Llama(**kw)
    out = []
    for ids in ids_list:
        llm.reset()
        llm.eval(ids)
        out.append(np.array(llm.scores[:len(ids)], dtype=np.float64, copy=True))
    del llm
    return out


def write_f32_gguf(model, dst):
    """All-F32 copy of the model (same keys): llama.cpp then quantises no activation, and with an
    F32 KV cache it computes the same function as this reference up to float32 rounding.
    Written one tensor at a time (the 1.5B copy is 7.1 GB)."""
    r = model.reader
    w = gguf.GGUFWriter(dst, arch="qwen2")
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vtype = gguf.GGUFValueType(f.types[0])
        val = f.contents()
        if name == "general.file_type":
            val = 0  # LLAMA_FTYPE_ALL_F32
        sub = gguf.GGUFValueType(f.types[-1]) if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, val, vtype, sub_type=sub)
    for t in r.tensors:
        shape = [int(x) for x in reversed(t.shape)]
        w.add_tensor_info(t.name, shape, np.dtype(np.float32), 4 * int(np.prod(shape)),
                          raw_dtype=gguf.GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for t in r.tensors:
        w.write_tensor_data(np.ascontiguousarray(model.dequant(t.name), dtype=np.float32))
    w.close()


def compare_row(ref, lc):
    d = np.abs(ref - lc)
    sd = lc.std()
    dc = np.abs((ref - ref.mean()) - (lc - lc.mean()))
    pl = np.exp(lc - lc.max()); pl /= pl.sum()
    lr = ref - ref.max(); lr -= np.log(np.exp(lr).sum())
    ll = lc - lc.max(); ll -= np.log(np.exp(ll).sum())
    o = np.argsort(-lc, kind="stable")
    return {"max_abs": float(d.max()), "max_abs_over_std": float(d.max() / sd),
            "max_abs_centred_over_std": float(dc.max() / sd),
            "rms_over_std": float(np.sqrt((d * d).mean()) / sd),
            "kl_lc_ref": float((pl * (ll - lr)).sum()),
            "top1_ref": int(np.argmax(ref)), "top1_lc": int(o[0]),
            "lc_top1_top2_gap": float(lc[o[0]] - lc[o[1]])}


def stored_rows(variant, n):
    """(query rows stored, logit positions) of an n-token prompt."""
    if n <= variant["full_rows_max"]:
        return list(range(n)), list(range(n))
    rows = set(r for r in variant["sample_rows"] if r < n) | {n - 2, n - 1}
    if n <= 64:
        rows |= {n // 2}
    return sorted(rows), sorted({0, n // 2, n - 1})


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with_lc = "--llamacpp" in sys.argv
    tag = "1.5b" if "--1.5b" in sys.argv else "0.5b"
    variant = VARIANTS[tag]
    path = args[0] if args else os.environ.get(variant["env"], variant["model"])
    out_json = os.path.join(HERE, variant["out"] + ".json")
    out_f32 = os.path.join(HERE, variant["out"] + ".f32")
    t0 = time.time()
    ids_list, lc_version = tokenize_all(path)
    model = Qwen2(path)
    print("loaded %s in %.1fs" % (path, time.time() - t0))
    L, H, V = model.n_layer, model.n_head, model.n_vocab
    slice_ids = np.arange(0, V, VOCAB_STRIDE)

    lc_q = lc_f = None
    if with_lc:
        lc_q = llamacpp_logits(path, ids_list)
    if with_lc and "--no-f32-copy" not in sys.argv:
        import tempfile
        fd, tmp = tempfile.mkstemp(suffix=".f32.gguf", dir="/tmp")
        os.close(fd)
        try:
            write_f32_gguf(model, tmp)
            lc_f = llamacpp_logits(tmp, ids_list, f32_kv=True)
        finally:
            os.unlink(tmp)

    blob = open(out_f32 + ".tmp", "wb")
    off = 0

    def put(a):
        nonlocal off
        a = np.ascontiguousarray(a, dtype="<f4")
        blob.write(a.tobytes())
        o = off
        off += a.nbytes
        return {"offset": o, "count": int(a.size), "shape": list(a.shape)}

    prompts = []
    cmp_q, cmp_f = [], []
    plan = [stored_rows(variant, len(ids)) for ids in ids_list]
    t1 = time.time()
    results = model.forward_many(ids_list, [r for r, _ in plan], [lp for _, lp in plan])
    ft = time.time() - t1
    print("forward of %d prompts in %.1fs" % (len(ids_list), ft))
    for pi, ((name, text, ps, trunc), ids) in enumerate(zip(PROMPTS, ids_list)):
        n = len(ids)
        rows, lpos = plan[pi]
        probs, logits = results[pi]
        att = np.stack(probs)  # (L, H, R, n)
        # self-checks of the oracle: rows sum to 1, the causal upper triangle exactly 0
        causal = (np.arange(n)[None, :] <= np.arange(n)[:, None])[rows]
        for l in range(L):
            assert np.all(att[l][:, ~causal] == 0.0)
            assert np.all(att[l][:, causal] > 0.0)
            assert np.allclose(att[l].sum(-1), 1.0, atol=1e-12)
        rec = {"name": name, "text": text, "parse_special": ps, "add_bos": False,
               "truncated": trunc is not None, "ids": ids, "n": n, "forward_s": round(ft, 2),
               "rows": rows, "attention": put(att),
               "attention_layout": "[layer][head][k-th stored row][key], row k is query rows[k]",
               "min_visible_probability": float(min(att[l][:, causal].min() for l in range(L)))}
        lrec = []
        for p in lpos:
            z = logits[p]
            o = np.argsort(-z, kind="stable")[:TOP_K]
            ent = {"pos": p, "mean": float(z.mean()), "std": float(z.std()),
                   "top_ids": [int(t) for t in o], "top_logits": [float(z[t]) for t in o],
                   "slice": put(z[slice_ids])}
            if lc_q is not None:
                ent["vs_llamacpp_q4km"] = compare_row(z, lc_q[pi][p])
                cmp_q.append(ent["vs_llamacpp_q4km"])
                if lc_f is not None:
                    ent["vs_llamacpp_f32"] = compare_row(z, lc_f[pi][p])
                    cmp_f.append(ent["vs_llamacpp_f32"])
            lrec.append(ent)
        rec["logits"] = lrec
        prompts.append(rec)
        print("%-13s n=%3d rows=%3d forward %.1fs top1(last)=%d %s" % (
            name, n, len(rows), ft, lrec[-1]["top_ids"][0],
            "" if lc_q is None else "| q4km max|d|/std %.3f (centred %.3f) f32 %.2e" % (
                lrec[-1]["vs_llamacpp_q4km"]["max_abs_over_std"],
                lrec[-1]["vs_llamacpp_q4km"]["max_abs_centred_over_std"],
                lrec[-1]["vs_llamacpp_f32"]["max_abs_over_std"] if lc_f else float("nan"))))
    blob.close()
    os.replace(out_f32 + ".tmp", out_f32)

    def summary(c):
        if not c:
            return None
        return {"positions": len(c), "top1_agree": sum(x["top1_ref"] == x["top1_lc"] for x in c),
                "max_abs_over_std_max": max(x["max_abs_over_std"] for x in c),
                "max_abs_centred_over_std_max": max(x["max_abs_centred_over_std"] for x in c),
                "rms_over_std_max": max(x["rms_over_std"] for x in c),
                "max_abs_max": max(x["max_abs"] for x in c),
                "kl_max": max(x["kl_lc_ref"] for x in c)}

    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:  # pragma: no cover
        gguf_ver = None
    doc = {
        "format": "saccade-attention-fixture-qwen2/1",
        "generator": "tests/reference/qwen2_ref.py",
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path),
        "reference": "float64 numpy, weights = gguf.quants.dequantize (float32) widened",
        "gguf_py_version": gguf_ver, "numpy_version": np.__version__,
        "llama_cpp_python_version": lc_version,
        "tokenizer": "llama.cpp tokenize(text, add_bos=False, special=parse_special)",
        "hparams": model.hparams(),
        "data_file": os.path.basename(out_f32), "dtype": "float32", "endianness": "little",
        "offset_units": "bytes from the start of data_file; count in float32 elements",
        "total_bytes": off,
        "logit_slice": {"stride": VOCAB_STRIDE, "count": int(slice_ids.size),
                        "ids": "0, stride, 2*stride, ... (every stride-th vocabulary id)"},
        "prompts": prompts,
        "reference_vs_llamacpp": {
            "q4km_f16kv": summary(cmp_q), "f32_copy_f32kv": summary(cmp_f),
            "settings": "Llama(n_ctx=512, n_batch=n_ubatch=512, n_threads=2, "
                        "logits_all=True, flash_attn=False); F32 copy: every tensor "
                        "dequantised to F32, type_k=type_v=F32"} if with_lc else None,
    }
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %s and %s (%d bytes) in %.1fs" % (out_json, out_f32, off, time.time() - t0))
    if with_lc:
        print("vs llama.cpp Q4_K_M:", summary(cmp_q))
        print("vs llama.cpp F32 copy:", summary(cmp_f))


if __name__ == "__main__":
    main()
