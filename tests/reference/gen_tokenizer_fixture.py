#!/usr/bin/env python3
"""Generate tests/reference/tokenizer-cases.json: llama.cpp tokenizer oracle for SmolLM2.

What it produces
    tokenizer-cases.json (next to this script): a JSON object
        {
          "format": "saccade-tokenizer-cases/1",
          "generator": "tests/reference/gen_tokenizer_fixture.py",
          "model_file": basename, "model_sha256": hex,
          "llama_cpp_python_version": "...", "gguf_py_version": "...",
          "vocab": {"n_vocab", "bos_id", "eos_id", "unk_id", "pad_id", "add_bos_token",
                    "pre", "model", "n_merges", "n_control_tokens"},
          "tokenize_call": description of the exact llama.cpp call,
          "cases": [ {"name": str, "text_hex": hex of the input bytes,
                      "text": str (only when the bytes are valid UTF-8),
                      "parse_special": bool, "ids": [int, ...],
                      "decoded_hex": hex of llama.cpp detokenize(ids, special=True)} ... ]
        }
    Every case is tokenized by llama.cpp itself:
        llama_cpp.Llama(model_path, vocab_only=True, verbose=False)
            .tokenize(text_bytes, add_bos=False, special=parse_special)
    (add_bos=False means add_special=false; parse_special is the per-case flag.)
    "decoded_hex" is llama.cpp's detokenization of the ids (token_to_piece with special=True,
    concatenated); it is the byte-exact decode oracle (not always equal to the input: invalid
    UTF-8 input becomes U+FFFD before BPE).

How to rerun
    pip install llama-cpp-python==0.3.36 gguf numpy
    python3 tests/reference/gen_tokenizer_fixture.py [MODEL.gguf]
    (model path: argv[1], else $SACCADE_MODEL, else data/models/SmolLM2-135M-Instruct.Q4_1.gguf
    relative to the repository root). Output is deterministic for a given llama.cpp version.
"""

import hashlib
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "data", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
OUT = os.path.join(HERE, "tokenizer-cases.json")

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chat(user):
    return ("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n" + user
            + "<|im_end|>\n<|im_start|>assistant\n")


def model_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    return os.environ.get("SACCADE_MODEL", DEFAULT_MODEL)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


# --- fixed cases -------------------------------------------------------------------------
# (name, text as str or bytes). Special-token cases get both parse_special values; others too
# for a subset (see build_cases).

SEED_SENTENCES = [
    # copied verbatim from /work/shared/seeds/*.txt
    "猫追球，它累了",
    "句子”猫追球，它累了”。模型读到”它”时必须解决指代：它指猫还是球？",
    "注意力的本质是可微的软寻址：用一个提问去匹配所有候选的索引标签，按匹配度加权取回内容。",
    "它最初只是机器翻译里给 RNN 打的一个补丁，三年后成了整个架构的主体。",
    "设 $d_k=4$，序列三个 token：猫、球、它。只算”它”这一个 Query。",
    "指数和 $7.389+1.649+1.000=10.038$，逐项相除即得权重。",
    "$o_{它}=0.736v_{猫}+0.164v_{球}+0.100v_{它}=[0.736,0.164,0.100]$",
    "“它”的新表示中 73.6% 的信息来自”猫”——指代消解在一次矩阵乘法里完成了。",
    "Key\t每个条目的词条\t每个候选 token 的”索引标签”，宣告自己能提供什么",
    "• Query 与”猫”的 Key 点积大，与”球”的 Key 点积小",
    "print(weights)  # tensor([[0.7361, 0.1643, 0.0996]])",
    "Attention 机制的完整发展：技术原理与哲学设计",
    "二、Attention 的诞生：对齐模型（2014–2015）",
    "dot: score(s_t, h_i) = s_t^T · h_i",
    "• Hard Attention：离散地选择某个位置（不可微，需要强化学习或采样技巧）",
    "• Flash Attention（Dao et al., 2022）：不改变数学，而是通过 IO 感知的分块计算优化 GPU 内存访问模式，实际速度提升 2-4 倍",
    "注意力的核心计算：给定查询矩阵 $Q$、键矩阵 $K$、值矩阵 $V$（维度均为 $d_k$）：",
    "$$\\text{MultiHead}(Q, K, V) = \\text{Concat}(\\text{head}_1, \\ldots, \\text{head}_h) W^O$$",
    "所以 Llama 2 的 70B 版本采用了分组查询注意力（Grouped-Query Attention, GQA）：64 个查询头分成 8 组，每组共享一份 $K$、$V$，缓存立刻降到 1/8。",
    "推理现场：KV cache 的显存账#",
    "2017 年，谷歌大脑的八位研究员——阿希什·瓦斯瓦尼（Ashish Vaswani）等人——发表了题为《注意力就是一切》（Attention Is All You Need）的论文，提出了 Transformer 架构。",
    "破除误解：注意力不是\"关注重要部分\"#",
]

