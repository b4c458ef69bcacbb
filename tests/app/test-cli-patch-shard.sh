#!/bin/sh
# test-cli-patch-shard.sh — `saccade patch --file PAIRS` stored and sharded
# (app/core/saccade-patch-stored.c, docs/cluster.md "Patching over pairs"), on SmolLM2-135M,
# path patching from L23.H3 into each later head's values over four indirect-object pairs
# (the fourth shares its clean text with the first, so that after the merge two runs of that
# text are in one database):
#   - one process with --db computes the four pairs and stores each as the path-patch study
#     of its two runs (4 computed); a rerun reads all four back (4 read back, 0 computed)
#     and prints the same table;
#   - --shard 0/2 and 1/2, each into its own database, compute two pairs each (a rerun of
#     a shard reads its two back); --report on one shard's database alone is refused naming
#     the pairs' lines and the shard missing; the two merged give, with --report, the table
#     of the one process number for number (JSON: every pair's m and effects, every cell's
#     statistics; text: every line but the timing), every pair read back;
#   - `saccade study path-patch` of a merged pair's runs reads the same study back (the merge
#     carried the corrupted run's id too);
#   - refused with a message: --shard 3/2, --shard without --db, --report with --shard, a
#     missing database, settings with nothing stored, an empty pairs file, a line with one
#     text, two texts of different token counts (with --db, nothing is stored for them).
# Usage: test-cli-patch-shard.sh PATH/TO/saccade SOURCE_ROOT
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
root=$2
need_model
need_python_modules json
export SACCADE_MODEL="$model"
pairs="$tmp/pairs.tsv"
opts="--senders 23.3 --component values --bootstrap 500"

{ echo "# four pairs; the last shares the first's clean text"
  sed -n 5,6p "$root/docs/findings/ioi-pairs.tsv"
  sed -n 9p "$root/docs/findings/ioi-pairs.tsv"
  printf 'When Mary and John went to the store, John gave a drink to\tWhen Mary and John went to the store, Tom gave a drink to\t Mary\t John\n'; } > "$pairs"

run () { # name, output file, saccade arguments...: runs saccade, failing the test when it fails
  _name=$1 _out=$2
  shift 2
  "$saccade" "$@" > "$_out" 2> "$tmp/err" || { fail "$_name failed:"; sed 's/^/  | /' "$tmp/err"; }
}

# one process, then a rerun that reads everything back
run one "$tmp/one.json" patch --file "$pairs" $opts --db "$tmp/one.sqlite" --json
run one-again "$tmp/again.json" patch --file "$pairs" $opts --db "$tmp/one.sqlite" --json
run one-text "$tmp/one.txt" patch --file "$pairs" $opts --db "$tmp/one.sqlite"
pycheck one-stored "$tmp/one.json" "
a = json.load(open('$tmp/again.json'))
assert d['n_pairs'] == 4 and [p['line'] for p in d['pairs']] == [2, 3, 4, 5], d['pairs']
assert (d['computed'], d['read_back']) == (4, 0) and (a['computed'], a['read_back']) == (0, 4)
assert all(p['source'] == 'computed' for p in d['pairs'])
assert all(p['source'] == 'read back' for p in a['pairs'])
# the fourth pair's clean text is the first's: one run serves both
assert d['pairs'][3]['clean_run'] == d['pairs'][0]['clean_run']
assert len({p['study_id'] for p in d['pairs']}) == 4
for k in ('seconds', 'read_back', 'computed'):
    del d[k], a[k]
for p in d['pairs'] + a['pairs']:
    del p['source']
assert d == a
"
check one-text-reuse "$tmp/one.txt" "^4 pairs of .*: 4 read back from .*one.sqlite, 0 computed now and stored"

# two shards, each its own database; a shard rerun reads its pairs back
run shard0 "$tmp/s0.json" patch --file "$pairs" $opts --shard 0/2 --db "$tmp/s0.sqlite" --json
run shard1 "$tmp/s1.txt" patch --file "$pairs" $opts --shard 1/2 --db "$tmp/s1.sqlite"
run shard1-again "$tmp/s1b.txt" patch --file "$pairs" $opts --shard 1/2 --db "$tmp/s1.sqlite"
pycheck shard0 "$tmp/s0.json" "
assert d['shard'] == '0/2' and d['n_pairs'] == 2 and (d['computed'], d['read_back']) == (2, 0)
assert [p['line'] for p in d['pairs']] == [2, 4], d['pairs']
"
check shard1-text "$tmp/s1.txt" "^shard 1/2 of .*: 2 pairs, 0 read back from .*s1.sqlite, 2 computed now and stored"
check shard1-merge-hint "$tmp/s1.txt" "then saccade patch --file .* --report OUT"
check shard1-reuse "$tmp/s1b.txt" "^shard 1/2 of .*: 2 pairs, 2 read back from .*s1.sqlite, 0 computed"

