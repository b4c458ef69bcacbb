#!/bin/bash
# run-heads.sh — the per-sentence studies behind docs/findings.md ("Ablation and
# faithfulness"): for 12 of docs/findings/sentences.txt, capture the sentence, then the
# zero-ablation head sweep, direct logit attribution, faithfulness (whose head level uses
# the sweep and the DLA) and erasure curves, each as JSON in $OUT; mean-ablation sweeps for
# the two seed sentences. Then `python3 docs/findings/analyze.py $OUT` prints the tables.
# About 25 minutes on 2 idle cores. Run from the project root after building.
set -eu
S=${SACCADE:-build/app/saccade}
OUT=${OUT:-/tmp/findings}
DB=$OUT/f.db
mkdir -p "$OUT"
rm -f "$DB"
i=0
while IFS= read -r line; do
  i=$((i + 1))
  "$S" capture --db "$DB" "$line" > /dev/null
  "$S" ablate $i --db "$DB" --heads --json > "$OUT/heads-$i.json"
  "$S" dla $i --db "$DB" --json > "$OUT/dla-$i.json"
  "$S" faithfulness $i --db "$DB" --json > "$OUT/faith-$i.json"
  "$S" ablate $i --db "$DB" --erasure --json > "$OUT/erasure-$i.json"
  echo "$i done $(date +%T)"
done <<'LIST'
The cat chased the ball because it was tired.
猫追球，它累了。
The trophy did not fit in the suitcase because it was too
The keys to the cabinet
The capital of France is
The Eiffel Tower is located in the city of
Harry Potter went to the shop. Later, Harry
Alpha Beta Gamma Delta Alpha Beta Gamma
Monday, Tuesday, Wednesday, Thursday,
10 + 5 = 15, 20 + 5 =
中国的首都是
def add(a, b): return a +
LIST
for i in 1 2; do
  "$S" ablate $i --db "$DB" --heads --mean --json > "$OUT/mean-$i.json"
done
