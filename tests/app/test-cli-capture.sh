#!/bin/sh
# test-cli-capture.sh — what goes into `saccade capture` and what it says the model predicts,
# read the way a user reads it; the stored runs are read back with Python's sqlite3:
#  - --chat wraps the text as `saccade generate --chat` does (same prompt tokens, the
#    stored text in the ChatML turns); refused with --no-parse-special;
#  - --prompt-file FILE (and - for stdin) stores the file's bytes exactly, newlines
#    included, as one run; an empty file, invalid UTF-8 (and a NUL byte), a missing file
#    and a second text source are refused with messages that name them;
#  - --generate N stores the prompt's tokens followed by exactly `saccade generate`'s
#    output as one run, and every head of that run equals a plain capture of the same
#    tokens (bytes of the fp16 blobs); --generate 0 is a plain capture; N < 0 is refused;
#  - the last position's top-5 next tokens (text with --summary, JSON always), best first,
#    and " Paris" among them after "The capital of France is".
# Usage: test-cli-capture.sh PATH/TO/saccade   (fails without the default model, Python
# or NumPy: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json numpy sqlite3
export SACCADE_MODEL="$model"
db="$tmp/c.sqlite"

py() { # name, python source (argv: the database, then the rest)
  name=$1; code=$2; shift 2
  if python -c "$code" "$db" "$@" > "$tmp/py.out" 2>&1; then
    passes=$((passes + 1))
  else
    echo "FAIL: $name:"; sed 's/^/  | /' "$tmp/py.out"; fails=$((fails + 1))
  fi
}
# The run id of a `capture --json` output.
run_of() { python -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["run"])' "$1"; }

# --- --chat ------------------------------------------------------------------------------
q="What is the capital of France?"
"$saccade" generate --chat -n 12 --json "$q" > "$tmp/gen.json" 2>&1
"$saccade" capture --db "$db" --chat --json -t "$q" > "$tmp/chat.json" 2>&1
check chat-prompt-tokens "$tmp/chat.json" "\"prompt_tokens\" : $(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["prompt_tokens"])' "$tmp/gen.json"),"
chat_run=$(run_of "$tmp/chat.json")
py chat-text 'import sqlite3, sys
t = sqlite3.connect(sys.argv[1]).execute("SELECT text FROM runs WHERE id = ?", (int(sys.argv[2]),)).fetchone()[0]
assert b"<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n" in t, t
assert t.endswith(b"<|im_start|>assistant\n"), t' "$chat_run"
"$saccade" capture --no-store --chat --no-parse-special -t "$q" > "$tmp/bad" 2>&1; rc=$?
expect_fail chat-no-special "$tmp/bad" "drop --no-parse-special" $rc

# --- --prompt-file -----------------------------------------------------------------------
printf 'Roses are red,\nviolets are blue.\n\n  Indented, and a tab:\t猫\n' > "$tmp/poem.txt"
"$saccade" capture --db "$db" --json --prompt-file "$tmp/poem.txt" > "$tmp/poem.json" 2>&1
poem_run=$(run_of "$tmp/poem.json")
"$saccade" tokenize --ids -f "$tmp/poem.txt" > "$tmp/poem.ids" 2>&1
py prompt-file-bytes 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = c.execute("SELECT text FROM runs WHERE id = ?", (int(sys.argv[2]),)).fetchone()[0]
assert t == open(sys.argv[3], "rb").read(), t
ids = [r[0] for r in c.execute("SELECT token_id FROM tokens WHERE run_id = ? ORDER BY pos", (int(sys.argv[2]),))]
want = [int(x) for x in open(sys.argv[4]).read().split()]
assert ids == want, (ids, want)' "$poem_run" "$tmp/poem.txt" "$tmp/poem.ids"
"$saccade" capture --db "$db" --json -p - < "$tmp/poem.txt" > "$tmp/poem-stdin.json" 2>&1
py prompt-file-stdin 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
a, b = (c.execute("SELECT text FROM runs WHERE id = ?", (int(r),)).fetchone()[0] for r in sys.argv[2:4])
assert a == b, (a, b)' "$poem_run" "$(run_of "$tmp/poem-stdin.json")"

