#!/usr/bin/env python3
"""Independent float64 numpy Gemma 3 forward pass; writes attention-fixture-gemma3.{json,f32}.

What it is
    A from-the-definition Gemma 3 (text) forward pass that imports nothing from the repository
    and reads the GGUF only through gguf-py (gguf.GGUFReader, gguf.quants.dequantize). Every
    weight is the exact float32 value of its dequantised block, widened to float64; all
    arithmetic is float64. It is the oracle for Saccade's attention probabilities (every layer
    and head, max abs error <= 1e-4) and for its logits in exact arithmetic.

Sources for the architecture (read, not copied)
    - llama.cpp src/models/gemma3.cpp and src/llama-hparams.cpp (the copy vendored in
      llama-cpp-python 0.3.36): graph order, f_attention_scale = 1/sqrt(head_dim) for every size
      but 27B, set_swa_pattern(6) (layer il is local iff il % 6 < 5), rope_freq_base_train_swa
      default 10000, is_masked_swa (STANDARD: key p0 masked for query p1 iff p1 - p0 >= n_swa),
      LLM_FFN_GELU + LLM_FFN_PAR = ggml_geglu_split (gelu(gate) * up, tanh approximation),
      NEOX RoPE for LLM_ARCH_GEMMA3 (llama_model_rope_type), optional final logit softcapping
      (key absent here, so none), tied output when output.weight is absent.
    - Hugging Face transformers models/gemma3/modular_gemma3.py (Gemma3RMSNorm: x / rms(x) *
      (1 + w); Gemma3TextScaledWordEmbedding: embeddings * sqrt(hidden_size); q_norm/k_norm per
      head before RoPE; query_pre_attn_scalar ** -0.5 = 256 ** -0.5 for 270M; sliding window
      512 and rope_local_base_freq 10000 on sliding layers, rope_theta 1e6 on full layers;
      post_attention_layernorm / post_feedforward_layernorm applied before the residual add).
    - Gemma 3 technical report (arXiv 2503.19786): 5 local : 1 global layers.
    GGUF convention: convert_hf_to_gguf.py stores Gemma's norm weights as (1 + w), so every
    *norm.weight is used as a plain multiplier here (checked: post_attention_norm has entries
    of exactly 0.0, i.e. w = -1). Q and K rows are not permuted for Gemma (NEOX layout: pair
    (i, i + head_dim/2)).

Forward (n tokens at positions 0..n-1, no KV cache)
    x = E[ids] * sqrt(n_embd)
    per layer l: h = rms(x) * attn_norm; q,k,v = h Wq^T, h Wk^T, h Wv^T (4 query heads, 1 kv
    head, head_dim 256); q,k = rms(q_h) * q_norm, rms(k) * k_norm (per head, over 256);
    RoPE(NEOX, base 10000 local / 1e6 global); q *= 1/16; P = softmax over keys j <= i and,
    on local layers, i - j < 512 (masked cells exactly 0); o = P v; x += rms(o Wo^T) *
    post_attention_norm; h = rms(x) * ffn_norm; x += rms(Wd (gelu_tanh(Wg h) * Wu h)) *
    post_ffw_norm. logits = (rms(x) * output_norm) E^T. eps = gemma3.attention.
    layer_norm_rms_epsilon (float32 1e-6), inside the square root.

What it writes (next to this script)
    attention-fixture-gemma3.f32   raw little-endian float32, no header
    attention-fixture-gemma3.json  offsets (bytes) and counts (float32 elements), as the
                                   SmolLM2 attention fixture; see tests/reference/README.md.
    Per prompt: "attention" [18][4][len(rows)][n] (layer, head, stored query row, key), the
    full row of every stored query (zeros included); "rows" lists the query positions stored:
    all of them for short prompts, a sample for the long one (it is > 512 tokens so local
    layers mask keys). "logits" at the stored logit positions: the 2048 strided vocabulary
    entries 0, 128, ..., plus "top" (the reference's top-32 ids and logits in the JSON) and the
    full-row mean/std. "residual" [19][n][640] only for the first prompt (debugging aid).

Cross-check with llama.cpp (optional, --llamacpp): llama.cpp's logits on the same ids, on the
real Q4_K_M file (F16 KV cache) and on an all-F32 copy of it (F32 KV cache), compared with the
reference's (max|d|/std, rms/std, top-1); recorded under "reference_vs_llamacpp".

How to rerun
    pip install gguf==0.19.0 numpy [llama-cpp-python==0.3.36 for --llamacpp, see README]
    python3 tests/reference/gemma3_ref.py [--llamacpp] [MODEL.gguf]
    python3 tests/reference/gemma3_ref.py --gelu-check [MODEL.gguf]   (prints only; see main)
    (model: argument, else $SACCADE_GEMMA_MODEL, else data/models/gemma-3-270m-q4_k_m.gguf).
"""

