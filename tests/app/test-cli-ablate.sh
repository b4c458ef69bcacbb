#!/bin/sh
# test-cli-ablate.sh — `saccade ablate` for the attention-permutation and erasure studies,
# read the way a script reads it: the JSON parsed and checked against the definitions of
# docs/metrics.md ("Attention permutation and erasure curves"), stored studies reused,
# bad arguments refused with a message that names them.
# Usage: test-cli-ablate.sh PATH/TO/saccade   (fails without the default model: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/a.sqlite"

# A tiny sentence: 4 tokens (The, cat, sat, .).
"$saccade" capture --db "$db" "The cat sat." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"

# --permute on two layers' heads: 18 heads x 3 permutations.
"$saccade" ablate 1 --db "$db" --permute 3 --layer 0,29 --seed 7 --json > "$tmp/p.json" 2>"$tmp/p.err"
pycheck permute-json "$tmp/p.json" '
assert d["study"] == "ablate-permute" and d["source"] == "computed", d["source"]
assert d["permutations"] == 3 and d["seed"] == "7"
hs = d["heads"]
assert len(hs) == 18, len(hs)
assert [h["layer"] for h in hs] == [0] * 9 + [29] * 9
assert [h["head"] for h in hs] == list(range(9)) * 2
for h in hs:
    each = h["each"]
    assert len(each) == 3
    for m in ("tv", "jsd", "delta_logp", "delta_loss"):
        v = sorted(e[m] for e in each)
        s = h[m]
        # type 7 with N = 3: h = 2p: q25 halfway between x0 and x1, the median x1.
        assert s["min"] == v[0] and s["max"] == v[2] and s["median"] == v[1], (m, s, v)
        assert abs(s["q25"] - (v[0] + 0.5 * (v[1] - v[0]))) < 1e-12, (m, s, v)
        assert abs(s["q75"] - (v[1] + 0.5 * (v[2] - v[1]))) < 1e-12, (m, s, v)
    for e in each:
        assert 0 <= e["tv"] <= 1 and 0 <= e["jsd"] <= math.log(2) + 1e-12
        assert e["flip"] == (e["top1"] != d["top1_clean"])
    assert h["flip_share"] == sum(e["flip"] for e in each) / 3
    assert len(set(e["seed"] for e in each)) == 3
assert any(h["tv"]["median"] > 0 for h in hs), "no permutation changed anything"
'
"$saccade" ablate 1 --db "$db" --permute 3 --layer 0,29 --seed 7 > "$tmp/p.txt" 2>&1
check permute-reused "$tmp/p.txt" "^reused study "
check permute-table "$tmp/p.txt" "the top 10 of 18 heads by median TV"
"$saccade" ablate 1 --db "$db" --permute 3 --layer 0,29 --seed 7 --recompute --json > "$tmp/p2.json" 2>&1
pycheck permute-deterministic "$tmp/p2.json" '
a = json.load(open(sys.argv[1].replace("p2.json", "p.json")))
assert d["source"] == "computed"
assert a["heads"] == d["heads"]
'

# --erasure: 3 tokens to erase, 3 random orderings, masked; and a figure.
"$saccade" ablate 1 --db "$db" --erasure --seeds 3 --json -o "$tmp/e.png" > "$tmp/e.json" 2>"$tmp/e.err"
pycheck erasure-json "$tmp/e.json" '
n = d["n_tokens"]
assert d["study"] == "ablate-erasure" and d["kind"] == "mask" and n == 4
os = d["orderings"]
assert [o["ordering"] for o in os] == ["attention", "leave-one-out"] + ["random"] * 3
for o in os:
    assert sorted(o["order"]) == list(range(n - 1)), o["order"]
    c = o["curve"]
    assert len(c) == n and c[0]["top1"] == d["top1_clean"] and c[0]["tv"] == 0
    assert all(0 <= p["p_target"] <= 1 and 0 <= p["tv"] <= 1 for p in c)
    flips = [p["k"] for p in c if p["top1"] != d["top1_clean"]]
    if flips:
        assert o["flip_k"] == flips[0] and not o["never_flips"]
        assert abs(o["fraction"] - flips[0] / (n - 1)) < 1e-15
    else:
        assert o["flip_k"] is None and o["fraction"] is None and o["never_flips"]