SEED_PARAGRAPH = (
    "注意力机制\n\n注意力的本质是可微的软寻址：用一个提问去匹配所有候选的索引标签，按匹配度加权取回内容。"
    "它最初只是机器翻译里给 RNN 打的一个补丁，三年后成了整个架构的主体。本篇讲清 QKV 三者的关系、"
    "手算一遍完整流程，并给出变体谱系的导航。\n\n软寻址：QKV 在做什么\n\n想象一次字典查询。你手上有个待查的词，"
    "字典里每个条目有词条和释义。传统查表是硬匹配：词条完全相等才返回释义，否则什么也没有。注意力做的是软匹配——"
    "把待查词和所有词条算一遍相似度，然后把所有释义按相似度混合起来返回。\n\n三个角色一一对应：\n\n"
    "角色\t字典类比\t在模型里\nQuery\t待查的词\t当前 token 发出的”提问”，表达它需要什么信息\n"
    "Key\t每个条目的词条\t每个候选 token 的”索引标签”，宣告自己能提供什么\n"
    "Value\t每个条目的释义\t每个候选 token 真正携带的内容\n"
)

ENGLISH = [
    "Hello world",
    " Hello world",
    "Hello world! 123",
    "Hello, we can use",
    "The capital of France is",
    "The cat chased the ball because it was tired.",
    SYSTEM,
    "Café déjà vu.",
    "  multiple   spaces",
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness.",
    "Attention is not explanation (Jain & Wallace, 2019); attention is not not explanation (Wiegreffe & Pinter, 2019).",
    "e.g. i.e. etc. Mr. Smith's U.S.A. visit — \"quoted\" and 'single' and `backticks`.",
    "HELLO WORLD, SHOUTING IN ALL CAPS!!!",
    "camelCaseIdentifier snake_case_identifier kebab-case-identifier SCREAMING_SNAKE",
    "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct?x=1&y=2#frag",
    "user@example.com <user@example.com>",
    "a",
    "A",
    "I",
    " a",
    "the",
    " the",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
]

