#!/bin/sh
# test-cli-ablate-first.sh — `saccade ablate RUN --heads --first-pass K`: the head sweep's
# first-order first pass (docs/metrics.md, "Head sweep with a first pass"), read the way a
# script reads it: the K heads ablated exactly are the top K by |estimate|, each with the
# full sweep's numbers exactly; every other head has its estimate and no exact numbers;
# Spearman's ρ is the one of those K pairs; the stored study is reused with the same
# numbers; bad arguments are refused naming what was wrong.
# Usage: test-cli-ablate-first.sh PATH/TO/saccade   (fails without the default model)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/a.sqlite"

"$saccade" capture --db "$db" "The cat sat on the mat because it was tired." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"

"$saccade" ablate 1 --db "$db" --heads --first-pass 12 --json > "$tmp/f.json" 2>"$tmp/f.err"
"$saccade" ablate 1 --db "$db" --heads --json > "$tmp/full.json" 2>"$tmp/full.err"
pycheck first-json "$tmp/f.json" '
full = json.load(open(sys.argv[1].replace("f.json", "full.json")))
assert d["study"] == "ablate-heads-first" and d["source"] == "computed", (d["study"], d["source"])
assert d["first_pass"] == "gradient" and d["estimate_of"] == "delta_logp"
assert d["exact_heads"] == 12 and len(d["heads"]) == 270
assert d["first_pass_s"] > 0 and d["exact_s"] > 0
assert d["target"] == full["target"]
hs = d["heads"]
key = lambda i: (-abs(hs[i]["estimate"]), i)
top = sorted(range(270), key=key)[:12]
assert sorted(i for i in range(270) if hs[i]["exact"]) == sorted(top), "not the top 12"
for i, (a, b) in enumerate(zip(hs, full["heads"])):
    assert (a["layer"], a["head"]) == (b["layer"], b["head"])
    assert isinstance(a["estimate"], float) and math.isfinite(a["estimate"])
    if a["exact"]:
        for m in ("delta_logp", "tv", "jsd", "delta_loss", "flip", "top1"):
            assert a[m] == b[m], (i, m, a[m], b[m])
    else:
        assert "delta_logp" not in a, a
# Spearman rho with mid-ranks over the exact heads
def ranks(v):
    o = sorted(range(len(v)), key=lambda i: v[i]); r = [0.0] * len(v); i = 0
    while i < len(o):
        j = i
        while j + 1 < len(o) and v[o[j + 1]] == v[o[i]]: j += 1
        for k in range(i, j + 1): r[o[k]] = (i + j) / 2 + 1
        i = j + 1
    return r
x = ranks([hs[i]["estimate"] for i in top]); y = ranks([hs[i]["delta_logp"] for i in top])
mx, my = sum(x) / 12, sum(y) / 12
rho = sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(
    sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
assert abs(rho - d["spearman_rho"]) < 1e-12, (rho, d["spearman_rho"])
'
"$saccade" ablate 1 --db "$db" --heads --first-pass 12 --top 15 > "$tmp/f.txt" 2>&1
check first-reused "$tmp/f.txt" "^reused study "
check first-header "$tmp/f.txt" "the top 12 by |estimate| zero-ablated exactly"
check first-rho "$tmp/f.txt" "Spearman ρ (estimate, exact) over those 12 heads: "
check first-estimate-only "$tmp/f.txt" "(estimate only)"
"$saccade" ablate 1 --db "$db" --heads --first-pass 12 --json > "$tmp/f2.json" 2>&1
pycheck first-reused-same "$tmp/f2.json" '
a = json.load(open(sys.argv[1].replace("f2.json", "f.json")))
assert d["source"] == "reused"
for k in ("heads", "spearman_rho", "first_pass_s", "exact_s", "exact_heads"):
    assert d[k] == a[k], k
'
# with a contrast the estimate is of the logit difference
"$saccade" ablate 1 --db "$db" --heads --first-pass 3 --contrast " dog" --json > "$tmp/c.json" 2>"$tmp/c.err"
pycheck first-contrast "$tmp/c.json" '
assert d["estimate_of"] == "delta_logit_diff" and d["exact_heads"] == 3
ex = [h for h in d["heads"] if h["exact"]]
assert len(ex) == 3 and all(h["delta_logit_diff"] is not None for h in ex)
'

# Bad arguments, each refused naming what was wrong.
"$saccade" ablate 1 --db "$db" --heads --first-pass 0 > "$tmp/bad" 2>&1; rc=$?
expect_fail first-zero "$tmp/bad" "--first-pass takes the number of heads to ablate exactly, 1 to 100000, not 0" $rc
"$saccade" ablate 1 --db "$db" --tokens --first-pass 5 > "$tmp/bad" 2>&1; rc=$?
expect_fail first-tokens "$tmp/bad" "--first-pass applies to --heads" $rc

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
