"""A crash is not a tamper: a writer SIGKILLed after it stored the batch that ends a run and
before it stored that batch's head leaves the run *incomplete* (exit 4), unsealed or sealed
by a later writer's adoption; a head removed from a segment its writer went on writing (or
sealed itself) still reads as a broken chain (exit 1)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from stopped_writer_child import events

from recorder import ParquetSink, open_store, verify_run

CHILD = Path(__file__).with_name("stopped_writer_child.py")


def _killed(root: Path) -> None:
    proc = subprocess.run([sys.executable, str(CHILD), str(root)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def _verify_cli(root: Path, run: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", "verify", run, "--store",
                           str(root)], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stopped") / "store"
    _killed(root)
    return root


def test_given_a_writer_killed_before_the_head_of_a_run_end_when_verified_then_incomplete(
    crashed: Path,
) -> None:
    result = verify_run(open_store(crashed), "stopped")
    assert (result.valid, result.interrupted, result.broken_seq) == (False, True, 5)
    assert result.summary().startswith("incomplete: the writer stopped before sealing; "
                                       "seq 5..9 unsealed"), result.summary()
    assert verify_run(open_store(crashed), "whole").valid
    shown = _verify_cli(crashed, "stopped")
    assert shown.returncode == 4 and "incomplete" in shown.stdout, shown.stdout + shown.stderr


def test_given_the_killed_writers_segment_sealed_by_a_later_writer_when_verified_then_incomplete(
    crashed: Path, tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _killed(root)
    sink = ParquetSink(root)  # adopts the dead writer's segment at start-up
    sink.export(events("later", 0, 4, end=True))
    sink.shutdown()
    assert not list((root / "live").glob("*.arrows"))
    result = verify_run(open_store(root), "stopped")
    assert result.interrupted and "sealed by adoption" in result.detail, result.summary()
    assert verify_run(open_store(root), "later").valid
    assert _verify_cli(root, "stopped").returncode == 4


def _drop_head(root: Path, run: str) -> None:
    """Remove the run's last head from the chain file that holds it."""
    (chain,) = [p for p in (root / "chain").glob("*.parquet")
                if run in pq.read_table(p).column("run_id").to_pylist()]
    table = pq.read_table(chain)
    last = pc.max(pc.filter(table.column("last_seq"), pc.equal(table.column("run_id"), run)))
    keep = pc.invert(pc.and_(pc.equal(table.column("run_id"), run),
                             pc.equal(table.column("last_seq"), last)))
    pq.write_table(table.filter(keep), chain)


@pytest.mark.parametrize("middle", [True, False])
def test_given_a_head_removed_from_a_segment_its_writer_sealed_when_verified_then_tampering(
    tmp_path: Path, middle: bool,
) -> None:
    root = tmp_path / "store"
    sink = ParquetSink(root)
    if middle:  # an open run keeps the segment open: a later batch is headed after it
        sink.export(events("open", 0, 3, end=False))
    sink.export(events("stopped", 0, 5, end=False))
    sink.export(events("stopped", 5, 9, end=True))
    if middle:
        sink.export(events("open", 3, 6, end=True))
    sink.shutdown()
    _drop_head(root, "stopped")
    result = verify_run(open_store(root), "stopped")
    assert (result.valid, result.interrupted, result.reason) == (False, False, "chain broken")
    assert _verify_cli(root, "stopped").returncode == 1
