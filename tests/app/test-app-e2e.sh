#!/bin/sh
# test-app-e2e.sh — the window, end to end, in a real X server (Xvfb).
#
# 1. Fixture: app-fixture writes a database of three runs of a small made-up model; the app
#    starts on it and a scripted user (SACCADE_TEST_SCRIPT, tests/app/window-driver.c)
#    selects the newest run, visits every page, steps through heads with the keys, changes
#    the colour map and scale, exports a figure in each format and the data as CSV, opens
#    Preferences and the shortcuts window, and screenshots each.
# 2. Errors: a corrupt database and a bad model file must show their message while the
#    window stays usable.
# 3. The same fixture with the interface in Simplified Chinese (LANGUAGE=zh_CN).
# 4. First start (with the default model; its absence fails): an empty database and fresh
#    settings make the window run the sample sentence by itself; then a CJK sentence; then
#    the Induction page's detector (small), its CSV and figure, and a head opened from it.
#
# Every screenshot lands in OUTDIR (build/tests/app-e2e/) and is checked not to be blank;
# the exports are checked by format. Fails without xvfb-run or the default model (tests/lib.sh).
# Usage: test-app-e2e.sh SACCADE APP_FIXTURE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
fixture=$2
check_image=$3
out=$4

need_tools xvfb-run

rm -rf "$out"
mkdir -p "$out/home"

# A private home: nothing of the user's (settings, databases) is read or written.
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY

# run_app NAME SCRIPT [ARGS...]: runs the window under Xvfb with SCRIPT; log in NAME.log.
run_app() {
  name=$1
  script=$2
  shift 2
  # A session bus when there is one to start (GTK asks for it; without, it only warns).
  bus=""
  command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
  SACCADE_TEST_SCRIPT="$script" xvfb-run -a -s "-screen 0 1400x1000x24" \
    $bus "${SACCADE_WINDOW_TEST:?}" "$@" > "$out/$name.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$out/$name.log"
  [ "$rc" -eq 0 ] || fail "$name: the app exited with $rc"
}

check_png() { # FILE MIN_W MIN_H MIN_COLOURS
  [ -f "$1" ] || { fail "$1 was not written"; return; }
  "$check_image" "$@" || fail "$1 looks blank"
}

check_magic() { # FILE TEXT
  [ -s "$1" ] || { fail "$1 was not written"; return; }
  head -c 200 "$1" | grep -q "$2" || fail "$1 does not start like a $2 file"
}

# --- 0. No display: a clear message, then the demo (here without a model: its error) ---
env -u DISPLAY -u WAYLAND_DISPLAY SACCADE_MODEL="$out/no-such-model.gguf" "$saccade" \
  > "$out/no-display.log" 2>&1
grep -q "no display" "$out/no-display.log" \
  || fail "saccade without a display says: $(cat "$out/no-display.log")"

# --- 1. The fixture database ---------------------------------------------------------
db="$out/fixture.sqlite"
"$fixture" "$db" > "$out/fixture.ids" || { echo "FAIL: app-fixture"; exit 1; }
# Part 1 deletes a run: the later parts get a database of their own.
db2="$out/fixture2.sqlite"
"$fixture" "$db2" > /dev/null || { echo "FAIL: app-fixture"; exit 1; }

