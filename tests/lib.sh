# tests/lib.sh — the preamble every shell test sources, first thing after `set -u`:
#   . "$(dirname "$0")/../lib.sh"
# It sets src (the source tree), tmp (a scratch folder, removed on exit) and the counters
# fails and passes; it gives the one Python the tests run (`python`), the requirement checks
# (need_tools, need_model, need_python_modules) and the checks most tests share (fail,
# check, expect_fail, pycheck). A test may define its own helper under the same name after
# sourcing (test-app-band's check looks at an image); what only one test needs stays in it.
#
# Requirements FAIL, never skip: everything checked here is installed or fetched by
# tools/setup.sh, the README's first command, so on a machine set up by the README a
# missing piece is a broken setup, and a test that skips there guards nothing. Skipping
# (exit 77) is left to the gpu suite (no device), the cluster suite (not root) and the
# Gemma tests (a model setup does not fetch); .ci/run fails on a skip outside the gpu suite.
#
# POSIX sh: most tests run under /bin/sh (dash).

src=${SC_TEST_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0

# The test cannot run: say what is missing and how to get it, and fail.
missing () {
  echo "FAIL: $*"
  exit 1
}

need_tools () { # TOOL...: each is a command on PATH
  for _t in "$@"; do
    command -v "$_t" > /dev/null 2>&1 || missing "$_t is not installed (tools/setup.sh installs it)"
  done
}

# Sets model to the default model (or $SACCADE_MODEL); fails when the file is absent.
need_model () {
  model=${SACCADE_MODEL:-$src/data/models/SmolLM2-135M-Instruct.Q4_1.gguf}
  [ -f "$model" ] || missing "the default model is not fetched ($model): run data/fetch-model.sh (tools/setup.sh does)"
}

# The one Python the tests run: $SACCADE_PYTHON, set by tests/meson.build from the option
# test_python (default /usr/bin/python3, Debian's, which tools/setup.sh gives NumPy). Never
# the python3 on PATH: a pyenv, conda or venv interpreter there has no NumPy.
SACCADE_PYTHON=${SACCADE_PYTHON:-/usr/bin/python3}
python () {
  "$SACCADE_PYTHON" "$@"
}

need_python_modules () { # MODULE...: $SACCADE_PYTHON runs and imports each
  [ -x "$SACCADE_PYTHON" ] \
    || missing "no Python at $SACCADE_PYTHON: run tools/setup.sh, or meson configure -Dtest_python=PATH"
  for _m in "$@"; do
    "$SACCADE_PYTHON" -c "import $_m" > /dev/null 2>&1 \
      || missing "$SACCADE_PYTHON cannot import $_m: run tools/setup.sh (it installs python3-numpy for /usr/bin/python3), or meson configure -Dtest_python=PATH with one that can"
  done
}

fail () { # message: one failure, counted; the test goes on
  echo "FAIL: $*"
  fails=$((fails + 1))
}

check () { # name, output file, grep pattern
  if grep -q -- "$3" "$2"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1: output lacks '$3':"; sed 's/^/  | /' "$2"; fails=$((fails + 1))
  fi
}

expect_fail () { # name, file, pattern, rc: the command failed, saying the pattern
  if [ "$4" -eq 0 ]; then
    echo "FAIL: $1 exited 0"; fails=$((fails + 1))
  fi
  check "$1" "$2" "$3"
}

pycheck () { # name, json file, python statements over `d` (the parsed file) that assert
  if python -c "import json, math, sys
d = json.load(open(sys.argv[1]))
$3" "$2" > "$tmp/py.err" 2>&1; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1:"; sed 's/^/  | /' "$tmp/py.err"; fails=$((fails + 1))
  fi
}
