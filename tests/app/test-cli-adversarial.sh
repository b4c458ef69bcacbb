#!/bin/sh
# test-cli-adversarial.sh — `saccade adversarial` read the way a script reads it: a run
# captured, then layer 29 head 3 searched at ε 0.01 and 0.05 with 10 Adam steps: --json
# checked field by field (Python's json module: 0 <= JSD <= JSD max <= ln 2, TVD <= ε, ε
# increasing, the rows distributions over the visible keys), the CSV's rows, the figure as
# SVG, the study reused on a second call (same study id, no second study stored), a whole
# layer in text, and bad input refused with its message.
# Usage: test-cli-adversarial.sh PATH/TO/saccade   (fails without the default model,
# Python or sqlite3: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_tools sqlite3
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/a.sqlite"

adv_studies() { sqlite3 "$db" "SELECT count(*) FROM studies WHERE kind = 'adversarial'"; }

"$saccade" capture --db "$db" "The capital of France is" > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
n=$(sqlite3 "$db" "SELECT count(*) FROM tokens WHERE run_id = 1")

# Computed and stored. The ε are given out of order: the study sorts them.
"$saccade" adversarial 1 --db "$db" --layer 29 --head 3 --epsilon 0.05,0.01 --iterations 10 \
  --json --csv "$tmp/a.csv" -o "$tmp/fig.svg" > "$tmp/a.json" 2> "$tmp/a.err"
check first-json "$tmp/a.json" '"study" : "adversarial"'
pycheck json "$tmp/a.json" "
n = $n
ln2 = math.log(2)
assert d['source'] == 'computed' and d['study_id'] >= 1, d['source']
p = d['params']
assert p['layer'] == 29 and p['head'] == 3 and p['row'] == 'last', p
assert p['iterations'] == 10 and p['seed'] == 0 and sorted(p['epsilons']) == [0.01, 0.05], p
assert d['n_tokens'] == n and len(d['tokens']) == n and d['n_dists'] == 1
assert abs(d['jsd_ceiling'] - ln2) < 1e-12
pts = d['points']
eps = [q['epsilon'] for q in pts]
assert eps == [0.01, 0.05], eps
for q in pts:
    assert 0 <= q['jsd'] <= q['jsd_max'] + 1e-12 <= ln2 + 1e-9, q
    assert 0 <= q['tvd'] <= q['epsilon'] + 1e-12, q
assert pts[1]['jsd'] >= pts[0]['jsd'] - 1e-12, pts   # warm start: feasible for the smaller ε
assert d['target'] >= 0 and d['target_label'] == '␣Paris', d['target_label']
r = d['rows']
assert r['head'] == 3 and r['row'] == n - 1 and 0 <= r['jsd'] <= ln2, r
for k in ('original', 'adversarial'):
    assert len(r[k]) == n and abs(sum(r[k]) - 1) < 1e-4 and min(r[k]) >= 0, (k, r[k])
assert d['timing']['search_s'] > 0"
# The CSV: a header and one row per ε.
check csv-header "$tmp/a.csv" "^epsilon,jsd,jsd_max,tvd"
[ "$(wc -l < "$tmp/a.csv")" = 3 ] && passes=$((passes + 1)) \
  || { echo "FAIL: a.csv has $(wc -l < "$tmp/a.csv") lines, not 1 + 2"; fails=$((fails + 1)); }
check csv-row "$tmp/a.csv" '^0.05,[0-9.e-]*,[0-9.e-]*,[0-9.e-]*'
python -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$tmp/fig.svg" \
  && passes=$((passes + 1)) || { echo "FAIL: fig.svg is not valid XML"; fails=$((fails + 1)); }
check svg "$tmp/fig.svg" "<svg"

# Reused: the same study, nothing searched or stored again (a loaded study has no rows).
"$saccade" adversarial 1 --db "$db" --layer 29 --head 3 --epsilon 0.01,0.05 --iterations 10 \
  --json -o "$tmp/b.png" > "$tmp/b.json" 2>&1
