#!/bin/sh
# test-app-band.sh — heads of sliding-window layers (docs/store.md, "Band heads") through the
# command line, the Python reader and the window. app-fixture-band writes a run of 96
# tokens of a made-up model whose layers 0 and 2 have a window of 16 (stored as bands) and
# a 6-token run (shorter than the window: causal heads, the layers still local), and a
# 2,400-token run with a window of 512, which the window reads head by head from the store
# (not resident): its pyramid from the fp16 reader, its overviews.
#
# Checked: `show --json` and the exports name the layer windows; a band head's JSON export
# carries its window and its cells left of the window are 0 in JSON, CSV and .npz, as
# the C reader gives them; the Python reader expands bands to the same matrices, reports
# the windows and refuses an edited band; a heatmap of a local head draws the cells left of
# its window hatched (masked), not in the colour of a weight of 0; under Xvfb the window
# shows the local layer's title ("local layer (window 16)"), the heatmap and the Model page
# (screenshots kept under OUTDIR to look at).
#
# Fails without NumPy (tests/lib.sh), and the window part without xvfb-run.
# Usage: test-app-band.sh SACCADE APP_FIXTURE_BAND APP_CHECK_IMAGE OUTDIR SRCDIR APP_PNG_COLOUR
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
fixture=$2
check_image=$3
out=$4
src=$5
png_colour=$6

need_python_modules numpy sqlite3

rm -rf "$out"
mkdir -p "$out/home"
check() { "$check_image" "$@" || fail "$1 looks blank"; }

export HOME="$out/home" XDG_DATA_HOME="$out/home/data" XDG_CONFIG_HOME="$out/home/config"
export XDG_CACHE_HOME="$out/home/cache"
export LANGUAGE=en LC_ALL=C.UTF-8

db="$out/band.sqlite"
"$fixture" "$db" 96 16 2400 512 > "$out/ids" || { echo "FAIL: app-fixture-band"; exit 1; }

# --- The command line -------------------------------------------------------------------
"$saccade" show 1 --db "$db" --json > "$out/show.json" 2> "$out/cli.log" || fail "show: $(cat "$out/cli.log")"
"$saccade" show 1 --db "$db" > "$out/show.txt" 2> "$out/cli.log" || fail "show: $(cat "$out/cli.log")"
grep -q "^Local layers: 0, 2 (window 16)" "$out/show.txt" || fail "show does not name the local layers"
"$saccade" show 1 --db "$db" --layer 0 --head 0 > "$out/show-head.txt" 2> "$out/cli.log" \
  || fail "show --layer: $(cat "$out/cli.log")"
grep -q "^Layer 0 is local: each query sees its last 16 keys" "$out/show-head.txt" \
  || fail "show --layer 0 does not say the layer is local"
"$saccade" show 1 --db "$db" --layer 1 --head 0 > "$out/show-head.txt" 2> "$out/cli.log"
! grep -q "is local" "$out/show-head.txt" || fail "show --layer 1 calls a global layer local"
"$saccade" export 1 --db "$db" --layer 0 --head 0 -o "$out/local.json" 2> "$out/cli.log" \
  || fail "export json: $(cat "$out/cli.log")"
"$saccade" export 1 --db "$db" --layer 0 --head 0 -o "$out/local.csv" 2> "$out/cli.log" \
  || fail "export csv: $(cat "$out/cli.log")"
"$saccade" export 1 --db "$db" --layer 1 --head 0 -o "$out/global.json" 2> "$out/cli.log" \
  || fail "export json (global): $(cat "$out/cli.log")"
"$saccade" export 1 --db "$db" --all -o "$out/run.npz" > /dev/null 2> "$out/cli.log" \
  || fail "export --all: $(cat "$out/cli.log")"
"$saccade" export 1 --db "$db" --figure heatmap --layer 0 --head 0 -o "$out/local.png" \
  2> "$out/cli.log" || fail "export --figure heatmap: $(cat "$out/cli.log")"
"$saccade" export 1 --db "$db" --figure heatmap --layer 1 --head 0 -o "$out/global.png" \
  2> "$out/cli.log" || fail "export --figure heatmap (global): $(cat "$out/cli.log")"
check "$out/local.png" 300 300 10
check "$out/global.png" 300 300 10

# --- The C exports and the Python reader, against each other ----------------------------
cp "$db" "$out/edited.sqlite"
python - "$out" "$src/python" > "$out/py.log" 2>&1 <<'PY'
import csv, json, sqlite3, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
import saccade_store as ss

out = sys.argv[1]
W, N = 16, 96
def band_mask(n, w):
    i, j = np.indices((n, n))
    return (j > i) | ((w > 0) & (j + w <= i))

show = json.load(open(f"{out}/show.json"))
run_json = show.get("run", show)
assert run_json["layer_windows"] == [W, 0, W, 0], run_json.get("layer_windows")

