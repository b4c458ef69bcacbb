#!/usr/bin/env python3
"""Generate tests/reference/tokenizer-cases-qwen2.json: llama.cpp tokenizer oracle for Qwen2.

What it produces
    tokenizer-cases-qwen2.json (next to this script), in the format of the SmolLM2 fixture of
    gen_tokenizer_fixture.py ("saccade-tokenizer-cases/1": header keys, then "cases":
    [{"name", "text_hex", "text" (valid UTF-8 only), "parse_special", "ids", "decoded_hex"}],
    plus "llama_cpp_crash_cases"), so that one C reader serves all three. Every case is
    tokenized by llama.cpp itself:
        llama_cpp.Llama(model_path, vocab_only=True, verbose=False)
            .tokenize(text_bytes, add_bos=False, special=parse_special)
    (= llama_tokenize(add_special=false, parse_special=<case>); the Qwen GGUF sets
    tokenizer.ggml.add_bos_token false anyway). "decoded_hex" is llama.cpp's
    detokenize(ids, special=True), the byte-exact decode oracle.

Cases
    Every text of the SmolLM2 fixture (English, code, numbers, whitespace, contractions,
    punctuation, emoji, other scripts, control characters, invalid UTF-8, the seed Chinese
    sentences and paragraph, long strings, the 132 generated cases with the same seed; its
    ChatML markup <|im_start|>, <|im_end|>, <|endoftext|> is Qwen's too), plus what is
    particular to Qwen2's byte-level BPE with the "qwen2" pre-tokenizer: digit runs (split into
    single digits, unlike llama3's groups of three), contractions in upper case ('S, 'LL: the
    pattern folds case), \\r\\n and whitespace runs before newlines, Qwen2.5's special tokens
    (<|endoftext|> 151643, <|im_start|> 151644, <|im_end|> 151645, the FIM tokens
    <|fim_prefix|> ... <|fim_pad|>, <|repo_name|>, <|file_sep|>, <tool_call>, the vision tokens
    <|vision_start|> ...) with special parsing on and off, the Qwen chat template, code (this is
    a coder model), and a generated set (seed 20261206) splicing the specials into text.

How to rerun
    pip install llama-cpp-python==0.3.36 gguf numpy
    python3 tests/reference/gen_tokenizer_fixture_qwen2.py [MODEL.gguf]
    (model path: argv[1], else $SACCADE_QWEN2_MODEL, else
    data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf relative to the repository root).
    Deterministic for a given llama.cpp version.
"""

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_tokenizer_fixture as base  # noqa: E402  (case lists and helpers, no side effects)

ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf")
OUT = os.path.join(HERE, "tokenizer-cases-qwen2.json")

SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def qwen_chat(user, answer=None):
    """Qwen2.5's chat template (the GGUF's tokenizer.chat_template) for one user turn."""
    s = ("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n" + user
         + "<|im_end|>\n<|im_start|>assistant\n")
    if answer is not None:
        s += answer + "<|im_end|>\n"
    return s


def model_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    return os.environ.get("SACCADE_QWEN2_MODEL", DEFAULT_MODEL)


QWEN_SPECIAL = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>",
    "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n    return c<|fim_middle|>",
    "<|repo_name|>saccade\n<|file_sep|>engine/model/sc-arch-qwen2.c\n#include <stddef.h>\n",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    "<|vision_start|><|image_pad|><|image_pad|><|vision_end|>describe",
    "<|im_start|><|im_end|><|endoftext|>", "hello<|endoftext|>world", " <|im_end|> ",
    "<|im_start|>assistant\n", "<|im_start", "<|im_end|", "<|IM_START|>", "<| im_start |>",
    "<|fim_prefix", "fim_prefix|>", "<tool_call", "<|endoftext|><|endoftext|>",
    "<s></s><unk><bos><eos>", "[PAD151646]", "<|extra_0|>",
    qwen_chat("What is the capital of France?"),
    qwen_chat("猫追球，它累了。这里的“它”指的是什么？"),
    qwen_chat("hi", "Hello! How can I help?"),
    qwen_chat("Write a C function.", "```c\nint f(void) { return 1; }\n```"),
    qwen_chat("Write a Python function that returns the n-th Fibonacci number."),
]

