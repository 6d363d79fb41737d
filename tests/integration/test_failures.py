"""A failed run is first-class: its error in ``runs``, whole in ``show``, on its spans."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from failed_runs import ERROR_MESSAGE, failing_agent, record_failed
from otlp_receiver import HttpReceiver, ReceivedSpan

from footprint._errors import RunError
from recorder import ParquetSink, Recorder, RunQuery, list_runs, open_store
from recorder.otel import OTelSink, export_otlp, otlp_exporter


@pytest.fixture(scope="module")
def failed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("failed") / "store"
    return root, record_failed(root)


def _footprint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_given_a_failed_run_when_the_runs_view_is_read_then_it_names_the_error_and_step(
    failed: tuple[Path, str],
) -> None:
    root, run_id = failed
    with open_store(root) as store:
        row = store.rows("SELECT status, error_type, error_message, failed_step FROM runs "
                         "WHERE run_id = ?", [run_id])[0]
        listed = list_runs(store, RunQuery(status=("failed",))).to_pylist()
    assert row[0] == "failed" and row[1] == "RunError" and row[3] == "llm#2"
    assert ERROR_MESSAGE in row[2] and "BackendDown" in row[2]
    assert [(r["run_id"], r["error_type"], r["error_message"], r["failed_step"])
            for r in listed] == [(run_id, row[1], row[2], row[3])]


def test_given_a_failed_run_when_runs_status_failed_is_listed_then_its_error_shows(
    failed: tuple[Path, str],
) -> None:
    root, run_id = failed
    out = _footprint("runs", "--store", str(root), "--status", "failed")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith(run_id[:30]))
    assert "failed" in line and "llm#2 RunError: provider 'openai' raised" in line
    complete = _footprint("runs", "--store", str(root), "--status", "complete")
    assert "no runs match" in complete.stdout


def test_given_a_failed_run_when_shown_then_the_whole_message_prints(
    failed: tuple[Path, str],
) -> None:
    root, run_id = failed
    out = _footprint("show", run_id, "--store", str(root))
    assert out.returncode == 0, out.stderr
    assert "failed at llm#2: RunError" in out.stdout
    failed_line = next(x for x in out.stdout.splitlines() if "FAILED" in x)
    assert ERROR_MESSAGE in failed_line and failed_line.endswith("report the bug")
    answer = next(x for x in out.stdout.splitlines() if x.startswith("answer:"))
    assert answer == ("answer: (none — the run FAILED: RunError in stage 'run'; "
                      "its error is above)")


def _failing_span(spans: list[ReceivedSpan]) -> ReceivedSpan:
    chats = sorted((s for s in spans if s.name == "chat gpt-4o-mini"), key=lambda s: s.start_ns)
    assert len(chats) == 2 and chats[0].status == "unset"
    return chats[1]


def _assert_failed_spans(spans: list[ReceivedSpan], *, content: bool) -> None:
    chat = _failing_span(spans)
    assert chat.status == "error" and chat.attributes["error.type"] == "RunError"
    (_, _, attrs), = [e for e in chat.events if e[0] == "exception"]
    assert attrs["exception.type"] == "RunError"
    assert (ERROR_MESSAGE in attrs.get("exception.message", "")) is content
    assert (ERROR_MESSAGE in chat.status_message) is content
    root = next(s for s in spans if s.parent_id == "")
    assert root.status == "error" and root.attributes["error.type"] == "RunError"


def test_given_a_live_otel_sink_when_a_run_fails_then_the_chat_span_has_error_and_exception(
    tmp_path: Path,
) -> None:
    with HttpReceiver() as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        schedule_delay_s=0.05, capture_content=True)
        with (Recorder(sinks=[ParquetSink(tmp_path), sink], processors=[sink.stamp]) as rec,
              pytest.raises(RunError)):
            failing_agent(rec).run_sync("where is my order A-17?")
        assert receiver.wait_for(lambda s: any(x.parent_id == "" for x in s))
    _assert_failed_spans(receiver.spans, content=True)


def test_given_a_stored_failed_run_when_exported_then_the_chat_span_has_error_and_exception(
    failed: tuple[Path, str],
) -> None:
    root, run_id = failed
    with HttpReceiver() as receiver:
        export_otlp(run_id, store=root, endpoint=receiver.endpoint, capture_content=False)
        assert receiver.wait_for(lambda s: any(x.parent_id == "" for x in s))
    _assert_failed_spans(receiver.spans, content=False)


HOSTILE = "\x1b[2J\x1b]0;pwned\x07\rhidden\x9b31m"
"""What a model's answer or a server's error may hold: clear the screen, retitle the
terminal, return the carriage over the line, a C1 CSI."""


def test_given_an_answer_and_an_error_with_escape_codes_when_listed_and_shown_then_escaped(
    tmp_path: Path,
) -> None:
    from footprint import Agent, FunctionModel

    def hostile(request: object) -> str:
        raise RuntimeError(f"503 {HOSTILE} end")

    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        with pytest.raises(RunError):
            Agent(provider=FunctionModel(hostile), model="m", sink=rec).run_sync("hi")
        answered = Agent(provider=FunctionModel(lambda r: f"ok {HOSTILE}\ntwo"), model="m",
                         sink=rec).run_sync("hi").run_id
    escaped = r"\x1b[2J\x1b]0;pwned\x07\x0dhidden\x9b31m"
    listed = _footprint("runs", "--store", str(tmp_path))
    shown = _footprint("show", answered, "--store", str(tmp_path))
    failure = _footprint("show", "--store", str(tmp_path),
                         list_runs(open_store(tmp_path), RunQuery(status=("failed",)))
                         .column("run_id")[0].as_py())
    for done in (listed, shown, failure):
        assert done.returncode == 0, done.stderr
        assert not any(c in done.stdout for c in "\x1b\x07\r\x9b")
    assert r"ok \x1b[2J\x1b]0;pwned\x07 hidden" in listed.stdout  # \r folded: one line
    assert f"answer: ok {escaped}\ntwo\n" in shown.stdout
    assert f"503 {escaped} end" in failure.stdout


HOSTILE_AGENT = '''
from footprint import Agent, FunctionModel, StepClock

HOSTILE = {hostile!r}


def make_agent(*, sink=None, seed=0):
    return Agent(provider=FunctionModel(lambda r: f"ok {{HOSTILE}} 40 EUR"), model="m",
                 sink=sink, clock=StepClock(), seed=seed)
'''


def test_given_a_hostile_answer_when_why_diff_and_replay_print_it_then_it_shows_escaped(
    tmp_path: Path,
) -> None:
    (tmp_path / "hostile.py").write_text(HOSTILE_AGENT.format(hostile=HOSTILE), "utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        from hostile import make_agent  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    store = tmp_path / "store"
    with Recorder(sinks=[ParquetSink(store)]) as rec:
        first = make_agent(sink=rec).run_sync("hi").run_id
        second = make_agent(sink=rec).run_sync(f"hello {HOSTILE}").run_id
    agent = f"{tmp_path / 'hostile.py'}:make_agent"
    explained = _footprint("why", first, "--store", str(store))
    compared = _footprint("diff", first, second, "--store", str(store))
    replayed = _footprint("replay", first, "--agent", agent, "--store", str(store))
    for done in (explained, compared, replayed):
        assert done.returncode in (0, 1), done.stderr
        assert not any(c in done.stdout for c in "\x1b\x07\r\x9b"), done.stdout
    assert r"ok \x1b[2J\x1b]0;pwned\x07" in explained.stdout
    assert r"\x1b[2J" in compared.stdout and r"\x1b[2J" in replayed.stdout
