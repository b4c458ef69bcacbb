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

    z = ss.load_npz("run.npz")                       # `saccade export RUN --all -o run.npz`
    z.attention[5, 2]                                # float32 [layer, head, query, key]

What the store holds (docs/store.md, "Reading the database directly", has the schema):
one fp16 BLOB per (run, layer, head), little-endian, row-major; a 'causal' head keeps only
its lower triangle (row i holds keys 0..i, n(n+1)/2 values), a 'full' head all n x n. The
values are probabilities rounded to fp16, so a row sums to 1 only within fp16 rounding
(at most n * 2**-12 off). The reader widens them to float32 exactly, as the C reader does.

A database from someone else is untrusted input. Like the C reader (engine/store/
sc-store-read.c), this one opens the file read-only, refuses a schema version it does not
know, a file with triggers or views, and any row whose numbers disagree with the others
(a head whose shape is not its run's, a BLOB of the wrong length, a value that is not a
probability, a missing or misplaced token): StoreError, naming the run, table and value.
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
           "SCHEMA_VERSIONS"]

# The schema versions this reader knows (PRAGMA user_version): v1 runs and heads, v2 adds
# the study tables (docs/store.md). A newer store may store heads differently: refused.
SCHEMA_VERSIONS = (1, 2)

# The C reader's ceilings (engine/store/sc-store.h): nothing larger sizes an allocation.
MAX_TOKENS = 1 << 19
MAX_LAYERS = 4096
MAX_HEADS = 4096
MAX_PIECE_BYTES = 65536

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

    @property
    def text(self) -> str:
        return self.text_bytes.decode("utf-8", errors="replace")


def _text(b) -> str:
    if isinstance(b, bytes):
        return b.decode("utf-8", errors="replace")
    return str(b)


def _int(value, what: str, lo: int, hi: int) -> int:
    # sqlite3 hands back whatever the cell holds: an INTEGER column may hold text or a real.
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise StoreError(f"{what} = {value!r} is not an integer in {lo}..{hi}")
    return value


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
        for table, cols in need.items():
            have = {_text(r[1]) for r in self._db.execute(f"PRAGMA table_info({table})")}
            if not cols <= have:
                raise self._fail(f"table {table} lacks {', '.join(sorted(cols - have))}: "
                                 f"not a Saccade store")

    # -- runs ---------------------------------------------------------------------------

    _RUN_SQL = ("SELECT r.id, r.model_id, m.name, m.arch, m.sha256, m.n_layers, m.n_heads, "
                "m.n_kv_heads, m.head_dim, m.n_vocab, r.n_tokens, r.created, r.backend, r.text "
                "FROM runs r JOIN models m ON m.id = r.model_id "
                "WHERE r.status = 'complete'")

    def _run_from_row(self, row) -> Run:
        (rid, mid, name, arch, sha, nl, nh, nkv, hd, nv, n, created, backend, text) = row
        where = f"run {rid}"
        nl = _int(nl, f"{where}: n_layers", 1, MAX_LAYERS)
        nh = _int(nh, f"{where}: n_heads", 1, MAX_HEADS)
        nkv = _int(nkv, f"{where}: n_kv_heads", 1, nh)
        if nh % nkv:
            raise self._fail(f"{where}: n_kv_heads = {nkv} does not divide n_heads = {nh}")
        if not isinstance(sha, bytes) or len(sha) != 32:
            raise self._fail(f"{where}: the model's sha256 is not 32 bytes")
        if not isinstance(text, bytes):
            raise self._fail(f"{where}: text is not a BLOB")
        try:
            return Run(id=_int(rid, "run id", 1, 2**63 - 1),
                       model_id=_int(mid, f"{where}: model_id", 1, 2**63 - 1),
                       model_name=_text(name), model_arch=_text(arch), model_sha256=sha.hex(),
                       n_layers=nl, n_heads=nh, n_kv_heads=nkv,
                       head_dim=_int(hd, f"{where}: head_dim", 1, 65536),
                       n_vocab=_int(nv, f"{where}: n_vocab", 1, 2**31 - 1),
                       n_tokens=_int(n, f"{where}: n_tokens", 1, MAX_TOKENS),
                       created_ms=_int(created, f"{where}: created", 0, 253402300799999),
                       backend=_text(backend), text_bytes=text)
        except StoreError as e:
            raise self._fail(str(e)) from None

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
        rows = self._db.execute("SELECT pos, token_id, piece FROM tokens WHERE run_id = ? "
                                "ORDER BY pos", (run.id,)).fetchall()
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
        """The (layer, head) pairs the run stores, in order."""
        run = self.run(run_id)
        pairs = [(int(l), int(h)) for l, h in self._db.execute(
            "SELECT layer, head FROM attention WHERE run_id = ? ORDER BY layer, head",
            (run.id,))]
        for l, h in pairs:
            if not (0 <= l < run.n_layers and 0 <= h < run.n_heads):
                raise self._fail(f"run {run.id}: a head at layer {l} head {h}, outside the "
                                 f"model's {run.n_layers} x {run.n_heads}")
        return pairs

    def head(self, run_id: int, layer: int, head: int, run: Optional[Run] = None) -> np.ndarray:
        """Head (layer, head) of the run as float32 (n_tokens, n_tokens), each value the
        stored fp16 exactly; zeros above the diagonal of a causal head. HeadNotStored when
        the run has no such head."""
        run = run or self.run(run_id)
        if not (0 <= layer < run.n_layers and 0 <= head < run.n_heads):
            raise KeyError(f"run {run.id} has layers 0-{run.n_layers - 1} and heads "
                           f"0-{run.n_heads - 1}, not layer {layer} head {head}")
        row = self._db.execute("SELECT n_query, n_key, layout, dtype, data FROM attention "
                               "WHERE run_id = ? AND layer = ? AND head = ?",
                               (run.id, layer, head)).fetchone()
        if row is None:
            raise HeadNotStored(f"run {run.id} stores no layer {layer} head {head}")
        nq, nk, layout, dtype, data = row
        where = f"run {run.id} layer {layer} head {head}"
        if nq != run.n_tokens or nk != run.n_tokens:
            raise self._fail(f"{where}: {nq!r} x {nk!r} for {run.n_tokens} tokens")
        if dtype != b"f16":
            raise self._fail(f"{where}: dtype {_text(dtype)!r} (this reader knows 'f16')")
        try:
            return decode_head(data, _text(layout), nq, nk)
        except StoreError as e:
            raise self._fail(f"{where}: {e}") from None

    def heads(self, run_id: int) -> Iterator[Tuple[int, int, np.ndarray]]:
        """(layer, head, matrix) for every stored head, one at a time (a long run's heads
        do not fit in memory together: 270 heads of 8,192 tokens are 72 GB as float32)."""
        run = self.run(run_id)
        for l, h in self.stored_heads(run.id):
            yield l, h, self.head(run.id, l, h, run=run)


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
            text=str(z["text"]), text_bytes=z["text_bytes"].tobytes(), metadata=meta)
