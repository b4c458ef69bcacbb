#!/bin/sh
# test-cli-qwen2-1.5b.sh — Qwen2.5-Coder-1.5B-Instruct (issue 28: the second Qwen, 28 layers
# of 12 query heads over 2 KV heads, head dim 128, a separate output matrix), from the
# command line:
#   info         its shape, read from the file
#   tokenize     the same ids as the 0.5B model on the same strings (one vocabulary, one
#                pre-tokenizer), when that model is present too
#   generate     "The capital of France is" → " Paris" (greedy)
#   capture      stores 28 x 12 heads of a sentence; every stored row sums to 1
#   study dla    a forward study runs on the run; its heads and MLPs sum to the logit
# The numbers against llama.cpp and the float64 reference are test-qwen2-model's on the 0.5B
# model (which CI fetches) and test-qwen2-1.5b-model's on this one (same skip rule).
# Usage: test-cli-qwen2-1.5b.sh PATH/TO/saccade. Exits 77 (skip) without the model: it is
# 1.1 GB, for benchmarks and this test, and CI does not fetch it (data/fetch-model.sh
# qwen2.5-1.5b does; .ci/run allows this one skip by its reason).
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
qwen=${SACCADE_QWEN2_15B_MODEL:-$src/data/models/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf}
small=${SACCADE_QWEN2_MODEL:-$src/data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf}
if [ ! -f "$qwen" ]; then
  echo "1..0 # SKIP the Qwen2.5-Coder-1.5B-Instruct model is not fetched ($qwen): run data/fetch-model.sh qwen2.5-1.5b"
  exit 77
fi
need_python_modules json
export SACCADE_MODEL="$qwen"
db="$tmp/q.sqlite"

"$saccade" info > "$tmp/info" 2>&1
check info-name "$tmp/info" "^Model *Qwen2.5-Coder 1.5B Instruct · Q4_K_M$"
check info-arch "$tmp/info" "^Architecture qwen2, 28 layers, embedding 1536, feed-forward 8960$"
check info-heads "$tmp/info" "12 query heads over 2 KV heads (groups of 6), head dim 128"
check info-output "$tmp/info" "output separate"
check info-biases "$tmp/info" "^Particulars  query, key and value biases"

for text in "x=12345" "def fib(n): return n if n < 2 else fib(n-1)+fib(n-2)" "猫追球，它累了。"; do
  "$saccade" tokenize --ids "$text" > "$tmp/ids-big" 2>&1
  if [ -f "$small" ]; then
    "$saccade" tokenize -m "$small" --ids "$text" > "$tmp/ids-small" 2>&1
    if cmp -s "$tmp/ids-big" "$tmp/ids-small"; then passes=$((passes + 1)); else
      echo "FAIL: tokenize '$text': the 1.5B and 0.5B models disagree:"; cat "$tmp/ids-big" "$tmp/ids-small"
      fails=$((fails + 1))
    fi
  fi
done

"$saccade" generate -n 2 "The capital of France is" > "$tmp/gen" 2>&1
check generate-paris "$tmp/gen" "^ Paris"

"$saccade" capture --db "$db" "When Mary and John went to the store, John gave a drink to" > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" show 1 --db "$db" > "$tmp/show" 2>&1
check show "$tmp/show" "Qwen2.5-Coder 1.5B Instruct · Q4_K_M (qwen2, 28 layers x 12 heads)"
"$saccade" export 1 --db "$db" --layer 27 --head 11 --format json -o "$tmp/head.json" > "$tmp/export" 2>&1
pycheck rows-sum-to-one "$tmp/head.json" "
w = d['weights']
assert len(w) == d['n_query'] == d['n_key'] == len(d['tokens']), (len(w), d['n_query'])
assert d['causal'] and len(w) >= 12, len(w)
for i, row in enumerate(w):
    assert abs(sum(row[:i + 1]) - 1) < 2e-3, (i, sum(row[:i + 1]))
    assert all(v == 0 for v in row[i + 1:]), i"

"$saccade" dla 1 --db "$db" --target " Mary" --contrast " John" --json > "$tmp/dla" 2> "$tmp/dla.err"
pycheck dla-decomposes "$tmp/dla" "
assert len(d['heads']) == 28 * 12 and len(d['mlp']) == 28
assert d['target']['piece'] == ' Mary' and d['contrast']['piece'] == ' John'
heads = sum(h['dla'] for h in d['heads'])
assert abs(heads - d['heads_total']) < 1e-6 * max(1, abs(heads)), (heads, d['heads_total'])
assert abs(sum(d['mlp']) - d['mlp_total']) < 1e-6 * max(1, abs(d['mlp_total']))
# the decomposition of logit(Mary) - logit(John): embedding + heads + MLPs (the final norm's
# scale frozen); the model prefers the indirect object
total = d['embed'] + d['heads_total'] + d['mlp_total']
assert abs(total - d['logit_clean']) < 1e-2 * max(1, abs(d['logit_clean'])), (total, d['logit_clean'])
assert d['logit_clean'] > 0, d['logit_clean']"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