: > "$tmp/empty.txt"
"$saccade" capture --no-store --prompt-file "$tmp/empty.txt" > "$tmp/bad" 2>&1; rc=$?
expect_fail prompt-file-empty "$tmp/bad" "empty.txt is empty" $rc
printf 'Good\nBad \377 byte\n' > "$tmp/latin1.txt"
"$saccade" capture --no-store --prompt-file "$tmp/latin1.txt" > "$tmp/bad" 2>&1; rc=$?
expect_fail prompt-file-utf8 "$tmp/bad" "latin1.txt is not valid UTF-8: byte 9 (0xFF)" $rc
printf 'A\0B' | "$saccade" capture --no-store --prompt-file - > "$tmp/bad" 2>&1; rc=$?
expect_fail prompt-file-nul "$tmp/bad" "standard input is not valid UTF-8: byte 1 (0x00) is a NUL byte" $rc
"$saccade" capture --no-store --prompt-file "$tmp/missing.txt" > "$tmp/bad" 2>&1; rc=$?
expect_fail prompt-file-missing "$tmp/bad" "missing.txt" $rc
"$saccade" capture --no-store --prompt-file "$tmp/poem.txt" -t "and a text" > "$tmp/bad" 2>&1; rc=$?
expect_fail prompt-file-and-text "$tmp/bad" "give the text one way" $rc
# White space alone is refused as the window refuses it; blank lines of --file are skipped.
"$saccade" capture --no-store -t "   " > "$tmp/bad" 2>&1; rc=$?
expect_fail text-blank "$tmp/bad" "the text is only white space (3 bytes)" $rc
printf ' \n\t\r\n' > "$tmp/blank.txt"
"$saccade" capture --no-store --file "$tmp/blank.txt" > "$tmp/bad" 2>&1; rc=$?
expect_fail file-blank "$tmp/bad" "blank.txt has no line with text (blank lines are skipped)" $rc
printf 'One line.\n   \nTwo lines.\n' > "$tmp/two.txt"
"$saccade" capture --no-store --json --file "$tmp/two.txt" > "$tmp/two.json" 2>&1
py file-blank-skipped 'import json, sys
d = json.load(open(sys.argv[2]))
runs = d["runs"] if isinstance(d, dict) and "runs" in d else d
assert len(runs) == 2, runs' "$tmp/two.json"

# --- --generate --------------------------------------------------------------------------
p="The capital of France is"
"$saccade" generate -n 6 --json "$p" > "$tmp/gen6.json" 2>&1
"$saccade" tokenize --ids "$p" > "$tmp/p.ids" 2>&1
"$saccade" capture --db "$db" --json --generate 6 -t "$p" > "$tmp/g.json" 2>&1
check generate-prompt-tokens "$tmp/g.json" "\"prompt_tokens\" : $(wc -w < "$tmp/p.ids"),"
g_run=$(run_of "$tmp/g.json")
py generate-ids 'import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run = int(sys.argv[2])
ids = [r[0] for r in c.execute("SELECT token_id FROM tokens WHERE run_id = ? ORDER BY pos", (run,))]
gen = json.load(open(sys.argv[3]))
want = [int(x) for x in open(sys.argv[4]).read().split()] + gen["generated_ids"]
assert len(gen["generated_ids"]) == 6, gen
assert ids == want, (ids, want)
t = c.execute("SELECT text FROM runs WHERE id = ?", (run,)).fetchone()[0]
assert t == b"The capital of France is" + gen["text"].encode(), t
open(sys.argv[5], "wb").write(t)' "$g_run" "$tmp/gen6.json" "$tmp/p.ids" "$tmp/g.txt"
# The same tokens captured plainly (the stored text tokenizes back to them): every head's
# matrix is byte for byte the one of the generating capture, its generated rows included.
"$saccade" capture --db "$db" --json --prompt-file "$tmp/g.txt" > "$tmp/plain.json" 2>&1
py generate-rows-equal 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
a, b = int(sys.argv[2]), int(sys.argv[3])
ids = lambda r: [x[0] for x in c.execute("SELECT token_id FROM tokens WHERE run_id = ? ORDER BY pos", (r,))]
assert ids(a) == ids(b), (ids(a), ids(b))
heads = lambda r: c.execute("SELECT layer, head, n_query, n_key, layout, data FROM attention WHERE run_id = ? ORDER BY layer, head", (r,)).fetchall()
ha, hb = heads(a), heads(b)
assert len(ha) == 270 and len(ha) == len(hb), (len(ha), len(hb))
for x, y in zip(ha, hb):
    assert x[:5] == y[:5] and x[5] == y[5], ("layer", x[0], "head", x[1])' "$g_run" "$(run_of "$tmp/plain.json")"
