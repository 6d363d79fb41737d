"""Costs from the outlines' call rows (``recorder.store._costs``): the same numbers as the
``llm_calls`` view prices from the events, for every kind of call, and for a run whose
events lie in two files; ``footprint stats`` prints a group's name as it is."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from footprint.events import Event, LLMEnd, LLMStart, RunEnd, RunStart
from recorder import ParquetSink, TrendQuery, open_store, trends
from recorder.store._base import StoreView
from recorder.store._costs import FACTS_KEY, call_facts, priced_calls
from recorder.store._doctor import bad_outlines
from recorder.store._outline import OUTLINE_VERSION, outline_view
from recorder.store._prices import Price
from recorder.store._views import DECISION_TYPES

ROOT = Path(__file__).resolve().parents[2]
DAY = 1_767_225_600_000_000_000  # 2026-01-01 00:00 UTC
PRICES = {"p": {"input_mtok": 3, "output_mtok": 15, "cache_read_mtok": 0.3},
          "r": {"input_mtok": 1, "output_mtok": 2}}
"""Model ``p`` with a cache-read price (its cache writes cost the input price), ``r``
without; ``q`` has no price."""

Call = tuple[str, str, str | None, dict[str, int] | None]
"""A model call: provider, model of ``llm.start``, model of ``llm.end``, usage (``None``:
never answered)."""


def _run(n: int, calls: list[Call], *, release: str = "1.0") -> list[Event]:
    run = f"0190dddd-0000-7000-8000-{n:012d}"
    start = DAY + n * 60 * 10**9
    env = {"run_id": run, "turn": 0, "iteration": 1, "step_id": "engine#1"}
    out: list[Event] = [RunStart(run_id=run, seq=0, ts=start, user_message=f"r{n}",
                                 release=release)]
    for provider, model, end_model, usage in calls:
        out.append(LLMStart(**env, seq=len(out), ts=start + len(out), provider=provider,  # type: ignore[arg-type]
                            model=model, request_hash="0" * 64, messages_count=1))
        if usage is not None:
            out.append(LLMEnd(**env, seq=len(out), ts=start + len(out), content="ok",  # type: ignore[arg-type]
                              response_hash="1" * 64, model=end_model, **usage))
    out.append(RunEnd(run_id=run, seq=len(out), ts=start + 10**9, iteration=1,
                      final_content="done"))
    return out


RUNS: list[list[Call]] = [
    [("anthropic", "p", "p", {"input_tokens": 100, "output_tokens": 10,
                              "cache_read_tokens": 50, "cache_write_tokens": 20}),
     ("openai", "p", None, {"input_tokens": 100, "output_tokens": 5,
                            "cache_read_tokens": 150})],  # more cache than input: plain 0
    [("openai", "q", "q", {"input_tokens": 7, "output_tokens": 3})],  # unpriced
    [("openai", "p", "r", {"input_tokens": 40, "output_tokens": 4,
                           "cache_write_tokens": 10})],  # answered by another model
    [("openai", "r", "r", {"input_tokens": 9, "output_tokens": 1}),
     ("openai", "r", None, None)],  # the second call is never answered
    [],  # no model call
]


def _write(root: Path, parts: list[list[Event]]) -> Path:
    """Each part of events through its own sink (so its own events file)."""
    for events in parts:
        sink = ParquetSink(root)
        try:
            sink.export(events)
        finally:
            sink.shutdown()
    (root / "prices.json").write_text(json.dumps(PRICES), encoding="utf-8")
    return root


_PER_RUN = """SELECT run_id, sum(cost_usd),
    count(*) FILTER (WHERE cost_usd IS NULL AND end_seq IS NOT NULL)