CODE = [
    "#include <stdio.h>\n\nint main(void)\n{\n    printf(\"hello, world\\n\");\n    return 0;\n}\n",
    "static inline float sc_silu(float x) { return x / (1.0f + expf(-x)); }\n",
    "for (int i = 0; i < n; ++i) {\n\tif (a[i] != b[i])\n\t\treturn -1;\n}\n",
    "struct ScModel {\n\tint n_layer;\t/* 30 */\n\tint n_head;\t/* 9 */\n};\n",
    "def softmax(x):\n    e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)\n",
    "class Foo(Bar):\n    \"\"\"Docstring.\"\"\"\n\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n        self.x = [i ** 2 for i in range(10) if i % 2 == 0]\n",
    "if __name__ == '__main__':\n\tmain()\n",
    '{"name": "saccade", "version": "0.1.0", "layers": [0, 1, 2], "nested": {"a": null, "b": true, "c": 1.5e-3}}',
    '{\n  "key": "value",\n  "list": [\n    1,\n    2\n  ]\n}\n',
    "SELECT id, name FROM runs WHERE model_id = ? ORDER BY created DESC LIMIT 10;",
    "x = a->b.c[3] << 2 | ~mask & 0xFF ^ 0b1010; y += x >>= 1; z = !(p && q) || r;",
    "    \t  mixed indentation\n\t    more\n",
    "// comment\n/* block\n * comment */\n#define SC_MAX(a, b) ((a) > (b) ? (a) : (b))\n",
    "$ ./saccade capture --model m.gguf --text 'hi' --db /tmp/x.sqlite 2>&1 | tee log.txt",
    "<div class=\"x\"><p>Hello &amp; welcome</p></div>",
    "fn main() { let v: Vec<u8> = vec![1, 2, 3]; println!(\"{:?}\", v); }",
]

NUMBERS = [
    "0", "7", "42", "123", "3333", "33333", "1234567890", "00000000",
    "3.14159", "-2.5e-10", "1,000,000.00", "1/2 ½ ¼ ¾ ⅓", "ied 4 ½ months",
    "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "१२३४", "一二三 壹贰叁 123", "Ⅻ Ⅳ ⅷ", "①②③", "x²+y³=z¹⁰",
    "version 2.0.1-rc3", "2024-11-29T10:08:00Z", "$19.99 €5 £3 ¥100", "50% off", "0x7FFF 0b1010 1e9",
    " 1", "  12", "a1b2c3", "𝟘𝟙𝟚 (math double-struck digits)",
]

WHITESPACE = [
    " ", "  ", "   ", "    ", "        ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r",
    " \n", "\n ", " \t \n ", "\t\n\t\n", "  \n  \n", "\v\f", "\u00a0", "\u3000", "a\u00a0b", "中\u3000文",
    " leading", "trailing ", "  both  ", "\n\nleading newlines", "trailing newlines\n\n",
    "    Hello\n    Hello", "a  b   c    d", "a\tb\t\tc", "line1\r\nline2\r\n", "\u2028\u2029", "\u2003em\u2009thin\u200bzw",
    "word \n word", "word  \n\n  word", "\u0085", "x\u202fy\u205fz\u1680w",
]

CONTRACTIONS = [
    "it's", "don't", "you're", "we've", "I'm", "we'll", "he'd", "IT'S", "DON'T", "YOU'RE", "WE'VE",
    "I'M", "WE'LL", "HE'D", "It'S", "it’s", "don’t", "you‘re", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d",
    "'S", "' era", "''", "'''", "rock 'n' roll", "the dogs' bones", "o'clock", "y'all'd've",
    "He said 'hello' and she's 'fine'.",
]

PUNCT = [
    "!!!", "???", "...", "…", "!?!?", "---", "—", "–", "***", "###", "@@@", "$$$", "%%%", "^^^", "&&&",
    "((()))", "[[[]]]", "{{{}}}", "<<<>>>", "|||", "\\\\\\", "///", "~~~", "```", ";;;", ":::", ",,,",
    "。，、；：？！", "「」『』【】《》", "“”‘’", "«»‹›", "¡¿", "!@#$%^&*()_+-=[]{}|;':\",./<>?",
    " (", "\n =", " ->", " => ", "::", "...\n", "?!\n\n",
]

EMOJI = [
    "🦙", " this is 🦙.cpp", "😀😃😄", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇨🇳🇯🇵", "❤️", "✨ sparkle ✨",
    "I ❤ NY", "🤖 + 🧠 = ?", "©®™", "☃", "𝄞 music", "🧑🏿‍🚀",
]

