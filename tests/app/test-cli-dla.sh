#!/bin/sh
# test-cli-dla.sh — `saccade dla` and `saccade means` read the way a user reads them, their
# --json checked by Python: the direct logit attribution adds up to the target's logit,
# ranks by |DLA|, sets a stored zero-ablation sweep's Δ log p beside it with a Spearman ρ
# that python recomputes; the reference means are computed once and then reused.
# Usage: test-cli-dla.sh PATH/TO/saccade   (fails without the default model or Python:
# tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/c.sqlite"

py_check() { # name, json file, python code reading `d` (asserts)
  if python -c "import json, math, sys; d = json.load(open(sys.argv[1])); $3" "$2" > "$tmp/py" 2>&1; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1))
  fi
}

"$saccade" capture --db "$db" "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" capture --db "$db" "The capital of France is" > "$tmp/cap" 2>&1
check capture-2 "$tmp/cap" "^2$"

# 1. Text: the split and the table.
"$saccade" dla 1 --db "$db" > "$tmp/dla" 2>&1
check dla-target "$tmp/dla" 'target 198 "\\n" at the last position (the clean top-1)'
check dla-stored "$tmp/dla" "stored as study"
check dla-embedding "$tmp/dla" "^  embedding "
check dla-mlps "$tmp/dla" "^  all MLPs "
check dla-frozen "$tmp/dla" "final norm's scale frozen"
check dla-no-sweep "$tmp/dla" "saccade ablate 1 --heads"
"$saccade" dla 1 --db "$db" > "$tmp/dla" 2>&1
check dla-reused "$tmp/dla" "reused study"

# 2. JSON: embedding + Σ heads + Σ MLPs = the logit; 270 heads; the table's order.
"$saccade" dla 1 --db "$db" --json > "$tmp/dla.json" 2>&1
py_check dla-json-identity "$tmp/dla.json" '
h = [x["dla"] for x in d["heads"]]
assert len(h) == 270 and len(d["mlp"]) == 30, (len(h), len(d["mlp"]))
assert abs(sum(h) - d["heads_total"]) < 1e-9
assert abs(sum(d["mlp"]) - d["mlp_total"]) < 1e-9
s = d["embed"] + d["heads_total"] + d["mlp_total"]
assert abs(s - d["logit_clean"]) <= 1e-4 * (1 + sum(map(abs, h)) + sum(map(abs, d["mlp"]))), (s, d["logit_clean"])
assert d["target"]["id"] == 198 and d["target"]["piece"] == "\n" and d["top1_clean"] == 198
assert d["source"] == "reused" and "ablation" not in d'

# 3. A named target, as a token text and as an id: the same study.
"$saccade" dla 1 --db "$db" --target " tired" --json > "$tmp/t1.json" 2>&1
"$saccade" dla 1 --db "$db" --target 12364 --json > "$tmp/t2.json" 2>&1
py_check dla-target-text "$tmp/t1.json" '
assert d["target"]["id"] == 12364 and d["target"]["piece"] == " tired", d["target"]
assert d["source"] == "computed"'
py_check dla-target-id "$tmp/t2.json" 'assert d["target"]["id"] == 12364 and d["source"] == "reused"'
"$saccade" dla 1 --db "$db" --target "very tired" > "$tmp/bad" 2>&1
expect_fail dla-target-two-tokens "$tmp/bad" 'is 2 tokens (.*), not one' $?
"$saccade" dla 1 --db "$db" --target 99999999 > "$tmp/bad" 2>&1
expect_fail dla-target-range "$tmp/bad" 'outside the vocabulary' $?
"$saccade" dla 7 --db "$db" > "$tmp/bad" 2>&1
expect_fail dla-no-run "$tmp/bad" 'there is no run 7' $?
"$saccade" dla --db "$db" > "$tmp/bad" 2>&1
expect_fail dla-no-arg "$tmp/bad" 'dla takes one run id' $?

# 3b. A contrast: the terms are of logit(A) − logit(B), each the difference of the two
# single-target studies' terms (the read-out direction is linear in the unembedding row).
"$saccade" dla 1 --db "$db" --target " tired" --contrast " hungry" --json > "$tmp/c.json" 2>&1
"$saccade" dla 1 --db "$db" --target " hungry" --json > "$tmp/h.json" 2>&1
python -c '
import json, sys
c = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2])); b = json.load(open(sys.argv[3]))
assert c["contrast"]["piece"] == " hungry" and c["contrast"]["id"] == b["target"]["id"], c["contrast"]
assert c["target"]["id"] == a["target"]["id"] and c["source"] == "computed"
scale = 1 + sum(abs(x["dla"]) for x in a["heads"]) + sum(abs(x["dla"]) for x in b["heads"])
for x, y, z in zip(c["heads"], a["heads"], b["heads"]):
    assert abs(x["dla"] - (y["dla"] - z["dla"])) <= 1e-9 * scale, (x, y, z)