cat > "$out/fixture.script" <<EOF
expect-runs 3
# The newest run is selected on start.
expect-run newest
expect-no-error
page heatmap
head 1 4
screenshot $out/heatmap.png
# Keys: Right = next head, Page Up / Up = next layer (as the layer spin button), Down =
# previous layer, Left = previous head.
key Right
expect-head 1 5
key Page_Up
expect-head 2 5
key Down
expect-head 1 5
key Left
expect-head 1 4
action win.next-layer
expect-head 2 4
head 1 4
# Ctrl+E as a user does it: the figure's options (a journal column), the file chooser, a
# name, Save.
action win.export-figure
screenshot-dialog $out/export-options.png AdwMessageDialog
export-options journal-single
screenshot-dialog $out/export-dialog.png GtkFileChooserDialog
save-as $out/heatmap-dialog.pdf
export-figure $out/heatmap-export.png
export-figure $out/heatmap-export.svg
export-figure $out/heatmap-export.pdf
export-csv $out/heatmap.csv
scale log
colormap magma
screenshot $out/heatmap-log-magma.png
scale linear
colormap viridis
page model
metric sink
screenshot $out/model.png
export-figure $out/grid-export.png
export-csv $out/model.csv
page lines
head 0 0
screenshot $out/lines.png
export-figure $out/lines-export.svg
export-csv $out/lines.csv
page-action page.lines-solo 2
page-action page.lines-range 3:8
page-action page.lines-threshold 0.05
expect-title Layer 0, head 2 ·
expect-title · tokens 3:8
screenshot $out/lines-range.png
export-figure $out/lines-range-export.png
page-action page.lines-heads all
page-action page.lines-range 0:
page-action page.lines-threshold 0.1
# The CJK run: split bytes as hex, CJK glyphs.
select 2
expect-run 2
page heatmap
head 3 0
screenshot $out/heatmap-cjk.png
# The code run: a newline token.
select 1
expect-run 1
head 3 1
screenshot $out/heatmap-newline.png
# The search field filters the sidebar.
search 猫
expect-shown 1
search
expect-shown 3
# A click on a head of the Model page opens it in Heatmap.
page model
activate-head 2 3
expect-page heatmap
expect-head 2 3
# The heads table, sorted by the previous-token score (strongest first: the fixture's
# previous-token head of the sharpest layer); the profile; the grid by another metric.
select 3
expect-run 3
page model
page-action page.sort-heads -previous-token
expect-table-row 0 3 1
screenshot $out/heads-table.png
export-csv $out/model-all.csv
page-action page.view profile
screenshot $out/profile.png
export-figure $out/profile-export.png
page-action page.view grid
metric distance
screenshot $out/model-distance.png
metric sink
# The Compare page: a pair with its difference and distance; the distance matrix.
page compare
page-action page.pair 3.0 3.1
screenshot $out/compare.png
export-figure $out/compare-diff.svg
page-action page.view matrix
screenshot $out/compare-matrix.png
export-figure $out/matrix-export.png
export-figure $out/matrix-export.pdf
export-csv $out/matrix.csv
page-action page.activate-cell 0 7
screenshot $out/compare-cell.png
# Rollout: the map and the last token's bars, then flow.
page rollout
screenshot $out/rollout.png
export-figure $out/rollout-export.png
page-action page.bars flow
screenshot $out/rollout-flow.png
export-csv $out/flow.csv
# ... and without the first token (the attention sink): rolled out and flowed again, said so
page-action page.first-token excluded
expect-view-title first token excluded
screenshot $out/rollout-excluded.png
export-csv $out/flow-excluded.csv
page-action page.bars rollout
export-csv $out/rollout-excluded.csv
export-figure $out/rollout-excluded-export.png
page-action page.first-token kept
expect-view-title Attention rollout
export-csv $out/rollout-kept.csv
# Delete a run, after confirming.
delete 1
screenshot-dialog $out/delete-dialog.png
respond delete
expect-runs 2
expect-run newest
preferences $out/preferences.png
shortcuts $out/shortcuts.png
quit
EOF
run_app fixture "$out/fixture.script" --db "$db" --model "$out/no-such-model.gguf"

for p in heatmap heatmap-log-magma model lines heatmap-cjk heatmap-newline heads-table profile \
         model-distance compare compare-matrix compare-cell rollout rollout-flow; do
  check_png "$out/$p.png" 800 600 50
done
check_png "$out/delete-dialog.png" 200 100 8
check_png "$out/preferences.png" 300 200 8
check_png "$out/shortcuts.png" 300 200 8
check_png "$out/heatmap-export.png" 400 300 50
check_png "$out/grid-export.png" 400 300 50
check_magic "$out/heatmap-export.svg" "<svg"
check_magic "$out/heatmap-export.pdf" "%PDF-"
# The options dialog's journal column: 89 mm = 252.28 pt wide, and kept for the next exports
grep -a -q '/MediaBox \[ 0 0 252\.28' "$out/heatmap-dialog.pdf" \
  || fail "the options dialog's journal-single PDF is not 89 mm wide"
