#!/bin/sh
# test-cli-backend.sh — choosing the backend on the command line (--backend, --reference),
# read the way a user reads it:
#   - every verb that runs the model lists --backend in its --help;
#   - cpu and cpu-ref (and --reference, its alias) compute and are stored by name;
#   - cuda either works (a machine with a GPU) or fails with a clear message: "built without
#     CUDA" in a build without nvcc, the CUDA backend's own message (no device, no driver)
#     otherwise; it stores nothing and creates no database;
#   - auto settles on what works: where cuda does not, one notice line on stderr says why,
#     --json's stdout stays one JSON document, and the run stores "cpu"; without --backend a
#     build without CUDA says nothing;
#   - an unknown name fails before the model loads, naming the choices.
# Usage: test-cli-backend.sh PATH/TO/saccade   (fails without the default model: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
export XDG_DATA_HOME="$tmp/xdg"

ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # name, file, grep pattern (basic regexp)
  if grep -q -- "$3" "$2"; then ok; else bad "$1: output lacks '$3':"; sed 's/^/  | /' "$2"; fi
}
lines() { # name, file, count
  n=$(wc -l < "$2")
  if [ "$n" -eq "$3" ]; then ok; else bad "$1: $n lines, expected $3:"; sed 's/^/  | /' "$2"; fi
}
rc_nonzero() { # name, rc
  if [ "$2" -ne 0 ]; then ok; else bad "$1 exited 0"; fi
}
rc_zero() { # name, rc, stderr file
  if [ "$2" -eq 0 ]; then ok; else bad "$1 exited $2:"; sed 's/^/  | /' "$3"; fi
}
backends() { # database: the stored runs' backends, oldest first
  "$saccade" runs --db "$1" --json | python -c "import json, sys
print(' '.join(r['backend'] for r in json.load(sys.stdin)['runs']))"
}

# --- Every verb that runs the model offers --backend -------------------------------------
for verb in generate capture demo induction ablate dla means faithfulness neuron norms mixing attribute \
            adversarial bench bench-store bench-analysis bench-gradients bench-patch bench-mixing; do
  "$saccade" "$verb" --help > "$tmp/help" 2>&1
  check "$verb --help" "$tmp/help" "--backend=NAME"
done

# --- The benchmarks set the cpu backend's budget of weights kept decoded ------------------
for verb in bench bench-analysis bench-gradients bench-patch bench-mixing; do
  "$saccade" "$verb" --help > "$tmp/help" 2>&1
  check "$verb --help" "$tmp/help" "--weight-cache=MB"
done
"$saccade" bench --weight-cache -1 -n 8 -r 1 > "$tmp/out" 2> "$tmp/err"
rc_nonzero "bench --weight-cache -1" $?
check "bench --weight-cache -1" "$tmp/err" "^saccade: bad --weight-cache -1 (MiB, 0 or more)$"

# --- cpu, cpu-ref, --reference -----------------------------------------------------------
db="$tmp/cpu.sqlite"
"$saccade" capture --db "$db" --backend cpu -t "Hi there." > "$tmp/out" 2> "$tmp/err"
rc_zero "capture --backend cpu" $? "$tmp/err"
lines "capture --backend cpu: no notice" "$tmp/err" 0
"$saccade" capture --db "$db" --backend cpu-ref -t "Hi" > "$tmp/out" 2> "$tmp/err"
rc_zero "capture --backend cpu-ref" $? "$tmp/err"
"$saccade" capture --db "$db" --reference -t "Hi" > "$tmp/out" 2> "$tmp/err"
rc_zero "capture --reference" $? "$tmp/err"
got=$(backends "$db")
[ "$got" = "cpu cpu-ref cpu-ref" ] && ok || bad "stored backends '$got', expected 'cpu cpu-ref cpu-ref'"
"$saccade" runs --db "$db" > "$tmp/runs" 2>&1
check "runs: backend column" "$tmp/runs" "  backend  kind  *text$"
check "runs: cpu-ref row" "$tmp/runs" "  cpu-ref  sentence  *Hi$"
"$saccade" show 2 --db "$db" > "$tmp/show" 2>&1
check "show: backend" "$tmp/show" ", cpu-ref backend$"
"$saccade" demo --backend cpu --json > "$tmp/demo.json" 2> "$tmp/err"
check "demo --backend cpu --json" "$tmp/demo.json" '"backend" : "cpu",'
"$saccade" demo --reference --backend cpu > "$tmp/out" 2> "$tmp/err"
rc_nonzero "--reference --backend cpu" $?
check "--reference --backend cpu" "$tmp/err" "^saccade: --reference means --backend cpu-ref; it cannot go with --backend cpu$"

