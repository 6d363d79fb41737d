"""A score removed is a break: the store's score heads (``scores/heads.parquet``) name a
score segment deleted whole, or a score cut from its segment, on plain and keyed stores; a
store scored before score heads verifies as before, noting that its scores' completeness is
unknown."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from footprint import Agent, ScriptedModel
from recorder import (
    ParquetSink,
    Recorder,
    Score,
    evaluate,
    feedback,
    open_store,
    record_scores,
    verify_run,
)
from recorder.store._doctor import examine
from recorder.store._tails import chain_tails
from recorder.store._verify import ChainTail, chain_tail
from recorder.write._chain import KEY_ENV

KEY = b"k" * 32


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def _scored(root: Path, key: bytes | None) -> str:
    """A run with two scores, each written in a segment of its own."""
    with Recorder(sinks=[ParquetSink(root, chain_key=key)]) as rec:
        agent = Agent(provider=ScriptedModel(["refund sent"]), model="m", sink=rec)
        run_id = agent.run_sync("refund please").run_id
    feedback(root, run_id, "helpful", value=1, chain_key=key)
    feedback(root, run_id, "correct", label="wrong-refund", chain_key=key)
    return run_id


def _newest_score_segment(root: Path) -> str:
    """The segment holding the run's newest score (the highest seq of a score)."""
    found = []
    for path in (root / "events").rglob("*.parquet"):
        table = pq.read_table(path, columns=["type", "seq"], partitioning=None)
        scores = table.filter(pc.equal(table.column("type"), "feedback.recorded"))
        if scores.num_rows:
            found.append((pc.max(scores.column("seq")).as_py(), path.stem))
    return max(found)[1]


def _verify(root: Path, run_id: str, key: bytes | None) -> tuple[bool, str | None, str]:
    with open_store(root) as store:
        result = verify_run(store, run_id, key=key)
    return result.valid, result.reason, result.summary()


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "keyed"])
def test_given_a_scored_run_when_its_newest_score_segment_is_deleted_then_verify_names_it(
    tmp_path: Path, key: bytes | None,
) -> None:
    root = tmp_path / "store"
    run_id = _scored(root, key)
    valid, _, summary = _verify(root, run_id, key)
    assert valid and summary.endswith("records"), summary
    segment = _newest_score_segment(root)
    for path in root.rglob(f"{segment}.parquet"):
        path.unlink()
    valid, reason, summary = _verify(root, run_id, key)
    assert (valid, reason) == (False, "missing record"), summary
    assert "score" in summary


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "keyed"])
def test_given_a_scored_run_when_its_last_score_is_cut_with_its_head_then_verify_names_it(
    tmp_path: Path, key: bytes | None,
) -> None:
    root = tmp_path / "store"
    with Recorder(sinks=[ParquetSink(root, chain_key=key)]) as rec:
        agent = Agent(provider=ScriptedModel(["refund sent"]), model="m", sink=rec)
        run_id = agent.run_sync("refund please").run_id
    record_scores(root, [(run_id, Score(name="a", value=1)), (run_id, Score(name="b", value=0))],
                  chain_key=key)
    segment = _newest_score_segment(root)
    (events,) = root.rglob(f"events/*/{segment}.parquet")
    table = pq.read_table(events, partitioning=None)
    last = pc.max(table.column("seq"))
    pq.write_table(table.filter(pc.not_equal(table.column("seq"), last)), events)
    (chain,) = root.rglob(f"chain/{segment}.parquet")
    heads = pq.read_table(chain)
    pq.write_table(heads.filter(pc.not_equal(heads.column("last_seq"), last)), chain)
    valid, reason, summary = _verify(root, run_id, key)
    assert not valid and reason == "missing record", summary


def test_given_a_store_scored_before_score_heads_when_verified_then_valid_with_a_note(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    run_id = _scored(root, None)
    (root / "scores" / "heads.parquet").unlink()
    valid, _, summary = _verify(root, run_id, None)
    assert valid, summary
    assert summary.endswith("completeness of its 2 scores unknown (no score head in "
                            "scores/heads.parquet: scored before footprint kept score heads)")


def test_given_a_damaged_score_heads_file_when_doctor_runs_then_it_is_named(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    run_id = _scored(root, None)
    heads = root / "scores" / "heads.parquet"
    heads.write_bytes(heads.read_bytes()[:40])
    with open_store(root) as store:
        found = examine(store)
        assert [d.path for d in found.damaged] == [heads], found
        assert "unknown" in verify_run(store, run_id).summary()


def test_given_runs_some_scored_when_their_tails_are_read_together_then_each_is_chain_tails_one(
    tmp_path: Path,
) -> None:
    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        ids = [Agent(provider=ScriptedModel([f"a{i}"]), model="m", sink=rec)
               .run_sync("hi").run_id for i in range(4)]
    evaluate(tmp_path, lambda run: Score(name="ok", value=1), where={"answer": "a1"})

    def shape(tail: object) -> tuple[object, ...]:
        if isinstance(tail, ChainTail):
            return (tail.records, tail.next_seq, tail.check, tail.stream.digest(), tail.ended)
        return (repr(tail),)

    with open_store(tmp_path) as store:
        together = chain_tails(store, [*ids, "no-such-run"])
        assert {run: shape(t) for run, t in together.items()} == {
            run: shape(chain_tail(store, run)) for run in [*ids, "no-such-run"]}
    assert all(isinstance(together[run], ChainTail) for run in ids)
