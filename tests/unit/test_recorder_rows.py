"""The columnar row builder against the reference spellings: envelope bytes, payloads,
hot columns, blobs, row checks and heads, for any event and any mix of classes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import events, json_values

from footprint.events import (
    ENVELOPE_FIELDS,
    ContextEvaluated,
    ContextInjected,
    CursorMove,
    Event,
    EventBase,
    LLMEnd,
    RunStart,
    SkillActivated,
    ToolEnd,
    ToolStart,
    payload_of,
    to_record,
)
from recorder.write._chain import (
    ENVELOPE_ORDER,
    envelope_canonical,
    extend_checks,
    frame,
    record_canonical,
    row_check,
)
from recorder.write._extract import BlobSink, dumps_each, plan_for
from recorder.write._hot import HOT_FIELDS, hot_fields
from recorder.write._link import RunHeads, _framed_eagerly, framed_records
from recorder.write._rows import BLOB_KEY, EVENT_SCHEMA, RowBuilder
from recorder.write._writer import FileWorker

_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
_INT = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
_ENVELOPE = st.fixed_dictionaries({
    name: (_INT32 if name == "schema_version" else
           _INT if name in ("seq", "ts", "turn", "iteration") else _TEXT) | st.none()
    for name in ENVELOPE_ORDER
})


def _rows(evs: list[Any], **kw: Any) -> tuple[RowBuilder, list[dict[str, Any]], list[Any]]:
    builder = RowBuilder(**kw)
    builder.add_all(evs)
    batches, blobs = builder.take()
    rows = [row for batch in batches for row in batch.to_pylist()]
    return builder, rows, [] if blobs is None else blobs.to_pylist()


def _table(envs: list[dict[str, Any]], payloads: list[str]) -> pa.Table:
    """Rows in the store schema from envelope dicts and payload texts (other columns null)."""
    columns = {name: [env[name] for env in envs] for name in ENVELOPE_ORDER}
    columns["payload"] = payloads
    columns["prev_check"] = columns["row_check"] = [0] * len(envs)
    return pa.Table.from_pydict(
        {f.name: columns.get(f.name, [None] * len(envs)) for f in EVENT_SCHEMA},
        schema=EVENT_SCHEMA)


@given(envs=st.lists(_ENVELOPE, min_size=1, max_size=8), data=st.data())
@settings(max_examples=150)
def test_given_any_envelopes_when_framed_columnwise_then_bytes_equal_the_reference(
    envs: list[dict[str, Any]], data: st.DataObject,
) -> None:
    payloads = [data.draw(_TEXT) for _ in envs]
    table = _table(envs, payloads)
    framed = framed_records(table)
    assert framed.equals(_framed_eagerly(table.to_batches()[0]))
    for k, env in enumerate(envs):
        canonical = record_canonical(envelope_canonical(env), payloads[k])
        assert framed[k].as_py().encode("utf-8") == frame(canonical)
        assert json.loads(envelope_canonical(env)) == [env[n] for n in ENVELOPE_ORDER]


@given(parts=st.lists(st.lists(_ENVELOPE, min_size=1, max_size=4), min_size=2, max_size=4),
       data=st.data())
@settings(max_examples=100)
def test_given_envelopes_in_several_chunks_when_framed_then_each_row_equals_the_reference(
    parts: list[list[dict[str, Any]]], data: st.DataObject,
) -> None:
    """An export's table has one chunk per batch, each with its own nulls and escapes."""
    chunks = [_table(envs, [data.draw(_TEXT) for _ in envs]) for envs in parts]
    table = pa.concat_tables(chunks)
    framed = framed_records(table).to_pylist()
    expected = [frame(record_canonical(envelope_canonical(env), payload)).decode("utf-8")
                for chunk, envs in zip(chunks, parts, strict=True)
                for env, payload in zip(envs, chunk.column("payload").to_pylist(), strict=True)]
    assert framed == expected


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


@given(stream=st.lists(events(), min_size=1, max_size=12))
@settings(max_examples=100)
def test_given_any_events_when_payloads_are_built_inline_then_bytes_equal_the_field_dict_dump(
    stream: list[Event],
) -> None:
    """Nested dataclasses spelled inside the compiled builder give the bytes the plain
    field dict gives through ``orjson`` and its ``default`` (the spelling before)."""
    for event in stream:
        plan = plan_for(type(event))
        names = sorted(f.name for f in dataclasses.fields(event)
                       if f.name not in ENVELOPE_FIELDS)
        fields = {name: getattr(event, name) for name in names}
        (built,) = plan.payloads([event], BlobSink(10**9, 10))
        try:
            expected = plan.dumps(fields)
        except (orjson.JSONEncodeError, TypeError):  # the reference path then spells it
            continue
        assert built == expected


