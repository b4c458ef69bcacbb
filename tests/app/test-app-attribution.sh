#!/bin/sh
# test-app-attribution.sh — the Attribution page end to end, in a real X server (Xvfb), on
# the default model (fails without it, xvfb-run or sqlite3: tests/lib.sh).
#
# 1. A scripted user (tests/app/window-driver.c) captures "The capital of France is",
#    opens the Attribution page (nothing stored yet: it says so), starts a study with 4
#    integration points and cancels it at its first progress (no attribution study is
#    stored), then runs it whole: drawn, exported (PNG, SVG, CSV) and screenshotted.
# 2. The command line finds the window's study (`saccade attribute --steps 4`: "reused").
# 3. The window again on the same database: the stored study is shown as soon as the page
#    gets the run, nothing computed (the studies table is unchanged); in Simplified Chinese
#    (LANGUAGE=zh_CN) and in the dark style (ADW_DEBUG_COLOR_SCHEME=prefer-dark), each
#    screenshotted.
# 4. Gemma 3 loaded (its backward pass since issue 28): Run is on and the study is computed
#    and stored.
#
# Usage: test-app-attribution.sh SACCADE APP_CHECK_IMAGE OUTDIR
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
db="$out/attribution.sqlite"

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

# --- 1. Cancel, then a whole study -----------------------------------------------------
cat > "$out/first.script" <<SCRIPT
type The capital of France is
run
page attribution
dismiss-toast
expect-attribution press Run
attribution-option steps 4
attribution-run-then-cancel
expect-attribution Cancelled
attribution-run
expect-attribution Computed in
expect-title target ␣Paris
screenshot $out/computed.png
export-figure $out/figure.png
export-figure $out/figure.svg
export-csv $out/attribution.csv
quit
SCRIPT
run_app first "$out/first.script"
grep -q "cancelling the attribution" "$out/first.log" || fail "the study was not cancelled mid-way"
[ "$(studies "kind = 'attribution' AND status = 'complete'")" = 1 ] \
  || fail "one attribution study should be stored (the cancelled one left none)"
[ "$(studies "status = 'writing'")" = 0 ] || fail "a study was left half written"
check_png "$out/computed.png"
head -c 8 "$out/figure.png" 2>/dev/null | grep -q PNG || fail "figure.png is not a PNG"
grep -q '<svg' "$out/figure.svg" 2>/dev/null || fail "figure.svg is not an SVG"
head -1 "$out/attribution.csv" 2>/dev/null \
  | grep -q '^pos,token_id,label,attention,loo_tv,saliency,gradxinput,ig,grad_rollout' \
  || fail "attribution.csv header: $(head -1 "$out/attribution.csv" 2>/dev/null)"
# The header and one row per token ("The capital of France is" is 5 tokens to SmolLM2).
[ "$(wc -l < "$out/attribution.csv")" = 6 ] || fail "attribution.csv should have 1 + 5 lines"

# --- 2. The command line finds the window's study ----------------------------------------
run=$(sqlite3 "$db" "SELECT max(id) FROM runs")
"$saccade" attribute "$run" --steps 4 --db "$db" -m "$model" > "$out/cli.txt" 2>&1
grep -q "reused study" "$out/cli.txt" || fail "saccade attribute did not find the window's study: $(head -3 "$out/cli.txt")"

# --- 3. Reopened: shown at once, in English, Chinese and dark -----------------------------
n_before=$(studies "1")
for variant in en zh dark; do
  cat > "$out/$variant.script" <<SCRIPT
select newest
page attribution
attribution-option steps 4
dismiss-toast
expect-attribution read from the database
screenshot $out/stored-$variant.png
quit
SCRIPT
done
sed -i 's/expect-attribution read from the database/expect-attribution 从数据库读取/' "$out/zh.script"
run_app en "$out/en.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
ADW_DEBUG_COLOR_SCHEME=prefer-dark run_app dark "$out/dark.script"
for variant in en zh dark; do check_png "$out/stored-$variant.png"; done
[ "$(studies "1")" = "$n_before" ] || fail "showing a stored study computed another one"

# --- 4. Gemma 3: the attribution study runs (its backward pass) -----------------------
gemma=${SACCADE_GEMMA_MODEL:-$src/data/models/gemma-3-270m-q4_k_m.gguf}
[ -f "$gemma" ] || fail "Gemma 3 is not fetched (data/fetch-model.sh gemma3)"
n_attr=$(studies "kind = 'attribution' AND status = 'complete'")
cat > "$out/gemma.script" <<SCRIPT
type The capital of France is
run
page attribution
dismiss-toast
expect-attribution-runnable yes
attribution-option steps 4
attribution-run
expect-attribution Computed in
screenshot $out/gemma.png
quit
SCRIPT
smollm=$model
model=$gemma
run_app gemma "$out/gemma.script"
model=$smollm
check_png "$out/gemma.png"
[ "$(studies "kind = 'attribution' AND status = 'complete'")" = $((n_attr + 1)) ] \
  || fail "Gemma's attribution study was not stored"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