# Erasing every token leaves the same input whatever the order.
assert len(set(o["curve"][-1]["p_target"] for o in os)) == 1
'
if head -c 8 "$tmp/e.png" | od -An -c | grep -q 'P   N   G'; then passes=$((passes + 1)); else
  echo "FAIL: ablate --erasure -o did not write a PNG"; fails=$((fails + 1)); fi
"$saccade" ablate 1 --db "$db" --erasure --seeds 3 --kind drop > "$tmp/e.txt" 2>&1
check erasure-drop "$tmp/e.txt" "(dropped) until the top-1 flips"
check erasure-rows "$tmp/e.txt" "^  leave-one-out "
"$saccade" ablate 1 --db "$db" --erasure --seeds 3 > "$tmp/e2.txt" 2>&1
check erasure-reused "$tmp/e2.txt" "^reused study "

# --target: an id, or a text of exactly one token.
"$saccade" ablate 1 --db "$db" --erasure --seeds 0 --target " dog" --json > "$tmp/t.json" 2>&1
"$saccade" tokenize --ids " dog" > "$tmp/dog" 2>&1
pycheck target-text "$tmp/t.json" "assert d['target'] == int(open('$tmp/dog').read()), d['target']"
"$saccade" ablate 1 --db "$db" --erasure --target "the big dog" > "$tmp/bad" 2>&1; rc=$?
expect_fail target-multi "$tmp/bad" "is 3 tokens" $rc
"$saccade" ablate 1 --db "$db" --erasure --target 999999 > "$tmp/bad" 2>&1; rc=$?
expect_fail target-range "$tmp/bad" "outside the vocabulary" $rc

# --heads --mean: each head replaced by its mean output over the shipped reference set
# (computed on first use, stored, then reused), against the zero-ablation sweep.
"$saccade" ablate 1 --db "$db" --heads --json > "$tmp/zero.json" 2>"$tmp/zero.err"
"$saccade" ablate 1 --db "$db" --heads --mean --json > "$tmp/mean.json" 2>"$tmp/mean.err"
pycheck mean-sweep "$tmp/mean.json" '
z = json.load(open(sys.argv[1].replace("mean.json", "zero.json")))
assert d["mode"] == "mean" and d["means"] == "saccade-ref-1", (d.get("mode"), d.get("means"))
assert z["mode"] == "zero" and "means" not in z
assert d["study_id"] != z["study_id"], "a mean sweep must be its own study"
assert len(d["heads"]) == 270
for h in d["heads"]:
    for m in ("tv", "jsd", "delta_logp"):
        assert h[m] is not None and math.isfinite(h[m]), (h, m)
    assert 0.0 <= h["tv"] <= 1.0
differ = sum(1 for a, b in zip(d["heads"], z["heads"]) if a["delta_logp"] != b["delta_logp"])
assert differ > 200, "mean- and zero-ablation agree on %d of 270 heads" % (270 - differ)
'
"$saccade" means --db "$db" --json > "$tmp/means.json" 2>"$tmp/means.err"
pycheck means-reused "$tmp/means.json" '
assert d["source"] == "reused", d["source"]
'
"$saccade" ablate 1 --db "$db" --heads --mean > "$tmp/mean.txt" 2>&1
check mean-reused "$tmp/mean.txt" "^reused study "
check mean-caption "$tmp/mean.txt" "mean-ablating one head at a time (means of saccade-ref-1)"

# --heads --last: the last position's measures only, their own stored study; within the
# fast path's bound of the all-position sweep's (tests/engine/test-ablation-last.c), no Δ loss.
"$saccade" ablate 1 --db "$db" --heads --last --json > "$tmp/last.json" 2>"$tmp/last.err"
pycheck last-sweep "$tmp/last.json" '
z = json.load(open(sys.argv[1].replace("last.json", "zero.json")))
assert d["study_id"] != z["study_id"], "a last-position sweep must be its own study"
assert len(d["heads"]) == 270
for a, b in zip(d["heads"], z["heads"]):
    assert a["delta_loss"] is None and b["delta_loss"] is not None, (a, b)
    for m in ("delta_logp", "tv", "jsd"):
        assert abs(a[m] - b[m]) <= 1e-3, (m, a, b)
