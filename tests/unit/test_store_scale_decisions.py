"""The decision-heavy generated store the SQL benchmarks time (``bench_recorder``):
a real store that every reader sees whole, refusals and skill switches included."""

from __future__ import annotations

import warnings
from pathlib import Path

from store_scale import REFUSALS_SQL, SWITCHES_SQL, write_decision_runs

from recorder import StoreWarning, open_store


def test_given_a_generated_decision_store_when_opened_then_every_event_and_run_is_seen(
        tmp_path: Path) -> None:
    write_decision_runs(tmp_path / "store", runs=10, per_run=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        store = open_store(tmp_path / "store")
        [(events, runs)] = store.rows("SELECT count(*), count(DISTINCT run_id) FROM events")
        refusals = store.rows(REFUSALS_SQL)
        switches = store.sql(SWITCHES_SQL).fetchall()
    assert (events, runs) == (10_000, 10)
    assert list(store.files.skipped) == []
    assert sorted(run for run, _ in refusals) == [f"gen-{r:05d}" for r in range(10)]
    assert {n for _, n in refusals} == {len(range(0, 1000 // 8, 4))}  # every 4th iteration
    assert {n for _, n in switches} == {1000 // 8}  # a route to another skill every iteration
