#!/bin/sh
# bench-long.sh [-m MODEL] [-d DIR] [-r REPS] [-b SACCADE] [-c FLAGS] [N ...] — what a long capture
# costs (docs/benchmarks.md, "Long captures"): for each N (default 2048 4096 8192) a text of
# N tokens cut from docs/*.md, stored with every head by `saccade capture` into a fresh
# database in DIR (default $TMPDIR or /tmp), REPS times (default 1); each time also dd
# writing the same number of bytes with fdatasync into DIR, so the store's rate is set
# against the disk's in the same minute. Prints one line per capture:
#   N, wall s, tokens/s, peak RSS, database bytes, bytes / (every head as an fp16 triangle), MB/s of
#   database written, dd MB/s, store ÷ dd, the load before, MB/s of fp16 heads taken in (the
#   triangles over the wall time: what a compressed or rounded store is set against), ÷ dd
# and the machine (CPU model, cores, load average before each capture). Needs GNU time
# (/usr/bin/time) and python3 (standard library only). -c passes FLAGS to every capture
# (e.g. "--compress", or "--round-bits 4 --zero-below 1e-5": docs/store.md). Examples:
#   tools/bench-long.sh -r 3 2048 4096 8192
#   tools/bench-long.sh -c "--round-bits 4 --zero-below 1e-5" 8192
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
model=""
dir=${TMPDIR:-/tmp}
reps=1
saccade="$here/build/app/saccade"
cflags=""
while getopts m:d:r:b:c: opt; do
  case $opt in
    m) model=$OPTARG ;;
    d) dir=$OPTARG ;;
    r) reps=$OPTARG ;;
    b) saccade=$OPTARG ;;
    c) cflags=$OPTARG ;;
    *) echo "usage: $0 [-m MODEL] [-d DIR] [-r REPS] [-b SACCADE] [-c FLAGS] [N ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 2048 4096 8192
[ -x "$saccade" ] || { echo "bench-long: $saccade is not built (meson setup build && ninja -C build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-long: needs GNU time (apt-get install time)" >&2; exit 2; }
mflag=""
[ -z "$model" ] || mflag="-m $model"

work=$(mktemp -d "$dir/bench-long.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cat "$here"/docs/*.md > "$work/corpus.txt"
# shellcheck disable=SC2086
"$saccade" tokenize $mflag --json -f "$work/corpus.txt" > "$work/corpus.json"

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; $("$saccade" --version 2>/dev/null | head -1)"
echo "# N  wall_s  tok/s  peak_RSS_MB  db_bytes  db/fp16_triangles  store_MB/s  dd_MB/s  store/dd  load_before  fp16_ingest_MB/s  ingest/dd"
for n in "$@"; do
  # the first n tokens' bytes, as one text (re-tokenised it may differ by a token at the cut)
  python3 - "$work/corpus.json" "$n" "$work/text-$n.txt" <<'EOF'
import json, sys
toks = json.load(open(sys.argv[1]))["tokens"]
n = int(sys.argv[2])
if len(toks) < n:
    sys.exit("bench-long: the corpus has only %d tokens" % len(toks))
with open(sys.argv[3], "wb") as f:
    f.write(b"".join(bytes.fromhex(t["bytes_hex"]) for t in toks[:n]))
EOF
  for r in $(seq "$reps"); do
    rm -f "$work/c.db" "$work/c.db-wal" "$work/c.db-shm"
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$work/time" "$saccade" capture $mflag $cflags --db "$work/c.db" \
      -p "$work/text-$n.txt" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
    tokens=$(sed -n 's/.*this run of \([0-9]*\) tokens.*/\1/p' "$work/err" | head -1)
    [ -n "$tokens" ] || tokens=$n
    read -r wall rss_kb < "$work/time"
    bytes=$(stat -c %s "$work/c.db")
    mib=$(( (bytes + 1048575) / 1048576 ))
    rm -f "$work/dd.tmp"
    ddrate=$(LC_ALL=C dd if=/dev/zero of="$work/dd.tmp" bs=1M count="$mib" conv=fdatasync 2>&1 \
             | sed -n 's/.*copied, \([0-9.]*\) s.*/\1/p')
    rm -f "$work/dd.tmp"
    python3 - "$tokens" "$wall" "$rss_kb" "$bytes" "$mib" "$ddrate" "$load" "$work/c.db" <<'EOF'
import sqlite3, sys
n, wall, rss_kb, size, mib, dd_s, load, db = sys.argv[1:]
n, wall, size, mib, dd_s = int(n), float(wall), int(size), int(mib), float(dd_s)
heads = sqlite3.connect(db).execute(
    "SELECT count(*) FROM (SELECT DISTINCT layer, head FROM head_scores)").fetchone()[0]
tri = heads * n * (n + 1) // 2 * 2  # every head as an fp16 triangle
store = size / 1e6 / wall
dd = mib * 1048576 / 1e6 / dd_s
ingest = tri / 1e6 / wall  # MB of fp16 heads taken in a second, the whole capture's wall
print("%5d  %7.1f  %6.1f  %6d  %12d  %5.3f  %7.1f  %7.1f  %5.3f  %s  %7.1f  %5.3f"
      % (n, wall, n / wall, int(rss_kb) // 1024, size, size / tri, store, dd, store / dd, load,
         ingest, ingest / dd))
EOF
  done
done
