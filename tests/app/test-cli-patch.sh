#!/bin/sh
# test-cli-patch.sh — `saccade study patch`, `path-patch` and `lens`: activation and path
# patching and the logit lens from the command line (engine/study/sc-patch-study.h,
# sc-lens-study.h) on SmolLM2-135M, on the indirect-object sentence.
#
#   - `study --list` lists it with its options;
#   - denoising every head of "When Mary and John went to the store, John gave a drink to"
#     against "..., Mary gave a drink to" on logit(" Mary") - logit(" John"): the clean run
#     prefers Mary, the corrupted John; 270 cells, each effect (m - m_corrupted) /
#     (m_clean - m_corrupted) of its own m; computed, then read back with the same numbers;
#     the text names the metric and draws the layer × head map;
#   - the residual, noising, on a short pair: every cell's effect of its m, and the residual
#     entering layer 0 at the one position where the prompts differ carries the whole
#     difference (effect 0 to 1e-4: the corrupted run itself);
#   - a head's values, denoising, on the short pair: 270 cells, each effect of its m, and
#     the layer × head map;
#   - attribution patching of the same pair ranks the heads as exact patching does;
#   - path patching of the same pair (senders L25.H0, L27.H3 into the later heads'
#     queries): the layer × head grid, receivers from layer 28, the cells before it the
#     corrupted run's m exactly; refusals of senders outside the model, in the last layer,
#     missing or malformed;
#   - the logit lens of the clean run: every layer, the last the model's own output;
#   - refused with a message naming what was wrong: no --corrupted, a corrupted run of
#     another length, one that is not there, the contrast equal to the target.
# Usage: test-cli-patch.sh PATH/TO/saccade
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/patch.sqlite"

capture () { # text: stores a run, quietly
  "$saccade" capture --db "$db" "$1" > "$tmp/cap" 2>&1 \
    || { fail "capture '$1' failed:"; sed 's/^/  | /' "$tmp/cap"; }
}
capture "When Mary and John went to the store, John gave a drink to"   # run 1
capture "When Mary and John went to the store, Mary gave a drink to"   # run 2
capture "The cat sat on the"                                           # run 3
capture "The dog sat on the"                                           # run 4
capture "Mary gave a drink to"                                         # run 5

"$saccade" study --list > "$tmp/list" 2>&1
check list-patch "$tmp/list" "^  patch "
check list-corrupted "$tmp/list" "^      --corrupted "
check list-path-patch "$tmp/list" "^  path-patch "
check list-senders "$tmp/list" "^      --senders "

"$saccade" study patch 1 --corrupted 2 --target " Mary" --contrast " John" --db "$db" --json \
  > "$tmp/h1.json" 2> "$tmp/h1.err" || { fail "study patch failed:"; sed 's/^/  | /' "$tmp/h1.err"; }
"$saccade" study patch 1 --corrupted 2 --target " Mary" --contrast " John" --db "$db" --json \
  > "$tmp/h2.json" 2> "$tmp/h2.err" || { fail "study patch (again) failed:"; sed 's/^/  | /' "$tmp/h2.err"; }
"$saccade" tokenize --ids " Mary" > "$tmp/mary" 2>&1
"$saccade" tokenize --ids " John" > "$tmp/john" 2>&1
pycheck heads-json "$tmp/h1.json" "
b = json.load(open('$tmp/h2.json'))
mary, john = int(open('$tmp/mary').read()), int(open('$tmp/john').read())
p = d['patch']
assert d['study'] == 'patch' and d['source'] == 'computed' and b['source'] == 'reused', d['source']
assert d['study_id'] == b['study_id'] > 0
assert d['target'] == mary and p['contrast'] == john, (d['target'], p['contrast'])
assert p['direction'] == 'denoise' and p['what'] == 'heads' and (p['rows'], p['cols']) == (30, 9)
assert p['metric'] == 'logit(target) - logit(contrast)'
assert p['m_clean'] > 2 and p['m_corrupted'] < -2, (p['m_clean'], p['m_corrupted'])
cells = d['cells']
assert len(cells) == 270 and cells == b['cells']
span = p['m_clean'] - p['m_corrupted']
for c in cells:
    assert abs(c['effect'] - (c['m'] - p['m_corrupted']) / span) < 1e-12, c
    assert 'pos' not in c and 0 <= c['head'] < 9
