#!/bin/sh
# test-cli-qk.sh — `saccade study qk`: QK attribution (engine/study/sc-qk-study.h) from the
# command line on the indirect-object sentence, against the float64 oracle's fixture
# (tests/reference/qk-fixture.json, made by qk_ref.py):
#   - computed and stored, then reused with the same numbers; 161 components a side, named
#     as the fixture names them; every part there, the parts summing to the score (1e-4
#     relative), the score and both marginals within 1e-4 of the oracle's (the cpu
#     backend; tests/engine/test-qk-reference.c checks the same in C);
#   - the text: the score beside the sum of the parts, 15 pairs named "X (key) x Y
#     (query)", the oracle's largest pair first;
#   - the defaults (the middle layer, the last position, key 0) and a key after the query,
#     refused with a message naming it.
# Usage: test-cli-qk.sh PATH/TO/saccade REFERENCE_DIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
refdir=$2
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/qk.sqlite"

"$saccade" capture --db "$db" "When Mary and John went to the store, John gave a drink to" \
  > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"

"$saccade" study qk 1 --db "$db" --layer 16 --head 6 --key 1 --json > "$tmp/a.json" \
  2> "$tmp/a.err" || { fail "study qk failed:"; sed 's/^/  | /' "$tmp/a.err"; }
"$saccade" study qk 1 --db "$db" --layer 16 --head 6 --key 1 --json > "$tmp/b.json" \
  2> "$tmp/b.err" || { fail "study qk (again) failed:"; sed 's/^/  | /' "$tmp/b.err"; }
if python - "$tmp/a.json" "$tmp/b.json" "$refdir/qk-fixture.json" > "$tmp/py.err" 2>&1 <<'PY'
import json, sys
a, b, f = (json.load(open(p)) for p in sys.argv[1:4])
assert a["study"] == "qk-attribution", a["study"]
assert a["source"] == "computed" and b["source"] == "reused", (a["source"], b["source"])
assert [t["id"] for t in a["tokens"]] == f["ids"], "not the fixture's ids"
assert (a["layer"], a["head"], a["query"], a["key"]) == (f["layer"], f["head"], f["query"],
                                                         f["key"])
C = f["n_components"]
assert a["components"] == f["components"] and len(a["parts"]) == C
assert all(len(row) == C for row in a["parts"])
total = sum(sum(row) for row in a["parts"])
assert abs(total - a["score"]) <= 1e-4 * abs(a["score"]), (total, a["score"])
assert abs(a["score"] - f["score"]) <= 1e-4, (a["score"], f["score"])
for side in ("query_marginals", "key_marginals"):
    for k, (x, y) in enumerate(zip(a[side], f[side])):
        assert abs(x - y) <= 1e-4, (side, f["components"][k], x, y)
for t in f["top_parts"]:
    assert abs(a["parts"][t["query"]][t["key"]] - t["value"]) <= 1e-4, t
for k in ("parts", "score", "query_marginals", "key_marginals", "components"):
    assert a[k] == b[k], k  # read back the same
PY
then passes=$((passes + 1)); else echo "FAIL: qk-json:"; sed 's/^/  | /' "$tmp/py.err"; fails=$((fails + 1)); fi

"$saccade" study qk 1 --db "$db" --layer 16 --head 6 --key 1 > "$tmp/t" 2>&1
check text-reused "$tmp/t" "^reused study [0-9]* from"
check text-sum "$tmp/t" "score (forward pass) +3.3805.. *sum of the 25921 parts +3.3805"
check text-top "$tmp/t" "^ *+0.2523.  MLP0 (key) x MLP0 (query)$"
n=$(grep -c " (key) x .* (query)$" "$tmp/t")
[ "$n" -eq 15 ] && passes=$((passes + 1)) || fail "text: $n pairs, not 15"

# The defaults: layer 30 / 2 = 15, the last position 13, key 0.
"$saccade" study qk 1 --db "$db" --json > "$tmp/d.json" 2>&1
pycheck defaults "$tmp/d.json" "
assert (d['layer'], d['head'], d['query'], d['key']) == (15, 0, 13, 0), d['layer']
assert len(d['components']) == 1 + 15 * 10
"

"$saccade" study qk 1 --db "$db" --query 3 --key 5 > "$tmp/e" 2>&1
expect_fail key-after-query "$tmp/e" "key 5 is outside 0..3" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
