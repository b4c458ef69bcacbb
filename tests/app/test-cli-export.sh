#!/bin/sh
# test-cli-export.sh — whole-run export (`saccade export RUN --all`), token ranges
# (`--range`), the grid's bands (`--bands`), the Python reader (python/saccade_store.py)
# against the C reader, and the new user's first verbs (`demo --json`, the model's readable
# name).
# Usage: test-cli-export.sh PATH/TO/saccade   (fails without the default model or
# NumPy: tests/lib.sh)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_python_modules json numpy sqlite3
export SACCADE_MODEL="$model"
export PYTHONPATH="$src/python"
db="$tmp/runs.sqlite"

ok() { # name, rc, output file
  if [ "$2" -eq 0 ]; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1 exited $2:"; sed 's/^/  | /' "$3"; fails=$((fails + 1))
  fi
}

# Two runs: English, and Chinese, whose characters are split over byte tokens (pieces that
# are not UTF-8 on their own: the .npz must keep their bytes exactly).
"$saccade" capture --db "$db" -t "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture-1 "$tmp/cap" "^1$"
"$saccade" capture --db "$db" -t "猫追球，它累了。" > "$tmp/cap" 2>&1
check capture-2 "$tmp/cap" "^2$"

# ------------------------------------------------------------------------------------ #
# --all                                                                                #

write_npz=$2 # app-write-npz (ZIP64 records, below); read before `set --` reuses $1 $2

for run in 1 2; do
  "$saccade" export "$run" --db "$db" --all -o "$tmp/run$run.npz" > "$tmp/all$run" 2>&1
  ok "export-all-npz-$run" $? "$tmp/all$run"
  check "export-all-says-$run" "$tmp/all$run" "270 heads as float32 \[layer, head, query, key\]"
  check "export-all-fp16-$run" "$tmp/all$run" "stored fp16 probabilities"
done
"$saccade" export 1 --db "$db" --all -o "$tmp/run1.npy" > "$tmp/all-npy" 2>&1
ok export-all-npy $? "$tmp/all-npy"
check export-all-npy-loses "$tmp/all-npy" "holds the attention alone"
"$saccade" export 1 --db "$db" --all -o "$tmp/run1-json.npz" --json > "$tmp/all-json" 2>&1
ok export-all-json $? "$tmp/all-json"
check export-all-json-shape "$tmp/all-json" '"heads_stored" : 270'

# One head as CSV, .npy and JSON: the C reader's values, written by the single-head export.
for lh in "0 0" "5 2" "29 8"; do
  set -- $lh
  "$saccade" export 1 --db "$db" --layer "$1" --head "$2" -o "$tmp/h$1-$2.csv" > /dev/null 2>&1
  "$saccade" export 1 --db "$db" --layer "$1" --head "$2" -o "$tmp/h$1-$2.json" > /dev/null 2>&1
done
"$saccade" runs --db "$db" --json > "$tmp/runs.json" 2>&1

# The .npz against the database (read by the Python reader) and against the C reader's
# CSV and JSON, value for value; the .npy against the .npz; tokens, text and metadata.
python - "$tmp" "$db" > "$tmp/py-all" 2>&1 <<'PY'
import json, sqlite3, sys
import numpy as np
import saccade_store as ss
tmp, db = sys.argv[1], sys.argv[2]
# (errors="replace": a model path need not be UTF-8)
runs = {r["id"]: r for r in json.load(open(f"{tmp}/runs.json", errors="replace"))["runs"]}
with ss.Store(db) as st:
    for run_id in (1, 2):
        z = ss.load_npz(f"{tmp}/run{run_id}.npz")
        run = st.run(run_id)
        n = run.n_tokens
        assert z.attention.shape == (30, 9, n, n) and z.attention.dtype == np.float32, z.attention.shape
        assert z.stored.all() and z.stored.shape == (30, 9)
        seen = 0
        for l, h, a in st.heads(run_id):
            assert np.array_equal(a, z.attention[l, h]), (run_id, l, h)
            seen += 1
        assert seen == 270, seen
        toks = st.tokens(run_id)
        assert [t.piece for t in toks] == z.token_pieces, "token bytes"
        assert [t.id for t in toks] == list(z.token_ids), "token ids"
        assert list(z.positions if hasattr(z, "positions") else range(n)) == list(range(n))
        assert list(z.query_positions) == list(range(n)) == list(z.key_positions)
        assert z.text_bytes == run.text_bytes and z.text == run.text
        m = z.metadata
        assert m["run"]["model"]["sha256"] == run.model_sha256 == runs[run_id]["model"]["sha256"]
        assert m["run"]["model"]["name"] == run.model_name
        assert m["dtype_stored"] == "f16" and "fp16" in m["values"]
        assert m["range"] == {"q0": 0, "q1": n, "k0": 0, "k1": n}
        # fp16 rows: within n * 2^-12 of 1, never exactly 1 everywhere.
        sums = z.attention.sum(axis=-1, dtype=np.float64)
        assert np.all(np.abs(sums - 1) <= n * 2**-12), (sums.min(), sums.max())
        print(f"run {run_id}: {n} tokens, row sums {sums.min():.5f}..{sums.max():.5f}")
    # The Chinese run's pieces are bytes, some not UTF-8 alone.
    z2 = ss.load_npz(f"{tmp}/run2.npz")
    assert any(not _ok for _ok in (_p.decode("utf-8", "ignore").encode() == _p for _p in z2.token_pieces))
    z = ss.load_npz(f"{tmp}/run1.npz")
    assert np.array_equal(np.load(f"{tmp}/run1.npy"), z.attention)
    for l, h in ((0, 0), (5, 2), (29, 8)):
        c = np.loadtxt(f"{tmp}/h{l}-{h}.csv", delimiter=",", skiprows=1,
                       usecols=range(1, z.attention.shape[3] + 1), dtype=np.float64)
        assert np.array_equal(c.astype(np.float32), z.attention[l, h]), (l, h)
        j = json.load(open(f"{tmp}/h{l}-{h}.json"))
        assert j["dtype_stored"] == "f16"
        assert np.array_equal(np.array(j["weights"], dtype=np.float32), z.attention[l, h])
        assert np.array_equal(st.head(1, l, h), z.attention[l, h])
