"""saccade_store — read Saccade's capture store and its whole-run exports with NumPy alone.

Needs only NumPy and the standard library's sqlite3: no Saccade build. Copy this file next
to a notebook or put this folder on sys.path.

    import saccade_store as ss

    with ss.Store("captures.sqlite") as st:          # opened read-only
        for run in st.runs():                        # complete runs, oldest first
            print(run.id, run.n_tokens, run.model_name, run.text[:40])
        run = st.run(3)
        tokens = st.tokens(3)                        # [Token(pos, id, piece, text)]
        a = st.head(3, layer=5, head=2)              # float32 (n_tokens, n_tokens)
        for layer, head, a in st.heads(3):           # every stored head, one at a time
            ...
        a, dropped = st.head_dropped(3, 5, 2)        # sparse runs: each row's dropped mass
        ov = st.overview(3, 5, 2)                    # float32 (S, S), S = min (n, 128)

    z = ss.load_npz("run.npz")                       # `saccade export RUN --all -o run.npz`
    z.attention[5, 2]                                # float32 [layer, head, query, key]

What the store holds (docs/store.md, "Reading the database directly", has the schema):
one fp16 BLOB per (run, layer, head), little-endian, row-major; a 'causal' head keeps only
its lower triangle (row i holds keys 0..i, n(n+1)/2 values), a 'full' head all n x n. The
values are probabilities rounded to fp16, so a row sums to 1 only within fp16 rounding
(at most n * 2**-12 off). The reader widens them to float32 exactly, as the C reader does.
Schema v3 adds: runs that keep only chosen heads (runs.kept, a bitmap), heads too large
for one BLOB stored as row blocks, the sparse form (per row, the keys holding 1 - eps of
the mass; the rest read as 0, their mass in `dropped`), and an overview image per head.
Schema v4 adds sliding-window layers (Gemma 3's local layers): each run's layer windows
(Run.windows) and heads stored as their band (table attention_bands: row i holds keys
i - w + 1 .. i). A band head reads as the same dense matrix, its keys left of the window
0 — masked cells, like the upper triangle, not attention (Store.head_window says which
heads; band_mask() gives the mask).

A database from someone else is untrusted input. Like the C reader (engine/store/
sc-store-read.c), this one opens the file read-only, refuses a schema version it does not
know, a file with triggers or views, and any row whose numbers disagree with the others
(a head whose shape is not its run's, a BLOB of the wrong length, a value that is not a
probability, a missing or misplaced token, a prediction piece of more than 256 bytes, more
than 65,536 heads): StoreError, naming the run, table and value.
It does not check everything the C reader does (the exact table definitions, every ceiling):
a file it reads may still be one the C reader refuses.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["StoreError", "HeadNotStored", "Store", "Run", "Token", "RunArrays", "load_npz",
           "SCHEMA_VERSIONS", "band_mask"]

# The schema versions this reader knows (PRAGMA user_version): v1 runs and heads, v2 adds
# the study tables, v3 kept heads, row blocks, sparse heads and overviews, v4 layer windows
# and band heads, v5 compressed heads (attention_z, zstd; docs/store.md), v6 the rounded
# form of compressed heads (runs.round_bits, zero_below). A newer store may store heads
# differently: refused. A compressed head is refused with a message (Python has no zstd
# here without a module Debian 12 does not install by default).
SCHEMA_VERSIONS = (1, 2, 3, 4, 5, 6)

# Overview images are S x S over uniform blocks of B = ceil (n_tokens / OVERVIEW_MAX) tokens
# a side (the last may be shorter), S = ceil (n_tokens / B) (engine/store/sc-store-heads.h).
OVERVIEW_MAX = 64


def overview_block(n: int) -> int:
    return max(1, -(-n // OVERVIEW_MAX))


def overview_size(n: int) -> int:
    b = overview_block(n)
    return -(-n // b)

# The C reader's ceilings (engine/store/sc-store.h): nothing larger sizes an allocation.
MAX_TOKENS = 1 << 19
MAX_LAYERS = 4096
MAX_HEADS = 4096
MAX_RUN_HEADS = 65536  # layers x heads: bounds every per-head set and loop
MAX_PIECE_BYTES = 65536
# A prediction's piece is a vocabulary piece: at most 256 bytes (SC_STORE_MAX_PREDICTION_
# PIECE_BYTES, engine/store/sc-store-predictions.h); a longer one is an edited store (a
# 3 MB piece froze the window's text layout: issue 25, item 5).
MAX_PREDICTION_PIECE_BYTES = 256

# fp16 bit patterns of a probability: +0 .. 1.0 (0x0000 .. 0x3C00), or -0 (0x8000).
_FP16_ONE = 0x3C00
_FP16_NEG_ZERO = 0x8000


class StoreError(Exception):
    """The database is not one this reader can trust: the message says what and where."""


class HeadNotStored(KeyError):
    """The run has no row for this (layer, head): a capture of chosen layers or heads."""


@dataclass(frozen=True)
class Token:
    pos: int
    id: int
    piece: bytes      # the exact bytes (a byte-level BPE piece need not be valid UTF-8)

    @property
    def text(self) -> str:
        return self.piece.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Run:
    id: int
    model_id: int
    model_name: str
    model_arch: str
    model_sha256: str  # 64 hex digits
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    n_vocab: int
    n_tokens: int
    created_ms: int
    backend: str
    text_bytes: bytes
    kept: Optional[frozenset] = None   # (layer, head) pairs the run kept; None: every head
    sparse_eps: float = 0.0            # 0: dense; else the EPS of its sparse heads
    round_bits: int = 0                # v6: 0, or the mantissa bits its compressed heads kept
    zero_below: float = 0.0            # v6: 0, or values below it were stored as 0
    windows: Optional[tuple] = None    # each layer's attention window, 0: global; None: every
                                       # layer global (no sliding window, or before v4)

    def layer_window(self, layer: int) -> int:
        """Layer @layer's window w (query i sees keys i - w + 1 .. i), 0 for a global layer."""
        if self.windows is None or not 0 <= layer < self.n_layers:
            return 0
        return self.windows[layer]

    @property
    def text(self) -> str:
        return self.text_bytes.decode("utf-8", errors="replace")

    def has_head(self, layer: int, head: int) -> bool:
        if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
            return False
        return self.kept is None or (layer, head) in self.kept


