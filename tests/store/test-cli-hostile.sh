#!/bin/sh
# test-cli-hostile.sh — every reading verb of the command line, and every figure, on every
# hostile store (tests/store/hostile-stores.c: a store Saccade wrote, then edited with SQL
# only). Each command must either succeed or fail with one clear "saccade: ..." message:
# never a signal (a crash, or a sanitizer's abort under the ASan/UBSan build in CI), never
# a hang, never a changed file.
#
# Also `saccade merge` and `faithfulness --report` on each (docs/cluster.md).
#
# Usage: test-cli-hostile.sh SACCADE HOSTILE_STORES
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
hostile=$2
# The huge text cell: big enough to matter (4 KiB listing prefix vs 8 MB), small enough
# for ~70 stores in CI.
export SC_HOSTILE_HUGE_BYTES=8000000
"$hostile" "$tmp/stores" > "$tmp/kinds" 2>&1 || { echo "FAIL: hostile-stores:"; cat "$tmp/kinds"; exit 1; }

# run NAME DB ARGS...: runs `saccade ARGS --db DB` (DB "-": `saccade ARGS`, for the verbs
# that name their databases as arguments) with a time limit and judges the result.
run() {
  name=$1; run_db=$2; shift 2 # (sh has no locals: the loop's $db must not change)
  if [ "$run_db" = - ]; then
    timeout 60 "$saccade" "$@" > "$tmp/out" 2> "$tmp/err"
  else
    timeout 60 "$saccade" "$@" --db "$run_db" > "$tmp/out" 2> "$tmp/err"
  fi
  rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "FAIL: $name: saccade $* did not finish in 60 s"; fails=$((fails + 1)); return
  fi
  if [ "$rc" -ge 128 ]; then
    echo "FAIL: $name: saccade $* died with signal $((rc - 128)):"; sed 's/^/  | /' "$tmp/err" | head -20
    fails=$((fails + 1)); return
  fi
  if [ "$rc" -ne 0 ]; then
    if ! head -1 "$tmp/err" | grep -q '^saccade: ..........'; then
      echo "FAIL: $name: saccade $* exited $rc without a message:"; sed 's/^/  | /' "$tmp/err" | head -5
      fails=$((fails + 1)); return
    fi
    if [ "$(wc -l < "$tmp/err")" -gt 3 ]; then
      echo "FAIL: $name: saccade $* said more than one message:"; sed 's/^/  | /' "$tmp/err" | head -8
      fails=$((fails + 1)); return
    fi
  fi
  passes=$((passes + 1))
}

for db in "$tmp"/stores/*.sqlite; do
  kind=$(basename "$db" .sqlite)
  before=$(sha256sum "$db" | cut -d' ' -f1)
  run "$kind/runs" "$db" runs
  run "$kind/runs-json" "$db" runs --json
  for id in 1 2 3; do
    run "$kind/show-$id" "$db" show "$id"
    run "$kind/show-$id-head" "$db" show "$id" --layer 0 --head 2
    run "$kind/show-$id-json" "$db" show "$id" --layer 3 --head 1 --json
    for f in csv npy json; do
      run "$kind/export-$id-$f" "$db" export "$id" --layer 1 --head 1 -o "$tmp/head.$f"
    done
    run "$kind/heatmap-$id" "$db" export "$id" --figure heatmap --layer 2 --head 0 -o "$tmp/h.png"
    run "$kind/grid-$id" "$db" export "$id" --figure grid --metric sink -o "$tmp/g.svg"
    # PNG here: cairo 1.16's PDF surface leaks 768 bytes of its own on finishing, which
    # LeakSanitizer would report for every store; the formats themselves are tested by
    # test-cli and test-figures, this test is about what the data can do.
    run "$kind/lines-$id" "$db" export "$id" --figure lines --layer 3 -o "$tmp/l.png"
  done
  # the merge (docs/cluster.md) takes the store as a shard: merged whole or refused
  rm -f "$tmp/merged.sqlite"
  run "$kind/merge" - merge "$tmp/merged.sqlite" "$db"
  run "$kind/report" - faithfulness --report "$db"
  after=$(sha256sum "$db" | cut -d' ' -f1)
  if [ "$before" != "$after" ]; then
    echo "FAIL: $kind: reading changed the file"; fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
done

# The stores that must read fine do, and what is refused is refused by name.
run base/show-ok "$tmp/stores/base.sqlite" show 2
grep -q "^    5 " "$tmp/out" && passes=$((passes + 1)) || { echo "FAIL: base: show 2 lacks token 5"; cat "$tmp/out"; fails=$((fails + 1)); }
"$saccade" show 1 --db "$tmp/stores/kv-heads-more.sqlite" > "$tmp/out" 2> "$tmp/err"
grep -q "n_kv_heads = 4 does not divide n_heads = 3" "$tmp/err" && passes=$((passes + 1)) \
  || { echo "FAIL: kv-heads-more: show 1 said:"; cat "$tmp/err"; fails=$((fails + 1)); }
"$saccade" runs --db "$tmp/stores/trigger.sqlite" > "$tmp/out" 2> "$tmp/err"
grep -q "trigger 'wipe'" "$tmp/err" && passes=$((passes + 1)) \
  || { echo "FAIL: trigger: runs said:"; cat "$tmp/err"; fails=$((fails + 1)); }

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
