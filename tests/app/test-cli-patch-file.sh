#!/bin/sh
# test-cli-patch-file.sh — `saccade patch`: patching over a file of clean/corrupted pairs
# (app/core/saccade-patch-file.h) and of one stored pair, on SmolLM2-135M.
#
#   - path patching (L23.H3 into each later head's values) over three indirect-object
#     pairs of docs/findings/ioi-pairs.tsv (with a comment and a blank line among them):
#     each pair's m and effects are, to the float, those of `saccade study path-patch` of
#     the same texts captured and stored (the file mode tokenises as `capture` does); the
#     summary is recomputed here from the pairs' effects — the mean of each cell, an
#     interval inside the pairs' range around it, the top shares summing to 1, the exact
#     sign test and Holm's correction over the 54 receiver cells (layers 24 to 29) only;
#     the cells come largest |mean| first; the text names the senders L23.H3, the pairs'
#     tokens and m, and reads the top cell; --figure writes a PNG map;
#   - the residual stream over two pairs of five tokens, noising (positions named by line
#     1's tokens; every statistic of the move from the clean run's effect 1, recomputed
#     here; --figure refused for a position grid);
#   - `saccade patch RUN --corrupted RUN2 --senders ...` is `saccade study path-patch` of the
#     stored pair (read back: the same study);
#   - refused with a message naming the line or the option: a line without a tab, two texts
#     of different token counts, A of two tokens, B equal to A, a file with no pair, invalid
#     UTF-8, no --file, --what with --senders, --component without --senders, senders
#     outside the model, a --bootstrap out of range.
# Usage: test-cli-patch-file.sh PATH/TO/saccade SOURCE_ROOT
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
root=$2
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/patch.sqlite"
pairs="$tmp/pairs.tsv"

{ sed -n 1p "$root/docs/findings/ioi-pairs.tsv"
  sed -n 5,6p "$root/docs/findings/ioi-pairs.tsv"
  echo
  sed -n 9p "$root/docs/findings/ioi-pairs.tsv"; } > "$pairs"
clean1=$(sed -n 2p "$pairs" | cut -f1)
corrupt1=$(sed -n 2p "$pairs" | cut -f2)

"$saccade" patch --file "$pairs" --senders L23.H3 --component values --bootstrap 2000 \
  --json > "$tmp/f.json" 2> "$tmp/f.err" \
  || { fail "patch --file failed:"; sed 's/^/  | /' "$tmp/f.err"; }
"$saccade" capture --db "$db" "$clean1" > /dev/null 2>&1 || fail "capture clean"
"$saccade" capture --db "$db" "$corrupt1" > /dev/null 2>&1 || fail "capture corrupted"
"$saccade" study path-patch 1 --corrupted 2 --senders 23.3 --component values \
  --target " Mary" --contrast " John" --db "$db" --json > "$tmp/s.json" 2> "$tmp/s.err" \
  || { fail "study path-patch failed:"; sed 's/^/  | /' "$tmp/s.err"; }
pycheck file-json "$tmp/f.json" "
s = json.load(open('$tmp/s.json'))
assert d['study'] == 'path-patch' and d['senders'] == '23.3' and d['component'] == 'values'
assert d['direction'] == 'denoise' and (d['rows'], d['cols']) == (30, 9) and d['first_row'] == 24
assert d['n_pairs'] == 3 and [p['line'] for p in d['pairs']] == [2, 3, 5], d['pairs']
assert d['tested'] == 54 and d['bootstrap'] == 2000 and d['base'] == 0
# pair 1 is the stored study of the same texts, to the float
p, sp = d['pairs'][0], s['path_patch']
assert p['target'] == s['target'] and p['contrast'] == sp['contrast']
assert p['m_clean'] == sp['m_clean'] and p['m_corrupted'] == sp['m_corrupted'], (p, sp)
for c in s['cells']:
    assert p['effect'][c['layer'] * 9 + c['head']] == c['effect'], c
# the summary, recomputed from the pairs
E = [q['effect'] for q in d['pairs']]
n = len(E)
def sign_p(v):
    pos, neg = sum(x > 0 for x in v), sum(x < 0 for x in v)
    k, m = min(pos, neg), pos + neg
    return 1.0 if m == 0 else min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m)