FROM ({calls}) GROUP BY run_id ORDER BY run_id"""


def _from_outlines(store: StoreView) -> list[tuple[object, ...]]:
    calls, params = priced_calls(store, outline_view(store),
                                 "(SELECT DISTINCT run_id FROM _events_all)")
    return store.rows(_PER_RUN.format(calls=calls), params)


def _from_events(store: StoreView) -> list[tuple[object, ...]]:
    return store.rows(_PER_RUN.format(calls="SELECT run_id, end_seq, cost_usd FROM llm_calls"))


def _same(got: list[tuple[object, ...]], want: list[tuple[object, ...]]) -> None:
    assert [(r, u) for r, _, u in got] == [(r, u) for r, _, u in want]
    assert [c for _, c, _ in got] == [None if c is None else pytest.approx(c)
                                      for _, c, _ in want]


def test_given_every_kind_of_call_when_priced_from_outlines_then_the_events_agree(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "store", [[e for n, c in enumerate(RUNS) for e in _run(n, c)]])
    with open_store(root) as store:
        got, want = _from_outlines(store), _from_events(store)
        day = trends(store).to_pylist()
    _same(got, want)
    p = Price(**PRICES["p"])  # type: ignore[arg-type]
    first = (p.cost(input_tokens=100, output_tokens=10, cache_read=50, cache_write=20,
                    provider="anthropic")
             + p.cost(input_tokens=100, output_tokens=5, cache_read=150))
    assert got[0][1:] == (pytest.approx(first), 0)
    assert [u for _, _, u in got] == [0, 1, 0, 0]  # run 4 has no call row at all
    assert (day[0]["runs"], day[0]["unpriced"]) == (5, 1)
    assert day[0]["cost_usd"] == pytest.approx(sum(c for _, c, u in got if c and not u))


def test_given_a_call_answered_in_the_next_file_when_priced_then_it_pairs_as_in_the_events(
    tmp_path: Path,
) -> None:
    events = _run(1, [("openai", "p", "p", {"input_tokens": 1000, "output_tokens": 100}),
                      ("openai", "r", "r", {"input_tokens": 10, "output_tokens": 10})])
    root = _write(tmp_path / "store", [events[:2], events[2:]])  # split after a llm.start
    with open_store(root) as store:
        assert len(store.files.events) == 2
        rows = store.rows(f"SELECT count(*) FROM {outline_view(store)} WHERE level = 'run'")
        got, want = _from_outlines(store), _from_events(store)
        day = trends(store, TrendQuery(by="hour")).to_pylist()
    assert rows == [(2,)]
    _same(got, want)
    assert got[0][1:] == (pytest.approx(0.003 + 0.0015 + 0.00003), 0)
    assert day[0]["cost_usd"] == pytest.approx(0.00453)


def test_given_cached_outlines_with_call_rows_when_checked_then_none_is_called_bad(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "store", [[e for n, c in enumerate(RUNS) for e in _run(n, c)]])
    with open_store(root) as store:
        calls = store.rows(f"SELECT count(*), count(end_seq) FROM {outline_view(store)} "
                           "WHERE level = 'call'")
        assert calls == [(6, 5)]
        assert bad_outlines(store, store.files.events) == []


def test_given_a_group_named_in_brackets_when_footprint_stats_then_it_is_printed_as_is(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "store", [_run(1, [], release="[beta]"), _run(2, [])])
    done = subprocess.run([sys.executable, "-m", "lens.cli", "stats", "--store", str(root),
                           "--group-by", "release", "--no-plot"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    groups = [line.split()[1] for line in done.stdout.splitlines()[1:]]
    assert groups == ["1.0", "[beta]"]


def test_given_a_run_whose_answer_is_still_live_when_priced_then_it_pairs_as_in_the_events(
    tmp_path: Path,
) -> None:
    events = _run(1, [("openai", "p", "p", {"input_tokens": 1000, "output_tokens": 100})])
    root = _write(tmp_path / "store", [events[:2]])  # run.start and llm.start sealed
    sink = ParquetSink(root)
    try:
        sink.export(events[2:3])  # its llm.end in a live segment
        assert sink.force_flush()
        with open_store(root) as store:
            assert store.files.live_events and len(store.files.events) == 1
            got, want = _from_outlines(store), _from_events(store)
    finally:
        sink.shutdown()
    _same(got, want)
    assert got[0][1:] == (pytest.approx(0.0045), 0)


def test_given_a_cached_outline_without_call_facts_when_read_then_it_is_rebuilt_with_them(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "store", [[e for n, c in enumerate(RUNS) for e in _run(n, c)]])
    with open_store(root) as store:
        want = _from_outlines(store)
    (cached,) = (root / "summaries").glob("*.parquet")
    pq.write_table(pq.read_table(cached).replace_schema_metadata(None), cached)
    with warnings.catch_warnings(record=True) as caught, open_store(root) as store:
        warnings.simplefilter("always")
        got = _from_outlines(store)
    assert got == want and store.outlines.calls.models == {"p", "q", "r"}
    assert any("no call facts" in str(w.message) for w in caught)
    assert call_facts(pq.read_schema(cached).metadata) == store.outlines.calls


def test_given_the_decision_types_when_outlines_count_them_then_a_new_list_needs_a_new_version(
) -> None:
    # a cached outline's run row counts its decisions: a changed DECISION_TYPES must bump
    # OUTLINE_VERSION (so no stale count is read), then this pin
    assert (OUTLINE_VERSION, zlib.crc32(" ".join(DECISION_TYPES).encode())) == (4, 3244560427)


def test_given_a_cached_outline_whose_call_facts_were_edited_when_checked_then_it_is_named(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "store", [[e for n, c in enumerate(RUNS) for e in _run(n, c)]])
    with open_store(root) as store:
        outline_view(store)
    (cached,) = (root / "summaries").glob("*.parquet")
    edited = {FACTS_KEY: b'{"models": ["p"], "partial": []}'}  # 'q' and 'r' left out
    pq.write_table(pq.read_table(cached).replace_schema_metadata(edited), cached)
    with open_store(root) as store:
        assert [d.path for d in bad_outlines(store, store.files.events)] == [cached]


def test_given_a_run_of_two_models_when_grouped_by_model_then_each_call_counts_under_its_own(
    tmp_path: Path,
) -> None:
    two = [("openai", "p", "p", {"input_tokens": 1000, "output_tokens": 100}),
           ("openai", "r", "r", {"input_tokens": 10, "output_tokens": 10}),
           ("openai", "r", "r", {"input_tokens": 20, "output_tokens": 0})]
    one = [("openai", "r", "r", {"input_tokens": 5, "output_tokens": 5})]
    root = _write(tmp_path / "store", [_run(1, two), _run(2, one)])
    with open_store(root) as store:
        rows = {r["group"]: r for r in trends(store, TrendQuery(group_by="model")).to_pylist()}
        total = trends(store).to_pylist()[0]
    assert sorted(rows) == ["p", "r"]
    assert (rows["p"]["runs"], rows["p"]["tokens"]) == (1, 1100)
    assert (rows["r"]["runs"], rows["r"]["tokens"]) == (2, 40 + 10)
    assert rows["p"]["cost_usd"] == pytest.approx(0.003 + 0.0015)
    assert rows["r"]["cost_usd"] == pytest.approx((10 + 20 + 5) * 1e-6 + (10 + 5) * 2e-6)
    assert rows["p"]["cost_usd"] + rows["r"]["cost_usd"] == pytest.approx(total["cost_usd"])
    assert rows["p"]["tokens"] + rows["r"]["tokens"] == total["tokens"]


def test_given_labelled_runs_when_grouped_by_user_tag_and_env_then_each_label_is_a_group(
    tmp_path: Path,
) -> None:
    import dataclasses

    parts = []
    for n, (user, tags, env) in enumerate([("ann", ("beta", "eu"), "prod"),
                                           ("bob", ("eu",), "prod"), (None, (), "dev")]):
        events = _run(n, [("openai", "r", "r", {"input_tokens": 1, "output_tokens": 1})])
        events[0] = dataclasses.replace(events[0], user_id=user, tags=tags,  # type: ignore[type-var]
                                        environment=env)
        parts.append(events)
    root = _write(tmp_path / "store", parts)
    with open_store(root) as store:
        def runs(by: str) -> dict[object, int]:
            table = trends(store, TrendQuery(group_by=by)).to_pylist()
            return {r["group"]: r["runs"] for r in table}

        assert runs("user") == {"ann": 1, "bob": 1, None: 1}
        assert runs("tag") == {"beta": 1, "eu": 2, None: 1}
        assert runs("env") == {"prod": 2, "dev": 1}