# some head restores a good part of the clean preference; most do next to nothing
effects = sorted(abs(c['effect']) for c in cells)
assert effects[-1] > 0.2 and effects[len(effects) // 2] < 0.02, (effects[-1], effects[135])
"
"$saccade" study patch 1 --corrupted 2 --target " Mary" --contrast " John" --db "$db" \
  > "$tmp/h.txt" 2>&1
check heads-text-reused "$tmp/h.txt" "^reused study [0-9]* from"
check heads-text-metric "$tmp/h.txt" "metric m = logit([0-9]*) - logit([0-9]*) at the last position"
check heads-text-map "$tmp/h.txt" "^  L29 "

# The residual, noising, on a short pair that differs at position 1 (" cat" / " dog").
"$saccade" study patch 3 --corrupted 4 --direction noise --what residual --db "$db" --json \
  > "$tmp/r.json" 2> "$tmp/r.err" || { fail "study patch residual failed:"; sed 's/^/  | /' "$tmp/r.err"; }
pycheck residual-json "$tmp/r.json" "
p = d['patch']
assert p['direction'] == 'noise' and p['what'] == 'residual' and (p['rows'], p['cols']) == (30, 5)
span = p['m_clean'] - p['m_corrupted']
cells = d['cells']
assert len(cells) == 150
for c in cells:
    e = (c['m'] - p['m_corrupted']) / span if abs(span) >= 1e-6 else None
    assert e is None or abs(c['effect'] - e) < 1e-12, c
at = {(c['layer'], c['pos']): c for c in cells}
# before layer 0 the other positions hold the same token in both runs: nothing changes
assert all(abs(at[(0, q)]['effect'] - 1) < 1e-4 for q in (0, 2, 3, 4)), at[(0, 0)]
# position 1 before layer 0 is the corrupted token itself: the corrupted run
assert abs(at[(0, 1)]['effect']) < 1e-4, at[(0, 1)]
"

# A head's values (every position, that query head only), denoising, on the short pair:
# the (layer, head) grid of the heads, each effect of its own m; the text draws the map.
"$saccade" study patch 3 --corrupted 4 --what values --db "$db" --json \
  > "$tmp/v.json" 2> "$tmp/v.err" || { fail "study patch values failed:"; sed 's/^/  | /' "$tmp/v.err"; }
pycheck values-json "$tmp/v.json" "
p = d['patch']
assert p['direction'] == 'denoise' and p['what'] == 'values' and (p['rows'], p['cols']) == (30, 9)
span = p['m_clean'] - p['m_corrupted']
assert abs(span) >= 1e-6, span
cells = d['cells']
assert len(cells) == 270
assert sorted((c['layer'], c['head']) for c in cells) == [(l, h) for l in range(30) for h in range(9)]
for c in cells:
    assert 'pos' not in c and abs(c['effect'] - (c['m'] - p['m_corrupted']) / span) < 1e-12, c
# the values moved something: not every cell is the corrupted run
assert max(abs(c['effect']) for c in cells) > 1e-3
"
"$saccade" study patch 3 --corrupted 4 --what values --db "$db" > "$tmp/v.txt" 2>&1
check values-text-reused "$tmp/v.txt" "^reused study [0-9]* from"
check values-text-map "$tmp/v.txt" "^  L29 "

# Attribution patching of the same pair: the same metric and runs, 270 first-order
# estimates that rank the heads as exact patching does (Spearman rho over the 270 heads'
# effects: measured 0.945; the top-10 heads by |effect| the same ten).
"$saccade" study attribution-patch 1 --corrupted 2 --target " Mary" --contrast " John" --db "$db" \
  --json > "$tmp/a.json" 2> "$tmp/a.err" || { fail "study attribution-patch failed:"; sed 's/^/  | /' "$tmp/a.err"; }
pycheck attribution-json "$tmp/a.json" "
h = json.load(open('$tmp/h1.json'))
p, q = d['patch'], h['patch']
assert d['study'] == 'patch-attribution' and p['method'] == 'attribution' and q['method'] == 'exact'
assert abs(p['m_clean'] - q['m_clean']) < 1e-4 and abs(p['m_corrupted'] - q['m_corrupted']) < 1e-4
x = [c['effect'] for c in d['cells']]
y = [c['effect'] for c in h['cells']]
assert len(x) == len(y) == 270
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0] * len(v)
    for k, i in enumerate(order):
        r[i] = k
    return r
