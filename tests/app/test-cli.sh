#!/bin/sh
# test-cli.sh — the saccade command line, read the way a user reads it.
# Usage: test-cli.sh PATH/TO/saccade   (fails without the default model or NumPy:
# tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json numpy sqlite3
export SACCADE_MODEL="$model"

"$saccade" info > "$tmp/info" 2>&1
check info "$tmp/info" "llama, 30 layers, embedding 576"
check info-heads "$tmp/info" "9 query heads over 3 KV heads"
check info-kv "$tmp/info" "23040 bytes per token"
"$saccade" info --json > "$tmp/info.json" 2>&1
check info-json "$tmp/info.json" '"kv_cache_bytes_per_token_f16" : 23040'

"$saccade" tokenize --ids "The capital of France is" > "$tmp/tok" 2>&1
check tokenize "$tmp/tok" "^504 3575 282 4649 314$"
"$saccade" tokenize "猫追球，它累了" > "$tmp/tok-zh" 2>&1
check tokenize-zh "$tmp/tok-zh" "tokens$"
"$saccade" tokenize --json "<|im_start|>hi" > "$tmp/tok.json" 2>&1
check tokenize-special "$tmp/tok.json" '"id" : 1,'

"$saccade" generate --chat -n 16 "What is the capital of France?" > "$tmp/gen" 2>&1
check generate-paris "$tmp/gen" "Paris"
# --chat keeps the whole prompt, NUL bytes included (it used to stop at the first NUL:
# 32 prompt tokens, as for "What is" alone).
printf 'What is\0 the capital of France?' | "$saccade" generate --chat -f - -n 1 --json > "$tmp/gen-nul" 2>&1
check generate-chat-nul "$tmp/gen-nul" '"prompt_tokens" : 38,'

# The capture store: the default database lives under $XDG_DATA_HOME (here, in $tmp).
export XDG_DATA_HOME="$tmp/xdg"
db="$tmp/xdg/saccade/captures.sqlite"
"$saccade" capture -t "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture-id "$tmp/cap" "^1$"
[ -f "$db" ] && passes=$((passes + 1)) || { echo "FAIL: no default database at $db"; fails=$((fails + 1)); }
"$saccade" capture --summary -t "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture-summary "$tmp/cap" "30 layers x 9 heads"
check capture-row "$tmp/cap" "^   29    8 "
check capture-stored "$tmp/cap" "^stored as run 2 "
"$saccade" capture --no-store -t "Hello" > "$tmp/cap" 2>&1
check capture-no-store "$tmp/cap" "^   29    8 "
# one token: the previous-token score is undefined (0/0), and the JSON must still parse
"$saccade" capture --no-store --summary --json -t "Hi" > "$tmp/cap1.json" 2>"$tmp/cap1.err"
check capture-one-token "$tmp/cap1.json" '"n_tokens" : 1,'
check capture-one-token-null "$tmp/cap1.json" '"prev_token" : null,'
if python -c 'import json,sys; json.load(sys.stdin)' < "$tmp/cap1.json" > "$tmp/cap1.check" 2>&1; then
  passes=$((passes + 1))
else
  echo "FAIL: capture --summary --json of one token is not JSON:"; sed 's/^/  | /' "$tmp/cap1.check"; fails=$((fails + 1))
fi
printf 'The cat sat.\n\n猫追球，它累了。\r\nBad \377 byte.\n' > "$tmp/sentences.txt"
"$saccade" capture --file "$tmp/sentences.txt" > "$tmp/cap" 2>&1
check capture-file "$tmp/cap" "^5$"
[ "$(wc -l < "$tmp/cap")" -eq 3 ] && passes=$((passes + 1)) || { echo "FAIL: capture --file: want 3 ids:"; cat "$tmp/cap"; fails=$((fails + 1)); }
"$saccade" capture --json --db "$tmp/other.sqlite" -t "猫追球" > "$tmp/cap.json" 2>&1
check capture-json "$tmp/cap.json" '"run" : 1,'

"$saccade" runs > "$tmp/runs" 2>&1
check runs "$tmp/runs" "^5 runs, "
check runs-text "$tmp/runs" "Bad \\\\xFF byte."
"$saccade" runs --json > "$tmp/runs.json" 2>&1
check runs-json "$tmp/runs.json" '"sha256" : "[0-9a-f]\{64\}"'
# The stored model path is the file's absolute path (a capture once stored a freed pointer).
check runs-json-path "$tmp/runs.json" "\"path\" : \"$(realpath -s "$model")\""
"$saccade" show 1 > "$tmp/show" 2>&1
check show-tokens "$tmp/show" "^    1    2644  '␣cat'$"
"$saccade" show 1 --layer 29 --head 8 -k 2 > "$tmp/show" 2>&1
check show-head "$tmp/show" "^   9 \.  *-> [0-9]* '.*' [01]\.[0-9]*, [0-9]* '.*' [01]\.[0-9]*$"
"$saccade" show 4 --json --layer 0 --head 0 > "$tmp/show.json" 2>&1
check show-json "$tmp/show.json" '"bytes_hex" : "e7"'