"$saccade" capture --no-store --json --generate 0 -t "$p" > "$tmp/g0.json" 2>&1
check generate-zero "$tmp/g0.json" "\"n_tokens\" : $(wc -w < "$tmp/p.ids"),"
"$saccade" capture --no-store --generate -1 -t "$p" > "$tmp/bad" 2>&1; rc=$?
expect_fail generate-negative "$tmp/bad" "must be >= 0" $rc
"$saccade" capture --no-store --generate 9000 -t "$p" > "$tmp/bad" 2>&1; rc=$?
expect_fail generate-too-long "$tmp/bad" "exceed the model's context of 8192" $rc

# --- the predictions ---------------------------------------------------------------------
"$saccade" capture --no-store --summary -t "$p" > "$tmp/sum" 2>&1
check predict-text "$tmp/sum" "^Next token after the last position"
check predict-paris "$tmp/sum" "^ *[0-9.]*%  *7042 '␣Paris'$"
py predict-json 'import json, sys
r = json.load(open(sys.argv[2]))["runs"][0]
nt = r["next_tokens"]
assert len(nt) == 5, nt
p = [t["probability"] for t in nt]
assert p == sorted(p, reverse=True) and 0 < sum(p) <= 1, p
assert " Paris" in [t["piece"] for t in nt], nt
assert r["predict_seconds"] >= 0, r' "$tmp/g0.json"

# Stored with the run: `saccade show` reads them back without the model, the same ids and
# probabilities the capture printed, and every position's with --predictions.
"$saccade" capture --db "$db" --json -t "$p" > "$tmp/stored.json" 2>&1
run=$(run_of "$tmp/stored.json")
SACCADE_MODEL=/nonexistent "$saccade" show "$run" --db "$db" > "$tmp/show.txt" 2>&1
check show-next "$tmp/show.txt" "^Next (after the last token): '␣Paris' 0\.[0-9]*,"
SACCADE_MODEL=/nonexistent "$saccade" show "$run" --db "$db" --predictions > "$tmp/show-all.txt" 2>&1
check show-predictions "$tmp/show-all.txt" "^ *4 *314  ␣is *-> '␣Paris' 0\.[0-9]*,"
SACCADE_MODEL=/nonexistent "$saccade" show "$run" --db "$db" --predictions --json > "$tmp/show.json" 2>&1
py show-predictions-json 'import json, sys
cap = json.load(open(sys.argv[2]))["runs"][0]["next_tokens"]
show = json.load(open(sys.argv[3]))["predictions"]
assert [p["pos"] for p in show] == list(range(len(show))), show
last = show[-1]["next"]
assert len(last) == 10, last
for c, s in zip(cap, last):
    assert c["id"] == s["id"], (c, s)
    assert abs(c["probability"] - s["probability"]) < 1e-12, (c, s)
