"""Run ids are unique across agents, processes and stores (real processes, real stores)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from footprint import Agent, FunctionModel, SeededIds, StepClock
from footprint.agent import RandomIds

HERE = Path(__file__).resolve().parent
PROCESSES = 8
RUNS = 1_000


def _spawn(count: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(HERE / "ids_worker.py"), str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_given_1000_default_runs_in_8_processes_when_their_ids_are_read_then_all_differ() -> None:
    shares = [RUNS // PROCESSES + (1 if i < RUNS % PROCESSES else 0) for i in range(PROCESSES)]
    workers = [_spawn(n) for n in shares]
    ids: list[str] = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        ids += out.split()
    assert len(ids) == RUNS
    assert len(set(ids)) == RUNS
    assert {i[14] for i in ids} == {"7"}  # UUIDv7


def test_given_the_same_clock_and_seed_when_two_agents_run_then_their_ids_differ() -> None:
    def agent() -> Agent:
        return Agent(provider=FunctionModel(lambda _: "ok"), model="m", clock=StepClock(), seed=3)

    before_ms = time.time_ns() // 1_000_000
    first, second = agent().run_sync("hi"), agent().run_sync("hi")
    after_ms = time.time_ns() // 1_000_000
    assert first.run_id != second.run_id
    for run_id in (first.run_id, second.run_id):  # stamped by the OS clock, not the test clock
        assert before_ms <= uuid.UUID(run_id).int >> 80 <= after_ms


def test_given_seeded_ids_when_two_agents_run_then_their_ids_repeat_exactly() -> None:
    def agent() -> Agent:
        return Agent(provider=FunctionModel(lambda _: "ok"), model="m", clock=StepClock(),
                     ids=SeededIds(3))

    assert agent().run_sync("hi").run_id == agent().run_sync("hi").run_id
    assert repr(SeededIds(3)) == "SeededIds(3)" and repr(RandomIds()) == "RandomIds()"


def _demo(store: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "lens.cli", "demo", "--store", str(store)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split(" · run ", 1)[1].split(" ", 1)[0]


def test_given_two_default_demo_runs_into_one_store_when_read_then_two_runs_verify(
    tmp_path: Path,
) -> None:
    from recorder import open_store

    store = tmp_path / "store"
    first, second = _demo(store), _demo(store)
    assert first != second
    with open_store(store) as s:
        runs = s.rows("SELECT run_id, count(*) FROM events GROUP BY run_id ORDER BY run_id")
    assert [r[0] for r in runs] == sorted([first, second])
    assert runs[0][1] == runs[1][1]
    for run_id in (first, second):
        done = subprocess.run(
            [sys.executable, "-m", "lens.cli", "verify", run_id, "--store", str(store)],
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def test_given_runs_made_in_one_millisecond_when_their_ids_are_sorted_then_made_order_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frozen = time.time_ns()
    monkeypatch.setattr(time, "time_ns", lambda: frozen)
    ids = [RandomIds().new_id(0) for _ in range(2_000)]
    assert sorted(ids) == ids and len(set(ids)) == len(ids)
    assert {uuid.UUID(i).int >> 80 for i in ids} == {frozen // 1_000_000}


def test_given_a_conversation_made_in_one_millisecond_when_last_is_read_then_it_is_the_last_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recorder import ParquetSink, Recorder, open_store

    frozen = time.time_ns()
    monkeypatch.setattr(time, "time_ns", lambda: frozen)
    recorder = Recorder(sinks=[ParquetSink(tmp_path / "store")])
    try:
        agent = Agent(provider=FunctionModel(lambda _: "ok"), model="m", clock=StepClock(),
                      sink=recorder)
        made = [agent.run_sync("one").run_id]
        made += [agent.follow_up_sync(m).run_id for m in ("two", "three", "four")]
    finally:
        recorder.close()
    store = open_store(tmp_path / "store")
    assert store.run_ids() == made and store.resolve_run("last") == made[-1]
