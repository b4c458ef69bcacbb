#!/usr/bin/env python3
"""gpu-peers.py — the PyTorch peers of tests/gpu/bench-cuda-attention, for tools/gpu-check.sh.

Prints one JSON line per measurement, keyed as the benchmark's lines are:
  {"kind":"sdpa","n":N,"dtype":...,"ms":...,"tflops":...}
      torch.nn.functional.scaled_dot_product_attention, causal, 9 query heads over 3 KV
      heads (enable_gqa), head_dim 64, batch 1; FLOPs counted as the benchmark counts them
      (4 n^2 d H / 2); median of R timed calls after 3 warm-ups, CUDA events.
  {"kind":"hf_eager","n":N,"seconds":...,"seconds_to_host":...}
      transformers' LlamaForCausalLM with SmolLM2-135M's configuration (random weights: the
      machine has no network), attn_implementation="eager", fp32, output_attentions=True;
      seconds_to_host adds copying every attention matrix to host memory as fp16 (what our
      capture delivers). Only n <= --hf-max (the attentions of 30 x 9 heads at n = 8192 in
      fp32 are 72 GB).
Exits 0 with a note on stderr when torch (or transformers) cannot be imported.
"""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", type=int, default=[512, 1024, 2048, 4096, 8192])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--hf-max", type=int, default=2048)
    a = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001 - any import failure means "no peer here"
        print(f"# torch is not importable here ({e}); no PyTorch peers", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("# torch sees no CUDA device; no PyTorch peers", file=sys.stderr)
        return 0
    dev = torch.device("cuda")
    H, KV, D = 9, 3, 64

    def timed(fn, reps):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            torch.cuda.synchronize()
            ts.append(s.elapsed_time(e) / 1e3)
        return statistics.median(ts)

    for n in a.sizes:
        for dtype in (torch.float16, torch.float32):
            q = torch.randn(1, H, n, D, device=dev, dtype=dtype)
            k = torch.randn(1, KV, n, D, device=dev, dtype=dtype)
            v = torch.randn(1, KV, n, D, device=dev, dtype=dtype)
            t = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                             enable_gqa=True), a.reps)
            flops = 4.0 * n * n * D * H / 2.0
            print(json.dumps({"kind": "sdpa", "n": n, "dtype": str(dtype).split(".")[-1],
                              "ms": t * 1e3, "tflops": flops / t * 1e-12}), flush=True)
            del q, k, v
    try:
        from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
    except Exception as e:  # noqa: BLE001
        print(f"# transformers is not importable here ({e}); no HF peer", file=sys.stderr)
        return 0
    cfg = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536,
                      num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
                      max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5,
                      tie_word_embeddings=True)
    torch.manual_seed(0)
    try:
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
    except Exception:  # noqa: BLE001 - older or newer transformers: set it on the config
        cfg._attn_implementation = "eager"
        model = LlamaForCausalLM(cfg)
    model = model.to(device=dev, dtype=torch.float32).eval()
    print(f"# HF: transformers LlamaForCausalLM, attention "
          f"{getattr(model.config, '_attn_implementation', '?')}", file=sys.stderr)
    for n in [s for s in a.sizes if s <= a.hf_max]:
        ids = torch.randint(0, cfg.vocab_size, (1, n), device=dev)

        def fwd():
            with torch.no_grad():
                return model(ids, output_attentions=True)

        def fwd_host():
            out = fwd()
            return [att.to(torch.float16).cpu() for att in out.attentions]

        reps = max(1, a.reps // 5)
        t = timed(fwd, reps)
        th = timed(fwd_host, reps)
        print(json.dumps({"kind": "hf_eager", "n": n, "seconds": t, "seconds_to_host": th}),
              flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