@given(stream=st.lists(events(), min_size=1, max_size=40))
@settings(max_examples=60)
def test_given_a_mixed_batch_when_converted_then_emit_order_holds_and_every_check_recomputes(
    stream: list[Event],
) -> None:
    builder, rows, _ = _rows(stream)
    assert [(r["run_id"], r["seq"], r["type"]) for r in rows] == [
        (e.run_id, e.seq, e.type) for e in stream]
    assert builder.checks == _walk_checks(rows)
    assert builder.last_runs == [e.run_id for e in stream]


def _walk_checks(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Every row's ``prev_check``/``row_check`` recomputed with the reference, run by run."""
    checks: dict[str, int] = {}
    for row in rows:
        prev = checks.get(row["run_id"], 0)
        assert row["prev_check"] == prev
        checks[row["run_id"]] = row_check(row["payload"])
        assert row["row_check"] == checks[row["run_id"]]
    return checks


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


def test_given_a_float_seq_when_taken_then_it_alone_is_rejected_and_no_chain_moves(
    caplog: pytest.LogCaptureFixture,
) -> None:
    builder = RowBuilder()
    builder.add(RunStart(run_id="r", seq=0, ts=1, user_message="q"))
    builder.take()
    before = dict(builder.checks)
    builder.add(RunStart(run_id="r", seq=1.5, ts=2, user_message="q"))  # type: ignore[arg-type]
    with caplog.at_level("WARNING", logger="recorder"):
        batches, _ = builder.take()
    assert sum(b.num_rows for b in batches) == 0
    assert builder.checks == before
    assert builder.rejected == {"r": 1}
    assert "seq 1.5 of run 'r'" in caplog.text and "neither str, int nor None" in caplog.text


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


def test_given_a_busy_file_thread_when_jobs_queue_behind_it_then_backlog_counts_them() -> None:
    """What the store writer reads to choose ``sleep(0)`` over ``sched_yield``."""
    worker = FileWorker("test-backlog", depth=8)
    started, gate = threading.Event(), threading.Event()

    def first() -> None:
        started.set()
        gate.wait(5)

    worker.submit(first)
    started.wait(5)
    for _ in range(3):
        worker.submit(lambda: None)
    waiting = worker.backlog()
    gate.set()
    worker.drain()
    worker.close()
    assert (waiting, worker.backlog()) == (3, 0)


def _assert_rows_match_the_reference(stream: Sequence[Event], rows: list[dict[str, Any]],
                                     blobs: list[dict[str, Any]]) -> dict[str, int]:
    """Every row against ``to_record``/``payload_of`` (blobs resolved) and every row check
    recomputed from the stored columns; returns the checks the walk ends on."""
    texts = {blob["hash"]: blob["text"] for blob in blobs}
    assert len(rows) == len(stream)
    for event, row in zip(stream, rows, strict=True):
        record = to_record(event)
        assert {k: row[k] for k in ENVELOPE_ORDER} == {k: record[k] for k in ENVELOPE_ORDER}
        stored = json.loads(row["payload"])
        resolved = {k: texts[v[BLOB_KEY]] if isinstance(v, dict) and BLOB_KEY in v else v
                    for k, v in stored.items()}
        assert resolved == json.loads(json.dumps(payload_of(event)))
        assert {k: row[k] for k in HOT_FIELDS} == hot_fields(record)
    return _walk_checks(rows)


def _varied(k: int) -> Event:
    """Seven classes in an irregular order, two runs interleaved in stretches, some long text."""
    run, seq = f"run-{(k // 37) % 2}", k
    long = "é\u2028\x01" * (100 + k % 7) if k % 11 == 0 else "ok"
    choice = (k * 7) % 9
    if choice == 0:
        return ContextInjected(run_id=run, seq=seq, ts=k, slot="system-prompt", source="fact",
                               content_hash=f"{k:x}", content_summary="s", reason=long,
                               admitted_via="always", injection_id=f"f-{k}", admitted_by=k - 1)
    if choice == 1:
        return LLMEnd(run_id=run, seq=seq, ts=k, content=long, response_hash="h",
                      step_id=f"llm#{k}")
    if choice in (2, 3):
        return ToolStart(run_id=run, seq=seq, ts=k, tool_name="lookup", tool_call_id=f"c{k}",
                         args={"order": k, "nested": {"z": 1, "a": [long[:5]]}})
    if choice == 4:
        return ToolEnd(run_id=run, seq=seq, ts=k, tool_call_id=f"c{k}", tool_name="lookup",
                       result=long)
    if choice == 5:
        return SkillActivated(run_id=run, seq=seq, ts=k, skill_id="triage", reason="route")
    if choice == 6:
        return ContextEvaluated(run_id=run, seq=seq, ts=k, iteration=k, active_count=1,
                                skipped_count=0, evaluated_total=1, active_ids=("a",),
                                cursor_move=CursorMove(by="route", from_skill="a", to="b"))
    return RunStart(run_id=run, seq=seq, ts=k, user_message=long)


def test_given_a_long_mixed_stream_with_blobs_when_taken_in_two_parts_then_rows_match_the_reference(
) -> None:
    stream = [_varied(k) for k in range(2600)]  # several orjson rounds per class, two chunks
    builder = RowBuilder(blob_min_chars=200)
    rows: list[dict[str, Any]] = []
    blobs: list[dict[str, Any]] = []
    for part in (stream[:900], stream[900:]):
        builder.add_all(part)
        batches, found = builder.take()
        rows += [row for batch in batches for row in batch.to_pylist()]
        blobs += [] if found is None else found.to_pylist()
    checks = _assert_rows_match_the_reference(stream, rows, blobs)
    assert builder.checks == checks
    assert any(BLOB_KEY in row["payload"] for row in rows)
    tails = builder.take_tails()
    assert {run: (t.seq, t.type) for run, t in tails.items()} == {
        run: max((e.seq, e.type) for e in stream if e.run_id == run) for run in checks}


@given(runs=st.lists(st.sampled_from("abc"), max_size=60).flatmap(
           lambda rs: st.sampled_from([rs, sorted(rs)])),
       seed=st.dictionaries(st.sampled_from("abc"), st.integers(0, 2**32 - 1)),
       data=st.data())
def test_given_any_run_layout_when_checks_extend_then_they_equal_the_reference_walk(
    runs: list[str], seed: dict[str, int], data: st.DataObject,
) -> None:
    payloads = [data.draw(st.binary(max_size=12)) for _ in runs]
    checks = dict(seed)
    before, after = extend_checks(checks, runs, payloads)
    walk = dict(seed)
    for i, run in enumerate(runs):
        prev = walk.get(run, 0)
        walk[run] = row_check(payloads[i])
        assert (before[i], after[i]) == (prev, walk[run])
    assert checks == walk


def test_given_runs_and_payloads_of_different_lengths_when_checked_then_it_refuses() -> None:
    checks: dict[str, int] = {}
    with pytest.raises(ValueError, match="2 runs and 1 payloads"):
        extend_checks(checks, ["r", "r"], [b"{}"])
    assert checks == {}


@given(parts=st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=30), min_size=1,
                      max_size=4))
