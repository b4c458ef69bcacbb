#!/usr/bin/env python3
"""Generate tests/reference/logits-fixture-qwen2.{json,f32}: llama.cpp logits oracle for Qwen2.

What it produces (next to this script)
    logits-fixture-qwen2.f32   raw little-endian float32, no header: for positions 0, n//2 and
                               n-1 of every prompt, the logits of the 1187 vocabulary ids
                               0, 128, 256, ..., 151808 (a full row is 151936 floats = 594 KiB,
                               so full rows are not stored: the slice samples every region of
                               the vocabulary, the JSON adds each row's top-32 and full-row
                               mean/std).
    logits-fixture-qwen2.json  {"format": "saccade-logits-fixture-qwen2/1", "model_file",
        "model_sha256", "llama_cpp_python_version", "llama_cpp_system_info", "settings",
        "n_vocab": 151936, "slice_stride": 128, "slice_count": 1187, "rows_file", ...,
        "prompts": [{"name", "text", "parse_special", "add_bos": false, "truncated", "n", "ids",
                     "top1_id", "top1_logit", "top2_id", "top2_logit", "mean", "std" (arrays of
                     length n: every position; mean/std over the full row, float64, ddof=0),
                     "rows": [{"pos", "offset" (bytes), "count" (1187), "top_ids" (32),
                               "top_logits" (32)}]}],
        "generations": [greedy continuations of chat prompts, stop at <|im_end|> 151645 or
                        <|endoftext|> 151643]}
    The layout is the Gemma 3 fixture's (gen_logits_fixture_gemma3.py), so the C tests read
    both the same way.

Oracle
    llama_cpp.Llama(model_path, n_ctx=512, n_batch=512, n_ubatch=512, n_threads=2,
    logits_all=True, flash_attn=False); reset(); eval(ids); scores[:n]. KV cache F16 (default).
    ids = tokenize(text, add_bos=False, special=parse_special)[:n]: the Qwen GGUF sets
    tokenizer.ggml.add_bos_token false (Qwen has no BOS); the stored ids are authoritative.

How to rerun
    pip install llama-cpp-python==0.3.36 gguf numpy    (AVX2 build: see README.md)
    python3 tests/reference/gen_logits_fixture_qwen2.py [MODEL.gguf]
    (model: argv[1], else $SACCADE_QWEN2_MODEL, else
    data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf).
    python3 tests/reference/gen_logits_fixture_qwen2.py --1.5b [MODEL.gguf]
    writes logits-fixture-qwen2-1.5b.{json,f32} instead, the same prompts and generations on
    Qwen2.5-Coder-1.5B-Instruct (model: argument, else $SACCADE_QWEN2_15B_MODEL, else
    data/models/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf).
"""

import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_logits_fixture as base  # noqa: E402  (texts and the JSON writer; no side effects)

ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf")
DEFAULT_MODEL_15B = os.path.join(ROOT, "data", "models",
                                 "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf")

STRIDE = 128
TOP_K = 32
STOP = (151645, 151643)  # <|im_end|>, <|endoftext|>
MAX_NEW = 24
SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def chat(user):
    return ("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n" + user
            + "<|im_end|>\n<|im_start|>assistant\n")


LONG = base.LONG_PROSE + " " + base.ZH_PARAGRAPH + " " + base.LONG_PROSE

PROMPTS = [
    # (name, text, parse_special, truncate_to or None); no BOS
    ("one_token_hello", "Hello", False, None),
    ("two_tokens", "The cat", False, None),
    ("capital_of_france", "The capital of France is", False, None),
    ("cat_sentence", "The cat chased the ball because it was tired.", False, None),
    ("prose_8", base.LONG_PROSE, False, 8),
    ("zh_seed_short", "猫追球，它累了。", False, None),
    ("zh_seed_sentence", "句子”猫追球，它累了”。模型读到”它”时必须解决指代：它指猫还是球？", False, None),
    ("digits_and_spaces", "Hello world! 123  and 3.14159, 2024-11-29\n\n\tend", False, None),
    ("emoji_mixed", "I ❤ NY 🦙 👍🏽 — café déjà vu, Привет, こんにちは 𠀀", False, None),
    ("chat_capital_of_france", chat("What is the capital of France?"), True, None),
    ("prose_32", base.LONG_PROSE, False, 32),
    ("python_code", base.PY_CODE, False, None),
    ("fim_add", "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n    return c<|fim_middle|>",
     True, None),
    ("prose_64", base.LONG_PROSE, False, 64),
    ("chat_zh", chat("猫追球，它累了。这里的“它”指的是什么？"), True, None),
    ("zh_paragraph_96", base.ZH_PARAGRAPH, False, 96),
    ("prose_128", base.LONG_PROSE, False, 128),
    ("c_code_160", base.C_CODE, False, 160),
    ("json_doc", '{"model": "Qwen2.5-Coder-0.5B-Instruct", "quant": "Q4_K_M", "layers": 24, '
                 '"heads": [14, 2], "rope": {"base": 1000000.0, "pairs": "neox"}, "bias": true}',
     False, None),
    ("repeated_tokens_48", "one two three four five six seven eight " * 6, False, 48),
    ("prose_255", LONG, False, 255),
]

