"""Poison events mixed into other runs' batches: every other event is stored, each bad
value is kept in its documented escaped form, and an event that cannot be stored at all is
dropped alone — counted on its run (``runs.dropped``), named in the log."""

from __future__ import annotations

import datetime
import decimal
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from footprint.events import Event, RunEnd, RunStart, ToolEnd, ToolStart
from recorder import ParquetSink, Recorder, Redactor, open_store, verify_run

T0 = 1_700_000_000_000_000_000


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque thing>"


def _deep(levels: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(levels):
        node.append([])
        node = node[0]
    return root


POISONS: dict[str, tuple[object, object]] = {
    # kind: (value put in the payload, what the store keeps for it)
    "surrogate": ("bad \ud800 text", "bad \\ud800 text"),
    "decimal": (decimal.Decimal("1.10"), {"$nonjson": "Decimal", "repr": "Decimal('1.10')"}),
    "datetime": (datetime.date(2024, 1, 2), {"$nonjson": "date",
                                             "repr": "datetime.date(2024, 1, 2)"}),
    "bytes": (b"\x00\xff", {"$nonjson": "bytes", "repr": "b'\\x00\\xff'"}),
    "set": ({7}, {"$nonjson": "set", "repr": "{7}"}),
    "object": (_Opaque(), {"$nonjson": "_Opaque", "repr": "<opaque thing>"}),
}


def _clean_run(run_id: str, n: int) -> list[Event]:
    body: list[Event] = [RunStart(run_id=run_id, seq=0, ts=T0, user_message="hello")]
    body += [ToolEnd(run_id=run_id, seq=i, ts=T0 + i, tool_call_id=f"c{i}", tool_name="lookup",
                     result=f"result {i}") for i in range(1, n - 1)]
    return [*body, RunEnd(run_id=run_id, seq=n - 1, ts=T0 + n, final_content="done")]


def _mixed() -> tuple[list[Event], dict[str, list[Event]]]:
    """Eight clean runs interleaved event by event with one poisoned run per kind."""
    clean = {f"clean-{k}": _clean_run(f"clean-{k}", 300) for k in range(8)}
    poisoned: dict[str, list[Event]] = {}
    for kind, (value, _) in POISONS.items():
        run = f"poison-{kind}"
        poisoned[run] = [
            RunStart(run_id=run, seq=0, ts=T0, user_message="hi"),
            ToolStart(run_id=run, seq=1, ts=T0 + 1, tool_name="fetch", tool_call_id="c1",
                      args={"value": value}),
            ToolEnd(run_id=run, seq=2, ts=T0 + 2, tool_call_id="c1", tool_name="fetch",
                    result=value if kind == "surrogate" else "ok"),  # type: ignore[arg-type]
            RunEnd(run_id=run, seq=3, ts=T0 + 3, final_content="done"),
        ]
    deep = "poison-deep"
    poisoned[deep] = [RunStart(run_id=deep, seq=0, ts=T0, user_message="hi"),
                      ToolStart(run_id=deep, seq=1, ts=T0 + 1, tool_name="fetch",
                                tool_call_id="c1", args={"tree": _deep(5000)}),
                      RunEnd(run_id=deep, seq=2, ts=T0 + 2, final_content="done")]
    unstorable = "poison-envelope"  # a seq that is not an integer: no escaped form exists
    poisoned[unstorable] = [RunStart(run_id=unstorable, seq=0, ts=T0, user_message="hi"),
                            ToolEnd(run_id=unstorable, seq=1.5, ts=T0 + 1,  # type: ignore[arg-type]
                                    tool_call_id="c1", tool_name="fetch", result="ok"),
                            RunEnd(run_id=unstorable, seq=2, ts=T0 + 2, final_content="done")]
    streams = [*clean.values(), *poisoned.values()]
    mixed = [s[i] for i in range(max(map(len, streams))) for s in streams if i < len(s)]
    return mixed, {**clean, **poisoned}


@pytest.mark.parametrize("processors", [[], [Redactor()]], ids=["direct", "redacted"])
def test_given_poison_events_mixed_into_other_runs_when_recorded_then_only_the_bad_one_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, processors: list[Redactor],
) -> None:
    mixed, runs = _mixed()
    root = tmp_path / "store"
    with caplog.at_level(logging.WARNING, logger="recorder"), \
            Recorder([ParquetSink(root)], processors, batch_size=8192) as rec:
        for event in mixed:
            rec.emit(event)
    store = open_store(root)
    counts = {r: (n, dropped, status) for r, n, dropped, status in store.rows(
        "SELECT run_id, events, dropped, status FROM runs")}
    for run_id, events in runs.items():
        lost = 1 if run_id == "poison-envelope" else 0
        assert counts[run_id] == (len(events) - lost, lost, "complete"), run_id
        result = verify_run(store, run_id)
        assert result.valid, (run_id, result.summary())
        assert result.complete is (lost == 0)
    assert "seq 1.5 of run 'poison-envelope'" in caplog.text  # named
    assert store.rows("SELECT unencodable FROM runs WHERE run_id = 'poison-envelope'") == [(1,)]
    for kind, (_, kept) in POISONS.items():
        (payload,) = store.rows("SELECT payload FROM events WHERE run_id = ? AND seq = 1",
                                [f"poison-{kind}"])[0]
        assert json.loads(payload)["args"] == {"value": kept}, kind
    (tree,) = store.rows("SELECT payload FROM events WHERE run_id = 'poison-deep' AND seq = 1")[0]
    assert '"$nonjson":"too deep"' in tree
    assert store.events("poison-surrogate")[2].result == "bad \\ud800 text"  # type: ignore[union-attr]
    # every view still reads the poisoned rows
    assert store.rows("SELECT count(*) FROM tool_calls WHERE run_id LIKE 'poison-%'")[0][0] == 7
