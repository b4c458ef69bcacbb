#!/bin/sh
# test-cli-hostile.sh — every reading verb of the command line, and every figure, on every
# hostile store (tests/store/hostile-stores.c: a store Saccade wrote, then edited with SQL
# only). Each command must either succeed or fail with one clear "saccade: ..." message:
# never a signal (a crash, or a sanitizer's abort under the ASan/UBSan build in CI), never
# a hang, never a changed file.
#
# Also `saccade merge` and `faithfulness --report` on each (docs/cluster.md), and the Python
# reader (python/saccade_store.py, with Debian's /usr/bin/python3, which tools/setup.sh gives
# NumPy): every path it has, over every run; a StoreError (or KeyError, HeadNotStored) with
# a message, or the values, never another exception, never a hang. The every-* stores hold
# a row in every table (bands, layer windows, overviews, predictions, head scores, studies,
# a shard manifest: hostile_base_every).
#
# Usage: test-cli-hostile.sh SACCADE HOSTILE_STORES
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
hostile=$2
python=/usr/bin/python3
pydir=$(cd "$(dirname "$0")/../../python" && pwd)
if ! "$python" -c 'import numpy' 2> /dev/null; then
  echo "FAIL: $python with NumPy is needed for the Python reader (tools/setup.sh installs it)"
  exit 1
fi
# pyread DB: every reading path of saccade_store over DB; prints one line per refusal.
cat > "$tmp/pyread.py" << 'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import saccade_store as ss

refused = (ss.StoreError, ss.HeadNotStored, KeyError)


def attempt(what, f):
    try:
        return f()
    except refused as e:
        print(f"refused: {what}: {e}")
        return None


st = attempt("open", lambda: ss.Store(sys.argv[2]))
if st is None:
    sys.exit(0)
runs = attempt("runs", st.runs) or []
for rid in (1, 2, 3):
    run = attempt(f"run {rid}", lambda: st.run(rid))
    if run is None:
        continue
    attempt(f"tokens {rid}", lambda: st.tokens(rid))
    attempt(f"predictions {rid}", lambda: st.predictions(rid))
    pairs = attempt(f"stored heads {rid}", lambda: st.stored_heads(rid)) or []
    for layer in range(min(run.n_layers, 8)):
        for head in range(min(run.n_heads, 8)):
            a = attempt(f"head {rid}.{layer}.{head}", lambda: st.head(rid, layer, head))
            if a is not None and not ((a >= 0) & (a <= 1)).all():
                sys.exit(f"run {rid} head {layer}.{head}: a value outside [0, 1]")
            attempt(f"window {rid}.{layer}.{head}", lambda: st.head_window(rid, layer, head))
            attempt(f"overview {rid}.{layer}.{head}", lambda: st.overview(rid, layer, head))
st.close()
PYEOF
# The huge text cell: big enough to matter (4 KiB listing prefix vs 8 MB), small enough
# for ~70 stores in CI.
export SC_HOSTILE_HUGE_BYTES=8000000
"$hostile" "$tmp/stores" > "$tmp/kinds" 2>&1 || { echo "FAIL: hostile-stores:"; cat "$tmp/kinds"; exit 1; }

# run NAME DB ARGS...: runs `saccade ARGS --db DB` (DB "-": `saccade ARGS`, for the verbs
# that name their databases as arguments) with a time limit and judges the result.
run() {
  name=$1; run_db=$2; shift 2 # (sh has no locals: the loop's $db must not change)
  if [ "$run_db" = - ]; then
    timeout 60 "$saccade" "$@" > "$scratch/out" 2> "$scratch/err"
  else
    timeout 60 "$saccade" "$@" --db "$run_db" > "$scratch/out" 2> "$scratch/err"
  fi
  rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "FAIL: $name: saccade $* did not finish in 60 s"; fails=$((fails + 1)); return
  fi
  if [ "$rc" -ge 128 ]; then
    echo "FAIL: $name: saccade $* died with signal $((rc - 128)):"; sed 's/^/  | /' "$scratch/err" | head -20
    fails=$((fails + 1)); return
  fi
  if [ "$rc" -ne 0 ]; then
    if ! head -1 "$scratch/err" | grep -q '^saccade: ..........'; then
      echo "FAIL: $name: saccade $* exited $rc without a message:"; sed 's/^/  | /' "$scratch/err" | head -5
      fails=$((fails + 1)); return
    fi
    if [ "$(wc -l < "$scratch/err")" -gt 3 ]; then
      echo "FAIL: $name: saccade $* said more than one message:"; sed 's/^/  | /' "$scratch/err" | head -8
      fails=$((fails + 1)); return
    fi
  fi
  passes=$((passes + 1))
}