[ "$(od -An -tu1 -j16 -N4 "$out/heatmap-export.png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')" = 1051 ] \
  || fail "the export after the options dialog is not 89 mm at 300 dpi (1051 px)"
check_magic "$out/heatmap-dialog.pdf" "%PDF-"
check_png "$out/export-dialog.png" 300 200 8
check_magic "$out/lines-export.svg" "<svg"
check_png "$out/lines-range.png" 800 600 50
check_png "$out/lines-range-export.png" 300 200 8
check_png "$out/profile-export.png" 300 200 20
check_png "$out/matrix-export.png" 300 200 20
check_png "$out/rollout-export.png" 300 200 20
check_png "$out/rollout-excluded.png" 800 600 50
check_png "$out/rollout-excluded-export.png" 300 200 20
# The window's rollout without the first token is the command line's, number for number;
# nothing reaches the last token from token 0 then, and switching back restores the rollout.
"$saccade" rollout 3 --db "$db" --exclude-first --json > "$out/rollout-excluded.json" \
  || fail "saccade rollout 3 --exclude-first failed"
"$saccade" rollout 3 --db "$db" --json > "$out/rollout-kept.json" \
  || fail "saccade rollout 3 failed"
"$saccade" export 3 --db "$db" --figure rollout --exclude-first -o "$out/rollout-cli.png" \
  --json > "$out/rollout-cli.json" || fail "saccade export --figure rollout --exclude-first failed"
"$saccade" export 3 --db "$db" --exclude-first -l 0 -H 0 -o "$out/head.csv" \
  > "$out/exclude-no-figure.txt" 2>&1
expect_fail export-exclude-without-rollout "$out/exclude-no-figure.txt" \
  "exclude-first goes with --figure rollout" $?
python - "$out" <<'PY' || fail "the window's rollout CSVs against saccade rollout --json"
import csv, json, sys
out = sys.argv[1]
def column(name, header):
    with open(f"{out}/{name}", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["pos", "token", header], rows[0]
    return [float(r[2]) for r in rows[1:]]
ex = json.load(open(f"{out}/rollout-excluded.json"))
kept = json.load(open(f"{out}/rollout-kept.json"))
assert ex["first_token"] == "excluded" and kept["first_token"] == "kept"
win_ex = column("rollout-excluded.csv", "rollout_first_excluded")
win_kept = column("rollout-kept.csv", "rollout")
flow_ex = column("flow-excluded.csv", "flow_first_excluded")
assert len(win_ex) == len(ex["rollout_target"]) > 2
for a, b in zip(win_ex, ex["rollout_target"]):
    assert abs(a - b) <= 1e-6 * max(1.0, abs(b)), (a, b)
for a, b in zip(win_kept, kept["rollout_target"]):
    assert abs(a - b) <= 1e-6 * max(1.0, abs(b)), (a, b)
assert win_ex[0] == 0.0 and flow_ex[0] == 0.0, (win_ex[0], flow_ex[0])
assert kept["rollout_target"][0] > 0.0
assert abs(sum(win_ex) - 1.0) < 1e-6, sum(win_ex)
assert max(abs(a - b) for a, b in zip(win_ex, win_kept)) > 1e-3
cli = json.load(open(f"{out}/rollout-cli.json"))
assert cli["figure"] == "rollout" and cli["first_token"] == "excluded", cli
PY
check_png "$out/rollout-cli.png" 300 200 20
check_magic "$out/compare-diff.svg" "<svg"
check_magic "$out/matrix-export.pdf" "%PDF-"
head -1 "$out/model-all.csv" 2>/dev/null | grep -q ',last_top_token,last_top_weight' \
  || fail "model-all.csv header: every statistic"
head -1 "$out/matrix.csv" 2>/dev/null | grep -q '^item,L[0-9]\.H[0-9]' || fail "matrix.csv header"
[ "$(wc -l < "$out/matrix.csv" 2>/dev/null)" = 25 ] || fail "matrix.csv should have 1 + 24 lines"
head -1 "$out/flow.csv" 2>/dev/null | grep -q '^pos,token,flow' || fail "flow.csv header"
# CSV: a header of 10 keys plus the corner; 11 lines for the 10 queries of "The cat ...".
if [ -f "$out/heatmap.csv" ]; then
  head -1 "$out/heatmap.csv" | grep -q '^query\\key,0:The,1:␣cat,' \
    || fail "heatmap.csv header: $(head -1 "$out/heatmap.csv")"
  [ "$(wc -l < "$out/heatmap.csv")" -eq 11 ] || fail "heatmap.csv has $(wc -l < "$out/heatmap.csv") lines"
else
  fail "heatmap.csv was not written"
fi
[ "$(wc -l < "$out/model.csv" 2>/dev/null)" = 25 ] || fail "model.csv should have 1 + 4x6 lines"
head -1 "$out/model.csv" 2>/dev/null | grep -q '^layer,head,kv_head,entropy,sink_mass,previous_token' \
  || fail "model.csv header"
grep -q '^0,5,9,9,' "$out/lines.csv" 2>/dev/null || fail "lines.csv lacks head 5's last row"

# --- 2. Errors: the message is shown, the window stays usable -------------------------
printf 'this is not a database, just forty-odd bytes of text\n' > "$out/corrupt.sqlite"
printf 'GGUF but not really' > "$out/bad.gguf"
cat > "$out/errors.script" <<EOF
expect-error not a database
screenshot $out/error-database.png
screenshot-dialog $out/error-database-dialog.png
close-dialogs
database $db2
expect-runs 3
model $out/bad.gguf
expect-error bad.gguf
screenshot $out/error-model.png
screenshot-dialog $out/error-model-dialog.png
close-dialogs
type A sentence with a broken model
run
expect-error bad.gguf
close-dialogs
page lines
expect-run newest
quit
EOF
run_app errors "$out/errors.script" --db "$out/corrupt.sqlite" --model "$out/no-such-model.gguf"
check_png "$out/error-database.png" 800 600 20
check_png "$out/error-model.png" 800 600 20
check_png "$out/error-database-dialog.png" 200 100 8
check_png "$out/error-model-dialog.png" 200 100 8

# --- 3. The interface in Simplified Chinese -------------------------------------------
cat > "$out/zh.script" <<EOF
expect-runs 3
expect-run newest
page heatmap
head 1 4
screenshot $out/zh_CN-heatmap.png
page model
screenshot $out/zh_CN-model.png
quit
EOF
LANGUAGE=zh_CN run_app zh_CN "$out/zh.script" --db "$db2" --model "$out/no-such-model.gguf"
check_png "$out/zh_CN-heatmap.png" 800 600 50
check_png "$out/zh_CN-model.png" 800 600 50

# --- 4. First start with the default model --------------------------------------------
model="${SACCADE_MODEL:-$SC_TEST_SOURCE_DIR/data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
if [ -f "$model" ]; then
  long=""
  for i in $(seq 60); do long="$long The cat chased the ball because it was tired."; done
  cat > "$out/first.script" <<EOF
# Nothing typed: the sample sentence runs by itself.
expect-runs 1
expect-run newest
expect-no-error
# Layer 13, head 8 is where "it" looks back at "cat" (0.62): the README's screenshot.
dismiss-toast
page heatmap
head 13 8
screenshot $out/first-run.png
page model
screenshot $out/first-run-model.png
page lines
screenshot $out/first-run-lines.png
type 猫追球，它累了。
run
expect-no-error
expect-runs 2
page heatmap
screenshot $out/first-run-cjk.png
# Induction heads on the real model, small (8 tokens repeated, 2 seeds: 2 passes of 16
# tokens plus the OV scores), then the same study again from the database.
page induction
induction 8 2
expect-induction Computed now
dismiss-toast
screenshot $out/induction.png
export-csv $out/induction.csv
export-figure $out/induction-loss.svg
induction 8 2
expect-induction From study 1
# A click on a head: seed 0's sequence becomes run 3, shown in Heatmap at that head.
induction-open 17 4
expect-page heatmap
expect-runs 3
expect-run newest
expect-run-item 0 tok · induction sequence
expect-head 17 4
screenshot $out/induction-head.png
page induction
# Cancel: a long text, cancelled after its first layer, stores nothing.
type $long
run-then-cancel
expect-status Cancelled
expect-runs 3
quit
EOF
  rm -rf "$out/home/data"
  SACCADE_MODEL="$model" run_app first "$out/first.script"
  for p in first-run first-run-model first-run-lines first-run-cjk induction induction-head; do
    check_png "$out/$p.png" 800 600 50
  done
  head -1 "$out/induction.csv" 2>/dev/null \
    | grep -q '^rank,layer,head,prefix_matching,duplicate_token,previous_token,copying,positive_share' \
    || fail "induction.csv header: $(head -1 "$out/induction.csv" 2>/dev/null)"
  [ "$(wc -l < "$out/induction.csv" 2>/dev/null)" = 271 ] \
    || fail "induction.csv should have 1 + 30x9 lines"
  grep -q '<svg' "$out/induction-loss.svg" 2>/dev/null || fail "induction-loss.svg is not an SVG"
  [ -f "$out/home/data/saccade/captures.sqlite" ] || fail "the default database was not created"
else
  fail "the default model is not fetched ($model): run data/fetch-model.sh (tools/setup.sh does); the first-start part cannot run"
fi

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
