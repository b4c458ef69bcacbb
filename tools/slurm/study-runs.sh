#!/usr/bin/env bash
# study-runs.sh DB VERB [OPTIONS...] — a per-run study (`saccade VERB RUN OPTIONS --db DB`:
# ablate, attribute, dla, faithfulness, adversarial ...) of every complete run in DB, in run
# order (docs/cluster.md, "Head sweeps and attributions"). Run it in each shard after
# `capture --file --shard`, before the merge: the verbs store their studies in DB and reuse
# them, so a rerun after an interruption computes only what is missing, and the merge
# carries the studies along with their runs (a study's run id follows the run's new id).
# SACCADE (default build/app/saccade) and SACCADE_MODEL are read from the environment.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,8p "$0" >&2; exit 2; }
DB=$1 VERB=$2
shift 2
SACCADE=${SACCADE:-build/app/saccade}
ids=$("$SACCADE" runs --db "$DB" --json | python3 -c 'import json, sys
print(" ".join(str(r["id"]) for r in json.load(sys.stdin)["runs"]))')
for id in $ids; do
  "$SACCADE" "$VERB" "$id" --db "$DB" "$@" > /dev/null
done
