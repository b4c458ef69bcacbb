#!/bin/sh
# test-app-ablation.sh — the Ablation page end to end, in a real X server (Xvfb), on the
# default model (fails without it, xvfb-run or sqlite3: tests/lib.sh).
#
# 1. A scripted user (tests/app/window-driver.c) captures "The cat chased the ball
#    because it was tired.", opens the Ablation page, starts token leave-one-out and the
#    head sweep and cancels each at its first progress: the database must then hold no
#    study at all, not even a 'writing' row. Then leave-one-out runs whole, is drawn,
#    exported (PNG, SVG, PDF, CSV with every number) and screenshotted, shown as TV, and
#    run again for a typed target (another study). Then the erasure curves (2 random
#    orders), faithfulness (its leave-one-out read from the stored study) and direct logit
#    attribution run whole, are drawn, exported and stored; attention permutation is
#    cancelled at its first progress and leaves no study. The layer sweep (the kind added
#    to the window through the study table alone) runs whole, is drawn and exported, and so
#    does the logit lens (a row of the table, drawn by the layer sweep's bar view). Context
#    mixing by value zeroing is cancelled at its first progress; then ALTI and value
#    zeroing run whole, are drawn (the rollout's map) and exported.
# 2. The command line finds what the window stored (`saccade ablate --erasure`, `saccade
#    faithfulness`, `saccade dla`, `saccade study layers`, `saccade study lens`,
#    `saccade study mixing --method alti`: "reused study"), and stores an erasure study of
#    its own (drop) that the window then finds with the same options, computing nothing.
# 3. The window again on the same database: the stored study is shown at once when the run
#    is selected (its status names the stored study; nothing is computed: the database
#    holds as many studies as before).
# 4. The same in Simplified Chinese (LANGUAGE=zh_CN).
#
# Usage: test-app-ablation.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run sqlite3
need_model

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/ablation.sqlite"

run_app() { # NAME SCRIPT
  bus=""
  command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
  SACCADE_TEST_SCRIPT="$2" xvfb-run -a -s "-screen 0 1400x1000x24" \
    $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" --model "$model" > "$out/$1.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$out/$1.log"
  [ "$rc" -eq 0 ] || fail "$1: the app exited with $rc"
}
check_png() { [ -f "$1" ] && "$check_image" "$1" 800 600 50 || fail "$1 is missing or blank"; }
studies() { sqlite3 "$db" "SELECT count(*) FROM studies WHERE $1"; }

