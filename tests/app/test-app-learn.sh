#!/bin/sh
# test-app-learn.sh — the Learn page in a real X server (Xvfb): a scripted user
# (tests/app/window-driver.c) opens the page and checks the seed articles' numbers as
# the page shows them, then edits it as a user would.
#
# 1. Article 000 (the default): weights 0.736, 0.164, 0.100 (rows sum to 1); √d_k off: 0.936.
#    A table that does not parse shows the parser's message; Q and K of different widths
#    name both. Article 004: 0.2483, 0.2483, 0.5035. The other sections: d_k = 512 / 8 = 64,
#    8 heads of 500 refused (the remainder), SmolLM2's KV cache, the H200 preset.
# 2. Screenshots in English, Simplified Chinese (LANGUAGE=zh_CN) and the dark style.
# No capture and no run are needed; the model is loaded for the "Loaded model" preset (fails
# without it or without xvfb-run: tests/lib.sh).
#
# Usage: test-app-learn.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run
need_model

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/learn.sqlite"

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

# --- 1. The numbers ------------------------------------------------------------------------
cat > "$out/numbers.script" <<SCRIPT
page learn
dismiss-toast
expect-learn 0.736
expect-learn 0.164
expect-learn 0.100
expect-learn 10.038
expect-learn Row 它: top key 猫, weight 0.736
learn-set scale off
expect-learn 0.936
expect-learn 0.047
learn-set scale on
learn-set q 1 1 x 0
expect-learn 'x' at row 1 column 3 is not a finite number
learn-set q 1 1 0
expect-learn Q has 3 columns
learn-set example 004
expect-learn 0.2483
expect-learn 0.5035
expect-learn 8.1695
expect-learn 1.2033
learn-set heads 8
learn-set d-model 512
expect-learn 512 / 8 = 64 per head
learn-set d-model 500
expect-learn remainder
learn-set kv-preset smollm2
learn-set len 8192
expect-learn 188743680 bytes
learn-set kv-preset loaded
expect-learn 188743680 bytes
learn-set gpu h200
expect-learn 256
quit
SCRIPT
run_app numbers "$out/numbers.script"

# --- 2. Screenshots --------------------------------------------------------------------------
for variant in en zh dark; do
  cat > "$out/$variant.script" <<SCRIPT
page learn
dismiss-toast
expect-learn 0.736
screenshot $out/learn-$variant.png
learn-set example 004
screenshot $out/learn-004-$variant.png
learn-set show sqrt-dk
screenshot $out/learn-sqrt-$variant.png
learn-set show kv-cache
screenshot $out/learn-kv-$variant.png
learn-set show flash
screenshot $out/learn-flash-$variant.png
quit
SCRIPT
done
run_app en "$out/en.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
ADW_DEBUG_COLOR_SCHEME=prefer-dark run_app dark "$out/dark.script"
for variant in en zh dark; do
  check_png "$out/learn-$variant.png"
  check_png "$out/learn-004-$variant.png"
  check_png "$out/learn-sqrt-$variant.png"
  check_png "$out/learn-kv-$variant.png"
  check_png "$out/learn-flash-$variant.png"
done

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
