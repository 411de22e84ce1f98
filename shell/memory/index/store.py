"""The LanceDB side of the memory index: table layout, row conversion, FTS and the embedding cache.

Layout of `<workspace>/.cairn/index/` (derived data, safe to delete):

* `identity.json` - schema version, model, dim, chunking parameters, the live generation and the
  last sync time; replaced atomically, so swapping in a rebuilt generation is one rename.
* `chunks_<gen>.lance` - id, path, start_line, end_line, text, hash, context, tokens, heading,
  follows, search (context + text), vector (float32[dim]) with a BM25 full-text index on `search`.
* `files_<gen>.json` - path, size, mtime_ns, hash, checked_ns of every indexed file: one small
  file replaced atomically per sync, where a LanceDB table cost two table versions (schema 1 kept
  these in a `files_<gen>.lance` table; such an index is rebuilt, see `SCHEMA_VERSION`).
* `cache_<model>_<dim>.lance` - hash, vector: every text ever embedded with that model, kept
  across rebuilds so unchanged text is never embedded twice.

lancedb and pyarrow are imported inside the functions that need them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from shell.fsio import write_atomically
from shell.heavy_import import collector_paused
from shell.memory.index.chunking import Chunk
from shell.memory.index.scan import FileRecord
from shell.secrets.door import private_folder

SCHEMA_VERSION = 4
"""2: file records moved from a `files_<gen>` LanceDB table to `files_<gen>.json`.
3: chunks are Markdown units with a keyword context (`context`, `tokens`, `search` columns).
4: a `follows` column: how alike a unit is to the one before it (`Chunk.follows`)."""
IDENTITY_FILE = "identity.json"
FTS_INDEX_NAME = "search_idx"
RECORDS_PREFIX = "files_"
RECORDS_SUFFIX = ".json"
_IN_LIST_BATCH = 500
LOAD_BATCH = 8_192


def _lancedb() -> Any:
    os.environ.setdefault("LANCEDB_LOG", "error")  # else Rust WARN lines land on stderr
    with collector_paused():
        import lancedb

    return lancedb


def sql_string(value: str) -> str:
    """A SQL string literal (single quotes doubled), for lancedb `where`/`delete` filters."""
    return "'" + value.replace("'", "''") + "'"


def in_filters(column: str, values: Iterable[str]) -> list[str]:
    """`column IN (...)` filters, batched so no single SQL string grows without bound."""
    return any_in_filters({column: values})


def any_in_filters(columns: dict[str, Iterable[str]]) -> list[str]:
    """Filters for rows whose value in any of `columns` is among its values.

    `{"path": ["a"], "id": ["x", "y"]}` gives `["path IN ('a') OR id IN ('x', 'y')"]`: one filter
    (so one delete, one table version) for all of them, batched so no single SQL string holds
    more than a few hundred values.
    """
    items = [(column, value) for column, values in columns.items() for value in sorted(set(values))]
    filters: list[str] = []
    for start in range(0, len(items), _IN_LIST_BATCH):
        batch = items[start : start + _IN_LIST_BATCH]
        clauses = [
            f"{column} IN ({', '.join(sql_string(value) for _, value in group)})"
            for column, group in groupby(batch, key=itemgetter(0))
        ]
        filters.append(" OR ".join(clauses))
    return filters


def chunks_schema(dim: int) -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("path", pa.string()),
            pa.field("start_line", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("text", pa.string()),
            pa.field("hash", pa.string()),
            pa.field("context", pa.string()),
            pa.field("tokens", pa.int32()),
            pa.field("heading", pa.string()),
            pa.field("follows", pa.float32()),
            pa.field("search", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def cache_schema(dim: int) -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("hash", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _vector_array(vectors: np.ndarray, dim: int) -> Any:
    import pyarrow as pa

    flat = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)
    return pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), dim)


def _vectors_of(column: Any, dim: int) -> np.ndarray:
    """A fixed-size-list vector column (a table's, chunked, or a record batch's) as a matrix."""
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if len(array) == 0:
        return np.zeros((0, dim), dtype=np.float32)
    return np.asarray(array.flatten().to_numpy(zero_copy_only=False), np.float32).reshape(-1, dim)


def chunk_rows(chunks: Sequence[Chunk], vectors: np.ndarray, dim: int) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "id": [c.id for c in chunks],
            "path": [c.path for c in chunks],
            "start_line": pa.array([c.start_line for c in chunks], pa.int32()),
            "end_line": pa.array([c.end_line for c in chunks], pa.int32()),
            "text": [c.text for c in chunks],
            "hash": [c.hash for c in chunks],
            "context": [c.context for c in chunks],
            "tokens": pa.array([c.tokens for c in chunks], pa.int32()),
            "heading": [c.heading for c in chunks],
            "follows": pa.array([c.follows for c in chunks], pa.float32()),
            "search": [c.search_text for c in chunks],
            "vector": _vector_array(vectors, dim),
        },
        schema=chunks_schema(dim),
    )


def cache_rows(hashes: Sequence[str], vectors: np.ndarray, dim: int) -> Any:
    import pyarrow as pa

    return pa.table(
        {"hash": list(hashes), "vector": _vector_array(vectors, dim)}, schema=cache_schema(dim)
    )


def cache_slug(model: str, dim: int) -> str:
    return f"cache_{re.sub(r'[^A-Za-z0-9]+', '_', model).strip('_').lower()}_{dim}"


class LanceStore:
    """One LanceDB database folder holding the index's tables and its identity record."""

    def __init__(self, directory: Path, dim: int) -> None:
        self.directory = directory
        self.dim = dim
        self._db: Any = None

    @property
    def db(self) -> Any:
        if self._db is None:
            private_folder(self.directory)
            self._db = _lancedb().connect(str(self.directory))
        return self._db

    def close(self) -> None:
        self._db = None

    # --- identity ------------------------------------------------------------------------

    def read_identity(self) -> dict[str, Any] | None:
        """The identity record, or None when the folder has none. Raises on a corrupt one."""
        path = self.directory / IDENTITY_FILE
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("generation"), int):
            raise ValueError(f"malformed {IDENTITY_FILE}")
        return data

    def write_identity(self, identity: dict[str, Any]) -> None:
        text = json.dumps(identity, indent=2, sort_keys=True)
        write_atomically(self.directory / IDENTITY_FILE, text, mode=0o600)

    # --- file records --------------------------------------------------------------------

    def records_path(self, generation: int) -> Path:
        return self.directory / f"{RECORDS_PREFIX}{generation}{RECORDS_SUFFIX}"

    def write_records(self, generation: int, records: Iterable[FileRecord]) -> None:
        """Replace generation `generation`'s file records, atomically."""
        private_folder(self.directory)
        records_bytes = records_json(generation, records)
        write_atomically(self.records_path(generation), records_bytes, mode=0o600)

    def read_records(self, generation: int) -> dict[str, FileRecord]:
        """Generation `generation`'s file records, keyed by path.

        Raises:
            OSError: the records file is missing or unreadable.
            ValueError: it is not a records file of this generation.
        """
        return parse_records(self.records_path(generation).read_bytes(), generation)

    # --- tables --------------------------------------------------------------------------

    def table_names(self) -> list[str]:
        names: list[str] = []
        token: str | None = None
        while True:
            response = self.db.list_tables(page_token=token)
            names.extend(response.tables)
            token = response.page_token
            if not token:
                return names

    def drop(self, name: str) -> None:
        if name in self.table_names():
            self.db.drop_table(name)

    def create_generation(self, generation: int) -> Any:
        """A fresh, empty chunks table and records file for `generation` (leftovers go first)."""
        name = f"chunks_{generation}"
        self.drop(name)
        chunks = self.db.create_table(name, schema=chunks_schema(self.dim))
        self.write_records(generation, [])
        return chunks

    def open_generation(self, generation: int) -> tuple[Any, dict[str, FileRecord]]:
        """Generation `generation`'s chunks table and file records (raises if either is bad)."""
        return self.db.open_table(f"chunks_{generation}"), self.read_records(generation)

    def drop_other_generations(self, generation: int) -> None:
        """Delete every other generation's table and records, and schema 1's files tables."""
        for name in self.table_names():
            # files_<n> tables are schema 1's file records; no generation of schema 2 has one
            if name.startswith(("chunks_", "files_")) and name != f"chunks_{generation}":
                try:
                    self.db.drop_table(name)
                except Exception:  # a leftover we cannot drop costs disk, nothing else
                    pass
        keep = self.records_path(generation).name
        # other generations' records, and the temp files of writes killed before their rename
        # (`files_<n>.json.tmp` from older versions, `.files_<n>.json.<random>.tmp` now)
        stale = [
            *self.directory.glob(f"{RECORDS_PREFIX}*{RECORDS_SUFFIX}*"),
            *self.directory.glob(f".{RECORDS_PREFIX}*{RECORDS_SUFFIX}.*.tmp"),
        ]
        for path in stale:
            if path.name != keep and path.is_file():
                path.unlink(missing_ok=True)

    def cache_table(self, model: str) -> Any:
        name = cache_slug(model, self.dim)
        if name in self.table_names():
            return self.db.open_table(name)
        return self.db.create_table(name, schema=cache_schema(self.dim))

    def read_cache(self, model: str) -> Any | None:
        """The whole embedding cache table as Arrow, or None if it is absent or unreadable."""
        try:
            name = cache_slug(model, self.dim)
            if name not in self.table_names():
                return None
            return self.db.open_table(name).to_arrow()
        except Exception:
            return None

    def restore_cache(self, model: str, rows: Any) -> None:
        self.cache_table(model).add(rows.select(["hash", "vector"]).cast(cache_schema(self.dim)))


