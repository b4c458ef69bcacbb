#!/bin/sh
# test-app-adversarial.sh — the Attribution page's adversarial attention view end to end, in
# a real X server (Xvfb), on the default model (fails without it, xvfb-run or
# sqlite3: tests/lib.sh).
#
# 1. A scripted user (tests/app/window-driver.c) captures "The capital of France is",
#    turns to the adversarial view (nothing stored yet: it says so), picks layer 29 head 3,
#    starts a search of 100 iterations and cancels it at its first progress (no study is
#    stored), then searches with 5 iterations: drawn, exported (PNG, SVG, CSV) and
#    screenshotted.
# 2. The command line finds the window's study (`saccade adversarial --layer 29 --head 3
#    --iterations 5`: "reused").
# 3. The window again on the same database: the stored study (the curve only) is shown as
#    soon as the view gets the run, nothing computed; then searched again for its rows; in
#    English, Simplified Chinese (LANGUAGE=zh_CN) and the dark style
#    (ADW_DEBUG_COLOR_SCHEME=prefer-dark), each screenshotted twice.
#
# Usage: test-app-adversarial.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run sqlite3
need_model

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/adversarial.sqlite"

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

# --- 1. Cancel, then a whole search ----------------------------------------------------
cat > "$out/first.script" <<SCRIPT
type The capital of France is
run
page attribution
dismiss-toast
adversarial-option layer 29
adversarial-option head 3
adversarial-option iterations 100
expect-adversarial press Search
adversarial-search-then-cancel
expect-adversarial Cancelled
adversarial-option iterations 5
adversarial-search
expect-adversarial Searched in
expect-title layer 29 head 3
screenshot $out/computed.png
export-figure $out/figure.png
export-figure $out/figure.svg
export-csv $out/adversarial.csv
quit
SCRIPT
run_app first "$out/first.script"
grep -q "cancelling the adversarial search" "$out/first.log" \
  || fail "the search was not cancelled mid-way"
[ "$(studies "kind = 'adversarial' AND status = 'complete'")" = 1 ] \
  || fail "one adversarial study should be stored (the cancelled one left none)"
[ "$(studies "status = 'writing'")" = 0 ] || fail "a study was left half written"
check_png "$out/computed.png"
head -c 8 "$out/figure.png" 2>/dev/null | grep -q PNG || fail "figure.png is not a PNG"
grep -q '<svg' "$out/figure.svg" 2>/dev/null || fail "figure.svg is not an SVG"
head -1 "$out/adversarial.csv" 2>/dev/null | grep -q '^epsilon,jsd,jsd_max,tvd' \
  || fail "adversarial.csv header: $(head -1 "$out/adversarial.csv" 2>/dev/null)"
# The header and one row per default ε (6).
[ "$(wc -l < "$out/adversarial.csv")" = 7 ] || fail "adversarial.csv should have 1 + 6 lines"

# --- 2. The command line finds the window's study ----------------------------------------
run=$(sqlite3 "$db" "SELECT max(id) FROM runs")
"$saccade" adversarial "$run" --layer 29 --head 3 --iterations 5 --db "$db" -m "$model" \
  > "$out/cli.txt" 2>&1
grep -q "reused study" "$out/cli.txt" \
  || fail "saccade adversarial did not find the window's study: $(head -3 "$out/cli.txt")"

# --- 3. Reopened: shown at once, then searched again; English, Chinese and dark -----------
n_before=$(studies "1")
for variant in en zh dark; do
  cat > "$out/$variant.script" <<SCRIPT
select newest
page attribution
adversarial-option layer 29
adversarial-option head 3
adversarial-option iterations 5
dismiss-toast
expect-adversarial read from the database
screenshot $out/stored-$variant.png
adversarial-search
expect-adversarial Searched in
screenshot $out/searched-$variant.png
quit
SCRIPT
done
sed -i -e 's/expect-adversarial read from the database/expect-adversarial 从数据库读取/' \
  -e 's/expect-adversarial Searched in/expect-adversarial 搜索用时/' "$out/zh.script"
run_app en "$out/en.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
ADW_DEBUG_COLOR_SCHEME=prefer-dark run_app dark "$out/dark.script"
for variant in en zh dark; do
  check_png "$out/stored-$variant.png"
  check_png "$out/searched-$variant.png"
done
# Each search again stores a newer study (RECOMPUTE: the stored one has no rows).
[ "$(studies "1")" = $((n_before + 3)) ] || fail "expected three more studies, one per search"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
