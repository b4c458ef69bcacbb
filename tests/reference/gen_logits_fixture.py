#!/usr/bin/env python3
"""Generate tests/reference/logits-fixture.{json,f32}: llama.cpp logits oracle for SmolLM2.

What it produces (next to this script)
    logits-fixture.f32   raw little-endian IEEE-754 float32, no header: full logit rows
                         (n_vocab floats each) concatenated in the order listed in the JSON.
    logits-fixture.json  {
        "format": "saccade-logits-fixture/1", "model_file", "model_sha256",
        "llama_cpp_python_version", "llama_cpp_system_info",
        "settings": {n_ctx, n_batch, n_ubatch, n_threads, logits_all, flash_attn,
                     type_k, type_v ("f16" = KV cache type), add_bos, ...},
        "n_vocab": 49152,
        "rows_file": "logits-fixture.f32", "rows_dtype": "float32", "rows_endianness": "little",
        "row_bytes": n_vocab*4,
        "prompts": [ {"name", "text" (source text), "parse_special": bool,
                      "truncated": bool (ids = first n tokens of tokenize(text)),
                      "n": number of tokens, "ids": [...],
                      "top1_id": [n ints], "top1_logit": [n floats],
                      "top2_id": [n], "top2_logit": [n],
                      "mean": [n] (mean of the logits row, computed in float64),
                      "std": [n]  (population std, ddof=0, float64),
                      "rows": [ {"pos": p, "offset": BYTE offset into the .f32 file,
                                 "count": n_vocab (floats)} ... ] } ... ],
        "generations": [ {"name", "kind": "chat"|"plain", "prompt_text", "prompt_ids",
                          "generated_ids", "generated_text" (UTF-8, errors replaced),
                          "generated_hex" (exact bytes of detokenize(generated_ids)),
                          "top1_top2_margin": [logit gap at each greedy step, incl. the
                          final EOS step] (small gaps = near-ties that a different but correct
                          implementation may resolve differently),
                          "stopped_on_eos": bool, "max_new_tokens": 24} ... ]
    }
    Full rows are stored for positions 0, n//2 and n-1 of every prompt (deduplicated).
    The logits row at position p is the model's prediction after reading ids[0..p].

Oracle
    llama_cpp.Llama(model_path, n_ctx=512, n_batch=512, n_threads=2, logits_all=True,
    flash_attn=False, verbose=False); llm.reset(); llm.eval(ids); llm.scores[:n] (float32).
    Token ids from llm.tokenize(text_bytes, add_bos=False, special=parse_special).
    Generations are greedy: argmax of the last logits row (ties -> lowest id), fed back with
    llm.eval([tok]); stop at token 2 (<|im_end|>) or after 24 new tokens.

How to rerun
    pip install llama-cpp-python==0.3.36 gguf numpy
    python3 tests/reference/gen_logits_fixture.py [MODEL.gguf]
    (model path: argv[1], else $SACCADE_MODEL, else data/models/SmolLM2-135M-Instruct.Q4_1.gguf
    relative to the repository root). Deterministic for a fixed llama.cpp build and thread count.
"""

import hashlib
import inspect
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
OUT_JSON = os.path.join(HERE, "logits-fixture.json")
OUT_F32 = os.path.join(HERE, "logits-fixture.f32")

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
EOS_STOP = 2
MAX_NEW = 24


def chat(user):
    return ("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n" + user
            + "<|im_end|>\n<|im_start|>assistant\n")


def model_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    return os.environ.get("SACCADE_MODEL", DEFAULT_MODEL)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


LONG_PROSE = (
    "Attention in a transformer is a way for each position in a sequence to gather information "
    "from the other positions. Every token is turned into three vectors: a query, a key and a "
    "value. The query of the current token is compared with the keys of all earlier tokens by a "
    "dot product, the scores are divided by the square root of the head dimension, and a softmax "
    "turns them into weights that sum to one. The output is the weighted average of the values. "
    "A model has many heads in every layer, and each head can learn a different pattern: some "
    "look at the previous token, some look at the first token of the text, and some copy a word "
    "that appeared earlier after the same context, which is what researchers call an induction "
    "head. Whether the attention weights explain the decisions of a model is a question that "
    "has been debated for years. Jain and Wallace argued in 2019 that attention is not "
    "explanation, because very different attention distributions can give the same prediction, "
    "while Wiegreffe and Pinter replied that attention is not not explanation, since the answer "
    "depends on what one means by an explanation. A careful study therefore compares the weights "
    "with the effect of removing a token or a head: if the output barely changes when the most "
    "attended word is erased, the weights were not telling the whole story. Tools that capture "
    "every head of every layer make such experiments cheap, and small models like this one are "
    "fast enough to run them on an ordinary laptop without a graphics card, which is why they "
    "are popular for teaching and for quick checks of new ideas about how language models work."
)

