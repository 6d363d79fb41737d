"""``export_otlp`` / ``footprint export-otlp``: a stored run re-exported is the live trace again."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from otel_runs import scripted_run
from otlp_receiver import GrpcReceiver, HttpReceiver, ReceivedSpan, down_endpoint, tree

from footprint._errors import RunError
from lens.cli import _export_otlp as _cmd_export_otlp
from recorder import ParquetSink, Recorder
from recorder.otel import OTelSink, export_otlp, otlp_exporter, trace_id_of

RUN = "run-otel-backfill"


def _shape(spans: list[ReceivedSpan]) -> list[tuple[object, ...]]:
    return sorted((s.span_id, s.parent_id, s.name, s.kind, s.start_ns, s.end_ns, s.status,
                   sorted(s.attributes.items()), s.events) for s in spans)


@pytest.fixture
def live(tmp_path: Path) -> list[ReceivedSpan]:
    """Record a run into a store while exporting it live; return the live spans."""
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05)
        rec = Recorder(sinks=[ParquetSink(tmp_path), sink], processors=[sink.stamp])
        for event in scripted_run(RUN, iterations=3, tools=2, concurrent=True,
                                  failing_tool=True):
            rec.emit(event)
        rec.close()
        assert receiver.wait_for(lambda s: len(s) == 11)
        return list(receiver.spans)


def test_given_a_stored_run_when_backfilled_over_http_then_the_span_tree_equals_the_live_one(
    live: list[ReceivedSpan], tmp_path: Path,
) -> None:
    with HttpReceiver() as receiver:
        result = export_otlp(RUN[:12], store=tmp_path, endpoint=receiver.endpoint)
        assert receiver.wait_for(lambda s: len(s) == 11)
    assert (result.run_id, result.spans) == (RUN, 11)
    assert result.trace_id == f"{trace_id_of(RUN):032x}"
    assert tree(receiver.spans) == tree(live)
    assert _shape(receiver.spans) == _shape(live)


def test_given_a_stored_run_when_backfilled_over_grpc_then_timestamps_are_the_original_ones(
    live: list[ReceivedSpan], tmp_path: Path,
) -> None:
    with GrpcReceiver() as receiver:
        export_otlp("last", store=tmp_path, endpoint=receiver.endpoint, protocol="grpc")
        assert receiver.wait_for(lambda s: len(s) == 11)
    assert _shape(receiver.spans) == _shape(live)


def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="footprint")
    _cmd_export_otlp.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_given_the_cli_command_when_run_then_it_exports_and_prints_the_trace_id(
    live: list[ReceivedSpan], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    with HttpReceiver() as receiver:
        args = _cli(["export-otlp", "last", "--endpoint", receiver.endpoint,
                     "--store", str(tmp_path), "--header", "x-team=search"])
        assert _cmd_export_otlp.run(args) == 0
        assert receiver.wait_for(lambda s: len(s) == 11)
    assert f"trace {trace_id_of(RUN):032x}" in capsys.readouterr().out
    assert tree(receiver.spans) == tree(live)


def test_given_a_down_endpoint_when_backfilling_then_a_run_error_names_the_fix(
    live: list[ReceivedSpan], tmp_path: Path,
) -> None:
    with pytest.raises(RunError, match="check --endpoint"):
        export_otlp(RUN, store=tmp_path, endpoint=down_endpoint(), timeout_s=0.5)


def test_given_a_down_endpoint_when_the_cli_exports_then_one_line_names_the_cause(
    live: list[ReceivedSpan], tmp_path: Path,
) -> None:
    """OpenTelemetry's exporter logs each retry; the command prints its own line only."""
    done = subprocess.run(
        [sys.executable, "-m", "lens.cli", "export-otlp", "last", "--store", str(tmp_path),
         "--endpoint", down_endpoint(), "--timeout", "1", "--openinference"],
        capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.splitlines()
    assert done.returncode != 0 and len(lines) == 2, done.stderr
    assert "--openinference without --content exports no message text" in lines[0]
    assert "check --endpoint" in lines[1] and "(last error: Connection refused)" in lines[1]
    assert "Transient error" not in done.stderr and "Traceback" not in done.stderr


def test_given_a_bad_header_when_the_cli_parses_it_then_the_error_quotes_it(
    tmp_path: Path,
) -> None:
    from footprint._errors import ConfigError

    args = _cli(["export-otlp", "last", "--store", str(tmp_path), "--header", "novalue"])
    with pytest.raises(ConfigError, match="'novalue' is not KEY=VALUE"):
        _cmd_export_otlp.run(args)


class _Batches(SpanExporter):
    """An exporter that keeps each batch it is handed (the OTel SDK interface)."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append([f"{s.name}/{s.context.span_id:016x}" for s in spans])
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def test_given_a_long_run_when_backfilled_then_it_streams_in_batches_like_the_list_export(
    tmp_path: Path,
) -> None:
    from store_scale import write_long_run

    from recorder import open_store
    from recorder.otel import export_events

    run_id = write_long_run(tmp_path / "store", 4_000)
    streamed, listed = _Batches(), _Batches()
    done: list[int] = []
    result = export_otlp("last", store=tmp_path / "store", exporter=streamed,
                         progress=done.append)
    export_events(open_store(tmp_path / "store").events(run_id), listed)
    assert result.spans == sum(map(len, listed.batches)) > 1_000
    assert [s for b in streamed.batches for s in b] == [s for b in listed.batches for s in b]
    assert max(map(len, streamed.batches)) <= 512 * 2 and len(streamed.batches) > 2
    assert done == sorted(done) and 0 < done[-1] <= 4_000
