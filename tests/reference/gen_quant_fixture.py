#!/usr/bin/env python3
"""Generate tests/reference/quant-fixture.json, the external oracle for tests/engine/test-quant.c.

The oracle is the `gguf` Python package (llama.cpp's gguf-py), whose numpy dequantisers
are an implementation of ggml's block formats independent of ours. For every type that
Saccade decodes, this script builds a deterministic row of blocks, asks gguf.quants to
dequantise it, and records the raw bytes (hex) and the expected floats (decimal strings
with 9 significant digits, which round-trip a float32 exactly). Types gguf can quantise
(F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) get one row quantised from random floats; every
block type also gets one row of random bytes with finite fp16 scales patched in, so that
all code patterns appear. It also records gguf's table of (block size, type size) per type
id, which the C test compares with sc_type_traits().

It is not a test by itself and is not run by the build; rerun it by hand if the fixture
format changes:

    pip install gguf numpy
    python3 tests/reference/gen_quant_fixture.py

The fixture is committed; numpy's generator streams are stable, but any regenerated
fixture is equally valid since the expected values come from gguf, not from us.
"""

import json
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import dequantize, quantize

SEED = 20240617
N_BLOCKS = 2            # two blocks per row: catches a wrong stride between blocks
N_PLAIN = 64            # elements per row for the block-size-1 types

# Byte offsets of the fp16 scales in each block type (ggml src/ggml-common.h), used to
# make random blocks carry finite, moderate scales.
HALF_OFFSETS = {
    T.Q4_0: [0],
    T.Q4_1: [0, 2],
    T.Q5_0: [0],
    T.Q5_1: [0, 2],
    T.Q8_0: [0],
    T.Q2_K: [80, 82],
    T.Q3_K: [108],
    T.Q4_K: [0, 2],
    T.Q5_K: [0, 2],
    T.Q6_K: [208],
}

QUANTIZABLE = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]


def fmt(values: np.ndarray) -> list[str]:
    out = []
    for v in values.astype(np.float32).ravel():
        assert np.isfinite(v), "fixture values must be finite"
        out.append(format(float(v), ".9g"))
    return out


def case(qtype: T, raw: np.ndarray, source: str) -> dict:
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(1, -1)
    expected = dequantize(raw, qtype).reshape(-1)
    return {
        "type": int(qtype),
        "name": qtype.name,
        "source": source,
        "n": int(expected.size),
        "raw_hex": raw.tobytes().hex(),
        "expected": fmt(expected),
    }


def random_blocks(rng: np.random.Generator, qtype: T) -> np.ndarray:
    block_size, type_size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(N_BLOCKS, type_size), dtype=np.uint8)
    for b in range(N_BLOCKS):
        for off in HALF_OFFSETS[qtype]:
            # |scale| in [2^-12, 2^-2): the magnitudes real weights have, and both signs.
            mag = np.float16(2.0 ** rng.uniform(-12.0, -2.0))
            sign = -1.0 if rng.integers(0, 2) else 1.0
            raw[b, off:off + 2] = np.frombuffer(np.float16(sign * mag).tobytes(), dtype=np.uint8)
    return raw


def main() -> int:
    rng = np.random.default_rng(SEED)
    cases = []

    # F32: the bytes are the answer.
    x = rng.standard_normal(N_PLAIN).astype(np.float32)
    cases.append(case(T.F32, x.view(np.uint8), "random floats"))

    # F16: normals of several magnitudes plus subnormals and signed zeros.
    x = (rng.standard_normal(N_PLAIN) * 2.0 ** rng.integers(-20, 12, N_PLAIN)).astype(np.float16)
    x[:4] = np.array([0.0, -0.0, 2.0 ** -24, -(2.0 ** -15)], dtype=np.float16)
    cases.append(case(T.F16, x.view(np.uint8), "random halves with subnormals"))

    # BF16: gguf rounds float32 to bf16 (RNE) and we decode its bytes.
    x = rng.standard_normal(N_PLAIN).astype(np.float32) * np.float32(100.0)
    cases.append(case(T.BF16, quantize(x.reshape(1, -1), T.BF16), "gguf.quants.quantize"))

    for qtype in QUANTIZABLE:
        block_size, _ = GGML_QUANT_SIZES[qtype]
        x = rng.standard_normal((1, N_BLOCKS * block_size)).astype(np.float32)
        cases.append(case(qtype, quantize(x, qtype), "gguf.quants.quantize"))

    for qtype in HALF_OFFSETS:
        cases.append(case(qtype, random_blocks(rng, qtype), "random bytes, finite scales"))

    sizes = [
        {"type": int(t), "name": t.name, "block_size": bs, "type_size": ts}
        for t, (bs, ts) in sorted(GGML_QUANT_SIZES.items(), key=lambda kv: int(kv[0]))
    ]

    fixture = {
        "generator": "tests/reference/gen_quant_fixture.py",
        "gguf_version": getattr(gguf, "__version__", None) or _dist_version("gguf"),
        "numpy_version": np.__version__,
        "seed": SEED,
        "type_sizes": sizes,
        "cases": cases,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quant-fixture.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"wrote {path}: {len(cases)} cases, {len(sizes)} type sizes")
    return 0


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


if __name__ == "__main__":
    sys.exit(main())