# python NAME DB: the Python reader over DB, judged like run().
python() {
  timeout 60 "$python" "$tmp/pyread.py" "$pydir" "$2" > "$scratch/pyout" 2> "$scratch/pyerr"
  rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "FAIL: $1: the Python reader did not finish in 60 s"; fails=$((fails + 1)); return
  fi
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $1: the Python reader failed ($rc):"; sed 's/^/  | /' "$scratch/pyerr" | tail -8
    fails=$((fails + 1)); return
  fi
  passes=$((passes + 1))
}

# check_store DB: every reading verb on DB, in $scratch.
check_store() {
  db=$1
  kind=$(basename "$db" .sqlite)
  before=$(sha256sum "$db" | cut -d' ' -f1)
  run "$kind/runs" "$db" runs
  run "$kind/runs-json" "$db" runs --json
  python "$kind/python" "$db"
  for id in 1 2 3; do
    run "$kind/show-$id" "$db" show "$id"
    case $kind in # only these stores hold predictions
      *every*) run "$kind/show-$id-predictions" "$db" show "$id" --predictions ;;
    esac
    # heads stores the scores it had to compute (a cache, docs/store.md), and opening the
    # store writable for that turns a rollback-journal store into WAL even when nothing
    # is computed: it runs on a copy, so that the check below is about reading
    cp "$db" "$scratch/heads.sqlite"; rm -f "$scratch/heads.sqlite-wal" "$scratch/heads.sqlite-shm"
    run "$kind/heads-$id" "$scratch/heads.sqlite" heads "$id"
    run "$kind/show-$id-head" "$db" show "$id" --layer 0 --head 2
    run "$kind/show-$id-json" "$db" show "$id" --layer 3 --head 1 --json
    for f in csv npy json; do
      run "$kind/export-$id-$f" "$db" export "$id" --layer 1 --head 1 -o "$scratch/head.$f"
    done
    run "$kind/heatmap-$id" "$db" export "$id" --figure heatmap --layer 2 --head 0 -o "$scratch/h.png"
    run "$kind/grid-$id" "$db" export "$id" --figure grid --metric sink -o "$scratch/g.svg"
    # PNG here: cairo 1.16's PDF surface leaks 768 bytes of its own on finishing, which
    # LeakSanitizer would report for every store; the formats themselves are tested by
    # test-cli and test-figures, this test is about what the data can do.
    run "$kind/lines-$id" "$db" export "$id" --figure lines --layer 3 -o "$scratch/l.png"
  done
  # the merge (docs/cluster.md) takes the store as a shard: merged whole or refused
  rm -f "$scratch/merged.sqlite"
  run "$kind/merge" - merge "$scratch/merged.sqlite" "$db"
  run "$kind/report" - faithfulness --report "$db"
  after=$(sha256sum "$db" | cut -d' ' -f1)
  if [ "$before" != "$after" ]; then
    echo "FAIL: $kind: reading changed the file"; fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}

