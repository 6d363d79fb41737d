"""A long run exported by several processes, cut at iteration ends: the same spans as one."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from otel_runs import scripted_run
from otlp_receiver import HttpReceiver, ReceivedSpan
from store_scale import run_events, run_id_of

from footprint._errors import ConfigError, RunError
from footprint.events import Event, RunEnd
from lens.cli import _export_otlp as _cmd_export_otlp
from recorder import ParquetSink, Recorder, open_store
from recorder.otel import export_otlp
from recorder.otel._chunks import MIN_EVENTS, plan, processes_for

SCRIPTED = "run-otel-split"
COMPLETE, FAILED, INCOMPLETE = 0, 7, 14  # store_scale: the status follows the number


def _shape(spans: list[ReceivedSpan]) -> list[tuple[object, ...]]:
    return sorted((s.trace_id, s.span_id, s.parent_id, s.name, s.kind, s.start_ns, s.end_ns,
                   s.status, s.status_message, sorted(s.attributes.items()), s.events,
                   sorted(s.resource.items())) for s in spans)


def _write(root: Path, events: list[Event]) -> None:
    recorder = Recorder(sinks=[ParquetSink(root)])
    for event in events:
        recorder.emit(event)
    recorder.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("split") / "store"
    events: list[Event] = list(scripted_run(SCRIPTED, iterations=14, tools=2, concurrent=True,
                                            failing_tool=True))  # type: ignore[arg-type]
    for n in (COMPLETE, FAILED, INCOMPLETE):
        events += run_events(n, 30)
    _write(root, events)
    return root


def _exported(store: Path, run: str, processes: int) -> tuple[int, list[ReceivedSpan], int]:
    with HttpReceiver() as receiver:
        result = export_otlp(run, store=store, endpoint=receiver.endpoint, processes=processes)
        assert receiver.wait_for(lambda s: len(s) == result.spans)
        return result.spans, list(receiver.spans), receiver.attempts


@pytest.mark.parametrize("run", [SCRIPTED, run_id_of(COMPLETE), run_id_of(FAILED),
                                 run_id_of(INCOMPLETE)])
def test_given_a_run_when_exported_by_three_processes_then_the_spans_equal_one_process(
    store: Path, run: str,
) -> None:
    one, alone, _ = _exported(store, run, 1)
    three, split, requests = _exported(store, run, 3)
    assert three == one == len(alone)
    assert _shape(split) == _shape(alone)
    assert requests >= 3  # every piece sent its own spans, the root came last


def test_given_an_unfinished_run_when_split_then_the_root_still_says_incomplete(
    store: Path,
) -> None:
    _, spans, _ = _exported(store, run_id_of(INCOMPLETE), 2)
    (root,) = [s for s in spans if s.parent_id == ""]
    assert root.attributes["footprint.incomplete"] is True


def test_given_a_run_when_planned_then_each_piece_starts_after_an_iteration_end(
    store: Path,
) -> None:
    s = open_store(store)
    try:
        pieces = plan(s, run_id_of(COMPLETE), 4)
        assert len(pieces) == 4
        assert pieces[0].first == 0 and pieces[-1].last == 30 * 8 + 1
        for before, after in itertools.pairwise(pieces):
            assert after.first == before.last + 1
            ((kind, iteration),) = s.rows(
                "SELECT type, iteration FROM _events_all WHERE run_id = ? AND seq = ?",
                [run_id_of(COMPLETE), before.last])
            assert (kind, iteration) == ("iteration.end", after.after)
    finally:
        s.close()


def test_given_events_after_the_run_end_when_planned_then_the_run_is_not_cut(
    tmp_path: Path,
) -> None:
    events = list(run_events(0, 20))
    last = events[-1]
    assert isinstance(last, RunEnd)
    events.append(dataclasses.replace(last, seq=last.seq + 1, ts=last.ts + 1))
    _write(tmp_path, events)
    s = open_store(tmp_path)
    try:
        assert plan(s, run_id_of(0), 3) == []
    finally:
        s.close()


def test_given_a_bad_process_count_when_exporting_then_it_is_refused_by_name(
    store: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"processes=0"):
        export_otlp("last", store=store, endpoint="http://127.0.0.1:9", processes=0)


def test_given_no_count_when_a_run_is_short_then_one_process_exports_it() -> None:
    assert processes_for(MIN_EVENTS - 1, None) == 1
    assert processes_for(10, 3) == 3
    assert processes_for(MIN_EVENTS, None) >= 1


def test_given_a_dead_endpoint_when_split_then_the_export_fails_with_a_run_error(
    store: Path,
) -> None:
    with pytest.raises(RunError, match="refused or did not take"):
        export_otlp(run_id_of(COMPLETE), store=store, endpoint="http://127.0.0.1:9",
                    processes=2, timeout_s=0.5)


def test_given_the_cli_flag_when_exporting_then_the_pieces_are_sent(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="footprint")
    _cmd_export_otlp.add_parser(parser.add_subparsers(dest="command"))
    with HttpReceiver() as receiver:
        args = parser.parse_args(["export-otlp", run_id_of(COMPLETE), "--store", str(store),
                                  "--endpoint", receiver.endpoint, "--processes", "2"])
        assert _cmd_export_otlp.run(args) == 0
        assert receiver.wait_for(lambda s: len(s) == 1 + 30 * 3)
    assert f"exported run {run_id_of(COMPLETE)}: 91 spans" in capsys.readouterr().out


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_given_a_split_export_when_ctrl_c_then_it_exits_at_once_and_its_workers_end(
    store: Path,
) -> None:
    with HttpReceiver("slow", delay_s=30.0) as receiver:
        cli = subprocess.Popen(
            [sys.executable, "-m", "lens.cli", "export-otlp", run_id_of(COMPLETE),
             "--store", str(store), "--endpoint", receiver.endpoint, "--processes", "3",
             "--timeout", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while receiver.attempts < 3 and time.monotonic() < deadline:  # every piece sending
            time.sleep(0.05)
        assert receiver.attempts >= 3
        workers = _children(cli.pid)
        assert len(workers) >= 2
        started = time.monotonic()
        cli.send_signal(signal.SIGINT)
        _, err = cli.communicate(timeout=20)
        took = time.monotonic() - started
    assert cli.returncode == 130, err
    assert took < 5, f"took {took:.1f} s to stop"
    assert "interrupted" in err and "Traceback" not in err
    assert not [p for p in workers if _alive(p)]


def test_given_a_split_export_when_it_reports_progress_then_the_counts_only_grow(
    store: Path,
) -> None:
    seen: list[int] = []
    with HttpReceiver() as receiver:
        export_otlp(run_id_of(COMPLETE), store=store, endpoint=receiver.endpoint,
                    processes=3, progress=seen.append)
    assert seen and seen == sorted(seen)
    assert seen[-1] == 30 * 8 + 2  # every event of the run, counted across the pieces
