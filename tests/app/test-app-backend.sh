#!/bin/sh
# test-app-backend.sh — the window's Backend preference in a real X server (Xvfb): a scripted
# user (tests/app/window-driver.c) reads the header bar's backend badge, chooses a
# backend in Preferences (the row must show the setting, the setting must follow the row),
# and runs a sentence over it.
#
# 1. The default, auto: the badge says CPU; on a machine where `saccade demo --backend cuda`
#    fails, the badge's tooltip says why auto chose the CPU.
# 2. cpu-ref: the model reloads over the reference backend (the tooltip says so) and the
#    run's status line names it; cpu: the badge is back to the fast CPU backend.
# 3. cuda, where the command line refuses it: the window shows the command line's message.
# 4. The runs the window stored (the first start's sample sentence, over auto, and the two
#    above) record the backends that computed them (`saccade runs`).
# 5. Screenshots of Preferences in English and Simplified Chinese (the Backend row).
# Usage: test-app-backend.sh SACCADE APP_CHECK_IMAGE OUTDIR  (fails without the
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
db="$out/backend.sqlite"

run_app() { # NAME SCRIPT
  bus=""
  command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
  SACCADE_TEST_SCRIPT="$2" xvfb-run -a -s "-screen 0 1400x1000x24" \
    $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" --model "$model" > "$out/$1.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$out/$1.log"
  [ "$rc" -eq 0 ] || fail "$1: the app exited with $rc"
}
check_png() { [ -f "$1" ] && "$check_image" "$1" 300 200 50 || fail "$1 is missing or blank"; }

# Does this machine run CUDA? The command line says, and its message is what the window must
# show when it does not.
"$saccade" demo -m "$model" --backend cuda > /dev/null 2> "$out/cuda.err"
cuda_rc=$?
cuda_msg=$(sed -n 's/^saccade: //p' "$out/cuda.err" | head -n 1)
if [ "$cuda_rc" -ne 0 ] && [ -z "$cuda_msg" ]; then
  fail "saccade demo --backend cuda failed without a message"
fi

{
  if [ "$cuda_rc" -ne 0 ]; then
    echo "expect-backend CPU"
    echo "expect-backend using the CPU"
  fi
  echo "backend-preference cpu-ref"
  echo "expect-backend CPU reference"
  echo "type Hi there."
  echo "run"
  echo "expect-status · cpu-ref"
  echo "backend-preference cpu"
  echo "expect-backend OpenBLAS"
  echo "type The cat sat."
  echo "run"
  echo "expect-no-error"
  if [ "$cuda_rc" -ne 0 ]; then
    echo "backend-preference cuda"
    echo "expect-error $cuda_msg"
    echo "close-dialogs"
  fi
  echo "backend-preference auto"
  echo "expect-backend CPU"
  echo "dismiss-toast"
  echo "preferences $out/preferences-en.png"
  echo "quit"
} > "$out/en.script"
run_app en "$out/en.script"

# The stored runs name the backends that computed them, oldest first: the first start's
# sample sentence over auto (cuda where it runs, else cpu), then the two runs above.
"$saccade" runs --db "$db" --json > "$out/runs.json" 2> "$out/runs.err" || fail "saccade runs"
got=$(python -c "import json, sys
print(' '.join(r['backend'] for r in json.load(open(sys.argv[1]))['runs']))" "$out/runs.json")
auto=cpu
[ "$cuda_rc" -eq 0 ] && auto=cuda
[ "$got" = "$auto cpu-ref cpu" ] || fail "the stored runs' backends are '$got', expected '$auto cpu-ref cpu'"

{
  echo "preferences $out/preferences-zh.png"
  echo "quit"
} > "$out/zh.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
check_png "$out/preferences-en.png"
check_png "$out/preferences-zh.png"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
