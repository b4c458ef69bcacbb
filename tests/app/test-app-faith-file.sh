#!/bin/sh
# test-app-faith-file.sh — faithfulness over a prompt set in the window (issue 27 item 6):
# the Ablation page's prompt-set window against `saccade faithfulness --file`, in a real X
# server (Xvfb), on the default model (fails without it, xvfb-run or Python: tests/lib.sh).
#
# 1. A scripted user (tests/app/window-driver.c) opens the prompt-set window from the
#    Ablation page, picks a file of five short sentences (a comment and a blank line among
#    them; five, because under SC_FAITH_MIN_CI_ITEMS = 5 sentences there is no interval to
#    compare) in the file chooser, asks for the context-mixing sources and runs: five
#    sentences computed and stored. The table, the note and the reading are printed, the
#    window screenshotted, the table exported as CSV and the distributions as PNG and SVG.
#    Run again: all five read back. "Without the first token": read back again (both sets
#    are stored), the table printed. Dropping instead of masking (another study, another
#    database) is cancelled at its first progress: no sentence study is left there.
# 2. The command line over the same file with the window's database (the path the window
#    printed) reads every sentence back ("5 read back"), its --table-csv is the window's
#    CSV byte for byte, and its --json's Table 2 is the window's table number for number
#    (at the window's rounding), in both token sets; its readings are the window's.
# 3. The other way: the command line runs the cancelled dropping study whole in the
#    window's database for it, and the window, started again with those options, reads
#    all five sentences back.
#
# Usage: test-app-faith-file.sh SACCADE APP_CHECK_IMAGE OUTDIR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
check_image=$2
out=$3

need_tools xvfb-run sqlite3
need_model
need_python_modules json

rm -rf "$out"
mkdir -p "$out/home"
export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
export LANGUAGE=en LC_ALL=C.UTF-8
unset WAYLAND_DISPLAY
db="$out/captures.sqlite"
prompts="$out/prompts.txt"
check_png() { [ -f "$1" ] && "$check_image" "$1" 600 400 30 || fail "$1 is missing or blank"; }

cat > "$prompts" <<'TEXT'
# five short sentences (this line and the blank one are skipped)
The cat sat on the warm mat.

Mary gave the book to John.
Rain fell on the quiet town.
The old dog slept all day.
She opened the red door.
TEXT

# --- 1. The window ----------------------------------------------------------------------
cat > "$out/window.script" <<SCRIPT
page ablation
faith-file-open
expect-faith-file Choose a text file of sentences
faith-file choose
open-file $prompts
expect-faith-file Press Run
faith-file mixing yes
faith-file run
expect-faith-file 5 sentences · 0 read back
print-faith-file
screenshot-dialog $out/faith-file.png SaccadeFaithFileWindow
faith-file export-csv
save-as $out/window-table.csv
faith-file export-figure
save-as $out/window-dist.png
faith-file export-figure
save-as $out/window-dist.svg
faith-file run
expect-faith-file 5 sentences · 5 read back
faith-file exclude-first yes
faith-file run
expect-faith-file 5 sentences · 5 read back
print-faith-file
screenshot-dialog $out/faith-file-nf.png SaccadeFaithFileWindow
faith-file kind drop
faith-file-run-then-cancel
expect-faith-file Cancelled
quit
SCRIPT
run_window() { # NAME: plays $out/NAME.script, its log in $out/NAME.log
  bus=""
  command -v dbus-run-session >/dev/null 2>&1 && bus="dbus-run-session --"
  SACCADE_TEST_SCRIPT="$out/$1.script" xvfb-run -a -s "-screen 0 1400x1000x24" \
    $bus "${SACCADE_WINDOW_TEST:?}" --db "$db" --model "$model" > "$out/$1.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$out/$1.log"
  [ "$rc" -eq 0 ] || fail "the $1 script exited with $rc"
}
run_window window