@settings(max_examples=60)
def test_given_runs_in_any_layout_when_linked_batch_by_batch_then_heads_hash_the_frames_in_order(
    parts: list[list[str]],
) -> None:
    heads, streams, seq = RunHeads(every=10**9), {}, 0
    for runs in parts:
        envs = []
        for run in runs:
            envs.append({**dict.fromkeys(ENVELOPE_ORDER), "schema_version": 1, "run_id": run,
                         "seq": seq, "ts": seq, "type": "t.x"})
            seq += 1
        payloads = [f'{{"k":{env["seq"]}}}' for env in envs]
        last = {env["run_id"]: env["seq"] for env in envs}
        got = heads.link(_table(envs, payloads), runs, last)
        for env, body in zip(envs, payloads, strict=True):
            streams.setdefault(env["run_id"], hashlib.sha256()).update(
                frame(record_canonical(envelope_canonical(env), body)))
        assert sorted(got) == sorted(
            (run, last[run], streams[run].copy().digest()) for run in set(runs))


@given(values=st.lists(json_values() | st.text(alphabet=",\x01\x00[]{}\"\\")))
def test_given_any_json_values_when_dumped_each_then_each_equals_its_own_dump(
    values: list[Any],
) -> None:
    dumps = orjson.dumps
    assert dumps_each(dumps, values) == [dumps(v) for v in values]


def test_given_a_fragment_that_spells_the_cut_when_dumped_each_then_it_declines() -> None:
    values = [{"a": orjson.Fragment(b"1," + b"\x01" * 16 + b",2")}, {"b": 2}]
    assert dumps_each(orjson.dumps, values) is None


@pytest.mark.parametrize("field, value", [("seq", 1.0), ("turn", 2.5), ("iteration", "3"),
                                          ("run_id", 5), ("step_id", 1.5)])
