#!/bin/sh
# screenshots.sh [BUILD] [OUT] — every page of the window on the default model, at 1600 × 1000
# and 1280 × 800, for docs/screenshots/ (issue 30: each screen checked by eye).
#
# Stores the Mary/John sentence (and a second run for Compare) in a fresh database with the
# command line, runs the head sweep and the attributions there (so the Ablation and
# Attribution pages show stored studies, their status lines included), then lets the scripted
# user of the window tests (BUILD/tests/app/saccade-window-test) visit each page at both
# sizes and write OUT/SIZE-PAGE.png. Needs xvfb-run and the default model; takes ~3 minutes on
# two cores, most of it the head sweep. Defaults: BUILD = build, OUT = docs/screenshots.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-$here/docs/screenshots}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out" "$tmp/home"
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/home/data" XDG_CONFIG_HOME="$tmp/home/config"
export XDG_CACHE_HOME="$tmp/home/cache" GSETTINGS_BACKEND=memory
export GSETTINGS_SCHEMA_DIR="$build/data"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
saccade="$build/app/saccade"
db="$tmp/shots.sqlite"
"$saccade" capture --db "$db" -t "The cat chased the ball because it was tired." > /dev/null
"$saccade" capture --db "$db" -t "When Mary and John went to the store, John gave a drink to" \
  > /dev/null
"$saccade" ablate 2 --db "$db" --heads > /dev/null
"$saccade" attribute 2 --db "$db" > /dev/null

script="$tmp/shots.script"
{
  echo "expect-runs 2"
  echo "select 2"
  for size in 1600x1000 1280x800; do
    w=${size%x*} h=${size#*x}
    echo "window-size $w $h"
    echo "sleep 500"
    for page in heatmap model lines rollout compare induction ablation attribution learn; do
      echo "page $page"
      [ "$page" = heatmap ] && echo "head 23 3"
      [ "$page" = ablation ] && echo "ablation-study heads"
      [ "$page" = induction ] && [ "$size" = 1600x1000 ] && echo "induction 8 2"
      echo "sleep 700"
      echo "dismiss-toast"
      echo "screenshot $out/$size-$page.png"
    done
  done
  echo "quit"
} > "$script"
SACCADE_TEST_SCRIPT="$script" xvfb-run -a -s "-screen 0 1700x1100x24" \
  "$build/tests/app/saccade-window-test" --db "$db" 2>&1 | grep -E "test-driver: line|CRITICAL" || true
ls "$out"/1600x1000-*.png "$out"/1280x800-*.png
