#!/bin/sh
# test-app-neuron.sh — the Learn page's "Inside the model" section in a real X server
# (Xvfb): a scripted user (tests/app/window-driver.c) captures a sentence, opens the
# Learn page, picks layer 3, head 4, query 5 and checks the section's numbers against
# `saccade neuron` on the same run (the same weights, to the table's 5 decimals), then the
# head-wide line; screenshots in English and Simplified Chinese.
# Usage: test-app-neuron.sh SACCADE APP_CHECK_IMAGE OUTDIR  (fails without the
# default model or xvfb-run: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

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
db="$out/neuron.sqlite"

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

# The run, captured by the command line; the weights the section must show.
"$saccade" capture --db "$db" --model "$model" "The cat chased the ball because it was tired." \
  > "$out/capture.log" 2>&1 || fail "capture"
"$saccade" neuron --db "$db" --model "$model" 1 --layer 3 --head 4 --query 5 --json \
  > "$out/neuron.json" || fail "saccade neuron"
weights=$(python -c "import json, sys
d = json.load(open(sys.argv[1]))
print(' '.join('%.5f' % k['weight'] for k in d['keys']))" "$out/neuron.json")
[ -n "$weights" ] || fail "no weights from saccade neuron"

{
  echo "select newest"
  echo "page learn"
  echo "dismiss-toast"
  echo "learn-set neuron 3 4 5"
  for w in $weights; do echo "expect-learn $w"; done
  echo "expect-learn Every query of head L3.H4: largest |weight − stored|"
  echo "learn-set show neuron"
  echo "screenshot $out/neuron-en.png"
  echo "quit"
} > "$out/en.script"
run_app en "$out/en.script"
{
  echo "select newest"
  echo "page learn"
  echo "dismiss-toast"
  echo "learn-set neuron 3 4 5"
  echo "learn-set show neuron"
  echo "screenshot $out/neuron-zh.png"
  echo "quit"
} > "$out/zh.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
check_png "$out/neuron-en.png"
check_png "$out/neuron-zh.png"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
