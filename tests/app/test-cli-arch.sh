#!/bin/sh
# test-cli-arch.sh — the architectures verified on tiny random models (issue 28 item 2:
# tests/reference/tiny-{gpt2,qwen3,llama3,mistral,gemma2}.gguf, committed) from the command
# line (llama3, mistral, gemma2: their particulars in info, capture; gemma2's gradients run
# and its DLA is refused):
#   info         gpt2: LayerNorm and learned positions (text, particulars and JSON); qwen3:
#                head dim 16 from key_length, RoPE base 1e6, QK-norm among its particulars
#   capture      stores every head of a sentence; show reads it back
#   study        forward studies run on gpt2 (heads, lens, value-zeroing mixing, QK
#                attribution with its "pos" and "bias" components); dla, norms,
#                ALTI and the gradient studies refuse it naming 'gpt2' (exit non-zero);
#                on qwen3 dla and a gradient study (attribution) run
# The numbers themselves are test-gpt2-model's and test-qwen3-model's (transformers in float64).
# Usage: test-cli-arch.sh PATH/TO/saccade.
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
gpt2="$src/tests/reference/tiny-gpt2.gguf"
qwen3="$src/tests/reference/tiny-qwen3.gguf"
text="Hello world, the cat sat on the mat. Hello world, the cat"

"$saccade" info -m "$gpt2" > "$tmp/info" 2>&1
check gpt2-info-arch "$tmp/info" "^Architecture gpt2, 3 layers, embedding 32, feed-forward 128$"
check gpt2-info-particulars "$tmp/info" "^Particulars  learned absolute positions (no RoPE); LayerNorm with biases; a bias on every projection$"
check gpt2-info-positions "$tmp/info" "4 query heads over 4 KV heads (groups of 1), head dim 8, learned positions$"
"$saccade" info -m "$gpt2" --json > "$tmp/info.json" 2>&1
pycheck gpt2-info-json "$tmp/info.json" "
assert d['architecture'] == 'gpt2' and d['positions'] == 'learned' and d['norm'] == 'layernorm'
assert abs(d['layer_norm_eps'] - 1e-5) < 1e-9 and 'rms_norm_eps' not in d, d"

"$saccade" capture --db "$tmp/g.sqlite" -m "$gpt2" "$text" > "$tmp/cap" 2>&1
check gpt2-capture "$tmp/cap" "^1$"
"$saccade" show 1 --db "$tmp/g.sqlite" > "$tmp/show" 2>&1
check gpt2-show "$tmp/show" "(gpt2, 3 layers x 4 heads)"
for study in heads lens "mixing --method value-zeroing" "qk --head 1"; do
  "$saccade" study $study 1 --db "$tmp/g.sqlite" -m "$gpt2" > "$tmp/study" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && passes=$((passes + 1)) \
    || { echo "FAIL: gpt2 study $study exited $rc:"; cat "$tmp/study"; fails=$((fails + 1)); }
done
"$saccade" study qk 1 --head 1 --db "$tmp/g.sqlite" -m "$gpt2" > "$tmp/study" 2>&1
check gpt2-qk-components "$tmp/study" "(LayerNorm sigma [0-9.]* at the query, [0-9.]* at the key); 8 components a side, each centred"
for study in dla norms "mixing --method alti" attribution adversarial; do
  "$saccade" study $study 1 --db "$tmp/g.sqlite" -m "$gpt2" > "$tmp/study" 2>&1
  expect_fail "gpt2 study $study refused" "$tmp/study" "'gpt2'" $?
done

"$saccade" info -m "$qwen3" > "$tmp/info" 2>&1
check qwen3-info-arch "$tmp/info" "^Architecture qwen3, 3 layers, embedding 32, feed-forward 64$"
check qwen3-info-heads "$tmp/info" "4 query heads over 2 KV heads (groups of 2), head dim 16, RoPE base 1e+06$"
check qwen3-info-particulars "$tmp/info" "^Particulars  per-head query and key norms$"
"$saccade" capture --db "$tmp/q.sqlite" -m "$qwen3" "$text" > "$tmp/cap" 2>&1
check qwen3-capture "$tmp/cap" "^1$"
for study in dla "attribution --steps 4"; do
  "$saccade" study $study 1 --db "$tmp/q.sqlite" -m "$qwen3" > "$tmp/study" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && passes=$((passes + 1)) \
    || { echo "FAIL: qwen3 study $study exited $rc:"; cat "$tmp/study"; fails=$((fails + 1)); }
done

# llama with Llama 3's RoPE frequency factors, llama with Mistral's window, gemma2 (soft-caps)
llama3="$src/tests/reference/tiny-llama3.gguf"
mistral="$src/tests/reference/tiny-mistral.gguf"
gemma2="$src/tests/reference/tiny-gemma2.gguf"
"$saccade" info -m "$llama3" > "$tmp/info" 2>&1
check llama3-info-particulars "$tmp/info" "^Particulars  RoPE frequencies scaled (Llama 3): 7 of 8 pairs slowed, by up to 8×$"
"$saccade" info -m "$llama3" --json > "$tmp/info.json" 2>&1
pycheck llama3-info-json "$tmp/info.json" "
assert d['architecture'] == 'llama' and len(d['rope_freq_factors']) == 8, d
assert d['rope_freq_factors'][0] == 1.0 and d['rope_freq_factors'][7] == 8.0, d"
"$saccade" info -m "$mistral" > "$tmp/info" 2>&1
check mistral-info-particulars "$tmp/info" "^Particulars  every layer local (window 16)$"
"$saccade" info -m "$gemma2" > "$tmp/info" 2>&1
check gemma2-info-arch "$tmp/info" "^Architecture gemma2, 4 layers, embedding 32, feed-forward 64$"
check gemma2-info-particulars "$tmp/info" "soft-capped: attention scores at 4, logits at 3;"
for m in "$llama3" "$mistral" "$gemma2"; do
  rm -f "$tmp/a.sqlite"
  "$saccade" capture --db "$tmp/a.sqlite" -m "$m" "$text" > "$tmp/cap" 2>&1
  check "capture $(basename "$m")" "$tmp/cap" "^1$"
done
# gemma2's backward runs through both soft-caps; DLA still refuses (capped logits are no sum)
"$saccade" study attribution 1 --db "$tmp/a.sqlite" -m "$gemma2" > "$tmp/study" 2>&1
rc=$?
[ "$rc" -eq 0 ] && passes=$((passes + 1)) \
  || { echo "FAIL: gemma2 study attribution exited $rc:"; cat "$tmp/study"; fails=$((fails + 1)); }
check "gemma2 study attribution" "$tmp/study" "^Gradient attributions: .* series values stored"
"$saccade" study dla 1 --db "$tmp/a.sqlite" -m "$gemma2" > "$tmp/study" 2>&1
expect_fail "gemma2 study dla refused" "$tmp/study" "soft-capped" $?
"$saccade" study heads 1 --db "$tmp/a.sqlite" -m "$gemma2" > "$tmp/study" 2>&1
rc=$?
[ "$rc" -eq 0 ] && passes=$((passes + 1)) \
  || { echo "FAIL: gemma2 study heads exited $rc:"; cat "$tmp/study"; fails=$((fails + 1)); }

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
