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
# Takes about 10 minutes on two cores (the head sweeps, the means of the reference set and
# the attribution methods dominate).
set -eu
S=$1
out=$2
mkdir -p "$out"
db=$out/studies.sqlite
rm -f "$db" "$db-wal" "$db-shm"
printf "%s\n" "The cat chased the ball because it was tired." "Paris is the capital of" >"$out/sentences.txt"

$S capture --db "$db" "When Mary and John went to the store, John gave a drink to" >/dev/null

# Each verb twice: the first computes and stores, the second reads back (the golden JSON).
verbs() {
  echo "ablate-heads|ablate 1 --heads"
  echo "ablate-heads-mean|ablate 1 --heads --mean"
  echo "ablate-tokens|ablate 1 --tokens"
  echo "ablate-permute|ablate 1 --permute 2 --seed 3"
  echo "ablate-erasure|ablate 1 --erasure --seeds 2 --seed 1"
  echo "dla|dla 1"
  echo "faithfulness|faithfulness 1"
  echo "attribute|attribute 1 --method saliency,gradxinput,ig --steps 8"
  echo "adversarial|adversarial 1 --layer 3 --head 2 --epsilon 0.01,0.1 --iterations 5"
  echo "means|means"
  echo "induction|induction --len 8 --seeds 2"
  echo "faithfulness-file|faithfulness --file $out/sentences.txt"
}
verbs | while IFS='|' read -r name args; do
  # shellcheck disable=SC2086
  $S $args --db "$db" --json >/dev/null
  # shellcheck disable=SC2086
  $S $args --db "$db" --json >"$out/$name.json"
done
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;" >/dev/null 2>&1 || true