WORLD = [
    "こんにちは世界", "私は学生です。", "カタカナとひらがな、漢字。", "東京は日本の首都です。",
    "안녕하세요 세계", "한국어 문장입니다.", "مرحبا بالعالم", "اللغة العربية جميلة.", "नमस्ते दुनिया",
    "हिन्दी भाषा", "Привет, мир!", "Москва — столица России.", "Ελληνικά γράμματα", "שלום עולם",
    "ภาษาไทย", "Tiếng Việt có dấu", "Cửa Việt", "Zürich Ærø Øresund Ångström", "naïve façade coöperate",
    "ÀÉÎÕÜ àéîõü", "ñandú", "Straße", "İstanbul ıI", "ﬁnancial ﬂow (ligatures)",
    "e\u0301 (e + combining acute)", "a\u0308o\u0308u\u0308", "n\u0303", "\u0301 lone combining mark",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L",
    "中文和English混合mixed文本123",
    "机器学习 machine learning 是人工智能的一个分支。",
    "今天天气很好，我们去公园散步吧！",
    "Transformer 架构彻底改变了自然语言处理。",
    "𠀀𠀁 (CJK Ext B)", "한글 조합 ㄱㄴㄷ", "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ１２３",
]

CONTROL = [
    "\x00", "a\x00b", "\x01\x02\x03", "\x1b[31mred\x1b[0m", "\x7f", "bell\x07", "\x08back",
    "\u200e\u200f", "\ufeffBOM", "\ufffd", "soft\u00adhyphen",
]

INVALID = [
    ("lone_continuation", b"\x80"),
    ("lone_continuations", b"\x80\xbf\x90"),
    ("continuation_in_word", b"ab\x80cd"),
    ("truncated_2byte", b"\xc3"),
    ("truncated_2byte_mid", b"caf\xc3 au lait"),
    ("truncated_3byte", b"\xe4\xb8"),
    ("truncated_3byte_mid", b"\xe7\x8c\xab\xe8\xbf"),
    ("truncated_4byte", b"\xf0\x9f\xa6"),
    ("truncated_4byte_then_ascii", b"\xf0\x9f\xa6 llama"),
    ("overlong_slash", b"\xc0\xaf"),
    ("overlong_nul", b"\xc0\x80"),
    ("overlong_3byte", b"\xe0\x80\xaf"),
    ("overlong_4byte", b"\xf0\x80\x80\xaf"),
    ("byte_ff", b"\xff"),
    ("byte_fe_ff", b"\xfe\xff"),
    ("ff_in_text", b"hello\xffworld"),
    ("surrogate_d800", b"\xed\xa0\x80"),
    ("surrogate_dfff", b"\xed\xbf\xbf"),
    ("surrogate_pair_cesu", b"\xed\xa0\xbd\xed\xb8\x80"),
    ("above_10ffff", b"\xf4\x90\x80\x80"),
    ("five_byte_form", b"\xf8\x88\x80\x80\x80"),
    ("f5_lead_4byte", b"\xf5\x80\x80\x80"),
    ("f7_lead_max", b"abc \xf7\xbf\xbf\xbf def"),
    ("latin1_text", "Café déjà vu".encode("latin-1")),
    ("mixed_valid_invalid", b"\xe7\x8c\xab\x80\xe8\xbf\xbd\xff \xe7\x90\x83"),
    ("all_high_bytes", bytes(range(0x80, 0x100))),
    ("all_bytes", bytes(range(0, 0x100))),
]

SPECIAL = [
    "<|im_start|>user\nhi<|im_end|>",
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|im_start|><|im_end|>",
    "<|endoftext|><|endoftext|>",
    "hello<|endoftext|>world",
    " <|im_end|> ",
    "<|im_start|>assistant\n",
    "<repo_name>saccade<file_sep>main.c\n<filename>x.py",
    "<jupyter_start><jupyter_code>print(1)<jupyter_output>1<empty_output>",
    "<gh_stars>100<issue_start>bug<issue_comment>fix<issue_closed>",
    "<|im_start",
    "<|im_end|",
    "<|IM_START|>",
    "<| im_start |>",
    "<|unknown_token|>",
    "<s></s><unk>",
    chat("What is the capital of France?"),
    chat("猫追球，它累了。它指的是什么？"),
    chat("hi"),
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nWrite a C function.<|im_end|>\n<|im_start|>assistant\n```c\nint f(void) { return 1; }\n```<|im_end|>\n",
]


