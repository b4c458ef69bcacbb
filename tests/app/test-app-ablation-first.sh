#!/bin/sh
# test-app-ablation-first.sh — the head sweep's first pass on the Ablation page ("Head sweep —
# first-order first pass, top 30 exact"), in a real X server (Xvfb), on the default model
# (fails without it, xvfb-run or sqlite3: tests/lib.sh).
#
# 1. A scripted user (tests/app/window-driver.c) captures "The cat sat.", opens the Ablation
#    page, chooses the first-pass sweep and runs it: the status line gives the first pass's
#    and the exact ablations' seconds and ρ; the map is drawn and screenshotted; the CSV is
#    exported.
# 2. The command line finds that study (`saccade ablate RUN --heads --first-pass 30`: reused),
#    whose params say the first pass and K: 30 heads exact, the top 30 by |estimate|.
# 3. The window again on the same database shows the stored study at once, with the ρ the
#    command line read back, and computes nothing.
#
# Usage: test-app-ablation-first.sh SACCADE APP_CHECK_IMAGE OUTDIR
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

# --- 1. The window computes it ----------------------------------------------------------
cat > "$out/first.script" <<SCRIPT
type The cat sat.
run
page ablation
dismiss-toast
ablation-study heads-first
ablation-run
expect-ablation computed in
expect-ablation top 30 exact
expect-ablation (estimate, exact)
screenshot $out/heads-first.png
export-csv $out/heads-first.csv
quit
SCRIPT
run_app first "$out/first.script"
check_png "$out/heads-first.png"
[ "$(studies "kind = 'ablate-heads-first' AND params LIKE '%\"first-pass\":\"gradient\",\"top\":30}'")" = 1 ] \
  || fail "the window did not store one first-pass study whose params say it"

# the CSV: every head's estimate, the exact effects of 30 heads only
python -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 270, len(rows)
exact = [r for r in rows if r["exact"] == "1"]
assert len(exact) == 30 and all(r["delta_logp"] != "" for r in exact)
assert all(r["delta_logp"] == "" and r["flipped"] == "" for r in rows if r["exact"] == "0")
assert all(r["estimate"] != "" for r in rows)
' "$out/heads-first.csv" > "$out/csv.err" 2>&1 || { fail "heads-first.csv:"; cat "$out/csv.err"; }

# --- 2. The command line reads it back ---------------------------------------------------
run=$(sqlite3 "$db" "SELECT max(id) FROM runs") # the typed sentence, the newest
SACCADE_MODEL="$model" "$saccade" ablate "$run" --db "$db" --heads --first-pass 30 --json \
  > "$out/cli.json" 2> "$out/cli.err"
pycheck cli-reads-window "$out/cli.json" '
assert d["source"] == "reused", d["source"]
assert d["exact_heads"] == 30 and len(d["heads"]) == 270
hs = d["heads"]
top = sorted(range(270), key=lambda i: (-abs(hs[i]["estimate"]), i))[:30]
assert sorted(i for i in range(270) if hs[i]["exact"]) == sorted(top)
'
rho=$(python -c 'import json, sys; print("%.3f" % json.load(open(sys.argv[1]))["spearman_rho"])' "$out/cli.json")
n_before=$(studies 1)

# --- 3. Reopened: the stored study shows at once -----------------------------------------
cat > "$out/again.script" <<SCRIPT
select newest
page ablation
dismiss-toast
ablation-study heads-first
expect-ablation study 1 of
expect-ablation ρ $rho (estimate, exact)
screenshot $out/heads-first-stored.png
quit
SCRIPT
run_app again "$out/again.script"
check_png "$out/heads-first-stored.png"
[ "$(studies 1)" = "$n_before" ] || fail "showing a stored study computed another one"

echo "screenshots in $out"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
