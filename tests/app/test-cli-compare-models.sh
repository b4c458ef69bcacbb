#!/bin/sh
# test-cli-compare-models.sh — `saccade compare --model A --model B TEXT` (docs/metrics.md,
# "Head types"; app/core/saccade-model-compare.h), read the way a script reads it:
#   1. the tiny test model against itself: two identical sides, each head's nearest head in
#      the matrix itself, at distance 0 (within the matrix's 1e-8);
#   1b. with a head sweep of the text stored (capture, ablate --heads), both sides find it
#      and average its TV by tenths of relative depth;
#   2. the tiny model against the induction model of tests/engine/sc-test-induction-model.c
#      (the same byte vocabulary, but the induction model adds BOS, so the ids differ and
#      there is no matrix): head 1.0 is an induction head and head 0.0 a previous-token
#      head, by construction;
#   3. SmolLM2 against itself: every statistic, score, type and count identical, each head's
#      nearest head itself (fails without the default model);
#   4. SmolLM2 against the tiny model: the tokenizations differ, so no matrix, and the
#      output says so;
#   5. errors: an empty text, a model that does not load (named A or B), one model only,
#      no text, a --run that is not stored, a text given twice.
# Usage: test-cli-compare-models.sh PATH/TO/saccade PATH/TO/app-write-model
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
write_model=$2
smol="${SACCADE_MODEL:-${SC_TEST_SOURCE_DIR:-.}/data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
need_python_modules json
db="$tmp/c.sqlite"

# The two sides are identical in everything but where they came from.
same_sides='
a, b = d["models"]
assert d["same_tokens"] is True
for k in ("path", "sha256", "n_layers", "n_heads", "ids", "counts", "strongest", "heads"):
    assert a[k] == b[k], k
n = a["n_layers"] * a["n_heads"]
assert sum(a["counts"].values()) == n, a["counts"]
assert len(a["heads"]) == n
assert len(d["nearest"]) == n
# the matrix'"'"'s fast path agrees with the exact distance within 1e-8 (docs/metrics.md)
for e in d["nearest"]:
    assert (e["b_layer"], e["b_head"]) == (e["a_layer"], e["a_head"]), e
    assert 0 <= e["distance"] < 1e-7, e
'

"$write_model" tiny "$tmp/tiny.gguf" || { echo "FAIL: app-write-model tiny"; exit 1; }
"$write_model" induction "$tmp/induction.gguf" || { echo "FAIL: app-write-model induction"; exit 1; }
text="The cat sat on the mat. The cat sat."

# --- 1. The tiny model twice --------------------------------------------------------------
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --len 10 \
  --seeds 2 --json -t "$text" > "$tmp/tt.json" 2> "$tmp/tt.err"
pycheck tiny-twice "$tmp/tt.json" "$same_sides
assert a['n_layers'] == 2 and a['n_heads'] == 4
assert a['induction']['seq_len'] == 10 and a['induction']['n_seeds'] == 2
assert a['ablation'] is None"
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --len 10 \
  --seeds 2 "$text" > "$tmp/tt.txt" 2>&1
check tiny-twice-text "$tmp/tt.txt" "Tokens: the two models give the same"
check tiny-twice-reused "$tmp/tt.txt" "induction: reused study"
check tiny-twice-nearest "$tmp/tt.txt" "8 of 8 A heads have as nearest the B head at the same layer"

# --- 1b. A stored head sweep of the text is found for both sides -------------------------
"$saccade" capture --db "$db" -m "$tmp/tiny.gguf" -t "$text" > "$tmp/cap" 2>&1
run=$(head -1 "$tmp/cap")
"$saccade" ablate "$run" --heads --db "$db" -m "$tmp/tiny.gguf" > "$tmp/abl" 2>&1 \
  || { echo "FAIL: ablate"; sed 's/^/  | /' "$tmp/abl"; fails=$((fails + 1)); }
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --len 10 \
  --seeds 2 --json -t "$text" > "$tmp/ta.json" 2> "$tmp/ta.err"
pycheck tiny-ablation "$tmp/ta.json" "
a, b = d['models']
assert a['ablation'] == b['ablation'] and a['ablation']['run'] == $run, a['ablation']
by = a['ablation']['tv_by_depth']
assert len(by) == 10
# two layers: depth 0 (bin 0) and 0.5 (bin 5); every other tenth has no head
assert by[0] is not None and by[5] is not None, by
assert all(by[k] is None for k in range(10) if k not in (0, 5)), by
tv = [h['ablation_tv'] for h in a['heads']]
assert abs(by[0] - sum(tv[:4]) / 4) < 1e-12 and abs(by[5] - sum(tv[4:]) / 4) < 1e-12"
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --len 10 \
  --seeds 2 -t "$text" > "$tmp/ta.txt" 2>&1
