#!/bin/sh
# test-app-prompt.sh — the window's prompt editor, end to end under Xvfb with the default
# model (app/window/saccade-prompt-popover.c, driven by tests/app/window-driver.c):
#  1. A two-line prompt typed in the editor's text view reaches the header bar's entry
#     (and a line typed in the entry reaches the view); with "Generate 4 tokens" it is
#     stored as one run whose text is the prompt's bytes then the generated pieces, and
#     whose tokens are the prompt's followed by exactly `saccade generate -n 4`'s. The
#     editor and the window are screenshot (checked not blank).
#  2. Ctrl+Enter in the editor runs; with the chat template on, the stored text is the
#     ChatML turn around the entry's line.
#  3. A run larger than Preferences' "ask-above" (set to 100 MB; about 840 tokens of
#     SmolLM2 would add ~190 MB) asks first: the question names the size and the limit, a
#     layer past the model's last is refused in the dialog (Run off, the reason shown), and
#     layers 0-1 × head 0 with sparse rows store a run that keeps exactly those two heads,
#     sparse; Cancel stores nothing and says so.
#  4. Each run in the list says what it is: "prompt + 4 generated", "chat", "long text"
#     (840 tokens), "sentence".
#  5. The window keeps its width whatever run its predictions panel shows (the ChatML run's
#     long special-token pieces once widened it).
#  6. At 1600 × 1000 and 1280 × 800 the Model page's grid spans at least 80 % of the side of
#     its view that bounds it (its aspect kept; the rest is its head labels and colour bar)
#     and at least 80 % of its height: the 30 layers are wrapped into two bands, 0-14 and
#     15-29 side by side, instead of one wide row that left half the page empty (87 % of
#     the width and 81 % of the height, and 74 % and 85 %, measured). At 1600 × 1000 the
#     Compare page draws its pair's matrices 240 px a side or more (A and B over A − B;
#     255 measured, 170 in one row); and the window does not widen itself turning pages.
# Fails without xvfb-run, Python or the default model (tests/lib.sh).
# Usage: test-app-prompt.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run
need_model
need_python_modules json sqlite3
rm -rf "$out"
mkdir -p "$out/home"

export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8 SACCADE_MODEL="$model"
unset WAYLAND_DISPLAY
db="$out/prompt.sqlite"
# One run stored beforehand: the window's first start runs its sample sentence only on an
# empty database.
"$saccade" capture --db "$db" -t "Hello" > /dev/null 2>&1 || fail "capture of the first run"

# About 840 tokens: every head of SmolLM2 would add ~190 MB (sc_store_estimate_bytes).
long=$(for i in $(seq 120); do printf 'The cat sat on the mat. '; done)

cat > "$out/prompt.script" <<EOS
prompt Roses are red,\\nviolets are blue.
expect-sentence Roses are red,\\nviolets are blue.
capture-option generate 4
prompt-editor open
screenshot-prompt $out/prompt-editor.png
run
expect-runs 2
expect-run-item 0 tok · prompt + 4 generated
note-width
dismiss-toast
screenshot $out/prompt-window.png
type One line again.
expect-sentence One line again.
capture-option generate 0
capture-option chat yes
prompt-editor open
prompt-ctrl-enter
expect-runs 3
expect-run-item 0 tok · chat
expect-width-unchanged
setting ask-above 100-mb
capture-option chat no
type $long
run
expect-dialog Store a Large Run?
expect-dialog runs larger than 100.0
dialog-set layers 30
expect-dialog-run no
expect-dialog Layers: 30 is past the model’s last (29: it has 30)
dialog-set layers 0-1
dialog-set heads 0
dialog-set sparse on
expect-dialog at most
expect-dialog (2 of 270 heads; sparse rows take less)
expect-dialog-run yes
screenshot-dialog $out/large-run.png
respond run
expect-runs 4
expect-run-item 0 840 tok · long text
expect-run-item 3 1 tok · sentence
expect-width-unchanged
type $long
run
expect-dialog Store a Large Run?
respond cancel
expect-status Not run; nothing was stored
expect-runs 4
page model
window-size 1600 1000
sleep 700
expect-grid-fill 80 80
screenshot $out/grid-1600x1000.png
select 2
page compare
sleep 700
screenshot $out/compare-1600x1000.png
expect-heatmap-side 240
page model
window-size 1280 800
sleep 700
expect-grid-fill 80 80
screenshot $out/grid-1280x800.png
note-width
page compare
sleep 300
page model
expect-width-unchanged
quit
EOS
bus=""
command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
SACCADE_TEST_SCRIPT="$out/prompt.script" xvfb-run -a -s "-screen 0 1700x1100x24" \
  $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" > "$out/prompt.log" 2>&1