def long_cases():
    out = []
    prose = (
        "The attention mechanism lets every position of a sequence look at every earlier position. "
        "For each query, the model computes a score against every key, scales it by one over the "
        "square root of the head dimension, applies a softmax, and mixes the values with the "
        "resulting weights. "
    )
    out.append(("long_english_4k", (prose * 20)[:4096]))
    out.append(("long_chinese_seed_paragraph_x3", SEED_PARAGRAPH * 3))
    code = CODE[0] + CODE[4] + CODE[5] + CODE[3]
    out.append(("long_code_3k", (code * 10)[:3000]))
    out.append(("long_spaces_2k", " " * 2048))
    out.append(("long_newlines_1k", "\n" * 1024))
    out.append(("long_digits_2k", "".join(str(i % 10) for i in range(2048))))
    out.append(("long_mixed_ws_words", " \t\n".join(["word"] * 400)))
    out.append(("long_emoji_run", "😀🦙👍🏽🇫🇷" * 100))
    out.append(("long_single_word", "a" * 3000))
    out.append(("long_chat_prompt", chat(SEED_PARAGRAPH + "\n请总结上文。")))
    return out


def generated_cases(rng, n):
    pools = {
        "ascii_letters": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "digits": "0123456789",
        "ws": " \t\n\r\u00a0\u3000",
        "punct": "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~…—“”‘’。，、！？",
        "cjk": "猫追球它累了注意力机制模型的是在一个不有这人中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严",
        "kana_hangul": "あいうえおかきくけこアイウエオカキクケコ가나다라마바사아자차카타파하",
        "latin_ext": "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿĀāĂăĄąĆćČčĎďĐđĒēĘęĚěĞğĪīİıŁłŃńŇňŌōŐőŒœŘřŚśŞşŠšŢţŤťŪūŮůŰűŸŹźŻżŽž",
        "cyr_greek_ar": "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДΑΒΓΔΕαβγδεابتثجحخدذرزسشصضطظعغفقكلمنهوي",
        "emoji": "😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩😘🦙🐱⚽🔥✨👍👍🏽❤️🇫🇷🇨🇳",
        "marks": "\u0300\u0301\u0302\u0303\u0308\u030a\u0327\u200d\ufe0f\u20e3",
        "apos": "'’s t re ve m ll d S T",
    }
    words = ("the cat chased ball because it was tired attention head layer query key value "
             "model token softmax matrix Transformer GPT BERT llama smol France Paris capital "
             "I you we they don't it's we're I've I'm we'll he'd").split()
    out = []
    keys = sorted(pools)
    for i in range(n):
        kind = i % 4
        if kind == 0:
            # random mixture of characters from 1..3 pools
            chosen = rng.sample(keys, rng.randint(1, 3))
            alphabet = "".join(pools[k] for k in chosen)
            length = rng.randint(1, 40)
            s = "".join(rng.choice(alphabet) for _ in range(length))
            out.append(("gen_chars_%03d_%s" % (i, "+".join(chosen)), s))
        elif kind == 1:
            # word salad with random separators
            seps = [" ", "  ", "\n", "\t", ", ", ". ", " \n", "", "-", "'", "’", " 1", "2 "]
            parts = []
            for _ in range(rng.randint(1, 15)):
                parts.append(rng.choice(words))
                parts.append(rng.choice(seps))
            out.append(("gen_words_%03d" % i, "".join(parts)))
        elif kind == 2:
            # random bytes (often invalid UTF-8), biased towards interesting values
            interesting = [0x00, 0x09, 0x0a, 0x0d, 0x20, 0x27, 0x41, 0x61, 0x7f, 0x80, 0xbf,
                           0xc0, 0xc1, 0xc3, 0xe4, 0xe7, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xfe, 0xff]
            b = bytes(rng.choice(interesting) if rng.random() < 0.6 else rng.randrange(256)
                      for _ in range(rng.randint(1, 24)))
            out.append(("gen_bytes_%03d" % i, b))
        else:
            # whitespace/digit/punct structure stress
            alphabet = " \t\n\r\u00a0" + "0123456789" + "!?.,;:'\"()[]" + "ab猫😀"
            s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
            out.append(("gen_struct_%03d" % i, s))
    return out


