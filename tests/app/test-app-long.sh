#!/bin/sh
# test-app-long.sh — a run of thousands of tokens opened in the window and exported from the
# command line (docs/window.md, "Long runs"). app-fixture-long writes a 3,000-token run of
# the 4 x 6 fixture model (24 heads of 3,000 x 3,000: 864 MB as float, past what the window
# holds whole, so its heads are read from the store on demand) and a short run after it.
#
# The scripted user (tests/app/window-driver.c) shows the short run's rollout first, then
# selects the long run (the Rollout page refuses it and must not keep the short run's
# title, nor the Compare page its sides'), opens a
# previous-token head, changes layer, shows the Model, Lines, Rollout and Compare pages
# and exports the heatmap; every screenshot and export must be a picture, not a blank,
# no error may be shown, and what the window adds to its memory must stay well below the
# float size of the run's heads (it never holds them all). The times the user waited and the longest
# main-loop stalls are printed for docs/benchmarks.md, not asserted (machines differ).
# The command line exports the grid of the long run (from the overviews, one head at a
# time) and a token range of one head.
#
# Fails without xvfb-run (tests/lib.sh).
# Usage: test-app-long.sh SACCADE APP_FIXTURE_LONG APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
fixture=$2
check_image=$3
out=$4
n=3000

need_tools xvfb-run

rm -rf "$out"
mkdir -p "$out/home"
check() { "$check_image" "$@" || fail "$1 looks blank"; }

export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY

db="$out/long.sqlite"
"$fixture" "$db" $n > "$out/ids" || { echo "FAIL: app-fixture-long"; exit 1; }
long=$(sed -n 1p "$out/ids")

# --- The command line -------------------------------------------------------------------
"$saccade" export "$long" --db "$db" --figure grid -o "$out/cli-grid.png" > "$out/cli.log" 2>&1 \
  || fail "export --figure grid: $(cat "$out/cli.log")"
check "$out/cli-grid.png" 400 300 20
"$saccade" export "$long" --db "$db" --figure heatmap --layer 2 --head 1 --range 2900:3000 \
  -o "$out/cli-range.png" > "$out/cli.log" 2>&1 || fail "export --range: $(cat "$out/cli.log")"
check "$out/cli-range.png" 300 300 20

# --- The window -------------------------------------------------------------------------
short=$(sed -n 2p "$out/ids")
cat > "$out/long.script" <<EOS
expect-runs 2
expect-run-item 1 Fixture 4x6 · 3000 tok
select $short
expect-run $short
page rollout
sleep 500
expect-view-title Attention rollout
page compare
sleep 300
expect-view-title A: run $short,
memory start
timed select select $long
expect-no-error
expect-run $long
page heatmap
head 2 1
sleep 500
screenshot $out/heatmap-previous.png
timed layer head 3 1
timed head head 3 4
sleep 500
screenshot $out/heatmap-induction.png
export-figure $out/heatmap-export.png
heatmap-zoom 2900:3000 2850:3000
sleep 300
screenshot $out/heatmap-zoomed.png
export-figure $out/heatmap-zoomed-export.png
export-csv $out/heatmap-zoomed.csv
memory heatmap
timed model page model
screenshot $out/model.png
export-figure $out/grid-export.png
page lines
sleep 500
screenshot $out/lines.png
page rollout
expect-view-title
screenshot $out/rollout.png
page compare
expect-view-title
screenshot $out/compare.png
expect-no-error
memory end
quit
EOS
SACCADE_TEST_SCRIPT="$out/long.script" xvfb-run -a -s "-screen 0 1400x1000x24" \
  "${SACCADE_WINDOW_TEST:?}" --db "$db" > "$out/window.log" 2>&1
status=$?
grep -E "^test-driver: (time|memory|line)|CRITICAL|WARNING" "$out/window.log"
[ $status -eq 0 ] || fail "the window exited with $status"
! grep -q "CRITICAL" "$out/window.log" || fail "the window logged a critical warning"
for shot in heatmap-previous heatmap-induction model lines compare; do
  check "$out/$shot.png" 800 500 30
done
check "$out/heatmap-export.png" 400 400 20
check "$out/heatmap-zoomed.png" 800 500 30
# Zoomed in, File > Export writes what the view shows: about 100 x 150 tokens with their
# own positions (the CSV's first row names keys from 2850 on), not the 3,000-token matrix.
check "$out/heatmap-zoomed-export.png" 300 300 20
head -c 40 "$out/heatmap-zoomed.csv" | grep -q '^query\\key,28[0-9][0-9]:' \
  || fail "the zoomed CSV does not start at the visible keys: $(head -c 60 "$out/heatmap-zoomed.csv")"
rows=$(wc -l < "$out/heatmap-zoomed.csv")
[ "$rows" -gt 50 ] && [ "$rows" -lt 400 ] || fail "the zoomed CSV has $rows lines"
check "$out/grid-export.png" 400 300 20

# The window never holds every head as float: what it adds to its memory after start-up
# (the model loaded, the short run shown) while it shows the long run stays below a
# quarter of their size (823 MiB for 24 heads of 3,000 tokens): one head's fp16 and its
# pyramid, the overviews, what is on screen.
start=$(sed -n 's/^test-driver: memory start: peak \([0-9]*\) MiB.*/\1/p' "$out/window.log")
peak=$(sed -n 's/^test-driver: memory end: peak \([0-9]*\) MiB.*/\1/p' "$out/window.log")
heads_mib=$((24 * n * n * 4 / 1048576))
if [ -z "$start" ] || [ -z "$peak" ]; then
  fail "no memory report"
else
  [ $((peak - start)) -lt $((heads_mib / 4)) ] \
    || fail "the window grew by $((peak - start)) MiB (peak $peak MiB); the heads are $heads_mib MiB"
  echo "peak memory $peak MiB, $((peak - start)) MiB beyond start-up; the run's heads as float: $heads_mib MiB"
fi

[ $fails -eq 0 ] && echo "long runs: all checks passed"
[ $fails -eq 0 ]
