"""``open_store(path) -> Store``: a DuckDB catalog over a store's Parquet and live segments."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from footprint._errors import ConfigError
from recorder.store._bounded import bounded, check_timeout
from recorder.store._damage import guarded
from recorder.store._discover import StoreFiles, discover
from recorder.store._livespill import LiveSpill
from recorder.store._outline import Outlines, outline_view
from recorder.store._prices import load_prices, prices_arrow
from recorder.store._records import DATASET_SCHEMA, RECORD_VIEWS, RESULT_SCHEMA, record_files
from recorder.store._remote import is_remote, mirror
from recorder.store._runref import resolve_ref
from recorder.store._sandbox import Sandbox
from recorder.store._views import VIEWS
from recorder.write._layout import resolve_store
from recorder.write._schemas import BLOB_SCHEMA, CHAIN_SCHEMA, EVENT_SCHEMA, STATS_SCHEMA

if TYPE_CHECKING:
    from footprint.events import Event

__all__ = ["Store", "open_store"]

_DATE = pa.field("date", pa.date32())


def open_store(path: str | os.PathLike[str] | None = None) -> Store:
    """Open the store at ``path`` (default ``$FOOTPRINT_STORE`` or ``./.footprint``).

    ``path`` may be an object-storage URI (``s3://bucket/prefix``): its sealed
    files are mirrored into a local cache first (see ``recorder.store._remote``).
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


def _list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def _parquet(paths: list[Path], *, hive: bool) -> str:
    extra = ", hive_partitioning = true" if hive else ""
    return f"read_parquet({_list(paths)}, union_by_name = true{extra})"


_ALL_VIEWS = (*VIEWS, *RECORD_VIEWS)
_PUBLIC = re.compile(r"\b(?:FROM|JOIN)\s+(?:" + "|".join(name for name, _ in _ALL_VIEWS)
                     + r")\b", re.IGNORECASE)
"""A query that reads a public view (they are only ever named after FROM or JOIN)."""


def _public_views(con: duckdb.DuckDBPyConnection) -> None:
    for name, select in _ALL_VIEWS:
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {select}")


_MADE_MS = ("coalesce(CASE WHEN uuid_extract_version(TRY_CAST(run_id AS UUID)) = 7 THEN "
            "epoch_ms(uuid_extract_timestamp(TRY_CAST(run_id AS UUID))) END, "
            "min(start_ns) // 1000000)")
"""When a run was made, in Unix ms: a UUIDv7 id's stamp, else its first event's time."""
_MODELS = ("SELECT DISTINCT model FROM _events_all WHERE type IN ('llm.start', 'llm.end') "
           "AND model IS NOT NULL")


class Store:
    """A read view of one store; :meth:`refresh` picks up files written since."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.con = duckdb.connect()
        self.files = StoreFiles()
        self.damaged: dict[Path, str] = {}
        """Files a read found damaged inside (``recorder.store._damage``): left out from now on."""
        self.outlines = Outlines(root)
        self._public = False
        """Whether the public views (``recorder.store._views``) exist on ``con``."""
        self.outlined = False
        """Whether ``_outline_all`` matches the last scan (``recorder.store._outline``)."""
        self._priced = False
        """Whether ``_prices`` holds every model of the last scan (``recorder.store._prices``)."""
        self._sandbox: Sandbox | None = None
        self._in_memory: dict[str, pa.Table] = {}
        """What the views read from memory (live rows, empty stand-ins), by registered name."""
        self.spill = LiveSpill()
        """Where big live streams are read into (``recorder.store._livespill``)."""
        self.records: tuple[list[Path], list[Path]] = ([], [])
        """The dataset and experiment files of the last scan (``recorder.store._records``)."""
        self.refresh()

    def refresh(self) -> None:
        """Rescan the directory and rebuild the views (a damaged file met on the way is
        named once and left out)."""
        previous = self.spill.begin()
        guarded(self, self._rebuild, rescan=False)
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        self.spill.forget(previous)

    def _rebuild(self) -> None:
        self.spill.forget(self.spill.begin())
        self.files = discover(self.root, self.damaged, self.spill)
        self.outlined = False
        self._priced = False
        self._define(self.con)

    def _define(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create the store's views on ``con`` (the catalog's own, or the sandbox's)."""
        f = self.files
        live = pa.Table.from_batches(f.live_events, schema=EVENT_SCHEMA)
        self._register(con, "_live_mem", live)
        spilled = "".join(f" UNION ALL BY NAME SELECT * FROM read_parquet({_list(p)})"
                          for p in [f.live_event_files] if p)
        con.execute(f"CREATE OR REPLACE VIEW _live_events AS SELECT * FROM _live_mem{spilled}")
        sealed = self._raw(con, "_sealed_events", f.events, EVENT_SCHEMA.append(_DATE), hive=True)
        con.execute(
            f"CREATE OR REPLACE VIEW _events_all AS SELECT * FROM {sealed} UNION ALL BY NAME "
            "SELECT *, CAST(make_timestamp(ts // 1000) AS DATE) AS date FROM _live_events"
        )
        self._register(con, "_live_blob_mem",
                       pa.Table.from_batches(f.live_blobs, schema=BLOB_SCHEMA))
        spilled = "".join(f" UNION ALL BY NAME SELECT * FROM read_parquet({_list(p)})"
                          for p in [f.live_blob_files] if p)
        con.execute(f"CREATE OR REPLACE VIEW _live_blobs AS SELECT * FROM _live_blob_mem"
                    f"{spilled}")
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
        self._register(con, "_live_chain", pa.Table.from_batches(f.live_chain, schema=CHAIN_SCHEMA))
        con.execute(f"CREATE OR REPLACE VIEW _chain_all AS SELECT * FROM {chain} "
                    "UNION ALL BY NAME SELECT * FROM _live_chain")
        self._register(con, "_prices", prices_arrow([]))
        self._define_records(con)
        if con is not self.con:  # the sandbox's: every view, for any query
            self._price(con)
            _public_views(con)

    def _define_records(self, con: duckdb.DuckDBPyConnection) -> None:
        """``_datasets_all`` and ``_experiments_all`` (``recorder.store._records``)."""
        datasets, experiments = self.records = record_files(self.root)
        for name, paths, schema in (("_datasets_all", datasets, DATASET_SCHEMA),
                                    ("_experiments_all", experiments, RESULT_SCHEMA)):
            raw = self._raw(con, f"_sealed{name}", paths, schema, hive=False)
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {raw}")

    def _price(self, con: duckdb.DuckDBPyConnection) -> None:
        """``_prices``: one row per model of the store that has a price (the costs' source);
        the sandbox's user SQL leaves the store's files as they were (no price cache kept)."""
        models = [r[0] for r in con.execute(_MODELS).fetchall()]
        rows = load_prices(self.root).rows(models, save=con is self.con)
        self._register(con, "_prices", prices_arrow(rows))

    def ready(self, query: str) -> str:
        """``query``, once the public views it names exist on the catalog's connection.

        They are made on first use (~30 ms of binding for all ten): a reader that
        only queries the raw ``_*_all`` views never pays for them. They name the
        raw views, which DuckDB binds at query time, so a refresh keeps them.
        """
        if (not self._public or not self._priced) and _PUBLIC.search(query):
            if not self._priced:
                guarded(self, lambda: self._price(self.con))
                self._priced = True
            if not self._public:
                _public_views(self.con)
                self._public = True
        return query

    def _register(self, con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
        """``table`` as ``name`` on ``con``; kept, so a sandbox cursor can hold it too."""
        self._in_memory[name] = table
        con.register(name, table)

    def _attach(self, con: duckdb.DuckDBPyConnection) -> None:
        """The in-memory tables the views read, registered on a cursor of the sandbox."""
        for name, table in self._in_memory.items():
            con.register(name, table)

    def _raw(self, con: duckdb.DuckDBPyConnection, name: str, paths: list[Path],
             schema: pa.Schema, *, hive: bool) -> str:
        if paths:
            return _parquet(paths, hive=hive)
        self._register(con, name, schema.empty_table())
        return name

    # -- querying -------------------------------------------------------------------
    def sql(self, query: str, *, limit: int | None = None,
            timeout: float | None = None) -> duckdb.DuckDBPyRelation:
        """One read-only query over the views, run now, its result as a DuckDB relation
        (``.df()``, ``.pl()``, ``.arrow()``, ``.fetchall()``); at most ``limit`` rows when
        given. It runs in the SQL sandbox (``recorder.store._sandbox``): anything else is
        refused with a one-line :class:`SqlRefused`. A damaged file met on the way is named
        once and left out, as on every read path. ``timeout`` (seconds; default none)
        stops the query at that limit with :class:`SqlTimeout`; Ctrl-C stops it too and
        raises ``KeyboardInterrupt`` (``recorder.store._bounded``); :meth:`interrupt`
        stops it from another thread."""
        if limit is not None and (type(limit) is not int or limit < 0):
            raise ConfigError(f"Store.sql(limit={limit!r}): pass a row count >= 0, or None")
        seconds = check_timeout(timeout, "Store.sql")

        def run() -> duckdb.DuckDBPyRelation:
            sandbox = self._sandboxed()

            def fetch() -> pa.Table:
                relation = sandbox.sql(query)
                return (relation if limit is None else relation.limit(limit)).to_arrow_table()

            table = bounded(fetch, sandbox.interrupt, seconds,
                            fix="pass a larger Store.sql(timeout=…), or None for no limit")
            return sandbox.result(table)

        return guarded(self, run)

    def _sandboxed(self) -> Sandbox:
        if self._sandbox is None:
            f = self.files
            paths = [*f.events, *f.blobs, *f.stats, *f.chain, *f.live_event_files,
                     *f.live_blob_files, *self.records[0], *self.records[1]]
            self._sandbox = Sandbox(self._define, self._attach, paths)
        return self._sandbox

    def interrupt(self) -> None:
        """Stop the query :meth:`sql` runs now (from another thread); it raises
        ``duckdb.InterruptException``."""
        sandbox = self._sandbox
        if sandbox is not None:
            sandbox.interrupt()

    def rows(self, query: str, params: Iterable[object] = ()) -> list[tuple[Any, ...]]:
        """``query`` with ``?`` parameters, as a list of tuples (a damaged file met on the
        way is named once and left out: ``recorder.store._damage``)."""
        values = list(params)
        return guarded(self, lambda: self.con.execute(self.ready(query), values).fetchall())

    def arrow(self, query: str, params: Iterable[object] = ()) -> pa.Table:
        """``query`` with ``?`` parameters, as an Arrow table (damaged files left out)."""
        values = list(params)
        return guarded(self, lambda: self.con.sql(self.ready(query),
                                                  params=values).to_arrow_table())

    def run_ids(self) -> list[str]:
        """Every run id, in the order the runs were made (read from the outlines).

        A UUIDv7 run id carries when it was made (``RandomIds`` stamps the operating
        system's clock), so a run recorded on a test clock still sorts after the runs
        made before it; another id sorts by its first event's time.
        """
        view = outline_view(self)
        return [r[0] for r in self.rows(
            f"SELECT run_id FROM {view} WHERE level = 'run' GROUP BY run_id "
            f"ORDER BY {_MADE_MS}, run_id")]

    def resolve_run(self, ref: str) -> str:
        """A full run id from a full id, a unique prefix, or ``last``
        (:func:`recorder.store._runref.resolve_ref`)."""
        if ref and ref != "last" and self.rows(
                "SELECT 1 FROM _events_all WHERE run_id = ? LIMIT 1", [ref]):
            return ref  # a full id: one pushed-down probe, not the list of every run
        return resolve_ref(ref, self.run_ids(), where=f"the store {str(self.root)!r}")

    def events(self, run_id: str) -> list[Event]:
        """The run's events, rebuilt as typed objects, blob text restored, in seq order.

        Decodes the whole run; :class:`recorder.StoreReader` reads by need.
        """
        from recorder.store._query import EventQuery
        from recorder.store._reader import StoreReader

        return list(StoreReader(self).events(EventQuery(run_id=run_id)))

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        self.con.close()
        self.spill.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
