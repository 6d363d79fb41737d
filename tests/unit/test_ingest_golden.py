"""The store's rows (and each run's final chain head) for a fixed set of OTLP batches,
compared with a golden file made by the mapper and writer as they stood before the ingest
fast path (``golden/ingest_rows.json``).

Regenerate only on purpose (a deliberate change of what is stored):
``python tests/unit/test_ingest_golden.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from otlp_build import agent_trace, logs_request, trace_request  # noqa: E402

from recorder.ingest import Intake  # noqa: E402

GOLDEN = HERE / "golden" / "ingest_rows.json"
_LONG = ("You are the support desk of Kettle & Co. Refund policy: refunds inside 30 days "
         "of delivery, never for opened items. ") * 4


def _conversation(first: int) -> list[dict[str, Any]]:
    """Two traces of one conversation (``gen_ai.conversation.id``)."""
    spans = agent_trace(first, calls=2) + agent_trace(first + 1, calls=3)
    for s in spans:
        s["attributes"] = {**s["attributes"], "gen_ai.conversation.id": "conv-1"}
    return spans


def _failed(trace: int) -> list[dict[str, Any]]:
    spans = agent_trace(trace, calls=2)
    tool = next(s for s in spans if s["name"].startswith("execute_tool"))
    tool.update(status=2, message="lookup timed out")
    spans[-1].update(status=2, message="agent gave up")
    spans[0]["dropped"] = 3
    return spans


def bodies() -> list[tuple[bytes, str]]:
    """The fixed batches: every dialect, long system text (blobs), a conversation, errors,
    content sent as log records, and a trace whose root never comes."""
    spans = [s for t in range(1, 5) for s in agent_trace(t, calls=2, system=_LONG)]
    spans += agent_trace(11, calls=3, dialect="openinference")
    spans += agent_trace(12, calls=2, dialect="legacy-indexed", system=_LONG)
    spans += _conversation(21) + _failed(31)
    rootless = [s for s in agent_trace(41, calls=2) if s["name"] != "invoke_agent desk"]
    first = agent_trace(51, calls=1)
    chat = first[0]
    chat["attributes"] = {k: v for k, v in chat["attributes"].items()
                          if k != "gen_ai.input.messages"}
    logs = logs_request([{"trace_id": chat["trace_id"], "span_id": chat["span_id"],
                          "event_name": "gen_ai.user.message", "body": {"content": "hi"}}])
    return [(logs.SerializeToString(), "logs"),
            (trace_request(spans[:40]).SerializeToString(), "traces"),
            (trace_request(spans[40:] + rootless).SerializeToString(), "traces"),
            (trace_request(first, scope="other").SerializeToString(), "traces")]


def _rows(table: pa.Table, key: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: tuple(str(r[k]) for k in key))


def stored_rows(store: Path) -> dict[str, list[dict[str, Any]]]:
    """The events and blobs a store holds, in a fixed order (file names left out)."""
    def read(folder: str) -> pa.Table:
        return pa.concat_tables(pq.read_table(p) for p in sorted(
            (store / folder).rglob("*.parquet")))
    events = read("events").drop_columns(
        [c for c in ("date",) if c in read("events").column_names])
    blobs = read("blobs")
    final: dict[str, tuple[int, str]] = {}  # each run's head after its last record
    for row in read("chain").to_pylist():
        if row["last_seq"] >= final.get(row["run_id"], (-1, ""))[0]:
            final[row["run_id"]] = (row["last_seq"], row["head"].hex())
    return {"events": _rows(events, ("run_id", "seq")),
            "blobs": _rows(blobs.select(["hash", "chars", "text"]), ("hash",)),
            "heads": [{"run_id": r, "last_seq": s, "head": h}
                      for r, (s, h) in sorted(final.items())]}


def ingest(store: Path) -> dict[str, list[dict[str, Any]]]:
    with Intake(store, keep_raw=False) as intake:
        for body, signal in bodies():
            intake.take(body, signal=signal, fmt="pb")  # type: ignore[arg-type]
    return stored_rows(store)


def test_given_fixed_batches_when_ingested_then_the_stored_rows_match_the_golden_file(
        tmp_path: Path) -> None:
    got = json.loads(json.dumps(ingest(tmp_path / "store"), sort_keys=True))
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert len(got["events"]) == len(want["events"])
    for g, w in zip(got["events"], want["events"], strict=True):
        assert g == w
    assert got["blobs"] == want["blobs"]
    assert got["heads"] == want["heads"]


if __name__ == "__main__" and "--write" in sys.argv:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        rows = ingest(Path(tmp) / "store")
    GOLDEN.write_text(json.dumps(rows, sort_keys=True, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({len(rows['events'])} events, {len(rows['blobs'])} blobs)")