# Byte tokens that are only part of a character read as the window shows them.
"$saccade" show 4 > "$tmp/show-zh" 2>&1
check show-split-char "$tmp/show-zh" "'<0xE7> (猫)'"

# Text from a model file or a database never reaches the terminal as escape sequences:
# ESC [2J (clear the screen) and ESC ]0;... BEL (set the window title) arrive escaped.
esc=$(printf '\033')
bel=$(printf '\007')
no_escapes() { # name, file
  if grep -q "[$esc$bel]" "$2"; then
    echo "FAIL: $1: raw escape bytes on the terminal:"; sed 's/^/  | /' "$2" | od -c | head -5; fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}
python - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE models SET name = 'Evil' || char(27) || '[2J' || char(27) || ']0;pwn' || char(7)")
c.execute("UPDATE runs SET backend = 'cpu' || char(27) || '[31m' WHERE id = 1")
c.commit()
PY
"$saccade" runs > "$tmp/runs-evil" 2>&1
no_escapes runs-escapes "$tmp/runs-evil"
check runs-escaped "$tmp/runs-evil" 'Evil\\x1B\[2J'
"$saccade" show 1 > "$tmp/show-evil" 2>&1
no_escapes show-escapes "$tmp/show-evil"
check show-escaped "$tmp/show-evil" 'Evil\\x1B\[2J\\x1B\]0;pwn\\x07'
check show-escaped-backend "$tmp/show-evil" 'cpu\\x1B\[31m backend'
python - "$model" "$tmp/evil.gguf" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
name = b"smollm2"  # general.basename: the readable name starts with it
at = data.index(name)
open(sys.argv[2], "wb").write(data[:at] + b"\x1b[2J\x07XY" + data[at + len(name):])
PY
"$saccade" info -m "$tmp/evil.gguf" > "$tmp/info-evil" 2>&1
no_escapes info-escapes "$tmp/info-evil"
check info-escaped "$tmp/info-evil" '^Model        \\x1B\[2J\\x07XY 135M'
"$saccade" demo -m "$tmp/evil.gguf" > "$tmp/demo-evil" 2>&1
no_escapes demo-escapes "$tmp/demo-evil"
rm -f "$tmp/evil.gguf"

for f in csv npy json; do
  "$saccade" export 1 --layer 29 --head 8 -o "$tmp/head.$f" > "$tmp/export" 2>&1
  check "export-$f" "$tmp/export" "^Wrote .*head.$f: run 1 layer 29 head 8, 10 x 10$"
done
check export-csv-header "$tmp/head.csv" '^query\\key,0:The,1:␣cat,'
python - "$tmp" > "$tmp/npy" 2>&1 <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
a = np.load(d + "/head.npy")
j = np.array(json.load(open(d + "/head.json"))["weights"], dtype=np.float32)
c = np.loadtxt(d + "/head.csv", delimiter=",", skiprows=1, usecols=range(1, 11)).astype(np.float32)
ok = a.shape == (10, 10) and a.dtype == np.float32 and (a == j).all() and (a == c).all()
ok = ok and np.allclose(a.sum(axis=1), 1, atol=5e-3) and (np.triu(a, 1) == 0).all()
print("npy ok" if ok else "npy mismatch", a.shape, a.dtype)
PY
check export-npy-numpy "$tmp/npy" "^npy ok"

# figures through the window's renderers: every kind in every format, checked by magic
for kind in heatmap grid lines; do
  for ext in png svg pdf; do
    "$saccade" export 1 --figure $kind --layer 5 --head 2 -o "$tmp/fig-$kind.$ext" > "$tmp/fig" 2>&1
    check "figure-$kind-$ext" "$tmp/fig" "^Wrote .*fig-$kind.$ext: “The cat chased the ball because it was tired.” — "
  done
  [ "$(head -c 4 "$tmp/fig-$kind.png" | tail -c 3)" = "PNG" ] && passes=$((passes + 1)) || { echo "FAIL: $kind.png is not a PNG"; fails=$((fails + 1)); }
  check "figure-$kind-svg-root" "$tmp/fig-$kind.svg" "^<svg "
  check "figure-$kind-pdf-magic" "$tmp/fig-$kind.pdf" "^%PDF-1\.[0-9]"
  check "figure-$kind-pdf-eof" "$tmp/fig-$kind.pdf" "^%%EOF"