print("npz = store = csv = json")
PY
ok export-all-roundtrip $? "$tmp/py-all"
check export-all-roundtrip-says "$tmp/py-all" "npz = store = csv = json"

# The same export twice gives the same bytes (fixed ZIP times, no stray state).
"$saccade" export 1 --db "$db" --all -o "$tmp/again.npz" > /dev/null 2>&1
cmp -s "$tmp/run1.npz" "$tmp/again.npz" && passes=$((passes + 1)) \
  || { echo "FAIL: two exports of run 1 differ"; fails=$((fails + 1)); }
# The archive is a valid ZIP by another reader than NumPy's.
python -m zipfile -t "$tmp/run1.npz" > "$tmp/ziptest" 2>&1
ok export-all-zip-valid $? "$tmp/ziptest"

# --compress: the same arrays as the stored export, every member deflated.
"$saccade" export 1 --db "$db" --all --compress -o "$tmp/run1-deflated.npz" > "$tmp/z" 2>&1
ok export-all-compress $? "$tmp/z"
python - "$tmp/run1-deflated.npz" "$tmp/run1.npz" > "$tmp/z" 2>&1 <<'PY'
import sys, zipfile
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in b.files)
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist())
PY
ok export-all-compress-reads $? "$tmp/z"

# Deflated (--compress), and with ZIP64 records (forced from byte 1 or 100 on by
# app-write-npz, ARG 2, through saccade_npz_writer_new_zip64_from: the records a member past
# 4 GiB needs, without writing 4 GiB): the same arrays, valid for NumPy, Python's zipfile and
# Info-ZIP's unzip. The reference is the same members written with the format's threshold.
"$write_npz" "$tmp/zip64-ref.npz" > "$tmp/z" 2>&1
ok export-zip64-ref $? "$tmp/z"
for from in "" 1 100; do
  for c in "" --compress; do
    name="zip64-${from:-none}${c}"
    "$write_npz" "$tmp/$name.npz" "$from" "${c:+6}" > "$tmp/z" 2>&1
    ok "export-$name" $? "$tmp/z"
    python - "$tmp/$name.npz" "$tmp/zip64-ref.npz" "$from" "$c" > "$tmp/z" 2>&1 <<'PY'
import sys, zipfile
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in b.files)
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None
    info = z.infolist()
    assert all(i.compress_type == (zipfile.ZIP_DEFLATED if sys.argv[4] else zipfile.ZIP_STORED) for i in info)
    # ZIP64 extra field (id 0x0001) on the members past the threshold.
    assert any(i.extra[:2] == b"\x01\x00" for i in info) == bool(sys.argv[3])
PY
    ok "export-$name-reads" $? "$tmp/z"
    if command -v unzip > /dev/null; then
      unzip -tq "$tmp/$name.npz" > "$tmp/z" 2>&1
      ok "export-$name-unzip" $? "$tmp/z"
    fi
  done
done
"$saccade" export 1 --db "$db" --compress --layer 0 --head 0 -o "$tmp/x.csv" > "$tmp/e" 2>&1
expect_fail compress-not-all "$tmp/e" "--compress goes with --all" $?
"$saccade" export 1 --db "$db" --all --compress -o "$tmp/x.npy" > "$tmp/e" 2>&1
expect_fail compress-npy "$tmp/e" "a .npy is never compressed" $?

