#!/bin/sh
# test-cli-norms.sh — `saccade norms` and `saccade study norms`: norm-based attention of a
# stored run (engine/study/sc-norm-study.h), read the way a user reads it.
#   - the IOI sentence captured (its ids are those of tests/reference/norm-fixture.json),
#     its study computed and stored, then reused; the text's tables (per layer, the heads
#     with the largest weight-norm gap, the layer's value norms, the layer's map and, with
#     --head, the head's);
#   - --json against the float64 oracle of tests/reference/norm_ref.py: the middle layer's
#     value norms and every map, every head's and layer's first-token summaries, within the
#     cpu bound of test-norm-reference.c (5e-4 + 5e-4 |ref|), the maps with the residual and
#     the mixing ratios too; and the layer-0 study (--layer 0) likewise;
#   - `study norms` prints the same study (one outputs file);
#   - refused with a message: a head or layer outside the model, a one-token run.
# Usage: test-cli-norms.sh PATH/TO/saccade   (fails without the default model or Python:
# tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/n.sqlite"
fixture="$src/tests/reference/norm-fixture.json"

"$saccade" capture --db "$db" "When Mary and John went to the store, John gave a drink to" \
  > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" capture --db "$db" "Hi" > "$tmp/cap" 2>&1
check capture-one-token "$tmp/cap" "^2$"

# 1. Text, computed then reused.
"$saccade" norms 1 --db "$db" > "$tmp/t1" 2>&1
check computed "$tmp/t1" "stored as study 1 in"
check per-layer "$tmp/t1" "^     29 "
check gap-table "$tmp/t1" "largest weight-norm gap on token 0"
check gap-row "$tmp/t1" "^  L23.H1 "
check value-norms "$tmp/t1" "^layer 15's value norms"
check layer-map "$tmp/t1" "^layer 15's map N\[i\]\[j\]"
check mixing "$tmp/t1" "^  attention alone 0.867, with the residual 0.218, through the FFN's norm 0.326"
# a study without a contrast says none (a zero-initialised clean record once read "contrast 0")
grep -q "against contrast" "$tmp/t1" && fail "norms names a contrast it does not have" \
  || passes=$((passes + 1))
"$saccade" norms 1 --db "$db" --head 3 > "$tmp/t2" 2>&1
check reused "$tmp/t2" "^reused study 1 from"
check head-map "$tmp/t2" "^L15.H3's map"
check head-map-row "$tmp/t2" "^    0 When  *9.089$"

# 2. JSON against the oracle.
"$saccade" norms 1 --db "$db" --json > "$tmp/j15.json" 2>&1
"$saccade" norms 1 --db "$db" --layer 0 --json > "$tmp/j0.json" 2>&1
cat > "$tmp/cmp.py" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
tol = lambda r: 5e-4 + 5e-4 * abs(r)
def close(what, got, want):
    assert abs(got - want) <= tol(want), (what, got, want)
for path in sys.argv[2:]:
    d = json.load(open(path))
    assert d["study"] == "norm-attention" and d["n_tokens"] == ref["n_tokens"]
    assert [t["id"] for t in d["tokens"]] == ref["ids"]
    rec = [r for r in ref["layers"] if r["layer"] == d["layer"]][0]
    H, n = ref["n_heads"], ref["n_tokens"]
    for h in range(H):
        for j in range(n):
            close("vnorm %d %d" % (h, j), d["value_norms"][h][j], rec["vnorm"][h][j])
            for i in range(n):
                close("N_h", d["maps"]["heads"][h][i][j], rec["head_maps"][h][i][j])
    for i in range(n):
        for j in range(n):
            close("N", d["maps"]["layer"][i][j], rec["layer_map"][i][j])
            close("R", d["maps"]["residual"][i][j], rec["res_map"][i][j])
            close("RN", d["maps"]["residual_norm"][i][j], rec["resnorm_map"][i][j])
    for k, name in enumerate(("attention", "residual", "residual_norm")):
        close("mix " + name, d["mix"][name], rec["mix"][k])
    for got, want in zip(d["heads"], ref["heads"]):
        assert (got["layer"], got["head"]) == (want["layer"], want["head"])
        for k in ("weight_first", "norm_first", "vnorm_first", "vnorm_rest"):
            close(k, got[k], want[k])
        assert abs(got["gap"] - (got["weight_first"] - got["norm_first"])) < 1e-12
    for got, want in zip(d["layers"], ref["layer_summaries"]):
        close("layer weight", got["weight_first"], want["layer_weight_first"])
        close("layer norm", got["norm_first"], want["layer_norm_first"])
PY
if python "$tmp/cmp.py" "$fixture" "$tmp/j15.json" "$tmp/j0.json" > "$tmp/py" 2>&1; then
  passes=$((passes + 1))
else
  echo "FAIL: json-vs-oracle:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1))
fi
pycheck json-middle-layer "$tmp/j15.json" 'assert d["layer"] == 15 and d["source"] == "reused"'
pycheck json-layer-0 "$tmp/j0.json" 'assert d["layer"] == 0 and d["source"] == "computed"'

# 3. One study, two verbs.
"$saccade" study norms 1 --db "$db" > "$tmp/s1" 2>&1
if cmp -s "$tmp/s1" "$tmp/t1"; then fail "study norms said 'computed' again"; fi
"$saccade" norms 1 --db "$db" > "$tmp/t3" 2>&1
if cmp -s "$tmp/s1" "$tmp/t3"; then passes=$((passes + 1)); else
  fail "study norms and norms print differently:"; diff "$tmp/s1" "$tmp/t3" | head; fi

# 4. Refusals.
"$saccade" norms 1 --db "$db" --head 9 > "$tmp/e" 2>&1
expect_fail head-range "$tmp/e" "--head 9 is outside 0..8" $?
"$saccade" norms 1 --db "$db" --layer 30 > "$tmp/e" 2>&1
expect_fail layer-range "$tmp/e" "--layer 30 is outside 0..29" $?
"$saccade" norms 2 --db "$db" > "$tmp/e" 2>&1
expect_fail one-token "$tmp/e" "at least 2" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
