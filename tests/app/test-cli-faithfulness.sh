#!/bin/sh
# test-cli-faithfulness.sh — `saccade faithfulness` read the way a script reads it: --json
# checked field by field (Python's json module), the CSV's layout, the figures written, the
# study reused on a second call, and bad sentence files refused with their message.
# Usage: test-cli-faithfulness.sh PATH/TO/saccade   (fails without the default model
# or Python: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json
export SACCADE_MODEL="$model"
db="$tmp/f.sqlite"

# A run: computed, then reused; the figure and the CSV.
"$saccade" capture --db "$db" "The cat chased the ball because it" > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"
"$saccade" faithfulness --db "$db" 1 --json --csv "$tmp/run.csv" -o "$tmp/run.png" \
  > "$tmp/run.json" 2> "$tmp/run.err"
pycheck run-json "$tmp/run.json" '
assert d["study"] == "faithfulness" and d["source"] == "computed" and d["study_id"] >= 1
assert d["metric"] == "tv" and d["kind"] == "mask" and d["top_k"] == 3
n = d["n_tokens"]
assert len(d["tokens"]) == n - 1, "one row per compared token"
for s in ("last-mean", "rollout", "flow"):
    a = d["sources"][s]
    assert (a["defined"] and -1 <= a["tau"] <= 1 and 0 <= a["tau_p"] <= 1
            and 0 <= a["topk"] <= 1) or not a["defined"], (s, a)
assert all(t["loo"] >= 0 for t in d["tokens"])
assert abs(sum(t["last-mean"] for t in d["tokens"])) <= 1 + 1e-6
assert len(d["heads"]) == 270
t = d["timing"]
assert t["total_s"] >= t["forward_s"] > 0 and 0 <= t["outside_forward_share"] < 1, t'
check run-csv "$tmp/run.csv" "^pos,token,loo,last_mean,rollout,flow,saliency,gradxinput,ig,grad_rollout,L0.H0,"
[ -s "$tmp/run.png" ] && passes=$((passes + 1)) || { echo "FAIL: no scatter written"; fails=$((fails + 1)); }
"$saccade" faithfulness --db "$db" 1 --json > "$tmp/run2.json" 2>&1
pycheck run-reused "$tmp/run2.json" 'assert d["source"] == "reused", d["source"]'
# The statistics (docs/metrics.md, "Statistics: corrections, intervals, null baselines"):
# both token sets, intervals holding their τ band, Holm for the best head, a reading.
pycheck run-stats "$tmp/run2.json" '
assert d["exclude_first"] is False and d["n_compared"] == d["n_tokens"] - 1
a = d["sources"]["last-mean"]
assert a["tau"] == d["sources_all_tokens"]["last-mean"]["tau"]
assert "tau" in d["sources_without_first"]["last-mean"]
lo, hi = a["tau_ci"]
assert -1 <= lo <= hi <= 1, a["tau_ci"]
nlo, nhi = a["null_tau_band"]
assert nlo < 0 < nhi and 0 < a["p_permutation"] <= 1
assert isinstance(a["first_token_drives"], bool) and "τ" in a["reading"]
b = d["best_head"]
assert b["correction"] == "holm" and b["m_heads"] <= 270
assert b["tau_p"] <= b["tau_p_corrected"] <= min(1, b["m_heads"] * b["tau_p"]) + 1e-12, b
assert d["heads_bh"]["correction"] == "benjamini-hochberg"
assert d["statistics"]["n_boot"] == 1000 and d["statistics"]["seed"] == 0x5accade
assert "Holm" in d["reading"]
assert all("tau_without_first" in h for h in d["heads"])'
"$saccade" faithfulness --db "$db" 1 --json --exclude-first --bootstrap 200 > "$tmp/run6.json" 2>&1
pycheck run-exclude-first "$tmp/run6.json" '
assert d["source"] == "reused", "both sets are in the stored study"
assert d["exclude_first"] is True and d["statistics"]["n_boot"] == 200
assert d["sources"]["last-mean"]["tau"] == d["sources_without_first"]["last-mean"]["tau"]
assert "once the first token is excluded" in d["sources"]["last-mean"]["reading"]'
"$saccade" faithfulness --db "$db" 1 --json --exclude-first --bootstrap 200 > "$tmp/run7.json" 2>&1
# the same seed, the same statistics (timings aside: compare-json.py drops them)
python "$(dirname "$0")/golden/compare-json.py" "$tmp/run6.json" "$tmp/run7.json" > "$tmp/same" 2>&1 \
  && passes=$((passes + 1)) \
  || { echo "FAIL: the same seed gave other statistics: $(cat "$tmp/same")"; fails=$((fails + 1)); }