"$saccade" export 1 --db "$db" --all -o "$tmp/x.csv" > "$tmp/e" 2>&1
expect_fail export-all-csv "$tmp/e" "writes .npz (attention, tokens and metadata) or .npy" $?
"$saccade" export 1 --db "$db" --all -o - > "$tmp/e" 2>&1
expect_fail export-all-stdout "$tmp/e" "needs -o FILE.npz" $?
"$saccade" export 1 --db "$db" --all --layer 3 -o "$tmp/x.npz" > "$tmp/e" 2>&1
expect_fail export-all-layer "$tmp/e" "leave out --layer and --head" $?
"$saccade" export 1 --db "$db" --all --figure grid -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail export-all-figure "$tmp/e" "draw every head with --figure grid" $?
"$saccade" export 9 --db "$db" --all -o "$tmp/x.npz" > "$tmp/e" 2>&1
expect_fail export-all-no-run "$tmp/e" "9" $?
[ ! -e "$tmp/x.npz" ] && passes=$((passes + 1)) || { echo "FAIL: a failed export left x.npz"; fails=$((fails + 1)); }
ls "$tmp" | grep -q 'x\.npz\.' && { echo "FAIL: a failed export left a temporary file"; fails=$((fails + 1)); } || passes=$((passes + 1))

# A head missing from the store (a capture of chosen heads, or an edited file): either a
# clear refusal naming the head, or — once the store has such captures — NaN and a false
# 'stored' for exactly that head.
cp "$db" "$tmp/holes.sqlite"
python - "$tmp/holes.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("DELETE FROM attention WHERE run_id = 1 AND layer = 7 AND head = 4")
c.commit()
PY
"$saccade" export 1 --db "$tmp/holes.sqlite" --all -o "$tmp/holes.npz" > "$tmp/holes" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  check export-all-hole-refused "$tmp/holes" "run 1"
else
  python - "$tmp/holes.npz" "$tmp/run1.npz" > "$tmp/holes-py" 2>&1 <<'PY'
import sys
import numpy as np
import saccade_store as ss
z, full = ss.load_npz(sys.argv[1]), ss.load_npz(sys.argv[2])
assert not z.stored[7, 4] and z.stored.sum() == 269
assert np.isnan(z.attention[7, 4]).all()
mask = z.stored
assert np.array_equal(z.attention[mask], full.attention[mask])
assert z.metadata["heads_missing"] == 1
PY
  ok export-all-hole-nan $? "$tmp/holes-py"
  check export-all-hole-says "$tmp/holes" "1 heads are not in the store"
fi
python -c "
import sys, saccade_store as ss
st = ss.Store(sys.argv[1])
try:
    st.head(1, 7, 4)
except ss.StoreError as e:
    print('refused:', e)
" "$tmp/holes.sqlite" > "$tmp/holes-reader" 2>&1
# (a run that kept every head lacks one: a damaged store; HeadNotStored is for the heads
# a capture of chosen heads did not keep, below)
check reader-hole "$tmp/holes-reader" "refused: .*layer 7 head 4: neither attention nor attention_parts"

# ------------------------------------------------------------------------------------ #
# --range                                                                              #