done
"$saccade" export 4 --figure heatmap --layer 0 --head 0 --colormap magma --scale log -o "$tmp/fig-zh.png" > "$tmp/fig" 2>&1
check figure-zh "$tmp/fig" "^Wrote .*“猫追球，它累了。” — layer 0, head 0 (KV head 0) of run 4$"
"$saccade" export 1 --figure grid --metric sink --json -o "$tmp/fig-grid.pdf" > "$tmp/fig.json" 2>&1
check figure-json "$tmp/fig.json" '"figure" : "grid"'
"$saccade" export 1 --figure pie -o "$tmp/fig.png" > "$tmp/fig" 2>&1; rc=$?
expect_fail figure-kind "$tmp/fig" "is heatmap, grid or lines" $rc
"$saccade" export 1 --figure heatmap --layer 0 --head 0 -o "$tmp/fig.csv" > "$tmp/fig" 2>&1; rc=$?
expect_fail figure-format "$tmp/fig" "name it .png, .svg or .pdf" $rc
"$saccade" export 1 --figure heatmap --layer 0 -o "$tmp/fig.png" > "$tmp/fig" 2>&1; rc=$?
expect_fail figure-needs-head "$tmp/fig" "needs --layer L and --head H" $rc
"$saccade" export 1 --figure lines --layer 30 -o "$tmp/fig.png" > "$tmp/fig" 2>&1; rc=$?
expect_fail figure-layer-range "$tmp/fig" "has layers 0-29 and heads 0-8" $rc
"$saccade" export 1 --layer 0 --head 0 --colormap magma -o "$tmp/x.csv" > "$tmp/fig" 2>&1; rc=$?
expect_fail figure-options-alone "$tmp/fig" "go with --figure" $rc
[ ! -e "$tmp/fig.png" ] && [ ! -e "$tmp/fig.csv" ] && passes=$((passes + 1)) || { echo "FAIL: a refused figure left a file"; fails=$((fails + 1)); }

"$saccade" rm 2 > "$tmp/rm" 2>&1
check rm "$tmp/rm" "^Deleted run 2$"
"$saccade" show 2 > "$tmp/rm" 2>&1; rc=$?
expect_fail rm-gone "$tmp/rm" "has no run 2" $rc
"$saccade" rm 3 99 > "$tmp/rm" 2>&1; rc=$?
expect_fail rm-missing "$tmp/rm" "has no run 99" $rc
"$saccade" show 3 > "$tmp/rm" 2>&1
check rm-typo-deletes-nothing "$tmp/rm" "^Run 3, "

# the real binary killed while capturing a file of sentences: the store stays whole
printf 'One sentence.\nTwo sentences here.\nThree of them now.\nA fourth one.\nAnd five.\n' > "$tmp/five.txt"
"$saccade" capture --db "$tmp/killed.sqlite" --file "$tmp/five.txt" > "$tmp/killed.out" 2>&1 &
pid=$!
sleep 2
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
"$saccade" runs --db "$tmp/killed.sqlite" --json > "$tmp/killed.json" 2>&1; rc=$?
if [ -f "$tmp/killed.sqlite" ]; then
  [ $rc -eq 0 ] && passes=$((passes + 1)) || { echo "FAIL: runs after a kill:"; cat "$tmp/killed.json"; fails=$((fails + 1)); }
  python - "$tmp/killed.sqlite" > "$tmp/killed.check" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
ok = c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
ok = ok and c.execute("SELECT count(*) FROM runs WHERE status <> 'complete'").fetchone()[0] == 0
ok = ok and c.execute("SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM attention a WHERE a.run_id = r.id) <> 270").fetchone()[0] == 0
print("killed store ok" if ok else "killed store damaged")
PY
  check capture-killed "$tmp/killed.check" "^killed store ok"
fi

