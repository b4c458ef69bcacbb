#!/bin/sh
# test-cli-learn.sh — `saccade learn` read the way a user reads it: each topic's --json
# checked by Python against the seed articles' numbers (the same numbers as
# tests/analysis/test-learn.c: 000's weights 0.736/0.164/0.100 and unscaled 0.936/0.047/0.017,
# 004's rows and outputs to 4 decimals, 004's √d_k numbers, Llama 2 70B's KV cache, the
# 32 MiB score matrix), and bad input refused with a clear message and a nonzero exit.
# No model is needed. Usage: test-cli-learn.sh PATH/TO/saccade (fails without Python: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_python_modules json

py_check() { # name, json file, python code reading `d` (asserts)
  if python -c "import json, math, sys; d = json.load(open(sys.argv[1])); close = lambda a, b, t: all(abs(x - y) <= t for x, y in zip(a, b)) and len(a) == len(b); $3" "$2" > "$tmp/py" 2>&1; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1))
  fi
}

# 1. Seed 000: the query 它 over 猫/球/它, d_k = 4.
"$saccade" learn example --json > "$tmp/e0" 2>&1
py_check example-000 "$tmp/e0" "
assert d['example'] == '000' and d['d_k'] == 4 and d['key_labels'] == ['猫', '球', '它']
assert d['raw'] == [[4.0, 1.0, 0.0]] and d['scaled'] == [[2.0, 0.5, 0.0]]
assert close(d['weights'][0], [0.736, 0.164, 0.100], 5e-4), d['weights']
assert close(d['out'][0], [0.736, 0.164, 0.100], 5e-4), d['out']
assert close([e * math.exp(d['row_max'][0]) for e in d['exps_shifted'][0]], [7.389, 1.649, 1.000], 5e-4)
assert abs(d['gap_needed'] - math.log(198)) < 1e-12 and abs(d['gap_needed_raw'] - 2 * math.log(198)) < 1e-12
assert d['rows'][0]['top'] == 0"
"$saccade" learn example --example 000 --no-scale --json > "$tmp/e0u" 2>&1
py_check example-000-unscaled "$tmp/e0u" "
assert d['scale'] is False and d['divisor'] == 1.0
assert close(d['weights'][0], [0.936, 0.047, 0.017], 5e-4), d['weights']"
"$saccade" learn example > "$tmp/e0t" 2>&1
check example-000-text "$tmp/e0t" "0.7361    0.1643    0.0996"
check example-000-text-shifted "$tmp/e0t" "max subtracted"

# 2. Seed 004: row 3 and the three outputs; the Q, K, V reconstructed in docs/learn.md.
"$saccade" learn example --example 004 --json > "$tmp/e4" 2>&1
py_check example-004 "$tmp/e4" "
assert d['q'] == [[1, 0], [0, 1], [1, 1]] and d['k'] == d['q'] and d['v'] == [[1, 0], [0, 2], [2, 2]]
assert close(d['scaled'][2], [0.7071, 0.7071, 1.4142], 5e-5)
assert close([e * math.exp(d['row_max'][2]) for e in d['exps_shifted'][2]], [2.0281, 2.0281, 4.1133], 5e-5)
assert abs(d['exp_sum_shifted'][2] * math.exp(d['row_max'][2]) - 8.1695) < 5e-5
assert close(d['weights'][2], [0.2483, 0.2483, 0.5035], 5e-5)
z = [1.2033, 1.1978, 1.0000, 1.6044, 1.2552, 1.5035]
assert close([x for row in d['out'] for x in row], z, 5e-5), d['out']
assert all(abs(sum(r) - 1) < 1e-12 for r in d['weights'])"
# Temperature: T = 2 on 004 equals scores divided by 2√2.
"$saccade" learn example --example 004 --temperature 2 --json > "$tmp/e4t" 2>&1
py_check example-004-temperature "$tmp/e4t" "
s = [1 / (2 * math.sqrt(2)), 1 / (2 * math.sqrt(2)), 2 / (2 * math.sqrt(2))]
w = [math.exp(x) / sum(math.exp(y) for y in s) for x in s]
assert close(d['weights'][2], w, 1e-12), d['weights'][2]"
# Your own tables: the 004 vectors typed in give the same outputs.
"$saccade" learn example --q "1 0; 0 1; 1 1" --k "1,0; 0,1; 1,1" --v "1 0; 0 2; 2 2" --json > "$tmp/ec" 2>&1
py_check example-custom "$tmp/ec" "
assert d['example'] == 'custom' and d['query_labels'] == ['q1', 'q2', 'q3']
assert close([x for row in d['out'] for x in row], [1.2033, 1.1978, 1.0000, 1.6044, 1.2552, 1.5035], 5e-5)"

