#!/bin/sh
# test-app-ablation.sh — the Ablation page end to end, in a real X server (Xvfb), on the
# default model (skips with 77 when it is not fetched, or without xvfb-run or sqlite3).
#
# 1. A scripted user (app/window/saccade-test-driver.c) captures "The cat chased the ball
#    because it was tired.", opens the Ablation page, starts token leave-one-out and the
#    head sweep and cancels each at its first progress: the database must then hold no
#    study at all, not even a 'writing' row. Then leave-one-out runs whole, is drawn,
#    exported (PNG, SVG, PDF, CSV with every number) and screenshotted, shown as TV, and
#    run again for a typed target (another study).
# 2. The window again on the same database: the stored study is shown at once when the run
#    is selected (its status names the stored study; nothing is computed: the database
#    still holds one study).
# 3. The same in Simplified Chinese (LANGUAGE=zh_CN).
#
# Usage: test-app-ablation.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
saccade=$1
check_image=$2
out=$3
model=${SACCADE_MODEL:-${SC_TEST_SOURCE_DIR:-.}/data/models/SmolLM2-135M-Instruct.Q4_1.gguf}

for tool in xvfb-run sqlite3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool is not installed; skipping"; exit 77; }
done
[ -f "$model" ] || { echo "the default model is not fetched ($model); skipping"; exit 77; }

rm -rf "$out"
mkdir -p "$out/home"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/ablation.sqlite"

run_app() { # NAME SCRIPT
  bus=""
  command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
  SACCADE_TEST_SCRIPT="$2" xvfb-run -a -s "-screen 0 1400x1000x24" \
    $bus "$saccade" --db "$db" --model "$model" > "$out/$1.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$out/$1.log"
  [ "$rc" -eq 0 ] || fail "$1: the app exited with $rc"
}
check_png() { [ -f "$1" ] && "$check_image" "$1" 800 600 50 || fail "$1 is missing or blank"; }
studies() { sqlite3 "$db" "SELECT count(*) FROM studies WHERE $1"; }

# --- 1. Cancel twice, then a whole study ----------------------------------------------
cat > "$out/first.script" <<SCRIPT
type The cat chased the ball because it was tired.
run
page ablation
dismiss-toast
expect-ablation Not studied yet
ablation-study tokens
ablation-run-then-cancel
expect-ablation Cancelled
ablation-study heads
ablation-run-then-cancel
expect-ablation Cancelled
screenshot $out/cancelled.png
ablation-study tokens
ablation-run
expect-ablation computed in
screenshot $out/tokens.png
export-figure $out/tokens.png.png
export-figure $out/tokens.svg
export-figure $out/tokens.pdf
export-csv $out/tokens.csv
page-action page.metric tv
screenshot $out/tokens-tv.png
# Another target is another study: " tired" (with its space) is one token.
ablation-target  tired
ablation-run
expect-ablation Target “␣tired”
quit
SCRIPT
run_app first "$out/first.script"
grep -q "cancelling the study" "$out/first.log" || fail "no study was cancelled mid-way"
[ "$(grep -c "cancelling the study" "$out/first.log")" = 2 ] || fail "both studies should be cancelled"
[ "$(studies "kind = 'ablate-heads'")" = 0 ] || fail "a cancelled head sweep left a study"
[ "$(studies "status = 'writing'")" = 0 ] || fail "a cancelled study left a 'writing' row"
[ "$(studies "kind = 'ablate-tokens' AND status = 'complete'")" = 2 ] \
  || fail "leave-one-out should be stored twice (two targets)"
check_png "$out/cancelled.png"
check_png "$out/tokens.png"
check_png "$out/tokens-tv.png"
head -c 8 "$out/tokens.png.png" | grep -q PNG || fail "tokens.png.png is not a PNG"
grep -q '<svg' "$out/tokens.svg" 2>/dev/null || fail "tokens.svg is not an SVG"
head -c 5 "$out/tokens.pdf" 2>/dev/null | grep -q '%PDF' || fail "tokens.pdf is not a PDF"
head -1 "$out/tokens.csv" 2>/dev/null | grep -q '^pos,token_id,label,mask_delta_logp,' \
  || fail "tokens.csv header: $(head -1 "$out/tokens.csv" 2>/dev/null)"
# The header and one row per token of the sentence.
[ "$(wc -l < "$out/tokens.csv")" = 11 ] || fail "tokens.csv should have 1 + 10 lines (SmolLM2 reads the sentence as 10 tokens)"

# --- 2. Reopened: the stored study shows at once ----------------------------------------
cat > "$out/again.script" <<SCRIPT
select newest
page ablation
dismiss-toast
expect-ablation study 1 of
screenshot $out/tokens-stored.png
quit
SCRIPT
run_app again "$out/again.script"
check_png "$out/tokens-stored.png"
[ "$(studies "1")" = 2 ] || fail "showing a stored study computed another one"

# --- 3. Simplified Chinese --------------------------------------------------------------
sed "s|$out/tokens-stored.png|$out/tokens-zh.png|; s|expect-ablation study 1 of|expect-ablation 研究 1|" \
  "$out/again.script" > "$out/zh.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
check_png "$out/tokens-zh.png"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