# --- 1. Cancel twice, then a whole study ----------------------------------------------
cat > "$out/first.script" <<SCRIPT
type The cat chased the ball because it was tired.
run
page ablation
dismiss-toast
expect-ablation Not studied yet
ablation-study tokens
ablation-run-then-cancel
expect-ablation Cancelled
ablation-study heads
ablation-run-then-cancel
expect-ablation Cancelled
screenshot $out/cancelled.png
ablation-study tokens
ablation-run
expect-ablation computed in
screenshot $out/tokens.png
export-figure $out/tokens.png.png
export-figure $out/tokens.svg
export-figure $out/tokens.pdf
export-csv $out/tokens.csv
page-action page.metric tv
screenshot $out/tokens-tv.png
# Another target is another study: " tired" (with its space) is one token.
ablation-target  tired
ablation-run
expect-ablation Target “␣tired”
ablation-target
ablation-study erasure
ablation-option seeds 2
ablation-run
expect-ablation computed in
screenshot $out/erasure.png
export-figure $out/erasure.svg
export-csv $out/erasure.csv
ablation-study faithfulness
ablation-run
expect-ablation computed in
expect-named faith-reading 95 % CI
expect-named faith-reading chance alone gives τ
print-named faith-reading
screenshot $out/faith.png
export-figure $out/faith.png.png
export-csv $out/faith.csv
ablation-option source rollout
expect-named faith-reading Attention rollout does not rank
screenshot $out/faith-rollout.png
ablation-option source best-head
expect-named faith-reading after Holm's correction
ablation-option source norm
expect-named faith-reading Norm-based attention (last layer)
screenshot $out/faith-norm.png
ablation-option source alti-rollout
expect-named faith-reading ALTI rolled out
ablation-study permute
ablation-option permutations 2
ablation-run-then-cancel
expect-ablation Cancelled
ablation-study dla
ablation-run
expect-ablation logit
screenshot $out/dla.png
export-csv $out/dla.csv
ablation-study layers
ablation-run
expect-ablation computed in
screenshot $out/layers.png
export-figure $out/layers.svg
export-csv $out/layers.csv
ablation-study lens
ablation-run
expect-ablation computed in
screenshot $out/lens.png
export-figure $out/lens.png.png
export-figure $out/lens.svg
export-csv $out/lens.csv
ablation-study mixing-vz
ablation-run-then-cancel
expect-ablation Cancelled
ablation-study mixing-alti
ablation-run
expect-ablation rolled out · computed in
screenshot $out/mixing-alti.png
export-figure $out/mixing-alti.svg
export-csv $out/mixing-alti.csv
ablation-study mixing-vz
ablation-run
expect-ablation rolled out · computed in
screenshot $out/mixing-vz.png
export-figure $out/mixing-vz.png.png
export-csv $out/mixing-vz.csv
quit
SCRIPT
run_app first "$out/first.script"
grep -q "cancelling the study" "$out/first.log" || fail "no study was cancelled mid-way"
[ "$(grep -c "cancelling the study" "$out/first.log")" = 4 ] || fail "four studies should be cancelled"
[ "$(studies "kind = 'ablate-heads'")" = 0 ] || fail "a cancelled head sweep left a study"
[ "$(studies "status = 'writing'")" = 0 ] || fail "a cancelled study left a 'writing' row"
[ "$(studies "kind = 'ablate-tokens' AND status = 'complete'")" = 2 ] \
  || fail "leave-one-out should be stored twice (two targets)"
check_png "$out/cancelled.png"
check_png "$out/tokens.png"
check_png "$out/tokens-tv.png"
head -c 8 "$out/tokens.png.png" | grep -q PNG || fail "tokens.png.png is not a PNG"
grep -q '<svg' "$out/tokens.svg" 2>/dev/null || fail "tokens.svg is not an SVG"
head -c 5 "$out/tokens.pdf" 2>/dev/null | grep -q '%PDF' || fail "tokens.pdf is not a PDF"
head -1 "$out/tokens.csv" 2>/dev/null | grep -q '^pos,token_id,label,mask_delta_logp,' \
  || fail "tokens.csv header: $(head -1 "$out/tokens.csv" 2>/dev/null)"
