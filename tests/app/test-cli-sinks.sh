#!/bin/sh
# test-cli-sinks.sh — `saccade sinks` (the attention-sink rate of Gu et al. 2025) and
# `saccade rollout --exclude-first`, read the way a script reads them, on the default model:
#   - the JSON's shape: three inputs (natural, random, repeated) of T ids each, a mass per
#     head, per-layer rates, the top heads;
#   - invariants that hold for any model: every mass is a mean over all T queries of a
#     causal head, so 1/T <= mass <= 1 (row 0 puts 1 on key 0); the rate is the share of
#     masses > epsilon, per layer and overall; the top heads are the largest masses; at
#     --epsilon 0 every head is a sink; the repeated input is one id T times (SmolLM2 adds no
#     BOS) and its rate differs from natural text's; the same seed gives the same random ids,
#     another seed others;
#   - bad options refused with their message; the text table;
#   - rollout without the first token: the JSON and the text say which was used, token 0
#     gets nothing and the row still sums to 1;
#   - with Gemma 3 270M present (data/models/ or $SACCADE_GEMMA_MODEL): its first token is
#     <bos> in all three inputs, and --no-bos takes it away.
# Usage: test-cli-sinks.sh PATH/TO/saccade   (fails without the default model or Python:
# tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"

"$saccade" sinks --json > "$tmp/s.json" 2> "$tmp/s.err"
check json-out "$tmp/s.json" '"inputs" : \['
pycheck shape-and-invariants "$tmp/s.json" "
L, H, T, eps = d['n_layers'], d['n_heads'], d['n_tokens'], d['epsilon']
assert (L, H, T, eps) == (30, 9, 64, 0.3), (L, H, T, eps)
assert [x['input'] for x in d['inputs']] == ['natural', 'random', 'repeated']
for x in d['inputs']:
    m = x['head_mass']
    assert len(m) == L and all(len(r) == H for r in m)
    flat = [v for r in m for v in r]
    assert all(1 / T - 1e-6 <= v <= 1 + 1e-6 for v in flat), (x['input'], min(flat), max(flat))
    n = sum(v > eps for v in flat)
    assert x['n_sinks'] == n and x['n_heads_total'] == L * H, (x['n_sinks'], n)
    assert 0 <= x['sink_rate'] <= 1 and abs(x['sink_rate'] - n / (L * H)) < 1e-12
    assert abs(x['mean_mass'] - sum(flat) / len(flat)) < 1e-9
    for l in range(L):
        assert abs(x['layer_sink_rate'][l] - sum(v > eps for v in m[l]) / H) < 1e-12
        assert abs(x['layer_mean_mass'][l] - sum(m[l]) / H) < 1e-9
    top = x['top']
    assert len(top) == 5
    want = sorted(flat, reverse=True)[:5]
    assert [t['mass'] for t in top] == want, ([t['mass'] for t in top], want)
    assert all(m[t['layer']][t['head']] == t['mass'] for t in top)
    assert len(x['tokens']) == T and x['tokens'][0]['id'] == x['first_token']['id']
    assert x['first_token_is_bos'] is False  # SmolLM2 adds no BOS
nat, rnd, rep = d['inputs']
assert len({t['id'] for t in rep['tokens']}) == 1, 'the repeated input is one id'
assert rep['first_token']['piece'] == ' the', rep['first_token']
assert nat['first_token']['piece'] == 'The', nat['first_token']
assert nat['sink_rate'] != rep['sink_rate'], (nat['sink_rate'], rep['sink_rate'])
"

# The same seed, the same random ids; another seed, others. Natural and repeated never move.
"$saccade" sinks --json > "$tmp/s0.json" 2>&1
"$saccade" sinks --json --seed 7 > "$tmp/s7.json" 2>&1
python -c "
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:4])
ids = lambda d, k: [t['id'] for t in d['inputs'][k]['tokens']]
assert ids(a, 1) == ids(b, 1) and a['inputs'][1]['head_mass'] == b['inputs'][1]['head_mass']
assert ids(a, 1) != ids(c, 1)
assert ids(a, 0) == ids(c, 0) and ids(a, 2) == ids(c, 2)
assert c['seed'] == 7
" "$tmp/s.json" "$tmp/s0.json" "$tmp/s7.json" > "$tmp/py" 2>&1 \
  && passes=$((passes + 1)) || { echo "FAIL: seeds:"; cat "$tmp/py"; fails=$((fails + 1)); }