# The stores in two workers, each in its own scratch folder (the 131 stores take most of
# this test's time, twice as long again under the sanitizers); each counts its own passes
# and failures, added up here.
scratch=$tmp
set -- "$tmp"/stores/*.sqlite
for w in 0 1; do
  (
    scratch="$tmp/worker-$w"
    mkdir -p "$scratch"
    passes=0 fails=0 i=0
    for db in "$@"; do
      [ $((i % 2)) -eq "$w" ] && check_store "$db"
      i=$((i + 1))
    done
    echo "$passes $fails" > "$scratch/counts"
  ) &
done
wait
for w in 0 1; do
  if read -r p f < "$tmp/worker-$w/counts"; then
    passes=$((passes + p)); fails=$((fails + f))
  else
    echo "FAIL: worker $w of the store loop did not finish"; fails=$((fails + 1))
  fi
done

# heads on a store whose scores are all stored reads it and leaves it byte for byte as it
# was (it used to open every store writable: a rollback-journal store came back in WAL mode
# with a new header even though nothing was computed)
cp "$tmp/stores/journal-delete.sqlite" "$tmp/heads-ro.sqlite"
before=$(sha256sum "$tmp/heads-ro.sqlite" | cut -d' ' -f1)
run journal-delete/heads-read-only "$tmp/heads-ro.sqlite" heads 1
if [ "$before" != "$(sha256sum "$tmp/heads-ro.sqlite" | cut -d' ' -f1)" ] \
   || [ -e "$tmp/heads-ro.sqlite-wal" ]; then
  echo "FAIL: heads changed a store whose scores were all stored"; fails=$((fails + 1))
else
  passes=$((passes + 1))
fi

# The stores that must read fine do, and what is refused is refused by name.
run base/show-ok "$tmp/stores/base.sqlite" show 2
grep -q "^    5 " "$tmp/out" && passes=$((passes + 1)) || { echo "FAIL: base: show 2 lacks token 5"; cat "$tmp/out"; fails=$((fails + 1)); }
"$saccade" show 1 --db "$tmp/stores/kv-heads-more.sqlite" > "$tmp/out" 2> "$tmp/err"
grep -q "n_kv_heads = 4 does not divide n_heads = 3" "$tmp/err" && passes=$((passes + 1)) \
  || { echo "FAIL: kv-heads-more: show 1 said:"; cat "$tmp/err"; fails=$((fails + 1)); }
"$saccade" runs --db "$tmp/stores/trigger.sqlite" > "$tmp/out" 2> "$tmp/err"
grep -q "trigger 'wipe'" "$tmp/err" && passes=$((passes + 1)) \
  || { echo "FAIL: trigger: runs said:"; cat "$tmp/err"; fails=$((fails + 1)); }

# The every-table stores: what must be refused is refused by name, by the command line and
# by the Python reader alike (a prediction piece is at most 256 bytes, issue 25, item 5;
# an overview cell left of a band is not "above the diagonal", item 10).
# refused KIND 'NEEDLE' ARGS...: `saccade ARGS --db KIND.sqlite` fails saying NEEDLE.
refused() {
  kind=$1; needle=$2; shift 2
  "$saccade" "$@" --db "$tmp/stores/$kind.sqlite" > "$tmp/out" 2> "$tmp/err"
  if [ $? -ne 0 ] && grep -qF -- "$needle" "$tmp/err"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $kind: saccade $* did not refuse with '$needle':"; head -3 "$tmp/err"
    fails=$((fails + 1))
  fi
}
# pyrefused KIND 'NEEDLE': the Python reader refuses KIND saying NEEDLE.
pyrefused() {
  "$python" "$tmp/pyread.py" "$pydir" "$tmp/stores/$1.sqlite" > "$tmp/pyout" 2>&1
  if grep -qF -- "$2" "$tmp/pyout"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1: the Python reader did not refuse with '$2':"; head -5 "$tmp/pyout"
    fails=$((fails + 1))
  fi
}
refused every-prediction-piece-257 "its piece is a 257-byte blob, more than the 256 bytes" \
  show 1 --predictions
pyrefused every-prediction-piece-257 "its piece is a 257-byte blob, more than the 256 bytes"
refused every-prediction-piece-huge "its piece is a 3000000-byte blob" show 1 --predictions
pyrefused every-prediction-piece-huge "its piece is a 3000000-byte blob"
pyrefused every-prediction-piece-text "(2, 1) token 15 or its piece"
pyrefused every-overview-left-of-band "a cell left of the band of window 8 is not 0"
pyrefused every-overview-above-diagonal "a cell above the diagonal of a causal head is not 0"
refused every-band-window-other "window_size is 4, but layer 0's window is 8" \
  export 1 --layer 0 --head 1 -o "$tmp/b.csv"
pyrefused every-band-window-other "window_size is 4, but the layer's window is 8"
refused every-windows-huge "a window of 9223372036854775807 tokens" runs
pyrefused every-windows-huge "is not an integer in 1..2147483647"
# ... and what must read does, the merge included.
run base-every/show "$tmp/stores/base-every.sqlite" show 1 --predictions
grep -q "Local layers: 0, 2 (window 8)" "$tmp/out" && passes=$((passes + 1)) \
  || { echo "FAIL: base-every: show 1 lacks its layer windows"; head -5 "$tmp/out"; fails=$((fails + 1)); }
pyrefused base-every "refused: head 3.0.1: 'run 3 did not keep layer 0 head 1'"
rm -f "$tmp/merged.sqlite"
run base-every/merge - merge "$tmp/merged.sqlite" "$tmp/stores/base-every.sqlite"
run base-every/merged-runs "$tmp/merged.sqlite" runs
[ "$(grep -c "fake-model-a" "$tmp/out")" -eq 3 ] && passes=$((passes + 1)) \
  || { echo "FAIL: base-every: the merged store does not list 3 runs"; cat "$tmp/out"; fails=$((fails + 1)); }

# A huge text lists as its first 4 KiB, said so in JSON; show gives it whole.
huge="$tmp/stores/text-huge.sqlite"
if [ -f "$huge" ]; then
  "$saccade" runs --json --db "$huge" > "$tmp/out" 2> "$tmp/err"
  grep -q '"truncated" : true' "$tmp/out" && passes=$((passes + 1)) \
    || { echo "FAIL: text-huge: runs --json does not say the text was cut"; head -c 600 "$tmp/out"; fails=$((fails + 1)); }
  [ "$(wc -c < "$tmp/out")" -lt 200000 ] && passes=$((passes + 1)) \
    || { echo "FAIL: text-huge: runs --json printed $(wc -c < "$tmp/out") bytes"; fails=$((fails + 1)); }
else
  echo "FAIL: hostile-stores wrote no text-huge.sqlite"; fails=$((fails + 1))
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