rx, ry = ranks(x), ranks(y)
mx, my = sum(rx) / 270, sum(ry) / 270
rho = sum((a - mx) * (b - my) for a, b in zip(rx, ry)) / math.sqrt(
    sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
assert rho >= 0.9, rho
top = lambda v: set(sorted(range(270), key=lambda i: -abs(v[i]))[:10])
assert len(top(x) & top(y)) >= 8, (top(x), top(y))
"
"$saccade" study attribution-patch 1 --corrupted 2 --what residual --db "$db" > "$tmp/e" 2>&1
expect_fail attribution-residual "$tmp/e" "patch the residual exactly" $?
"$saccade" study attribution-patch 1 --corrupted 2 --what values --db "$db" > "$tmp/e" 2>&1
expect_fail attribution-values "$tmp/e" "estimates heads and head-positions" $?

# The logit lens of the clean run, with the same contrast: 31 entries, the last the
# model's own output (rank 0, m the patch study's m_clean to float32 rounding).
"$saccade" study lens 1 --contrast " John" --db "$db" --json > "$tmp/lens.json" 2> "$tmp/lens.err" \
  || { fail "study lens failed:"; sed 's/^/  | /' "$tmp/lens.err"; }
pycheck lens-json "$tmp/lens.json" "
h = json.load(open('$tmp/h1.json'))
assert d['study'] == 'logit-lens' and d['target'] == h['target'] and d['contrast'] == h['patch']['contrast']
lens = d['lens']
assert [x['layer'] for x in lens] == list(range(31))
assert lens[-1]['rank'] == 0 and lens[-1]['top1'] == d['target'], lens[-1]
assert abs(lens[-1]['m'] - h['patch']['m_clean']) < 1e-4, (lens[-1]['m'], h['patch']['m_clean'])
assert abs(lens[-1]['logp'] - d['logp_clean']) < 1e-4
assert all(x['logp'] <= 0 and x['rank'] >= 0 for x in lens)
"
"$saccade" study lens 1 --db "$db" > "$tmp/lens.txt" 2>&1
check lens-text "$tmp/lens.txt" "row 30 is the model's own output"
"$saccade" study lens 1 --target " Mary" --contrast " Mary" --db "$db" > "$tmp/e" 2>&1
expect_fail lens-contrast-target "$tmp/e" "contrast the target" $?

# Path patching, denoising: senders L27.H3 and L25.H0 (given out of order) into the queries
# of every later head. The grid is every head's; layers 0 .. 27 (at or before the latest
# sender) have no path and hold the corrupted run's m exactly; each receiver's effect is of
# its own m; computed, then read back with the same numbers.
"$saccade" study path-patch 1 --corrupted 2 --senders 27.3,25.0 --component queries \
  --target " Mary" --contrast " John" --db "$db" --json > "$tmp/pp1.json" 2> "$tmp/pp1.err" \
  || { fail "study path-patch failed:"; sed 's/^/  | /' "$tmp/pp1.err"; }
"$saccade" study path-patch 1 --corrupted 2 --senders 25.0,27.3 --component queries \
  --target " Mary" --contrast " John" --db "$db" --json > "$tmp/pp2.json" 2> "$tmp/pp2.err" \
  || { fail "study path-patch (again) failed:"; sed 's/^/  | /' "$tmp/pp2.err"; }
pycheck path-patch-json "$tmp/pp1.json" "
b = json.load(open('$tmp/pp2.json'))
h = json.load(open('$tmp/h1.json'))
p = d['path_patch']
assert d['study'] == 'path-patch' and d['source'] == 'computed' and b['source'] == 'reused', (d['source'], b['source'])
assert d['study_id'] == b['study_id'] > 0 and d['cells'] == b['cells']
assert p['senders'] == '25.0,27.3' and p['component'] == 'queries' and p['direction'] == 'denoise', p
assert p['receivers_from_layer'] == 28 and (p['rows'], p['cols']) == (30, 9), p
assert d['target'] == h['target'] and p['contrast'] == h['patch']['contrast']
assert abs(p['m_clean'] - h['patch']['m_clean']) < 1e-9 and abs(p['m_corrupted'] - h['patch']['m_corrupted']) < 1e-9
span = p['m_clean'] - p['m_corrupted']
cells = d['cells']
assert sorted((c['layer'], c['head']) for c in cells) == [(l, hd) for l in range(30) for hd in range(9)]
for c in cells:
    assert c['receiver'] == (c['layer'] >= 28), c
    if c['layer'] < 28:
        assert c['m'] == p['m_corrupted'] and c['effect'] == 0, c
    else:
        assert abs(c['effect'] - (c['m'] - p['m_corrupted']) / span) < 1e-12, c
# the receivers were run: their m are not all the corrupted run's
assert any(c['m'] != p['m_corrupted'] for c in cells if c['layer'] >= 28)
"
"$saccade" study path-patch 1 --corrupted 2 --senders 25.0,27.3 --component queries \
  --target " Mary" --contrast " John" --db "$db" > "$tmp/pp.txt" 2>&1
check path-patch-text-reused "$tmp/pp.txt" "^reused study [0-9]* from"
check path-patch-text-senders "$tmp/pp.txt" "senders 25.0,27.3 into each later head's queries"
check path-patch-text-receivers "$tmp/pp.txt" "receivers: layers 28 to 29"
check path-patch-text-map "$tmp/pp.txt" "^  L29 "
"$saccade" study path-patch 1 --corrupted 2 --senders 30.0 --db "$db" > "$tmp/e" 2>&1
expect_fail path-sender-outside "$tmp/e" "sender L30.H0 is not a head" $?
"$saccade" study path-patch 1 --corrupted 2 --senders 3.9 --db "$db" > "$tmp/e" 2>&1
expect_fail path-head-outside "$tmp/e" "sender L3.H9 is not a head" $?
"$saccade" study path-patch 1 --corrupted 2 --senders 20.1,29.4 --db "$db" > "$tmp/e" 2>&1
expect_fail path-last-layer "$tmp/e" "no receiver head comes after it" $?
"$saccade" study path-patch 1 --corrupted 2 --db "$db" > "$tmp/e" 2>&1
expect_fail path-no-senders "$tmp/e" "name the sender heads" $?
"$saccade" study path-patch 1 --corrupted 2 --senders "17.4;20.0" --db "$db" > "$tmp/e" 2>&1
expect_fail path-bad-list "$tmp/e" "--senders takes a list of at most" $?
"$saccade" study path-patch 1 --corrupted 2 --senders 20.0 --component heads --db "$db" > "$tmp/e" 2>&1
expect_fail path-bad-component "$tmp/e" "--component takes one of queries, keys, values" $?

# Refused, naming what was wrong.
"$saccade" study patch 1 --db "$db" > "$tmp/e" 2>&1
expect_fail no-corrupted "$tmp/e" "corrupted" $?
"$saccade" study patch 1 --corrupted 5 --db "$db" > "$tmp/e" 2>&1
expect_fail other-length "$tmp/e" "the same length" $?
"$saccade" study patch 1 --corrupted 99 --db "$db" > "$tmp/e" 2>&1
expect_fail no-such-run "$tmp/e" "there is no run 99 in" $?
"$saccade" study patch 1 --corrupted 2 --target " Mary" --contrast " Mary" --db "$db" > "$tmp/e" 2>&1
expect_fail contrast-target "$tmp/e" "contrast is the target" $?
"$saccade" study patch 1 --corrupted 0 --db "$db" > "$tmp/e" 2>&1
expect_fail corrupted-zero "$tmp/e" "--corrupted takes a stored run's id" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
