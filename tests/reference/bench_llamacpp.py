#!/usr/bin/env python3
"""Prompt-processing throughput of llama.cpp on the SmolLM2 GGUF (baseline for Saccade's engine).

What it produces
    Prints (stdout) one JSON line with the llama.cpp version and system info, then one JSON line
    per prompt length n:
        {"n": n, "threads": t, "n_batch": n, "runs_s": [...], "median_s": ...,
         "median_tok_per_s": n / median_s, "min_s": ..., "best_tok_per_s": n / min_s,
         "flash_attn": false, "logits_all": false,
         "loadavg_1min_after": system load (other processes distort the numbers; run on an
         idle machine)}
    Nothing is written to disk.

Method
    llama_cpp.Llama(model_path, n_ctx=n, n_batch=n, n_ubatch=n, n_threads=t,
    n_threads_batch=t, logits_all=False, flash_attn=False, verbose=False).
    Prompt = exactly n token ids: llama.cpp's tokenization of a fixed English paragraph
    repeated as needed, truncated to n. Per run: llm.reset(); t0; llm.eval(ids); t1
    (one decode of the whole batch, logits for the last token only). 1 warm-up run, then
    --reps timed runs (default 5).

How to rerun
    pip install llama-cpp-python==0.3.36 gguf numpy
    python3 tests/reference/bench_llamacpp.py [MODEL.gguf] [--threads 2] [--reps 5] [--n 128 512]
    (model path: first positional argument, else $SACCADE_MODEL, else
    data/models/SmolLM2-135M-Instruct.Q4_1.gguf relative to the repository root).
"""

import argparse
import inspect
import json
import os
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")

PROSE = (
    "Attention in a transformer is a way for each position in a sequence to gather information "
    "from the other positions. Every token is turned into a query, a key and a value; the query "
    "is compared with all earlier keys, the scores are scaled and turned into weights by a "
    "softmax, and the output is the weighted average of the values. Whether these weights "
    "explain a model's decisions is still debated, so careful studies compare them with the "
    "effect of removing tokens or heads. "
)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=os.environ.get("SACCADE_MODEL", DEFAULT_MODEL))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="+", default=[128, 512])
    args = ap.parse_args()

    import llama_cpp

    try:
        sysinfo = llama_cpp.llama_print_system_info().decode()
    except Exception:
        sysinfo = None
    print(json.dumps({"llama_cpp_python_version": llama_cpp.__version__,
                      "system_info": sysinfo, "model": os.path.basename(args.model)}),
          flush=True)

    tok = llama_cpp.Llama(model_path=args.model, vocab_only=True, verbose=False)
    base = tok.tokenize(PROSE.encode(), add_bos=False, special=False)
    del tok
    params = inspect.signature(llama_cpp.Llama.__init__).parameters
    for n in args.n:
        ids = (base * (n // len(base) + 1))[:n]
        assert len(ids) == n
        kw = dict(model_path=args.model, n_ctx=n, n_batch=n, n_threads=args.threads,
                  logits_all=False, verbose=False)
        if "n_ubatch" in params:
            kw["n_ubatch"] = n
        if "n_threads_batch" in params:
            kw["n_threads_batch"] = args.threads
        if "flash_attn" in params:
            kw["flash_attn"] = False
        llm = llama_cpp.Llama(**kw)
        runs = []
        for r in range(args.reps + 1):
            llm.reset()
            t0 = time.perf_counter()
            llm.eval(ids)
            dt = time.perf_counter() - t0
            if r > 0:
                runs.append(dt)
        med = statistics.median(runs)
        print(json.dumps({"n": n, "threads": args.threads, "n_batch": n,
                          "runs_s": [round(x, 5) for x in runs], "median_s": round(med, 5),
                          "median_tok_per_s": round(n / med, 1),
                          "min_s": round(min(runs), 5),
                          "best_tok_per_s": round(n / min(runs), 1),
                          "flash_attn": kw.get("flash_attn", None), "logits_all": False,
                          "loadavg_1min_after": round(os.getloadavg()[0], 2)}),
              flush=True)
        del llm


if __name__ == "__main__":
    main()
