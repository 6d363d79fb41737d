"""The SQL sandbox: user SQL reads the store's views and nothing else.

``Store.sql`` (and so ``footprint sql`` and the TUI console) runs user SQL
on a connection of its own, built like this:

1. a fresh in-memory DuckDB with extension autoload and autoinstall off and
   Python replacement scans off (no query can reach a Python variable);
2. ``allowed_paths`` set to exactly the store's sealed files, then the
   store's views created (their ``read_parquet`` lists resolved now);
3. ``enable_external_access = false`` (no other file, no network, no
   extension) and ``lock_configuration = true`` (no ``SET`` undoes it).

Before a query runs, DuckDB's own parser classifies it
(``extract_statements``): exactly one statement, and a read-only one
(``SELECT``, ``WITH``, ``FROM``, ``VALUES``, ``DESCRIBE``, ``SHOW``,
``SUMMARIZE``). Its syntax tree (``json_serialize_sql``) is then walked:
a table function outside a short list of harmless ones (``read_blob``,
``read_parquet``, ``glob``, ``query``, …) or a table named like a file is
refused, so even the store's own files are reached only through the views.
Every refusal is a one-line :class:`SqlRefused`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from footprint._errors import ConfigError

__all__ = ["VIEW_NAMES", "Sandbox", "SqlRefused"]

VIEW_NAMES = ("events, runs, decisions, injections, prices, llm_calls, tool_calls, rejections, "
              "escalations, route_conflicts, run_sources, scores, blobs, datasets, "
              "dataset_items, experiments, experiment_results")

_HINT = f"only one read-only query over the store's views runs here ({VIEW_NAMES})"

# statement type -> why it is refused
_WHY = {
    "COPY": "COPY reads or writes files",
    "EXPORT": "EXPORT DATABASE writes files",
    "ATTACH": "ATTACH opens another database",
    "DETACH": "DETACH changes the attached databases",
    "LOAD": "INSTALL/LOAD add extensions",
    "SET": "SET/RESET/USE change the session",
    "VARIABLE_SET": "SET VARIABLE changes the session",
    "PRAGMA": "PRAGMA changes or inspects the session",
    "CALL": "CALL runs procedures",
    "CREATE": "CREATE changes the catalog",
    "DROP": "DROP changes the catalog",
    "ALTER": "ALTER changes the catalog",
    "INSERT": "INSERT writes data",
    "UPDATE": "UPDATE writes data",
    "DELETE": "DELETE writes data",
    "EXPLAIN": "EXPLAIN can execute what it explains",
}

# table functions that read nothing but their arguments or the in-memory catalog
_SAFE_TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "json_each", "json_tree", "pragma_table_info",
    "pragma_show", "pragma_version", "pragma_database_size",
})
_SAFE_PREFIXES = ("duckdb_",)  # catalog introspection: duckdb_views(), duckdb_columns(), …


class SqlRefused(ConfigError):
    """A query the SQL sandbox does not run (a write, a setting, a file, …)."""


def _refuse(why: str) -> SqlRefused:
    return SqlRefused(f"refused: {why}; {_HINT}")


def _nodes(tree: object) -> Iterator[dict[str, Any]]:
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


def _check_tree(tree: dict[str, Any]) -> None:
    for node in _nodes(tree):
        kind = node.get("type")
        if kind == "TABLE_FUNCTION":
            name = str((node.get("function") or {}).get("function_name", "")).lower()
            if name not in _SAFE_TABLE_FUNCTIONS and not name.startswith(_SAFE_PREFIXES):
                raise _refuse(f"{name}() reaches outside the store's views")
        elif kind == "BASE_TABLE" or (kind == "SHOW_REF" and node.get("show_type") == "SHOW"):
            name = str(node.get("table_name", ""))
            if name and not name.isidentifier():
                raise _refuse(f"{name!r} is not a view of this store (files are not queryable)")


class Sandbox:
    """A locked-down DuckDB connection holding the store's views (see the module doc)."""

    def __init__(self, define: Callable[[duckdb.DuckDBPyConnection], None],
                 attach: Callable[[duckdb.DuckDBPyConnection], None],
                 paths: Sequence[Path]) -> None:
        self._attach = attach
        self._running: duckdb.DuckDBPyConnection | None = None
        """The cursor of the query :meth:`sql` handed out last (what :meth:`interrupt` stops)."""
        self.con = duckdb.connect(config={
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "python_enable_replacements": False,
        })
        try:
            allowed = ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths)
            self.con.execute(f"SET allowed_paths = [{allowed}]")
            define(self.con)
            self.con.execute("SET enable_external_access = false")
            self.con.execute("SET lock_configuration = true")
        except BaseException:
            self.con.close()
            raise

    def check(self, query: str) -> None:
        """Raise :class:`SqlRefused` unless ``query`` is one read-only statement."""
        if not isinstance(query, str) or not query.strip():
            raise _refuse(f"the query is empty ({query!r}); e.g. SELECT * FROM runs")
        try:
            kinds = [s.type.name for s in self.con.extract_statements(query)]
        except ValueError as exc:  # a statement type the Python client does not know
            raise _refuse(f"unsupported statement ({exc})") from exc
        if not kinds:
            raise _refuse("the query holds no statement; e.g. SELECT * FROM runs")
        if len(kinds) > 1:
            raise _refuse(f"{len(kinds)} statements given; send one at a time")
        kind = kinds[0]
        if kind != "SELECT":
            raise _refuse(_WHY.get(kind, f"{kind} statements are not read-only queries"))
        ((text,),) = self.con.execute("SELECT json_serialize_sql(?)", [query]).fetchall()
        tree = json.loads(text)
        if tree.get("error"):
            raise _refuse(f"the query could not be checked ({tree.get('error_message', '')})")
        _check_tree(tree)

    def sql(self, query: str) -> duckdb.DuckDBPyRelation:
        """The relation of one read-only ``query``, or :class:`SqlRefused`.

        Each relation runs on a cursor of its own (the same database: the views and the
        locked settings; ``attach`` registers the in-memory tables they read): a result
        left open (``.arrow()`` streams, ``.fetchone()`` stops early) never holds up the
        next query.
        """
        self.check(query)
        cursor = self._running = self._cursor()
        relation = cursor.sql(query)
        if relation is None:  # pragma: no cover - a SELECT always yields a relation
            raise _refuse("the query produced no result")
        return relation

    def result(self, table: pa.Table) -> duckdb.DuckDBPyRelation:
        """A query's rows, read already, as a relation on a cursor of their own."""
        return self._cursor().from_arrow(table)

    def interrupt(self) -> None:
        """Stop the query running on the last cursor :meth:`sql` handed out (from any
        thread); it raises ``duckdb.InterruptException``."""
        running = self._running
        if running is not None:
            running.interrupt()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cursor = self.con.cursor()
        self._attach(cursor)
        return cursor

    def close(self) -> None:
        self.con.close()