first=$(python -c 'import json,sys; print(json.load(open(sys.argv[1]))["study_id"])' "$tmp/a.json")
pycheck reused "$tmp/b.json" "
a = json.load(open('$tmp/a.json'))
assert d['source'] == 'reused' and d['study_id'] == $first, (d['source'], d['study_id'])
assert d['timing']['search_s'] == 0 and 'rows' not in d and d['n_dists'] == 1
for p, q in zip(a['points'], d['points']):
    for k in ('epsilon', 'jsd', 'jsd_max', 'tvd'):
        assert abs(p[k] - q[k]) < 1e-12, (k, p, q)"
[ "$(adv_studies)" = 1 ] && passes=$((passes + 1)) \
  || { echo "FAIL: $(adv_studies) adversarial studies stored, not 1"; fails=$((fails + 1)); }
head -c 8 "$tmp/b.png" | grep -q PNG && passes=$((passes + 1)) \
  || { echo "FAIL: b.png (a stored study's curve) is not a PNG"; fails=$((fails + 1)); }

# Text, a whole layer: the table, the reading, the target, the timing; another study.
"$saccade" adversarial 1 --db "$db" --layer 29 --epsilon 0.05 --iterations 5 > "$tmp/t.txt" 2>&1
check text-what "$tmp/t.txt" "layer 29 all heads, query row [0-9]*, 9 distributions searched"
check text-target "$tmp/t.txt" "target (clean top-1) [0-9]* ␣Paris"
check text-header "$tmp/t.txt" "epsilon     JSD mean   JSD max   TVD"
check text-reading "$tmp/t.txt" "of ln 2 = 0.693 (disjoint support)"
check text-timing "$tmp/t.txt" "^timing: "
[ "$(adv_studies)" = 2 ] && passes=$((passes + 1)) \
  || { echo "FAIL: a whole layer should store a second study"; fails=$((fails + 1)); }

# Every row of one head: one distribution per row with two or more keys (rows 1 .. n-1).
"$saccade" adversarial 1 --db "$db" --layer 29 --head 2 --row all --epsilon 0.1 --iterations 2 \
  --json > "$tmp/r.json" 2>&1
pycheck all-rows "$tmp/r.json" "
n = $n
assert d['params']['row'] == 'all' and d['n_dists'] == n - 1, (d['params'], d['n_dists'])
assert d['rows']['head'] == 2 and 1 <= d['rows']['row'] <= n - 1, d['rows']
assert 0 <= d['points'][0]['jsd'] <= d['points'][0]['jsd_max'] + 1e-12 <= math.log(2) + 1e-9"

# Bad input: a clear message and a nonzero exit each.
"$saccade" adversarial 1 --db "$db" --layer 30 --head 3 > "$tmp/e1" 2>&1
expect_fail bad-layer "$tmp/e1" "Layer 30 is outside the model's layers 0 to 29" $?
"$saccade" adversarial 1 --db "$db" --layer 29 --epsilon 0 > "$tmp/e2" 2>&1
expect_fail bad-epsilon "$tmp/e2" "--epsilon values are in (0, 1]" $?
"$saccade" adversarial 1 --db "$db" --layer 29 --row 0 > "$tmp/e3" 2>&1
expect_fail row-0 "$tmp/e3" "--row is a query row from 1" $?
"$saccade" adversarial 99 --db "$db" --layer 29 > "$tmp/e4" 2>&1
expect_fail no-run "$tmp/e4" "no run 99" $?
"$saccade" adversarial 1 --db "$db" > "$tmp/e5" 2>&1
expect_fail no-layer "$tmp/e5" "--layer L is required" $?
"$saccade" adversarial 1 --db "$db" --layer 29 --head 9 > "$tmp/e6" 2>&1
expect_fail bad-head "$tmp/e6" "Head 9 is outside the model's heads 0 to 8" $?
"$saccade" adversarial 1 --db "$db" --layer 29 --row 7 > "$tmp/e7" 2>&1
expect_fail row-outside "$tmp/e7" "Row 7 is outside 1 to 4" $?
[ "$(adv_studies)" = 3 ] && passes=$((passes + 1)) \
  || { echo "FAIL: a refused call stored a study"; fails=$((fails + 1)); }

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