local = json.load(open(f"{out}/local.json"))
assert local["window"] == W and local["causal"] is True, local.keys()
a = np.array(local["weights"], np.float32)
assert a.shape == (N, N)
assert (a[band_mask(N, W)] == 0).all(), "the JSON has weights left of the window"
assert (a[~band_mask(N, W)] > 0).all(), "the JSON lost weights inside the window"
assert "window" not in json.load(open(f"{out}/global.json"))

rows = list(csv.reader(open(f"{out}/local.csv", encoding="utf-8")))
c = np.array([[float(x) for x in r[1:]] for r in rows[1:]], np.float32)
assert (c == a).all(), "CSV and JSON differ"

z = ss.load_npz(f"{out}/run.npz")
assert list(z.layer_windows) == [W, 0, W, 0], z.layer_windows
assert (z.attention[0, 0] == a).all(), "the npz and the JSON differ"

with ss.Store(f"{out}/band.sqlite") as st:
    run = st.run(1)
    assert run.windows == (W, 0, W, 0), run.windows
    assert run.layer_window(0) == W and run.layer_window(1) == 0
    assert len(st.stored_heads(1)) == 24
    for l, h, m in st.heads(1):
        assert (m == z.attention[l, h]).all(), (l, h)
        assert st.head_window(1, l, h) == (W if l % 2 == 0 else 0), (l, h)
        ov = st.overview(1, l, h)
        # blocks of 2 tokens (96 > 64): each cell the maximum of its block
        want = np.maximum.reduceat(np.maximum.reduceat(m, np.arange(0, N, 2), 0),
                                   np.arange(0, N, 2), 1)
        assert ov.shape == (N // 2, N // 2) and (ov == want).all(), (l, h)
    short = st.run(2)
    assert short.windows == (W, 0, W, 0) and st.head_window(2, 0, 0) == 0
    assert (np.triu(st.head(2, 0, 0), 1) == 0).all()

db = sqlite3.connect(f"{out}/edited.sqlite")
db.execute("PRAGMA ignore_check_constraints = ON")
db.execute("UPDATE attention_bands SET window_size = 17 WHERE run_id = 1 AND layer = 0 AND head = 0")
db.commit(); db.close()
with ss.Store(f"{out}/edited.sqlite") as st:
    try:
        st.head(1, 0, 0)
        raise SystemExit("an edited window was read")
    except ss.StoreError as e:
        assert "window" in str(e), e
    st.head(1, 0, 1)  # the others still read
print("python: ok")
PY
[ $? -eq 0 ] && grep -q "python: ok" "$out/py.log" || fail "python: $(cat "$out/py.log")"

# The exported heatmap of a local head: the ~3,000 cells left of its window are hatched,
# not painted in the colour of a weight of 0 (viridis's first colour, #440154). The global
# head's triangle has no zeros either; both draw that colour on few pixels.
# (Measured: 2,234 such pixels of 1.5 million in local.png; painted as zeros, the ~3,240
# cells left of the window would take about a third of the matrix's ~1,000 x 1,000 pixels.
# The global head's smallest weights are near 0 and share the colour: not a reference.)
px=$("$png_colour" "$out/local.png" 440154 2 2>/dev/null || echo -1)
echo "local.png: $px pixels in the colour of a weight of 0"
[ "$px" -ge 0 ] && [ "$px" -lt 15000 ] \
  || fail "local.png paints the cells left of the window as weights of 0 ($px pixels)"

# --- The window -------------------------------------------------------------------------
if ! command -v xvfb-run >/dev/null 2>&1; then
  fail "xvfb-run is not installed (tools/setup.sh installs it): the window part cannot run"
else
  export GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
  unset WAYLAND_DISPLAY
  cat > "$out/band.script" <<EOS
expect-runs 3
select 1
expect-no-error
expect-run 1
page heatmap
head 0 0
sleep 300
expect-title local layer (window 16)
screenshot $out/heatmap-local.png
export-figure $out/heatmap-local-export.png
head 1 0
sleep 300
expect-title global layer
screenshot $out/heatmap-global.png
page model
sleep 300
screenshot $out/model.png
select 3
expect-no-error
expect-run 3
page heatmap
head 2 1
sleep 1500
expect-title local layer (window 512)
screenshot $out/heatmap-long.png
page model
sleep 300
screenshot $out/model-long.png
expect-no-error
quit
EOS
  SACCADE_TEST_SCRIPT="$out/band.script" xvfb-run -a -s "-screen 0 1400x1000x24" \
    "${SACCADE_WINDOW_TEST:?}" --db "$db" > "$out/window.log" 2>&1
  status=$?
  grep -E "^test-driver|CRITICAL|WARNING" "$out/window.log"
  [ $status -eq 0 ] || fail "the window exited with $status"
  ! grep -q "CRITICAL" "$out/window.log" || fail "the window logged a critical warning"
  for shot in heatmap-local heatmap-global model heatmap-long model-long; do
    check "$out/$shot.png" 800 500 20
  done
  check "$out/heatmap-local-export.png" 300 300 10
fi

if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
