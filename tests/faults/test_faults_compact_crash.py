"""Compaction is a transaction: killed anywhere, or losing power, no row is lost or doubled.

A real compactor process (``compact_child.py``, forked per store) is SIGKILLed
before each of its file-system steps in turn (every fsync, rename and
deletion), then the store is compacted again (as ``footprint compact`` does)
and, in a copy, written to by a writer that compacts on its own
(``ParquetSink(compact_at=2)``). Then 30 compactors are SIGKILLed at random
moments, and one compaction loses power once done (every file whose data it
did not fsync is cut to nothing). After each: no event stored twice, no run
lost or cut short, every run verifies. The figures are the Guarantees page's
(``<!-- compact-faults:start -->``; ``FOOTPRINT_WRITE_README=1`` rewrites them).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from docs_support import check_generated
from store_scale import write_runs

from recorder import open_store, verify_run
from recorder.write._compact import compact

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
START, END = "  <!-- compact-faults:start -->\n", "  <!-- compact-faults:end -->"
RUNS = 3
RANDOM_KILLS = 30


class Compactor:
    """The forking compactor server (``compact_child.py``)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "compact_child.py")], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE.parent)])})

    def start(self, store: Path, kill_at: int, log: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{store} {kill_at} {log}\n")
        self.proc.stdin.flush()
        word, pid = self.proc.stdout.readline().split()
        assert word == "pid"
        return int(pid)

    def finish(self) -> tuple[int, int]:
        """The compactor's exit code (-9: killed) and the steps it began."""
        assert self.proc.stdout is not None
        word, code, steps = self.proc.stdout.readline().split()
        assert word == "done"
        return int(code), int(steps)

    def run(self, store: Path, kill_at: int, log: Path) -> tuple[int, int]:
        self.start(store, kill_at, log)
        return self.finish()


@dataclass
class Figures:
    crash_points: int = 0
    random_kills: int = 0
    landed: int = 0
    stores: int = 0
    runs: int = 0
    duplicates: int = 0
    lost: int = 0
    invalid: int = 0
    power_kept: tuple[int, int] = (0, 0)
    problems: list[str] = field(default_factory=list)


def _counts(root: Path) -> dict[str, tuple[int, int]]:
    """Per run: its event rows and its distinct seqs (what readers see)."""
    with open_store(root) as store:
        rows = store.rows("SELECT run_id, count(*), count(DISTINCT seq) FROM events "
                          "GROUP BY run_id")
        return {run: (n, distinct) for run, n, distinct in rows}


def _audit(root: Path, expected: dict[str, int], figures: Figures, what: str) -> None:
    """Add the store's duplicates, lost runs and runs that do not verify to ``figures``."""
    counts = _counts(root)
    duplicates = sum(n - distinct for n, distinct in counts.values())
    lost = sum(1 for run, n in expected.items() if counts.get(run, (0, 0))[1] < n)
    with open_store(root) as store:
        invalid = sum(1 for run in counts if not verify_run(store, run).valid)
    temps = sorted(p.name for p in root.rglob(".*.tmp"))
    if temps:
        figures.problems.append(f"{what}: temp files left: {temps}")
    figures.stores += 1
    figures.runs += len(expected)
    figures.duplicates += duplicates
    figures.lost += lost
    figures.invalid += invalid
    if duplicates or lost or invalid:
        figures.problems.append(f"{what}: {duplicates} duplicates, {lost} lost, "
                                f"{invalid} invalid")


def _expected(root: Path) -> dict[str, int]:
    return {run: distinct for run, (_, distinct) in _counts(root).items()}


def _crash_points(server: Compactor, pristine: Path, work: Path, figures: Figures) -> float:
    """Kill before each step; then a later compaction, and (in a copy) a writer's own."""
    dry = work / "dry"
    shutil.copytree(pristine, dry)
    server.start(dry, 0, work / "dry.log")  # the server's imports paid by now
    began = time.perf_counter()
    code, steps = server.finish()
    took = time.perf_counter() - began  # a compaction, fork to exit
    assert code == 0 and steps >= 2 * (RUNS + 1), steps
    expected = _expected(pristine)
    more = {**expected, **_expected_of_one_more(work)}
    for k in range(1, steps + 1):
        store, writer = work / f"k{k}", work / f"k{k}-writer"
        shutil.copytree(pristine, store)
        code, _ = server.run(store, k, work / f"k{k}.log")
        assert code == -signal.SIGKILL, (k, code)
        figures.crash_points += 1
        shutil.copytree(store, writer)
        compact(store)  # a later compaction (what `footprint compact` runs)
        _audit(store, expected, figures, f"killed at step {k}, compacted again")
        write_runs(writer, RUNS, 1, compact_at=2)  # a writer that compacts once it seals
        _audit(writer, more, figures, f"killed at step {k}, a writer compacted")
    return took


def _expected_of_one_more(work: Path) -> dict[str, int]:
    alone = work / "one-more"
    write_runs(alone, RUNS, 1, compact_at=None)
    return _expected(alone)


def _random_kills(server: Compactor, pristine: Path, work: Path, took: float,
                  figures: Figures) -> None:
    rng = random.Random(30)
    expected = _expected(pristine)
    for n in range(RANDOM_KILLS):
        store = work / f"r{n}"
        shutil.copytree(pristine, store)
        pid = server.start(store, 0, work / f"r{n}.log")
        time.sleep(rng.uniform(0, took))
        with contextlib.suppress(ProcessLookupError):  # done before the kill: reaped
            os.kill(pid, signal.SIGKILL)
        code, _ = server.finish()
        figures.random_kills += 1
        figures.landed += code == -signal.SIGKILL
        compact(store)
        _audit(store, expected, figures, f"random kill {n}")


def _power_loss(server: Compactor, pristine: Path, work: Path, figures: Figures) -> None:
    """A whole compaction, then the power goes: data it did not fsync is gone."""
    store, log = work / "power", work / "power.log"
    shutil.copytree(pristine, store)
    before = {p.stat().st_ino for p in store.rglob("*.parquet")}
    code, _ = server.run(store, 0, log)
    assert code == 0
    synced = {int(line.split()[2]) for line in log.read_text().splitlines()
              if line.split()[1] == "fsync"}
    for path in store.rglob("*.parquet"):
        inode = path.stat().st_ino
        if inode not in before and inode not in synced:
            os.truncate(path, 0)
    expected = _expected(pristine)
    kept = sum(1 for run, n in _counts_safely(store).items() if n >= expected.get(run, 1 << 60))
    figures.power_kept = (kept, len(expected))
    _audit(store, expected, figures, "power loss after compaction")


def _counts_safely(root: Path) -> dict[str, int]:
    return {run: distinct for run, (_, distinct) in _counts(root).items()}


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Figures]:
    work = tmp_path_factory.mktemp("compact-crash")
    pristine = work / "pristine"
    write_runs(pristine, 0, RUNS, compact_at=None)
    server = Compactor()
    measured = Figures()
    try:
        took = _crash_points(server, pristine, work, measured)
        _random_kills(server, pristine, work, took, measured)
        _power_loss(server, pristine, work, measured)
    finally:
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        server.proc.wait(timeout=30)
    yield measured


