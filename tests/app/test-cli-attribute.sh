#!/bin/sh
# test-cli-attribute.sh — `saccade attribute` read the way a script reads it: a run captured,
# then every method with 4 integration points: --json checked field by field (Python's json
# module), the CSV's rows, the figure written as PNG and SVG, the study reused on a second
# call (its JSON says "source": "reused" with the first call's study id, and the database
# holds no second attribution study), and bad input refused with its message.
# Usage: test-cli-attribute.sh PATH/TO/saccade   (fails without the default model,
# Python or sqlite3: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_tools sqlite3
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/a.sqlite"

attr_studies() { sqlite3 "$db" "SELECT count(*) FROM studies WHERE kind = 'attribution'"; }

"$saccade" capture --db "$db" "The capital of France is" > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
n=$(sqlite3 "$db" "SELECT count(*) FROM tokens WHERE run_id = 1")

# Computed and stored.
"$saccade" attribute --db "$db" 1 --method all --steps 4 --json --csv "$tmp/a.csv" \
  -o "$tmp/a.png" > "$tmp/a.json" 2> "$tmp/a.err"
check first-exit-stderr-empty "$tmp/a.json" '"study" : "attribution"'
pycheck json "$tmp/a.json" "
n = $n
assert d['source'] == 'computed' and d['study_id'] >= 1, d['source']
assert d['n_tokens'] == n and len(d['tokens']) == n
p = d['params']
assert p['methods'] == ['saliency', 'gradxinput', 'ig', 'grad-rollout'], p
assert p['steps'] == 4 and p['rule'] == 'adaptive' and p['baseline'] == 'token' and p['baseline_token'] == 2, p
for m in p['methods']:
    s = d['scores'][m]
    assert len(s) == n and all(math.isfinite(v) for v in s), (m, s)
assert all(v >= 0 for v in d['scores']['saliency'])
assert all(v >= 0 for v in d['scores']['grad-rollout'])
c = d['completeness']
for k in ('f_x', 'f_baseline', 'sum', 'difference', 'gap', 'gap_rel'):
    assert math.isfinite(c[k]), (k, c)
assert abs(c['sum'] - sum(d['scores']['ig'])) < 1e-6 * max(1, abs(c['sum'])), c
assert abs(c['difference'] - (c['f_x'] - c['f_baseline'])) < 1e-9, c
assert abs(c['gap'] - abs(c['sum'] - c['difference'])) < 1e-6, c
assert d['value'] == c['f_x'] and d['value'] <= 0
assert d['target'] == d['top1'] and d['params']['target'] == -1
assert d['attention']['heads'] == 9
att = [t['attention'] for t in d['tokens']]
assert abs(sum(att) - 1) < 0.01, att
loo = [t['loo'] for t in d['tokens']]
assert loo[-1] is None or (isinstance(loo[-1], float) and math.isnan(loo[-1])), loo
assert all(0 <= v <= 1 for v in loo[:-1]), loo"
# The CSV: a header and one row per token.
check csv-header "$tmp/a.csv" "^pos,token_id,label,attention,loo_tv,saliency,gradxinput,ig,grad_rollout"
[ "$(wc -l < "$tmp/a.csv")" = $((n + 1)) ] && passes=$((passes + 1)) \
  || { echo "FAIL: a.csv has $(wc -l < "$tmp/a.csv") lines, not 1 + $n"; fails=$((fails + 1)); }
check csv-row "$tmp/a.csv" '^3,[0-9]*,"␣France",'
head -c 8 "$tmp/a.png" | grep -q PNG && passes=$((passes + 1)) \
  || { echo "FAIL: a.png is not a PNG"; fails=$((fails + 1)); }

# Reused: the same study, nothing computed or stored again.
"$saccade" attribute --db "$db" 1 --method all --steps 4 --json -o "$tmp/a.svg" \
  > "$tmp/b.json" 2>&1
first=$(python -c 'import json,sys; print(json.load(open(sys.argv[1]))["study_id"])' "$tmp/a.json")
pycheck reused "$tmp/b.json" "
assert d['source'] == 'reused' and d['study_id'] == $first, (d['source'], d['study_id'])
assert d['loo']['reused'] and d['timing']['forward_backward_s'] == 0"
[ "$(attr_studies)" = 1 ] && passes=$((passes + 1)) \
  || { echo "FAIL: $(attr_studies) attribution studies stored, not 1"; fails=$((fails + 1)); }