assert abs(c["logit_clean"] - (a["logit_clean"] - b["logit_clean"])) <= 1e-4
s = c["embed"] + c["heads_total"] + c["mlp_total"]
assert abs(s - c["logit_clean"]) <= 1e-4 * scale, (s, c["logit_clean"])
' "$tmp/c.json" "$tmp/t1.json" "$tmp/h.json" > "$tmp/py" 2>&1 \
  && passes=$((passes + 1)) || { echo "FAIL: dla-contrast:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1)); }
"$saccade" dla 1 --db "$db" --target " tired" --contrast " hungry" > "$tmp/ct" 2>&1
check dla-contrast-text "$tmp/ct" 'against contrast [0-9]* " hungry": every term below is of logit(target) - logit(contrast)'
check dla-contrast-reused "$tmp/ct" "reused study"
"$saccade" dla 1 --db "$db" --target 12364 --contrast " tired" > "$tmp/bad" 2>&1
expect_fail dla-contrast-is-target "$tmp/bad" 'contrast names the target itself' $?
"$saccade" dla 1 --db "$db" --contrast 198 > "$tmp/bad" 2>&1
expect_fail dla-contrast-is-top1 "$tmp/bad" 'the contrast 198 is the target (the clean top-1)' $?

# 4. Beside a stored zero-ablation sweep: Δ log p per head and ρ, recomputed here.
"$saccade" ablate 2 --heads --db "$db" > "$tmp/abl" 2>&1
check ablate "$tmp/abl" "stored as study"
"$saccade" dla 2 --db "$db" > "$tmp/dla2" 2>&1
check dla-beside "$tmp/dla2" "beside their zero-ablation Δ log p"
check dla-rho "$tmp/dla2" "Spearman ρ (DLA, Δ log p) over the 270 heads"
"$saccade" dla 2 --db "$db" --json > "$tmp/dla2.json" 2>&1
"$saccade" ablate 2 --heads --db "$db" --json > "$tmp/abl2.json" 2>&1
python -c '
import json, sys
d = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2]))
assert a["target"] == d["target"]["id"]
x = [h["dla"] for h in d["heads"]]; y = [h["delta_logp"] for h in d["heads"]]
assert y == [h["delta_logp"] for h in a["heads"]], "Δ log p differs from the sweep"
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i]); r = [0.0] * len(v); i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]: j += 1
        for k in range(i, j + 1): r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r
rx, ry = ranks(x), ranks(y); n = len(x); mx = sum(rx) / n; my = sum(ry) / n
cov = sum((p - mx) * (q - my) for p, q in zip(rx, ry))
rho = cov / (sum((p - mx) ** 2 for p in rx) * sum((q - my) ** 2 for q in ry)) ** 0.5
assert abs(rho - d["ablation"]["spearman_rho"]) < 1e-9, (rho, d["ablation"]["spearman_rho"])
' "$tmp/dla2.json" "$tmp/abl2.json" > "$tmp/py" 2>&1 && passes=$((passes + 1)) || { echo "FAIL: dla-rho-recomputed:"; sed 's/^/  | /' "$tmp/py"; fails=$((fails + 1)); }

# 5. The reference means: computed once, then reused.
"$saccade" means --db "$db" --json > "$tmp/m1.json" 2>&1
"$saccade" means --db "$db" --json > "$tmp/m2.json" 2>&1
py_check means-computed "$tmp/m1.json" '
assert d["set"] == "saccade-ref-1" and d["sentences"] >= 64 and d["values"] == 17280, d
assert d["source"] == "computed" and d["study_id"] > 0 and math.isfinite(d["rms"]) and d["rms"] > 0'
py_check means-reused "$tmp/m2.json" '
m1 = json.load(open(sys.argv[1].replace("m2", "m1")))
assert d["source"] == "reused" and d["study_id"] == m1["study_id"] and d["rms"] == m1["rms"], d'
"$saccade" means --db "$db" --set no-such-set > "$tmp/bad" 2>&1
expect_fail means-unknown-set "$tmp/bad" "no reference set named 'no-such-set'" $?

# 6. Corrupt stored studies are refused, said so, and computed again.
if command -v sqlite3 > /dev/null; then
  mid=$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["study_id"])' "$tmp/m1.json")
  sqlite3 "$db" "UPDATE study_series SET value = NULL WHERE study_id = $mid AND series = 'mean' AND pos = 100"
  "$saccade" means --db "$db" --json > "$tmp/m3.json" 2> "$tmp/m3.err"
  check means-corrupt-said "$tmp/m3.err" "stored head-means study .*is refused (.*); computing it again"
  py_check means-corrupt "$tmp/m3.json" '
assert d["source"] == "computed", d
assert "refused" in d["warning"] and "layer 0 head 1 dimension 36" in d["warning"], d["warning"]'
  did=$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["study_id"])' "$tmp/dla.json")
  sqlite3 "$db" "DELETE FROM study_heads WHERE study_id = $did AND layer = 3 AND head = 4"
  "$saccade" dla 1 --db "$db" > "$tmp/dla3" 2>&1
  check dla-corrupt "$tmp/dla3" "refused and computed again: .*head L3.H4's \"dla\" is missing"
  check dla-corrupt-stored "$tmp/dla3" "computed now in"
else
  fail "sqlite3 is not installed (tools/setup.sh installs it): the corrupt-study checks cannot run"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