import hashlib
import inspect
import json
import os
import sys
import time

import numpy as np
import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "gemma-3-270m-q4_k_m.gguf")
OUT_JSON = os.path.join(HERE, "attention-fixture-gemma3.json")
OUT_F32 = os.path.join(HERE, "attention-fixture-gemma3.f32")

VOCAB_STRIDE = 128      # stored logit slice: ids 0, 128, ..., 262016 (2048 entries)
TOP_K = 32
SWA_PERIOD = 6          # llama.cpp load_swa_pattern(ml, 6) for gemma3: il % 6 < 5 is local
ROPE_BASE_LOCAL = 10000.0  # llama_hparams::rope_freq_base_train_swa default; HF rope_local_base_freq


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


class Gemma3:
    """The model's weights (float64, token embedding kept float32) and hyperparameters."""

    def __init__(self, path):
        self.path = path
        r = gguf.GGUFReader(path)
        self.reader = r

        def key(name, default=None):
            f = r.fields.get(name)
            return default if f is None else f.contents()

        assert key("general.architecture") == "gemma3", key("general.architecture")
        p = "gemma3."
        self.n_layer = int(key(p + "block_count"))
        self.n_embd = int(key(p + "embedding_length"))
        self.n_head = int(key(p + "attention.head_count"))
        self.n_kv = int(key(p + "attention.head_count_kv"))
        self.head_dim = int(key(p + "attention.key_length"))
        assert int(key(p + "attention.value_length")) == self.head_dim
        self.n_ff = int(key(p + "feed_forward_length"))
        self.eps = float(np.float32(key(p + "attention.layer_norm_rms_epsilon")))
        self.rope_base = float(key(p + "rope.freq_base"))
        self.rope_base_local = float(key(p + "rope.freq_base_swa", ROPE_BASE_LOCAL))
        self.window = int(key(p + "attention.sliding_window"))
        self.softcap = key(p + "final_logit_softcapping")
        assert key(p + "attention.sliding_window_pattern") is None  # default period applies
        assert key(p + "rope.scaling.type") is None and key(p + "rope.scaling.factor") is None
        # 270M: query_pre_attn_scalar = head_dim = 256 (llama.cpp: 1/sqrt(n_embd_head_k))
        self.q_scale = 1.0 / np.sqrt(self.head_dim)
        self.local = [(l % SWA_PERIOD) < (SWA_PERIOD - 1) for l in range(self.n_layer)]
        self.T = {t.name: t for t in r.tensors}
        self.W = {}
        for t in r.tensors:
            if t.name == "token_embd.weight":
                continue
            w = gguf.quants.dequantize(t.data, t.tensor_type)
            self.W[t.name] = np.asarray(w, dtype=np.float64).reshape(
                [int(x) for x in reversed(t.shape)] if len(t.shape) > 1 else [int(t.shape[0])])
        te = self.T["token_embd.weight"]
        self.E = np.asarray(gguf.quants.dequantize(te.data, te.tensor_type), dtype=np.float32)
        self.n_vocab = self.E.shape[0]
        assert self.E.shape == (self.n_vocab, self.n_embd)
        self.tied = "output.weight" not in self.T
        assert self.tied

    def hparams(self):
        return {"n_layer": self.n_layer, "n_embd": self.n_embd, "n_head": self.n_head,
                "n_head_kv": self.n_kv, "head_dim": self.head_dim, "n_ff": self.n_ff,
                "n_vocab": self.n_vocab, "rms_eps": self.eps, "rope_base_global": self.rope_base,
                "rope_base_local": self.rope_base_local, "sliding_window": self.window,
                "local_layers": [l for l in range(self.n_layer) if self.local[l]],
                "query_scale": self.q_scale, "embedding_scale": float(np.sqrt(self.n_embd)),
                "final_logit_softcapping": self.softcap, "tied_output": self.tied,
                "rope": "NEOX (pairs i, i + head_dim/2)", "ffn": "gelu_tanh(gate) * up",
                "norm_weights": "used as stored (GGUF holds 1 + w)"}

    def rms(self, x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps) * w

    def rope(self, x, base):
        """x: (n, heads, d); NEOX rotation of pair (i, i + d/2) by pos * base^(-2i/d)."""
        n, _, d = x.shape
        half = d // 2
        inv = base ** (-np.arange(half, dtype=np.float64) * 2.0 / d)
        ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)

    gelu_f16_table = False  # emulate ggml's CPU GELU (see gelu_ggml); only for the cross-check

    @staticmethod
    def gelu_exact(x):
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))

    @staticmethod
    def gelu_ggml(x):
        """ggml-cpu's GELU with GGML_GELU_FP16 (vec.h): 0 below -10, x above 10, else the
        fp16 table entry of fp16(x) (the table holds fp16(gelu(v)) for every fp16 value v)."""
        h = x.astype(np.float16).astype(np.float32)
        t = Gemma3.gelu_exact(h).astype(np.float32).astype(np.float16).astype(np.float64)
        return np.where(x <= -10.0, 0.0, np.where(x >= 10.0, x, t))

    def gelu_tanh(self, x):
        return self.gelu_ggml(x) if self.gelu_f16_table else self.gelu_exact(x)

    def mask(self, n, layer):
        i = np.arange(n)[:, None]
        j = np.arange(n)[None, :]
        keep = j <= i
        if self.local[layer]:
            keep &= (i - j) < self.window
        return keep

    def forward(self, ids, logit_positions=(), keep_residual=False):
        """Returns (probs [L] of (H, n, n) float64, residual list or None, {pos: logits f64})."""
        W = self.W
        n = len(ids)
        x = self.E[np.asarray(ids)].astype(np.float64) * np.sqrt(self.n_embd)
        resid = [x.copy()] if keep_residual else None
        probs = []
        H, D, G = self.n_head, self.head_dim, self.n_head // self.n_kv
        for l in range(self.n_layer):
            b = "blk.%d." % l
            h = self.rms(x, W[b + "attn_norm.weight"])
            q = (h @ W[b + "attn_q.weight"].T).reshape(n, H, D)
            k = (h @ W[b + "attn_k.weight"].T).reshape(n, self.n_kv, D)
            v = (h @ W[b + "attn_v.weight"].T).reshape(n, self.n_kv, D)
            q = self.rms(q, W[b + "attn_q_norm.weight"])
            k = self.rms(k, W[b + "attn_k_norm.weight"])
            base = self.rope_base_local if self.local[l] else self.rope_base
            q = self.rope(q, base) * self.q_scale
            k = self.rope(k, base)
            keep = self.mask(n, l)
            P = np.empty((H, n, n))
            o = np.empty((n, H, D))
            for hh in range(H):
                kv = hh // G
                s = q[:, hh, :] @ k[:, kv, :].T
                s = np.where(keep, s, -np.inf)
                e = np.exp(s - s.max(-1, keepdims=True))
                e[~keep] = 0.0
                P[hh] = e / e.sum(-1, keepdims=True)
                o[:, hh, :] = P[hh] @ v[:, kv, :]
            probs.append(P)
            a = o.reshape(n, H * D) @ W[b + "attn_output.weight"].T
            x = x + self.rms(a, W[b + "post_attention_norm.weight"])
            h = self.rms(x, W[b + "ffn_norm.weight"])
            f = self.gelu_tanh(h @ W[b + "ffn_gate.weight"].T) * (h @ W[b + "ffn_up.weight"].T)
            f = f @ W[b + "ffn_down.weight"].T
            x = x + self.rms(f, W[b + "post_ffw_norm.weight"])
            if keep_residual:
                resid.append(x.copy())
        hf = self.rms(x, W["output_norm.weight"])
        logits = {}
        for p in logit_positions:
            z = np.zeros(self.n_vocab)
            for c0 in range(0, self.n_vocab, 32768):
                z[c0:c0 + 32768] = self.E[c0:c0 + 32768].astype(np.float64) @ hf[p]
            if self.softcap:
                z = self.softcap * np.tanh(z / self.softcap)
            logits[p] = z
        return probs, resid, logits


