#!/usr/bin/env python3
"""Check llama.cpp's qwen2 vocabulary test cases: their provenance, and that the model's own
vocabulary gives the same ids as the vocab-only file they were made on.

What the committed files are
    tests/reference/ggml-vocab-qwen2.gguf.inp and ggml-vocab-qwen2.gguf.out are llama.cpp's
    models/ggml-vocab-qwen2.gguf.inp/.out (MIT, the ggml authors) copied unchanged from the
    llama-cpp-python 0.3.36 source distribution (vendor/llama.cpp/models/). The .inp holds 46
    texts, each followed by "\\n__ggml_vocab_test__\\n"; the .out one line of ids per text, as
    llama.cpp's tests/test-tokenizer-0 writes and reads them (add_special=false,
    parse_special=false).

What this script checks (it writes nothing)
    1. the committed .inp/.out are byte-identical to the sdist's (SHA-256 printed);
    2. llama.cpp tokenizes every text into the .out ids on the vocab-only
       ggml-vocab-qwen2.gguf (Qwen1.5's tokenizer, 151936 tokens) ...
    3. ... and on Qwen2.5-Coder-0.5B-Instruct's vocabulary too (same ids for every case).
    Point 3 is why tests/engine/test-qwen2-tokenizer.c runs the cases through the model's
    tokenizer (a file CI fetches) rather than the vocab-only file (not in the repository: 5.9 MB,
    and its vocabulary is Qwen1.5's); with $SACCADE_QWEN2_VOCAB set to the vocab-only file the C
    test runs them through both.

How to rerun
    pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   # the sdist
    tar xzf llama_cpp_python-0.3.36.tar.gz
    python3 tests/reference/check_vocab_qwen2.py llama_cpp_python-0.3.36 [MODEL.gguf]
    (needs llama-cpp-python 0.3.36 installed; model: second argument, else
    $SACCADE_QWEN2_MODEL, else data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf)
"""

import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf")
SEP = b"\n__ggml_vocab_test__\n"


def read_cases(inp_path, out_path):
    raw = open(inp_path, "rb").read()
    texts, pos = [], 0
    while pos < len(raw):  # test-tokenizer-0.cpp's read_tests
        nxt = raw.find(SEP, pos)
        if nxt < 0:
            texts.append(raw[pos:])
            break
        texts.append(raw[pos:nxt])
        pos = nxt + len(SEP)
    lines = open(out_path, "rb").read().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert len(texts) == len(lines), (len(texts), len(lines))
    return texts, [[int(x) for x in ln.split()] for ln in lines]


def main():
    import llama_cpp

    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    models = os.path.join(sys.argv[1], "vendor", "llama.cpp", "models")
    model = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("SACCADE_QWEN2_MODEL",
                                                                  DEFAULT_MODEL)
    for ext in ("inp", "out"):
        ours = open(os.path.join(HERE, "ggml-vocab-qwen2.gguf." + ext), "rb").read()
        theirs = open(os.path.join(models, "ggml-vocab-qwen2.gguf." + ext), "rb").read()
        assert ours == theirs, "ggml-vocab-qwen2.gguf.%s differs from the sdist's" % ext
        print("ggml-vocab-qwen2.gguf.%s: identical to the sdist's, sha256 %s" % (
            ext, hashlib.sha256(ours).hexdigest()))
    texts, want = read_cases(os.path.join(HERE, "ggml-vocab-qwen2.gguf.inp"),
                             os.path.join(HERE, "ggml-vocab-qwen2.gguf.out"))
    for path in (os.path.join(models, "ggml-vocab-qwen2.gguf"), model):
        llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
        bad = [i for i, (t, w) in enumerate(zip(texts, want))
               if [int(x) for x in llm.tokenize(t, add_bos=False, special=False)] != w]
        print("%s: %d cases, %d differ from the .out ids%s" % (
            os.path.basename(path), len(texts), len(bad), (" " + str(bad)) if bad else ""))
        assert not bad
        del llm
    print("llama.cpp %s: every case gives the .out ids on both vocabularies" % llama_cpp.__version__)


if __name__ == "__main__":
    main()
