#!/bin/sh
# test-app-circuits.sh — the Ablation page's circuit studies in a real X server (Xvfb), on
# the default model (fails without it, xvfb-run or sqlite3: tests/lib.sh), each checked
# against the command line that reads the same stored study back:
#
# 1. A scripted user (tests/app/window-driver.c; the window stores its opening sentence as
#    run 1) captures the indirect-object pair "When Mary and John went to the store, Mary
#    gave a drink to" (corrupted, run 2) and "..., John gave a drink to" (clean, run 3);
#    on the clean run, with target " Mary" and contrast " John":
#    - activation patching of each head's keys (a "what" of issue 26): its title names the
#      keys; figure and CSV exported;
#    - path patching: senders typed with a space and a head outside the model are refused
#      with the reason on the status line (Run Study does not start); then
#      "L17.H4, L23.H3" into each later head's values: the map, its figure and CSV;
#    - QK attribution of L23.H3 (the head picked on the Heatmap page, which its layer and
#      head follow) at the last query and the key it attends most (the defaults): its
#      title states the score and the sum of the parts; figure and CSV;
#      then each component on its own row and column ("Each head"): figure, the same CSV.
# 2. `saccade study patch --what keys`, `study path-patch` and `study qk --json` find the
#    window's studies ("reused", nothing computed) and their numbers are the CSVs'.
# 3. With Qwen2.5 (qwen2) loaded, QK attribution of L12.H3 runs and is stored; its CSV has the
#    Q/K bias as a component of each side, and the parts sum to the score.
#
# Usage: test-app-circuits.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run sqlite3
need_model
need_python_modules json csv

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/circuits.sqlite"

run_app() { # NAME SCRIPT
  bus=""
  command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
  SACCADE_TEST_SCRIPT="$2" xvfb-run -a -s "-screen 0 1400x1000x24" \
    $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" --model "$model" > "$out/$1.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$out/$1.log"
  [ "$rc" -eq 0 ] || fail "$1: the app exited with $rc"
}
check_png() { [ -f "$1" ] && "$check_image" "$1" 800 600 50 || fail "$1 is missing or blank"; }
studies() { sqlite3 "$db" "SELECT count(*) FROM studies WHERE $1"; }

# --- 1. The window ----------------------------------------------------------------------
cat > "$out/window.script" <<SCRIPT
type When Mary and John went to the store, Mary gave a drink to
run
type When Mary and John went to the store, John gave a drink to
run
expect-run 3
page ablation
dismiss-toast
ablation-study patch
ablation-option corrupted 2
ablation-option direction denoise
ablation-option what keys
ablation-target  Mary
ablation-option contrast  John
ablation-run
expect-ablation computed in
expect-title Denoising each head's keys: m = logit(
screenshot $out/keys.png
export-figure $out/keys-figure.png
export-csv $out/keys.csv
ablation-study path-patch
ablation-option senders L17.H4, L99.H0
expect-ablation-runnable no
expect-ablation The sender L99.H0 is not a head of
ablation-option senders L17.H4, L23.H3
ablation-option component values
ablation-run
expect-ablation computed in
expect-title Denoising paths from 17.4,23.3 into each later head's values: m = logit(
screenshot $out/path.png
export-figure $out/path-figure.png
export-figure $out/path.svg
export-csv $out/path.csv
page heatmap
head 23 3
page ablation
ablation-study qk
ablation-run
expect-ablation computed in
expect-title QK attribution of L23.H3, query 13
screenshot $out/qk.png
export-figure $out/qk-figure.png
export-csv $out/qk.csv
ablation-option qk-each yes
expect-title QK attribution of L23.H3, query 13
screenshot $out/qk-each.png
export-figure $out/qk-each-figure.png
export-csv $out/qk-each.csv
quit
SCRIPT
run_app window "$out/window.script"
[ "$(studies "kind = 'patch' AND status = 'complete'")" = 1 ] || fail "one patching study should be stored"
[ "$(studies "kind = 'path-patch' AND status = 'complete'")" = 1 ] || fail "one path patching study should be stored"
[ "$(studies "kind = 'qk-attribution' AND status = 'complete'")" = 1 ] || fail "one QK attribution study should be stored"
# "Each head" draws every component; the CSV holds every part either way
cmp -s "$out/qk.csv" "$out/qk-each.csv" || fail "the QK CSV changed with Each head"
check_png "$out/qk-each.png"
for f in keys path qk qk-each; do
  check_png "$out/$f.png"
  head -c 8 "$out/$f-figure.png" | grep -q PNG || fail "$f-figure.png is not a PNG"
done
grep -q '<svg' "$out/path.svg" 2>/dev/null || fail "path.svg is not an SVG"