def load_chunks(table: Any, dim: int) -> Iterator[tuple[list[Chunk], np.ndarray]]:
    """Every row of a chunks table, `LOAD_BATCH` rows at a time: chunks and `(n, dim)` vectors.

    Streamed, so loading holds one batch of Arrow data at a time rather than the whole table.
    """
    columns = [field.name for field in fields(Chunk)]
    reader = table.search().select([*columns, "vector"]).limit(None).to_batches(LOAD_BATCH)
    for batch in reader:
        values = [batch.column(name).to_pylist() for name in columns]
        chunks = [Chunk(*row) for row in zip(*values, strict=True)]
        vectors = _vectors_of(batch.column("vector"), dim)
        if len(vectors) != len(chunks):
            raise ValueError("chunks table has vectors of the wrong size")
        yield chunks, vectors


def records_json(generation: int, records: Iterable[FileRecord]) -> bytes:
    """The records file's bytes: one `[path, size, mtime_ns, hash, checked_ns]` list a file."""
    rows = [[r.path, r.size, r.mtime_ns, r.hash, r.checked_ns] for r in records]
    document = {"generation": generation, "files": rows}
    return json.dumps(document, separators=(",", ":")).encode("utf-8")


def parse_records(data: bytes, generation: int) -> dict[str, FileRecord]:
    """Read `records_json`'s bytes back (ValueError unless they are generation `generation`'s)."""
    document = json.loads(data)
    if not isinstance(document, dict) or document.get("generation") != generation:
        raise ValueError(f"records file is not generation {generation}'s")
    rows = document.get("files")
    if not isinstance(rows, list):
        raise ValueError("malformed records file")
    records: dict[str, FileRecord] = {}
    for row in rows:
        if not (
            isinstance(row, list)
            and len(row) == 5
            and isinstance(row[0], str)
            and isinstance(row[3], str)
            and all(type(number) is int for number in (row[1], row[2], row[4]))
        ):
            raise ValueError(f"malformed file record: {row!r}"[:200])
        records[row[0]] = FileRecord(*row)
    return records