# a shard missing: refused, naming the pairs and the shard
"$saccade" patch --file "$pairs" $opts --report "$tmp/s0.sqlite" > "$tmp/e" 2>&1
expect_fail missing-shard "$tmp/e" "holds no stored study of 2 of the 4 pairs of .* (lines 3, 5): shard 1/2 is not in it" $?

# merged: the one process's table, number for number
run merge "$tmp/m.txt" merge "$tmp/m.sqlite" "$tmp/s0.sqlite" "$tmp/s1.sqlite"
run report "$tmp/r.json" patch --file "$pairs" $opts --report "$tmp/m.sqlite" --json
run report-text "$tmp/r.txt" patch --file "$pairs" $opts --report "$tmp/m.sqlite"
pycheck merged-is-one "$tmp/r.json" "
o = json.load(open('$tmp/one.json'))
assert (d['computed'], d['read_back']) == (0, 4)
assert all(p['source'] == 'read back' for p in d['pairs'])
# two runs of the first pair's clean text now: each pair found its own study
assert d['pairs'][3]['clean_run'] != d['pairs'][0]['clean_run']
for x in (d, o):
    for k in ('seconds', 'read_back', 'computed', 'db'):
        del x[k]
    for p in x['pairs']:
        for k in ('source', 'clean_run', 'corrupted_run', 'study_id'):
            del p[k]
assert d.keys() == o.keys()
for k in d:
    assert d[k] == o[k], k
assert len(d['cells']) == 54 and len(d['pairs'][0]['effect']) == 270
"
tail -n +2 "$tmp/one.txt" | grep -v '^[0-9.]* s$' > "$tmp/one.body"
tail -n +2 "$tmp/r.txt" | grep -v '^[0-9.]* s$' > "$tmp/r.body"
if cmp -s "$tmp/one.body" "$tmp/r.body" && [ -s "$tmp/r.body" ]; then
  passes=$((passes + 1))
else
  fail "the merged report's text differs from the one process's:"; diff "$tmp/one.body" "$tmp/r.body" | head -20
fi
check report-first-line "$tmp/r.txt" "^the 4 pairs of .* read back from .*m.sqlite"

# the merged study is the one `saccade study path-patch` of the pair's runs reads back
cr=$(python -c "import json; p = json.load(open('$tmp/r.json'))['pairs'][0]; print(p['clean_run'], p['corrupted_run'], p['study_id'])")
set -- $cr
run study "$tmp/st.json" study path-patch "$1" --corrupted "$2" --senders 23.3 \
  --component values --target " Mary" --contrast " John" --db "$tmp/m.sqlite" --json
pycheck study-read-back "$tmp/st.json" "
r = json.load(open('$tmp/r.json'))['pairs'][0]
assert d['source'] == 'reused' and d['study_id'] == $3, (d['source'], d['study_id'])
assert d['path_patch']['m_clean'] == r['m_clean']
"

# refusals
"$saccade" patch --file "$pairs" $opts --shard 3/2 --db "$tmp/x.sqlite" > "$tmp/e" 2>&1
expect_fail shard-3-of-2 "$tmp/e" "--shard is I/N with 0 <= I < N" $?
"$saccade" patch --file "$pairs" $opts --shard 0/2 > "$tmp/e" 2>&1
expect_fail shard-no-db "$tmp/e" "--shard I/N is for --db SHARD.sqlite" $?
"$saccade" patch --file "$pairs" $opts --shard 0/2 --report "$tmp/m.sqlite" > "$tmp/e" 2>&1
expect_fail report-shard "$tmp/e" "--report DB reads the table of DB back: no --db, no --shard" $?
"$saccade" patch --file "$pairs" $opts --report "$tmp/none.sqlite" > "$tmp/e" 2>&1
expect_fail report-no-db "$tmp/e" "no capture store at .*none.sqlite" $?
"$saccade" patch --file "$pairs" --senders 23.3 --component keys --report "$tmp/m.sqlite" > "$tmp/e" 2>&1
expect_fail report-other-settings "$tmp/e" "holds no stored study of 4 of the 4 pairs .* under these settings" $?
printf '# nothing\n\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --db "$tmp/x.sqlite" > "$tmp/e" 2>&1
expect_fail empty "$tmp/e" "holds no sentence" $?
printf 'When Mary and John went to the store\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --db "$tmp/x.sqlite" > "$tmp/e" 2>&1
expect_fail one-text "$tmp/e" "bad.tsv:1: 1 fields; a pair is CLEAN<tab>CORRUPTED" $?
printf 'The cat sat on the\tThe big dog sat on the\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --db "$tmp/x.sqlite" --shard 0/1 > "$tmp/e" 2>&1
expect_fail lengths "$tmp/e" "line 1: the clean text is 5 tokens and the corrupted 6" $?
[ ! -e "$tmp/x.sqlite" ] || [ "$("$saccade" runs --db "$tmp/x.sqlite" --json | python -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))')" = 0 ] \
  || fail "a refused pair left runs in the database"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
