#!/bin/sh
# test-cli-qwen2.sh — Qwen2.5-Coder-0.5B-Instruct (GGUF arch "qwen2") from the command line:
#   info         names it from the file ("Qwen2.5-Coder 0.5B Instruct · Q4_K_M") and its shape
#   tokenize     the qwen2 pre-tokenizer: every digit a token (ids 16..20 for "12345")
#   capture      stores 24 x 14 heads of a sentence; show reads them back
#   study dla    a forward study runs on the run
#   attribute    every gradient method (4 integration points) computed and stored: finite
#                scores, one per token (the backward pass; its numbers against torch
#                autograd are test-grad-arch's)
#   study attribution (4 points), study adversarial (layer 23 head 0, 5 steps per epsilon)
#                run on the run (exit 0)
# The numbers themselves are test-qwen2-model's (llama.cpp and the float64 reference).
# Usage: test-cli-qwen2.sh PATH/TO/saccade. Exits 77 (skip) without the model, like the Gemma
# tests: data/fetch-model.sh qwen2.5-0.5b fetches it (.ci/run does).
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
qwen=${SACCADE_QWEN2_MODEL:-$src/data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf}
if [ ! -f "$qwen" ]; then
  echo "1..0 # SKIP the Qwen2.5-Coder-0.5B-Instruct model is not present ($qwen): run data/fetch-model.sh qwen2.5-0.5b"
  exit 77
fi
export SACCADE_MODEL="$qwen"
db="$tmp/q.sqlite"

"$saccade" info > "$tmp/info" 2>&1
check info-name "$tmp/info" "^Model *Qwen2.5-Coder 0.5B Instruct · Q4_K_M$"
check info-arch "$tmp/info" "^Architecture qwen2, 24 layers, embedding 896, feed-forward 4864$"
check info-heads "$tmp/info" "14 query heads over 2 KV heads (groups of 7), head dim 64"
check info-output "$tmp/info" "output separate"

"$saccade" tokenize --json "x=12345" > "$tmp/tok.json" 2>&1
pycheck tokenize-digits "$tmp/tok.json" "
ids = [t['id'] for t in d['tokens']]
assert ids[-5:] == [16, 17, 18, 19, 20], ids"

"$saccade" capture --db "$db" "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" show 1 --db "$db" > "$tmp/show" 2>&1
check show "$tmp/show" "Qwen2.5-Coder 0.5B Instruct · Q4_K_M (qwen2, 24 layers x 14 heads)"

"$saccade" study dla 1 --db "$db" > "$tmp/dla" 2>&1
rc=$?
[ "$rc" -eq 0 ] && passes=$((passes + 1)) || { echo "FAIL: study dla exited $rc:"; cat "$tmp/dla"; fails=$((fails + 1)); }

"$saccade" attribute 1 --db "$db" --method all --steps 4 --json > "$tmp/attr" 2> "$tmp/attr.err"
pycheck attribute "$tmp/attr" "
n = d['n_tokens']
assert d['source'] == 'computed' and n == len(d['tokens']) == 10, (d['source'], n)
for m in ('saliency', 'gradxinput', 'ig', 'grad-rollout'):
    s = d['scores'][m]
    assert len(s) == n and all(math.isfinite(v) for v in s), (m, s)
assert any(v > 0 for v in d['scores']['saliency'])
assert d['value'] <= 0 and d['target'] == d['top1']"
# small settings: the defaults (50 integration points; every head of layer 0, 100 Adam steps
# per epsilon) take minutes on the 0.5B model
for study in "attribution --steps 4" "adversarial --layer 23 --head 0 --iterations 5"; do
  "$saccade" study $study 1 --db "$db" > "$tmp/study" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && passes=$((passes + 1)) \
    || { echo "FAIL: study $study exited $rc:"; cat "$tmp/study"; fails=$((fails + 1)); }
done

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
