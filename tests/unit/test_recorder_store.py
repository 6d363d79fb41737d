"""Store internals: hot columns, blob dedupe, upcasting, run resolution, live visibility."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from strategies import events

from footprint._errors import ConfigError
from footprint.events import (
    ContextEvaluated,
    CursorMove,
    Event,
    LLMStart,
    RunEnd,
    RunStart,
    SkillRejected,
    to_record,
)
from recorder import HOT_FIELDS, ParquetSink, Recorder, open_store, upcast, verify_run
from recorder.write._rows import hot_fields


def test_given_a_cursor_move_when_lifted_then_from_to_and_by_are_columns() -> None:
    event = ContextEvaluated(run_id="r", seq=1, ts=1, active_count=0, skipped_count=0,
                             evaluated_total=0,
                             cursor_move=CursorMove(by="route", from_skill="triage", to="refunds"))
    hot = hot_fields(to_record(event))
    assert (hot["from_skill"], hot["to_skill"], hot["moved_by"]) == ("triage", "refunds", "route")


def test_given_a_rejection_when_lifted_then_requested_and_current_skill_are_columns() -> None:
    event = SkillRejected(run_id="r", seq=1, ts=1, requested_id="billing", reason="posture",
                          current_skill_id="triage", tool_call_id="c9")
    hot = hot_fields(to_record(event))
    assert (hot["skill_id"], hot["from_skill"], hot["reason"], hot["tool_call_id"]) == (
        "billing", "triage", "posture", "c9")


@given(event=events())
def test_given_any_event_when_lifted_then_every_hot_value_is_a_string_or_none(
    event: Event,
) -> None:
    hot = hot_fields(to_record(event))
    assert set(hot) == set(HOT_FIELDS)
    assert all(v is None or isinstance(v, str) for v in hot.values())


def test_given_a_prompt_repeated_30_times_when_stored_then_one_blob_copy(tmp_path: Path) -> None:
    prompt = "You are a careful refunds agent. " * 40
    with Recorder([ParquetSink(tmp_path)]) as rec:
        for i in range(30):
            rec.emit(LLMStart(run_id="r", seq=i, ts=i, provider="p", model="m",
                              request_hash=f"q{i}", request_ref=prompt))
    store = open_store(tmp_path)
    assert store.rows("SELECT count(*), sum(chars) FROM blobs")[0] == (1, len(prompt))
    assert all(e.request_ref == prompt for e in store.events("r"))  # type: ignore[attr-defined]


def test_given_an_older_schema_version_when_upcast_then_each_step_runs_in_order() -> None:
    steps = {0: lambda r: {"user_message" if k == "prompt" else k: v for k, v in r.items()}}
    record = {"schema_version": 0, "type": "run.start", "prompt": "hi"}
    assert upcast(record, steps, current=1) == {
        "schema_version": 1, "type": "run.start", "user_message": "hi"}
    with pytest.raises(ConfigError, match="no upcaster from schema_version 0"):
        upcast({"schema_version": 0}, {}, current=1)
    with pytest.raises(ConfigError, match="newer than this reader"):
        upcast({"schema_version": 9}, {}, current=1)


def test_given_runs_when_resolving_then_ids_prefixes_and_last_work(tmp_path: Path) -> None:
    with Recorder([ParquetSink(tmp_path)]) as rec:
        for i, run in enumerate(["abc-1", "abd-2", "xyz-3"]):
            rec.emit(RunStart(run_id=run, seq=0, ts=100 * i, user_message="m"))
    store = open_store(tmp_path)
    assert [store.resolve_run(r) for r in ("last", "x", "abc", "abd-2")] == [
        "xyz-3", "xyz-3", "abc-1", "abd-2"]
    with pytest.raises(ConfigError, match="matches 2 runs"):
        store.resolve_run("ab")
    with pytest.raises(ConfigError, match="did you mean 'xyz-3'"):
        store.resolve_run("xyz-4")


def test_given_a_live_unsealed_segment_when_queried_then_rows_are_visible_once(
    tmp_path: Path,
) -> None:
    rec = Recorder([ParquetSink(tmp_path, seal_rows=8)])
    try:
        for i in range(12):
            rec.emit(RunStart(run_id="live", seq=i, ts=i, user_message="m"))
            if i % 3 == 2:
                assert rec.flush()
        store = open_store(tmp_path)
        assert store.rows("SELECT count(*), count(DISTINCT seq) FROM events")[0] == (12, 12)
        assert store.rows("SELECT status FROM runs")[0][0] == "incomplete"
        assert list((tmp_path / "live").glob("*.events.arrows"))  # 3 rows still live
        assert len(list((tmp_path / "events").rglob("*.parquet"))) == 1  # 9 rows sealed
    finally:
        rec.close()
    assert not list((tmp_path / "live").glob("*.arrows"))


def test_given_a_run_across_utc_midnight_when_sealed_then_one_file_per_day_and_it_verifies(
    tmp_path: Path,
) -> None:
    midnight = 1_700_006_400 * 10**9  # 2023-11-15T00:00:00Z
    with Recorder([ParquetSink(tmp_path)]) as rec:
        for i in range(6):
            rec.emit(RunStart(run_id="late", seq=i, ts=midnight + (i - 3) * 10**9,
                              user_message="m"))
    days = sorted(p.parent.name for p in (tmp_path / "events").rglob("*.parquet"))
    assert days == ["date=2023-11-14", "date=2023-11-15"]
    store = open_store(tmp_path)
    assert store.rows("SELECT count(*) FROM events WHERE run_id = 'late'")[0][0] == 6
    assert verify_run(store, "late").valid


def test_given_the_heads_failing_when_recorded_then_the_rows_are_kept_and_the_run_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recorder.write import _link

    def broken(self: object, *args: object) -> object:
        raise MemoryError("no room for the frames")

    monkeypatch.setattr(_link.RunHeads, "_link", broken)
    rec = Recorder([ParquetSink(tmp_path)])
    for seq in range(4):
        rec.emit(RunStart(run_id="r", seq=seq, ts=seq, user_message="q"))
    rec.emit(RunEnd(run_id="r", seq=4, ts=4, final_content="a"))
    rec.close()
    assert rec.stats().sink_failures  # counted, never raised into the run
    store = open_store(tmp_path)
    assert store.rows("SELECT count(*) FROM events")[0][0] == 5
    assert store.rows("SELECT count(*) FROM _chain_all")[0][0] == 0
    result = verify_run(store, "r")
    assert (result.valid, result.broken_seq, result.reason) == (False, 0, "chain broken")
    assert "covered by no stored head" in result.detail


def _sealed(root: Path) -> list[Path]:
    return list((root / "events").rglob("*.parquet"))


def test_given_a_seal_time_when_runs_end_sooner_then_their_file_is_held_until_it_is_that_old(
    tmp_path: Path,
) -> None:
    import time

    rec = Recorder([ParquetSink(tmp_path, seal_after_s=1.0, compact_at=None)])
    try:
        started = time.monotonic()
        for n, run in enumerate(("a", "b")):  # two runs, each ended, in two exports
            rec.emit(RunStart(run_id=run, seq=0, ts=n, user_message="m"))
            rec.emit(RunEnd(run_id=run, seq=1, ts=n, final_content="done"))
            assert rec.flush()
        if time.monotonic() - started < 0.9:  # (a very slow machine may be past it already)
            assert _sealed(tmp_path) == []
            assert list((tmp_path / "live").glob("*.events.arrows"))
        time.sleep(max(0.0, 1.05 - (time.monotonic() - started)))
        assert rec.flush()  # a flush after the seal time seals the held file
        assert len(_sealed(tmp_path)) == 1
        assert open_store(tmp_path).rows("SELECT count(*) FROM runs")[0][0] == 2
    finally:
        rec.close()
    assert len(_sealed(tmp_path)) == 1 and not list((tmp_path / "live").glob("*.arrows"))


def test_given_no_seal_time_when_each_run_ends_then_each_export_is_a_file(
    tmp_path: Path,
) -> None:
    with Recorder([ParquetSink(tmp_path, compact_at=None)]) as rec:
        for n, run in enumerate(("a", "b")):
            rec.emit(RunStart(run_id=run, seq=0, ts=n, user_message="m"))
            rec.emit(RunEnd(run_id=run, seq=1, ts=n, final_content="done"))
            assert rec.flush()
        assert len(_sealed(tmp_path)) == 2


@pytest.mark.parametrize("bad", [-1, float("inf"), float("nan"), "60", True])
def test_given_a_bad_seal_time_when_a_sink_or_intake_is_built_then_the_error_names_it(
    tmp_path: Path, bad: object,
) -> None:
    from recorder.ingest import Intake

    with pytest.raises(ConfigError, match="seal_after_s="):
        ParquetSink(tmp_path, seal_after_s=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="seal_after_s="):
        Intake(tmp_path, seal_after_s=bad)  # type: ignore[arg-type]