' "$tmp/stored.json" "$tmp/show.json"
# ... and by the Python reader (python/saccade_store.py), from the database alone.
py python-predictions 'import json, os, sys
sys.path.insert(0, os.path.join(os.environ["SC_TEST_SOURCE_DIR"], "python"))
import saccade_store
ids, probs, logits, pieces = saccade_store.Store(sys.argv[1]).predictions(int(sys.argv[2]))
cap = json.load(open(sys.argv[3]))["runs"][0]["next_tokens"]
assert ids.shape == (len(pieces), 10), ids.shape
assert [int(i) for i in ids[-1][:5]] == [c["id"] for c in cap], (ids[-1], cap)
assert pieces[-1][0] == b" Paris", pieces[-1]
' "$run" "$tmp/stored.json"

# --- the size, before a long run (g_format_size puts a no-break space before the unit) ---------------------------------------------------------
python -c 'print("the cat " * 3000)' > "$tmp/long.txt"
"$saccade" capture --db "$db" --estimate -p "$tmp/long.txt" > "$tmp/est" 2>&1
check estimate-all "$tmp/est" "^6001 tokens, 270 of 270 heads: about 9\.7.GB"
"$saccade" capture --db "$db" --estimate --layers 10-20 --heads 0,4 -p "$tmp/long.txt" > "$tmp/est" 2>&1
check estimate-some "$tmp/est" "^6001 tokens, 22 of 270 heads: about 793\.1.MB"

# --- a sparse run shows what each row dropped ---------------------------------------------
head -c 1500 "$SC_TEST_SOURCE_DIR/docs/metrics.md" > "$tmp/t.txt"
"$saccade" capture --db "$tmp/sparse.sqlite" --sparse=0.01 -p "$tmp/t.txt" > "$tmp/sp" 2>&1
"$saccade" show 1 --db "$tmp/sparse.sqlite" --layer 3 --head 1 > "$tmp/sp" 2>&1
check sparse-says "$tmp/sp" "^Stored sparse (EPS 0.01)"
check sparse-dropped "$tmp/sp" "(dropped 0\.00[0-9]*)$"
"$saccade" show 1 --db "$tmp/sparse.sqlite" --layer 3 --head 1 --json > "$tmp/sp.json" 2>&1
py sparse-dropped-json 'import json, sys
q = json.load(open(sys.argv[2]))["attention"]["queries"]
d = [x["dropped"] for x in q]
assert all(0 <= v <= 0.01 + len(q) * 2**-24 for v in d), max(d)
assert max(d) > 0, d' "$tmp/sp.json"

# --- capture --compress: the same run, every head read back with the same bits ------------
# (schema v5, attention_z; the 200-odd tokens make heads of several compressed blocks)
head -c 900 "$SC_TEST_SOURCE_DIR/docs/metrics.md" > "$tmp/z.txt"
"$saccade" capture --db "$tmp/plain.sqlite" -p "$tmp/z.txt" > "$tmp/zp" 2>&1
"$saccade" capture --db "$tmp/z.sqlite" --compress -p "$tmp/z.txt" > "$tmp/zc" 2>&1
"$saccade" export 1 --db "$tmp/plain.sqlite" --all -o "$tmp/plain.npy" > "$tmp/zp" 2>&1
"$saccade" export 1 --db "$tmp/z.sqlite" --all -o "$tmp/z.npy" > "$tmp/zc" 2>&1
py compress-identical 'import sqlite3, sys
import numpy as np
d = sys.argv[2]
a, b = np.load(d + "/plain.npy"), np.load(d + "/z.npy")
assert a.shape == b.shape and a.shape[2] > 128, (a.shape, b.shape)
assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), "a compressed head differs"
db = sqlite3.connect(d + "/z.sqlite")
assert db.execute("SELECT count(*) FROM attention").fetchone()[0] == 0
assert db.execute("SELECT count(DISTINCT layer * 100 + head) FROM attention_z").fetchone()[0] == 270
small = db.execute("SELECT attention_bytes FROM runs").fetchone()[0]
big = sqlite3.connect(d + "/plain.sqlite").execute("SELECT attention_bytes FROM runs").fetchone()[0]
assert small < 0.9 * big, (small, big)  # 84 % at this length' "$tmp"

