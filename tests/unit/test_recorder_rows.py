"""The columnar row builder against the reference spellings: envelope bytes, payloads,
hot columns, blobs and the chain link, for any event and any mix of classes."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import events

from footprint.events import (
    ContextInjected,
    Event,
    EventBase,
    RunStart,
    ToolEnd,
    payload_of,
    to_record,
)
from recorder._chain import (
    ENVELOPE_ORDER,
    GENESIS,
    LOCATOR_BYTES,
    envelope_canonical,
    envelope_json,
    link_hash,
    record_canonical,
)
from recorder._hot import HOT_FIELDS, hot_fields
from recorder._rows import BLOB_KEY, RowBuilder
from recorder._writer import FileWorker

_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
_INT = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_ENVELOPE = st.fixed_dictionaries({
    name: (_INT if name in ("schema_version", "seq", "ts", "turn", "iteration") else _TEXT)
    | st.none()
    for name in ENVELOPE_ORDER
})


def _rows(evs: list[Any], **kw: Any) -> tuple[RowBuilder, list[dict[str, Any]], list[Any]]:
    builder = RowBuilder(**kw)
    builder.add_all(evs)
    batches, blobs = builder.take()
    rows = [row for batch in batches for row in batch.to_pylist()]
    return builder, rows, [] if blobs is None else blobs.to_pylist()


@given(env=_ENVELOPE)
def test_given_any_envelope_when_encoded_fast_then_bytes_equal_the_reference(
    env: dict[str, Any],
) -> None:
    fast = envelope_json(tuple(env[k] for k in ENVELOPE_ORDER))
    assert fast == envelope_canonical(env).encode("utf-8")
    assert json.loads(fast) == [env[k] for k in ENVELOPE_ORDER]


@given(event=events())
@settings(max_examples=150)
def test_given_any_event_when_built_then_the_row_matches_the_reference_record(
    event: Event,
) -> None:
    _, (row,), _ = _rows([event], blob_min_chars=10**9)
    record = to_record(event)
    assert {k: row[k] for k in ENVELOPE_ORDER} == {k: record[k] for k in ENVELOPE_ORDER}
    assert json.loads(row["payload"]) == json.loads(json.dumps(payload_of(event)))
    assert {k: row[k] for k in HOT_FIELDS} == hot_fields(record)
    admitted = record.get("admitted_by")
    assert row["admitted_by"] == (admitted if isinstance(admitted, int) else None)
    top = list(json.loads(row["payload"]))
    assert top == sorted(top)


@given(stream=st.lists(events(), min_size=1, max_size=40))
@settings(max_examples=60)
def test_given_a_mixed_batch_when_converted_then_emit_order_holds_and_every_link_recomputes(
    stream: list[Event],
) -> None:
    builder, rows, _ = _rows(stream)
    assert [(r["run_id"], r["seq"], r["type"]) for r in rows] == [
        (e.run_id, e.seq, e.type) for e in stream]
    heads: dict[str, bytes] = {}
    for row in rows:
        prev = heads.get(row["run_id"], GENESIS)
        full = link_hash(prev, record_canonical(envelope_canonical(row), row["payload"]))
        assert (row["prev_hash"], row["hash"]) == (prev[:LOCATOR_BYTES], full[:LOCATOR_BYTES])
        heads[row["run_id"]] = full
    assert builder.heads == heads


@dataclass(frozen=True, slots=True, kw_only=True)
class _Note(EventBase):
    """The smallest payload there is: one text, so the blob gate's bound is exact."""

    type: Literal["test.note"] = "test.note"
    text: str


@given(extra=st.integers(-3, 3), limit=st.integers(20, 400), lean=st.booleans(),
       char=st.sampled_from(["x", "é", "\n"]))
def test_given_texts_around_the_blob_limit_when_built_then_only_long_ones_become_blobs(
    extra: int, limit: int, lean: bool, char: str,
) -> None:
    text = char * (limit + extra)
    event: EventBase = (
        _Note(run_id="r", seq=0, ts=1, text=text) if lean
        else ToolEnd(run_id="r", seq=0, ts=1, tool_call_id="c", tool_name="t", result=text))
    _, (row,), blobs = _rows([event], blob_min_chars=limit)
    stored = json.loads(row["payload"])["text" if lean else "result"]
    if extra >= 0:
        assert stored == {BLOB_KEY: blobs[0]["hash"], "chars": len(text)}
        assert blobs[0]["text"] == text
    else:
        assert (stored, blobs) == (text, [])


def test_given_a_float_seq_when_taken_then_it_refuses_and_no_chain_moves() -> None:
    builder = RowBuilder()
    builder.add(RunStart(run_id="r", seq=0, ts=1, user_message="q"))
    builder.take()
    before = dict(builder.heads)
    builder.add(RunStart(run_id="r", seq=1.5, ts=2, user_message="q"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="neither str, int nor None"):
        builder.take()
    assert builder.heads == before


def test_given_an_int_beyond_64_bits_when_built_then_the_reference_path_spells_it(
) -> None:
    event = ContextInjected(run_id="r", seq=0, ts=1, slot="system-prompt", source="fact",
                            content_hash="h", content_summary="s", reason="why",
                            admitted_via="always", retrieval_score=2**70)  # beyond orjson
    _, (row,), _ = _rows([event])
    assert json.loads(row["payload"])["retrieval_score"] == 2**70


def test_given_jobs_when_one_fails_then_all_run_in_order_and_the_failure_surfaces_once() -> None:
    worker = FileWorker("test-worker", depth=16)
    seen: list[int] = []
    gate = threading.Event()

    def job(k: int) -> None:
        if k == 0:
            gate.wait(5)  # everything is queued before any job finishes
        seen.append(k)
        if k == 3:
            raise OSError("disk full")

    for k in range(8):
        worker.submit(lambda k=k: job(k))  # type: ignore[misc]
    gate.set()
    with pytest.raises(OSError, match="disk full"):
        worker.drain()
    worker.submit(lambda: job(8))
    worker.drain()  # raised once, then clear
    worker.close()
    assert seen == list(range(9))