@pytest.mark.filterwarnings("ignore::recorder.StoreWarning")
def test_given_a_compactor_killed_at_every_step_or_at_random_when_compacted_again_then_no_row_twice_none_lost(  # noqa: E501
    figures: Figures,
) -> None:
    assert figures.crash_points >= 2 * (RUNS + 1) and figures.random_kills == RANDOM_KILLS
    assert figures.landed >= RANDOM_KILLS // 3  # most kills land mid-compaction
    assert figures.duplicates == 0 and figures.lost == 0 and figures.invalid == 0, (
        figures.problems)
    assert not figures.problems  # no temp file left behind either


@pytest.mark.filterwarnings("ignore::recorder.StoreWarning")
def test_given_a_power_loss_after_a_compaction_when_read_then_every_run_is_kept(
    figures: Figures,
) -> None:
    kept, runs = figures.power_kept
    assert kept == runs == RUNS, figures.problems


def _fragment(f: Figures) -> str:
    return (f"  a compactor SIGKILLed before each of its {f.crash_points} steps (every fsync, "
            f"rename and deletion), each store then compacted again and, in a copy, by a "
            f"writer as it seals; {f.random_kills} compactors SIGKILLed at random moments, "
            f"then compacted again; a power loss after a compaction (every file whose data it "
            f"did not fsync cut to nothing): {f.stores} stores of {RUNS}–{RUNS + 1} runs, "
            f"{f.duplicates} events stored twice, {f.lost} runs lost or cut short, "
            f"{f.invalid} runs failing `verify` (generated by "
            f"`tests/faults/test_faults_compact_crash.py`).\n")


@pytest.mark.filterwarnings("ignore::recorder.StoreWarning")
def test_given_the_compaction_fault_figures_when_the_readme_is_read_then_they_are_current(
    figures: Figures,
) -> None:
    fragment = _fragment(figures)
    check_generated(START, END, fragment, "the compaction fault figures")
