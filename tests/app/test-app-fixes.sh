#!/bin/sh
# test-app-fixes.sh — what a new user tripped over in the first hour (issue 11), each fixed
# and checked through the face where it was met:
#
# 1. CLI figures: `export --figure lines --head 4` draws head 4 in head 4's colour (its
#    legend said "Heads ■ 0" in head 0's colour before); `--metric` takes every metric the
#    window offers (previous-token included).
# 2. The window, under Xvfb with the scripted user (tests/app/window-driver.c), on
#    app-fixture's database (runs 1-3; 6 query heads over 2 KV heads):
#    - a run the window refuses to open (run 2, made unreadable: one head's shape edited) leaves
#      the sidebar on the run shown, not on the refused one;
#    - Up is the next layer and Down the previous one (as the layer spin button);
#    - the heatmap's title names the KV head as the command line does ("(KV head 1)");
#    - the scale control does not offer "log" for the diverging map (drawn linear);
#    - the head CSV the window writes is byte for byte the one `saccade export` writes;
#    - runs the command line deletes (`saccade rm`) and (with the default model) stores
#      (`saccade capture`) while the window is open appear in the sidebar by themselves,
#      the run shown staying selected.
#
# Fails without xvfb-run or the sqlite3 shell (which makes run 2 unreadable).
# Usage: test-app-fixes.sh SACCADE APP_FIXTURE APP_PNG_COLOUR OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
fixture=$2
png_colour=$3
out=$4

need_tools xvfb-run sqlite3

rm -rf "$out"
mkdir -p "$out/home"

export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY

db="$out/fixture.sqlite"
"$fixture" "$db" > "$out/fixture.ids" || { echo "FAIL: app-fixture"; exit 1; }

# --- 1. The lines figure of one head, from the command line ---------------------------
# Six heads: tab10, head 0 #1f77b4, head 4 #9467bd (saccade_figure_head_color()).
"$saccade" export 3 --db "$db" --figure lines --layer 1 --head 4 -o "$out/lines-h4.png" \
  > "$out/lines-h4.log" 2>&1 || fail "export --figure lines: $(cat "$out/lines-h4.log")"
purple=$("$png_colour" "$out/lines-h4.png" 9467bd)
blue=$("$png_colour" "$out/lines-h4.png" 1f77b4)
[ "${purple:-0}" -gt 20 ] || fail "lines --head 4: $purple pixels in head 4's colour"
[ "${blue:-1}" -eq 0 ] || fail "lines --head 4: $blue pixels in head 0's colour"
echo "lines --head 4: $purple pixels of head 4's colour, $blue of head 0's"

# Every metric the window offers (the schema's choices for its "metric" key) is a metric
# the command line's figures take (before, --metric knew entropy and sink only).
schema="$SC_TEST_SOURCE_DIR/data/io.github.saccade.Saccade.gschema.xml"
metrics=$(sed -n '/<key name="metric"/,/<\/key>/s/.*<choice value="\([^"]*\)".*/\1/p' "$schema")
[ "$(echo "$metrics" | wc -w)" -ge 9 ] || fail "the schema offers only: $metrics"
for m in $metrics; do
  for fig in grid profile; do
    "$saccade" export 3 --db "$db" --figure $fig --metric "$m" -o "$out/$fig-$m.png" \
      > "$out/$fig-$m.log" 2>&1 || fail "export --figure $fig --metric $m: $(cat "$out/$fig-$m.log")"
  done
done
echo "the command line's grid and profile figures take every window metric: $(echo $metrics)"

# --- 2. The window ---------------------------------------------------------------------
# Run 2 is listed but cannot be opened: its last head has the shape of a run one token
# shorter (the list counts heads; the load reads them).
sqlite3 "$db" "UPDATE attention SET n_query = 8, n_key = 8, data = zeroblob(72)
               WHERE run_id = 2 AND layer = 3 AND head = 5" || fail "sqlite3"
"$saccade" export 3 --db "$db" --layer 1 --head 4 -o "$out/cli-head.csv" > /dev/null 2>&1 \
  || fail "saccade export 3 -l 1 -H 4"

model="${SACCADE_MODEL:-$SC_TEST_SOURCE_DIR/data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
cat > "$out/fixes.script" <<EOF
expect-runs 3
expect-run 3
expect-selected 3
# A run the window refuses: the error, and the sidebar back on the run shown.
select 2
expect-error Could not load the run
expect-run 3
expect-selected 3
close-dialogs
# Up = next layer, Down = previous layer (Page Up / Page Down the same).
page heatmap
head 1 4
key Up
expect-head 2 4
key Down
expect-head 1 4
key Page_Up
expect-head 2 4
key Page_Down
expect-head 1 4
# One name for the grouping: query head 4 of 6 over 2 KV heads shares KV head 1.
expect-title (KV head 1)
# No log scale for a diverging map; the choice comes back with a sequential one.
scale log
expect-scale-control log yes
colormap rdbu
expect-scale-control linear no
colormap viridis
expect-scale-control log yes
scale linear
export-csv $out/window-head.csv
# The command line deletes run 1 while the window is open.
touch $out/ready-rm
wait-runs 2 60
expect-run 3
expect-selected 3
EOF
if [ -f "$model" ]; then
  cat >> "$out/fixes.script" <<EOF
# ... and stores a new run.
touch $out/ready-capture
wait-runs 3 120
expect-run 3
expect-selected 3
EOF
fi
echo quit >> "$out/fixes.script"

# wait_for FILE SECONDS: until the window's script has reached a `touch FILE`.
wait_for() {
  i=0
  while [ ! -e "$1" ] && [ "$i" -lt $(($2 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$1" ]
}

bus=""
command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
SACCADE_TEST_SCRIPT="$out/fixes.script" xvfb-run -a -s "-screen 0 1400x1000x24" \
  $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" --model "$out/no-such-model.gguf" > "$out/window.log" 2>&1 &
app=$!
if wait_for "$out/ready-rm" 120; then
  "$saccade" rm 1 --db "$db" > "$out/rm.log" 2>&1 || fail "saccade rm 1: $(cat "$out/rm.log")"
  if [ -f "$model" ]; then
    if wait_for "$out/ready-capture" 120; then
      "$saccade" capture --db "$db" --model "$model" "The window watches its database." \
        > "$out/capture.log" 2>&1 || fail "saccade capture: $(cat "$out/capture.log")"
    else
      fail "the window never got to the capture"
    fi
  else
    fail "the default model is not fetched ($model): run data/fetch-model.sh (tools/setup.sh does); the new-run part cannot run"
  fi
else
  fail "the window never got to the deletion"
fi
wait $app
rc=$?
sed 's/^/  | /' "$out/window.log"
[ "$rc" -eq 0 ] || fail "the window exited with $rc"
cmp -s "$out/window-head.csv" "$out/cli-head.csv" \
  || fail "the window's head CSV differs from the command line's"
head -c 40 "$out/window-head.csv" | grep -q '^query\\key,0:The,1:␣cat' \
  || fail "window-head.csv starts: $(head -c 60 "$out/window-head.csv")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