ZH_PARAGRAPH = (
    "注意力的本质是可微的软寻址：用一个提问去匹配所有候选的索引标签，按匹配度加权取回内容。"
    "它最初只是机器翻译里给 RNN 打的一个补丁，三年后成了整个架构的主体。本篇讲清 QKV 三者的关系、"
    "手算一遍完整流程，并给出变体谱系的导航。想象一次字典查询。你手上有个待查的词，"
    "字典里每个条目有词条和释义。传统查表是硬匹配：词条完全相等才返回释义，否则什么也没有。注意力做的是软匹配——"
    "把待查词和所有词条算一遍相似度，然后把所有释义按相似度混合起来返回。"
)

C_CODE = (
    "#include <math.h>\n#include <stddef.h>\n\n"
    "/* Numerically stable softmax over one row of attention scores. */\n"
    "static void softmax_row(float *x, size_t n)\n{\n"
    "\tfloat max = x[0];\n\tfor (size_t i = 1; i < n; i++)\n\t\tif (x[i] > max)\n\t\t\tmax = x[i];\n"
    "\tdouble sum = 0.0;\n\tfor (size_t i = 0; i < n; i++) {\n\t\tx[i] = expf(x[i] - max);\n"
    "\t\tsum += x[i];\n\t}\n\tfor (size_t i = 0; i < n; i++)\n\t\tx[i] = (float)(x[i] / sum);\n}\n\n"
    "static void rmsnorm(float *out, const float *x, const float *w, size_t n, float eps)\n{\n"
    "\tdouble ss = 0.0;\n\tfor (size_t i = 0; i < n; i++)\n\t\tss += (double)x[i] * x[i];\n"
    "\tfloat scale = 1.0f / sqrtf((float)(ss / n) + eps);\n"
    "\tfor (size_t i = 0; i < n; i++)\n\t\tout[i] = x[i] * scale * w[i];\n}\n"
)

PY_CODE = (
    "import numpy as np\n\n\ndef attention(q, k, v):\n"
    "    \"\"\"Causal scaled dot-product attention.\"\"\"\n"
    "    d = q.shape[-1]\n    s = q @ k.T / np.sqrt(d)\n"
    "    s = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf)\n"
    "    p = np.exp(s - s.max(-1, keepdims=True))\n    p /= p.sum(-1, keepdims=True)\n"
    "    return p @ v, p\n"
)

# (name, text, parse_special, truncate_to or None)
PROMPTS = [
    ("one_token_hello", "Hello", False, None),
    ("one_token_newline", "\n", False, None),
    ("two_tokens", "The cat", False, None),
    ("capital_of_france", "The capital of France is", False, None),
    ("cat_sentence", "The cat chased the ball because it was tired.", False, None),
    ("prose_8", LONG_PROSE, False, 8),
    ("zh_seed_short", "猫追球，它累了。", False, None),
    ("zh_seed_sentence", "句子”猫追球，它累了”。模型读到”它”时必须解决指代：它指猫还是球？", False, None),
    ("digits_and_spaces", "Hello world! 123  and 3.14159, 2024-11-29\n\n\tend", False, None),
    ("emoji_mixed", "I ❤ NY 🦙 👍🏽 — café déjà vu, Привет, こんにちは", False, None),
    ("chat_capital_of_france", chat("What is the capital of France?"), True, None),
    ("prose_32", LONG_PROSE, False, 32),
    ("python_code", PY_CODE, False, None),
    ("prose_64", LONG_PROSE, False, 64),
    ("chat_zh", chat("猫追球，它累了。这里的“它”指的是什么？"), True, None),
    ("zh_paragraph_96", ZH_PARAGRAPH, False, 96),
    ("prose_128", LONG_PROSE, False, 128),
    ("c_code_160", C_CODE, False, 160),
    ("prose_200", LONG_PROSE, False, 200),
    ("json_doc", '{"model": "SmolLM2-135M-Instruct", "quant": "Q4_1", "layers": 30, '
                 '"heads": [9, 3], "rope": {"base": 100000.0, "pairs": "adjacent"}, "tied": true}',
     False, None),
    ("prose_255", LONG_PROSE, False, 255),
    ("prose_256", LONG_PROSE, False, 256),
    ("repeated_tokens_48", "one two three four five six seven eight " * 6, False, 48),
]