"$saccade" faithfulness --db "$db" 1 > "$tmp/run8" 2>&1
check run-text-holm "$tmp/run8" "Holm-corrected over [0-9]* heads"
check run-text-reading "$tmp/run8" "^reading:"
check run-text-other-set "$tmp/run8" "without the first token ([0-9]* tokens):"
"$saccade" faithfulness --db "$db" 1 --bootstrap 1000000 > "$tmp/e10" 2>&1
expect_fail bad-bootstrap "$tmp/e10" "--bootstrap is 1..100000 resamples" $?
"$saccade" faithfulness --db "$db" 1 --kind drop --metric jsd > "$tmp/run3" 2>&1
check run-drop-text "$tmp/run3" "leave-one-out by dropping, jsd"
check run-drop-timing "$tmp/run3" "outside forward passes"
# Each call stored a leave-one-out study of the one kind it ran, which a call of the same
# kind reuses (another metric: its own study is not there yet).
"$saccade" faithfulness --db "$db" 1 --metric jsd > "$tmp/run4" 2>&1
check run-loo-reused-one-kind "$tmp/run4" "leave-one-out reused"
# The ablate verb needs both kinds: it does not take a one-kind study for one, computes both
# and stores them; a later faithfulness call reuses that.
"$saccade" ablate --db "$db" 1 --tokens > "$tmp/abl" 2>&1
check ablate-needs-both-kinds "$tmp/abl" "computed now"
"$saccade" ablate --db "$db" 1 --tokens > "$tmp/abl2" 2>&1
check ablate-reuses "$tmp/abl2" "reused study"
"$saccade" faithfulness --db "$db" 1 --kind drop --metric abs-delta-logp > "$tmp/run5" 2>&1
check run-loo-reused-both "$tmp/run5" "leave-one-out reused"

# Against patching: causal tracing as the reference (a short run: it costs samples × L (n − 1)
# restored runs); no leave-one-out is taken for it; the study is stored and reused.
"$saccade" capture --db "$db" "2 + 2 =" > "$tmp/cap2" 2>&1
check capture-2 "$tmp/cap2" "^2$"
"$saccade" faithfulness --db "$db" 2 --kind trace --metric abs-delta-logp --json \
  > "$tmp/trace.json" 2> "$tmp/trace.err"
pycheck trace-json "$tmp/trace.json" '
assert d["kind"] == "trace" and d["metric"] == "abs-delta-logp" and d["source"] == "computed"
assert all(t["loo"] >= 0 for t in d["tokens"]) and any(t["loo"] > 0 for t in d["tokens"])
r = d["sources"]["last-mean"]["reading"]
assert "causal tracing" in r and "leave-one-out" not in r, r'
# without --metric: abs-delta-logp, causal tracing's own quantity (the same study, reused)
"$saccade" faithfulness --db "$db" 2 --kind trace > "$tmp/trace2" 2>&1
check trace-text "$tmp/trace2" "causal tracing (the other tokens noised.*abs-delta-logp"
check trace-reused "$tmp/trace2" "^reused study"
"$saccade" faithfulness --db "$db" 2 --kind patch > "$tmp/e11" 2>&1
expect_fail bad-kind "$tmp/e11" "--kind is mask, drop or trace, not 'patch'" $?

# A file of sentences.
printf '# a comment\n\nThe capital of France is\n\n2 + 2 =\n' > "$tmp/s.txt"
"$saccade" faithfulness --file "$tmp/s.txt" --json --csv "$tmp/file.csv" -o "$tmp/file.svg" \
  --heads-figure "$tmp/heads.pdf" > "$tmp/file.json" 2> "$tmp/file.err"
check heads-figure "$tmp/heads.pdf" "^%PDF"
pycheck file-json "$tmp/file.json" '
assert d["n_sentences"] == 2 and d["std_ddof"] == 1 and d["alpha"] == 0.05
assert [s["line"] for s in d["sentences"]] == [3, 5], "blank and # lines skipped"
for s in ("last-mean", "rollout", "flow"):
    m = d["table2"][s]
    assert m["n_defined"] + m["n_undefined"] == 2
    if m["n_defined"]:
        assert -1 <= m["tau_mean"] <= 1 and 0 <= m["share_significant"] <= 1
    taus = [x[s]["tau"] for x in d["sentences"] if x[s]["defined"]]
    if taus:
        assert abs(m["tau_mean"] - sum(taus) / len(taus)) < 1e-9, "the mean of the rows"