# epsilon 0: every head's mass is >= 1/T > 0, so every head is a sink; a shorter T.
"$saccade" sinks --json --epsilon 0 --tokens 16 --top 2 > "$tmp/e0.json" 2>&1
pycheck epsilon-zero "$tmp/e0.json" "
assert d['n_tokens'] == 16 and d['epsilon'] == 0
for x in d['inputs']:
    assert x['sink_rate'] == 1 and x['n_sinks'] == 270 and len(x['top']) == 2, x['input']
    assert len(x['tokens']) == 16
    assert min(v for r in x['head_mass'] for v in r) >= 1 / 16 - 1e-6
"

# Text: the table's header and a row per input.
"$saccade" sinks > "$tmp/t.txt" 2>&1
check text-title "$tmp/t.txt" "attention sinks (Gu et al. 2025)"
check text-header "$tmp/t.txt" "input     first token    which is .* sink rate sinks/heads mean mass"
check text-natural "$tmp/t.txt" "^  natural   'The' "
check text-repeated "$tmp/t.txt" "^  repeated  '␣the' "
check text-layers "$tmp/t.txt" "^     29  "
check text-top "$tmp/t.txt" "top sink heads"

# Bad options.
"$saccade" sinks --epsilon 1.5 > "$tmp/b1" 2>&1
expect_fail bad-epsilon "$tmp/b1" "sinks needs 0 <= --epsilon < 1" $?
"$saccade" sinks --tokens 1 > "$tmp/b2" 2>&1
expect_fail bad-tokens "$tmp/b2" "--tokens >= 2" $?
"$saccade" sinks --tokens 400 > "$tmp/b3" 2>&1
expect_fail long-tokens "$tmp/b3" "the natural text is [0-9]* tokens long" $?
"$saccade" sinks extra > "$tmp/b4" 2>&1
expect_fail no-args "$tmp/b4" "sinks takes no arguments" $?

# Rollout and flow without the first token.
db="$tmp/r.sqlite"
"$saccade" capture --db "$db" "When Mary and John went to the store, John gave a drink to" \
  > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" rollout 1 --db "$db" --flow --json > "$tmp/keep.json" 2>&1
"$saccade" rollout 1 --db "$db" --flow --json --exclude-first > "$tmp/excl.json" 2>&1
python -c "
import json, sys
k, x = (json.load(open(f)) for f in sys.argv[1:3])
assert k['first_token'] == 'kept' and x['first_token'] == 'excluded', (k['first_token'], x['first_token'])
r, f = x['rollout_target'], x['flow_target']
assert r[0] == 0 and f[0] == 0, (r[0], f[0])
# Renormalised rows sum to 1 in double; the kept fp16 rows to 1 within their rounding.
assert abs(sum(r) - 1) < 1e-9 and abs(sum(k['rollout_target']) - 1) < 1e-3
for i, row in enumerate(x['rollout']):
    assert abs(sum(row) - 1) < 1e-9 and (i == 0 or row[0] == 0), i
assert k['rollout_target'][0] > 0.5  # the sink, kept
" "$tmp/keep.json" "$tmp/excl.json" > "$tmp/py" 2>&1 \
  && passes=$((passes + 1)) || { echo "FAIL: rollout-exclude-first:"; cat "$tmp/py"; fails=$((fails + 1)); }
"$saccade" rollout 1 --db "$db" --exclude-first > "$tmp/rx.txt" 2>&1
check rollout-text-excluded "$tmp/rx.txt" "^First token excluded: key 0 removed from every attention row"
"$saccade" rollout 1 --db "$db" > "$tmp/rk.txt" 2>&1
check rollout-text-kept "$tmp/rk.txt" "^First token kept"

