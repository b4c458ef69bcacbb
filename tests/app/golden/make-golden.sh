#!/bin/sh
# make-golden.sh SACCADE OUTDIR — writes the study fixture database and the JSON every study
# verb prints when it reads those studies back (tests/app/test-cli-golden.sh compares them).
#
# Run once, with the saccade built before the study-framework change (issue 24), and
# committed: the database holds studies stored by that version, and the JSON is what that
# version printed for them. A later version must read every study back to the same numbers
# and print the same JSON (timings aside). Regenerate only when a study's stored form or a
# verb's output changes on purpose, and say so in the commit.
#
# Takes about 12 minutes on two cores (the head sweeps, the means of the reference set and
# the attribution methods dominate).
set -eu
S=$1
out=$2
mkdir -p "$out"
db=$out/studies.sqlite
rm -f "$db" "$db-wal" "$db-shm"

$S capture --db "$db" "When Mary and John went to the store, John gave a drink to" >/dev/null

here=$(cd "$(dirname "$0")" && pwd)
cp "$here/sentences.txt" "$out/sentences.txt" 2>/dev/null || true
# Each verb twice: the first computes and stores, the second reads back (the golden JSON).
grep -v '^#' "$here/verbs.txt" | while IFS='|' read -r name args; do
  args=$(printf '%s' "$args" | sed "s|@SENTENCES@|$out/sentences.txt|")
  # shellcheck disable=SC2086
  $S $args --db "$db" --json >/dev/null
  # shellcheck disable=SC2086
  $S $args --db "$db" --json >"$out/$name.json"
done
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;" >/dev/null 2>&1 || true
