#!/usr/bin/env bash
# test-cli-shard.sh — sharded faithfulness without a cluster (docs/cluster.md): --shard and
# --report refuse what they cannot do, with their message; 2 shards run through
# tools/slurm/faithfulness-parallel.sh (GNU parallel; a plain loop where it is missing) and
# merged give the report and the stored values of one unsharded run, bit for bit; a rerun
# shard reads everything back; capture --file --shard: 2 shards merged hold the same heads
# as one capture, and a rerun resumes. tests/cluster/ does faithfulness on a real Slurm.
# Usage: test-cli-shard.sh PATH/TO/saccade SOURCE_ROOT   (fails without the model or Python)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$(realpath "$1")
root=$2
need_model
need_python_modules json sqlite3
export SACCADE_MODEL="$model"
ok () { passes=$((passes + 1)); }
bad () { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_fail () { # name, output file, text, exit status
  if [ "$4" -ne 0 ] && grep -q -- "$3" "$2"; then ok; else bad "$1: wanted failure with '$3':"; sed 's/^/  | /' "$2"; fi
}

printf 'The cat sat on the mat.\n# a comment\nParis is the capital of France.\n\nBirds fly south in winter.\n' > "$tmp/s.txt"

"$saccade" faithfulness --file "$tmp/s.txt" --shard 0/2 > "$tmp/e1" 2>&1
expect_fail shard-without-db "$tmp/e1" "--shard I/N is for --file SENTENCES with --db" $?
"$saccade" faithfulness --file "$tmp/s.txt" --db "$tmp/x.sqlite" --shard 2/2 > "$tmp/e2" 2>&1
expect_fail shard-out-of-range "$tmp/e2" "--shard is I/N with 0 <= I < N" $?
"$saccade" faithfulness --file "$tmp/s.txt" --db "$tmp/x.sqlite" --shard one > "$tmp/e3" 2>&1
expect_fail shard-not-a-number "$tmp/e3" "not 'one'" $?
"$saccade" faithfulness --report "$tmp/none.sqlite" > "$tmp/e4" 2>&1
expect_fail report-no-db "$tmp/e4" "no capture store at" $?
"$saccade" merge "$tmp/m.sqlite" > "$tmp/e5" 2>&1
expect_fail merge-no-shard "$tmp/e5" "at least one SHARD" $?

# the reference: one process, no shard
"$saccade" faithfulness --file "$tmp/s.txt" --db "$tmp/whole.sqlite" --threads 1 > "$tmp/whole.txt" 2>&1 \
  && grep -q "3 sentences of the file (0 read back" "$tmp/whole.txt" && ok || { bad "unsharded run"; cat "$tmp/whole.txt"; }
"$saccade" faithfulness --report "$tmp/whole.sqlite" --json > "$tmp/whole.json" 2>&1 || bad "report of the unsharded run"
"$saccade" faithfulness --report "$tmp/whole.sqlite" > "$tmp/e6" 2>&1
grep -q "3 of the file's 3 sentences stored, 1 of 1 shards present" "$tmp/e6" && ok || { bad "report header"; cat "$tmp/e6"; }
# a rerun reads every sentence back
"$saccade" faithfulness --file "$tmp/s.txt" --db "$tmp/whole.sqlite" --threads 1 > "$tmp/again.txt" 2>&1
grep -q "(3 read back from" "$tmp/again.txt" && ok || { bad "rerun did not read back"; cat "$tmp/again.txt"; }
# edited databases: the report refuses what it did not write, by name
sqledit () { python -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$@"; }
cp "$tmp/whole.sqlite" "$tmp/h1.sqlite"
sqledit "$tmp/h1.sqlite" "UPDATE studies SET params = '{\"verb\":\"faithfulness\",\"settings\":[1]}' WHERE kind = 'shard'"
"$saccade" faithfulness --report "$tmp/h1.sqlite" > "$tmp/e11" 2>&1
expect_fail report-bad-manifest "$tmp/e11" "is not a faithfulness manifest Saccade writes" $?
cp "$tmp/whole.sqlite" "$tmp/h2.sqlite"
sqledit "$tmp/h2.sqlite" "UPDATE studies SET params = replace(params, '\"line\":', '\"line\":\"x\",\"y\":') WHERE kind = 'faithfulness' AND id = (SELECT max(id) FROM studies)"
"$saccade" faithfulness --report "$tmp/h2.sqlite" > "$tmp/e12" 2>&1
expect_fail report-bad-sentence "$tmp/e12" "of its sentence file, which no file has" $?
# one reading of manifests for the report and the merge (issue 25, item 8): a manifest
# claiming 2147483647 shards is refused by both, by name
cp "$tmp/whole.sqlite" "$tmp/h3.sqlite"
sqledit "$tmp/h3.sqlite" "UPDATE studies SET params = json_set(params, '$.shards', 2147483647) WHERE kind = 'shard'"
"$saccade" faithfulness --report "$tmp/h3.sqlite" > "$tmp/e13" 2>&1
expect_fail report-manifest-shards "$tmp/e13" '"shards":2147483647 but it is shard' $?
"$saccade" merge "$tmp/h3-out.sqlite" "$tmp/h3.sqlite" > "$tmp/e14" 2>&1
expect_fail merge-manifest-shards "$tmp/e14" '"shards":2147483647 but it is shard' $?
# a database is one shard of one study
"$saccade" faithfulness --file "$tmp/s.txt" --db "$tmp/whole.sqlite" --shard 0/2 > "$tmp/e7" 2>&1
expect_fail other-shard-same-db "$tmp/e7" "give each shard of each study its own" $?

# 2 shards (GNU parallel when installed), merged
if command -v parallel > /dev/null; then
  SACCADE=$saccade "$root/tools/slurm/faithfulness-parallel.sh" "$tmp/s.txt" "$tmp/p" 2 2 1 > "$tmp/p.txt" 2>&1 \
    || { bad "faithfulness-parallel.sh"; cat "$tmp/p.txt"; }
else
  echo "note: GNU parallel not installed; the shards run one after the other"
  mkdir -p "$tmp/p"
  for i in 0 1; do "$saccade" faithfulness --file "$tmp/s.txt" --shard $i/2 --db "$tmp/p/shard-$i.sqlite" --threads 1 > /dev/null 2>&1 || bad "shard $i"; done
  "$saccade" merge "$tmp/p/merged.sqlite" "$tmp/p/shard-0.sqlite" "$tmp/p/shard-1.sqlite" > /dev/null || bad "merge"
fi
"$saccade" faithfulness --report "$tmp/p/merged.sqlite" --json > "$tmp/merged.json" 2>&1 || bad "report of the merge"
norm () { python -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k) for k in ("shards","shards_present")]; print(json.dumps(d, sort_keys=True))' "$1"; }
[ "$(norm "$tmp/whole.json")" = "$(norm "$tmp/merged.json")" ] && ok || { bad "merged report differs"; diff "$tmp/whole.json" "$tmp/merged.json" | head; }
python "$root/tests/cluster/dump-studies.py" "$tmp/whole.sqlite" > "$tmp/whole.dump"
python "$root/tests/cluster/dump-studies.py" "$tmp/p/merged.sqlite" > "$tmp/merged.dump"
cmp -s "$tmp/whole.dump" "$tmp/merged.dump" && [ -s "$tmp/whole.dump" ] && ok || bad "stored values differ"
# the unsharded study is not a shard of the 2-shard one
before=$(sha256sum < "$tmp/p/merged.sqlite")
"$saccade" merge "$tmp/p/merged.sqlite" "$tmp/whole.sqlite" > "$tmp/e8" 2>&1
expect_fail merge-other-n "$tmp/e8" "other settings" $?
[ "$(sha256sum < "$tmp/p/merged.sqlite")" = "$before" ] && ok || bad "OUT changed by a refused merge"

# --mixing and --contrast over a file, sharded (issue 27): the merge reports what one
# process does, with the contrast and every context-mixing source
mc () { "$saccade" faithfulness --file "$tmp/s.txt" --mixing --contrast 1000 --threads 1 "$@"; }
for i in 0 1; do mc --shard $i/2 --db "$tmp/mc$i.sqlite" > "$tmp/mc$i.txt" 2>&1 || { bad "mixing+contrast shard $i"; cat "$tmp/mc$i.txt"; }; done
"$saccade" merge "$tmp/mcm.sqlite" "$tmp/mc0.sqlite" "$tmp/mc1.sqlite" > /dev/null || bad "mixing+contrast merge"
mc --db "$tmp/mcw.sqlite" > /dev/null 2>&1 || bad "mixing+contrast unsharded"
"$saccade" faithfulness --report "$tmp/mcw.sqlite" --json > "$tmp/mcw.json" 2>&1 || bad "mixing+contrast report"
"$saccade" faithfulness --report "$tmp/mcm.sqlite" --json > "$tmp/mcm.json" 2>&1 || bad "mixing+contrast report of the merge"
[ "$(norm "$tmp/mcw.json")" = "$(norm "$tmp/mcm.json")" ] && ok || { bad "mixing+contrast merged report differs"; diff "$tmp/mcw.json" "$tmp/mcm.json" | head; }
python -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["contrast"] == 1000 and d["metric"] == "abs-delta-logit-diff", (d.get("contrast"), d["metric"])
for k in ("norm", "norm-rollout", "vz", "vz-rollout", "alti", "alti-rollout"):
    assert d["table2"][k]["n_defined"] == 3, (k, d["table2"][k])' "$tmp/mcm.json" && ok || bad "mixing+contrast report lacks the contrast or a source"
# the plain study of the same file is another study: its database is refused, not reused
mc --db "$tmp/whole.sqlite" > "$tmp/e15" 2>&1
expect_fail mixing-contrast-other-study "$tmp/e15" "holds shard 0 of 1 of another study" $?

# capture --file --shard: the runs of 2 shards merged hold the same heads as one capture
blobs () { python -c 'import sqlite3,sys,hashlib
db = sqlite3.connect(sys.argv[1])
for t, l, h, d in sorted(db.execute("SELECT r.text, a.layer, a.head, a.data FROM attention a JOIN runs r ON r.id = a.run_id")):
    print(bytes(t).decode(), l, h, hashlib.sha256(d).hexdigest())' "$1"; }
"$saccade" capture --file "$tmp/s.txt" --db "$tmp/cw.sqlite" --layers 0-1 > /dev/null 2>&1 || bad "capture unsharded"
"$saccade" capture --file "$tmp/s.txt" --shard 0/2 > "$tmp/e9" 2>&1
expect_fail capture-shard-without-db "$tmp/e9" "--shard I/N is for --file FILE with --db" $?
for i in 0 1; do
  "$saccade" capture --file "$tmp/s.txt" --db "$tmp/c$i.sqlite" --shard $i/2 --layers 0-1 > "$tmp/c$i.txt" 2>&1 || bad "capture shard $i"
done
# capture takes every non-empty line ("# a comment" too): 4 lines, 2 per shard
[ "$(wc -l < "$tmp/c0.txt")" = 2 ] && [ "$(wc -l < "$tmp/c1.txt")" = 2 ] && ok || bad "capture shards hold 2 lines each"
# a rerun of a finished shard resumes past every line
"$saccade" capture --file "$tmp/s.txt" --db "$tmp/c0.sqlite" --shard 0/2 --layers 0-1 > "$tmp/c0b.txt" 2>&1
grep -q "resuming shard 0/2: 2 of its 2 lines are already stored" "$tmp/c0b.txt" && ok || { bad "capture rerun"; cat "$tmp/c0b.txt"; }
"$saccade" capture --file "$tmp/s.txt" --db "$tmp/c0.sqlite" --shard 0/2 --layers 0-2 > "$tmp/e10" 2>&1
expect_fail capture-shard-other-settings "$tmp/e10" "another study" $?
"$saccade" merge "$tmp/cm.sqlite" "$tmp/c0.sqlite" "$tmp/c1.sqlite" > /dev/null || bad "capture merge"
[ "$(blobs "$tmp/cw.sqlite")" = "$(blobs "$tmp/cm.sqlite")" ] && [ -n "$(blobs "$tmp/cm.sqlite")" ] && ok || bad "merged capture heads differ"

# per-run studies in each shard (tools/slurm/study-runs.sh), merged: each study follows its
# run, with the values one database gives
studies () { python -c 'import sqlite3,sys,json
db = sqlite3.connect(sys.argv[1])
text = {i: bytes(t).decode() for i, t in db.execute("SELECT id, text FROM runs")}
out = []
for sid, kind, p in db.execute("SELECT id, kind, params FROM studies WHERE kind <> \"shard\""):
    d = json.loads(p); run = text[d.pop("run")]
    vals = db.execute("SELECT series, pos, value FROM study_series WHERE study_id = ? ORDER BY series, pos", (sid,)).fetchall()
    out.append((run, kind, json.dumps(d, sort_keys=True), [(a, b, float(c).hex() if c is not None else None) for a, b, c in vals]))
for o in sorted(out): print(o)' "$1"; }
export SACCADE="$saccade"
for db in cw c0 c1; do
  "$root/tools/slurm/study-runs.sh" "$tmp/$db.sqlite" attribute --method saliency > /dev/null 2>&1 || bad "study-runs.sh on $db"
done
rm -f "$tmp/cm.sqlite"
"$saccade" merge "$tmp/cm.sqlite" "$tmp/c0.sqlite" "$tmp/c1.sqlite" > /dev/null || bad "merge with studies"
[ "$(studies "$tmp/cw.sqlite")" = "$(studies "$tmp/cm.sqlite")" ] && [ "$(studies "$tmp/cm.sqlite" | wc -l)" -ge 4 ] \
  && ok || { bad "merged per-run studies differ"; diff <(studies "$tmp/cw.sqlite") <(studies "$tmp/cm.sqlite") | head -5; }

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
