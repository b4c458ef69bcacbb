#!/usr/bin/env python3
"""gen_vocab_cases.py — the part of a vocabulary that llama.cpp's test cases for it can use,
for tests/engine/test-llama-vocab-tokenizer.c (issue 28 item 3): Phi-3's and Llama 2's
SentencePiece vocabularies (phi-3, llama-spm) and Llama 3's byte-level BPE (llama-bpe).

What the committed files are
    tests/reference/ggml-vocab-<family>.gguf.inp and .out are llama.cpp's
    models/ggml-vocab-<family>.gguf.inp/.out (MIT, the ggml authors) copied unchanged from the
    llama-cpp-python 0.3.36 source distribution (vendor/llama.cpp/models/): the texts, each
    followed by "\\n__ggml_vocab_test__\\n", and one line of ids per text, as llama.cpp's
    tests/test-tokenizer-0 writes and reads them (add_special=false, parse_special=false).
    The vocab-only GGUFs beside them are 0.7 MB (phi-3, llama-spm) and 7.8 MB (llama-bpe);
    this script writes tests/reference/vocab-<family>-cases.json instead: every token whose
    text can occur while tokenizing the cases, with its id, type and score, every merge
    (BPE) that can apply, in rank order, and the tokenizer keys.

Why that subset tokenizes the cases exactly as the whole vocabulary does
    SentencePiece (llama.cpp's llm_tokenizer_spm): the text, spaces made U+2581 and a U+2581
    put in front, is cut into characters, and a pair of adjacent symbols is merged only when
    its concatenation is a token; so every symbol ever formed is a substring of that text,
    and the only tokens consulted are substrings of it, with their scores, and the <0xNN>
    byte tokens of the fallback. Keeping every token whose text is a substring of some case's
    escaped text (and every byte token) keeps every lookup's answer.
    Byte-level BPE (llm_tokenizer_bpe): each pre-tokenized piece is a substring of the text,
    its GPT-2 byte-to-unicode form a substring of the text's; BPE merges adjacent symbols of
    the piece by the rank of the pair, and Llama 3's ignore_merges looks the whole piece up
    first; every symbol, pair and lookup is a substring of the encoded text. Keeping the
    tokens that are such substrings and the merges whose result is one (their relative
    ranks kept) keeps every lookup's and every rank comparison's answer.
    In both, every token that is not NORMAL (control, user-defined, unknown, unused, byte)
    is kept: the special-token partition looks for user-defined texts anywhere.
    The C test fills the other ids with names that no lookup can produce (they hold a plain
    space, which neither form's text ever does).

How to rerun (any python with the gguf package: gguf 0.19.0, numpy 2.4.6)
    pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   # the sdist
    tar xzf llama_cpp_python-0.3.36.tar.gz
    python3 tests/reference/gen_vocab_cases.py llama_cpp_python-0.3.36
"""
import hashlib
import json
import os
import shutil
import sys

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = b"\n__ggml_vocab_test__\n"
FAMILIES = ("phi-3", "llama-spm", "llama-bpe")
NORMAL = 1


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_texts(path):
    raw = open(path, "rb").read()
    texts, pos = [], 0
    while pos < len(raw):  # test-tokenizer-0.cpp's read_tests
        nxt = raw.find(SEP, pos)
        if nxt < 0:
            texts.append(raw[pos:])
            break
        texts.append(raw[pos:nxt])
        pos = nxt + len(SEP)
    return texts


def bytes_to_unicode():
    """GPT-2's byte -> code point table (llama.cpp's unicode_byte_to_utf8)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_vocab_cases.py SDIST_DIR (the unpacked llama-cpp-python 0.3.36)")
    models = os.path.join(sys.argv[1], "vendor", "llama.cpp", "models")
    b2u = bytes_to_unicode()
    for fam in FAMILIES:
        vocab = os.path.join(models, "ggml-vocab-%s.gguf" % fam)
        for ext in (".inp", ".out"):
            mine = os.path.join(HERE, "ggml-vocab-%s.gguf%s" % (fam, ext))
            if not os.path.exists(mine):
                shutil.copyfile(vocab + ext, mine)
            assert sha256(mine) == sha256(vocab + ext), "%s differs from the sdist's" % mine
        texts = read_texts(os.path.join(HERE, "ggml-vocab-%s.gguf.inp" % fam))
        r = gguf.GGUFReader(vocab)

        def field(key, r=r):
            f = r.fields.get(key)
            return None if f is None else f

        def strings(key, r=r):
            f = r.fields[key]
            return [bytes(f.parts[i]) for i in f.data]

        def scalar(key, r=r):
            f = r.fields.get(key)
            return None if f is None else f.parts[f.data[0]].tolist()[0]

        model = bytes(field("tokenizer.ggml.model").parts[-1]).decode()
        pre = bytes(field("tokenizer.ggml.pre").parts[-1]).decode()
        tokens = strings("tokenizer.ggml.tokens")
        types = [int(field("tokenizer.ggml.token_type").parts[i][0])
                 for i in field("tokenizer.ggml.token_type").data]
        scores = None
        if field("tokenizer.ggml.scores") is not None:
            f = field("tokenizer.ggml.scores")
            scores = [float(f.parts[i][0]) for i in f.data]
        if model == "llama":
            space = "\u2581".encode()
            hay = [space + t.replace(b" ", space) for t in texts]
        elif model == "gpt2":
            hay = ["".join(b2u[b] for b in t).encode() for t in texts]
        else:
            sys.exit("%s: tokenizer model %s" % (fam, model))
        blob = b"\0".join(hay)  # no token text holds a NUL, so no match spans two texts

        kept = [i for i, t in enumerate(tokens) if types[i] != NORMAL or t in blob]
        entry = []
        for i in kept:
            e = [i, tokens[i].decode("utf-8"), types[i]]
            if scores is not None:
                e.append(scores[i])
            entry.append(e)
        merges = []
        if model == "gpt2":
            for m in strings("tokenizer.ggml.merges"):
                a, b = m.split(b" ", 1)
                if a + b in blob:
                    merges.append(m.decode("utf-8"))
        out = {
            "source": "llama.cpp models/ggml-vocab-%s.gguf from llama-cpp-python 0.3.36, "
                      "sha256 %s; the tokens and merges its .inp cases can use "
                      "(tests/reference/gen_vocab_cases.py)" % (fam, sha256(vocab)),
            "family": fam, "model": model, "pre": pre, "n_vocab": len(tokens),
            "n_merges_full": len(strings("tokenizer.ggml.merges")) if model == "gpt2" else 0,
            "bos_id": scalar("tokenizer.ggml.bos_token_id"),
            "eos_id": scalar("tokenizer.ggml.eos_token_id"),
            "unk_id": scalar("tokenizer.ggml.unknown_token_id"),
            "add_bos": scalar("tokenizer.ggml.add_bos_token"),
            "add_eos": scalar("tokenizer.ggml.add_eos_token"),
            "add_space_prefix": scalar("tokenizer.ggml.add_space_prefix"),
            "n_cases": len(texts),
            "tokens": entry, "merges": merges,
        }
        path = os.path.join(HERE, "vocab-%s-cases.json" % fam)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
        print("%s: %d of %d tokens, %d merges, %d cases -> %s (%d bytes)" % (
            fam, len(entry), len(tokens), len(merges), len(texts), path, os.path.getsize(path)))


if __name__ == "__main__":
    sys.exit(main())