assert len(d["head_tau_mean"]) == 30 and len(d["head_tau_mean"][0]) == 9
assert "best-head" in d["table2"] and "median-head" in d["table2"]
m = d["table2"]["last-mean"]
assert m["tau_ci"] == [None, None], "no interval over fewer than 5 sentences"
assert "too few sentences for an interval" in d["reading"]
assert m["share_significant_bh"] <= m["share_significant"]
assert d["exclude_first"] is False and d["statistics"]["share_correction"] == "benjamini-hochberg"
assert "Over" in d["reading"]
t = d["timing"]
assert t["total_s"] >= t["forward_s"] > 0 and 0 <= t["outside_forward_share"] < 1'
check file-csv-header "$tmp/file.csv" "^scope,sentence,line,n_tokens,source,n_defined,tau,tau_std,tau_p,share_significant,rho,rho_p,topk"
check file-csv-summary "$tmp/file.csv" "^summary,,,,last-mean,"
check file-csv-sentence "$tmp/file.csv" "^sentence,1,5,"
check file-figure "$tmp/file.svg" "<svg"
"$saccade" faithfulness --file "$tmp/s.txt" > "$tmp/file.txt" 2>&1
check file-text "$tmp/file.txt" "τ mean ± std"
check file-text-timing "$tmp/file.txt" "outside forward passes"

# Bad input.
printf 'The capital of France is\n\377\376 broken\n' > "$tmp/bad.txt"
"$saccade" faithfulness --file "$tmp/bad.txt" > "$tmp/e1" 2>&1
expect_fail bad-utf8 "$tmp/e1" "bad.txt:2: the line is not valid UTF-8" $?
python -c 'print("The capital of France is"); print("word " * 500)' > "$tmp/long.txt"
"$saccade" faithfulness --file "$tmp/long.txt" > "$tmp/e9" 2>&1
expect_fail long-line "$tmp/e9" "long.txt:2: the line is 2500 bytes long, more than the 2048" $?
printf '# only a comment\n\n' > "$tmp/empty.txt"
"$saccade" faithfulness --file "$tmp/empty.txt" > "$tmp/e2" 2>&1
expect_fail empty-file "$tmp/e2" "holds no sentence" $?
"$saccade" faithfulness --file "$tmp/missing.txt" > "$tmp/e3" 2>&1
expect_fail missing-file "$tmp/e3" "no sentence file at" $?
printf 'Hi\n' > "$tmp/short.txt"
"$saccade" faithfulness --file "$tmp/short.txt" > "$tmp/e4" 2>&1
expect_fail short-sentence "$tmp/e4" "line 1: the sentence has" $?
"$saccade" faithfulness --file "$tmp/s.txt" --metric kl > "$tmp/e5" 2>&1
expect_fail bad-metric "$tmp/e5" "--metric is tv, jsd, abs-delta-logp or abs-delta-logit-diff, not 'kl'" $?
"$saccade" faithfulness --file "$tmp/s.txt" --contrast 1000 --metric tv > "$tmp/e10" 2>&1
expect_fail contrast-other-metric "$tmp/e10" "with --contrast the leave-one-out importance is abs-delta-logit-diff, not --metric tv" $?
"$saccade" faithfulness --file "$tmp/s.txt" --metric abs-delta-logit-diff > "$tmp/e11" 2>&1
expect_fail logit-diff-without-contrast "$tmp/e11" "it needs --contrast B" $?
"$saccade" faithfulness --db "$db" 1 --target 1000 --contrast 1000 > "$tmp/e12" 2>&1
expect_fail contrast-is-target "$tmp/e12" "contrast" $?
"$saccade" faithfulness --db "$db" 1 --file "$tmp/s.txt" > "$tmp/e6" 2>&1
expect_fail run-and-file "$tmp/e6" "one run id" $?
"$saccade" faithfulness --db "$db" 99 > "$tmp/e7" 2>&1
expect_fail no-run "$tmp/e7" "no run 99" $?
"$saccade" faithfulness --db "$db" 1 -o "$tmp/x.bmp" > "$tmp/e8" 2>&1
expect_fail bad-figure "$tmp/e8" "name it .png, .svg or .pdf" $?

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