def build_cases():
    """Return list of (name, bytes, parse_special)."""
    cases = []

    def add(name, text, both=False, special_only=False):
        b = text.encode("utf-8") if isinstance(text, str) else text
        if special_only:
            cases.append((name, b, True))
            return
        cases.append((name, b, False))
        if both:
            cases.append((name, b, True))

    add("empty", "", both=True)
    for group, items in (("en", ENGLISH), ("code", CODE), ("num", NUMBERS), ("ws", WHITESPACE),
                         ("contr", CONTRACTIONS), ("punct", PUNCT), ("emoji", EMOJI),
                         ("world", WORLD), ("ctrl", CONTROL)):
        for i, t in enumerate(items):
            add("%s_%02d" % (group, i), t)
    for i, t in enumerate(SEED_SENTENCES):
        add("seed_%02d" % i, t, both=(i == 0))
    add("seed_paragraph", SEED_PARAGRAPH)
    for name, b in INVALID:
        add("invalid_" + name, b)
    for i, t in enumerate(SPECIAL):
        add("special_%02d" % i, t, both=True)
    for name, t in long_cases():
        add(name, t, both=(name == "long_chat_prompt"))
    rng = random.Random(20241129)
    for name, t in generated_cases(rng, 120):
        add(name, t)
    # a few generated cases also with special parsing on, splicing special tokens in
    specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<file_sep>", "<|im_start", "|>"]
    for i in range(12):
        parts = []
        for _ in range(rng.randint(2, 6)):
            parts.append(rng.choice(specials) if rng.random() < 0.4 else
                         rng.choice(["user", "\n", " hi", "猫", " 12", "  ", "assistant\n", "'s"]))
        add("gen_special_%02d" % i, "".join(parts), both=True)
    return cases


def read_vocab_facts(path):
    import gguf

    r = gguf.GGUFReader(path)

    def val(key, default=None):
        f = r.fields.get(key)
        if f is None:
            return default
        v = f.contents()
        return v

    tokens = val("tokenizer.ggml.tokens")
    ttypes = val("tokenizer.ggml.token_type")
    merges = val("tokenizer.ggml.merges")
    return {
        "model": val("tokenizer.ggml.model"),
        "pre": val("tokenizer.ggml.pre"),
        "n_tokens_in_gguf": len(tokens) if tokens is not None else None,
        "bos_id": val("tokenizer.ggml.bos_token_id"),
        "eos_id": val("tokenizer.ggml.eos_token_id"),
        "unk_id": val("tokenizer.ggml.unknown_token_id"),
        "pad_id": val("tokenizer.ggml.padding_token_id"),
        "add_bos_token": val("tokenizer.ggml.add_bos_token"),
        "add_eos_token": val("tokenizer.ggml.add_eos_token"),
        "n_merges": len(merges) if merges is not None else None,
        "n_control_tokens": sum(1 for t in ttypes if t == 3) if ttypes is not None else None,
        "control_token_ids": [i for i, t in enumerate(ttypes) if t == 3] if ttypes is not None else None,
    }