GENERATIONS = [
    ("chat_capital_of_france", "chat", "What is the capital of France?"),
    ("chat_2_plus_2", "chat", "What is 2+2?"),
    ("chat_primary_colors", "chat", "Name the three primary colors."),
    ("chat_translate_cat", "chat", "Translate the word 'cat' into French."),
    ("chat_zh_pronoun", "chat", "猫追球，它累了。这里的“它”指的是什么？"),
    ("plain_cat", "plain", "The cat chased the ball because"),
    ("plain_zh_cat", "plain", "猫追球，它"),
]


def make_llama(path):
    import llama_cpp

    kw = dict(model_path=path, n_ctx=512, n_batch=512, n_threads=2, logits_all=True,
              verbose=False, seed=0)
    params = inspect.signature(llama_cpp.Llama.__init__).parameters
    if "n_ubatch" in params:
        kw["n_ubatch"] = 512
    if "n_threads_batch" in params:
        kw["n_threads_batch"] = 2
    if "flash_attn" in params:
        kw["flash_attn"] = False
    llm = llama_cpp.Llama(**kw)
    settings = {k: v for k, v in kw.items() if k not in ("model_path", "verbose")}
    settings["type_k"] = "f16 (llama.cpp default; GGML_TYPE_F16)"
    settings["type_v"] = "f16 (llama.cpp default; GGML_TYPE_F16)"
    settings["kv_cache_type"] = "f16"
    settings["add_bos"] = False
    settings["flash_attn_used"] = bool(kw.get("flash_attn", False))
    try:  # -1 auto, 0 disabled, 1 enabled (llama_flash_attn_type)
        settings["context_flash_attn_type"] = int(llm.context_params.flash_attn_type)
        settings["context_type_k_ggml"] = int(llm.context_params.type_k)  # 1 = GGML_TYPE_F16
        settings["context_type_v_ggml"] = int(llm.context_params.type_v)
    except Exception:
        pass
    settings["n_threads"] = 2
    return llm, settings


def run_prompt(llm, ids):
    llm.reset()
    llm.eval(ids)
    return np.array(llm.scores[:len(ids)], dtype=np.float32, copy=True)


def greedy(llm, prompt_ids):
    llm.reset()
    llm.eval(prompt_ids)
    out = []
    margins = []
    stopped = False
    for _ in range(MAX_NEW):
        row = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        top2 = np.argsort(-row, kind="stable")[:2]
        tok = int(top2[0])
        margins.append(float(row[top2[0]] - row[top2[1]]))
        if tok == EOS_STOP:
            stopped = True
            break
        out.append(tok)
        llm.eval([tok])
    return out, stopped, margins


def write_json(path, doc):
    """JSON with one top-level key per line and one list element (prompt, generation) per line."""
    lines = ["{"]
    keys = list(doc)
    for ki, k in enumerate(keys):
        v = doc[k]
        end = "," if ki + 1 < len(keys) else ""
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(" %s: [" % json.dumps(k))
            for i, it in enumerate(v):
                lines.append("  " + json.dumps(it, ensure_ascii=False) + ("," if i + 1 < len(v) else ""))
            lines.append(" ]" + end)
        else:
            lines.append(" %s: %s%s" % (json.dumps(k), json.dumps(v, ensure_ascii=False), end))
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    json.load(open(path, encoding="utf-8"))  # self-check