def _text(b) -> str:
    if isinstance(b, bytes):
        return b.decode("utf-8", errors="replace")
    return str(b)


def _int(value, what: str, lo: int, hi: int) -> int:
    # sqlite3 hands back whatever the cell holds: an INTEGER column may hold text or a real.
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise StoreError(f"{what} = {value!r} is not an integer in {lo}..{hi}")
    return value


def band_mask(n: int, window: int) -> np.ndarray:
    """The masked cells of an (n, n) causal head as bool: above the diagonal, and for a band
    head of @window (> 0) the keys j <= i - window of each row i."""
    i, j = np.indices((n, n))
    return (j > i) | ((window > 0) & (j + window <= i))


def decode_head(blob: bytes, layout: str, n_query: int, n_key: int) -> np.ndarray:
    """A stored attention BLOB as float32 (n_query, n_key), checked as the C reader checks it:
    the layout's exact length and every value a probability in [0, 1]."""
    if layout == "causal":
        if n_query != n_key:
            raise StoreError(f"a causal head must be square, not {n_query} x {n_key}")
        count = n_query * (n_query + 1) // 2
    elif layout == "full":
        count = n_query * n_key
    else:
        raise StoreError(f"unknown layout {layout!r} (this reader knows 'causal' and 'full')")
    if not isinstance(blob, bytes) or len(blob) != 2 * count:
        got = len(blob) if isinstance(blob, bytes) else type(blob).__name__
        raise StoreError(f"the {layout} BLOB of a {n_query} x {n_key} head should be "
                         f"{2 * count} bytes, not {got}")
    bits = np.frombuffer(blob, dtype="<u2")
    bad = (bits > _FP16_ONE) & (bits != _FP16_NEG_ZERO)
    if bad.any():
        k = int(np.argmax(bad))
        raise StoreError(f"value {k} of the BLOB (fp16 bits 0x{int(bits[k]):04X}) is not a "
                         f"probability in [0, 1]")
    values = bits.view("<f2").astype(np.float32)  # exact: every fp16 is a float32
    if layout == "full":
        return values.reshape(n_query, n_key)
    out = np.zeros((n_query, n_key), dtype=np.float32)
    # np.tril_indices lists (0,0), (1,0), (1,1), (2,0), ...: row i's keys 0..i, in the
    # BLOB's order.
    out[np.tril_indices(n_query)] = values
    return out


