#!/bin/sh
# test-cli-mixing.sh — `saccade mixing` and `saccade study mixing`: context mixing of a
# stored run per layer and rolled out, by value zeroing and by ALTI
# (engine/study/sc-mixing-study.h).
#   - text: every layer's mixing ratio and the last token's top source, the rollout's top
#     sources and map, then the chosen layer's (the middle one by default);
#   - --json against the independent oracle (tests/reference/mixing-fixture.json: layers 0
#     and 15 and the rollout of both methods, every mixing ratio) within 1e-3 on the default
#     backend;
#   - `study mixing` prints the same study (one outputs file), read back;
#   - refusals: an unknown method, a layer outside the model, a one-token run.
# Usage: test-cli-mixing.sh PATH/TO/saccade   (fails without the default model or Python:
# tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/m.sqlite"
fixture="$src/tests/reference/mixing-fixture.json"

"$saccade" capture --db "$db" "When Mary and John went to the store, John gave a drink to" \
  > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" capture --db "$db" "Hi" > "$tmp/cap" 2>&1
check capture-one-token "$tmp/cap" "^2$"

# 1. Text, computed then reused.
"$saccade" mixing 1 --db "$db" --method alti > "$tmp/t1" 2>&1
check computed "$tmp/t1" "stored as study 1 in"
check method "$tmp/t1" "^context mixing by alti"
check per-layer "$tmp/t1" "^     29 "
check rollout-row "$tmp/t1" "^    all "
check rollout-top "$tmp/t1" "^the rollout: the last token's (13 ␣to) top 10 sources"
check layer-top "$tmp/t1" "^layer 15: the last token's (13 ␣to) top 10 sources"
check layer-map "$tmp/t1" "^layer 15's map (row i: the query"
"$saccade" mixing 1 --db "$db" --method alti --layer 3 --rollout > "$tmp/t2" 2>&1
check reused "$tmp/t2" "^reused study 1 from"
grep -q "^layer 3" "$tmp/t2" && fail "--rollout printed a layer's map" || passes=$((passes + 1))

# 2. JSON against the oracle, both methods.
"$saccade" mixing 1 --db "$db" --method alti --json > "$tmp/alti.json" 2>&1
"$saccade" mixing 1 --db "$db" --method value-zeroing --json > "$tmp/vz.json" 2>&1
cat > "$tmp/cmp.py" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
for path, key, method in ((sys.argv[2], "alti", "alti"),
                          (sys.argv[3], "value_zeroing", "value-zeroing")):
    d = json.load(open(path))
    assert d["study"] == "context-mixing" and d["method"] == method, (d["study"], d["method"])
    assert [t["id"] for t in d["tokens"]] == ref["ids"]
    L, n = ref["n_layers"], ref["n_tokens"]
    assert len(d["layers"]) == L + 1 and d["layers"][L]["layer"] == "rollout"
    want = {r["layer"]: r["map"] for r in ref[key]["layers"]}
    want["rollout"] = ref[key]["rollout"]
    for rec in d["layers"]:
        if rec["layer"] in want:
            for i in range(n):
                for j in range(n):
                    got, w = rec["map"][i][j], want[rec["layer"]][i][j]
                    assert abs(got - w) <= 1e-3, (key, rec["layer"], i, j, got, w)
    for rec, w in zip(d["layers"], ref[key]["mix"]):
        assert abs(rec["mix"] - w) <= 1e-3, (key, rec["layer"], rec["mix"], w)
PY
if python "$tmp/cmp.py" "$fixture" "$tmp/alti.json" "$tmp/vz.json" > "$tmp/py" 2>&1; then
  passes=$((passes + 1))
else
  echo "FAIL: json-vs-oracle:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1))
fi
pycheck json-reused "$tmp/alti.json" 'assert d["source"] == "reused"'
pycheck json-computed "$tmp/vz.json" 'assert d["source"] == "computed"'

# 3. One study, two verbs.
"$saccade" study mixing 1 --db "$db" --method value-zeroing > "$tmp/s1" 2>&1
check study-reused "$tmp/s1" "^reused study [0-9]* from"
"$saccade" mixing 1 --db "$db" --method value-zeroing --rollout > "$tmp/t3" 2>&1
if cmp -s "$tmp/s1" "$tmp/t3"; then passes=$((passes + 1)); else
  fail "study mixing and mixing --rollout print differently:"; diff "$tmp/s1" "$tmp/t3" | head; fi

# 4. Refusals.
"$saccade" mixing 1 --db "$db" --method lrp > "$tmp/e" 2>&1
expect_fail method "$tmp/e" "value-zeroing, alti, not 'lrp'" $?
"$saccade" mixing 1 --db "$db" --layer 30 > "$tmp/e" 2>&1
expect_fail layer-range "$tmp/e" "--layer 30 is outside 0..29" $?
"$saccade" mixing 2 --db "$db" > "$tmp/e" 2>&1
expect_fail one-token "$tmp/e" "at least 2" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
