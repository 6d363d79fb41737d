"""The runs list checked against the record: a cached outline never shows a forged answer.

:func:`list_runs` reads the runs from the per-file outlines, which are
derived data a power loss or an attacker may have changed. For the rows of
a page, :func:`checked_against_record` reads each run's terminal events
from the record itself (a pushed-down probe by run id and type) and shows
the record's answer and status; where the outline disagrees, one warning
names the runs.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import pyarrow as pa

from recorder.store._damage import StoreWarning

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["checked_against_record"]

_BLOB = "try(json_extract_string(payload, '$.final_content.\"$blob\"'))"
_RECORD = f"""
SELECT run_id,
       arg_max(CASE WHEN {_BLOB} IS NULL
                    THEN try(json_extract_string(payload, '$.final_content')) END, seq)
           FILTER (WHERE type = 'run.end') AS answer,
       arg_max({_BLOB}, seq) FILTER (WHERE type = 'run.end') AS answer_blob,
       CASE WHEN count(*) FILTER (WHERE type = 'run.end') > 0 THEN 'complete'
            WHEN count(*) FILTER (WHERE type = 'run.error') > 0 THEN 'failed'
            ELSE 'incomplete' END AS status
FROM _events_all WHERE run_id IN ? AND type IN ('run.end', 'run.error') GROUP BY run_id
"""


def checked_against_record(store: StoreView, table: pa.Table) -> pa.Table:
    """``table`` (rows of the runs list) with ``answer``, ``answer_blob`` and ``status``
    as the record has them; one warning naming the runs whose outline said otherwise."""
    ids = table.column("run_id").to_pylist()
    if not ids:
        return table
    record = {r[0]: r[1:] for r in store.rows(_RECORD, [ids])}
    columns = ("answer", "answer_blob", "status")
    shown = {name: table.column(name).to_pylist() for name in columns}
    wrong: list[str] = []
    for i, run in enumerate(ids):
        truth = record.get(run, (None, None, "incomplete"))
        if tuple(shown[name][i] for name in columns) != truth:
            wrong.append(run)
            for name, value in zip(columns, truth, strict=True):
                shown[name][i] = value
    if not wrong:
        return table
    warnings.warn(
        f"the cached outline disagrees with the record for run {wrong[0]!r}"
        f"{f' and {len(wrong) - 1} more' if len(wrong) > 1 else ''}; showing the record — "
        "run `footprint doctor --quarantine` to rebuild the cache", StoreWarning, stacklevel=3)
    for name in columns:
        at = table.schema.get_field_index(name)
        table = table.set_column(at, name, pa.array(shown[name], table.schema.field(name).type))
    return table
