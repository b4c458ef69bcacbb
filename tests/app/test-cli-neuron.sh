#!/bin/sh
# test-cli-neuron.sh — `saccade neuron` read the way a script reads it: a sentence captured,
# then two heads (an early and the last layer, different KV heads) with --json --all-queries,
# where for EVERY query of the head Python redoes the softmax of the shown scaled scores and
# sets it against the stored probabilities. The store keeps fp16: a probability p in
# [2^-14, 1] is rounded to 11 significant bits, |p_fp16 − p| <= 2^-12 p (half an ulp); we
# allow a whole ulp, 2^-11 p, plus 1e-5 for the forward's float arithmetic against the
# shown double softmax and fp16's subnormals below 6e-5 — at most 5e-4 for p near 1 —
# for every key of every query, and check the head-wide max the verb reports is <= 1e-3. The softmax of the scaled scores must sum to 1.
# Also: q_i · k_j from the shown vectors is the shown dot, and the product vector is q ∘ k;
# the text output; bad layer, query, run, missing options and a head the run did not keep
# refused with their message; a kept head of a partial capture works.
# Usage: test-cli-neuron.sh PATH/TO/saccade   (fails without the default model or
# Python: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/n.sqlite"

"$saccade" capture --db "$db" "The cat chased the ball because it was tired, so it slept." \
  > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"

for lh in "2 1" "29 7"; do
  set -- $lh
  "$saccade" neuron --db "$db" 1 --layer "$1" --head "$2" --query 4 --json --all-queries \
    > "$tmp/n$1.json" 2> "$tmp/n$1.err"
  check "json-$1-stderr-empty" "$tmp/n$1.json" '"layer" :'
  pycheck "softmax-equals-stored-$1.$2" "$tmp/n$1.json" "
assert d['layer'] == $1 and d['head'] == $2 and d['kv_head'] == $2 // 3, d
n = d['n_tokens']
assert n >= 12 and len(d['queries']) == n, (n, len(d['queries']))
worst = 0.0
for i, q in enumerate(d['queries']):
    s, st = q['scaled'], q['stored']
    assert len(s) == i + 1 and len(st) == i + 1
    m = max(s)
    e = [math.exp(x - m) for x in s]
    z = sum(e)
    w = [x / z for x in e]
    assert abs(sum(w) - 1) < 1e-12
    assert abs(sum(st) - 1) < 1e-2, (i, sum(st))  # fp16 rounding of i + 1 values
    for j in range(i + 1):
        assert abs(w[j] - st[j]) <= 2 ** -11 * w[j] + 1e-5, (i, j, w[j], st[j])
        worst = max(worst, abs(w[j] - st[j]))
assert abs(worst - d['max_diff']) < 1e-9, (worst, d['max_diff'])
assert d['max_diff'] <= 1e-3 and d['max_sum_error'] < 1e-12
print('head $1.$2: max |softmax - stored| over every query', worst, file=sys.stderr)
"
  pycheck "vectors-$1.$2" "$tmp/n$1.json" "
D = d['head_dim']
q = d['q']
assert d['query'] == 4 and len(q) == D and len(d['keys']) == 5
for k in d['keys']:
    assert len(k['k']) == D and len(k['product']) == D
    for a, b, p in zip(q, k['k'], k['product']):
        assert abs(a * b - p) <= 1e-5 * max(1, abs(p))
    dot = sum(a * b for a, b in zip(q, k['k']))
    assert abs(dot - k['dot']) <= 1e-4 * max(1, abs(dot)), (dot, k['dot'])
    assert abs(k['scaled'] - k['dot'] * d['attn_scale']) <= 1e-9 * max(1, abs(k['dot']))
    assert abs(k['weight'] - k['stored']) <= 2 ** -11 * k['weight'] + 1e-5
assert abs(sum(k['weight'] for k in d['keys']) - 1) < 1e-12
"
done

# Text: a row per key and the head-wide line.
"$saccade" neuron --db "$db" 1 --layer 2 --head 1 --query 3 > "$tmp/t.txt" 2>&1
check text-header "$tmp/t.txt" "head L2.H1 (KV head 0), query 3"
check text-row "$tmp/t.txt" "^     3  "
check text-max "$tmp/t.txt" "every query of the head: max |weight − stored| = "

# Bad input: a clear message and a nonzero exit each.
"$saccade" neuron --db "$db" 1 --layer 30 --head 0 > "$tmp/e1" 2>&1
expect_fail bad-layer "$tmp/e1" "Head L30.H0 is outside the model: layers 0–29, heads 0–8" $?
"$saccade" neuron --db "$db" 1 --layer 0 --head 9 > "$tmp/e2" 2>&1
expect_fail bad-head "$tmp/e2" "Head L0.H9 is outside the model" $?
"$saccade" neuron --db "$db" 1 --layer 0 --head 0 --query 99 > "$tmp/e3" 2>&1
expect_fail bad-query "$tmp/e3" "--query 99 is outside run 1's tokens 0.." $?
"$saccade" neuron --db "$db" 42 --layer 0 --head 0 > "$tmp/e4" 2>&1
expect_fail no-run "$tmp/e4" "no run 42" $?
"$saccade" neuron --db "$db" 1 --head 0 > "$tmp/e5" 2>&1
expect_fail no-layer "$tmp/e5" "neuron needs --layer L and --head H" $?

# A run that kept only heads of layer 0: another head is refused by name.
"$saccade" capture --db "$db" --layers 0 --heads 0,1 "A short one." > "$tmp/cap2" 2>&1
check capture-partial "$tmp/cap2" "^2$"
"$saccade" neuron --db "$db" 2 --layer 1 --head 0 > "$tmp/e6" 2>&1
expect_fail head-not-kept "$tmp/e6" "Run 2 did not keep head L1.H0" $?
"$saccade" neuron --db "$db" 2 --layer 0 --head 1 --json --all-queries > "$tmp/k.json" 2>&1
pycheck kept-head "$tmp/k.json" "
assert d['layer'] == 0 and d['head'] == 1 and d['max_diff'] <= 1e-3, d['max_diff']"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
