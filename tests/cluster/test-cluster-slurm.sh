#!/usr/bin/env bash
# test-cluster-slurm.sh SACCADE SOURCE_ROOT — the sharded study on a real Slurm (suite
# `cluster`, docs/cluster.md). Starts a single-node cluster from Debian's packages (munged,
# slurmctld, slurmd on this machine, configured here, state under a temporary folder),
# submits tools/slurm/faithfulness-array.sbatch as a job array of 3 tasks over 6 sentences
# and tools/slurm/merge.sbatch after it (--dependency=afterok), waits, and checks:
#   1. the merged report equals the same study run unsharded in one process (every number
#      of the JSON report but the shard counts), and the stored values are bit for bit
#      the same (dump-studies.py: every value as float.hex, in line order);
#   2. a shard killed (SIGKILL) after its first sentence and rerun resumes (the first
#      sentence read back, not computed), and the merge with it is unchanged;
#   3. a corrupt shard, a shard made with other settings and a shard of another model are
#      refused with a message saying why, and OUT stays byte for byte as it was.
# Skips (77) with the reason where Slurm cannot start: not root, a daemon that does not
# come up (.ci/run, as root, fails on that skip). Fails when something tools/setup.sh
# installs is missing: the packages, the default model, Python (tests/lib.sh). Everything
# started is stopped on exit (trap).
set -euo pipefail
SACCADE=$(realpath "$1")
ROOT=$(realpath "$2")
HERE=$ROOT/tests/cluster
. "$ROOT/tests/lib.sh"