def main():
    import llama_cpp

    path = model_path()
    llm, settings = make_llama(path)
    n_vocab = llm.n_vocab()
    row_bytes = n_vocab * 4

    # sanity: known ids
    assert llm.tokenize(b"The capital of France is", add_bos=False, special=False) == \
        [504, 3575, 282, 4649, 314]

    prompts_out = []
    blob = open(OUT_F32 + ".tmp", "wb")
    offset = 0
    for name, text, ps, trunc in PROMPTS:
        ids = [int(t) for t in llm.tokenize(text.encode("utf-8"), add_bos=False, special=ps)]
        if trunc is not None:
            assert len(ids) >= trunc, (name, len(ids), trunc)
            ids = ids[:trunc]
        n = len(ids)
        logits = run_prompt(llm, ids)
        assert logits.shape == (n, n_vocab)
        assert np.all(np.isfinite(logits)), name
        order = np.argsort(-logits, axis=1, kind="stable")[:, :2]
        l64 = logits.astype(np.float64)
        rec = {
            "name": name, "text": text, "parse_special": ps, "truncated": trunc is not None,
            "n": n, "ids": ids,
            "top1_id": [int(x) for x in order[:, 0]],
            "top1_logit": [float(logits[i, order[i, 0]]) for i in range(n)],
            "top2_id": [int(x) for x in order[:, 1]],
            "top2_logit": [float(logits[i, order[i, 1]]) for i in range(n)],
            "mean": [float(x) for x in l64.mean(axis=1)],
            "std": [float(x) for x in l64.std(axis=1)],
            "rows": [],
        }
        for p in sorted({0, n // 2, n - 1}):
            blob.write(logits[p].astype("<f4").tobytes())
            rec["rows"].append({"pos": p, "offset": offset, "count": n_vocab})
            offset += row_bytes
        prompts_out.append(rec)
        print("%-26s n=%3d last top1=%d (%.3f)" % (name, n, rec["top1_id"][-1],
                                                   rec["top1_logit"][-1]))
    blob.close()
    os.replace(OUT_F32 + ".tmp", OUT_F32)

    gens = []
    for name, kind, q in GENERATIONS:
        if kind == "chat":
            ptext, ps = chat(q), True
        else:
            ptext, ps = q, False
        pids = [int(t) for t in llm.tokenize(ptext.encode("utf-8"), add_bos=False, special=ps)]
        gids, stopped, margins = greedy(llm, pids)
        gbytes = llm.detokenize(gids)
        gtext = gbytes.decode("utf-8", errors="replace")
        gens.append({"name": name, "kind": kind, "question_or_prefix": q, "prompt_text": ptext,
                     "parse_special": ps, "prompt_ids": pids, "generated_ids": gids,
                     "generated_text": gtext, "generated_hex": gbytes.hex(),
                     "top1_top2_margin": margins, "stopped_on_eos": stopped,
                     "max_new_tokens": MAX_NEW, "stop_token": EOS_STOP})
        print("gen %-24s %r%s" % (name, gtext, " <|im_end|>" if stopped else ""))

    try:
        sysinfo = llama_cpp.llama_print_system_info().decode()
    except Exception:
        sysinfo = None
    doc = {
        "format": "saccade-logits-fixture/1",
        "generator": "tests/reference/gen_logits_fixture.py",
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path),
        "llama_cpp_python_version": llama_cpp.__version__,
        "llama_cpp_system_info": sysinfo,
        "settings": settings,
        "oracle": "llama_cpp.Llama(...).reset(); eval(ids); scores[:n]",
        "n_vocab": n_vocab,
        "rows_file": os.path.basename(OUT_F32),
        "rows_dtype": "float32",
        "rows_endianness": "little",
        "row_bytes": row_bytes,
        "rows_total": offset // row_bytes,
        "offset_units": "bytes from the start of rows_file; count in float32 elements",
        "stats_note": "mean/std over the n_vocab logits of each position, float64, std ddof=0; "
                      "top1/top2 by stable descending sort (ties -> lower id)",
        "prompts": prompts_out,
        "generations": gens,
    }
    write_json(OUT_JSON, doc)
    print("wrote %s (%d prompts) and %s (%d rows, %d bytes)" % (
        OUT_JSON, len(prompts_out), OUT_F32, offset // row_bytes, offset))


if __name__ == "__main__":
    main()