# 3. √d_k (seed 004): d_k = 64, std 8, a gap of 16: p(1 − p) ≈ 1.1e-7.
"$saccade" learn sqrt-dk --json > "$tmp/s" 2>&1
py_check sqrt-dk "$tmp/s" "
assert d['d_k'] == 64 and d['gap'] == 16 and d['std_unscaled'] == 8 and d['std_scaled'] == 1
assert abs(d['exp_gap'] / 8.9e6 - 1) < 0.01
assert abs(d['p_unscaled'] - 0.9999999) < 5e-8
assert abs(d['jacobian_unscaled'] - math.exp(-16) / (1 + math.exp(-16)) ** 2) < 1e-20
assert round(d['jacobian_unscaled'], 8) == 1.1e-7
assert d['gap_scaled'] == 2 and abs(d['jacobian_scaled'] - 0.104994) < 1e-6"
"$saccade" learn sqrt-dk --dk 128 --gap 4 --keys 10 --json > "$tmp/s2" 2>&1
py_check sqrt-dk-options "$tmp/s2" "
assert abs(d['std_unscaled'] - math.sqrt(128)) < 1e-12
assert abs(d['p_unscaled'] - 1 / (1 + 9 * math.exp(-4))) < 1e-12"

# 4. Heads: 512 / 8 = 64.
"$saccade" learn heads --d-model 512 --heads 8 --json > "$tmp/h" 2>&1
py_check heads "$tmp/h" "assert d == {'d_model': 512, 'heads': 8, 'd_k': 64}, d"
"$saccade" learn heads > "$tmp/ht" 2>&1
check heads-text "$tmp/ht" "512 / 8 = 64"

# 5. KV cache: Llama 2 70B at 4,096 fp16 tokens: 10 GiB MHA, 1.25 GiB GQA; SmolLM2 23,040 B/token.
"$saccade" learn kv-cache --json > "$tmp/k" 2>&1
py_check kv-cache "$tmp/k" "
r = {x['preset']: x for x in d['rows']}
assert r['llama2-70b-mha']['bytes'] == 10 * 2**30 and r['llama2-70b-mha']['gib'] == 10
assert r['llama2-70b-gqa']['gib'] == 1.25 and r['llama2-70b-mqa']['bytes'] == 160 * 2**20
assert r['smollm2']['bytes_per_token'] == 23040
assert abs(r['llama2-70b-mha']['read_seconds'] - 10 * 2**30 / 2039e9) < 1e-15"
"$saccade" learn kv-cache --preset llama2-70b-gqa --len 8192 --bandwidth-gbs 4800 --json > "$tmp/k2" 2>&1
py_check kv-cache-preset "$tmp/k2" "
r = d['rows']; assert len(r) == 1 and r[0]['gib'] == 2.5
assert abs(r[0]['read_seconds'] - 2.5 * 2**30 / 4800e9) < 1e-15"
"$saccade" learn kv-cache --layers 30 --kv-heads 3 --head-dim 64 --len 1 --json > "$tmp/k3" 2>&1
py_check kv-cache-custom "$tmp/k3" "assert d['rows'][0]['preset'] == 'custom' and d['rows'][0]['bytes'] == 23040"