QWEN_DIGITS = [
    "0", "12", "123", "1234", "12345", "1234567890", "3.14159", "1,234,567.89", "-42", "+7",
    "2024-11-29", "10^9", "0x1F", "1e-6", "v0.9.0", "a1b2c3", "Qwen2.5", "GPT-4o", "x86-64",
    "٠١٢٣٤٥", "①②③", "½¼¾", "²³¹", "𝟘𝟙𝟚", "一二三四五", "１２３", "12 34  56\t78\n90",
]

QWEN_TEXT = [
    "HE'S HERE. WE'LL SEE. THEY'VE GONE. I'D SAY YOU'RE RIGHT, DON'T YOU'M?",
    "it'S 'T 'Re 'vE 'M 'Ll 'D ''s '", "rock'n'roll o'clock ma'am y'all'd've",
    "line one\r\nline two\r\n\r\nline four", "a  \n  b", "a \t \n\t c", "x\n\n\n\ny",
    "  \n", "\n  ", "\r", "\r\r\n\n", "tab\tseparated\tvalues\n1\t2\t3",
    "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; i++) {\n\tsum += a[i];\n}\n",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
    "fn main() { println!(\"{}\", 1 + 2); }",
    "const add = (a, b) => a + b; // arrow\n",
    "<html><body><div class=\"x\">猫</div></body></html>",
    "$ ls -la | grep '\\.gguf$' && echo ok",
    "    indented four\n        eight\n            twelve",
    "...!!!???,,,;;;::: --- ___ *** /// \\\\\\",
    "«quoted» „quoted“ ‹single›", "naïve façade résumé", "Ελληνικά Русский עברית العربية",
    "这是一个测试。This is a test. これはテストです。이것은 테스트입니다.",
    "emoji 👩‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏿 tone",
]


def generated_qwen(rng, n):
    specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>",
                "<|fim_suffix|>", "<tool_call>", "</tool_call>", "<|im_start", "|>"]
    pieces = ["user", "assistant\n", "\n", " hi", "猫", " 12", "345", "  ", "\t\t", "'S", "'ll",
              "🦙", "\r\n", "    ", "x", "def ", "()", "\n\n\n"]
    out = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(2, 7)):
            parts.append(rng.choice(specials) if rng.random() < 0.35 else rng.choice(pieces))
        out.append(("gen_qwen_%02d" % i, "".join(parts)))
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
        add(name, b, both=ps)  # SmolLM2's cases (its ChatML specials are Qwen's too)
    for i, t in enumerate(QWEN_SPECIAL):
        add("qwen_special_%02d" % i, t, both=True)
    for i, t in enumerate(QWEN_DIGITS):
        add("qwen_digits_%02d" % i, t)
    for i, t in enumerate(QWEN_TEXT):
        add("qwen_text_%02d" % i, t)
    add("qwen_long_chat", qwen_chat(base.SEED_PARAGRAPH + "\n请总结上文。"), both=True)
    rng = random.Random(20261206)
    for name, t in generated_qwen(rng, 24):
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
    assert by[("<|endoftext|>", True)] == [151643], by[("<|endoftext|>", True)]
    assert by[("<|im_start|>", True)] == [151644]
    assert by[("<|im_end|>", True)] == [151645]
    assert len(by[("<|im_start|>", False)]) > 1
    assert by[("12345", False)] == [16, 17, 18, 19, 20], by[("12345", False)]
    assert facts["llama_eos_id"] == 151645, facts

    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:  # pragma: no cover
        gguf_ver = None
    doc = {
        "format": "saccade-tokenizer-cases/1",
        "generator": "tests/reference/gen_tokenizer_fixture_qwen2.py",
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
    print("wrote %s: %d cases, %d llama.cpp crashes (n_vocab=%d, model=%s, pre=%s)" % (
        OUT, len(out_cases), len(crashes), facts["n_vocab"], facts["model"], facts["pre"]))


if __name__ == "__main__":
    main()
