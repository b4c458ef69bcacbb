#!/bin/sh
# test-app-patch.sh — activation patching on the Ablation page, in a real X server (Xvfb),
# on the default model (fails without it, xvfb-run or sqlite3: tests/lib.sh).
#
# 1. A scripted user (tests/app/window-driver.c; the window stores its opening sentence as
#    run 1) captures a short sentence first (run 2): with no
#    other run of its length, patching cannot run (Run Study is off, the status line says
#    why). Then the indirect-object pair "When Mary and John went to the store, John gave
#    a drink to" (clean, run 4) and "..., Mary gave a drink to" (corrupted, run 3; 14
#    tokens each); on
#    the clean run it chooses the corrupted run, target " Mary" and contrast " John",
#    denoises every head, sees the map and the metric on both runs in the status line,
#    exports the figure (PNG, SVG, PDF) and the CSV; sets head L23.H3 beside the same head
#    of the corrupted run on the Compare page (what Shift+click on the map does); then
#    patches the residual stream at each position and exports it too; then direct logit
#    attribution of the same logit difference (the contrast entry applies to DLA too); then
#    attribution patching of the heads, whose status line sets it against the exact
#    patching stored before (Spearman's ρ over the cells, recomputed here from both).
#    Between the two, the Model page's heads table (270 rows) scrolled to its end and then
#    sorted by another column shows its top: the rows the sort puts first are in sight.
# 2. The command line finds both studies (`saccade study patch ... --json`: "reused") and
#    its every cell is the window's CSV row, number for number.
#
# 3. With Gemma 3 loaded (it has a backward pass since issue 28), attribution patching of the
#    heads runs on a clean and a corrupted run (the clean top-1 as the target: Gemma splits
#    " Mary" in two).
# 4. With Gemma 3 loaded, the SmolLM2 runs of part 1: Run Study is off and says why, and a
#    stored direct logit attribution of run 4 (the command line's, SmolLM2 loaded) is
#    listed under Stored and drawn, its status line saying it is read-only; the Attribution
#    page's Run is off and says whose run it is.
# 5. Target and contrast chosen by clicking two candidates of the predictions panel (marked
#    A and B); the head sweep, the layer sweep and the gradient attributions run with them
#    are the command line's `saccade ablate --heads --target " Mary" --contrast " John"`,
#    `saccade study layers ...` and `saccade attribute ... --contrast " John"`, read back,
#    number for number.
#
# Usage: test-app-patch.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run sqlite3
need_model
need_python_modules json csv

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/patch.sqlite"

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

