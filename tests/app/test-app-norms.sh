#!/bin/sh
# test-app-norms.sh — norm-based attention in the window (issue 27 items 1-2): the Heatmap
# page's Weight / Norm switch and the Model page's norm metrics, in a real X server (Xvfb),
# on the default model (fails without it, xvfb-run, sqlite3 or Python: tests/lib.sh).
#
# Runs stored from the command line first: 1 the IOI sentence (14 tokens), 2 a text of
# about 360 tokens (past the 295 whose maps the store keeps for SmolLM2's 9 heads), 3 a
# sentence of the tests' tiny model (another model file). A scripted user
# (tests/app/window-driver.c) then:
#   - on run 1, Heatmap, L15.H3: turns Norm on (one forward pass in a worker), sees the
#     title say "Norm-based attention", exports the figure and the CSV, turns it off and
#     exports the weights' CSV;
#   - on run 3 and run 2: Norm cannot be chosen and the line under the toolbar says why
#     (another model file; the run's length and the limit);
#   - on the Model page, colours the grid by "Norm share of the first token" and by the gap,
#     exports both; shows the weight vs norm scatter (one dot per head) and exports it;
#     and on run 3 reads why they are off.
# Then the numbers: the Norm CSV is `saccade norms 1 --layer 15 --json`'s map of head 3,
# cell for cell; the weights' CSV is not it (and says "query\key" alone); the Model page's
# CSV is that study's every head's weight and norm share; the store holds one norm study of
# run 1 (the page's and the grid's are the same study: the grid asks for the middle layer,
# 15), which the command line read back rather than computed.
#
# Usage: test-app-norms.sh SACCADE APP_CHECK_IMAGE APP_WRITE_MODEL OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
write_model=$3
out=$4

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
db="$out/norms.sqlite"
check_png() { [ -f "$1" ] && "$check_image" "$1" 400 300 20 || fail "$1 is missing or blank"; }

# --- The runs ---------------------------------------------------------------------------
"$saccade" capture --db "$db" --model "$model" \
  "When Mary and John went to the store, John gave a drink to" > "$out/cap.log" 2>&1 \
  || fail "capture 1: $(cat "$out/cap.log")"
long=$(i=0; while [ $i -lt 40 ]; do printf 'The river runs past the old mill. '; i=$((i + 1)); done)
"$saccade" capture --db "$db" --model "$model" "$long" > "$out/cap.log" 2>&1 \
  || fail "capture 2: $(cat "$out/cap.log")"
"$write_model" tiny "$out/tiny.gguf" || fail "app-write-model"
"$saccade" capture --db "$db" --model "$out/tiny.gguf" "hello there" > "$out/cap.log" 2>&1 \
  || fail "capture 3: $(cat "$out/cap.log")"
n2=$(sqlite3 "$db" "SELECT count(*) FROM tokens WHERE run_id = 2")
[ "$n2" -gt 295 ] || fail "run 2 has $n2 tokens: not past the maps' 295"

# --- The window -------------------------------------------------------------------------
cat > "$out/window.script" <<SCRIPT
expect-runs 3
select 1
expect-run 1
page heatmap
head 15 3
expect-sensitive heatmap-norm yes
page-action page.values norm
expect-title Norm-based attention ‖α·f(x)‖ · Layer 15, head 3 (KV head 1)
expect-no-error
screenshot $out/heatmap-norm.png
export-figure $out/heatmap-norm-export.png
export-csv $out/norm.csv
page-action page.values weight
expect-title Layer 15, head 3 (KV head 1)
export-csv $out/weight.csv
screenshot $out/heatmap-weight.png
page-action page.values norm
expect-title Norm-based attention
select 3
expect-run 3
expect-sensitive heatmap-norm no
expect-named heatmap-norm-reason Norm is off: Run 3 was captured with
expect-named heatmap-norm-reason another model file than the loaded
screenshot $out/heatmap-other-model.png
select 2
expect-run 2
expect-sensitive heatmap-norm no
expect-named heatmap-norm-reason norm-based maps are kept for runs of up to 295 tokens
screenshot $out/heatmap-long.png
select 1
expect-run 1
page model
page-action page.metric norm-share
expect-named model-norm-line the first token's share
expect-title First-token norm share of every head
screenshot $out/model-norm-share.png
export-figure $out/model-norm-share-export.png
export-csv $out/model-norm.csv
page-action page.metric norm-gap
expect-title First-token weight − norm of every head
note-width
screenshot $out/model-norm-gap.png
page-action page.view profile
screenshot $out/model-norm-gap-profile.png
page-action page.view sinks
expect-named model-norm-line Each dot is a head
expect-title First token: weight against norm share, every head
screenshot $out/model-sinks.png
expect-width-unchanged
export-figure $out/model-sinks-export.png
export-csv $out/model-sinks.csv
page-action page.view grid
select 3
expect-run 3
expect-named model-norm-line Norm metrics are off: Run 3 was captured with
expect-title Every head · tiny-llama-test
screenshot $out/model-other-model.png
expect-no-error
quit
SCRIPT
bus=""
command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
SACCADE_TEST_SCRIPT="$out/window.script" xvfb-run -a -s "-screen 0 1400x1000x24" \
  $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" --model "$model" > "$out/window.log" 2>&1