# --- cuda: works, or says clearly why not ------------------------------------------------
"$saccade" capture --db "$tmp/cuda.sqlite" --backend cuda --json -t "Hi" > "$tmp/cuda.out" 2> "$tmp/cuda.err"
cuda_rc=$?
if [ "$cuda_rc" -eq 0 ]; then
  echo "# this machine runs CUDA: --backend cuda stored a run"
  got=$(backends "$tmp/cuda.sqlite")
  [ "$got" = "cuda" ] && ok || bad "--backend cuda stored '$got'"
  auto=cuda
else
  auto=cpu
  lines "--backend cuda: one line" "$tmp/cuda.err" 1
  [ -s "$tmp/cuda.out" ] && bad "--backend cuda --json printed to stdout" || ok
  [ -e "$tmp/cuda.sqlite" ] && bad "--backend cuda created the database" || ok
  # A build without nvcc says exactly that; a CUDA build says what the device or driver lacks.
  if grep -q "^saccade: this saccade was built without CUDA (nvcc was not found at build time)$" "$tmp/cuda.err"; then
    built=no
    ok
  elif grep -qiE "^saccade: .*(CUDA|GPU|device|driver)" "$tmp/cuda.err"; then
    built=yes
    ok
  else
    built=unknown
    bad "--backend cuda: no clear message:"; sed 's/^/  | /' "$tmp/cuda.err"
  fi
  "$saccade" generate -n 1 --backend cuda "Hi" > "$tmp/out" 2> "$tmp/gen.err"
  rc_nonzero "generate --backend cuda" $?
  cmp -s "$tmp/gen.err" "$tmp/cuda.err" && ok || bad "generate and capture say different things about cuda"
fi

# --- auto ---------------------------------------------------------------------------------
db="$tmp/auto.sqlite"
"$saccade" capture --db "$db" --backend auto --json -t "The cat sat." > "$tmp/auto.json" 2> "$tmp/auto.err"
rc_zero "capture --backend auto" $? "$tmp/auto.err"
python -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['backend'] == sys.argv[2], d['backend']" \
  "$tmp/auto.json" "$auto" && ok || bad "--backend auto --json: stdout is not one JSON document with backend '$auto'"
got=$(backends "$db")
[ "$got" = "$auto" ] && ok || bad "--backend auto stored '$got', expected '$auto'"
if [ "$auto" = cpu ]; then
  lines "--backend auto: one notice line" "$tmp/auto.err" 1
  check "--backend auto: the notice" "$tmp/auto.err" "^saccade: backend auto: .*; using the CPU$"
  # Why: the same reason --backend cuda gave.
  reason=$(sed -n 's/^saccade: //p' "$tmp/cuda.err")
  check "--backend auto: the reason" "$tmp/auto.err" "$reason"
  # No --backend is auto too: silent where there is no GPU at all (a build without CUDA, or
  # no driver or device: the ordinary CPU machine); a GPU that is there but unusable is
  # worth the notice.
  "$saccade" capture --db "$db" -t "Hi" > "$tmp/out" 2> "$tmp/default.err"
  rc_zero "capture (default backend)" $? "$tmp/default.err"
  if [ "$built" = no ] || grep -q -e "no CUDA driver" -e "no CUDA device" "$tmp/auto.err"; then
    lines "default backend, no GPU here: silent" "$tmp/default.err" 0
  else
    lines "default backend, a GPU auto could not use: the notice" "$tmp/default.err" 1
  fi
  got=$(backends "$db")
  [ "$got" = "cpu cpu" ] && ok || bad "default backend stored '$got', expected 'cpu cpu'"
fi

# --- an unknown name ----------------------------------------------------------------------
# It fails before the model loads (the model here does not exist).
"$saccade" demo -m "$tmp/none.gguf" --backend bogus > "$tmp/out" 2> "$tmp/err"
rc_nonzero "--backend bogus" $?
check "--backend bogus" "$tmp/err" "^saccade: unknown backend 'bogus' (choose cpu, cpu-ref, cuda or auto)$"
"$saccade" capture --db "$tmp/bogus.sqlite" --backend CPU -t "Hi" > "$tmp/out" 2> "$tmp/err"
rc_nonzero "--backend CPU (names are lower case)" $?
check "--backend CPU" "$tmp/err" "unknown backend 'CPU'"
[ -e "$tmp/bogus.sqlite" ] && bad "--backend CPU created the database" || ok

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