def tokenize_isolated(llm, b, ps):
    """Tokenize in a forked child so that a llama.cpp abort cannot kill the generator.

    llama.cpp 0.3.36 (unicode.cpp) decodes a 4-byte sequence above U+10FFFF (e.g. F4 90 80 80)
    into an out-of-range code point and later throws std::invalid_argument("invalid codepoint")
    across the C API, which terminates the process. Such inputs are recorded under
    "llama_cpp_crash_cases" instead of "cases". Returns (ids, decoded_bytes) or None."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(rfd)
        try:
            ids = [int(t) for t in llm.tokenize(b, add_bos=False, special=ps)]
            dec = llm.detokenize(ids, special=True) if ids else b""
            data = json.dumps({"ids": ids, "dec": dec.hex()}).encode()
            with os.fdopen(wfd, "wb") as w:
                w.write(data)
            os._exit(0)
        except BaseException:
            os._exit(3)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        data = r.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return None
    d = json.loads(data)
    return d["ids"], bytes.fromhex(d["dec"])


def write_json_one_case_per_line(path, doc, list_key):
    """Pretty-ish JSON: header keys indented, each element of doc[list_key] on one line."""
    head = {k: v for k, v in doc.items() if k != list_key}
    lines = ["{"]
    for k, v in head.items():
        lines.append(" %s: %s," % (json.dumps(k), json.dumps(v, ensure_ascii=False)))
    lines.append(" %s: [" % json.dumps(list_key))
    items = doc[list_key]
    for i, it in enumerate(items):
        lines.append("  " + json.dumps(it, ensure_ascii=False) + ("," if i + 1 < len(items) else ""))
    lines.append(" ]")
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    json.load(open(path, encoding="utf-8"))  # self-check


def main():
    import llama_cpp
    import gguf  # noqa: F401

    path = model_path()
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    facts = read_vocab_facts(path)
    facts["n_vocab"] = llm.n_vocab()
    facts["llama_bos_id"] = llm.token_bos()
    facts["llama_eos_id"] = llm.token_eos()

    out_cases = []
    crashes = []
    for name, b, ps in build_cases():
        res = tokenize_isolated(llm, b, ps)
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

    # sanity check against known ids (§8.2 of model-formats.md; verified here)
    by_text = {(c.get("text"), c["parse_special"]): c["ids"] for c in out_cases}
    assert by_text[("The capital of France is", False)] == [504, 3575, 282, 4649, 314], \
        by_text[("The capital of France is", False)]
    assert by_text[("<|im_start|>", True)] == [1]
    assert by_text[("<|im_end|>", True)] == [2]
    assert by_text[("<|endoftext|>", True)] == [0]

    try:
        import importlib.metadata as md
        gguf_ver = md.version("gguf")
    except Exception:  # pragma: no cover
        gguf_ver = None
    doc = {
        "format": "saccade-tokenizer-cases/1",
        "generator": "tests/reference/gen_tokenizer_fixture.py",
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path),
        "llama_cpp_python_version": llama_cpp.__version__,
        "gguf_py_version": gguf_ver,
        "vocab": facts,
        "tokenize_call": "llama_cpp.Llama(model_path, vocab_only=True).tokenize(text_bytes, "
                         "add_bos=False, special=parse_special)  (= llama_tokenize with "
                         "add_special=false, parse_special=<case>)",
        "decode_call": "llama_cpp.Llama.detokenize(ids, special=True) (token_to_piece, special=true, "
                       "concatenated)",
        "n_cases": len(out_cases),
        "llama_cpp_crash_cases_note": "inputs on which llama.cpp itself aborts (no oracle ids); "
                                      "an engine must not crash on them",
        "llama_cpp_crash_cases": crashes,
        "cases": out_cases,
    }
    write_json_one_case_per_line(OUT, doc, "cases")
    print("wrote %s: %d cases (n_vocab=%d, pre=%s)" % (OUT, len(out_cases), facts["n_vocab"],
                                                       facts["pre"]))


if __name__ == "__main__":
    main()
