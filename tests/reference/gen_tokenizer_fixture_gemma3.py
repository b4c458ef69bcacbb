#!/usr/bin/env python3
"""Generate tests/reference/tokenizer-cases-gemma3.json: llama.cpp tokenizer oracle for Gemma 3.

What it produces
    tokenizer-cases-gemma3.json (next to this script), in the same format as the SmolLM2
    fixture of gen_tokenizer_fixture.py ("saccade-tokenizer-cases/1": header keys, then
    "cases": [{"name", "text_hex", "text" (valid UTF-8 only), "parse_special", "ids",
    "decoded_hex"}], plus "llama_cpp_crash_cases"), so that one C reader serves both.
    Every case is tokenized by llama.cpp itself:
        llama_cpp.Llama(model_path, vocab_only=True, verbose=False)
            .tokenize(text_bytes, add_bos=False, special=parse_special)
    (add_bos=False is llama_tokenize(add_special=false): no <bos> although the GGUF sets
    tokenizer.ggml.add_bos_token; parse_special is the per-case flag). "decoded_hex" is
    llama.cpp's detokenize(ids, special=True), the byte-exact decode oracle.

Cases
    Every text of the SmolLM2 fixture (English, code, numbers, whitespace, contractions,
    punctuation, emoji, other scripts, control characters, invalid UTF-8, the seed Chinese
    sentences and paragraph, long strings, the 132 generated cases with the same seed; the
    SmolLM2 chat markup is kept as plain text), plus what is particular to Gemma's
    SentencePiece vocabulary: its control tokens (<bos>, <eos>, <pad>, <unk>, <mask>,
    <start_of_turn>, <end_of_turn>, <unusedN>) and user-defined tokens ([multimodal], the
    HTML tags <table> ... </footer>, runs of 2..31 spaces, 1..31 newlines and 1..31 tabs,
    <start_of_image>, <end_of_image>) with special parsing on and off, the Gemma chat
    template, byte fallback (<0xNN> pieces for rare CJK, emoji, control characters), space
    runs longer than the longest space token, and a second generated set (seed 20261202)
    splicing Gemma specials into text.

How to rerun
    pip install llama-cpp-python==0.3.36 gguf numpy
    python3 tests/reference/gen_tokenizer_fixture_gemma3.py [MODEL.gguf]
    (model path: argv[1], else $SACCADE_GEMMA_MODEL, else data/models/gemma-3-270m-q4_k_m.gguf
    relative to the repository root). Deterministic for a given llama.cpp version.
"""

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_tokenizer_fixture as base  # noqa: E402  (case lists and helpers, no side effects)

ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "gemma-3-270m-q4_k_m.gguf")
OUT = os.path.join(HERE, "tokenizer-cases-gemma3.json")


def gemma_chat(user, answer=None):
    """Gemma 3's chat template (tokenizer_config.json chat_template) for one user turn."""
    s = "<bos><start_of_turn>user\n" + user + "<end_of_turn>\n<start_of_turn>model\n"
    if answer is not None:
        s += answer + "<end_of_turn>\n"
    return s


def model_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    return os.environ.get("SACCADE_GEMMA_MODEL", DEFAULT_MODEL)


GEMMA_SPECIAL = [
    "<bos>", "<eos>", "<pad>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>",
    "<start_of_turn>user\nhi<end_of_turn>", "<unused0>", "<unused5>", "<unused99>",
    "[multimodal]", "<start_of_image>", "<end_of_image>", "<start_of_image><end_of_image>",
    "<bos><bos>", "hello<eos>world", " <end_of_turn> ", "<start_of_turn>model\n",
    "<table><tr><td>1</td><td>2</td></tr></table>", "<h1>Title</h1><p>para</p>",
    "<strong>bold</strong> <em>it</em> <code>x</code> <b>b</b> <i>i</i> <u>u</u> <s>s</s>",
    "<div><span>x</span></div><ul><li>a</li></ul><a>link</a><img></img>",
    "<sub>2</sub><sup>3</sup><blockquote>q</blockquote><html><body></body></html>",
    "<start_of_turn", "<end_of_turn", "<START_OF_TURN>", "< start_of_turn >", "<|im_start|>",
    "<unused>", "<unused-1>", "<mask><mask>", "<TABLE>", "</ table>",
    gemma_chat("What is the capital of France?"),
    gemma_chat("猫追球，它累了。这里的“它”指的是什么？"),
    gemma_chat("hi", "Hello! How can I help?"),
    gemma_chat("Write a C function.", "```c\nint f(void) { return 1; }\n```"),
]

GEMMA_WHITESPACE = (
    [" " * k for k in (2, 3, 5, 8, 16, 31, 32, 33, 47, 62, 63, 64, 100)]
    + ["\n" * k for k in (1, 2, 4, 16, 31, 32, 33, 40)]
    + ["\t" * k for k in (1, 2, 3, 8, 31, 32, 33)]
    + [" \t" * 5, "\t \n" * 4, "x" + " " * 40 + "y", "x" + "\n" * 35 + "y",
       "\n  indented\n    more\n\t\ttabs", "  leading two", "   leading three", "\tleading tab",
       "trailing two  ", "trailing tab\t", " \n \n ", "a \u00a0 b", "\r\n\r\n\r\n", "\u3000\u3000x"]
)

BYTE_FALLBACK = [
    "𠀀𠀁𠀂", "𪚥 𰻞𰻞面", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "🫠🫡🫥", "🧑‍🔬🧑‍🎨", "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
    "\x01\x02\x1f", "a\x00b\x00c", "\x7f\x7f", "\u200b\u200c\u200d", "\ue000 private use",
    "\U000f0000 plane 15", "\ufdd0 noncharacter", "ꙮ", "𓀀𓀁 hieroglyphs", "ᚠᛇᚻ runes",
    "\u0e01\u0e34\u0e19\u0e02\u0e49\u0e32\u0e27", "ꦲꦏ꧀ꦱꦫ", "𖿰𖿱", "\u2060word joiner",
]

