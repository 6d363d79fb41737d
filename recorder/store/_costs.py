"""Costs from the outlines: each model call as a ``'call'`` outline row, priced by a join.

Every cached outline (``recorder.store._outline``) holds one ``'call'`` row per
model call of its file: the ``llm.start`` paired with the ``llm.end`` of the
same rank in the run (as the ``llm_calls`` view pairs them), its model, its
provider and its token counts. A run's cost is then a join of those rows with
the price table (``recorder.store._prices``) under :data:`CALL_COST`, not a
scan of every event's payload. Each outline also carries its :class:`CallFacts`
(in its Parquet metadata): the models to price and the runs it holds without
their ``run.start``. Such a run has events in another file (or in a file and
the live segments), where a call may start that is answered here, so its calls
are paired anew from its own events.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from recorder.store._base import CallFacts
from recorder.store._views import CALL_COST, tried

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from recorder.store._base import StoreView

__all__ = ["CALL_PRICES", "CALL_ROWS", "FACTS_KEY", "CallFacts", "call_facts", "priced_calls",
           "with_call_facts"]

_TOKENS = "TRY_CAST(try(json_extract_string(payload, '$.{0}')) AS BIGINT) AS {0}"
CALL_ROWS = tried(f"""
SELECT 'call' AS level, s.run_id, s.seq AS first_seq, e.seq AS end_seq, s.provider,
       coalesce(e.model, s.model) AS model, e.input_tokens, e.output_tokens,
       e.cache_read_tokens, e.cache_write_tokens
FROM (SELECT run_id, seq, model, try(json_extract_string(payload, '$.provider')) AS provider,
             row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
      FROM {{source}} WHERE type = 'llm.start') s
LEFT JOIN (SELECT run_id, seq, model, {_TOKENS.format('input_tokens')},
                  {_TOKENS.format('output_tokens')}, {_TOKENS.format('cache_read_tokens')},
                  {_TOKENS.format('cache_write_tokens')},
                  row_number() OVER (PARTITION BY run_id ORDER BY seq) AS k
           FROM {{source}} WHERE type = 'llm.end') e ON e.run_id = s.run_id AND e.k = s.k
""")
"""The model calls of ``{source}`` (any relation with the event columns), one row each:
``first_seq`` its ``llm.start``, ``end_seq`` its ``llm.end`` (``NULL``: never answered)."""


FACTS_KEY = b"footprint.calls"
"""The key of a cached outline's Parquet metadata that holds its :class:`CallFacts`."""
_FACTS = """
SELECT (SELECT list(DISTINCT model) FROM _outline_facts WHERE level = 'call'),
       (SELECT list(DISTINCT run_id) FROM _outline_facts WHERE level = 'run' AND run_id NOT IN (
            SELECT run_id FROM _outline_facts WHERE level = 'type' AND type = 'run.start'))
"""


def with_call_facts(con: duckdb.DuckDBPyConnection, table: pa.Table) -> pa.Table:
    """Outline ``table`` with its :class:`CallFacts` in its schema's metadata."""
    con.register("_outline_facts", table)
    try:
        models, partial = con.execute(_FACTS).fetchall()[0]
    finally:
        con.unregister("_outline_facts")
    text = json.dumps({"models": sorted(m for m in models or () if m is not None),
                       "partial": sorted(partial or ())})
    return table.replace_schema_metadata({FACTS_KEY: text.encode()})


def call_facts(metadata: dict[bytes, bytes] | None) -> CallFacts | None:
    """The :class:`CallFacts` an outline's metadata holds (``None``: it holds none)."""
    try:
        found = json.loads((metadata or {})[FACTS_KEY])
        return CallFacts(frozenset(map(str, found["models"])),
                         frozenset(map(str, found["partial"])))
    except (KeyError, TypeError, ValueError):
        return None


CALL_PRICES = "_call_prices"
"""The registered price table the call rows join (the models of the call rows only)."""

_PRICED = f"""
SELECT c.run_id, c.end_seq, c.model, c.input_tokens, c.output_tokens, {CALL_COST} AS cost_usd
FROM ({{calls}}) c LEFT JOIN {CALL_PRICES} p ON p.model = c.model"""


def priced_calls(store: StoreView, view: str, picked: str | None = None
                 ) -> tuple[str, list[object]]:
    """A query of every call of the runs of ``picked`` (a relation with ``run_id``; ``None``:
    every run):
    ``run_id``, ``end_seq``, ``model``, ``input_tokens``, ``output_tokens`` and ``cost_usd``
    (``NULL`` when its model is unpriced or it was never answered), and its parameters;
    registers the price table it joins."""
    from recorder.store._prices import load_prices, prices_arrow

    facts = store.outlines.calls
    models, split = list(facts.models), sorted(facts.partial)
    events = ("(SELECT * FROM _events_all WHERE type IN ('llm.start', 'llm.end') "
              "AND run_id IN ?)")
    if split:  # a call answered in another file may name a model no call row names
        models.extend(m for (m,) in store.rows(
            f"SELECT DISTINCT model FROM {events} WHERE model IS NOT NULL", [split]))
    rows = load_prices(store.root).rows(models)
    store.con.register(CALL_PRICES, prices_arrow(rows))
    calls = f"SELECT * FROM {view} WHERE level = 'call'"
    if picked is not None:
        calls += f" AND run_id IN (SELECT run_id FROM {picked})"
    if not split:
        return _PRICED.format(calls=calls), []
    calls = (f"{calls} AND run_id NOT IN ? UNION ALL BY NAME "
             f"{CALL_ROWS.format(source=events)}")
    return _PRICED.format(calls=calls), [split, split, split]