# store bad input: clear messages, non-zero exit, the file untouched
printf 'not a database, but long enough to have a header...................................................' > "$tmp/notes.txt"
cp "$tmp/notes.txt" "$tmp/notes.orig"
"$saccade" capture --db "$tmp/notes.txt" -t "hi" > "$tmp/bad" 2>&1; rc=$?
expect_fail store-not-a-db "$tmp/bad" "is not an SQLite database" $rc
cmp -s "$tmp/notes.txt" "$tmp/notes.orig" && passes=$((passes + 1)) || { echo "FAIL: a failed capture changed $tmp/notes.txt"; fails=$((fails + 1)); }
"$saccade" runs --db "$tmp/notes.txt" > "$tmp/bad" 2>&1; rc=$?
expect_fail store-not-a-db-runs "$tmp/bad" "is not an SQLite database" $rc
python -c "import sqlite3; c = sqlite3.connect('$tmp/other.sqlite'); c.execute('PRAGMA user_version = 7'); c.commit()" \
  || fail "store-newer: could not write $tmp/other.sqlite"
"$saccade" runs --db "$tmp/other.sqlite" > "$tmp/bad" 2>&1; rc=$?
expect_fail store-newer "$tmp/bad" "created by a newer Saccade (schema 7); this version reads up to 6" $rc
"$saccade" show 1 --db "$tmp/missing.sqlite" > "$tmp/bad" 2>&1; rc=$?
expect_fail store-missing "$tmp/bad" "no capture store at" $rc
"$saccade" show abc > "$tmp/bad" 2>&1; rc=$?
expect_fail store-bad-id "$tmp/bad" "is not a run id" $rc
"$saccade" export 1 --layer 0 --head 0 -o "$tmp/head.txt" > "$tmp/bad" 2>&1; rc=$?
expect_fail export-format "$tmp/bad" "cannot tell the format" $rc

# bad input: clear messages, non-zero exit
printf 'not a model' > "$tmp/bad.gguf"
"$saccade" info -m "$tmp/bad.gguf" > "$tmp/bad" 2>&1; rc=$?
expect_fail bad-model "$tmp/bad" "not a GGUF file" $rc
head -c 1000 "$model" > "$tmp/trunc.gguf"
"$saccade" info -m "$tmp/trunc.gguf" > "$tmp/trunc" 2>&1; rc=$?
expect_fail truncated-model "$tmp/trunc" "truncated" $rc
"$saccade" info -m "$tmp/missing.gguf" > "$tmp/missing" 2>&1; rc=$?
expect_fail missing-model "$tmp/missing" "does not exist" $rc
"$saccade" capture -t "" > "$tmp/empty" 2>&1; rc=$?
expect_fail empty-text "$tmp/empty" "empty input" $rc
"$saccade" frobnicate > "$tmp/verb" 2>&1; rc=$?
expect_fail unknown-verb "$tmp/verb" "unknown verb" $rc

