#!/usr/bin/env python3
"""gen_vocab_gpt2.py — the part of GPT-2's vocabulary that llama.cpp's gpt-2 vocabulary test
cases need, for tests/engine/test-gpt2-tokenizer.c (issue 28 item 3).

What the committed files are
    tests/reference/ggml-vocab-gpt-2.gguf.inp and .out are llama.cpp's
    models/ggml-vocab-gpt-2.gguf.inp/.out (MIT, the ggml authors) copied unchanged from the
    llama-cpp-python 0.3.36 source distribution (vendor/llama.cpp/models/): the texts, each
    followed by "\\n__ggml_vocab_test__\\n", and one line of ids per text, as llama.cpp's
    tests/test-tokenizer-0 writes and reads them (add_special=false, parse_special=false).
    The vocab-only ggml-vocab-gpt-2.gguf beside them (GPT-2's tokenizer: OpenAI's, MIT; 50257
    tokens, 50000 merges, pre-tokenizer "gpt-2") is 1.77 MB, too large to commit for one test,
    so this script writes tests/reference/vocab-gpt2-cases.json: every token and merge the
    cases can use, with their ids and ranks.

Why that subset tokenizes the cases exactly as the whole vocabulary does
    In GPT-2's vocabulary token 256 + r is the merge of rank r (the script asserts it for
    all 50000 merges, and that no two merges make the same token), so each token above the 256
    byte tokens is made by exactly one merge. Byte-level BPE on a word applies, step by step,
    the lowest-ranked merge among adjacent pairs; every merge it applies makes a symbol that
    ends up inside one of the word's final tokens. So the merges applied are those in the
    merge trees of the final ids (the .out), and BPE with only those merges, at their ranks,
    takes the same steps: the merge it chose is still there and still the lowest-ranked
    applicable one. The JSON holds the 256 byte tokens, every token of those trees, the
    merges that make them (ordered by rank) and <|endoftext|>; the C test fills the other
    ids with names no merge can make.

How to rerun (any python with the gguf package: gguf 0.19.0, numpy 2.4.6)
    pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   # the sdist
    tar xzf llama_cpp_python-0.3.36.tar.gz
    python3 tests/reference/gen_vocab_gpt2.py llama_cpp_python-0.3.36
"""
import hashlib
import json
import os
import sys

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = b"\n__ggml_vocab_test__\n"


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_vocab_gpt2.py SDIST_DIR (the unpacked llama-cpp-python 0.3.36)")
    models = os.path.join(sys.argv[1], "vendor", "llama.cpp", "models")
    vocab = os.path.join(models, "ggml-vocab-gpt-2.gguf")
    for ext in (".inp", ".out"):
        mine = os.path.join(HERE, "ggml-vocab-gpt-2.gguf" + ext)
        assert sha256(mine) == sha256(vocab + ext), "%s differs from the sdist's" % mine

    r = gguf.GGUFReader(vocab)

    def strings(key):
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    def scalar(key):
        return r.fields[key].contents()

    tokens, merges = strings("tokenizer.ggml.tokens"), strings("tokenizer.ggml.merges")
    types = [int(r.fields["tokenizer.ggml.token_type"].parts[i][0])
             for i in r.fields["tokenizer.ggml.token_type"].data]
    assert scalar("tokenizer.ggml.pre") == "gpt-2" and scalar("tokenizer.ggml.model") == "gpt2"
    made_by = {}
    for rank, m in enumerate(merges):
        a, b = m.split(" ")
        assert tokens[256 + rank] == a + b, (rank, m)
        assert a + b not in made_by, m
        made_by[a + b] = rank
    tok_id = {t: i for i, t in enumerate(tokens)}

    lines = open(vocab + ".out", "rb").read().decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    want = [int(x) for ln in lines for x in ln.split()]

    keep_tokens, keep_merges = set(range(256)), set()
    stack = list(want)
    while stack:
        i = stack.pop()
        if i in keep_tokens and i < 256:
            continue
        keep_tokens.add(i)
        if i < 256 or tokens[i] not in made_by:
            continue
        rank = made_by[tokens[i]]
        if rank in keep_merges:
            continue
        keep_merges.add(rank)
        a, b = merges[rank].split(" ")
        stack += [tok_id[a], tok_id[b]]
    eot = int(scalar("tokenizer.ggml.eos_token_id"))
    keep_tokens.add(eot)

    out = {
        "source": "llama.cpp models/ggml-vocab-gpt-2.gguf (llama-cpp-python 0.3.36 sdist)",
        "vocab_sha256": sha256(vocab),
        "inp_sha256": sha256(vocab + ".inp"),
        "out_sha256": sha256(vocab + ".out"),
        "pre": "gpt-2",
        "n_vocab": len(tokens),
        "n_merges_full": len(merges),
        "bos_id": int(scalar("tokenizer.ggml.bos_token_id")),
        "eos_id": eot,
        "tokens": [[i, tokens[i], types[i]] for i in sorted(keep_tokens)],
        "merges": [merges[k] for k in sorted(keep_merges)],
    }
    path = os.path.join(HERE, "vocab-gpt2-cases.json")
    with open(path, "w", encoding="utf-8") as f:  # one token or merge a line
        head = json.dumps({k: v for k, v in out.items() if k not in ("tokens", "merges")},
                          ensure_ascii=False, indent=1)
        f.write(head[:-2] + ',\n "tokens": [\n')
        f.write(",\n".join(json.dumps(t, ensure_ascii=False) for t in out["tokens"]))
        f.write('\n ],\n "merges": [\n')
        f.write(",\n".join(json.dumps(m, ensure_ascii=False) for m in out["merges"]))
        f.write("\n ]\n}\n")
    print("%s: %d of %d tokens, %d of %d merges, %d bytes" % (
        path, len(keep_tokens), len(tokens), len(keep_merges), len(merges), os.path.getsize(path)))


if __name__ == "__main__":
    main()