# --- capture --round-bits / --zero-below: the rounded form (schema v6) ---------------------
# Every value within the stated bound of the lossless run's, zeros exactly below the
# threshold, fewer bytes; `runs`, `show` and --json state the error; what cannot be rounded
# is refused before the model runs.
"$saccade" capture --db "$tmp/r.sqlite" --round-bits 4 --zero-below 1e-4 -p "$tmp/z.txt" > "$tmp/zr" 2>&1
check rounded-capture "$tmp/zr" "^1$"
"$saccade" export 1 --db "$tmp/r.sqlite" --all -o "$tmp/r.npy" > "$tmp/zr" 2>&1
check rounded-export-says "$tmp/zr" "The values are the stored probabilities, rounded: each value within 3.12 %"
"$saccade" export 1 --db "$tmp/r.sqlite" --all -o "$tmp/r.npz" > "$tmp/zr" 2>&1
py rounded-npz-metadata 'import json, sys
import numpy as np
m = json.loads(str(np.load(sys.argv[2])["metadata"]))
assert m["run"]["rounded"]["max_relative_error"] == 0.03125, m["run"]
assert "rounded form" in m["values_rounded"], m' "$tmp/r.npz"
py rounded-within-bound 'import sqlite3, sys
import numpy as np
d = sys.argv[2]
a, r = np.load(d + "/plain.npy").astype(np.float64), np.load(d + "/r.npy").astype(np.float64)
assert a.shape == r.shape, (a.shape, r.shape)
low = a < 1e-4
assert np.all(r[low] == 0), "a value below the threshold was stored"
hi = ~low
err = np.abs(r[hi] - a[hi]) / a[hi]
assert err.max() <= 2.0**-5, err.max()
assert err.max() > 2.0**-7, "nothing was rounded"
db = sqlite3.connect(d + "/r.sqlite")
assert db.execute("SELECT round_bits, zero_below FROM runs").fetchone() == (4, 1e-4)
small = db.execute("SELECT attention_bytes FROM runs").fetchone()[0]
z = sqlite3.connect(d + "/z.sqlite").execute("SELECT attention_bytes FROM runs").fetchone()[0]
assert small < 0.75 * z, (small, z)' "$tmp"
"$saccade" runs --db "$tmp/r.sqlite" > "$tmp/zr" 2>&1
check rounded-runs "$tmp/zr" "30x9r"
check rounded-runs-says "$tmp/zr" "run 1 (r): rounded: each value within 3.12 % of its fp16, values below 0.0001 stored as 0"
"$saccade" show 1 --db "$tmp/r.sqlite" --layer 2 --head 0 > "$tmp/zr" 2>&1
check rounded-show "$tmp/zr" "Stored form: rounded: each value within 3.12 %"
"$saccade" runs --db "$tmp/r.sqlite" --json > "$tmp/zr.json" 2>&1
py rounded-json 'import json, sys
r = json.load(open(sys.argv[2]))["runs"][0]["rounded"]
assert r == {"mantissa_bits": 4, "max_relative_error": 0.03125, "zero_below": 0.0001}, r' "$tmp/zr.json"
"$saccade" capture --db "$tmp/r.sqlite" --round-bits 4 --sparse -t "hi" > "$tmp/zr" 2>&1
expect_fail rounded-sparse "$tmp/zr" "--sparse cannot be rounded" $?
"$saccade" capture --db "$tmp/r.sqlite" --round-bits 10 -t "hi" > "$tmp/zr" 2>&1
expect_fail rounded-bits "$tmp/zr" "between 1 and 9" $?
"$saccade" capture --db "$tmp/r.sqlite" --zero-below 1 -t "hi" > "$tmp/zr" 2>&1
expect_fail rounded-zero "$tmp/zr" "between 0 and 1" $?
"$saccade" runs --db "$tmp/r.sqlite" > "$tmp/zr" 2>&1
check rounded-refused-stored-nothing "$tmp/zr" "^1 run,"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
