"""`export-otlp` to a receiver that refuses some batches: every span not delivered is
counted, in one process or split across several (a refused batch used to end a process's
export and the count named that one batch only)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from otlp_receiver import HttpReceiver, down_endpoint
from store_scale import run_events, run_id_of

from footprint._errors import RunError
from lens.cli import _export_otlp as _cmd_export_otlp
from recorder import ParquetSink, Recorder
from recorder.otel import export_otlp

ITERATIONS = 700  # 2,101 spans: five requests of up to 512 in one process
RUN = run_id_of(0)
_LOST = re.compile(r"refused or did not take (\d+) of (\d+) spans .*\((\d+) sent\)")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lost") / "store"
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        for event in run_events(0, ITERATIONS):
            recorder.emit(event)
    return root


@pytest.fixture(scope="module")
def total(store: Path) -> int:
    """The spans of the run, as a clean one-process export sends them."""
    with HttpReceiver() as receiver:
        return export_otlp(RUN, store=store, endpoint=receiver.endpoint, processes=1).spans


def _export(store: Path, endpoint: str, processes: int, timeout: str = "2") -> str:
    parser = argparse.ArgumentParser(prog="footprint")
    _cmd_export_otlp.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["export-otlp", RUN, "--store", str(store), "--endpoint",
                              endpoint, "--processes", str(processes), "--timeout", timeout])
    with pytest.raises(RunError) as raised:
        _cmd_export_otlp.run(args)
    return str(raised.value)


@pytest.mark.parametrize("processes", [1, 3])
def test_given_a_receiver_refusing_every_other_batch_when_exported_then_every_lost_span_counted(
    store: Path, total: int, processes: int,
) -> None:
    with HttpReceiver(refuse_every=2) as receiver:
        message = _export(store, receiver.endpoint, processes)
        taken, refused, attempts = len(receiver.spans), receiver.refused, receiver.attempts
    found = _LOST.search(message)
    assert found is not None, message
    lost, counted, sent = map(int, found.groups())
    assert attempts > 2 * processes  # several batches per process, each one tried
    assert refused > 0 and taken > 0
    assert (lost, sent, counted) == (refused, taken, total)


def test_given_a_dead_endpoint_when_split_then_every_span_is_counted_lost(
    store: Path, total: int,
) -> None:
    found = _LOST.search(_export(store, down_endpoint(), 2, timeout="0.3"))
    assert found is not None
    assert tuple(map(int, found.groups())) == (total, total, 0)
