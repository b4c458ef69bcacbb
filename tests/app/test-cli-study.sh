#!/bin/sh
# test-cli-study.sh — `saccade study`: any kind of the engine's table of studies from the
# command line, its options from the kind's option table (engine/study/sc-study.h).
#
#   - `study --list` names every kind of a run the table holds, with its options;
#   - the layer sweep (a kind added with one engine file and one outputs file): computed
#     and stored, then read back with the same numbers; 30 layers of SmolLM2, every effect
#     in range, a flip exactly when the ablated top-1 differs from the clean one;
#   - one kind, one stored study, whichever verb made it: `study heads` reads back the head
#     sweep `ablate --heads` stored in the fixture database (tests/app/golden), and `study
#     permute --n 2 --seed 3` the permutation study;
#   - a kind with no outputs file prints what the store holds for it (dla);
#   - `study faithfulness --mixing --contrast B` reads back what `faithfulness --mixing
#     --contrast B` stored (the switches are in its params); without them it is another
#     study; a contrast with another metric is refused;
#   - refused with a message naming what was wrong: no kind, an unknown kind, a kind that is
#     not a run's, an unknown option, an option's value out of range or not a choice, a
#     target that is not one token, a run that is not there, a database that is not there.
# Usage: test-cli-study.sh PATH/TO/saccade GOLDEN_DIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
golden=$2
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/studies.sqlite"
cp "$golden/studies.sqlite" "$db"

pyrun () { # name, args...: the Python program on stdin asserts over the files named
  _name=$1
  shift
  if python - "$@" > "$tmp/py.err" 2>&1; then
    passes=$((passes + 1))
  else
    echo "FAIL: $_name:"; sed 's/^/  | /' "$tmp/py.err"; fails=$((fails + 1))
  fi
}

"$saccade" study --list > "$tmp/list" 2>&1
for k in heads heads-mean heads-first heads-first-mean layers tokens permute erasure dla \
         faithfulness attribution norms mixing adversarial; do
  check "list-$k" "$tmp/list" "^  $k "
done
check list-option "$tmp/list" "^      --seeds "
if grep -q "^  means " "$tmp/list"; then fail "list: means is not a study of a run"; fi

# The layer sweep, computed then read back.
"$saccade" study layers 1 --db "$db" --json > "$tmp/l1.json" 2> "$tmp/l1.err" \
  || { fail "study layers failed:"; sed 's/^/  | /' "$tmp/l1.err"; }
"$saccade" study layers 1 --db "$db" --json > "$tmp/l2.json" 2> "$tmp/l2.err" \
  || { fail "study layers (again) failed:"; sed 's/^/  | /' "$tmp/l2.err"; }
pyrun layers-json "$tmp/l1.json" "$tmp/l2.json" <<'PY'
import json, math, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["study"] == "ablate-layers", a["study"]
assert a["source"] == "computed" and b["source"] == "reused", (a["source"], b["source"])
assert a["study_id"] == b["study_id"] > 0
assert a["n_tokens"] == 14 and len(a["tokens"]) == 14
assert len(a["layers"]) == 30
for x, y in zip(a["layers"], b["layers"]):
    assert x == y, (x, y)  # the same numbers read back
    assert 0 <= x["tv"] <= 1 and 0 <= x["jsd"] <= math.log(2) + 1e-12, x
    assert math.isfinite(x["delta_logp"]) and math.isfinite(x["delta_loss"]), x
    assert x["flip"] == (x["top1"] != a["top1_clean"]), x
# the first layer's attention carries this sentence: taking it away flips the prediction
assert a["layers"][0]["flip"], a["layers"][0]
PY

"$saccade" study layers 1 --db "$db" > "$tmp/l3" 2>&1
check layers-text-reused "$tmp/l3" "^reused study [0-9]* from"
check layers-text-table "$tmp/l3" "^     29  "

# A target by its text: " John" is one token.
"$saccade" study layers 1 --db "$db" --target " John" --json > "$tmp/john.json" 2>&1
pyrun layers-target "$tmp/john.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["target"] != d["top1_clean"] and d["source"] == "computed", d["target"]
assert len(d["layers"]) == 30
PY

# One stored study, whichever verb stored it, printed the same by both verbs (one outputs
# file, app/core/studies/saccade-ablation-outputs.c).
"$saccade" study heads 1 --db "$db" > "$tmp/h" 2>&1
check heads-reused "$tmp/h" "^reused study 1 from"
"$saccade" ablate 1 --heads --db "$db" > "$tmp/h2" 2>&1
if cmp -s "$tmp/h" "$tmp/h2"; then passes=$((passes + 1)); else
  fail "study heads and ablate --heads print differently:"; diff "$tmp/h" "$tmp/h2" | head; fi
