"""The LanceDB side of the memory index: table layout, row conversion, FTS and the embedding cache.

Layout of `<workspace>/.cairn/index/` (derived data, safe to delete):

* `identity.json` - schema version, model, dim, chunking parameters, the live generation and the
  last sync time; replaced atomically, so swapping in a rebuilt generation is one rename.
* `chunks_<gen>.lance` - id, path, start_line, end_line, text, hash, vector (float32[dim]) with
  a BM25 full-text index on `text`.
* `files_<gen>.lance` - path, size, mtime_ns, hash, checked_ns of every indexed file.
* `cache_<model>_<dim>.lance` - hash, vector: every text ever embedded with that model, kept
  across rebuilds so unchanged text is never embedded twice.

lancedb and pyarrow are imported inside the functions that need them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shell.memory.chunking import Chunk
from shell.memory.sync import FileRecord

SCHEMA_VERSION = 1
IDENTITY_FILE = "identity.json"
FTS_INDEX_NAME = "text_idx"
_IN_LIST_BATCH = 500


def _lancedb() -> Any:
    os.environ.setdefault("LANCEDB_LOG", "error")  # else Rust WARN lines land on stderr
    import lancedb

    return lancedb


def sql_string(value: str) -> str:
    """A SQL string literal (single quotes doubled), for lancedb `where`/`delete` filters."""
    return "'" + value.replace("'", "''") + "'"


def in_filters(column: str, values: Iterable[str]) -> list[str]:
    """`column IN (...)` filters, batched so no single SQL string grows without bound."""
    items = sorted(set(values))
    return [
        f"{column} IN ({', '.join(sql_string(v) for v in items[i : i + _IN_LIST_BATCH])})"
        for i in range(0, len(items), _IN_LIST_BATCH)
    ]


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
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def files_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("path", pa.string()),
            pa.field("size", pa.int64()),
            pa.field("mtime_ns", pa.int64()),
            pa.field("hash", pa.string()),
            pa.field("checked_ns", pa.int64()),
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
    array = column.combine_chunks()
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
            "vector": _vector_array(vectors, dim),
        },
        schema=chunks_schema(dim),
    )


def file_rows(records: Sequence[FileRecord]) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "path": [r.path for r in records],
            "size": [r.size for r in records],
            "mtime_ns": [r.mtime_ns for r in records],
            "hash": [r.hash for r in records],
            "checked_ns": [r.checked_ns for r in records],
        },
        schema=files_schema(),
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
            self.directory.mkdir(parents=True, exist_ok=True)
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
        path = self.directory / IDENTITY_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(identity, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)

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

    def create_generation(self, generation: int) -> tuple[Any, Any]:
        """Fresh, empty chunks and files tables for `generation` (leftovers dropped first)."""
        chunks_name, files_name = f"chunks_{generation}", f"files_{generation}"
        self.drop(chunks_name)
        self.drop(files_name)
        chunks = self.db.create_table(chunks_name, schema=chunks_schema(self.dim))
        files = self.db.create_table(files_name, schema=files_schema())
        return chunks, files

    def open_generation(self, generation: int) -> tuple[Any, Any]:
        return self.db.open_table(f"chunks_{generation}"), self.db.open_table(f"files_{generation}")

    def drop_other_generations(self, generation: int) -> None:
        keep = {f"chunks_{generation}", f"files_{generation}"}
        for name in self.table_names():
            if name.startswith(("chunks_", "files_")) and name not in keep:
                try:
                    self.db.drop_table(name)
                except Exception:  # a leftover we cannot drop costs disk, nothing else
                    pass

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


def load_chunks(table: Any, dim: int) -> tuple[list[Chunk], np.ndarray]:
    """Every row of a chunks table: the chunks and their `(n, dim)` vectors, in table order."""
    data = table.to_arrow()
    columns = {
        name: data.column(name).to_pylist()
        for name in ("id", "path", "start_line", "end_line", "text", "hash")
    }
    chunks = [
        Chunk(*fields)
        for fields in zip(
            columns["id"],
            columns["path"],
            columns["start_line"],
            columns["end_line"],
            columns["text"],
            columns["hash"],
            strict=True,
        )
    ]
    vectors = _vectors_of(data.column("vector"), dim)
    if len(vectors) != len(chunks):
        raise ValueError("chunks table has vectors of the wrong size")
    return chunks, vectors


def load_files(table: Any) -> dict[str, FileRecord]:
    data = table.to_arrow().to_pylist()
    return {
        row["path"]: FileRecord(
            row["path"], row["size"], row["mtime_ns"], row["hash"], row["checked_ns"]
        )
        for row in data
    }


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

    table.create_index("text", config=FTS(with_position=False), replace=True)


def unindexed_rows(table: Any) -> int:
    """Rows the FTS index has not absorbed yet (they are still found, by a scan)."""
    stats = table.index_stats(FTS_INDEX_NAME)
    return 0 if stats is None else int(stats.num_unindexed_rows)


def fts_search(table: Any, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
    """BM25 hits for any of `terms` (already reduced to plain word tokens), best first."""
    from lancedb.query import MatchQuery

    query = MatchQuery(" ".join(terms), "text")
    data = table.search(query, query_type="fts").select(["id"]).limit(limit).to_arrow()
    return list(zip(data.column("id").to_pylist(), data.column("_score").to_pylist(), strict=True))