GENERATIONS = [
    ("chat_capital_of_france", "What is the capital of France?"),
    ("chat_2_plus_2", "What is 2+2?"),
    ("chat_primary_colors", "Name the three primary colors."),
    ("chat_fibonacci", "Write a Python function that returns the n-th Fibonacci number."),
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


def make_llama(path):
    import llama_cpp

    kw = dict(model_path=path, n_ctx=512, n_batch=512, n_ubatch=512, n_threads=2,
              n_threads_batch=2, logits_all=True, verbose=False, seed=0, flash_attn=False)
    llm = llama_cpp.Llama(**kw)
    settings = {k: v for k, v in kw.items() if k not in ("model_path", "verbose")}
    settings["kv_cache_type"] = "f16"
    settings["add_bos"] = False
    settings["context_flash_attn_type"] = int(llm.context_params.flash_attn_type)
    settings["context_type_k_ggml"] = int(llm.context_params.type_k)
    settings["context_type_v_ggml"] = int(llm.context_params.type_v)
    return llm, settings


def greedy(llm, prompt_ids):
    llm.reset()
    llm.eval(prompt_ids)
    out, margins, stopped = [], [], None
    for _ in range(MAX_NEW):
        row = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        top2 = np.argsort(-row, kind="stable")[:2]
        tok = int(top2[0])
        margins.append(float(row[top2[0]] - row[top2[1]]))
        if tok in STOP:
            stopped = tok
            break
        out.append(tok)
        llm.eval([tok])
    return out, stopped, margins


def main():
    import llama_cpp

    big = "--1.5b" in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    stem = os.path.join(HERE, "logits-fixture-qwen2" + ("-1.5b" if big else ""))
    out_json, out_f32 = stem + ".json", stem + ".f32"
    path = args[0] if args else os.environ.get(
        "SACCADE_QWEN2_15B_MODEL" if big else "SACCADE_QWEN2_MODEL",
        DEFAULT_MODEL_15B if big else DEFAULT_MODEL)
    llm, settings = make_llama(path)
    n_vocab = llm.n_vocab()
    sl = np.arange(0, n_vocab, STRIDE)

    prompts_out = []
    blob = open(out_f32 + ".tmp", "wb")
    offset = 0
    for name, text, ps, trunc in PROMPTS:
        ids = [int(t) for t in llm.tokenize(text.encode("utf-8"), add_bos=False, special=ps)]
        if trunc is not None:
            assert len(ids) >= trunc, (name, len(ids), trunc)
            ids = ids[:trunc]
        n = len(ids)
        llm.reset()
        llm.eval(ids)
        logits = np.array(llm.scores[:n], dtype=np.float32, copy=True)
        assert logits.shape == (n, n_vocab) and np.all(np.isfinite(logits)), name
        order = np.argsort(-logits, axis=1, kind="stable")[:, :TOP_K]
        l64 = logits.astype(np.float64)
        rec = {"name": name, "text": text, "parse_special": ps, "add_bos": False,
               "truncated": trunc is not None, "n": n, "ids": ids,
               "top1_id": [int(x) for x in order[:, 0]],
               "top1_logit": [float(logits[i, order[i, 0]]) for i in range(n)],
               "top2_id": [int(x) for x in order[:, 1]],
               "top2_logit": [float(logits[i, order[i, 1]]) for i in range(n)],
               "mean": [float(x) for x in l64.mean(axis=1)],
               "std": [float(x) for x in l64.std(axis=1)],
               "rows": []}
        for p in sorted({0, n // 2, n - 1}):
            blob.write(logits[p, sl].astype("<f4").tobytes())
            rec["rows"].append({"pos": p, "offset": offset, "count": int(sl.size),
                                "top_ids": [int(t) for t in order[p]],
                                "top_logits": [float(logits[p, t]) for t in order[p]]})
            offset += sl.size * 4
        prompts_out.append(rec)
        print("%-24s n=%3d last top1=%d (%.3f, gap %.3f)" % (
            name, n, rec["top1_id"][-1], rec["top1_logit"][-1],
            rec["top1_logit"][-1] - rec["top2_logit"][-1]))
    blob.close()
    os.replace(out_f32 + ".tmp", out_f32)

    gens = []
    for name, q in GENERATIONS:
        ptext = chat(q)
        pids = [int(t) for t in llm.tokenize(ptext.encode("utf-8"), add_bos=False, special=True)]
        gids, stopped, margins = greedy(llm, pids)
        gbytes = llm.detokenize(gids)
        gens.append({"name": name, "question": q, "prompt_text": ptext, "parse_special": True,
                     "add_bos": False, "prompt_ids": pids, "generated_ids": gids,
                     "generated_text": gbytes.decode("utf-8", errors="replace"),
                     "generated_hex": gbytes.hex(), "top1_top2_margin": margins,
                     "stopped_on": stopped, "max_new_tokens": MAX_NEW, "stop_tokens": list(STOP)})
        print("gen %-24s %r stop=%s" % (name, gens[-1]["generated_text"], stopped))

    doc = {
        "format": "saccade-logits-fixture-qwen2/1",
        "generator": "tests/reference/gen_logits_fixture_qwen2.py",
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path),
        "llama_cpp_python_version": llama_cpp.__version__,
        "llama_cpp_system_info": llama_cpp.llama_print_system_info().decode(),
        "settings": settings,
        "oracle": "llama_cpp.Llama(...).reset(); eval(ids); scores[:n]",
        "n_vocab": n_vocab,
        "slice_stride": STRIDE,
        "slice_count": int(sl.size),
        "slice_note": "each stored row holds logits[0], logits[stride], ..., "
                      "logits[(slice_count-1)*stride]",
        "rows_file": os.path.basename(out_f32),
        "rows_dtype": "float32",
        "rows_endianness": "little",
        "rows_total": offset // (sl.size * 4),
        "offset_units": "bytes from the start of rows_file; count in float32 elements",
        "stats_note": "mean/std over all n_vocab logits of each position, float64, ddof=0; "
                      "top ids by stable descending sort (ties -> lower id)",
        "prompts": prompts_out,
        "generations": gens,
    }
    base.write_json(out_json, doc)
    print("wrote %s (%d prompts) and %s (%d bytes)" % (out_json, len(prompts_out), out_f32, offset))


if __name__ == "__main__":
    main()