# --norm: the weight-norm gap beside the mass (issue 27 item 4), from a second pass per input
# (norm-based attention's). Its weight on the first token is over the rows i >= 1 and the
# mass over all T rows, row 0's weight 1 included: T * mass = 1 + (T - 1) * weight, two
# passes agreeing. Norm shares lie in [0, 1]; the norm sink rate counts them as the sink
# rate counts masses; the CSV holds the JSON's numbers; the text has the columns.
"$saccade" sinks --norm --json --tokens 24 --top 3 --csv "$tmp/n.csv" > "$tmp/n.json" 2> "$tmp/n.err"
check norm-json-out "$tmp/n.json" '"head_norm_share" : \['
pycheck norm-gap "$tmp/n.json" "
import csv
L, H, T, eps = d['n_layers'], d['n_heads'], d['n_tokens'], d['epsilon']
assert 'norm_definition' in d
rows = list(csv.DictReader(open('$tmp/n.csv')))
assert len(rows) == 3 * L * H, len(rows)
k = 0
for x in d['inputs']:
    m, w, s = x['head_mass'], x['head_weight_first'], x['head_norm_share']
    flat = [v for r in s for v in r]
    assert all(-1e-9 <= v <= 1 + 1e-9 for v in flat), (min(flat), max(flat))
    assert x['n_norm_sinks'] == sum(v > eps for v in flat)
    assert abs(x['norm_sink_rate'] - x['n_norm_sinks'] / (L * H)) < 1e-12
    assert abs(x['mean_norm_share'] - sum(flat) / len(flat)) < 1e-9
    for l in range(L):
        for h in range(H):
            assert abs(T * m[l][h] - (1 + (T - 1) * w[l][h])) < 2e-4 * T, (x['input'], l, h, m[l][h], w[l][h])
            r = rows[k]; k += 1
            assert (r['input'], int(r['layer']), int(r['head'])) == (x['input'], l, h)
            assert abs(float(r['norm_share']) - s[l][h]) < 1e-7 and abs(float(r['mass']) - m[l][h]) < 1e-7
            assert abs(float(r['gap']) - (w[l][h] - s[l][h])) < 1e-7
    for t in x['top']:
        assert t['norm_share'] == s[t['layer']][t['head']] and t['weight_first'] == w[t['layer']][t['head']]
# the sink heads of natural text move less through the first token than their weight says
nat = d['inputs'][0]
gaps = [w - s for rw, rs in zip(nat['head_weight_first'], nat['head_norm_share']) for w, s in zip(rw, rs)]
assert max(gaps) > 0.2, max(gaps)
"
"$saccade" sinks --norm --tokens 24 --top 2 > "$tmp/n.txt" 2>&1
check norm-text-columns "$tmp/n.txt" "norm sink rate mean norm share"
check norm-text-gaps "$tmp/n.txt" "^  largest weight-norm gaps"
check norm-text-gap-row "$tmp/n.txt" "^  random    L[0-9]*\.H[0-9] ([0-9.]* - [0-9.]*)"
check norm-text-top "$tmp/n.txt" "^  natural   L[0-9]*\.H[0-9] ([0-9.]* | [0-9.]*, norm [0-9.]*)"
"$saccade" sinks --csv /nonexistent/dir/x.csv > "$tmp/bad" 2>&1
check csv-unwritable "$tmp/bad" "x.csv"

# Gemma 3: <bos> is the first token of every input unless --no-bos.
gemma=${SACCADE_GEMMA_MODEL:-$src/data/models/gemma-3-270m-q4_k_m.gguf}
if [ -f "$gemma" ]; then
  "$saccade" sinks -m "$gemma" --json --top 1 > "$tmp/g.json" 2>&1
  "$saccade" sinks -m "$gemma" --json --top 1 --no-bos > "$tmp/gn.json" 2>&1
  python -c "
import json, sys
g, n = (json.load(open(f)) for f in sys.argv[1:3])
assert (g['n_layers'], g['n_heads']) == (18, 4)
for x in g['inputs']:
    assert x['first_token_is_bos'] and x['first_token']['piece'] == '<bos>', x['first_token']
    assert len({t['id'] for t in x['tokens'][1:]}) == 1 or x['input'] != 'repeated'
for x in n['inputs']:
    assert not x['first_token_is_bos'] and x['first_token']['piece'] != '<bos>'
assert n['no_bos'] is True
" "$tmp/g.json" "$tmp/gn.json" > "$tmp/py" 2>&1 \
    && passes=$((passes + 1)) || { echo "FAIL: gemma-bos:"; cat "$tmp/py"; fails=$((fails + 1)); }
else
  echo "note: no Gemma 3 model at $gemma: its part is not run"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