skip () { echo "SKIP: $*"; exit 77; }
fail () { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged needs root (CI runs as root)"
need_model
MODEL=$model
export SACCADE_MODEL=$MODEL
need_tools munged mungekey slurmctld slurmd sbatch squeue sacct scontrol
need_python_modules json sqlite3

T=$(mktemp -d /tmp/saccade-slurm.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup () {
  local rc=$?
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    for f in "$T"/*.log "$T"/out/*.out; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
  fi
  rm -rf "$T" "$tmp"
}
trap cleanup EXIT

# --- munge: its own key and socket, so that nothing of the machine's is touched --------
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/out"
chmod 711 "$T/munge" # munged wants its socket's folder searchable by all
mungekey --create --keyfile="$T/munge/munge.key" >/dev/null 2>&1 \
  || dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --foreground --force --socket="$T/munge/sock" --key-file="$T/munge/munge.key" \
  --pid-file="$T/munge/pid" --log-file="$T/munged.log" --seed-file="$T/munge/seed" \
  >>"$T/munged.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$T/munge/sock" ] && break; sleep 0.1; done
[ -S "$T/munge/sock" ] || skip "munged did not start ($(tail -1 "$T/munged.log" 2>/dev/null))"

# --- slurm.conf for this one node ------------------------------------------------------
HOST=$(hostname -s)
CPUS=$(nproc)
# two ports no other service here is likely to hold (Slurm's defaults are 6817/6818)
PORT=$(( 20000 + RANDOM % 20000 ))
cat > "$T/slurm.conf" <<EOF
ClusterName=saccadetest
SlurmctldHost=$HOST
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
AuthInfo=socket=$T/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
NodeName=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -f "$T/slurm.conf" -i >>"$T/slurmctld.log" 2>&1 &
PIDS+=($!)
slurmd -D -f "$T/slurm.conf" >>"$T/slurmd.log" 2>&1 &
PIDS+=($!)
up=0
for _ in $(seq 100); do
  if scontrol ping 2>/dev/null | grep -q UP \
     && sinfo -h -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then up=1; break; fi
  sleep 0.3
done
[ $up = 1 ] || skip "Slurm did not come up: $(tail -2 "$T/slurmctld.log" "$T/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "slurm up: node $HOST, $CPUS CPUs, port $PORT"

# --- the study: 6 short sentences, faithfulness without gradients ----------------------
cat > "$T/sentences.txt" <<'EOF'
# six sentences for the cluster test
The cat sat on the mat.
She went to the store yesterday.
Paris is the capital of France.
The sun rises in the east.
He plays the piano every day.
Birds fly south in winter.
EOF
export SACCADE SENTENCES=$T/sentences.txt OUTDIR=$T/out SHARDS=3

# unsharded, in one process: the reference
"$SACCADE" faithfulness --file "$SENTENCES" --db "$T/whole.sqlite" --threads 1 --json > "$T/whole.json"

# waits for job $1 (and its array tasks) to leave the queue; fails after $2 seconds
wait_job () {
  local job=$1 limit=$2 t=0
  while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    sleep 1
    t=$((t + 1))
    [ $t -lt "$limit" ] || { squeue; fail "job $job still queued or running after ${limit}s"; }
  done
}
job_ok () { # every task of job $1 COMPLETED with exit code 0 (no accounting here:
  # scontrol remembers finished jobs for MinJobAge seconds, one line per task with -o)
  local lines
  lines=$(scontrol -o show job "$1" 2>/dev/null || true)
  echo "$lines" | grep -q JobState= || return 1
  ! echo "$lines" | grep -v 'JobState=COMPLETED .*ExitCode=0:0' | grep -q .
}

cd "$T/out"
JOB=$(sbatch --parsable --array=0-2 --cpus-per-task=1 --export=ALL "$ROOT/tools/slurm/faithfulness-array.sbatch")
MJOB=$(sbatch --parsable --dependency=afterok:"$JOB" --export=ALL "$ROOT/tools/slurm/merge.sbatch")
echo "submitted array $JOB and merge $MJOB"
wait_job "$JOB" 600
wait_job "$MJOB" 120
job_ok "$JOB" || fail "array job $JOB did not complete: $(scontrol show job "$JOB" | grep -o 'JobState=[A-Z]*' | tr '\n' ' ')"
job_ok "$MJOB" || fail "merge job $MJOB did not complete"
[ -f "$T/out/merged.sqlite" ] || fail "the merge job wrote no merged.sqlite"

# 1. the report and the stored values against the unsharded run
norm () { python -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k) for k in ("shards","shards_present")]; print(json.dumps(d, sort_keys=True))' "$1"; }
"$SACCADE" faithfulness --report "$T/whole.sqlite" --json > "$T/whole-report.json"
[ "$(norm "$T/whole-report.json")" = "$(norm "$T/out/report.json")" ] \
  || { diff <(norm "$T/whole-report.json") <(norm "$T/out/report.json") | head; fail "merged report differs from the unsharded one"; }
python "$HERE/dump-studies.py" "$T/whole.sqlite" > "$T/whole.dump"
python "$HERE/dump-studies.py" "$T/out/merged.sqlite" > "$T/merged.dump"
cmp -s "$T/whole.dump" "$T/merged.dump" || { diff "$T/whole.dump" "$T/merged.dump" | head; fail "stored values differ"; }
[ "$(grep -c '^study' "$T/merged.dump")" = 6 ] || fail "the merged database does not hold 6 sentence studies"
python -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["shards_present"]==3 and d["file_sentences"]==6 and d["n_sentences"]==6, d' "$T/out/report.json" \
  || fail "the report does not say 6 of 6 sentences, 3 of 3 shards"
echo "ok: sharded on Slurm and merged = unsharded (report and $(wc -l < "$T/whole.dump") stored values)"

# 2. kill shard 1 after its first sentence, rerun it: it resumes, the merge is unchanged
rm -f "$T/k1.sqlite"
"$SACCADE" faithfulness --file "$SENTENCES" --shard 1/3 --db "$T/k1.sqlite" --threads 1 --json > /dev/null &
KP=$!
for _ in $(seq 600); do
  n=$(python -c 'import sqlite3,sys
try: print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM studies WHERE kind=\"faithfulness\" AND status=\"complete\"").fetchone()[0])
except Exception: print(0)' "$T/k1.sqlite" 2>/dev/null || echo 0)
  [ "$n" -ge 1 ] && break
  sleep 0.2
done
kill -9 $KP 2>/dev/null || fail "shard 1 finished before it could be killed"
wait $KP 2>/dev/null || true
[ "$n" = 1 ] || fail "expected 1 complete sentence before the kill, found $n"
"$SACCADE" faithfulness --file "$SENTENCES" --shard 1/3 --db "$T/k1.sqlite" --threads 1 > "$T/k1.txt"
grep -q '(1 read back from' "$T/k1.txt" || { cat "$T/k1.txt"; fail "the rerun shard did not resume"; }
"$SACCADE" merge "$T/k.sqlite" "$T/out/shard-0.sqlite" "$T/k1.sqlite" "$T/out/shard-2.sqlite" > /dev/null
python "$HERE/dump-studies.py" "$T/k.sqlite" > "$T/k.dump"
cmp -s "$T/whole.dump" "$T/k.dump" || fail "the merge with a killed and rerun shard differs"
echo "ok: a shard killed after its first sentence resumed; merge unchanged"

# 3. refused merges leave OUT byte for byte as it was
before=$(sha256sum < "$T/out/merged.sqlite")
refuse () { # $1: what, rest: shards
  local what=$1; shift
  if "$SACCADE" merge "$T/out/merged.sqlite" "$@" 2> "$T/refuse.err"; then fail "merged $what"; fi
  [ "$(sha256sum < "$T/out/merged.sqlite")" = "$before" ] || fail "OUT changed after refusing $what"
  ls "$T/out" | grep -q merging && fail "a temporary file was left after refusing $what"
  echo "ok: refused $what: $(cat "$T/refuse.err")"
}
cp "$T/out/shard-2.sqlite" "$T/corrupt.sqlite"
python - "$T/corrupt.sqlite" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
page = int.from_bytes(b[16:18], "big")
page = 65536 if page == 1 else page  # SQLite writes 65536 as 1
for i in range(page + 100, min(len(b), 3 * page)):  # scramble pages 2 and 3
    b[i] ^= 0x5A
open(p, "wb").write(b)
PY
refuse "a corrupt shard" "$T/corrupt.sqlite"
grep -Eq 'corrupt|malformed|integrity|damaged' "$T/refuse.err" || fail "the message does not say corrupt"
"$SACCADE" faithfulness --file "$SENTENCES" --shard 2/3 --db "$T/jsd.sqlite" --metric jsd --threads 1 --json > /dev/null
refuse "a shard made with other settings" "$T/jsd.sqlite"
grep -q 'other settings' "$T/refuse.err" || fail "the message does not name the settings"
OTHER=$(ls "$ROOT"/data/models/*.gguf 2>/dev/null | grep -v "$(basename "$MODEL")" | head -1 || true)
if [ -n "$OTHER" ]; then
  if "$SACCADE" faithfulness -m "$OTHER" --file "$SENTENCES" --shard 2/3 --db "$T/other.sqlite" --threads 1 --json > /dev/null 2>&1; then
    refuse "a shard of another model" "$T/other.sqlite"
    grep -q 'another model' "$T/refuse.err" || fail "the message does not name the model"
  else
    echo "note: $OTHER cannot run faithfulness here; the other-model refusal is covered by tests/store/test-store-merge"
  fi
else
  echo "note: no second model in data/models; the other-model refusal is covered by tests/store/test-store-merge"
fi
refuse "a shard merged twice" "$T/out/shard-0.sqlite"
echo "PASS"