'
"$saccade" ablate 1 --db "$db" --tokens --last > "$tmp/bad" 2>&1; rc=$?
expect_fail last-tokens "$tmp/bad" "--last applies to --heads" $rc

# --heads --last --stack: each layer's runs stacked, a study of its own; within the stacked
# path's bound of the one-at-a-time fast path (tests/engine/test-ablation-last.c).
"$saccade" ablate 1 --db "$db" --heads --last --stack --json > "$tmp/stack.json" \
  2>"$tmp/stack.err"
pycheck stacked-sweep "$tmp/stack.json" '
f = json.load(open(sys.argv[1].replace("stack.json", "last.json")))
assert d["study_id"] != f["study_id"], "a stacked sweep must be its own study"
assert d["source"] == "computed", d["source"]
assert len(d["heads"]) == 270
for a, b in zip(d["heads"], f["heads"]):
    assert a["delta_loss"] is None and (a["layer"], a["head"]) == (b["layer"], b["head"])
    for m in ("delta_logp", "tv", "jsd"):
        assert abs(a[m] - b[m]) <= 1e-3, (m, a, b)
'
"$saccade" ablate 1 --db "$db" --heads --stack > "$tmp/bad" 2>&1; rc=$?
expect_fail stack-without-last "$tmp/bad" "--stack applies to --heads --last" $rc
"$saccade" ablate 1 --db "$db" --heads --last --stack --mean > "$tmp/bad" 2>&1; rc=$?
expect_fail stack-mean "$tmp/bad" "not with --mean" $rc

# Bad arguments, each refused naming what was wrong.
"$saccade" ablate 1 --db "$db" --permute 0 > "$tmp/bad" 2>&1; rc=$?
expect_fail permute-zero "$tmp/bad" "--permute takes the number of permutations" $rc
"$saccade" ablate 1 --db "$db" --heads --erasure > "$tmp/bad" 2>&1; rc=$?
expect_fail two-studies "$tmp/bad" "one of --heads, --tokens, --permute N and --erasure" $rc
"$saccade" ablate 1 --db "$db" --erasure --kind cut > "$tmp/bad" 2>&1; rc=$?
expect_fail kind "$tmp/bad" "--kind is mask or drop, not 'cut'" $rc
"$saccade" ablate 1 --db "$db" --tokens --mean > "$tmp/bad" 2>&1; rc=$?
expect_fail mean-tokens "$tmp/bad" "--mean applies to --heads" $rc
"$saccade" ablate 1 --db "$db" --permute 2 --seeds 3 > "$tmp/bad" 2>&1; rc=$?
expect_fail seeds-misplaced "$tmp/bad" "--seeds applies to --erasure" $rc
"$saccade" ablate 1 --db "$db" --permute 2 --seed -4 > "$tmp/bad" 2>&1; rc=$?
expect_fail seed-negative "$tmp/bad" "--seed takes an unsigned 64-bit integer" $rc
"$saccade" ablate 1 --db "$db" --permute 2 --layer 30 > "$tmp/bad" 2>&1; rc=$?
expect_fail layer-range "$tmp/bad" "--layer 30: .* has layers 0 to 29" $rc
"$saccade" ablate 1 --db "$db" --heads -o "$tmp/x.png" > "$tmp/bad" 2>&1; rc=$?
expect_fail output-misplaced "$tmp/bad" "-o writes the erasure figure" $rc
"$saccade" ablate 1 --db "$db" --erasure -o "$tmp/x.bmp" > "$tmp/bad" 2>&1; rc=$?
expect_fail output-format "$tmp/bad" "name it .png, .svg or .pdf" $rc
"$saccade" ablate 1 --db "$db" --erasure --gradient > "$tmp/bad" 2>&1; rc=$?
expect_fail gradient "$tmp/bad" "gradient importance needs the backward pass of issue 12" $rc
"$saccade" ablate 99 --db "$db" --permute 2 > "$tmp/bad" 2>&1; rc=$?
expect_fail missing-run "$tmp/bad" "there is no run 99 in" $rc
"$saccade" ablate 1 --db "$tmp/none.sqlite" --erasure > "$tmp/bad" 2>&1; rc=$?
expect_fail missing-db "$tmp/bad" "no capture store at" $rc

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
