#!/bin/sh
# test-cli.sh — the saccade command line, read the way a user reads it.
# Usage: test-cli.sh PATH/TO/saccade   (skips with 77 when the default model is absent)
set -u
saccade=$1
model="${SACCADE_MODEL:-$SC_TEST_SOURCE_DIR/data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
if [ ! -f "$model" ]; then
  echo "default model not fetched (data/fetch-model.sh); skipping"
  exit 77
fi
export SACCADE_MODEL="$model"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0

check() { # name, command output file, grep pattern
  if grep -q -- "$3" "$2"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1: output lacks '$3':"; sed 's/^/  | /' "$2"; fails=$((fails + 1))
  fi
}
expect_fail() { # name, file, pattern, rc
  if [ "$4" -eq 0 ]; then
    echo "FAIL: $1 exited 0"; fails=$((fails + 1))
  fi
  check "$1" "$2" "$3"
}

"$saccade" info > "$tmp/info" 2>&1
check info "$tmp/info" "llama, 30 layers, embedding 576"
check info-heads "$tmp/info" "9 query heads over 3 KV heads"
check info-kv "$tmp/info" "23040 bytes per token"
"$saccade" info --json > "$tmp/info.json" 2>&1
check info-json "$tmp/info.json" '"kv_cache_bytes_per_token_f16" : 23040'

"$saccade" tokenize --ids "The capital of France is" > "$tmp/tok" 2>&1
check tokenize "$tmp/tok" "^504 3575 282 4649 314$"
"$saccade" tokenize "猫追球，它累了" > "$tmp/tok-zh" 2>&1
check tokenize-zh "$tmp/tok-zh" "tokens$"
"$saccade" tokenize --json "<|im_start|>hi" > "$tmp/tok.json" 2>&1
check tokenize-special "$tmp/tok.json" '"id" : 1,'

"$saccade" generate --chat -n 16 "What is the capital of France?" > "$tmp/gen" 2>&1
check generate-paris "$tmp/gen" "Paris"

"$saccade" capture -t "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "30 layers x 9 heads"
check capture-row "$tmp/cap" "^   29    8 "

# bad input: clear messages, non-zero exit
printf 'not a model' > "$tmp/bad.gguf"
"$saccade" info -m "$tmp/bad.gguf" > "$tmp/bad" 2>&1; rc=$?
expect_fail bad-model "$tmp/bad" "not a GGUF file" $rc
head -c 1000 "$model" > "$tmp/trunc.gguf"
"$saccade" info -m "$tmp/trunc.gguf" > "$tmp/trunc" 2>&1; rc=$?
expect_fail truncated-model "$tmp/trunc" "truncated" $rc
"$saccade" info -m "$tmp/missing.gguf" > "$tmp/missing" 2>&1; rc=$?
expect_fail missing-model "$tmp/missing" "does not exist" $rc
"$saccade" capture -t "" > "$tmp/empty" 2>&1; rc=$?
expect_fail empty-text "$tmp/empty" "empty input" $rc
"$saccade" frobnicate > "$tmp/verb" 2>&1; rc=$?
expect_fail unknown-verb "$tmp/verb" "unknown verb" $rc

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