cells = d['cells']
assert len(cells) == 54 and all(c['layer'] >= 24 for c in cells)
assert sorted((c['layer'], c['head']) for c in cells) == [(l, h) for l in range(24, 30) for h in range(9)]
ps = sorted((sign_p([e[c['layer'] * 9 + c['head']] for e in E]), i) for i, c in enumerate(cells))
holm, run = {}, 0.0
for j, (pv, i) in enumerate(ps):
    run = max(run, min(1.0, (54 - j) * pv))
    holm[i] = run
for i, c in enumerate(cells):
    v = [e[c['layer'] * 9 + c['head']] for e in E]
    mean = sum(v) / n
    assert abs(c['mean'] - mean) < 1e-12, (c, mean)
    assert min(v) - 1e-12 <= c['ci_lo'] <= c['ci_hi'] <= max(v) + 1e-12, (c, v)
    assert c['agree'] == sum(abs(x) > 0.1 and (x > 0) == (mean > 0) for x in v), c
    assert abs(c['sign_p'] - sign_p(v)) < 1e-12 and abs(c['sign_p_holm'] - holm[i]) < 1e-12, c
    assert c['name'] == 'L%d.H%d' % (c['layer'], c['head'])
assert abs(sum(c['top_share'] for c in cells) - 1) < 1e-9
assert all(abs(a['mean']) >= abs(b['mean']) for a, b in zip(cells, cells[1:]))
# the senders' path into the receivers' values moves something
assert abs(cells[0]['mean']) > 0.05, cells[0]
"

"$saccade" patch --file "$pairs" --senders 23.3 --component values --bootstrap 500 --top 5 \
  --figure "$tmp/map.png" > "$tmp/f.txt" 2>&1 || { fail "patch --file (text) failed:"; sed 's/^/  | /' "$tmp/f.txt"; }
check text-what "$tmp/f.txt" "^path patching from L23.H3 into each later head's values, denoise"
check text-pairs "$tmp/f.txt" "over 3 pairs of"
check text-pair "$tmp/f.txt" "^     2  ␣Mary *␣John *+[0-9]"
check text-cells "$tmp/f.txt" "^the 5 cells that move the metric most from the corrupted run's effect 0"
check text-holm "$tmp/f.txt" "Holm-adjusted over the 54 cells tested"
check text-reading "$tmp/f.txt" "^reading: L2[4-9].H[0-8] moves the metric most"
check text-figure "$tmp/f.txt" "^wrote the mean effect map to"
head -c 8 "$tmp/map.png" | od -An -c | grep -q "P   N   G" || fail "the figure is not a PNG"

# the residual stream over two five-token pairs, positions named by line 1's tokens
printf 'The cat sat on the\tThe dog sat on the\nA cat sat on the\tA dog sat on the\n' > "$tmp/r.tsv"
"$saccade" patch --file "$tmp/r.tsv" --what residual --direction noise --bootstrap 200 --json \
  > "$tmp/r.json" 2> "$tmp/r.err" || { fail "patch --file residual failed:"; sed 's/^/  | /' "$tmp/r.err"; }
pycheck residual-json "$tmp/r.json" "
assert d['what'] == 'residual' and d['direction'] == 'noise' and (d['rows'], d['cols']) == (30, 5)
assert d['tested'] == 150 and len(d['cells']) == 150
names = {(c['layer'], c['pos']): c['name'] for c in d['cells']}
assert names[(3, 1)].startswith('L3 @ 1 ') and 'cat' in names[(3, 1)], names[(3, 1)]
# noising the residual entering layer 0 at the differing position gives the corrupted run
c = [c for c in d['cells'] if (c['layer'], c['pos']) == (0, 1)][0]
assert abs(c['mean']) < 1e-3, c
# noising: a patch that does nothing leaves the clean run (effect 1), so every statistic is
# of the move from 1 — the order, the agreeing pairs, the sign test
assert d['base'] == 1
E = [q['effect'] for q in d['pairs']]
def sign_p(v):
    pos, neg = sum(x > 0 for x in v), sum(x < 0 for x in v)
    k, m = min(pos, neg), pos + neg
    return 1.0 if m == 0 else min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m)