check_png "$out/faith-file.png"
check_png "$out/faith-file-nf.png"
check_png "$out/window-dist.png"
head -c 8 "$out/window-dist.png" | grep -q PNG || fail "window-dist.png is not a PNG"
grep -q "<svg" "$out/window-dist.svg" || fail "window-dist.svg is not an SVG"
# the masking study's database, as the window named it; dropping is another study, another
# database, cancelled in its first sentence: nothing of it stored but its manifest
store=$(sed -n 's/^test-driver: faith-file-set: .* · stored in //p' "$out/window.log" | head -1)
[ -f "$store" ] || fail "the window does not say where it stored: '$store'"
set -- "$out"/prompt-sets/*.sqlite
[ $# -eq 2 ] || fail "two studies (mask, drop) should have two databases in $out/prompt-sets: $*"
dropped=""
for f in "$@"; do
  [ "$f" = "$store" ] && continue
  dropped=$f
  n=$(sqlite3 "$f" "SELECT count(*) FROM studies WHERE kind = 'faithfulness'")
  [ "$n" = 0 ] || fail "the cancelled study left $n sentence studies in $f"
done

# --- 2. The command line reads the window's studies back, with the same numbers ----------
cli() { "$saccade" faithfulness --file "$prompts" --db "$store" -m "$model" --mixing "$@" 2>&1; }
cli --table-csv "$out/cli-table.csv" > "$out/cli.txt"
sed 's/^/  | /' "$out/cli.txt"
grep -q "5 sentences of the file (5 read back from" "$out/cli.txt" \
  || fail "saccade faithfulness did not read the window's five studies back"
cmp -s "$out/window-table.csv" "$out/cli-table.csv" \
  || fail "the window's table CSV is not the command line's --table-csv: $(diff "$out/window-table.csv" "$out/cli-table.csv" | head -5)"
cli --json > "$out/cli.json" || fail "saccade faithfulness --json: $(head -3 "$out/cli.json")"
cli --json --exclude-first > "$out/cli-nf.json" || fail "--exclude-first --json: $(head -3 "$out/cli-nf.json")"
cli --exclude-first > "$out/cli-nf.txt"

python - "$out" <<'PY' > "$out/py.log" 2>&1
import json, sys
out = sys.argv[1]
log = open(f"{out}/window.log", encoding="utf-8").read().splitlines()
tables, table, readings = [], None, []
for line in log:
    if line.startswith("test-driver: faith-file-set:"):
        table = []
        tables.append(table)
    elif line.startswith("test-driver: faith-file-row: "):
        table.append(line[len("test-driver: faith-file-row: "):].split(" | "))
    elif line.startswith("test-driver: faith-file-reading: "):
        readings.append([line[len("test-driver: faith-file-reading: "):]])
    elif readings and line.startswith("• "):
        readings[-1].append(line)
assert len(tables) == 2, f"{len(tables)} tables printed, expected 2"

def fmt(f, v):
    return "—" if v is None else f % v

def ci(p):
    return "—" if p is None or p[0] is None else "[%+.2f, %+.2f]" % (p[0], p[1])

def expected(d):
    t2 = d["table2"]
    rows = []
    for k, m in t2.items():
        if k in ("best-head", "median-head", "attention-vs-saliency"):
            continue
        if k in ("last-mean", "rollout", "flow") or m["n_defined"] > 0:
            rows.append(m)
    rows += [t2["best-head"], t2["median-head"]]
    cells = []
    for m in rows:
        tau = "—" if m["tau_mean"] is None else (
            "%+.3f" % m["tau_mean"] if m["tau_std"] is None
            else "%+.3f ± %.3f" % (m["tau_mean"], m["tau_std"]))
        cells.append([tau, ci(m["tau_ci"]), fmt("%+.3f", m["rho_mean"]), ci(m["rho_ci"]),
                      fmt("%.1f %%", None if m["share_significant"] is None
                          else 100 * m["share_significant"]),
                      fmt("%.1f %%", None if m["share_significant_bh"] is None
                          else 100 * m["share_significant_bh"]),
                      fmt("%.3f", m["topk_mean"]), "%d" % m["n_undefined"],
                      fmt("%+.3f", m["tau_mean_other_set"])])
    return cells

n = intervals = 0
for name, table in (("cli.json", tables[0]), ("cli-nf.json", tables[1])):
    d = json.load(open(f"{out}/{name}", encoding="utf-8"))
    assert d["n_sentences"] == 5, d["n_sentences"]
    want = expected(d)
    got = [row[1:] for row in table[1:]]
    assert len(got) == len(want), (name, len(got), len(want))
    for g, w in zip(got, want):
        assert g == w, (name, g, w)
        n += len(g)
        intervals += g[1] != "—"
    assert table[-2][0].startswith("best head L%d.H%d" % (d["table2"]["best-head"]["layer"],
                                                         d["table2"]["best-head"]["head"])), table[-2][0]

# the readings: the command line's "reading:" lines of its file table
for name, got in (("cli.txt", readings[0]), ("cli-nf.txt", readings[1])):
    text = open(f"{out}/{name}", encoding="utf-8").read().splitlines()
    i = max(k for k, l in enumerate(text) if l == "reading:")
    want = []
    for l in text[i + 1:]:
        if not l.startswith("  - "):
            break
        want.append(l[4:])
    got = [l[2:] if l.startswith("• ") else l for l in got]
    assert got == want, (name, got, want)
assert intervals > 0, "no interval was compared"
print("python: ok, %d cells (%d rows with τ intervals) and the readings of both sets"
      % (n, intervals))
PY
cat "$out/py.log"
grep -q "python: ok" "$out/py.log" || fail "the window's table is not the command line's"

# --- 3. And the window reads back what the command line stored -------------------------
# The cancelled dropping study, run whole by the command line in the window's database for
# it; the window, started again, then computes nothing.
"$saccade" faithfulness --file "$prompts" --db "$dropped" -m "$model" --mixing --kind drop \
  > "$out/cli-drop.txt" 2>&1 || fail "faithfulness --kind drop: $(tail -3 "$out/cli-drop.txt")"
grep -q "5 sentences of the file (0 read back from" "$out/cli-drop.txt" \
  || fail "the command line should compute the five dropped sentences: $(head -3 "$out/cli-drop.txt")"
cat > "$out/again.script" <<SCRIPT
page ablation
faith-file-open
faith-file choose
open-file $prompts
faith-file mixing yes
faith-file kind drop
faith-file run
expect-faith-file 5 sentences · 5 read back
print-faith-file
quit
SCRIPT
run_window again
grep -qF "0 computed now · stored in $dropped" "$out/again.log" \
  || fail "the window did not read the command line's studies back from $dropped"

if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