def test_given_an_envelope_value_arrow_would_bend_when_taken_then_it_is_rejected_alone(
    field: str, value: object,
) -> None:
    builder = RowBuilder()
    builder.add(RunStart(run_id="r", seq=0, ts=1, user_message="q"))
    builder.take()
    before = dict(builder.checks)
    fields: dict[str, Any] = {"run_id": "r", "seq": 1, "ts": 2, field: value}
    builder.add(RunStart(user_message="q", **fields))
    builder.add(RunStart(run_id="other", seq=0, ts=3, user_message="q"))
    batches, _ = builder.take()
    assert [r["run_id"] for b in batches for r in b.to_pylist()] == ["other"]
    assert sum(builder.rejected.values()) == 1
    assert {k: v for k, v in builder.checks.items() if k != "other"} == before


def test_given_a_none_turn_and_a_bool_seq_when_taken_then_they_store_as_null_and_int() -> None:
    _, (row,), _ = _rows([RunStart(run_id="r", seq=True, ts=2, turn=None,  # type: ignore[arg-type]
                                   user_message="q")])
    assert (row["seq"], row["turn"]) == (1, None)


def _one_row_table(run: str, seq: int) -> pa.Table:
    env = {**dict.fromkeys(ENVELOPE_ORDER), "schema_version": 1, "run_id": run, "seq": seq,
           "ts": seq, "type": "t.x"}
    return _table([env], ["{}"])


def test_given_many_ended_runs_when_linked_then_only_the_newest_ended_streams_are_kept() -> None:
    heads = RunHeads(keep_ended=2)
    first = heads.link(_one_row_table("a", 0), ["a"], {"a": 0}, ended=["a"])
    for run in ("b", "c"):
        heads.link(_one_row_table(run, 0), [run], {run: 0}, ended=[run])
    again = heads.link(_one_row_table("a", 1), ["a"], {"a": 1})  # "a" was forgotten
    fresh = RunHeads().link(_one_row_table("a", 1), ["a"], {"a": 1})
    assert again == fresh and again != first
    straggler = heads.link(_one_row_table("c", 1), ["c"], {"c": 1})  # "c" still kept
    assert straggler != RunHeads().link(_one_row_table("c", 1), ["c"], {"c": 1})


def test_given_a_float_equal_to_a_repeated_int_when_taken_then_it_is_still_refused() -> None:
    builder = RowBuilder()
    builder.add_all([RunStart(run_id="r", seq=k, ts=k, turn=turn, user_message="q")
                     for k, turn in enumerate([0, 0, 0.0])])  # type: ignore[arg-type]
    batches, _ = builder.take()
    assert [r["seq"] for b in batches for r in b.to_pylist()] == [0, 1]
    assert builder.rejected == {"r": 1}


@given(sizes=st.lists(st.integers(1, 23), min_size=1, max_size=5), every=st.integers(3, 9))
@settings(max_examples=60)
def test_given_a_long_run_when_linked_then_a_head_follows_every_nth_record_and_each_batch(
    sizes: list[int], every: int,
) -> None:
    heads, stream, seq, got = RunHeads(every=every), hashlib.sha256(), 0, []
    expected = []
    for size in sizes:
        envs = []
        for _ in range(size):
            env = {**dict.fromkeys(ENVELOPE_ORDER), "schema_version": 1, "run_id": "r",
                   "seq": seq, "ts": seq, "type": "t.x"}
            envs.append(env)
            stream.update(frame(record_canonical(envelope_canonical(env), "{}")))
            if (seq + 1) % every == 0 or (env is envs[-1] and len(envs) == size):
                expected.append(("r", seq, stream.copy().digest()))
            seq += 1
        got += heads.link(_table(envs, ["{}"] * size), ["r"] * size, {"r": seq - 1})
    assert got == expected


def test_given_a_batch_of_thousands_when_linked_then_only_its_end_gets_a_head() -> None:
    n = 4000
    envs = [{**dict.fromkeys(ENVELOPE_ORDER), "schema_version": 1, "run_id": "r", "seq": k,
             "ts": k, "type": "t.x"} for k in range(n)]
    got = RunHeads(every=64).link(_table(envs, ["{}"] * n), ["r"] * n, {"r": n - 1})
    assert [seq for _, seq, _ in got] == [n - 1]


@given(values=st.lists(st.none() | st.sampled_from(["a", "b", ""]) | _TEXT, max_size=20)
       | st.lists(st.just("same"), max_size=5) | st.lists(st.none(), max_size=5))
def test_given_any_texts_when_made_a_column_then_it_equals_arrows_own_conversion(
    values: list[str | None],
) -> None:
    from recorder.write._columns import text_column

    assert text_column(values).equals(pa.array(values, pa.string()))