check svg "$tmp/a.svg" "<svg"

# Text: the table, the completeness line, the timing; another target is another study.
"$saccade" attribute --db "$db" 1 --method ig --steps 4 --rule midpoint --target ' London' \
  > "$tmp/t.txt" 2>&1
check text-header "$tmp/t.txt" "pos  token              attention  leave-one-out"
check text-row "$tmp/t.txt" "␣France"
check text-completeness "$tmp/t.txt" "^completeness: sum [-0-9.]*, f(x) - f(x') [-0-9.]*, gap [0-9.]* ([0-9.]* %)"
check text-target "$tmp/t.txt" "target [0-9]* ␣London"
check text-timing "$tmp/t.txt" "^timing: "
[ "$(attr_studies)" = 2 ] && passes=$((passes + 1)) \
  || { echo "FAIL: another target should store a second study"; fails=$((fails + 1)); }

# A contrast (Yin & Neubig 2022): f = logit(A) − logit(B) = ln p(A) − ln p(B), and
# gradient × input is the difference of the two single-target studies' (the gradient is
# linear in the objective); a third study, its contrast in the params.
"$saccade" attribute --db "$db" 1 --method gradxinput --target ' Paris' --contrast ' London' \
  --json > "$tmp/c.json" 2>&1
"$saccade" attribute --db "$db" 1 --method gradxinput --target ' Paris' --json > "$tmp/pa.json" 2>&1
"$saccade" attribute --db "$db" 1 --method gradxinput --target ' London' --json > "$tmp/lo.json" 2>&1
python -c '
import json, sys
c, a, b = (json.load(open(f)) for f in sys.argv[1:4])
assert c["contrast_label"] == "␣London" and c["params"]["contrast"] == c["contrast"], c
assert c["target"] == a["target"] and c["contrast"] == b["target"]
assert abs(c["value"] - (a["value"] - b["value"])) <= 1e-4, (c["value"], a["value"], b["value"])
ga, gb, gc = (x["scores"]["gradxinput"] for x in (a, b, c))
scale = 1 + max(abs(u) + abs(v) for u, v in zip(ga, gb))
assert all(abs(z - (u - v)) <= 1e-3 * scale for u, v, z in zip(ga, gb, gc)), (ga, gb, gc)
' "$tmp/c.json" "$tmp/pa.json" "$tmp/lo.json" > "$tmp/py" 2>&1 && passes=$((passes + 1)) \
  || { echo "FAIL: contrast:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1)); }
"$saccade" attribute --db "$db" 1 --method gradxinput --target ' Paris' --contrast ' London' \
  > "$tmp/ct.txt" 2>&1
check contrast-text "$tmp/ct.txt" "f(x) = logit(target [0-9]* ␣Paris) - logit(contrast [0-9]* ␣London)"
check contrast-reused "$tmp/ct.txt" "reused"
"$saccade" attribute --db "$db" 1 --target ' Paris' --contrast ' Paris' > "$tmp/e0" 2>&1
expect_fail contrast-is-target "$tmp/e0" "--contrast names the target itself" $?

# Bad input: a clear message and a nonzero exit each.
"$saccade" attribute --db "$db" 1 --method lrp > "$tmp/e1" 2>&1
expect_fail bad-method "$tmp/e1" "--method is saliency, gradxinput, ig, grad-rollout or all" $?
"$saccade" attribute --db "$db" 1 --target ' the capital' > "$tmp/e2" 2>&1
expect_fail two-token-target "$tmp/e2" "--target ' the capital' is 2 tokens" $?
"$saccade" attribute --db "$db" 99 > "$tmp/e3" 2>&1
expect_fail no-run "$tmp/e3" "no run 99" $?
"$saccade" attribute --db "$db" 1 --position 12 --method saliency > "$tmp/e4" 2>&1
expect_fail bad-position "$tmp/e4" "Position 12 is outside run 1" $?
"$saccade" attribute --db "$db" 1 --baseline ones > "$tmp/e5" 2>&1
expect_fail bad-baseline "$tmp/e5" "--baseline is eos, zero or token:ID" $?
"$saccade" attribute --db "$db" 1 -o "$tmp/x.bmp" > "$tmp/e6" 2>&1
expect_fail bad-figure "$tmp/e6" "name it .png, .svg or .pdf" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