rc=$?
sed 's/^/  | /' "$out/window.log"
[ "$rc" -eq 0 ] || fail "the window exited with $rc"
! grep -q "CRITICAL" "$out/window.log" || fail "the window logged a critical warning"
for shot in heatmap-norm heatmap-norm-export heatmap-weight heatmap-other-model heatmap-long \
            model-norm-share model-norm-share-export model-norm-gap model-norm-gap-profile \
            model-other-model model-sinks model-sinks-export; do
  check_png "$out/$shot.png"
done

# --- Against the command line -----------------------------------------------------------
[ "$(sqlite3 "$db" "SELECT count(*) FROM studies WHERE kind = 'norm-attention' AND status = 'complete'")" = 1 ] \
  || fail "the Heatmap page and the grid should share one norm study of run 1"
"$saccade" norms 1 --db "$db" --model "$model" --layer 15 --json > "$out/norms.json" \
  2> "$out/cli.log" || fail "norms --json: $(cat "$out/cli.log")"
python - "$out" > "$out/py.log" 2>&1 <<'PY'
import csv, json, sys
out = sys.argv[1]
d = json.load(open(f"{out}/norms.json"))
assert d["source"] == "reused", d["source"]   # the window's study, read back
assert d["layer"] == 15
rows = list(csv.reader(open(f"{out}/norm.csv", encoding="utf-8")))
assert rows[0][0] == "query\\key [norm ||alpha_ij f_h(x_j)||]", rows[0][0]
n = d["n_tokens"]
assert len(rows) == n + 1 and len(rows[0]) == n + 1, (len(rows), len(rows[0]))
want = d["maps"]["heads"][3]
worst = 0.0
for i in range(n):
    for j in range(n):
        got = float(rows[i + 1][j + 1])
        worst = max(worst, abs(got - want[i][j]))
        assert abs(got - want[i][j]) <= 1e-6 * max(1.0, abs(want[i][j])), (i, j, got, want[i][j])
# a head whose first column is not its largest: the norms are not the weights
w = list(csv.reader(open(f"{out}/weight.csv", encoding="utf-8")))
assert w[0][0] == "query\\key", w[0][0]
assert any(abs(float(w[i + 1][j + 1]) - float(rows[i + 1][j + 1])) > 0.5
           for i in range(n) for j in range(i + 1)), "the Norm CSV holds the weights"
m = list(csv.DictReader(open(f"{out}/model-norm.csv", encoding="utf-8")))
heads = {(h["layer"], h["head"]): h for h in d["heads"]}
assert len(m) == len(heads) == 270, len(m)
for r in m:
    h = heads[(int(r["layer"]), int(r["head"]))]
    for k in ("weight_first", "norm_first", "gap"):
        assert abs(float(r[k]) - h[k]) <= 1e-6, (r, k, h[k])
assert open(f"{out}/model-sinks.csv").read() == open(f"{out}/model-norm.csv").read()
print("python: ok, worst |csv - json| %.3g over %d cells" % (worst, n * n))
PY
cat "$out/py.log"
grep -q "python: ok" "$out/py.log" || fail "the window's CSVs are not the command line's study"

if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
