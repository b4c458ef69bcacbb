#!/usr/bin/env bash
# faithfulness-parallel.sh — the same study sharded on one machine with GNU parallel
# (docs/cluster.md): N shards, J at a time, each with T threads, then the merge and report.
#
#   tools/slurm/faithfulness-parallel.sh SENTENCES OUTDIR N [J] [T] [-- more faithfulness options]
#
# SACCADE (default build/app/saccade) and SACCADE_MODEL are read from the environment.
# J defaults to N, T to max(1, cores / J). Rerunning resumes every unfinished shard.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0" >&2; exit 2; }
SENTENCES=$1 OUTDIR=$2 N=$3
J=${4:-$N}
T=${5:-$(( $(nproc) / J > 0 ? $(nproc) / J : 1 ))}
shift $(( $# >= 5 ? 5 : $# ))
[ "${1:-}" = "--" ] && shift
SACCADE=${SACCADE:-build/app/saccade}
mkdir -p "$OUTDIR"
command -v parallel >/dev/null || { echo "GNU parallel is not installed (apt-get install parallel)" >&2; exit 1; }
seq 0 $((N - 1)) | parallel --will-cite --halt now,fail=1 -j "$J" \
  "$SACCADE" faithfulness --file "$SENTENCES" --shard {}/"$N" --db "$OUTDIR"/shard-{}.sqlite \
  --threads "$T" --json "$@" '>' "$OUTDIR"/shard-{}.json
shards=()
for ((i = 0; i < N; i++)); do shards+=("$OUTDIR/shard-$i.sqlite"); done
"$SACCADE" merge "$OUTDIR/merged.sqlite" "${shards[@]}"
"$SACCADE" faithfulness --report "$OUTDIR/merged.sqlite"