for c in d['cells']:
    v = [e[c['layer'] * 5 + c['pos']] - 1 for e in E]
    mv = sum(v) / len(v)
    assert abs(c['mean'] - (1 + mv)) < 1e-12 and abs(c['sign_p'] - sign_p(v)) < 1e-12, c
    assert c['agree'] == sum(abs(x) > 0.1 and (x > 0) == (mv > 0) for x in v), c
    assert c['ci_lo'] - 1e-12 <= c['ci_hi'] and min(v) + 1 - 1e-12 <= c['ci_lo'], c
assert all(abs(a['mean'] - 1) >= abs(b['mean'] - 1) for a, b in zip(d['cells'], d['cells'][1:]))
# the position where the texts differ carries the whole difference into layer 0
assert abs(d['cells'][0]['mean'] - 1) > 0.99, d['cells'][0]
"
"$saccade" patch --file "$tmp/r.tsv" --what residual --bootstrap 200 --figure "$tmp/r.png" \
  > "$tmp/e" 2>&1
expect_fail residual-figure "$tmp/e" "draws a layer × head map" $?

# one stored pair: `study path-patch`, read back
"$saccade" patch 1 --corrupted 2 --senders 23.3 --component values --target " Mary" \
  --contrast " John" --db "$db" --json > "$tmp/one.json" 2> "$tmp/one.err" \
  || { fail "patch RUN failed:"; sed 's/^/  | /' "$tmp/one.err"; }
pycheck run-mode "$tmp/one.json" "
s = json.load(open('$tmp/s.json'))
assert d['source'] == 'reused' and d['study_id'] == s['study_id'] and d['cells'] == s['cells']
"

# refusals
printf 'When Mary and John went to the store\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --senders 23.3 > "$tmp/e" 2>&1
expect_fail no-tab "$tmp/e" "bad.tsv:1: 1 fields; a pair is CLEAN<tab>CORRUPTED" $?
printf '# two lengths\nThe cat sat on the\tThe big dog sat on the\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --senders 23.3 > "$tmp/e" 2>&1
expect_fail lengths "$tmp/e" "line 2: the clean text is 5 tokens and the corrupted 6" $?
printf 'The cat sat on the\tThe dog sat on the\t mat and\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --senders 23.3 > "$tmp/e" 2>&1
expect_fail a-two-tokens "$tmp/e" "line 1's token A ' mat and' is 2 tokens" $?
printf 'The cat sat on the\tThe dog sat on the\t mat\t mat\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" --senders 23.3 > "$tmp/e" 2>&1
expect_fail b-is-a "$tmp/e" "line 1: B is A itself" $?
printf '# nothing\n\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" > "$tmp/e" 2>&1
expect_fail no-pairs "$tmp/e" "holds no sentence" $?
printf 'The cat \377 sat\tThe dog sat\n' > "$tmp/bad.tsv"
"$saccade" patch --file "$tmp/bad.tsv" > "$tmp/e" 2>&1
expect_fail not-utf8 "$tmp/e" "bad.tsv:1: the line is not valid UTF-8" $?
"$saccade" patch > "$tmp/e" 2>&1
expect_fail no-file "$tmp/e" "patch needs --file PAIRS, or a stored run" $?
"$saccade" patch --file "$pairs" --senders 23.3 --what keys > "$tmp/e" 2>&1
expect_fail what-and-senders "$tmp/e" "--what is for activation patching" $?
"$saccade" patch --file "$pairs" --component keys > "$tmp/e" 2>&1
expect_fail component-alone "$tmp/e" "give --senders too" $?
"$saccade" patch --file "$pairs" --senders L30.H0 > "$tmp/e" 2>&1
expect_fail sender-outside "$tmp/e" "L30.H0 is not a head of" $?
"$saccade" patch --file "$pairs" --senders 23.3 --bootstrap 0 > "$tmp/e" 2>&1
expect_fail bootstrap "$tmp/e" "--bootstrap 0 is not in 1..100000" $?
"$saccade" patch --file "$pairs" --direction sideways > "$tmp/e" 2>&1
expect_fail direction "$tmp/e" "--direction 'sideways' is none of denoise, noise" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