# head analysis: heads, compare, rollout over a store of their own
hdb="$tmp/heads.sqlite"
"$saccade" capture --db "$hdb" -t "The cat chased the ball because it was tired." > /dev/null 2>&1
"$saccade" capture --db "$hdb" -t "The cat chased the ball because it was tired." > /dev/null 2>&1
"$saccade" capture --db "$hdb" -t "A different sentence." > /dev/null 2>&1
"$saccade" heads 1 --db "$hdb" > "$tmp/heads" 2>&1
check heads-title "$tmp/heads" "^Run 1: 30 layers x 9 heads (3 KV heads), 10 tokens"
check heads-last-row "$tmp/heads" "^   29    8  2 "
"$saccade" heads 1 --db "$hdb" --sort sink --json > "$tmp/heads.json" 2>&1
check heads-json-sort "$tmp/heads.json" '"sort" : "sink"'
check heads-json-metric "$tmp/heads.json" '"previous-token" : '
check heads-json-stored "$tmp/heads.json" '"computed" : false'
"$saccade" compare 1:3:2 2:3:2 --db "$hdb" > "$tmp/cmp" 2>&1
check compare-same-head "$tmp/cmp" "0.000000 nats"
"$saccade" compare 1:3:2 1:5:0 --db "$hdb" --json > "$tmp/cmp.json" 2>&1
check compare-json "$tmp/cmp.json" '"largest_differences" : \['
"$saccade" compare 1:3:2 3:3:2 --db "$hdb" > "$tmp/cmp" 2>&1
check compare-tokens-differ "$tmp/cmp" "tokens differ (10 and 4 tokens)"
"$saccade" compare 1 --distance --db "$hdb" -o "$tmp/dist.csv" > "$tmp/dist" 2>&1
check compare-distance "$tmp/dist" "between the 270 heads of run 1"
check compare-distance-csv "$tmp/dist.csv" "^head,"
[ "$(wc -l < "$tmp/dist.csv")" -eq 271 ] && passes=$((passes + 1)) || { echo "FAIL: the distance CSV has not 271 lines"; fails=$((fails + 1)); }
"$saccade" compare 1 --distance --json --db "$hdb" > "$tmp/dist.json" 2>&1
check compare-distance-json "$tmp/dist.json" '"merges" : \['
"$saccade" rollout 1 --flow --db "$hdb" -o "$tmp/roll.csv" > "$tmp/roll" 2>&1
check rollout-flow "$tmp/roll" "^  pos  rollout     flow  token"
check rollout-csv "$tmp/roll.csv" '^"0:The",1,0,'
"$saccade" rollout 1 --target 3 --json --db "$hdb" > "$tmp/roll.json" 2>&1
check rollout-json "$tmp/roll.json" '"target" : 3'
# bad input
"$saccade" heads 99 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail heads-no-run "$tmp/bad" "has no run 99" $rc
"$saccade" heads 1 --sort loudness --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail heads-bad-sort "$tmp/bad" "not 'loudness'" $rc
"$saccade" compare 1:30:0 1:0:0 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail compare-layer-range "$tmp/bad" "has layers 0-29 and heads 0-8; there is no layer 30 head 0" $rc
"$saccade" compare 1:0:9 1:0:0 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail compare-head-range "$tmp/bad" "there is no layer 0 head 9" $rc
"$saccade" compare 1:x:0 1:0:0 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail compare-malformed "$tmp/bad" "'1:x:0' is not RUN:LAYER:HEAD" $rc
"$saccade" compare 1:0 1:0:0 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail compare-malformed-short "$tmp/bad" "'1:0' is not RUN:LAYER:HEAD" $rc
"$saccade" compare 7:0:0 1:0:0 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail compare-no-run "$tmp/bad" "has no run 7" $rc
"$saccade" rollout 1 --target 10 --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail rollout-target-range "$tmp/bad" "has positions 0-9; there is no --target 10" $rc
"$saccade" capture --db "$hdb" -t "$(printf 'word %.0s' $(seq 80))" > /dev/null 2>&1
"$saccade" rollout 4 --flow --db "$hdb" > "$tmp/bad" 2>&1; rc=$?
expect_fail rollout-flow-too-large "$tmp/bad" "flows are computed up to 64 tokens for 30 layers" $rc
# run 3 moved to another model (same shape, another fingerprint)
cp "$hdb" "$tmp/two-models.sqlite"
python - "$tmp/two-models.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO models (sha256, file_size, path, name, arch, n_layers, n_heads, n_kv_heads, head_dim, n_embd, n_vocab, n_ctx_train, added) SELECT zeroblob (32), file_size, path, 'Other', arch, n_layers, n_heads, n_kv_heads, head_dim, n_embd, n_vocab, n_ctx_train, added FROM models WHERE id = 1")
c.execute("UPDATE runs SET model_id = last_insert_rowid () WHERE id = 3")
c.commit()
PY
"$saccade" compare 1:0:0 3:0:0 --db "$tmp/two-models.sqlite" > "$tmp/bad" 2>&1; rc=$?
expect_fail compare-other-model "$tmp/bad" "are of different models; heads can be compared only within one model" $rc

# ablate: run 1 of the default store (captured above); 270 heads as JSON, then reused.
"$saccade" ablate 1 --heads --json > "$tmp/ablate.json" 2>"$tmp/ablate.err"
if python -c 'import json,sys; d=json.load(sys.stdin); assert len(d["heads"]) == 270, len(d["heads"])' < "$tmp/ablate.json" > "$tmp/ablate.check" 2>&1; then
  passes=$((passes + 1))
else
  echo "FAIL: ablate --heads --json:"; sed 's/^/  | /' "$tmp/ablate.check" "$tmp/ablate.err"; fails=$((fails + 1))
fi
"$saccade" ablate 1 --heads > "$tmp/ablate.txt" 2>&1
check ablate-reused "$tmp/ablate.txt" "^reused study "
"$saccade" ablate 99 --heads > "$tmp/bad" 2>&1; rc=$?
expect_fail ablate-missing-run "$tmp/bad" "there is no run 99 in" $rc
"$saccade" ablate 1 --tokens --mean > "$tmp/bad" 2>&1; rc=$?
expect_fail ablate-mean-tokens "$tmp/bad" "--mean applies to --heads" $rc
if [ -f "$tmp/two-models.sqlite" ]; then
  "$saccade" ablate 3 --heads --db "$tmp/two-models.sqlite" > "$tmp/bad" 2>&1; rc=$?
  expect_fail ablate-other-model "$tmp/bad" "not with the loaded model" $rc
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