# The header and one row per token of the sentence.
[ "$(wc -l < "$out/tokens.csv")" = 11 ] || fail "tokens.csv should have 1 + 10 lines (SmolLM2 reads the sentence as 10 tokens)"
# The other studies: stored once each, whole; the cancelled permutation left nothing.
[ "$(studies "kind = 'ablate-erasure' AND status = 'complete'")" = 1 ] || fail "the erasure curves should be stored once"
[ "$(studies "kind = 'faithfulness' AND status = 'complete'")" = 1 ] || fail "faithfulness should be stored once"
[ "$(studies "kind = 'dla' AND status = 'complete'")" = 1 ] || fail "DLA should be stored once"
[ "$(studies "kind = 'ablate-permute'")" = 0 ] || fail "a cancelled permutation left a study"
[ "$(studies "kind = 'ablate-tokens'")" = 2 ] || fail "faithfulness should reuse the stored leave-one-out"
check_png "$out/erasure.png"
check_png "$out/faith.png"
check_png "$out/faith-rollout.png"
check_png "$out/faith-norm.png"
check_png "$out/dla.png"
grep -q '<svg' "$out/erasure.svg" 2>/dev/null || fail "erasure.svg is not an SVG"
head -c 8 "$out/faith.png.png" | grep -q PNG || fail "faith.png.png is not a PNG"
# Erasure: the attention, leave-one-out and 2 random orderings, steps k = 0 .. 9 each.
[ "$(wc -l < "$out/erasure.csv")" = 41 ] || fail "erasure.csv should have 1 + 4 × 10 lines"
head -1 "$out/erasure.csv" | grep -q '^ordering,seed_index,k,fraction_removed,' || fail "erasure.csv header"
# Faithfulness: one row per compared token (all but the query).
[ "$(wc -l < "$out/faith.csv")" = 10 ] || fail "faith.csv should have 1 + 9 lines"
# DLA: 270 heads, the embedding, 30 MLPs.
[ "$(wc -l < "$out/dla.csv")" = 302 ] || fail "dla.csv should have 1 + 270 + 1 + 30 lines"
# The layer sweep: stored once, drawn, a row per layer of SmolLM2's 30.
[ "$(studies "kind = 'ablate-layers' AND status = 'complete'")" = 1 ] || fail "the layer sweep should be stored once"
check_png "$out/layers.png"
[ "$(wc -l < "$out/layers.csv")" = 31 ] || fail "layers.csv should have 1 + 30 lines"
head -1 "$out/layers.csv" | grep -q '^layer,delta_logp,' || fail "layers.csv header: $(head -1 "$out/layers.csv")"
grep -q "<svg" "$out/layers.svg" 2>/dev/null || fail "layers.svg is not an SVG"
# The logit lens: stored once, drawn, a row per residual entry (the embedding, then after
# each of the 30 layers); the last entry is the model's output, where the default target
# (the clean top-1) has rank 0.
[ "$(studies "kind = 'logit-lens' AND status = 'complete'")" = 1 ] || fail "the logit lens should be stored once"
check_png "$out/lens.png"
head -c 8 "$out/lens.png.png" | grep -q PNG || fail "lens.png.png is not a PNG"
grep -q "<svg" "$out/lens.svg" 2>/dev/null || fail "lens.svg is not an SVG"
grep -q "Logit lens" "$out/lens.svg" || fail "lens.svg has no title"
[ "$(wc -l < "$out/lens.csv")" = 32 ] || fail "lens.csv should have 1 + 31 lines"
head -1 "$out/lens.csv" | grep -q '^layer,logp,p,rank,top1,m,contrast,target,' || fail "lens.csv header: $(head -1 "$out/lens.csv")"
[ "$(tail -1 "$out/lens.csv" | cut -d, -f1,4)" = "30,0" ] || fail "the lens's last entry should rank the top-1 first: $(tail -1 "$out/lens.csv")"
# Context mixing: value zeroing cancelled once, then both methods whole, each stored once
# (one kind, told apart by its method), drawn and exported: a row per cell j <= i of the
# 30 layers' maps and the rollout (31 × 55), the rollout's rows summing to 1.
[ "$(studies "kind = 'context-mixing' AND status = 'complete'")" = 2 ] || fail "context mixing should be stored twice (two methods)"
[ "$(studies "kind = 'context-mixing' AND params LIKE '%\"alti\"%'")" = 1 ] || fail "ALTI should be stored once"
for m in alti vz; do
  check_png "$out/mixing-$m.png"
  [ "$(wc -l < "$out/mixing-$m.csv")" = 1706 ] || fail "mixing-$m.csv should have 1 + 31 × 55 lines"
  head -1 "$out/mixing-$m.csv" | grep -q '^map,query,query_label,key,key_label,share,' || fail "mixing-$m.csv header"
  [ "$(grep -c '^rollout,9,' "$out/mixing-$m.csv")" = 10 ] || fail "mixing-$m.csv: the last token's rollout row should have 10 cells"
  awk -F, '$1 == "rollout" && $2 == 9 { s += $6 } END { exit !(s > 0.999 && s < 1.001) }' "$out/mixing-$m.csv" \
    || fail "mixing-$m.csv: the last token's rollout row does not sum to 1"
done
grep -q "Context mixing by ALTI, rolled out" "$out/mixing-alti.svg" || fail "mixing-alti.svg has no title naming ALTI"
head -c 8 "$out/mixing-vz.png.png" | grep -q PNG || fail "mixing-vz.png.png is not a PNG"

