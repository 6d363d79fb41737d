"""``open_store(path) -> Store``: a DuckDB catalog over a store's Parquet and live segments."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from footprint._errors import ConfigError, did_you_mean
from footprint.events import Event, from_record
from recorder._discover import StoreFiles, discover
from recorder._layout import resolve_store
from recorder._parquet_sink import STATS_SCHEMA
from recorder._remote import is_remote, mirror
from recorder._rows import BLOB_KEY, BLOB_SCHEMA, CHAIN_SCHEMA, ENVELOPE_NAMES, EVENT_SCHEMA
from recorder._sandbox import Sandbox
from recorder._upcast import upcast
from recorder._views import VIEWS

__all__ = ["Store", "open_store"]

_DATE = pa.field("date", pa.date32())


def open_store(path: str | os.PathLike[str] | None = None) -> Store:
    """Open the store at ``path`` (default ``$FOOTPRINT_STORE`` or ``./.footprint``).

    ``path`` may be an object-storage URI (``s3://bucket/prefix``): its sealed
    files are mirrored into a local cache first (see ``recorder._remote``).
    """
    location = os.fspath(path) if path is not None else os.environ.get("FOOTPRINT_STORE")
    if is_remote(location):
        assert location is not None
        return Store(mirror(location))
    root = resolve_store(path)
    if not root.is_dir():
        raise ConfigError(
            f"no footprint store at {str(root)!r}; record a run first, or pass --store / "
            "set FOOTPRINT_STORE to the directory a ParquetSink wrote"
        )
    return Store(root)


def _parquet(paths: list[Path], *, hive: bool) -> str:
    files = ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths)
    extra = ", hive_partitioning = true" if hive else ""
    return f"read_parquet([{files}], union_by_name = true{extra})"


class Store:
    """A read view of one store; :meth:`refresh` picks up files written since."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.con = duckdb.connect()
        self.files = StoreFiles()
        self._sandbox: Sandbox | None = None
        self.refresh()

    def refresh(self) -> None:
        """Rescan the directory and rebuild the views."""
        self.files = discover(self.root)
        self._define(self.con)
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def _define(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create the store's views on ``con`` (the catalog's own, or the sandbox's)."""
        f = self.files
        live = pa.Table.from_batches(f.live_events, schema=EVENT_SCHEMA)
        con.register("_live_events", live)
        sealed = self._raw(con, "_sealed_events", f.events, EVENT_SCHEMA.append(_DATE), hive=True)
        con.execute(
            f"CREATE OR REPLACE VIEW _events_all AS SELECT * FROM {sealed} UNION ALL BY NAME "
            "SELECT *, CAST(make_timestamp(ts // 1000) AS DATE) AS date FROM _live_events"
        )
        con.register("_live_blobs", pa.Table.from_batches(f.live_blobs, schema=BLOB_SCHEMA))
        sealed_blobs = self._raw(con, "_sealed_blobs", f.blobs, BLOB_SCHEMA, hive=False)
        con.execute(
            f"CREATE OR REPLACE VIEW _blobs_all AS SELECT * FROM {sealed_blobs} "
            "UNION ALL BY NAME SELECT * FROM _live_blobs"
        )
        stats = self._raw(con, "_sealed_stats", f.stats, STATS_SCHEMA, hive=False)
        con.execute(f"CREATE OR REPLACE VIEW _stats_all AS SELECT * FROM {stats}")
        columns = {r[0] for r in con.execute("DESCRIBE _stats_all").fetchall()}
        missing = [c for c in ("sink_drops", "unencodable") if c not in columns]
        if missing:  # stats written before those counts were kept
            zeros = ", ".join(f"0::BIGINT AS {c}" for c in missing)
            con.execute(f"CREATE OR REPLACE VIEW _stats_all AS SELECT *, {zeros} FROM {stats}")
        chain = self._raw(con, "_sealed_chain", f.chain, CHAIN_SCHEMA, hive=False)
        con.register("_live_chain", pa.Table.from_batches(f.live_chain, schema=CHAIN_SCHEMA))
        con.execute(f"CREATE OR REPLACE VIEW _chain_all AS SELECT * FROM {chain} "
                    "UNION ALL BY NAME SELECT * FROM _live_chain")
        for name, select in VIEWS:
            con.execute(f"CREATE OR REPLACE VIEW {name} AS {select}")

    @staticmethod
    def _raw(con: duckdb.DuckDBPyConnection, name: str, paths: list[Path], schema: pa.Schema,
             *, hive: bool) -> str:
        if paths:
            return _parquet(paths, hive=hive)
        con.register(name, schema.empty_table())
        return name

    # -- querying -------------------------------------------------------------------
    def sql(self, query: str) -> duckdb.DuckDBPyRelation:
        """One read-only query over the views, as a DuckDB relation (``.df()``, ``.pl()``,
        ``.arrow()``, ``.fetchall()``); run in the SQL sandbox (``recorder._sandbox``):
        anything else is refused with a one-line :class:`SqlRefused`."""
        if self._sandbox is None:
            f = self.files
            self._sandbox = Sandbox(self._define, [*f.events, *f.blobs, *f.stats, *f.chain])
        return self._sandbox.sql(query)

    def rows(self, query: str, params: Iterable[object] = ()) -> list[tuple[Any, ...]]:
        """``query`` with ``?`` parameters, as a list of tuples."""
        return self.con.execute(query, list(params)).fetchall()

    def run_ids(self) -> list[str]:
        """Every run id, oldest first."""
        return [r[0] for r in self.rows("SELECT run_id FROM runs ORDER BY start_ns, run_id")]

    def resolve_run(self, ref: str) -> str:
        """A full run id from a full id, a unique prefix, or ``last``."""
        ids = self.run_ids()
        if not ids:
            raise ConfigError(f"the store {str(self.root)!r} has no runs; record one first")
        if ref == "last":
            return ids[-1]
        if ref in ids:
            return ref
        matches = [i for i in ids if i.startswith(ref)] if ref else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ConfigError(
                f"run prefix {ref!r} matches {len(matches)} runs ({', '.join(matches[:3])}…); "
                "type more characters"
            )
        raise ConfigError(
            f"no run {ref!r} in {str(self.root)!r}{did_you_mean(ref, ids)}; "
            "see `footprint runs` for the ids, or use `last`"
        )

    def events(self, run_id: str) -> list[Event]:
        """The run's events, rebuilt as typed objects, blob text restored, in seq order."""
        rows = self.rows(
            f"SELECT {', '.join(ENVELOPE_NAMES)}, payload FROM _events_all "
            "WHERE run_id = ? ORDER BY seq",
            [run_id],
        )
        payloads = [json.loads(r[-1]) for r in rows]
        texts = self._blob_texts(payloads)
        out: list[Event] = []
        for row, payload in zip(rows, payloads, strict=True):
            record = dict(zip(ENVELOPE_NAMES, row[:-1], strict=True))
            for key, value in payload.items():
                record[key] = _unblob(value, texts)
            out.append(from_record(upcast(record)))
        return out

    def _blob_texts(self, payloads: list[dict[str, Any]]) -> dict[str, str]:
        wanted = sorted({v[BLOB_KEY] for p in payloads for v in p.values() if _is_ref(v)})
        if not wanted:
            return {}
        found = self.rows("SELECT hash, text FROM blobs WHERE hash IN ?", [wanted])
        return {str(h): str(t) for h, t in found}

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_ref(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get(BLOB_KEY), str)


def _unblob(value: object, texts: dict[str, str]) -> object:
    if _is_ref(value):
        digest = value[BLOB_KEY]  # type: ignore[index]
        if digest not in texts:
            raise ConfigError(
                f"blob {digest!r} is referenced but missing from the store; "
                "restore the store's blobs/ directory"
            )
        return texts[digest]
    return value