class Store:
    """A capture store opened read-only (the file is never written)."""

    def __init__(self, path: str):
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(self.path)
        uri = "file:" + _quote_uri_path(os.path.abspath(self.path)) + "?mode=ro"
        self._db = sqlite3.connect(uri, uri=True)
        # Names and paths are stored as TEXT but need not be UTF-8: take bytes, decode here.
        self._db.text_factory = bytes
        try:
            self._db.execute("PRAGMA trusted_schema = OFF")
            self._check_schema()
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise StoreError(f"{self.path}: {e}") from None
        except StoreError:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _fail(self, msg: str) -> StoreError:
        return StoreError(f"{self.path}: {msg}")

    def _check_schema(self) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version not in SCHEMA_VERSIONS:
            raise self._fail(f"schema version {version}; this reader knows "
                             f"{', '.join(map(str, SCHEMA_VERSIONS))} (a newer Saccade wrote it: "
                             f"use its reader, or `saccade export RUN --all`)")
        odd = self._db.execute("SELECT type, name FROM sqlite_schema "
                               "WHERE type IN ('trigger', 'view')").fetchall()
        if odd:
            kind, name = odd[0]
            raise self._fail(f"it holds a {_text(kind)} ({_text(name)!r}), which Saccade never "
                             f"writes; ask whoever sent it for a clean copy")
        need = {
            "models": {"id", "sha256", "name", "arch", "n_layers", "n_heads", "n_kv_heads",
                       "head_dim", "n_vocab"},
            "runs": {"id", "model_id", "text", "created", "backend", "n_tokens", "status"},
            "tokens": {"run_id", "pos", "token_id", "piece"},
            "attention": {"run_id", "layer", "head", "n_query", "n_key", "layout", "dtype",
                          "data"},
        }
        self.version = version
        if version >= 3:
            need["attention_parts"] = {"run_id", "layer", "head", "row0", "row1", "n_query",
                                       "n_key", "layout", "dtype", "dropped", "offsets",
                                       "keys", "data"}
            need["head_overviews"] = {"run_id", "layer", "head", "size", "dtype", "data"}
            need["runs"] = need["runs"] | {"kept", "sparse_eps"}
        if version >= 6:
            need["runs"] = need["runs"] | {"round_bits", "zero_below"}
        if version >= 5:
            need["attention_z"] = {"run_id", "layer", "head", "row0", "row1", "codec", "data"}
        if version >= 4:
            need["layer_windows"] = {"run_id", "layer", "size"}
            need["attention_bands"] = {"run_id", "layer", "head", "row0", "row1", "n_query",
                                       "window_size", "dtype", "data"}
        for table, cols in need.items():
            have = {_text(r[1]) for r in self._db.execute(f"PRAGMA table_info({table})")}
            if not cols <= have:
                raise self._fail(f"table {table} lacks {', '.join(sorted(cols - have))}: "
                                 f"not a Saccade store")

    # -- runs ---------------------------------------------------------------------------

    @property
    def _RUN_SQL(self) -> str:
        v3 = "r.kept, r.sparse_eps" if self.version >= 3 else "NULL, NULL"
        v6 = "r.round_bits, r.zero_below" if self.version >= 6 else "NULL, NULL"
        return ("SELECT r.id, r.model_id, m.name, m.arch, m.sha256, m.n_layers, m.n_heads, "
                "m.n_kv_heads, m.head_dim, m.n_vocab, r.n_tokens, r.created, r.backend, r.text, "
                f"{v3}, {v6} FROM runs r JOIN models m ON m.id = r.model_id "
                "WHERE r.status = 'complete'")

    def _kept(self, where: str, kept, nl: int, nh: int) -> Optional[frozenset]:
        # runs.kept: NULL (every head) or one bit per head, bit l * nh + h, LSB first, no
        # bit past the last head, at least one set.
        if kept is None:
            return None
        if not isinstance(kept, bytes) or len(kept) != (nl * nh + 7) // 8:
            raise self._fail(f"{where}: runs.kept is not a {(nl * nh + 7) // 8}-byte bitmap")
        bits = np.unpackbits(np.frombuffer(kept, np.uint8), bitorder="little")
        if bits[nl * nh:].any():
            raise self._fail(f"{where}: runs.kept has bits set past the model's {nl * nh} heads")
        on = np.flatnonzero(bits[:nl * nh])
        if len(on) == 0:
            raise self._fail(f"{where}: runs.kept keeps no head")
        return frozenset((int(k) // nh, int(k) % nh) for k in on)

    def _run_from_row(self, row) -> Run:
        (rid, mid, name, arch, sha, nl, nh, nkv, hd, nv, n, created, backend, text, kept,
         eps, round_bits, zero_below) = row
        where = f"run {rid}"
        nl = _int(nl, f"{where}: n_layers", 1, MAX_LAYERS)
        nh = _int(nh, f"{where}: n_heads", 1, MAX_HEADS)
        if nl * nh > MAX_RUN_HEADS:
            # 4096 x 4096 heads would make stored_heads() build a set of 16.7 million pairs
            raise self._fail(f"{where}: {nl} layers x {nh} heads is more than "
                             f"{MAX_RUN_HEADS} heads")
        nkv = _int(nkv, f"{where}: n_kv_heads", 1, nh)
        if nh % nkv:
            raise self._fail(f"{where}: n_kv_heads = {nkv} does not divide n_heads = {nh}")
        if not isinstance(sha, bytes) or len(sha) != 32:
            raise self._fail(f"{where}: the model's sha256 is not 32 bytes")
        if not isinstance(text, bytes):
            raise self._fail(f"{where}: text is not a BLOB")
        if eps is not None and not (isinstance(eps, float) and 0 < eps < 1):
            raise self._fail(f"{where}: runs.sparse_eps = {eps!r} is not NULL or in (0, 1)")
        if zero_below is not None and not (isinstance(zero_below, float) and 0 < zero_below < 1):
            raise self._fail(f"{where}: runs.zero_below = {zero_below!r} is not NULL or in (0, 1)")
        if eps is not None and (round_bits is not None or zero_below is not None):
            raise self._fail(f"{where}: the run says it is both sparse and rounded")
        try:
            return Run(id=_int(rid, "run id", 1, 2**63 - 1),
                       model_id=_int(mid, f"{where}: model_id", 1, 2**63 - 1),
                       model_name=_text(name), model_arch=_text(arch), model_sha256=sha.hex(),
                       n_layers=nl, n_heads=nh, n_kv_heads=nkv,
                       head_dim=_int(hd, f"{where}: head_dim", 1, 65536),
                       n_vocab=_int(nv, f"{where}: n_vocab", 1, 2**31 - 1),
                       n_tokens=_int(n, f"{where}: n_tokens", 1, MAX_TOKENS),
                       created_ms=_int(created, f"{where}: created", 0, 253402300799999),
                       backend=_text(backend), text_bytes=text,
                       kept=self._kept(where, kept, nl, nh), sparse_eps=eps or 0.0,
                       round_bits=(0 if round_bits is None else
                                   _int(round_bits, f"{where}: round_bits", 1, 9)),
                       zero_below=zero_below or 0.0,
                       windows=self._windows(where, rid, nl))
        except StoreError as e:
            raise self._fail(str(e)) from None

    def _windows(self, where: str, run_id, nl: int) -> Optional[tuple]:
        # layer_windows (v4): one row per local layer, an integer layer inside the model
        # and an integer window in 1..2^31 - 1; none: every layer global.
        if self.version < 4:
            return None
        rows = self._db.execute("SELECT layer, size FROM layer_windows WHERE run_id = ? "
                                "ORDER BY layer", (run_id,)).fetchall()
        if not rows:
            return None
        win = [0] * nl
        for layer, size in rows:
            layer = _int(layer, f"{where}: layer_windows layer", 0, nl - 1)
            if win[layer]:
                raise StoreError(f"{where}: layer_windows has two rows for layer {layer}")
            win[layer] = _int(size, f"{where}: layer_windows size of layer {layer}", 1,
                              2**31 - 1)
        return tuple(win)

    def runs(self) -> List[Run]:
        """Every complete run, by id."""
        return [self._run_from_row(r)
                for r in self._db.execute(self._RUN_SQL + " ORDER BY r.id")]

    def run(self, run_id: int) -> Run:
        row = self._db.execute(self._RUN_SQL + " AND r.id = ?", (int(run_id),)).fetchone()
        if row is None:
            raise KeyError(f"{self.path}: no complete run {run_id}")
        return self._run_from_row(row)

    # -- tokens -------------------------------------------------------------------------

    def tokens(self, run_id: int) -> List[Token]:
        """The run's tokens in position order: exactly n_tokens rows, positions 0..n-1."""
        run = self.run(run_id)
        # a TEXT piece would come back as bytes (text_factory): None instead, refused below
        rows = self._db.execute("SELECT pos, token_id, CASE WHEN typeof (piece) = 'blob' THEN "
                                "piece END FROM tokens WHERE run_id = ? ORDER BY pos",
                                (run.id,)).fetchall()
        if len(rows) != run.n_tokens:
            raise self._fail(f"run {run.id}: {len(rows)} token rows for n_tokens = "
                             f"{run.n_tokens}")
        out = []
        for i, (pos, tid, piece) in enumerate(rows):
            where = f"run {run.id}: tokens row {i}"
            if pos != i:
                raise self._fail(f"{where}: position {pos!r} where {i} was expected")
            try:
                tid = _int(tid, f"{where}: token_id", 0, run.n_vocab - 1)
            except StoreError as e:
                raise self._fail(str(e)) from None
            if not isinstance(piece, bytes) or len(piece) > MAX_PIECE_BYTES:
                raise self._fail(f"{where}: piece is not a BLOB of at most {MAX_PIECE_BYTES} "
                                 f"bytes")
            out.append(Token(pos=i, id=tid, piece=piece))
        return out

    # -- heads --------------------------------------------------------------------------

    def stored_heads(self, run_id: int) -> List[Tuple[int, int]]:
        """The (layer, head) pairs the run stores, in order: with schema v3 exactly the
        heads it kept, each once (an attention row or attention_parts rows)."""
        run = self.run(run_id)
        sql = "SELECT layer, head FROM attention WHERE run_id = ?1"
        if self.version >= 3:
            sql += " UNION ALL SELECT DISTINCT layer, head FROM attention_parts WHERE run_id = ?1"
        if self.version >= 4:
            sql += " UNION ALL SELECT DISTINCT layer, head FROM attention_bands WHERE run_id = ?1"
        if self.version >= 5:
            sql += " UNION ALL SELECT DISTINCT layer, head FROM attention_z WHERE run_id = ?1"
        rows = self._db.execute(sql, (run.id,)).fetchall()
        for l, h in rows:
            # an INTEGER column may hold text or a real: int(b'zero') would raise ValueError
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (l, h)):
                raise self._fail(f"run {run.id}: a stored head has layer {l!r} head {h!r}, "
                                 f"not integers")
        pairs = sorted(rows)
        for l, h in pairs:
            if not (0 <= l < run.n_layers and 0 <= h < run.n_heads):
                raise self._fail(f"run {run.id}: a head at layer {l} head {h}, outside the "
                                 f"model's {run.n_layers} x {run.n_heads}")
        if len(set(pairs)) != len(pairs):
            raise self._fail(f"run {run.id}: a head is stored twice")
        if self.version >= 3:
            want = run.kept if run.kept is not None else {
                (l, h) for l in range(run.n_layers) for h in range(run.n_heads)}
            if set(pairs) != set(want):
                raise self._fail(f"run {run.id}: {len(pairs)} heads stored, not the "
                                 f"{len(want)} it kept")
        return pairs

    def _check_head(self, run: Run, layer: int, head: int) -> None:
        if not (0 <= layer < run.n_layers and 0 <= head < run.n_heads):
            raise KeyError(f"run {run.id} has layers 0-{run.n_layers - 1} and heads "
                           f"0-{run.n_heads - 1}, not layer {layer} head {head}")
        if not run.has_head(layer, head):
            raise HeadNotStored(f"run {run.id} did not keep layer {layer} head {head}")

    def head(self, run_id: int, layer: int, head: int, run: Optional[Run] = None) -> np.ndarray:
        """Head (layer, head) of the run as float32 (n_tokens, n_tokens), each value the
        stored fp16 exactly; zeros above the diagonal of a causal head and where a sparse
        head dropped keys. HeadNotStored when the run has no such head."""
        return self.head_dropped(run_id, layer, head, run=run)[0]

    def head_dropped(self, run_id: int, layer: int, head: int,
                     run: Optional[Run] = None) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """(head, dropped): the head as head() gives it, and for a sparse head each row's
        dropped mass (float32 (n_tokens)); None for a dense head."""
        run = run or self.run(run_id)
        self._check_head(run, layer, head)
        where = f"run {run.id} layer {layer} head {head}"
        row = self._db.execute("SELECT n_query, n_key, layout, dtype, data FROM attention "
                               "WHERE run_id = ? AND layer = ? AND head = ?",
                               (run.id, layer, head)).fetchone()
        if row is None:
            if self.version < 3:
                raise HeadNotStored(f"run {run.id} stores no layer {layer} head {head}")
            if self.version >= 5 and self._db.execute(
                    "SELECT 1 FROM attention_z WHERE run_id = ? AND layer = ? AND head = ?",
                    (run.id, layer, head)).fetchone() is not None:
                raise self._fail(f"{where}: stored compressed (attention_z, zstd), which this "
                                 f"reader cannot decompress: use `saccade export {run.id}`")
            try:
                if self._band_window(run, layer, head):
                    return self._bands(run, layer, head), None
                return self._parts(run, layer, head)
            except StoreError as e:
                raise self._fail(f"{where}: {e}") from None
        nq, nk, layout, dtype, data = row
        if nq != run.n_tokens or nk != run.n_tokens:
            raise self._fail(f"{where}: {nq!r} x {nk!r} for {run.n_tokens} tokens")
        if dtype != b"f16":
            raise self._fail(f"{where}: dtype {_text(dtype)!r} (this reader knows 'f16')")
        try:
            return decode_head(data, _text(layout), nq, nk), None
        except StoreError as e:
            raise self._fail(f"{where}: {e}") from None

    def _parts(self, run: Run, layer: int, head: int):
        # attention_parts: rows [row0, row1) in order from 0 to n, one layout; dense blocks
        # are slices of the packed head, sparse blocks (dropped f32, offsets u64, keys u32,
        # data f16) index the head's pairs from its first.
        n = run.n_tokens
        rows = self._db.execute("SELECT row0, row1, n_query, n_key, layout, dtype, dropped, "
                                "offsets, keys, data FROM attention_parts WHERE run_id = ? "
                                "AND layer = ? AND head = ? ORDER BY row0",
                                (run.id, layer, head)).fetchall()
        if not rows:
            raise StoreError("neither attention nor attention_parts has a row for it")
        layouts = {_text(r[4]) for r in rows}
        if len(layouts) != 1 or not layouts <= {"causal", "full", "sparse"}:
            raise StoreError(f"its parts have layouts {sorted(layouts)}")
        (layout,) = layouts
        out = np.zeros((n, n), np.float32)
        dropped = np.zeros(n, np.float32) if layout == "sparse" else None
        at = 0
        for row0, row1, nq, nk, _, dtype, drop, offs, keys, data in rows:
            if row0 != at or not isinstance(row1, int) or not row0 < row1 <= n:
                raise StoreError(f"a part covers rows {row0!r}..{row1!r} where row {at} was next")
            if nq != n or nk != n or dtype != b"f16":
                raise StoreError(f"a part is {nq!r} x {nk!r} {_text(dtype)!r} for {n} tokens")
            if not isinstance(data, bytes):
                raise StoreError(f"rows {row0}..{row1}: data is not a BLOB")
            if layout != "sparse":
                causal = layout == "causal"
                count = (row1 * (row1 + 1) - row0 * (row0 + 1)) // 2 if causal \
                    else (row1 - row0) * n
                if len(data) != 2 * count:
                    raise StoreError(f"rows {row0}..{row1}: data is {len(data)} bytes, not "
                                     f"{2 * count}")
                v = _probabilities(data)
                if causal:
                    r, c = np.tril_indices(row1)
                    sel = r >= row0
                    out[r[sel], c[sel]] = v
                else:
                    out[row0:row1] = v.reshape(row1 - row0, n)
            else:
                m = row1 - row0
                if not (isinstance(drop, bytes) and len(drop) == 4 * m and isinstance(offs, bytes)
                        and len(offs) == 8 * (m + 1) and isinstance(keys, bytes)
                        and len(keys) == 2 * len(data)):
                    raise StoreError(f"rows {row0}..{row1}: the sparse BLOBs do not fit")
                o = np.frombuffer(offs, "<u8").astype(np.int64)
                k = np.frombuffer(keys, "<u4").astype(np.int64)
                v = _probabilities(data)
                counts = np.diff(o)
                rows_i = np.arange(row0, row1)
                if (counts < 0).any() or o[-1] - o[0] != len(k) or (counts > rows_i + 1).any():
                    raise StoreError(f"rows {row0}..{row1}: the offsets are out of order or "
                                     f"do not match the keys")
                r = np.repeat(rows_i, counts)
                first = np.r_[True, r[1:] != r[:-1]]
                if len(k) and ((k > r).any() or (~first & (np.diff(k, prepend=-1) <= 0)).any()):
                    raise StoreError(f"rows {row0}..{row1}: a key out of order or past its row")
                out[r, k] = v
                d = np.frombuffer(drop, "<f4")
                if not np.all((d >= 0) & (d <= 1)):
                    raise StoreError(f"rows {row0}..{row1}: a dropped mass outside [0, 1]")
                dropped[row0:row1] = d
            at = row1
        if at != n:
            raise StoreError(f"its parts end at row {at} of {n}")
        return out, dropped

    def _band_window(self, run: Run, layer: int, head: int) -> int:
        # the window of the head's attention_bands rows (0: none), checked against its
        # layer's: the same in every row, 0 < w < n, layer_windows' value for the layer
        if self.version < 4:
            return 0
        ws = {r[0] for r in self._db.execute("SELECT window_size FROM attention_bands WHERE "
                                             "run_id = ? AND layer = ? AND head = ?",
                                             (run.id, layer, head))}
        if not ws:
            return 0
        if len(ws) != 1:
            raise StoreError(f"its attention_bands rows have windows {sorted(map(repr, ws))}")
        (w,) = ws
        w = _int(w, "attention_bands window_size", 1, run.n_tokens - 1)
        if w != run.layer_window(layer):
            raise StoreError(f"attention_bands window_size is {w}, but the layer's window is "
                             f"{run.layer_window(layer)} (layer_windows)")
        return w

    def head_window(self, run_id: int, layer: int, head: int) -> int:
        """The window of head (layer, head) when it is stored as its band (its keys left of
        the window are masked cells, 0 in head()), else 0."""
        run = self.run(run_id)
        self._check_head(run, layer, head)
        try:
            return self._band_window(run, layer, head)
        except StoreError as e:
            raise self._fail(f"run {run.id} layer {layer} head {head}: {e}") from None

    def _bands(self, run: Run, layer: int, head: int) -> np.ndarray:
        # attention_bands: rows [row0, row1) in order from 0 to n; row i holds keys
        # max(0, i - w + 1) .. i, min(i + 1, w) fp16 values.
        n = run.n_tokens
        w = self._band_window(run, layer, head)

        def before(r):
            return r * (r + 1) // 2 if r <= w else w * (w + 1) // 2 + (r - w) * w

        out = np.zeros((n, n), np.float32)
        at = 0
        for row0, row1, nq, dtype, data in self._db.execute(
                "SELECT row0, row1, n_query, dtype, data FROM attention_bands WHERE run_id = ? "
                "AND layer = ? AND head = ? ORDER BY row0", (run.id, layer, head)):
            if row0 != at or not isinstance(row1, int) or not row0 < row1 <= n:
                raise StoreError(f"a band part covers rows {row0!r}..{row1!r} where row {at} "
                                 f"was next")
            if nq != n or dtype != b"f16":
                raise StoreError(f"a band part is for {nq!r} tokens ({_text(dtype)!r}), the "
                                 f"run has {n}")
            count = before(row1) - before(row0)
            if not isinstance(data, bytes) or len(data) != 2 * count:
                got = len(data) if isinstance(data, bytes) else type(data).__name__
                raise StoreError(f"rows {row0}..{row1} of a band of window {w}: data is {got} "
                                 f"bytes, not {2 * count}")
            v = _probabilities(data)
            i = np.arange(row0, row1)
            lens = np.minimum(i + 1, w)
            r = np.repeat(i, lens)
            # value k of row i is key i - len + 1 + (k - the row's first value)
            k = np.arange(len(r)) - np.repeat(np.cumsum(lens) - lens, lens)
            c = r - np.repeat(lens, lens) + 1 + k
            out[r, c] = v
            at = row1
        if at != n:
            raise StoreError(f"its band parts end at row {at} of {n}")
        return out

    def heads(self, run_id: int) -> Iterator[Tuple[int, int, np.ndarray]]:
        """(layer, head, matrix) for every stored head, one at a time (a long run's heads
        do not fit in memory together: 270 heads of 8,192 tokens are 72 GB as float32)."""
        run = self.run(run_id)
        for l, h in self.stored_heads(run.id):
            yield l, h, self.head(run.id, l, h, run=run)

    def overview(self, run_id: int, layer: int, head: int) -> np.ndarray:
        """Head (layer, head)'s overview as float32 (S, S), S = overview_size(n_tokens): cell
        (a, b) is the largest value over rows [a B, (a + 1) B) and keys likewise, B =
        overview_block(n_tokens). In a causal head the cells with b > a lie above the diagonal and are 0.
        Read from head_overviews (schema v3), or computed from the head for older runs."""
        run = self.run(run_id)
        self._check_head(run, layer, head)
        n = run.n_tokens
        size = overview_size(n)
        row = None
        if self.version >= 3:
            row = self._db.execute("SELECT size, dtype, data FROM head_overviews WHERE "
                                   "run_id = ? AND layer = ? AND head = ?",
                                   (run.id, layer, head)).fetchone()
        a = self.head(run.id, layer, head, run=run) if row is None else None
        if row is None:
            bounds = [min(n, k * overview_block(n)) for k in range(size + 1)]
            return np.maximum.reduceat(np.maximum.reduceat(a, bounds[:-1], axis=0),
                                       bounds[:-1], axis=1)
        where = f"run {run.id} layer {layer} head {head}: head_overviews"
        sz, dtype, data = row
        if sz != size or dtype != b"f16" or not isinstance(data, bytes) \
                or len(data) != 2 * size * size:
            raise self._fail(f"{where}: size {sz!r} ({_text(dtype)!r}, "
                             f"{len(data) if isinstance(data, bytes) else '?'} bytes); a run "
                             f"of {n} tokens has {size} x {size} f16")
        try:
            ov = _probabilities(data).reshape(size, size)
        except StoreError as e:
            raise self._fail(f"{where}: {e}") from None
        causal = self._db.execute("SELECT layout FROM attention WHERE run_id = ? AND "
                                  "layer = ? AND head = ? UNION ALL SELECT layout FROM "
                                  "attention_parts WHERE run_id = ? AND layer = ? AND head = ? "
                                  "LIMIT 1", (run.id, layer, head) * 2).fetchone()
        band = self.head_window(run.id, layer, head)
        if (causal is None or causal[0] != b"full") and np.triu(ov, 1).any():
            raise self._fail(f"{where}: a cell above the diagonal of a causal head is not 0")
        if band:
            # cells wholly left of the band: block b's last key + w <= block a's first row
            b = overview_block(n)
            starts = np.minimum(np.arange(size + 1) * b, n)
            left = (starts[1:][None, :] - 1 + band) <= starts[:-1][:, None]
            if ov[left].any():
                raise self._fail(f"{where}: a cell left of the band of window {band} is not 0")
        return ov

    def predictions(self, run_id: int):
        """What the model predicted after each position (schema v3, table predictions):
        (ids int32 (n, k), probabilities float64 (n, k), logits float32 (n, k) with NaN
        where none was stored, pieces: n lists of k bytes), best first; None for a run
        stored without them. Checked as the C reader checks (sc-store-predictions.h)."""
        run = self.run(run_id)
        if self.version < 3:
            return None
        # a piece longer than the limit is not loaded (length() of a BLOB reads its size from
        # the record header): its length stands in for it, and is refused below
        # (a TEXT piece would come back as bytes too: text_factory is bytes; it reads as None)
        rows = self._db.execute("SELECT pos, rank, token_id, CASE WHEN typeof (piece) <> 'blob' "
                                f"THEN NULL WHEN length (piece) > {MAX_PREDICTION_PIECE_BYTES} "
                                "THEN length (piece) ELSE piece END, logit, prob FROM "
                                "predictions WHERE run_id = ? ORDER BY pos, rank",
                                (run.id,)).fetchall()
        if not rows:
            return None
        n = run.n_tokens
        k = max(r[1] for r in rows) + 1 if all(isinstance(r[1], int) for r in rows) else -1
        where = f"run {run.id}: predictions"
        if not 1 <= k <= 64 or len(rows) != n * k:
            raise self._fail(f"{where}: {len(rows)} rows for {n} positions of {k}")
        (n_vocab,) = self._db.execute("SELECT n_vocab FROM models WHERE id = ?",
                                      (run.model_id,)).fetchone()
        ids = np.empty((n, k), np.int32)
        probs = np.empty((n, k), np.float64)
        logits = np.full((n, k), np.nan, np.float32)
        pieces = [[b""] * k for _ in range(n)]
        for i, (pos, rank, tid, piece, logit, prob) in enumerate(rows):
            if (pos, rank) != (i // k, i % k):
                raise self._fail(f"{where}: row ({pos!r}, {rank!r}) out of order")
            if isinstance(piece, int):
                raise self._fail(f"{where}: ({pos}, {rank}): its piece is a {piece}-byte blob, "
                                 f"more than the {MAX_PREDICTION_PIECE_BYTES} bytes a "
                                 f"vocabulary piece may have")
            if not isinstance(tid, int) or not 0 <= tid < n_vocab or not isinstance(piece, bytes):
                raise self._fail(f"{where}: ({pos}, {rank}) token {tid!r} or its piece")
            if not isinstance(prob, (int, float)) or not 0 <= prob <= 1 \
                    or (rank > 0 and prob > probs[pos, rank - 1]):
                raise self._fail(f"{where}: ({pos}, {rank}) probability {prob!r}")
            if logit is not None and not (isinstance(logit, (int, float)) and np.isfinite(logit)):
                raise self._fail(f"{where}: ({pos}, {rank}) logit {logit!r}")
            ids[pos, rank] = tid
            probs[pos, rank] = prob
            if logit is not None:
                logits[pos, rank] = logit
            pieces[pos][rank] = piece
        return ids, probs, logits, pieces


def _probabilities(blob: bytes) -> np.ndarray:
    """fp16 values as float32, each checked to be a probability in [0, 1]."""
    bits = np.frombuffer(blob, dtype="<u2")
    bad = (bits > _FP16_ONE) & (bits != _FP16_NEG_ZERO)
    if bad.any():
        k = int(np.argmax(bad))
        raise StoreError(f"value {k} of the BLOB (fp16 bits 0x{int(bits[k]):04X}) is not a "
                         f"probability in [0, 1]")
    return bits.view("<f2").astype(np.float32)


def _quote_uri_path(path: str) -> str:
    # SQLite URIs: '?' and '#' end the path, '%' starts an escape.
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


# -- .npz exports ----------------------------------------------------------------------

@dataclass
class RunArrays:
    """A `saccade export RUN --all -o run.npz` file (app/core/saccade-export.h lists it)."""
    attention: np.ndarray        # float32 (n_layers, n_heads, n_query, n_key); NaN: not stored
    stored: np.ndarray           # bool (n_layers, n_heads)
    query_positions: np.ndarray  # int32 (n_query): run positions of the rows
    key_positions: np.ndarray    # int32 (n_key)
    token_ids: np.ndarray        # int32 (n_tokens)
    tokens: np.ndarray           # str (n_tokens): pieces as text (U+FFFD for split bytes)
    token_labels: np.ndarray     # str (n_tokens): as the figures show them ("␣cat")
    token_pieces: List[bytes]    # the exact bytes
    text: str
    text_bytes: bytes
    metadata: dict
    layer_windows: Optional[np.ndarray] = None  # int32 (n_layers): 0 global; None in
                                                # exports made before layer windows existed

    def head(self, layer: int, head: int) -> np.ndarray:
        if not self.stored[layer, head]:
            raise HeadNotStored(f"layer {layer} head {head} was not stored")
        return self.attention[layer, head]


def load_npz(path: str) -> RunArrays:
    """Loads a whole-run .npz. The attention member is read whole (numpy.load of an archive
    member cannot be memory-mapped: for a run larger than memory, export a --range, or read
    the store head by head with Store.heads)."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["metadata"]))
        if meta.get("format") != "saccade-run-npz" or meta.get("version") != 1:
            raise StoreError(f"{path}: not a Saccade run export (format "
                             f"{meta.get('format')!r} version {meta.get('version')!r})")
        offsets = z["token_offsets"]
        raw = z["token_bytes"].tobytes()
        return RunArrays(
            attention=z["attention"], stored=z["stored"],
            query_positions=z["query_positions"], key_positions=z["key_positions"],
            token_ids=z["token_ids"], tokens=z["tokens"], token_labels=z["token_labels"],
            token_pieces=[raw[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)],
            text=str(z["text"]), text_bytes=z["text_bytes"].tobytes(), metadata=meta,
            layer_windows=z["layer_windows"] if "layer_windows" in z.files else None)