# --- 2. The command line reads the window's studies back --------------------------------
n_before=$(studies "1")
cli() { # NAME ARGS...: saccade study ARGS --db --model --json > NAME.json
  name=$1
  shift
  "$saccade" study "$@" --db "$db" -m "$model" --json > "$out/$name.json" 2> "$out/$name.err" \
    || { fail "saccade study $* failed:"; sed 's/^/  | /' "$out/$name.err"; }
}
cli keys patch 3 --corrupted 2 --target " Mary" --contrast " John" --what keys
pycheck keys "$out/keys.json" "
import csv
rows = list(csv.DictReader(open('$out/keys.csv')))
assert d['source'] == 'reused', d['source']
assert d['patch']['what'] == 'keys', d['patch']
assert len(rows) == len(d['cells']) == 30 * 9, len(rows)
for r, c in zip(rows, d['cells']):
    assert (int(r['layer']), int(r['head'])) == (c['layer'], c['head']), (r, c)
    assert float(r['m']) == c['m'], (r, c)
assert {r['study'] for r in rows} == {str(d['study_id'])}
"
cli path path-patch 3 --corrupted 2 --target " Mary" --contrast " John" --senders 17.4,23.3 \
  --component values
pycheck path "$out/path.json" "
import csv
rows = list(csv.DictReader(open('$out/path.csv')))
p = d['path_patch']
assert d['source'] == 'reused', d['source']
assert p['senders'] == '17.4,23.3' and p['component'] == 'values', p
assert p['receivers_from_layer'] == 24, p
assert len(rows) == len(d['cells']) == 30 * 9, len(rows)
moved = 0
for r, c in zip(rows, d['cells']):
    assert (int(r['layer']), int(r['head'])) == (c['layer'], c['head']), (r, c)
    assert int(r['receiver']) == int(c['receiver']), (r, c)
    assert float(r['m']) == c['m'] and float(r['effect']) == c['effect'], (r, c)
    assert (r['senders'], r['component']) == ('17.4,23.3', 'values'), r
    moved += c['receiver'] and abs(c['effect']) > 0.01
assert moved > 0, 'no receiver moved the metric'
assert {r['study'] for r in rows} == {str(d['study_id'])}
"
key=$(python -c "import csv; print(next(csv.DictReader(open('$out/qk.csv')))['key'])")
cli qk qk 3 --layer 23 --head 3 --query 13 --key "$key"
pycheck qk "$out/qk.json" "
import csv
rows = list(csv.DictReader(open('$out/qk.csv')))
assert d['source'] == 'reused', d['source']
assert (d['layer'], d['head'], d['query'], d['key']) == (23, 3, 13, $key), d
C = len(d['components'])
assert C == 1 + 23 * 10 and len(rows) == C * C, (C, len(rows))
for r in rows:
    assert float(r['score']) == d['score'] and float(r['sum_of_parts']) == d['sum_of_parts']
k = 0
for a in range(C):
    for b in range(C):
        r = rows[k]
        k += 1
        assert (r['query_component'], r['key_component']) == (d['components'][a], d['components'][b]), r
        assert float(r['part']) == d['parts'][a][b], (r, d['parts'][a][b])
assert abs(sum(float(r['part']) for r in rows) - d['score']) < 1e-3 * max(1, abs(d['score']))
assert rows[0]['study'] == str(d['study_id'])
"
[ "$(studies "1")" = "$n_before" ] || fail "the command line computed a study the window had stored"

# --- 3. Qwen2: QK attribution with the Q/K biases as a component ------------------------
qwen=${SACCADE_QWEN2_MODEL:-$src/data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf}
[ -f "$qwen" ] || fail "Qwen2.5 is not fetched (data/fetch-model.sh qwen2)"
cat > "$out/qwen.script" <<SCRIPT
type The cat sat on the
run
page heatmap
head 12 3
page ablation
dismiss-toast
ablation-study qk
expect-ablation-runnable yes
ablation-run
expect-ablation computed in
expect-title QK attribution of L12.H3, query 4
screenshot $out/qwen-qk.png
export-csv $out/qwen-qk.csv
ablation-option qk-each yes
screenshot $out/qwen-qk-each.png
quit
SCRIPT
smollm=$model
model=$qwen
db="$out/qwen.sqlite"
run_app qwen "$out/qwen.script"
model=$smollm
check_png "$out/qwen-qk.png"
check_png "$out/qwen-qk-each.png"
[ "$(studies "kind = 'qk-attribution' AND status = 'complete'")" = 1 ] \
  || fail "one QK attribution of qwen2 should be stored"
# the components: embed, 12 layers of 14 heads and an MLP, the bias (sc-qk-study.h)
python -c "
import csv, sys
rows = list(csv.DictReader(open('$out/qwen-qk.csv')))
C = 1 + 12 * 15 + 1
assert len(rows) == C * C, len(rows)
assert rows[-1]['query_component'] == 'bias' and rows[-1]['key_component'] == 'bias', rows[-1]
bias = [r for r in rows if 'bias' in (r['query_component'], r['key_component'])]
assert len(bias) == 2 * C - 1 and any(float(r['part']) != 0 for r in bias)
s = float(rows[0]['score'])
assert abs(sum(float(r['part']) for r in rows) - s) <= 1e-4 * max(1, abs(s)), s
" || fail "the qwen2 QK CSV lacks its bias component or its parts do not sum to the score"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