def cache_hashes(table: Any) -> set[str]:
    """Every hash the embedding cache holds (only the hash column is read)."""
    return set(table.to_arrow().column("hash").to_pylist()) if table.count_rows() else set()


def cache_lookup(table: Any, hashes: Iterable[str], dim: int) -> dict[str, np.ndarray]:
    """Cached vectors for those of `hashes` the cache holds."""
    found: dict[str, np.ndarray] = {}
    wanted = set(hashes)
    for where in in_filters("hash", wanted):
        data = (
            table.search()
            .where(where)
            .select(["hash", "vector"])
            .limit(2 * _IN_LIST_BATCH)
            .to_arrow()
        )
        vectors = _vectors_of(data.column("vector"), dim)
        for digest, vector in zip(data.column("hash").to_pylist(), vectors, strict=True):
            found[digest] = vector
    return found


def build_fts(table: Any) -> None:
    from lancedb.index import FTS

    table.create_index("search", config=FTS(with_position=False), replace=True)


def unindexed_rows(table: Any) -> int:
    """Rows the FTS index has not absorbed yet (they are still found, by a scan)."""
    stats = table.index_stats(FTS_INDEX_NAME)
    return 0 if stats is None else int(stats.num_unindexed_rows)


def fts_search(table: Any, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
    """BM25 hits for any of `terms` (already reduced to plain word tokens), best first."""
    from lancedb.query import MatchQuery

    # lancedb's type hints mark MatchQuery's defaulted fields as required; the defaults hold
    query = MatchQuery(" ".join(terms), "search")  # type: ignore[call-arg]
    data = table.search(query, query_type="fts").select(["id"]).limit(limit).to_arrow()
    return list(zip(data.column("id").to_pylist(), data.column("_score").to_pylist(), strict=True))
