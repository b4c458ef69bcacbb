#!/usr/bin/env python3
"""llamacpp_arch.py — llama.cpp's logits on the five tiny random-weight architectures
(tiny-{llama3,mistral,gemma2,gpt2,qwen3}.gguf, written by arch_ref_*.py as llama.cpp's
converter writes them), compared with the float64 transformers logits of their
arch-fixture-*.{json,f32}, and kept as a fixture so that the C tests compare Saccade with
llama.cpp as well (issue 28, "against llama.cpp where it loads the same file").

For each file: llama_cpp.Llama(model_path, n_ctx=128 (every file's context_length),
n_batch=n_ubatch=128, n_threads=2, logits_all=True, flash_attn=False, KV cache F32
(type_k = type_v = GGML_TYPE_F32)), reset(); eval(ids) with the arch fixture's 96 ids (no
tokenizer, no BOS: the ids are evaluated as they are); scores[:96]. Every tensor of these files
is F32 and so is the KV cache, so ggml quantises no activation and rounds nothing to F16 on the
way except where its own kernels do: its CPU GELU rounds the input to fp16 and reads an fp16
table (gpt2, gemma2). For gpt2 the script measures that: qk_ref.py's float64 GPT-2 forward
with the exact GELU and with the fp16 one emulated, each against llama.cpp ("gelu_check"). The
default F16 KV cache is run too and its distance to transformers recorded (not stored).

llama.cpp refuses tiny-gemma2.gguf itself: "error loading model vocabulary: unknown
pre-tokenizer type: 'gpt2'" (arch_ref_gemma2.py wrote Saccade's alias "gpt2" for llama.cpp's
"gpt-2"); the ids need no tokenizer, so llama.cpp runs a temporary copy that differs in
tokenizer.ggml.pre only (tensors asserted byte-identical; its sha256 is recorded).

Mistral differs by design: tiny-mistral.gguf is arch "llama" plus llama.attention.sliding_window
= 16, a key llama.cpp's llama does not read (src/models/llama.cpp: every layer global; a
converted Mistral has no such key), while transformers applies the window. Rows 0..15 see all
their keys either way, so llama.cpp is compared with the windowed fixture there; past them
with `--mistral-no-window DIR`, the fixture arch_ref_mistral.py --no-window --out DIR writes
(transformers without the window on the same file: what llama.cpp computes). The C test
compares Saccade with llama.cpp on rows 0..15 of the file as it is, and on every row of a copy
whose window key is renamed (Saccade then runs every layer globally, as llama.cpp does).

Writes (next to this script) arch-llamacpp.f32 (raw little-endian float32: each file's logits
[96][512], in the order of ARCHS) and arch-llamacpp.json (per architecture: the file and its
sha256, the ids, "logits" {offset (float32 elements, as the arch fixtures), shape}, the rows
on which llama.cpp computes transformers' function, and the measured differences).

  # llama-cpp-python 0.3.36 (AVX2 build, README top), gguf 0.19.0, numpy 2.4.6
  python3 tests/reference/llamacpp_arch.py --mistral-no-window /tmp/nowin
"""
import argparse
import hashlib
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ARCHS = ("llama3", "mistral", "gemma2", "gpt2", "qwen3")
N_CTX = 128
GGML_TYPE_F32 = 0
# Files llama.cpp refuses over their pre-tokenizer's name: the name it knows for the same
# pre-tokenizer, and its message. None now: arch_ref_gemma2.py wrote "gpt2" (Saccade's alias
# of "gpt-2", engine/text/sc-tokenizer.c), which llama.cpp's llama_vocab::load refused
# ("unknown pre-tokenizer type: 'gpt2'"), until it was made to write "gpt-2".
PRE_RENAMED = {}


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_fixture(directory, arch):
    with open(os.path.join(directory, "arch-fixture-%s.json" % arch), encoding="utf-8") as f:
        meta = json.load(f)
    data = np.fromfile(os.path.join(directory, meta["data_file"]), dtype="<f4")
    shape = meta["logits"]["shape"]
    off = meta["logits"]["offset"]
    logits = data[off:off + shape[0] * shape[1]].reshape(shape).astype(np.float64)
    return meta, logits


def run_llamacpp(path, ids, f32_kv):
    import llama_cpp

    kw = dict(model_path=path, n_ctx=N_CTX, n_batch=N_CTX, n_ubatch=N_CTX, n_threads=2,
              n_threads_batch=2, logits_all=True, verbose=False, seed=0, flash_attn=False)
    if f32_kv:
        kw.update(type_k=GGML_TYPE_F32, type_v=GGML_TYPE_F32)
    llm = llama_cpp.Llama(**kw)
    assert llm.n_vocab() == 512, llm.n_vocab()
    ctx = llm.context_params
    info = {"flash_attn_type": int(ctx.flash_attn_type), "type_k": int(ctx.type_k),
            "type_v": int(ctx.type_v), "n_ctx": int(llm.n_ctx())}
    llm.reset()
    llm.eval(ids)
    logits = np.array(llm.scores[:len(ids)], dtype=np.float32, copy=True)
    del llm
    assert np.all(np.isfinite(logits))
    return logits, info


