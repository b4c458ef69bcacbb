#!/bin/sh
# check-layering.sh — the folder rules of DESIGN.md ("Layers and folders"), checked on the
# sources themselves. The build runs it on every build (the 'layering' target in meson.build)
# and the test suite once more (test 'layering'), so a forbidden include fails the build
# even when meson is not reconfigured.
#
# Usage: check-layering.sh SOURCE_ROOT [STAMP]   (writes STAMP when every rule holds)
set -u
root=$1
stamp=
if [ $# -ge 2 ]; then
  case $2 in /*) stamp=$2 ;; *) stamp=$(pwd)/$2 ;; esac
fi
cd "$root" || exit 2
fails=0

# rule NAME FOLDER PATTERN: no file under FOLDER may match PATTERN (an extended regexp).
rule() {
  [ -d "$2" ] || return 0
  hits=$(grep -rlE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' "$3" "$2" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering: $1:"
    for f in $hits; do
      grep -nE "$3" "$f" | sed "s|^|  $f:|"
    done
    fails=$((fails + 1))
  fi
}

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
rule "engine/ is plain C: no GLib, GTK or libadwaita" engine "$inc(glib|gtk|gio|gobject|adwaita|json-glib)[-/.]"
rule "engine/ depends on nothing of ours" engine "$inc(app|ui|cuda)/"
rule "ui/ takes plain data: it never sees the engine or the app" ui "$inc(engine|app|cuda)/"
rule "app/core/ is shared by both faces: it includes neither" app/core "$inc(app/)?(cli|window)/"
rule "app/window/ never includes the command line (share it through app/core/)" app/window "$inc(app/)?cli/"
rule "app/cli/ never includes the window" app/cli "$inc(app/)?window/"
rule "engine/analysis/ computes on matrices and never runs a model (that is study/)" engine/analysis \
  "$inc(forward|study)/|sc_forward[[:space:]]*\(|sc_session_new[[:space:]]*\("
rule "only cuda/ sees CUDA types" engine "$inc(cuda|cublas)[_a-z]*\.h"
rule "only cuda/ sees CUDA types" app "$inc(cuda|cublas)[_a-z]*\.h"
rule "only cuda/ sees CUDA types" ui "$inc(cuda|cublas)[_a-z]*\.h"
# The shipped binary carries no test hooks: tests link libsaccade-app and drive it through
# its actions and public API (tests/app/window-driver.c), never a variable the product reads.
rule "app/ reads no test variable (tests pass parameters through the library)" app \
  "getenv[[:space:]]*\([[:space:]]*\"SACCADE_TEST"
rule "app/ never includes tests/" app "$inc(tests)/"

[ "$fails" -eq 0 ] || exit 1
[ -n "$stamp" ] && : > "$stamp"
exit 0
