#!/bin/sh
# test-app-models.sh — the models fetched on this machine (issue 28 item 6), in the window
# and on the command line (app/core/saccade-models.h):
#   1. `saccade models` lists the fetched files by their readable names, the default marked,
#      a file reached twice (a link in the user's models folder) once, a truncated file with
#      the reason, and nothing for a file that is not .gguf; --json says the same.
#   2. The window (Xvfb, the scripted user of tests/app/window-driver.c): the header's model
#      button names the loaded model by its readable name; its menu, opened, lists each
#      fetched model once and not the truncated one; choosing Gemma 3 there loads it and the
#      button says so; the menu's radio follows.
# Fails without the default model, Gemma 3 270M (data/fetch-model.sh gemma3; CI fetches it),
# xvfb-run or Python (tests/lib.sh).
#
# Usage: test-app-models.sh SACCADE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
out=$2

need_tools xvfb-run
need_model
need_python_modules json
gemma=${SACCADE_GEMMA_MODEL:-$src/data/models/gemma-3-270m-q4_k_m.gguf}
[ -f "$gemma" ] || missing "Gemma 3 is not fetched ($gemma): run data/fetch-model.sh gemma3"

rm -rf "$out"
mkdir -p "$out/home/data/saccade/models"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY SACCADE_MODEL
user_models="$out/home/data/saccade/models"
# the user's folder: the default model again (a link: listed once), a file cut after 1,000
# bytes (refused, with the reason), a text file (not a model: not listed)
ln -s "$model" "$user_models/again.gguf"
head -c 1000 "$model" > "$user_models/cut.gguf"
echo "not a model" > "$user_models/notes.txt"

# --- 1. saccade models ----------------------------------------------------------------------
"$saccade" models > "$out/models.txt" 2>&1 || fail "saccade models exited with $?"
sed 's/^/  | /' "$out/models.txt"
check default-marked "$out/models.txt" '^\* SmolLM2 135M Instruct · Q4_1 .* llama .* 30 × 9 '
check gemma-listed "$out/models.txt" '^  gemma-3 270M · Q4_K_M .* gemma3 .* 18 × 4 '
check cut-refused "$out/models.txt" '^! .*cut\.gguf: truncated file'
[ "$(grep -c 'SmolLM2 135M Instruct' "$out/models.txt")" -eq 1 ] \
  || fail "the default model is listed more than once (a link to it is the same file)"
grep -q notes "$out/models.txt" && fail "a .txt file is listed as a model"
"$saccade" models --json > "$out/models.json" 2>&1 || fail "saccade models --json exited with $?"
pycheck json "$out/models.json" "
names = [m.get('name') for m in d]
assert names.count('SmolLM2 135M Instruct · Q4_1') == 1, names
assert 'gemma-3 270M · Q4_K_M' in names, names
defaults = [m for m in d if m['default']]
assert len(defaults) == 1 and defaults[0]['name'] == 'SmolLM2 135M Instruct · Q4_1', defaults
assert defaults[0]['architecture'] == 'llama' and (defaults[0]['layers'], defaults[0]['heads']) == (30, 9)
cut = [m for m in d if m['path'].endswith('cut.gguf')]
assert len(cut) == 1 and 'name' not in cut[0] and 'truncated' in cut[0]['error'], cut
assert cut[0]['file_bytes'] == 1000, cut
assert not any(m['path'].endswith('.txt') for m in d)
"
"$saccade" models what > "$out/extra.txt" 2>&1
expect_fail extra-argument "$out/extra.txt" "unexpected argument 'what'" $?

# what sets an architecture apart, in `saccade info` (and the model button's tooltip)
"$saccade" info -m "$gemma" > "$out/info-gemma.txt" 2>&1 || fail "saccade info (Gemma) exited with $?"
check gemma-particulars "$out/info-gemma.txt" '^Particulars  15 local layers (window 512, RoPE base 10000), 3 global (5, 11, 17); per-head query and key norms; post-attention and post-feed-forward norms; embeddings scaled by 25.3$'
"$saccade" info -m "$model" > "$out/info-smollm2.txt" 2>&1 || fail "saccade info exited with $?"
grep -q Particulars "$out/info-smollm2.txt" && fail "a plain llama block has particulars"
# a Phi-3 whose RoPE turns 6 of each head's 8 dimensions (tests/reference/arch_ref_phi3.py)
"$saccade" info -m "$src/tests/reference/tiny-phi3.gguf" > "$out/info-phi3.txt" 2>&1 \
  || fail "saccade info (phi3) exited with $?"
check phi3-particulars "$out/info-phi3.txt" '^Particulars  every layer local (window 32); partial RoPE: 6 of 8 dimensions per head rotated$'
"$saccade" info -m "$gemma" --json > "$out/info-gemma.json" 2>&1
pycheck gemma-json "$out/info-gemma.json" "
assert d['qkv_bias'] is False and abs(d['embedding_scale'] - 640 ** 0.5) < 1e-4, d
assert d['particulars'].startswith('15 local layers'), d['particulars']
assert d['global_layers'] == [5, 11, 17]
"

# --- 2. The window ----------------------------------------------------------------------------
cat > "$out/window.script" <<SCRIPT
dismiss-toast
expect-named model-name SmolLM2 135M Instruct · Q4_1
expect-menu model-button 1 SmolLM2 135M Instruct · Q4_1
expect-menu model-button 1 gemma-3 270M · Q4_K_M
expect-menu model-button 0 cut
action win.use-model $gemma
expect-named model-name gemma-3 270M · Q4_K_M
expect-menu model-button 1 gemma-3 270M · Q4_K_M
screenshot $out/gemma.png
action win.use-model $model
expect-named model-name SmolLM2 135M Instruct · Q4_1
quit
SCRIPT
bus=""
command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
SACCADE_TEST_SCRIPT="$out/window.script" xvfb-run -a -s "-screen 0 1400x1000x24" \
  $bus "${SACCADE_WINDOW_TEST:?}" --db "$out/models.sqlite" --model "$model" \
  > "$out/window.log" 2>&1
rc=$?
sed 's/^/  | /' "$out/window.log"
[ "$rc" -eq 0 ] || fail "the window exited with $rc"
grep -q "CRITICAL\|WARNING" "$out/window.log" && fail "GTK printed a warning or critical"

echo "$passes checks passed, $fails failed"
[ "$fails" -eq 0 ]