def copy_with_pre(src, dst, pre):
    """@src with tokenizer.ggml.pre set to @pre, every other key and every tensor the same
    (gguf-py rewrites the file: the string's length changes the header)."""
    import gguf

    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, arch=r.fields["general.architecture"].contents())
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vtype = gguf.GGUFValueType(f.types[0])
        sub = gguf.GGUFValueType(f.types[-1]) if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, pre if name == "tokenizer.ggml.pre" else f.contents(), vtype,
                        sub_type=sub)
    for t in r.tensors:
        assert t.tensor_type == gguf.GGMLQuantizationType.F32, t.name
        w.add_tensor(t.name, np.asarray(t.data, dtype=np.float32).reshape(
            [int(x) for x in reversed(t.shape)]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    rc = gguf.GGUFReader(dst)
    assert rc.fields["tokenizer.ggml.pre"].contents() == pre
    for a, b in zip(r.tensors, rc.tensors):
        assert a.name == b.name and np.array_equal(a.data, b.data), a.name


def diff(a, b, rows):
    d = np.abs(a[rows] - b[rows])
    return {"rows": [int(rows[0]), int(rows[-1])], "max_abs": float(d.max()),
            "rms": float(np.sqrt((d * d).mean())),
            "top1_agree": int((a[rows].argmax(1) == b[rows].argmax(1)).sum()),
            "n_rows": int(len(rows))}


def gelu_check(lc):
    """gpt2: the float64 forward of qk_ref.py's GPT-2 (over gguf-py's tensors) with its exact
    tanh GELU, and with ggml's CPU GELU emulated (GGML_GELU_FP16 in ggml-cpu/vec.h: the input
    rounded to fp16, the value read from an fp16 table; x <= -10 gives 0, x >= 10 gives x),
    each against llama.cpp's logits @lc: how much of llama.cpp's gap is its GELU."""
    import qk_ref

    hp, W = qk_ref.gpt2_load(os.path.join(HERE, "tiny-gpt2.gguf"))
    with open(os.path.join(HERE, "arch-fixture-gpt2.json"), encoding="utf-8") as f:
        ids = json.load(f)["ids"]
    n, E, H = len(ids), hp["n_embd"], hp["n_head"]
    D = E // H

    def gelu_fp16(x):
        y = qk_ref.gelu_tanh(x.astype(np.float16).astype(np.float64))
        y = y.astype(np.float16).astype(np.float64)
        return np.where(x <= -10, 0.0, np.where(x >= 10, x, y))

    def forward(gelu):
        x = W["token_embd.weight"][np.asarray(ids)] + W["position_embd.weight"][:n]
        mask = np.triu(np.ones((n, n), dtype=bool), k=1)
        for l in range(hp["n_layer"]):
            b = "blk.%d." % l
            h = qk_ref.layer_norm(x, W[b + "attn_norm.weight"], W[b + "attn_norm.bias"], hp["eps"])
            qkv = h @ W[b + "attn_qkv.weight"].T + W[b + "attn_qkv.bias"]
            q, k, v = (qkv[:, c * E:(c + 1) * E].reshape(n, H, D) for c in range(3))
            o = np.empty((n, H, D))
            for hh in range(H):
                sc = (q[:, hh] @ k[:, hh].T) / np.sqrt(D)
                sc[mask] = -np.inf
                e = np.exp(sc - sc.max(-1, keepdims=True))
                o[:, hh] = (e / e.sum(-1, keepdims=True)) @ v[:, hh]
            x = x + o.reshape(n, E) @ W[b + "attn_output.weight"].T + W[b + "attn_output.bias"]
            h = qk_ref.layer_norm(x, W[b + "ffn_norm.weight"], W[b + "ffn_norm.bias"], hp["eps"])
            f = gelu(h @ W[b + "ffn_up.weight"].T + W[b + "ffn_up.bias"])
            x = x + f @ W[b + "ffn_down.weight"].T + W[b + "ffn_down.bias"]
        h = qk_ref.layer_norm(x, W["output_norm.weight"], W["output_norm.bias"], hp["eps"])
        return h @ W["token_embd.weight"].T

    exact, emulated = forward(qk_ref.gelu_tanh), forward(gelu_fp16)
    return {"exact_gelu_vs_llamacpp_max_abs": float(np.abs(exact - lc).max()),
            "fp16_gelu_emulated_vs_llamacpp_max_abs": float(np.abs(emulated - lc).max()),
            "method": "qk_ref.py's float64 GPT-2 forward with ggml's fp16 GELU emulated"}


def main():
    import llama_cpp

    ap = argparse.ArgumentParser()
    ap.add_argument("--mistral-no-window", metavar="DIR",
                    help="a folder holding arch_ref_mistral.py --no-window's fixture")
    ap.add_argument("--out", default=HERE)
    args = ap.parse_args()

    doc = {"format": "saccade-arch-llamacpp/1", "generator": "tests/reference/llamacpp_arch.py",
           "llama_cpp_python_version": llama_cpp.__version__,
           "llama_cpp_system_info": llama_cpp.llama_print_system_info().decode().strip(),
           "settings": "Llama(n_ctx=%d, n_batch=n_ubatch=%d, n_threads=2, logits_all=True, "
                       "flash_attn=False, type_k=type_v=GGML_TYPE_F32); reset(); eval(ids); "
                       "scores[:n]" % (N_CTX, N_CTX),
           "data_file": "arch-llamacpp.f32", "dtype": "float32", "endianness": "little",
           "offset_units": "float32 elements from the start of data_file (as arch-fixture-*)",
           "archs": {}}
    blob = []
    off = 0
    for arch in ARCHS:
        meta, ref = load_fixture(HERE, arch)
        path = os.path.join(HERE, meta["model_file"])
        sha = sha256(path)
        assert sha == meta["model_sha256"], (arch, "the GGUF is not the fixture's")
        ids = meta["ids"]
        n = len(ids)
        entry = {}
        run_path = path
        if arch in PRE_RENAMED:
            # llama.cpp refuses the file itself over its tokenizer's name (the message is in
            # PRE_RENAMED); the ids are evaluated without the tokenizer, so it runs a copy
            # that differs in that key only
            fd, run_path = tempfile.mkstemp(suffix="-" + meta["model_file"])
            os.close(fd)
            copy_with_pre(path, run_path, PRE_RENAMED[arch][0])
            entry["llamacpp_refuses_file"] = PRE_RENAMED[arch][1]
            entry["llamacpp_ran_copy"] = {
                "tokenizer.ggml.pre": PRE_RENAMED[arch][0], "sha256": sha256(run_path),
                "differs_in": "tokenizer.ggml.pre only (tensors byte-identical, asserted)"}
        try:
            lc, info = run_llamacpp(run_path, ids, f32_kv=True)
            lc16, _ = run_llamacpp(run_path, ids, f32_kv=False)
        finally:
            if run_path != path:
                os.unlink(run_path)
        assert info["type_k"] == GGML_TYPE_F32 and info["flash_attn_type"] == 0, info
        lc64 = lc.astype(np.float64)
        # rows on which llama.cpp computes the function transformers computed
        rows = np.arange(n)
        entry.update({"model_file": meta["model_file"], "model_sha256": sha,
                      "transformers_fixture": "arch-fixture-%s.json" % arch, "ids": ids,
                      "logits": {"offset": off, "shape": [n, lc.shape[1]]}, "context": info})
        if arch == "mistral":
            swa = meta["config"]["sliding_window"]
            rows = np.arange(swa)
            entry["window"] = (
                "llama.cpp's llama reads no llama.attention.sliding_window: every layer global. "
                "Rows 0..%d see all their keys with or without the window of %d, so llama.cpp "
                "equals the windowed transformers fixture there only" % (swa - 1, swa))
            entry["vs_transformers_windowed_past_window"] = diff(lc64, ref, np.arange(swa, n))
            if args.mistral_no_window:
                nmeta, nref = load_fixture(args.mistral_no_window, arch)
                assert nmeta["ids"] == ids and not nmeta["config"]["window_applied"]
                assert nmeta["model_sha256"] == sha
                entry["vs_transformers_no_window"] = diff(lc64, nref, np.arange(n))
                entry["vs_transformers_no_window_f16_kv"] = diff(lc16.astype(np.float64), nref,
                                                                 np.arange(n))
        entry["rows_equal_function"] = [int(rows[0]), int(rows[-1])]
        entry["vs_transformers"] = diff(lc64, ref, rows)
        entry["vs_transformers_f16_kv"] = diff(lc16.astype(np.float64), ref, rows)
        entry["logit_std"] = float(ref.std())
        if arch == "gpt2":
            entry["gelu_check"] = gelu_check(lc64)
            print("gpt2 GELU: %s" % entry["gelu_check"])
        doc["archs"][arch] = entry
        blob.append(lc.astype("<f4").reshape(-1))
        off += lc.size
        print("%-8s vs transformers (rows %d..%d): max|d| %.3g rms %.3g top-1 %d/%d; F16 KV "
              "max|d| %.3g%s" % (
                  arch, rows[0], rows[-1], entry["vs_transformers"]["max_abs"],
                  entry["vs_transformers"]["rms"], entry["vs_transformers"]["top1_agree"],
                  len(rows), entry["vs_transformers_f16_kv"]["max_abs"],
                  "" if arch != "mistral" else "; past the window (windowed fixture) max|d| "
                  "%.3g%s" % (entry["vs_transformers_windowed_past_window"]["max_abs"],
                              "" if "vs_transformers_no_window" not in entry else
                              "; all rows vs no-window fixture max|d| %.3g (F16 KV %.3g)" % (
                                  entry["vs_transformers_no_window"]["max_abs"],
                                  entry["vs_transformers_no_window_f16_kv"]["max_abs"]))))
    np.concatenate(blob).tofile(os.path.join(args.out, "arch-llamacpp.f32"))
    with open(os.path.join(args.out, "arch-llamacpp.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