rc=$?
sed 's/^/  | /' "$out/prompt.log"
[ "$rc" -eq 0 ] || fail "the app exited with $rc"
for png in prompt-editor prompt-window large-run; do
  [ -f "$out/$png.png" ] || { fail "$png.png was not written"; continue; }
  "$check_image" "$out/$png.png" 300 100 8 || fail "$png.png looks blank"
done

printf 'Roses are red,\nviolets are blue.' > "$out/poem.txt"
"$saccade" generate -n 4 --json -f "$out/poem.txt" > "$out/gen.json" 2>&1
"$saccade" tokenize --ids -f "$out/poem.txt" > "$out/poem.ids" 2>&1
python - "$db" "$out/gen.json" "$out/poem.ids" > "$out/py.log" 2>&1 <<'PY' || { fail "the stored runs:"; sed 's/^/  | /' "$out/py.log"; }
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
runs = c.execute("SELECT id, text FROM runs ORDER BY id").fetchall()[1:3]
assert len(runs) == 2, runs
gen = json.load(open(sys.argv[2]))
ids = [r[0] for r in c.execute("SELECT token_id FROM tokens WHERE run_id = ? ORDER BY pos", (runs[0][0],))]
want = [int(x) for x in open(sys.argv[3]).read().split()] + gen["generated_ids"]
assert ids == want, (ids, want)
assert runs[0][1] == b"Roses are red,\nviolets are blue." + gen["text"].encode(), runs[0][1]
assert runs[1][1].startswith(b"<|im_start|>") and b"<|im_start|>user\nOne line again.<|im_end|>" in runs[1][1], runs[1][1]
PY
# 3. The large run keeps layers 0-1 × head 0, sparse: those heads export, the others are
# refused by name.
large=$(python - "$db" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT max(id) FROM runs").fetchone()[0])
PY
)
for lh in "0 0" "1 0"; do
  set -- $lh
  "$saccade" export "$large" --db "$db" --layer $1 --head $2 -o "$out/kept-$1-$2.csv" \
    > "$out/kept.log" 2>&1 || fail "the large run did not keep L$1.H$2: $(cat "$out/kept.log")"
done
"$saccade" export "$large" --db "$db" --layer 2 --head 0 -o "$out/not-kept.csv" \
  > "$out/not-kept.log" 2>&1 && fail "the large run kept L2.H0, which the dialog left out"
grep -q "did not keep" "$out/not-kept.log" \
  || fail "exporting a head the run did not keep: $(cat "$out/not-kept.log")"
python - "$db" "$large" <<'PY' || fail "the large run as stored"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, kept, eps = c.execute("SELECT n_tokens, kept, sparse_eps FROM runs WHERE id = ?",
                         (int(sys.argv[2]),)).fetchone()
heads = c.execute("SELECT layer, head FROM attention WHERE run_id = ? ORDER BY layer, head",
                  (int(sys.argv[2]),)).fetchall()
print("the large run: %d tokens, heads %s, sparse EPS %s" % (n, heads, eps))
assert n > 700 and kept is not None and eps == 1e-3, (n, kept, eps)
assert heads == [(0, 0), (1, 0)], heads
assert c.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
PY

[ "$fails" -eq 0 ] && echo "prompt editor: all checks passed"
[ "$fails" -eq 0 ]