check tiny-ablation-text "$tmp/ta.txt" "A: study [0-9]* of run $run"
# --run RUN: the stored run's text, so the same sweep is found.
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --len 10 \
  --seeds 2 --run "$run" > "$tmp/tr.txt" 2>&1
check tiny-run-text "$tmp/tr.txt" "B: study [0-9]* of run $run"

# --- 2. Tiny against the induction model ---------------------------------------------------
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/induction.gguf" \
  --len 20 --seeds 2 --json -t "$text" > "$tmp/ti.json" 2> "$tmp/ti.err"
pycheck tiny-induction "$tmp/ti.json" '
a, b = d["models"]
assert d["same_tokens"] is False and b["ids"] == [264] + a["ids"]
assert d["nearest"] is None
assert b["n_layers"] == 2 and b["n_heads"] == 2
types = {(h["layer"], h["head"]): h["type"] for h in b["heads"]}
assert types[(1, 0)] == "induction", types
assert types[(0, 0)] == "previous-token", types
h10 = [h for h in b["heads"] if (h["layer"], h["head"]) == (1, 0)][0]
assert h10["prefix_matching"] > 0.99, h10
assert b["counts"]["induction"] == 1 and b["counts"]["previous-token"] == 1, b["counts"]
assert b["strongest"]["induction"][0]["layer"] == 1 and b["strongest"]["induction"][0]["depth"] == 0.5'

# --- 3, 4. SmolLM2 -------------------------------------------------------------------------
if [ -f "$smol" ]; then
  long="The quick brown fox jumps over the lazy dog. Alice went to the market to buy apples, and then Alice went home to cook dinner."
  "$saccade" compare --db "$db" --model "$smol" --model "$smol" --len 20 --seeds 2 --json \
    -t "$long" > "$tmp/ss.json" 2> "$tmp/ss.err"
  pycheck smollm2-twice "$tmp/ss.json" "$same_sides
assert a['n_layers'] == 30 and a['n_heads'] == 9 and a['n_kv_heads'] == 3
assert a['counts']['first-token'] > 0 and a['counts']['induction'] > 0, a['counts']
for h in a['heads']:
    assert h['depth'] == h['layer'] / 30"
  "$saccade" compare --db "$db" --model "$smol" --model "$tmp/tiny.gguf" --len 10 --seeds 2 \
    --json -t "$text" > "$tmp/st.json" 2> "$tmp/st.err"
  pycheck smollm2-tiny "$tmp/st.json" '
a, b = d["models"]
assert d["same_tokens"] is False and a["ids"] != b["ids"]
assert d["nearest"] is None and "differ" in d["matrix"], d.get("matrix")
assert sum(a["counts"].values()) == 270 and sum(b["counts"].values()) == 8'
  "$saccade" compare --db "$db" --model "$smol" --model "$tmp/tiny.gguf" --len 10 --seeds 2 \
    -t "$text" > "$tmp/st.txt" 2>&1
  check smollm2-tiny-text "$tmp/st.txt" "the tokenizations differ (A 11 tokens, B 27)"
  check smollm2-tiny-no-matrix "$tmp/st.txt" "so there is no head-vs-head matrix"
else
  fail "the default model is not fetched ($smol): run data/fetch-model.sh (tools/setup.sh does); the SmolLM2 cases cannot run"
fi

# --- 5. Errors ----------------------------------------------------------------------------
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" -t "" \
  > "$tmp/e1" 2>&1
expect_fail empty-text "$tmp/e1" "the text is empty" $?
printf 'GGUF but not really' > "$tmp/bad.gguf"
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/bad.gguf" -t "$text" \
  > "$tmp/e2" 2>&1
expect_fail bad-model "$tmp/e2" "model B ($tmp/bad.gguf): " $?
"$saccade" compare --db "$db" --model "$tmp/none.gguf" --model "$tmp/tiny.gguf" -t "$text" \
  > "$tmp/e3" 2>&1
expect_fail missing-model "$tmp/e3" "model A ($tmp/none.gguf): " $?
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" -t "$text" > "$tmp/e4" 2>&1
expect_fail one-model "$tmp/e4" "takes two models" $?
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" > "$tmp/e5" 2>&1
expect_fail no-text "$tmp/e5" "needs a text" $?
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --run 999 \
  > "$tmp/e6" 2>&1
expect_fail no-such-run "$tmp/e6" "999" $?
"$saccade" compare --db "$db" --model "$tmp/tiny.gguf" --model "$tmp/tiny.gguf" --run 1 \
  -t "$text" > "$tmp/e7" 2>&1
expect_fail text-twice "$tmp/e7" "give the text once" $?

echo "$passes checks passed, $fails failed"
[ "$fails" -eq 0 ]