"$saccade" export 1 --db "$db" --all --range 2:6 -o "$tmp/r26.npz" > "$tmp/r" 2>&1
ok range-all $? "$tmp/r"
check range-all-says "$tmp/r" "queries 2:6 x keys 2:6"
"$saccade" export 1 --db "$db" --all --range 3:7,0:7 -o "$tmp/r37.npz" > /dev/null 2>&1
"$saccade" export 1 --db "$db" --all --range 8: -o "$tmp/r8.npz" > /dev/null 2>&1
"$saccade" export 1 --db "$db" --layer 5 --head 2 --range 3:7,0:7 -o "$tmp/r37.csv" > "$tmp/r" 2>&1
check range-csv-says "$tmp/r" "4 x 7, queries 3:7 x keys 0:7"
"$saccade" export 1 --db "$db" --layer 5 --head 2 --range 3:7,0:7 -o "$tmp/r37.npy" > /dev/null 2>&1
"$saccade" export 1 --db "$db" --layer 5 --head 2 --range 3:7,0:7 -o "$tmp/r37.json" > /dev/null 2>&1
python - "$tmp" > "$tmp/py-range" 2>&1 <<'PY'
import csv, json, sys
import numpy as np
import saccade_store as ss
tmp = sys.argv[1]
full = ss.load_npz(f"{tmp}/run1.npz").attention
z = ss.load_npz(f"{tmp}/r26.npz")
assert np.array_equal(z.attention, full[:, :, 2:6, 2:6]) and list(z.query_positions) == [2, 3, 4, 5]
assert z.metadata["range"] == {"q0": 2, "q1": 6, "k0": 2, "k1": 6}
assert len(z.token_ids) == 10, "tokens stay the whole run's"
z = ss.load_npz(f"{tmp}/r37.npz")
assert np.array_equal(z.attention, full[:, :, 3:7, 0:7]) and list(z.key_positions) == list(range(7))
z = ss.load_npz(f"{tmp}/r8.npz")
assert np.array_equal(z.attention, full[:, :, 8:, 8:]), z.attention.shape
rows = list(csv.reader(open(f"{tmp}/r37.csv", newline="")))
assert rows[0][1] == "0:The" and rows[0][-1] == "6:␣it" and rows[1][0] == "3:␣the", rows[0]
vals = np.array([[float(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32)
assert np.array_equal(vals, full[5, 2, 3:7, 0:7])
assert np.array_equal(np.load(f"{tmp}/r37.npy"), full[5, 2, 3:7, 0:7])
j = json.load(open(f"{tmp}/r37.json"))
assert j["query_start"] == 3 and j["key_start"] == 0 and j["n_query"] == 4 and j["n_key"] == 7
assert np.array_equal(np.array(j["weights"], dtype=np.float32), full[5, 2, 3:7, 0:7])
print("ranges match the slices")
PY
ok range-slices $? "$tmp/py-range"
check range-slices-says "$tmp/py-range" "ranges match the slices"

# Figures honour it: a heatmap of 4 x 7 cells differs from the whole head's; the grid and
# lines need a square and a diagonal range; the profile takes none.
"$saccade" export 1 --db "$db" --figure heatmap --layer 5 --head 2 --range 3:7,0:7 -o "$tmp/r.png" > "$tmp/r" 2>&1
ok range-heatmap $? "$tmp/r"
check range-heatmap-title "$tmp/r" "tokens 3:7 × 0:7"
"$saccade" export 1 --db "$db" --figure heatmap --layer 5 --head 2 -o "$tmp/whole.png" > /dev/null 2>&1
cmp -s "$tmp/r.png" "$tmp/whole.png" && { echo "FAIL: the range heatmap is the whole head's"; fails=$((fails + 1)); } || passes=$((passes + 1))
"$saccade" export 1 --db "$db" --figure grid --range 2:6 -o "$tmp/g.png" > "$tmp/r" 2>&1
ok range-grid $? "$tmp/r"
"$saccade" export 1 --db "$db" --figure grid --metric entropy --range 2:6 -o "$tmp/g.svg" > "$tmp/r" 2>&1
ok range-grid-metric $? "$tmp/r"
"$saccade" export 1 --db "$db" --figure lines --layer 3 --range 2:6 -o "$tmp/l.svg" > "$tmp/r" 2>&1
ok range-lines $? "$tmp/r"
grep -q "␣cat" "$tmp/l.svg" && { echo "FAIL: the range lines figure shows token 1"; fails=$((fails + 1)); } || passes=$((passes + 1))
"$saccade" export 1 --db "$db" --figure rollout --range 4:10,0:10 -o "$tmp/ro.png" > "$tmp/r" 2>&1
ok range-rollout $? "$tmp/r"
"$saccade" export 1 --db "$db" --figure grid --range 2:6,0:6 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail range-grid-square "$tmp/e" "the grid draws square heads" $?

# The grid's layers wrapped into bands (--bands N; automatic by default): SmolLM2's 30 layers
# in two bands make a narrower, taller page than in one; 31 bands of 30 layers, a negative
# count and --bands without the grid are refused, each saying why.
"$saccade" export 1 --db "$db" --figure grid --bands 1 -o "$tmp/b1.png" > "$tmp/r" 2>&1
ok grid-bands-1 $? "$tmp/r"
"$saccade" export 1 --db "$db" --figure grid --bands 2 -o "$tmp/b2.png" > "$tmp/r" 2>&1
ok grid-bands-2 $? "$tmp/r"
python3 - "$tmp/b1.png" "$tmp/b2.png" > "$tmp/r" 2>&1 <<'EOF'
import struct, sys
one, two = (struct.unpack(">II", open(p, "rb").read()[16:24]) for p in sys.argv[1:])
assert two[0] < 0.8 * one[0] and two[1] > 1.3 * one[1], (one, two)
EOF
ok grid-bands-size $? "$tmp/r"
"$saccade" export 1 --db "$db" --figure grid --bands 31 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail grid-bands-many "$tmp/e" "cannot wrap the run's 30 layers into 31 bands" $?
"$saccade" export 1 --db "$db" --figure grid --bands -1 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail grid-bands-negative "$tmp/e" "--bands is a number of bands" $?
"$saccade" export 1 --db "$db" --figure heatmap -l 0 -H 0 --bands 2 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail grid-bands-heatmap "$tmp/e" "--bands goes with --figure grid" $?
"$saccade" export 1 --db "$db" --figure lines --layer 3 --range 2:6,0:6 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail range-lines-same "$tmp/e" "the same tokens on both sides" $?
"$saccade" export 1 --db "$db" --figure profile --range 2:6 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail range-profile "$tmp/e" "takes no --range" $?

# The lines figure draws only the strongest links (ui/figures/saccade-figure-lines.h): per
# query of the range and per head given, the top K of the query's whole row that are at
# least T, ties to the earlier key. Each link is one stroke in the SVG: their number and
# colours are checked against the rule computed in numpy from the .npz of the same run.
"$saccade" export 1 --db "$db" --figure lines --layer 3 --threshold 0.2 --top-k 2 --heads 0,3 \
  --range 2:6 -o "$tmp/lk.svg" --json > "$tmp/r" 2>&1
ok lines-options $? "$tmp/r"
check lines-options-json-threshold "$tmp/r" '"threshold" : 0.2'
check lines-options-json-top-k "$tmp/r" '"top_k" : 2'
check lines-options-json-range "$tmp/r" '"range_end" : 6'
"$saccade" export 1 --db "$db" --figure lines --layer 3 --heads 0,3 --range 2:6 -o "$tmp/lk.png" \
  > "$tmp/r" 2>&1
check lines-options-title "$tmp/r" "layer 3, heads 0,3, tokens 2:6"
"$saccade" export 1 --db "$db" --figure lines --layer 3 -o "$tmp/ld.svg" > /dev/null 2>&1
"$saccade" export 1 --db "$db" --figure lines --layer 3 --threshold 0 --top-k 0 -o "$tmp/l0.svg" \
  > /dev/null 2>&1
"$saccade" export 1 --db "$db" --all -o "$tmp/lines-all.npz" > /dev/null 2>&1
python - "$tmp" > "$tmp/py-lines" 2>&1 <<'PY'
import re, sys
import numpy as np
tmp = sys.argv[1]
A = np.load(f"{tmp}/lines-all.npz")["attention"][3]          # (heads, n, n)
n = A.shape[1]
def colour(h):   # the SVG's rgb() of head h (Tableau 10, saccade_figure_head_color)
    t = ["1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd", "8c564b", "e377c2", "7f7f7f", "bcbd22"]
    return tuple(int(t[h][i:i + 2], 16) for i in (0, 2, 4))
def strokes(path):
    out = []
    for m in re.finditer(r"stroke-width:[^;]*;[^\"]*stroke:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)",
                         open(path).read()):
        out.append(tuple(round(float(v) * 255 / 100) for v in m.groups()))
    return out
def expected(heads, q0, q1, t, k):
    count = {}
    for h in heads:
        for q in range(q0, q1):
            row = A[h, q]
            keys = [j for j in range(n) if row[j] >= np.float32(max(t, 1 / 256))
                    and np.isfinite(row[j])]
            keys.sort(key=lambda j: (-row[j], j))
            count[colour(h)] = count.get(colour(h), 0) + len(keys[:k] if k else keys)
    return count
def got(path):
    count = {}
    for c in strokes(path):
        count[c] = count.get(c, 0) + 1
    return count
for path, want in ((f"{tmp}/lk.svg", expected([0, 3], 2, 6, 0.2, 2)),
                   (f"{tmp}/ld.svg", expected(range(9), 0, n, 0.1, 3)),
                   (f"{tmp}/l0.svg", expected(range(9), 0, n, 0, 0))):
    have = got(path)
    assert have == {c: v for c, v in want.items() if v}, (path, have, want)
print("lines strokes match the rule")
PY
ok lines-rule $? "$tmp/py-lines"
check lines-rule-says "$tmp/py-lines" "lines strokes match the rule"
"$saccade" export 1 --db "$db" --figure lines --layer 3 --threshold 1.5 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-threshold-range "$tmp/e" "--threshold is a weight from 0 to 1" $?
"$saccade" export 1 --db "$db" --figure lines --layer 3 --top-k -2 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-top-k-negative "$tmp/e" "--top-k is a count of links" $?
"$saccade" export 1 --db "$db" --figure lines --layer 3 --heads 0,0 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-heads-twice "$tmp/e" "names head 0 twice" $?
"$saccade" export 1 --db "$db" --figure lines --layer 3 --heads 1,x -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-heads-syntax "$tmp/e" "--heads is a comma-separated list" $?
"$saccade" export 1 --db "$db" --figure lines --layer 3 --heads 9 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-heads-past "$tmp/e" "run 1 has heads 0-8, not 9" $?
"$saccade" export 1 --db "$db" --figure lines --layer 3 --head 1 --heads 2 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-head-and-heads "$tmp/e" "--head H or --heads LIST, not both" $?
"$saccade" export 1 --db "$db" --figure heatmap --layer 3 --head 1 --top-k 2 -o "$tmp/x.png" > "$tmp/e" 2>&1
expect_fail lines-options-elsewhere "$tmp/e" "go with --figure lines" $?
"$saccade" export --help > "$tmp/help" 2>&1
check lines-help "$tmp/help" "at most the K strongest links per query and head"

# Bad ranges: each error names what was wrong.
for bad in "5" "a:b" "2:4,1" "1:2:3" "-1:4" "2:4,,"; do
  "$saccade" export 1 --db "$db" --all --range "$bad" -o "$tmp/x.npz" > "$tmp/e" 2>&1
  expect_fail "range-syntax-$bad" "$tmp/e" "--range is Q0:Q1 or Q0:Q1,K0:K1" $?
done
"$saccade" export 1 --db "$db" --all --range 6:4 -o "$tmp/x.npz" > "$tmp/e" 2>&1
expect_fail range-empty "$tmp/e" "the query range 6:4 is empty" $?
"$saccade" export 1 --db "$db" --all --range 0:11 -o "$tmp/x.npz" > "$tmp/e" 2>&1
expect_fail range-past "$tmp/e" "run 1 has 10 tokens (0:10); the query range 0:11 ends past the last token" $?
"$saccade" export 1 --db "$db" --layer 0 --head 0 --range 0:5,10: -o "$tmp/x.csv" > "$tmp/e" 2>&1
expect_fail range-key-past "$tmp/e" "the key range 10: starts past the last token" $?
"$saccade" export --help > "$tmp/help" 2>&1
check range-help "$tmp/help" "half-open as in NumPy"

# ------------------------------------------------------------------------------------ #
# The Python reader distrusts the file                                                 #

python - "$db" "$tmp" > "$tmp/py-hostile" 2>&1 <<'PY'
import shutil, sqlite3, sys
import saccade_store as ss
db, tmp = sys.argv[1], sys.argv[2]
def edited(name, *sql):
    path = f"{tmp}/{name}.sqlite"
    shutil.copy(db, path)
    c = sqlite3.connect(path)
    for s in sql:
        if callable(s):
            s(c)
        else:
            c.execute(s)
    c.commit()
    c.close()
    return path
def refused(name, words, path, read):
    try:
        with ss.Store(path) as st:
            read(st)
    except ss.StoreError as e:
        assert words in str(e), (name, str(e))
        print(f"{name}: refused: {e}")
        return
    raise AssertionError(f"{name}: read without complaint")
refused("newer", "schema version 99", edited("newer", "PRAGMA user_version = 99"), lambda st: None)
refused("trigger", "trigger", edited("trig", "CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END"),
        lambda st: None)
def blob(layer, head, change):
    def edit(c):
        (data,) = c.execute("SELECT data FROM attention WHERE run_id = 1 AND layer = ? "
                            "AND head = ?", (layer, head)).fetchone()
        c.execute("UPDATE attention SET data = ? WHERE run_id = 1 AND layer = ? AND head = ?",
                  (change(bytes(data)), layer, head))
    return edit
# 0x3C01 is just above 1.0: not a probability.
refused("value", "not a probability", edited("val",
        blob(0, 0, lambda d: b"\x01\x3c" + d[2:])), lambda st: st.head(1, 0, 0))
refused("length", "should be 110 bytes", edited("len",
        "PRAGMA ignore_check_constraints = ON", blob(2, 1, lambda d: d[2:])),
        lambda st: st.head(1, 2, 1))
refused("token", "token_id", edited("tok",
        "UPDATE tokens SET token_id = 999999 WHERE run_id = 1 AND pos = 3"),
        lambda st: st.tokens(1))
refused("shape", "x", edited("shape",
        "PRAGMA ignore_check_constraints = ON",
        "UPDATE attention SET n_query = 9, n_key = 9, data = substr(data, 1, 90) WHERE run_id = 1 AND layer = 1 AND head = 1"),
        lambda st: st.head(1, 1, 1))
print("hostile files refused")
PY
ok reader-hostile $? "$tmp/py-hostile"
check reader-hostile-says "$tmp/py-hostile" "hostile files refused"

# The example runs on both sources and agrees with `saccade heads`.
python "$src/python/examples/previous_token_heads.py" "$db" 1 > "$tmp/ex-db" 2>&1
ok example-db $? "$tmp/ex-db"
python "$src/python/examples/previous_token_heads.py" "$tmp/run1.npz" > "$tmp/ex-npz" 2>&1
ok example-npz $? "$tmp/ex-npz"
tail -5 "$tmp/ex-db" > "$tmp/ex-db5"; tail -5 "$tmp/ex-npz" > "$tmp/ex-npz5"
cmp -s "$tmp/ex-db5" "$tmp/ex-npz5" && passes=$((passes + 1)) || { echo "FAIL: the example differs between the store and the .npz"; fails=$((fails + 1)); }
"$saccade" heads 1 --db "$db" --json > "$tmp/heads.json" 2>&1
python - "$tmp/heads.json" "$tmp/ex-db5" > "$tmp/ex-check" 2>&1 <<'PY'
import json, re, sys
heads = json.load(open(sys.argv[1], errors="replace"))
heads = heads.get("heads", heads) if isinstance(heads, dict) else heads
by = {(h["layer"], h["head"]): h["previous-token"] for h in heads}
for line in open(sys.argv[2]):
    l, h, s = re.match(r"layer +(\d+) head (\d+): previous-token score ([0-9.]+)", line).groups()
    assert abs(by[(int(l), int(h))] - float(s)) < 6e-4, (l, h, s, by[(int(l), int(h))])
print("example = saccade heads")
PY
ok example-vs-heads $? "$tmp/ex-check"

# ------------------------------------------------------------------------------------ #
# Schema v3: chosen heads, sparse heads, row blocks and overviews, C and Python alike    #

v3="$tmp/v3.sqlite"
long=$(head -c 900 "$src/docs/store.md" | tr '\n' ' ')
"$saccade" capture --db "$v3" -t "The cat chased the ball because it was tired." \
  --layers 10-12 --heads 0,4 > "$tmp/v3cap" 2>&1
check v3-subset "$tmp/v3cap" "^1$"
"$saccade" capture --db "$v3" -t "$long" --sparse > "$tmp/v3cap" 2>&1
check v3-sparse "$tmp/v3cap" "^2$"
"$saccade" capture --db "$v3" -t "$long" --estimate --layers 0 --heads 0 > "$tmp/v3est" 2>&1
check v3-estimate "$tmp/v3est" "tokens, 1 of 270 heads: about"
"$saccade" show 1 --db "$v3" --layer 0 --head 0 > "$tmp/v3e" 2>&1
expect_fail v3-not-kept "$tmp/v3e" "run 1 did not keep layer 0 head 0" $?
for lh in "10 4" "12 0"; do
  set -- $lh
  "$saccade" export 1 --db "$v3" --layer "$1" --head "$2" -o "$tmp/v3-1-$1-$2.npy" > /dev/null 2>&1
done
for lh in "0 0" "5 2" "17 3" "29 8"; do
  set -- $lh
  "$saccade" export 2 --db "$v3" --layer "$1" --head "$2" -o "$tmp/v3-2-$1-$2.npy" > /dev/null 2>&1
done
# Row blocks: run 2's layer 5 head 2 moved into three attention_parts rows (as a capture
# does for a head past SQLite's length limit); the C reader must give the same values.
python - "$v3" > "$tmp/v3split" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, layout, data = c.execute("SELECT n_query, layout, data FROM attention WHERE run_id = 2 AND "
                            "layer = 5 AND head = 2").fetchone()
assert layout == "causal", layout
tri = lambda r: r * (r + 1) // 2
cuts = [0, n // 3, n // 2, n]
for r0, r1 in zip(cuts, cuts[1:]):
    c.execute("INSERT INTO attention_parts (run_id, layer, head, row0, row1, n_query, n_key, "
              "layout, dtype, data) VALUES (2, 5, 2, ?, ?, ?, ?, 'causal', 'f16', ?)",
              (r0, r1, n, n, data[2 * tri(r0):2 * tri(r1)]))
c.execute("DELETE FROM attention WHERE run_id = 2 AND layer = 5 AND head = 2")
c.commit()
print("split")
PY
ok v3-split $? "$tmp/v3split"
"$saccade" export 2 --db "$v3" --layer 5 --head 2 -o "$tmp/v3-2-5-2-split.npy" > "$tmp/v3e" 2>&1
ok v3-split-export $? "$tmp/v3e"
python - "$v3" "$tmp" > "$tmp/v3py" 2>&1 <<'PY'
import shutil, sqlite3, sys
import numpy as np
import saccade_store as ss
db, tmp = sys.argv[1], sys.argv[2]
with ss.Store(db) as st:
    r1, r2 = st.run(1), st.run(2)
    assert r1.kept == frozenset((l, h) for l in (10, 11, 12) for h in (0, 4)), r1.kept
    assert r1.has_head(11, 4) and not r1.has_head(11, 1) and r1.sparse_eps == 0
    assert r2.kept is None and r2.sparse_eps == 1e-3
    assert st.stored_heads(1) == sorted(r1.kept)
    try:
        st.head(1, 0, 0)
        raise AssertionError("an unkept head read")
    except ss.HeadNotStored as e:
        assert "did not keep layer 0 head 0" in str(e)
    for l, h in ((10, 4), (12, 0)):
        assert np.array_equal(st.head(1, l, h), np.load(f"{tmp}/v3-1-{l}-{h}.npy"))
    n, n_sparse = r2.n_tokens, 0
    for l, h in ((0, 0), (5, 2), (17, 3), (29, 8)):
        assert np.array_equal(st.head(2, l, h), np.load(f"{tmp}/v3-2-{l}-{h}.npy")), (l, h)
    assert np.array_equal(st.head(2, 5, 2), np.load(f"{tmp}/v3-2-5-2-split.npy"))
    for l, h, a in st.heads(2):
        a, d = st.head_dropped(2, l, h)
        ov = st.overview(2, l, h)
        B = -(-n // 64)        # uniform blocks of ceil(n / 64) tokens
        S = -(-n // B)
        b = [min(n, k * B) for k in range(S + 1)]
        want = np.array([[a[b[i]:b[i + 1], b[j]:b[j + 1]].max() for j in range(S)] for i in range(S)])
        assert np.array_equal(ov, want), (l, h)
        if d is not None:
            n_sparse += 1
            sums = a.sum(axis=1, dtype=np.float64) + d
            assert np.all(np.abs(sums - 1) <= 2**-11 + n * 2**-25 + 1e-6), (l, h, sums.min(), sums.max())
            assert np.all(d <= 1e-3 + n * 2**-24), d.max()  # the float rows sum to 1 within rounding
    assert n_sparse > 0
    print(f"run 2: {n} tokens, {n_sparse} of 270 heads sparse")
# hostile v3 edits
def refused(name, words, sql, read):
    path = f"{tmp}/v3-{name}.sqlite"
    shutil.copy(db, path)
    c = sqlite3.connect(path)
    c.execute("PRAGMA ignore_check_constraints = ON")
    c.execute(sql)
    c.commit()
    c.close()
    try:
        with ss.Store(path) as st:
            read(st)
    except ss.StoreError as e:
        assert words in str(e), (name, str(e))
        return
    raise AssertionError(f"{name}: read without complaint")
refused("kept", "bits set past", "UPDATE runs SET kept = zeroblob (33) || x'FF' WHERE id = 1",
        lambda st: st.run(1))
refused("gap", "where row 0 was next", "DELETE FROM attention_parts WHERE run_id = 2 AND row0 = 0",
        lambda st: st.head(2, 5, 2))
refused("overview", "not a probability",
        "UPDATE head_overviews SET data = CAST (x'0144' || substr (data, 3) AS BLOB) WHERE run_id = 2 AND layer = 0 AND head = 0",
        lambda st: st.overview(2, 0, 0))
print("v3: python = C")
PY
ok v3-python $? "$tmp/v3py"
check v3-python-says "$tmp/v3py" "v3: python = C"

# ------------------------------------------------------------------------------------ #
# The new user's first verbs                                                           #

# `demo --json` is JSON (it printed the text form), with the numbers of the text form.
"$saccade" demo --json > "$tmp/demo.json" 2> "$tmp/demo.err"
"$saccade" demo > "$tmp/demo.txt" 2>&1
python - "$tmp/demo.json" "$tmp/demo.txt" > "$tmp/demo-check" 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert d["model"]["name"] == "SmolLM2 135M Instruct · Q4_1", d["model"]
assert d["backend"] == "cpu" and d["heads_captured"] == 270
assert d["text"]["piece"] == "The cat chased the ball because it was tired."
assert [t["id"] for t in d["tokens"]] == [504, 2644, 45360, 260, 4405, 975, 357, 436, 12364, 30]
assert len(d["next_tokens"]) == 5 and len(d["layers"]) == 30
probs = [t["probability"] for t in d["next_tokens"]]
assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1
shown = [float(p) for p in re.findall(r"^ +([0-9.]+)%", text, re.M)]
assert shown == [round(100 * p, 1) for p in probs], (shown, probs)
for row, l in zip(re.findall(r"layer +(\d+) +entropy ([0-9.]+) +sink ([0-9.]+) +head (\d+)", text), d["layers"]):
    assert int(row[0]) == l["layer"] and int(row[3]) == l["focused_head"]
    assert abs(float(row[1]) - l["last_entropy_mean"]) <= 0.005 and abs(float(row[2]) - l["sink_mean"]) <= 0.005
print("demo json = demo text")
PY
ok demo-json $? "$tmp/demo-check"

# The model's readable name, from the GGUF's base name, size label and file type and the
# file's name (which says Instruct: the GGUF's fine-tune field holds the recipe).
"$saccade" info > "$tmp/name" 2>&1
check name-info "$tmp/name" "^Model        SmolLM2 135M Instruct · Q4_1$"
"$saccade" info --json > "$tmp/name" 2>&1
check name-info-json "$tmp/name" '"name" : "SmolLM2 135M Instruct · Q4_1"'
check name-demo "$tmp/demo.txt" "^Saccade .* — SmolLM2 135M Instruct · Q4_1 on CPU$"
real=$(readlink -f "$model")
for pair in "smollm2-135m-instruct-q4_1.gguf|smollm2 135M instruct · Q4_1" \
            "SmolLM2-135M.gguf|SmolLM2 135M · Q4_1" \
            "SmolLM2-135M-Instruct-v0.2.Q4_1.gguf|SmolLM2 135M Instruct v0.2 · Q4_1" \
            "model.gguf|smollm2 135M 8k-lc100k-mix1-ep2 · Q4_1"; do
  file=${pair%%|*}; want=${pair#*|}
  ln -sf "$real" "$tmp/$file"
  "$saccade" info -m "$tmp/$file" > "$tmp/name" 2>&1
  check "name-$file" "$tmp/name" "^Model        $want\$"
done
"$saccade" capture --db "$tmp/names.sqlite" -t "Hi" > /dev/null 2>&1
"$saccade" runs --db "$tmp/names.sqlite" > "$tmp/name" 2>&1
check name-runs "$tmp/name" "SmolLM2 135M Instruct"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