# ---- prompts ------------------------------------------------------------------------------

LONG_TEXT = (
    "Attention in a transformer is a way for each position in a sequence to gather information "
    "from the other positions. Every token is turned into three vectors: a query, a key and a "
    "value. The query of the current token is compared with the keys of earlier tokens by a dot "
    "product, the scores are scaled, and a softmax turns them into weights that sum to one. "
    "Gemma 3 restricts five of every six layers to a sliding window of the last 512 tokens, so "
    "that the memory of the key and value cache grows slowly with the length of the text, while "
    "the sixth layer still sees everything. "
    "注意力的本质是可微的软寻址：用一个提问去匹配所有候选的索引标签，按匹配度加权取回内容。"
    "它最初只是机器翻译里给 RNN 打的一个补丁，三年后成了整个架构的主体。"
    "Whether the attention weights explain the decisions of a model is a question that has been "
    "debated for years. Jain and Wallace argued in 2019 that attention is not explanation, "
    "because very different attention distributions can give the same prediction, while "
    "Wiegreffe and Pinter replied that attention is not not explanation. A careful study "
    "compares the weights with the effect of removing a token or a head: if the output barely "
    "changes when the most attended word is erased, the weights were not telling the whole "
    "story. "
)

PROMPTS = [
    # (name, text, parse_special, truncate_to)  -- ids = tokenize(text, add_bos=True) [:n]
    ("english_cat", "The cat chased the ball because it was tired.", False, None),
    ("chinese_seed", "猫追球，它累了。", False, None),
    ("mixed_30", "The pronoun 它 attends to 猫 with weight 0.736, not to 球 (0.164).", False, None),
    ("chat_france", "<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n"
                    "<start_of_turn>model\n", True, None),
    ("long_560", LONG_TEXT * 4, False, 560),
]