EXTRA_TEXT = [
    "The quick brown fox\njumps over\n\nthe lazy dog.",
    "Gemma 3 270M has 18 layers, 4 query heads and 1 key/value head of size 256.",
    "sliding window 512, local RoPE base 10000, global 1000000",
    "▁ (U+2581 is SentencePiece's space marker) ▁▁",
    "  ▁x", "▁", "▁▁▁",
    "ID: 00123 ; 1,234.5678 ; 10^9 ; 2**31-1 = 2147483647",
    "猫追球，它累了。 猫 追 球",
    "这是一个测试。This is a test. これはテストです。이것은 테스트입니다.",
    "def f(x):\n\treturn x  # tab-indented\n",
    "    four spaces\n        eight spaces\n",
]


def generated_gemma(rng, n):
    specials = ["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<table>", "</td>",
                "<start_of_turn", "turn>", "[multimodal]", "<unused3>"]
    pieces = ["user", "model", "\n", " hi", "猫", " 12", "  ", "\t\t", "'s", "𠀀", "🦙",
              "\n\n\n", "    ", "x"]
    out = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(2, 7)):
            parts.append(rng.choice(specials) if rng.random() < 0.35 else rng.choice(pieces))
        out.append(("gen_gemma_%02d" % i, "".join(parts)))
    return out


def build_cases():
    """Return list of (name, bytes, parse_special)."""
    cases = []
    seen = set()

    def add(name, text, both=False):
        b = text.encode("utf-8") if isinstance(text, str) else text
        for ps in ((False, True) if both else (False,)):
            if (b, ps) in seen:
                continue
            seen.add((b, ps))
            cases.append((name, b, ps))

    for name, b, ps in base.build_cases():
        add(name, b, both=ps)  # SmolLM2's cases (their specials are plain text for Gemma)
    for i, t in enumerate(GEMMA_SPECIAL):
        add("gemma_special_%02d" % i, t, both=True)
    for i, t in enumerate(GEMMA_WHITESPACE):
        add("gemma_ws_%02d" % i, t)
    for i, t in enumerate(BYTE_FALLBACK):
        add("gemma_bytefb_%02d" % i, t)
    for i, t in enumerate(EXTRA_TEXT):
        add("gemma_text_%02d" % i, t)
    add("gemma_long_chat", gemma_chat(base.SEED_PARAGRAPH + "\n请总结上文。"), both=True)
    rng = random.Random(20261202)
    for name, t in generated_gemma(rng, 24):
        add(name, t, both=True)
    return cases


def main():
    import llama_cpp

    path = model_path()
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    facts = base.read_vocab_facts(path)
    facts["n_vocab"] = llm.n_vocab()
    facts["llama_bos_id"] = llm.token_bos()
    facts["llama_eos_id"] = llm.token_eos()

    out_cases, crashes = [], []
    for name, b, ps in build_cases():
        res = base.tokenize_isolated(llm, b, ps)
        if res is None:
            crashes.append({"name": name, "text_hex": b.hex(), "parse_special": ps,
                            "llama_cpp": "process aborted (uncaught C++ exception)"})
            print("llama.cpp crashed on case %s (%s)" % (name, b.hex()))
            continue
        ids, dec = res
        c = {"name": name, "text_hex": b.hex(), "parse_special": ps, "ids": ids,
             "decoded_hex": dec.hex()}
        try:
            c["text"] = b.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            pass
        out_cases.append(c)

    # Sanity checks on ids that are fixed by the vocabulary (token list of the GGUF).
    by = {(c.get("text"), c["parse_special"]): c["ids"] for c in out_cases}
    assert by[("<start_of_turn>", True)] == [105], by[("<start_of_turn>", True)]
    assert by[("<end_of_turn>", True)] == [106]
    assert by[("<bos>", True)] == [2]
    assert len(by[("<start_of_turn>", False)]) > 1
    assert facts["llama_bos_id"] == 2 and facts["llama_eos_id"] in (1, 106), facts

    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:  # pragma: no cover
        gguf_ver = None
    doc = {
        "format": "saccade-tokenizer-cases/1",
        "generator": "tests/reference/gen_tokenizer_fixture_gemma3.py",
        "model_file": os.path.basename(path),
        "model_sha256": base.sha256(path),
        "llama_cpp_python_version": llama_cpp.__version__,
        "gguf_py_version": gguf_ver,
        "vocab": facts,
        "tokenize_call": "llama_cpp.Llama(model_path, vocab_only=True).tokenize(text_bytes, "
                         "add_bos=False, special=parse_special)  (= llama_tokenize with "
                         "add_special=false, parse_special=<case>)",
        "decode_call": "llama_cpp.Llama.detokenize(ids, special=True) (token_to_piece, "
                       "special=true, concatenated)",
        "n_cases": len(out_cases),
        "llama_cpp_crash_cases_note": "inputs on which llama.cpp itself aborts (no oracle ids); "
                                      "an engine must not crash on them",
        "llama_cpp_crash_cases": crashes,
        "cases": out_cases,
    }
    base.write_json_one_case_per_line(OUT, doc, "cases")
    print("wrote %s: %d cases, %d llama.cpp crashes (n_vocab=%d, model=%s)" % (
        OUT, len(out_cases), len(crashes), facts["n_vocab"], facts["model"]))


if __name__ == "__main__":
    main()
