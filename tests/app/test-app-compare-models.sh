#!/bin/sh
# test-app-compare-models.sh — the Compare page's "Two models" view in a real X server
# (Xvfb; docs/window.md, "Compare"): a run is captured from the command line, a scripted
# user (tests/app/window-driver.c) opens it, turns to Compare, chooses model B
# (page.models-b: what the file chooser does with its answer) and waits for the worker.
# Checks:
#   1. the counts the window logs are the command line's for the same text and models
#      (`saccade compare --model A --model B --json`), for SmolLM2 against itself;
#   2. the CSV export has every head of both models (270 + 270 rows), types as the CLI;
#   3. the figure exports, and screenshots of the view (by type, by sink mass; English,
#      Simplified Chinese) are not blank;
#   4. against the tiny test model (2 layers, a byte vocabulary): the window says the
#      tokenizations differ, and shows a 30-layer and a 2-layer grid side by side.
# Fails without xvfb-run or the default model (tests/lib.sh).
# Usage: test-app-compare-models.sh SACCADE APP_CHECK_IMAGE APP_WRITE_MODEL OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
write_model=$3
out=$4

need_tools xvfb-run
need_model
need_python_modules json

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/models.sqlite"
text="The quick brown fox jumps over the lazy dog. Alice went to the market to buy apples, and then Alice went home to cook dinner."

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

"$saccade" capture --db "$db" --model "$model" -t "$text" > "$out/capture.txt" 2>&1 \
  || { cat "$out/capture.txt"; echo "FAIL: capture"; exit 1; }
# The command line's numbers first: it also stores the induction study the window reuses.
"$saccade" compare --db "$db" --model "$model" --model "$model" --json -t "$text" \
  > "$out/cli.json" 2> "$out/cli.err" || { cat "$out/cli.err"; echo "FAIL: compare"; exit 1; }

for variant in en zh; do
  cat > "$out/$variant.script" <<SCRIPT
select newest
page compare
dismiss-toast
page-action page.models-b $model
screenshot $out/models-type-$variant.png
page-action page.models-colour sink
screenshot $out/models-sink-$variant.png
page-action page.models-colour type
export-figure $out/models-figure-$variant.png
export-csv $out/models-$variant.csv
quit
SCRIPT
done
"$write_model" tiny "$out/tiny.gguf" || { echo "FAIL: app-write-model"; exit 1; }
# Run 1's text is longer than the tiny model's context (64): a clear error; then a short
# run of its own.
cat > "$out/tiny.script" <<SCRIPT
select 1
page compare
dismiss-toast
page-action page.models-b $out/tiny.gguf
screenshot $out/models-tiny-error.png
select 2
page compare
page-action page.models-b $out/tiny.gguf
screenshot $out/models-tiny.png
quit
SCRIPT
run_app en "$out/en.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
"$saccade" capture --db "$db" --model "$model" -t "The cat sat on the mat." \
  > "$out/capture2.txt" 2>&1 || { cat "$out/capture2.txt"; echo "FAIL: capture"; exit 1; }
run_app tiny "$out/tiny.script"

# 1. The counts the window logged are the command line's.
want=$(python -c "import json, sys
d = json.load(open(sys.argv[1]))
a, b = d['models']
order = ['induction', 'previous-token', 'first-token', 'broad', 'local', 'other']
print(', '.join('%s %d/%d' % (k, a['counts'][k], b['counts'][k]) for k in order))" "$out/cli.json")
grep -qF "$want" "$out/en.log" \
  || fail "the window's counts are not the command line's ($want)"
grep -q "tokens agree" "$out/en.log" || fail "the window did not say the tokens agree"

# 2. The CSV: every head of both models, with the command line's types.
python -c "import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert len(rows) == 540, len(rows)
for side, m in zip('AB', d['models']):
    mine = [r['type'] for r in rows if r['model'] == side]
    assert mine == [h['type'] for h in m['heads']], side
a = [r for r in rows if r['model'] == 'A']
assert all(r['nearest_b_layer'] == r['layer'] and r['nearest_b_head'] == r['head'] for r in a)
" "$out/models-en.csv" "$out/cli.json" || fail "the CSV export differs from the command line"

# 4. Tokens that differ.
grep -q "two models: model B ($out/tiny.gguf): .*longer than the model's context (64)" \
  "$out/tiny.log" || fail "the window did not say the text is too long for model B"
grep -q "two models: A SmolLM2.*, B tiny-llama-test: .*; tokens differ" "$out/tiny.log" \
  || fail "the window did not compare with the tiny model, or did not say the tokens differ"
check_png "$out/models-tiny-error.png"
check_png "$out/models-tiny.png"

# 3. Pictures.
for variant in en zh; do
  check_png "$out/models-type-$variant.png"
  check_png "$out/models-sink-$variant.png"
  [ -s "$out/models-figure-$variant.png" ] || fail "models-figure-$variant.png was not written"
done
echo "$fails failures"
[ "$fails" -eq 0 ]