# --- 1. The window ----------------------------------------------------------------------
cat > "$out/window.script" <<SCRIPT
type The cat sat on the
run
page ablation
dismiss-toast
ablation-study patch
expect-ablation Patching needs a corrupted run
expect-ablation-runnable no
screenshot $out/none.png
type When Mary and John went to the store, Mary gave a drink to
run
type When Mary and John went to the store, John gave a drink to
run
expect-run 4
page model
page-action page.sort-heads entropy
table-scroll-end
page-action page.sort-heads -entropy
expect-table-top
screenshot $out/table-sorted.png
page ablation
dismiss-toast
ablation-study patch
ablation-option corrupted 3
ablation-option direction denoise
ablation-option what heads
ablation-target  Mary
ablation-option contrast  John
ablation-run
expect-ablation computed in
expect-ablation clean,
expect-title Denoising each head: m = logit(
screenshot $out/heads.png
export-figure $out/heads.png.png
export-figure $out/heads.svg
export-figure $out/heads.pdf
export-csv $out/heads.csv
compare-head 23 3 3
expect-page compare
expect-title L23.H3 − L23.H3
screenshot $out/compare.png
page ablation
ablation-option what residual
ablation-run
expect-ablation computed in
expect-title Denoising the residual stream at each position
screenshot $out/residual.png
export-figure $out/residual.svg
export-csv $out/residual.csv
ablation-study dla
ablation-run
expect-ablation computed in
expect-title Direct logit attribution of logit(“␣Mary”) − logit(“␣John”) to each head
screenshot $out/dla.png
ablation-study attribution-patch
ablation-option what heads
ablation-run
expect-ablation computed in
expect-ablation with the exact patching of study
expect-title Estimated by attribution patching · Denoising each head: m = logit(
screenshot $out/attr-patch.png
ablation-study faithfulness
ablation-run
expect-ablation computed in
expect-named faith-reading 95 % CI
screenshot $out/faith-contrast.png
quit
SCRIPT
run_app window "$out/window.script"
[ "$(studies "kind = 'patch' AND status = 'complete'")" = 2 ] || fail "two patching studies should be stored"
[ "$(studies "kind = 'patch-attribution' AND status = 'complete'")" = 1 ] || fail "one attribution patching study should be stored"
check_png "$out/none.png"
check_png "$out/heads.png"
check_png "$out/compare.png"
check_png "$out/residual.png"
check_png "$out/dla.png"
check_png "$out/attr-patch.png"
check_png "$out/table-sorted.png"
head -c 8 "$out/heads.png.png" | grep -q PNG || fail "heads.png.png is not a PNG"
grep -q '<svg' "$out/heads.svg" 2>/dev/null || fail "heads.svg is not an SVG"
head -c 5 "$out/heads.pdf" 2>/dev/null | grep -q '%PDF' || fail "heads.pdf is not a PDF"
grep -q '<svg' "$out/residual.svg" 2>/dev/null || fail "residual.svg is not an SVG"

# --- 2. The command line's numbers are the window's -------------------------------------
n_before=$(studies "1")
for what in heads residual; do
  "$saccade" study patch 4 --corrupted 3 --target " Mary" --contrast " John" --what "$what" \
    --db "$db" -m "$model" --json > "$out/$what.json" 2> "$out/$what.err" \
    || { fail "saccade study patch --what $what failed:"; sed 's/^/  | /' "$out/$what.err"; }
  pycheck "csv-$what" "$out/$what.json" "
import csv
rows = list(csv.DictReader(open('$out/$what.csv')))
p = d['patch']
assert d['source'] == 'reused', d['source']
assert p['what'] == '$what' and p['direction'] == 'denoise'
assert len(rows) == len(d['cells']) == p['rows'] * p['cols'], (len(rows), len(d['cells']))
def same(text, v):
    return (text == '' and v is None) or float(text) == v
for r, c in zip(rows, d['cells']):
    assert int(r['layer']) == c['layer'], (r, c)
    assert r['head'] == ('' if 'head' not in c else str(c['head'])), (r, c)
    assert r['pos'] == ('' if 'pos' not in c else str(c['pos'])), (r, c)
    assert same(r['m'], c['m']) and same(r['effect'], c['effect']), (r, c)
    assert same(r['m_clean'], p['m_clean']) and same(r['m_corrupted'], p['m_corrupted'])
    assert int(r['target']) == d['target'] and int(r['contrast']) == p['contrast']
    assert (r['run'], r['corrupted'], r['study']) == ('4', '3', str(d['study_id'])), r
"
done
[ "$(studies "1")" = "$n_before" ] || fail "the command line computed a patching study the window had stored"
# the window's DLA with the contrast is the command line's: the same study, read back
"$saccade" dla 4 --target " Mary" --contrast " John" --db "$db" -m "$model" --json \
  > "$out/dla.json" 2> "$out/dla.err" || { fail "saccade dla failed:"; sed 's/^/  | /' "$out/dla.err"; }
pycheck dla-contrast "$out/dla.json" "
assert d['source'] == 'reused', d['source']
assert d['contrast']['piece'] == ' John' and d['target']['piece'] == ' Mary'
assert abs(d['embed'] + d['heads_total'] + d['mlp_total'] - d['logit_clean']) < 1e-3
"

# the window's faithfulness with the contrast is the command line's: the same study, read back
"$saccade" faithfulness 4 --target " Mary" --contrast " John" --mixing --db "$db" -m "$model" \
  --json > "$out/faith.json" 2> "$out/faith.err" || { fail "saccade faithfulness failed:"; sed 's/^/  | /' "$out/faith.err"; }
pycheck faith-contrast "$out/faith.json" "
assert d['source'] == 'reused', d['source']
assert d['metric'] == 'abs-delta-logit-diff' and d['contrast'] != d['target'], d
assert all(d['sources'][k]['defined'] for k in ('norm', 'vz-rollout', 'alti-rollout')), d['sources']
"

# the window's attribution patching is the command line's, and its ρ against the exact
# patching is Spearman's over the cells of the two stored studies
"$saccade" study attribution-patch 4 --corrupted 3 --target " Mary" --contrast " John" \
  --db "$db" -m "$model" --json > "$out/ap.json" 2> "$out/ap.err" \
  || { fail "saccade study attribution-patch failed:"; sed 's/^/  | /' "$out/ap.err"; }
sed -n 's/.*ρ \([-0-9.]*\) with the exact patching of study \([0-9]*\).*/\1 \2/p' "$out/window.log" \
  | tail -n 1 > "$out/rho"
pycheck attr-patch "$out/ap.json" "
e = json.load(open('$out/heads.json'))
rho, study = open('$out/rho').read().split()
assert d['source'] == 'reused', d['source']
assert int(study) == e['study_id'], (study, e['study_id'])
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r
a = ranks([c['m'] for c in d['cells']])
b = ranks([c['m'] for c in e['cells']])
n = len(a)
ma, mb = sum(a) / n, sum(b) / n
cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
var = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
assert abs(cov / var - float(rho)) < 5e-4, (cov / var, rho)
assert float(rho) > 0.8, rho
"

# --- 3. Gemma 3: attribution patching runs (its backward pass) -------------------------
gemma=${SACCADE_GEMMA_MODEL:-$src/data/models/gemma-3-270m-q4_k_m.gguf}
[ -f "$gemma" ] || fail "Gemma 3 is not fetched (data/fetch-model.sh gemma3)"
cat > "$out/gemma.script" <<SCRIPT
type When Mary and John went to the store, Mary gave a drink to
run
type When Mary and John went to the store, John gave a drink to
run
page ablation
dismiss-toast
ablation-study attribution-patch
ablation-option corrupted 2
ablation-option direction denoise
ablation-option what heads
expect-ablation-runnable yes
ablation-run
expect-ablation computed in
expect-title Estimated by attribution patching
screenshot $out/gemma.png
quit
SCRIPT
smollm=$model
model=$gemma
db="$out/gemma.sqlite"
run_app gemma "$out/gemma.script"
model=$smollm
check_png "$out/gemma.png"
[ "$(studies "kind = 'patch-attribution' AND status = 'complete'")" = 1 ] \
  || fail "Gemma's attribution patching study was not stored"

# --- 4. A run of another model: Run Study is off and the page says why -----------------
# The SmolLM2 runs of part 1 with Gemma 3 loaded: no study of them can be computed with it,
# and those stored (a direct logit attribution of run 4, its top-1 as the target, stored
# here by the command line with SmolLM2) are listed and drawn, read-only.
db="$out/patch.sqlite"
"$saccade" dla 4 --db "$db" -m "$model" > "$out/dla-top1.txt" 2> "$out/dla-top1.err" \
  || { fail "saccade dla 4 failed:"; sed 's/^/  | /' "$out/dla-top1.err"; }
dla_id=$(sqlite3 "$db" "SELECT max(id) FROM studies WHERE kind = 'dla'")
cat > "$out/other.script" <<SCRIPT
select 1
page ablation
ablation-study heads
expect-ablation-runnable no
expect-ablation another model file than the loaded
expect-named stored-studies None for this run
screenshot $out/other-model.png
select 4
page ablation
ablation-study dla
expect-named stored-studies Direct logit attribution
expect-named stored-studies study $dla_id
expect-title Direct logit attribution
expect-ablation-runnable no
expect-ablation Read-only: Run 4 was captured with
expect-ablation study $dla_id of
dismiss-toast
screenshot $out/other-model-stored.png
page attribution
expect-attribution-runnable no
expect-attribution another model file than the loaded
quit
SCRIPT
model=$gemma
db="$out/patch.sqlite"
run_app other "$out/other.script"
model=$smollm
check_png "$out/other-model.png"
check_png "$out/other-model-stored.png"

# --- 5. Target and contrast chosen in the predictions panel -----------------------------
# On the clean run (4) the panel lists what the model says after "to": the user clicks
# " Mary" (A, the target) and then " John" (B, the contrast); the Ablation page's entries
# follow, and the head sweep run with them measures Δ (logit(“␣Mary”) − logit(“␣John”)),
# named in its title; the Attribution page's gradient attributions likewise. Clicking
# " Mary" again clears both marks. Then the command line reads the same two studies back.
cat > "$out/contrast.script" <<SCRIPT
select 4
page ablation
dismiss-toast
predictions-choose ␣Mary
expect-prediction ␣Mary A
expect-prediction ␣John none
predictions-choose ␣John
expect-prediction ␣Mary A
expect-prediction ␣John B
expect-prediction ␣the none
screenshot $out/panel-ab.png
ablation-study heads
ablation-run
expect-ablation computed in
expect-ablation logit(“␣Mary”) − logit(“␣John”) =
expect-title Zero-ablating each head: Δ [logit(“␣Mary”) − logit(“␣John”)]
screenshot $out/heads-contrast.png
export-csv $out/heads-contrast.csv
ablation-study layers
ablation-run
expect-ablation computed in
expect-title Taking away each layer's attention: Δ [logit(“␣Mary”) − logit(“␣John”)]
export-csv $out/layers-contrast.csv
page attribution
dismiss-toast
attribution-option steps 4
attribution-run
expect-attribution Computed in
expect-title logit(“␣Mary”) − logit(“␣John”)
screenshot $out/attribution-contrast.png
export-csv $out/attribution-contrast.csv
predictions-choose ␣Mary
expect-prediction ␣Mary none
expect-prediction ␣John none
quit
SCRIPT
run_app contrast "$out/contrast.script"
check_png "$out/panel-ab.png"
check_png "$out/heads-contrast.png"
check_png "$out/attribution-contrast.png"
n_before=$(studies "1")
"$saccade" ablate 4 --heads --target " Mary" --contrast " John" --db "$db" -m "$model" --json \
  > "$out/heads-contrast.json" 2> "$out/heads-contrast.err" \
  || { fail "saccade ablate --heads --contrast failed:"; sed 's/^/  | /' "$out/heads-contrast.err"; }
pycheck heads-contrast "$out/heads-contrast.json" "
import csv
rows = list(csv.DictReader(open('$out/heads-contrast.csv')))
assert d['source'] == 'reused', d['source']
assert d['contrast'] == 2322 and d['target'] == 5099, (d['target'], d['contrast'])
assert len(rows) == len(d['heads']) == 270
# one head (L23.H3, the name mover the patching map marks), then every head: the same study
for r in rows:
    assert r['study'] == str(d['study_id']) and r['run'] == '4', r
h = [x for x in d['heads'] if x['layer'] == 23 and x['head'] == 3][0]
r = [x for x in rows if x['layer'] == '23' and x['head'] == '3'][0]
assert float(r['delta_logit_diff']) == h['delta_logit_diff'], (r['delta_logit_diff'], h)
assert h['delta_logit_diff'] != 0
for r, h in zip(rows, d['heads']):
    assert (int(r['layer']), int(r['head'])) == (h['layer'], h['head'])
    assert float(r['delta_logit_diff']) == h['delta_logit_diff'], (r, h)
"
"$saccade" study layers 4 --target " Mary" --contrast " John" --db "$db" -m "$model" --json \
  > "$out/layers-contrast.json" 2> "$out/layers-contrast.err" \
  || { fail "saccade study layers --contrast failed:"; sed 's/^/  | /' "$out/layers-contrast.err"; }
pycheck layers-contrast "$out/layers-contrast.json" "
import csv
rows = list(csv.DictReader(open('$out/layers-contrast.csv')))
assert d['source'] == 'reused' and d['contrast'] == 2322, (d['source'], d.get('contrast'))
assert len(rows) == len(d['layers']) == 30
for r, l in zip(rows, d['layers']):
    assert int(r['layer']) == l['layer'] and r['study'] == str(d['study_id']), r
    assert float(r['delta_logit_diff']) == l['delta_logit_diff'], (r, l)
"
"$saccade" attribute 4 --steps 4 --target " Mary" --contrast " John" --db "$db" -m "$model" \
  --json > "$out/attribution-contrast.json" 2> "$out/attribution-contrast.err" \
  || { fail "saccade attribute --contrast failed:"; sed 's/^/  | /' "$out/attribution-contrast.err"; }
pycheck attribution-contrast "$out/attribution-contrast.json" "
import csv
rows = list(csv.DictReader(open('$out/attribution-contrast.csv')))
assert d['source'] == 'reused', d['source']
assert d['contrast_label'] == '␣John' and d['target_label'] == '␣Mary', d['contrast_label']
assert len(rows) == len(d['tokens']) == d['n_tokens']
for r, t in zip(rows, d['tokens']):
    for m in ('saliency', 'gradxinput', 'ig', 'grad_rollout'):
        v = t[m.replace('_', '-')]
        assert abs(float(r[m]) - v) <= 1e-8 + 1e-6 * abs(v), (m, r[m], v)
"
[ "$(studies "1")" = "$n_before" ] || fail "the command line computed a study the window had stored"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
