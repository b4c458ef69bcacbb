#!/bin/sh
# test-cli-golden.sh SACCADE GOLDEN_DIR — every stored study written by an earlier version
# reads back the same, and every study verb prints the same JSON for it.
#
# GOLDEN_DIR (tests/app/golden) holds studies.sqlite, made by make-golden.sh with the
# saccade of the landed main before the study-framework change, and the JSON each verb
# printed then (verbs.txt lists them). Each verb runs here on a copy of that database with
# --json; the output must equal the golden JSON field by field, timings aside
# (compare-json.py). A verb that recomputed instead of reading back would say
# "source": "computed" and fail. The database itself must not change: the test compares
# the studies table before and after.
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
golden=$2
need_model
need_python_modules json sqlite3

cp "$golden/studies.sqlite" "$tmp/studies.sqlite"
studies () {
  python -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for row in c.execute("SELECT id, kind, params, status FROM studies ORDER BY id"):
    print(row)
print(c.execute("SELECT count(*), total(value) FROM ablations").fetchone())' "$1"
}
studies "$tmp/studies.sqlite" > "$tmp/before"

grep -v '^#' "$golden/verbs.txt" | while IFS='|' read -r name args; do
  args=$(printf '%s' "$args" | sed "s|@SENTENCES@|$golden/sentences.txt|")
  # shellcheck disable=SC2086
  if ! "$saccade" $args --db "$tmp/studies.sqlite" --json > "$tmp/$name.json" 2> "$tmp/$name.err"; then
    echo "FAIL: saccade $args failed:"
    sed 's/^/  | /' "$tmp/$name.err"
    echo >> "$tmp/failed"
    continue
  fi
  if ! python "$golden/compare-json.py" "$golden/$name.json" "$tmp/$name.json" > "$tmp/$name.diff"; then
    echo "FAIL: saccade $args: $(cat "$tmp/$name.diff")"
    echo >> "$tmp/failed"
  else
    echo "ok: $name"
  fi
done
# (the loop runs in a subshell: its failures are counted through a file)
[ -f "$tmp/failed" ] && fails=$((fails + $(wc -l < "$tmp/failed")))

studies "$tmp/studies.sqlite" > "$tmp/after"
if ! cmp -s "$tmp/before" "$tmp/after"; then
  fail "reading the studies back changed the database's studies:"
  diff "$tmp/before" "$tmp/after" | head -20
fi
[ "$fails" -eq 0 ]