"$saccade" study heads 1 --db "$db" --json > "$tmp/h.json" 2>&1
"$saccade" ablate 1 --heads --db "$db" --json > "$tmp/h2.json" 2>&1
if cmp -s "$tmp/h.json" "$tmp/h2.json"; then passes=$((passes + 1)); else
  fail "study heads --json and ablate --heads --json differ"; fi
"$saccade" study permute 1 --n 2 --seed 3 --db "$db" > "$tmp/p" 2>&1
check permute-reused "$tmp/p" "^reused study [0-9]* from"
# No outputs file: the stored numbers.
"$saccade" study dla 1 --db "$db" --json > "$tmp/dla.json" 2>&1
pyrun dla-stored "$tmp/dla.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == "reused" and d["study"] == "dla", d["source"]
assert len(d["head_values"]) == 270, len(d["head_values"])
assert {v["metric"] for v in d["head_values"]} == {"dla"}
assert any(s["series"] == "clean" for s in d["series_values"])
PY

# `study faithfulness` has the verb's switches (issue 27): --mixing (a switch) and --contrast,
# kept in the study's params, so the stored study of `faithfulness --mixing --contrast` is
# the one it reads back, and the params say both.
fdb="$tmp/faith.sqlite"
"$saccade" capture --db "$fdb" "When Mary and John went to the store, John gave a drink to" \
  > "$tmp/cap" 2>&1
check faith-capture "$tmp/cap" "^1$"
check list-faith-mixing "$tmp/list" "^      --mixing .* (a switch)$"
check list-faith-contrast "$tmp/list" "^      --contrast "
"$saccade" faithfulness 1 --db "$fdb" --mixing --target " Mary" --contrast " John" --json \
  > "$tmp/fv.json" 2> "$tmp/fv.err"
"$saccade" study faithfulness 1 --db "$fdb" --mixing --target " Mary" --contrast " John" \
  --json > "$tmp/fs.json" 2> "$tmp/fs.err"
pyrun faith-switches "$tmp/fv.json" "$tmp/fs.json" <<'PY'
import json, sys
v, s = (json.load(open(f)) for f in sys.argv[1:3])
assert v["source"] == "computed" and s["source"] == "reused", (v["source"], s["source"])
assert s["study_id"] == v["study_id"] and s["study"] == "faithfulness"
p = json.loads(s["params"])  # the stored params text
assert p["mixing"] is True and p["metric"] == "abs-delta-logit-diff", p
assert p["contrast"] == v["contrast"] and p["target"] == v["target"], (p, v["contrast"])
series = {x["series"] for x in s["series_values"]}
assert any("norm" in x for x in series) and any("alti" in x for x in series), sorted(series)
PY
# without the switches it is another study: computed, its params without them
"$saccade" study faithfulness 1 --db "$fdb" --json > "$tmp/fp.json" 2> "$tmp/fp.err"
pycheck faith-plain "$tmp/fp.json" "
assert d['source'] == 'computed' and d['study_id'] != 1, (d['source'], d['study_id'])
p = json.loads(d['params'])
assert 'mixing' not in p and 'contrast' not in p, p
assert p['metric'] == 'tv'
"
"$saccade" study faithfulness 1 --db "$fdb" --contrast " John" --metric jsd > "$tmp/e" 2>&1
expect_fail faith-contrast-metric "$tmp/e" "with --contrast the leave-one-out importance is abs-delta-logit-diff, not --metric jsd" $?

# Refusals.
"$saccade" study > "$tmp/e" 2>&1; expect_fail no-kind "$tmp/e" "Usage: saccade study KIND RUN" $?
"$saccade" study nosuch 1 --db "$db" > "$tmp/e" 2>&1
expect_fail unknown-kind "$tmp/e" "no study 'nosuch' of a run" $?
"$saccade" study means 1 --db "$db" > "$tmp/e" 2>&1
expect_fail not-of-a-run "$tmp/e" "no study 'means' of a run" $?
"$saccade" study layers 1 --db "$db" --colour red > "$tmp/e" 2>&1
expect_fail unknown-option "$tmp/e" "colour" $?
"$saccade" study permute 1 --db "$db" --n 0 > "$tmp/e" 2>&1
expect_fail out-of-range "$tmp/e" "--n takes 1 to 1024, not '0'" $?
"$saccade" study erasure 1 --db "$db" --kind erase > "$tmp/e" 2>&1
expect_fail not-a-choice "$tmp/e" "--kind takes one of mask, drop, not 'erase'" $?
"$saccade" study layers 1 --db "$db" --target " John went" > "$tmp/e" 2>&1
expect_fail target-tokens "$tmp/e" "--target" $?
"$saccade" study layers 99 --db "$db" > "$tmp/e" 2>&1
expect_fail no-run "$tmp/e" "there is no run 99 in" $?
"$saccade" study layers 1 --db "$tmp/none.sqlite" > "$tmp/e" 2>&1
expect_fail no-db "$tmp/e" "no capture store at" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