LONG_ROWS_EXTRA = (0, 1, 2, 100, 300, 510, 511, 512, 513, 514, 530)  # plus n-2, n-1


def tokenize_all(path):
    import llama_cpp

    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    out = []
    for name, text, ps, trunc in PROMPTS:
        ids = [int(t) for t in llm.tokenize(text.encode("utf-8"), add_bos=True, special=ps)]
        if trunc is not None:
            assert len(ids) >= trunc, (name, len(ids))
            ids = ids[:trunc]
        out.append(ids)
    return out, llama_cpp.__version__


def llamacpp_logits(path, ids_list, f32_kv=False):
    import llama_cpp

    kw = dict(model_path=path, n_ctx=1024, n_batch=1024, n_ubatch=1024, n_threads=2,
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
    F32 KV cache it computes the same function as this reference up to float32 rounding."""
    r = model.reader
    w = gguf.GGUFWriter(dst, arch="gemma3")
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
        a = model.E if t.name == "token_embd.weight" else model.W[t.name].astype(np.float32)
        w.add_tensor(t.name, np.ascontiguousarray(a, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def compare_row(ref, lc):
    d = np.abs(ref - lc)
    sd = lc.std()
    pl = np.exp(lc - lc.max()); pl /= pl.sum()
    lr = ref - ref.max(); lr -= np.log(np.exp(lr).sum())
    ll = lc - lc.max(); ll -= np.log(np.exp(ll).sum())
    o = np.argsort(-lc, kind="stable")
    return {"max_abs": float(d.max()), "max_abs_over_std": float(d.max() / sd),
            "rms_over_std": float(np.sqrt((d * d).mean()) / sd),
            "kl_lc_ref": float((pl * (ll - lr)).sum()),
            "top1_ref": int(np.argmax(ref)), "top1_lc": int(o[0]),
            "lc_top1_top2_gap": float(lc[o[0]] - lc[o[1]])}


def gelu_check(path):
    """--gelu-check: how much of the reference / llama.cpp-F32 gap is ggml's fp16 GELU table.
    Writes nothing; prints max|d|/std of the exact and the emulated reference against llama.cpp
    on the all-F32 copy (F32 KV cache) for the short prompts."""
    import tempfile
    ids_list, _ = tokenize_all(path)
    ids_list = ids_list[:4]
    model = Gemma3(path)
    fd, tmp = tempfile.mkstemp(suffix=".f32.gguf", dir="/tmp")
    os.close(fd)
    try:
        write_f32_gguf(model, tmp)
        lc_f = llamacpp_logits(tmp, ids_list, f32_kv=True)
    finally:
        os.unlink(tmp)
    for (name, _, _, _), ids, lc in zip(PROMPTS, ids_list, lc_f):
        out = []
        for emulate in (False, True):
            model.gelu_f16_table = emulate
            _, _, lg = model.forward(ids, logit_positions=range(len(ids)))
            c = [compare_row(lg[p], lc[p]) for p in range(len(ids))]
            out.append((max(x["max_abs_over_std"] for x in c), max(x["rms_over_std"] for x in c)))
        print("%-13s n=%3d vs llama.cpp F32: exact GELU max|d|/std %.2e rms/std %.2e | ggml fp16 "
              "GELU max|d|/std %.2e rms/std %.2e" % (name, len(ids), *out[0], *out[1]))


def main():
    if "--gelu-check" in sys.argv:
        args = [a for a in sys.argv[1:] if not a.startswith("--")]
        return gelu_check(args[0] if args else os.environ.get("SACCADE_GEMMA_MODEL", DEFAULT_MODEL))
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with_lc = "--llamacpp" in sys.argv
    path = args[0] if args else os.environ.get("SACCADE_GEMMA_MODEL", DEFAULT_MODEL)
    t0 = time.time()
    ids_list, lc_version = tokenize_all(path)
    model = Gemma3(path)
    print("loaded %s in %.1fs" % (path, time.time() - t0))
    L, H, V = model.n_layer, model.n_head, model.n_vocab
    slice_ids = np.arange(0, V, VOCAB_STRIDE)

    lc_q = lc_f = None
    if with_lc:
        lc_q = llamacpp_logits(path, ids_list)
        import tempfile
        fd, tmp = tempfile.mkstemp(suffix=".f32.gguf", dir="/tmp")
        os.close(fd)
        try:
            write_f32_gguf(model, tmp)
            lc_f = llamacpp_logits(tmp, ids_list, f32_kv=True)
        finally:
            os.unlink(tmp)

    blob = open(OUT_F32 + ".tmp", "wb")
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
    for pi, ((name, text, ps, trunc), ids) in enumerate(zip(PROMPTS, ids_list)):
        n = len(ids)
        if n > model.window:
            rows = sorted(set(r for r in LONG_ROWS_EXTRA if r < n) | {n - 2, n - 1})
        else:
            rows = list(range(n))
        lpos = sorted({0, n // 2, n - 1}) if n > model.window else list(range(n))
        t1 = time.time()
        probs, resid, logits = model.forward(ids, logit_positions=lpos, keep_residual=(pi == 0))
        ft = time.time() - t1
        att = np.stack([probs[l][:, rows, :] for l in range(L)])  # (L, H, R, n)
        # self-checks of the oracle: rows sum to 1, masked cells exactly 0
        for l in range(L):
            keep = model.mask(n, l)[rows]
            assert np.all(att[l][:, ~keep] == 0.0)
            assert np.allclose(att[l].sum(-1), 1.0, atol=1e-12)
        rec = {"name": name, "text": text, "parse_special": ps, "add_bos": True,
               "truncated": trunc is not None, "ids": ids, "n": n, "forward_s": round(ft, 2),
               "rows": rows, "attention": put(att),
               "attention_layout": "[layer][head][k-th stored row][key], row k is query rows[k]"}
        if resid is not None:
            rec["residual"] = put(np.stack(resid))
            rec["residual_layout"] = "[stage][pos][n_embd]: stage 0 = scaled embeddings, " \
                                     "stage l+1 = after layer l (before output_norm)"
        lrec = []
        for p in lpos:
            z = logits[p]
            o = np.argsort(-z, kind="stable")[:TOP_K]
            ent = {"pos": p, "mean": float(z.mean()), "std": float(z.std()),
                   "top_ids": [int(t) for t in o], "top_logits": [float(z[t]) for t in o],
                   "slice": put(z[slice_ids])}
            if lc_q is not None:
                ent["vs_llamacpp_q4km"] = compare_row(z, lc_q[pi][p])
                ent["vs_llamacpp_f32"] = compare_row(z, lc_f[pi][p])
                cmp_q.append(ent["vs_llamacpp_q4km"])
                cmp_f.append(ent["vs_llamacpp_f32"])
            lrec.append(ent)
        rec["logits"] = lrec
        prompts.append(rec)
        print("%-13s n=%3d rows=%3d forward %.1fs top1(last)=%d %s" % (
            name, n, len(rows), ft, lrec[-1]["top_ids"][0],
            "" if lc_q is None else "| q4km max|d|/std %.3f f32 %.2e" % (
                lrec[-1]["vs_llamacpp_q4km"]["max_abs_over_std"],
                lrec[-1]["vs_llamacpp_f32"]["max_abs_over_std"])))
    blob.close()
    os.replace(OUT_F32 + ".tmp", OUT_F32)

    def summary(c):
        if not c:
            return None
        return {"positions": len(c), "top1_agree": sum(x["top1_ref"] == x["top1_lc"] for x in c),
                "max_abs_over_std_max": max(x["max_abs_over_std"] for x in c),
                "rms_over_std_max": max(x["rms_over_std"] for x in c),
                "max_abs_max": max(x["max_abs"] for x in c),
                "kl_max": max(x["kl_lc_ref"] for x in c)}

    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:  # pragma: no cover
        gguf_ver = None
    doc = {
        "format": "saccade-attention-fixture-gemma3/1",
        "generator": "tests/reference/gemma3_ref.py",
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path),
        "reference": "float64 numpy, weights = gguf.quants.dequantize (float32) widened",
        "gguf_py_version": gguf_ver, "numpy_version": np.__version__,
        "llama_cpp_python_version": lc_version,
        "tokenizer": "llama.cpp tokenize(text, add_bos=True, special=parse_special)",
        "hparams": model.hparams(),
        "data_file": os.path.basename(OUT_F32), "dtype": "float32", "endianness": "little",
        "offset_units": "bytes from the start of data_file; count in float32 elements",
        "total_bytes": off,
        "logit_slice": {"stride": VOCAB_STRIDE, "count": int(slice_ids.size),
                        "ids": "0, stride, 2*stride, ... (every stride-th vocabulary id)"},
        "prompts": prompts,
        "reference_vs_llamacpp": {
            "q4km_f16kv": summary(cmp_q), "f32_copy_f32kv": summary(cmp_f),
            "settings": "Llama(n_ctx=1024, n_batch=n_ubatch=1024, n_threads=2, "
                        "logits_all=True, flash_attn=False); F32 copy: every tensor "
                        "dequantised to F32, type_k=type_v=F32"} if with_lc else None,
    }
    with open(OUT_JSON, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %s and %s (%d bytes) in %.1fs" % (OUT_JSON, OUT_F32, off, time.time() - t0))
    if with_lc:
        print("vs llama.cpp Q4_K_M:", summary(cmp_q))
        print("vs llama.cpp F32 copy:", summary(cmp_f))


if __name__ == "__main__":
    main()