# --- 2. The command line and the window share their studies -----------------------------
n_before=$(studies "1")
cli() { "$saccade" "$@" --db "$db" -m "$model" 2>&1; }
run=$(sqlite3 "$db" "SELECT max(id) FROM runs")
cli ablate "$run" --erasure --seeds 2 > "$out/cli-erasure.txt"
grep -q "reused study" "$out/cli-erasure.txt" || fail "saccade ablate --erasure did not find the window's study: $(cat "$out/cli-erasure.txt")"
# the window asks for the context-mixing sources too (its chooser offers them)
cli faithfulness "$run" --mixing > "$out/cli-faith.txt"
grep -q "reused study" "$out/cli-faith.txt" || fail "saccade faithfulness did not find the window's study: $(head -3 "$out/cli-faith.txt")"
# The window's reading of the last-layer mean is the command line's, word for word (the
# window raises its first letter).
reading=$(sed -n '/^reading:/{n;s/^  - .//p;q}' "$out/cli-faith.txt")
[ -n "$reading" ] || fail "saccade faithfulness printed no reading"
grep -F "test-driver: faith-reading:" "$out/first.log" | grep -qF -- "$reading" \
  || fail "the window's reading is not the command line's ($reading): $(grep -F faith-reading: "$out/first.log")"
cli dla "$run" > "$out/cli-dla.txt"
grep -q "reused study" "$out/cli-dla.txt" || fail "saccade dla did not find the window's study: $(head -3 "$out/cli-dla.txt")"
cli study layers "$run" > "$out/cli-layers.txt"
grep -q "reused study" "$out/cli-layers.txt" || fail "saccade study layers did not find the window's study: $(head -3 "$out/cli-layers.txt")"
cli study lens "$run" > "$out/cli-lens.txt"
grep -q "reused study" "$out/cli-lens.txt" || fail "saccade study lens did not find the window's study: $(head -3 "$out/cli-lens.txt")"
cli study mixing "$run" --method alti > "$out/cli-mixing.txt"
grep -q "reused study" "$out/cli-mixing.txt" || fail "saccade study mixing --method alti did not find the window's study: $(head -3 "$out/cli-mixing.txt")"
[ "$(studies "1")" = "$n_before" ] || fail "the command line computed a study the window had stored"
cli ablate "$run" --erasure --kind drop --seeds 2 > "$out/cli-drop.txt"
grep -q "stored as study" "$out/cli-drop.txt" || fail "saccade ablate --erasure --kind drop: $(cat "$out/cli-drop.txt")"
n_before=$(studies "1")
drop_id=$(sqlite3 "$db" "SELECT max(id) FROM studies WHERE kind = 'ablate-erasure' AND params LIKE '%\"drop\"%'")
cat > "$out/cli.script" <<SCRIPT
select newest
page ablation
dismiss-toast
ablation-study erasure
ablation-option seeds 2
ablation-option erase-kind drop
expect-ablation study $drop_id of
screenshot $out/erasure-drop.png
quit
SCRIPT
run_app cli "$out/cli.script"
[ "$(studies "1")" = "$n_before" ] || fail "the window computed the command line's erasure study again"

# --- 3. Reopened: the stored study shows at once ----------------------------------------
cat > "$out/again.script" <<SCRIPT
select newest
page ablation
dismiss-toast
expect-ablation study 1 of
screenshot $out/tokens-stored.png
quit
SCRIPT
run_app again "$out/again.script"
check_png "$out/tokens-stored.png"
[ "$(studies "1")" = "$n_before" ] || fail "showing a stored study computed another one"

# --- 4. Simplified Chinese --------------------------------------------------------------
sed "s|$out/tokens-stored.png|$out/tokens-zh.png|; s|expect-ablation study 1 of|expect-ablation 研究 1|" \
  "$out/again.script" > "$out/zh.script"
LANGUAGE=zh_CN run_app zh "$out/zh.script"
check_png "$out/tokens-zh.png"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