# 6. FlashAttention: the 4,096² fp16 score matrix is 32 MiB; A100's counts (test-learn.c).
"$saccade" learn flash --preset a100 --json > "$tmp/f" 2>&1
py_check flash "$tmp/f" "
n, dd = 4096, 64
assert d['score_bytes'] == 32 * 2**20
r = d['rows'][0]
assert r['sram_bytes'] == 192 * 1024 and r['m_elems'] == 98304 and r['block_c'] == 384 and r['t_c'] == 11
assert r['standard_elems'] == 4 * n * dd + 4 * n * n
assert r['flash_elems'] == 3 * n * dd + 2 * n + 11 * (3 * n * dd + 4 * n)"
"$saccade" learn flash --json > "$tmp/f2" 2>&1
py_check flash-presets "$tmp/f2" "
assert [r['preset'] for r in d['rows']] == ['a100', 'h100', 'h200']
assert d['rows'][1]['t_c'] == 8 and d['rows'][1]['ratio'] > d['rows'][0]['ratio']"
"$saccade" learn flash --n 1024 --d 128 --sram-kb 100 --json > "$tmp/f3" 2>&1
py_check flash-custom "$tmp/f3" "
r = d['rows'][0]; assert r['sram_bytes'] == 102400 and r['block_c'] == 100 and r['t_c'] == 11"

# 7. Bad input: a clear message, a nonzero exit, nothing crashes.
"$saccade" learn example --q "1 x" --k "1 2" --v "1" > "$tmp/b" 2>&1
expect_fail bad-number "$tmp/b" "Q: 'x' at row 1 column 2 is not a finite number" $?
"$saccade" learn example --q "1 2" --k "1 2; 3" --v "1; 2" > "$tmp/b" 2>&1
expect_fail ragged "$tmp/b" "K: row 2 has 1 value, row 1 has 2" $?
"$saccade" learn example --q "1 2" --k "1 2 3" --v "1" > "$tmp/b" 2>&1
expect_fail shapes "$tmp/b" "Q has 2 columns and K has 3" $?
"$saccade" learn example --q "1 2" --k "1 2; 3 4" --v "1" > "$tmp/b" 2>&1
expect_fail shapes-v "$tmp/b" "K has 2 rows and V has 1" $?
"$saccade" learn example --q "1 2" > "$tmp/b" 2>&1
expect_fail partial "$tmp/b" "needs all three of --q, --k and --v" $?
"$saccade" learn example --temperature 0 > "$tmp/b" 2>&1
expect_fail temperature "$tmp/b" "temperature 0: must be a number > 0" $?
"$saccade" learn example --example 005 > "$tmp/b" 2>&1
expect_fail example-id "$tmp/b" "learn example '005': unknown" $?
"$saccade" learn sqrt-dk --dk 0 > "$tmp/b" 2>&1
expect_fail dk-zero "$tmp/b" "d_k = 0: must be at least 1" $?
"$saccade" learn heads --d-model 512 --heads 7 > "$tmp/b" 2>&1
expect_fail heads-divisible "$tmp/b" "d_model = 512 is not divisible by heads = 7" $?
"$saccade" learn kv-cache --len -4096 > "$tmp/b" 2>&1
expect_fail kv-negative "$tmp/b" "length -4096 tokens: must be >= 0" $?
"$saccade" learn kv-cache --len 9000000000000000000 > "$tmp/b" 2>&1
expect_fail kv-overflow "$tmp/b" "overflows int64" $?
"$saccade" learn kv-cache --preset gpt-9 > "$tmp/b" 2>&1
expect_fail kv-preset "$tmp/b" "preset 'gpt-9': unknown" $?
"$saccade" learn kv-cache --len many > "$tmp/b" 2>&1
expect_fail kv-not-a-number "$tmp/b" "many" $?
"$saccade" learn flash --n -1 > "$tmp/b" 2>&1
expect_fail flash-negative "$tmp/b" "each must be at least 1" $?
"$saccade" learn flash --n 4000000000000 > "$tmp/b" 2>&1
expect_fail flash-overflow "$tmp/b" "overflows int64" $?
"$saccade" learn flash --sram-kb 0 > "$tmp/b" 2>&1
expect_fail flash-sram "$tmp/b" "must be a positive size" $?
"$saccade" learn bogus > "$tmp/b" 2>&1
expect_fail topic "$tmp/b" "unknown topic 'bogus'" $?

echo "$passes checks passed, $fails failed"
[ "$fails" -eq 0 ]
