#!/bin/sh
# bench-window-long.sh DB [REPS] — what a user waits for when opening a long run in the
# window (docs/benchmarks.md, "Long runs in the window"). DB holds the long run as run 1 and
# a short run after it (the window starts on the newest). Prints the scripted user's
# measurements (tests/app/window-timing.c), REPS times (default 3). Needs xvfb-run.
# Example:
#   build/app/saccade capture --db long.sqlite -p text8192.txt
#   build/app/saccade capture --db long.sqlite "The cat chased the ball because it was tired."
#   tools/bench-window-long.sh long.sqlite
set -eu
db=$1
reps=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none LANGUAGE=en LC_ALL=C.UTF-8
script=$(mktemp)
trap 'rm -f "$script"' EXIT
cat > "$script" <<EOS
expect-runs 2
page model
sleep 1000
memory start
timed load-and-model select 1
timed heatmap-overview-then-exact page heatmap
timed layer head 6 3
timed layer head 7 3
timed layer head 8 3
timed head head 8 4
timed model-again page model
memory end
quit
EOS
for i in $(seq "$reps"); do
  SACCADE_TEST_SCRIPT="$script" xvfb-run -a -s "-screen 0 1400x1000x24" \
    "$here/build/tests/app/saccade-window-test" --db "$db" 2>&1 | grep -E "test-driver: (time |memory [a-z]*:|line)"
done
