"""``footprint receive --workers 2`` (real processes on 127.0.0.1): every trace is mapped
once by the worker that owns it however its spans arrive (split over batches and
connections), a worker killed under load is reported and started again and nothing
acknowledged is lost or stored twice, one that keeps dying stops the receiver with one
line, and a conversation whose turns land on different workers is mapped as one intake
maps it (the earlier turns read back from the store)."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from otlp_build import agent_trace, conversation_turn, to_json, trace_request

from footprint.events import ContextInjected, RunStart
from recorder import open_store, verify_run
from recorder.ingest import Intake
from recorder.ingest._route import slot_of

ROOT = Path(__file__).resolve().parents[2]
PB = {"Content-Type": "application/x-protobuf"}


class Receiver:
    """``footprint receive --workers N`` in a process of its own; its lines kept."""

    def __init__(self, store: str | Path, workers: int = 2) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lens.cli", "receive", "--port", "0", "--workers",
             str(workers), "--store", str(store)], stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
        assert self.proc.stdout is not None
        self.lines: list[str] = []
        for line in self.proc.stdout:
            self.lines.append(line)
            if "OTEL_EXPORTER_OTLP_ENDPOINT=" in line:
                self.endpoint = line.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
                break
        else:
            raise AssertionError(f"the receiver did not start: {self.lines}")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def workers(self) -> list[int]:
        """The worker processes' pids, slot order."""
        found = []
        for pid in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text() \
                .split():
            with contextlib.suppress(OSError):  # gone meanwhile
                args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if b"--worker" in args:
                    found.append((int(args[args.index(b"--worker") + 1]), int(pid)))
        return [pid for _, pid in sorted(found)]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=120)
        self._reader.join(timeout=10)
        return code

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)


def _post(endpoint: str, bodies: list[bytes], kind: str = "application/x-protobuf") -> list[int]:
    with httpx.Client(timeout=60) as client:
        return [client.post(f"{endpoint}/v1/traces", content=b,
                            headers={"Content-Type": kind}).status_code for b in bodies]


def _stored(store: str | Path) -> tuple[list[str], int, int]:
    """(foreign trace ids of the runs, events stored twice, runs that do not verify)."""
    with open_store(store) as s:
        traces = [str(t) for (t,) in s.rows("SELECT foreign_trace_id FROM run_sources")]
        (twice,) = s.rows("SELECT count(*) - count(DISTINCT (run_id, seq)) FROM events")[0]
        invalid = sum(not verify_run(s, r).valid
                      for (r,) in s.rows("SELECT run_id FROM runs"))
    return traces, int(twice), invalid


def _events(store: Path) -> dict[str, list[tuple[int, str]]]:
    with open_store(store) as s:
        return {str(r): [(e.seq, e.type) for e in s.events(str(r))]
                for (r,) in s.rows("SELECT run_id FROM runs")}


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    r = Receiver(tmp_path / "store")
    yield r
    if r.proc.poll() is None:
        r.proc.kill()
        r.proc.wait()


def test_given_traces_split_over_batches_and_connections_when_two_workers_take_them_then_each_is_stored_once_whole(  # noqa: E501
        tmp_path: Path, receiver: Receiver) -> None:
    traces = range(1, 97)
    whole = {n: agent_trace(n, calls=2) for n in traces}
    # each trace's spans in two halves, in two different bodies, posted by different senders
    firsts = [trace_request([s for n in traces[k::8] for s in whole[n][:2]]).SerializeToString()
              for k in range(8)]
    rests = [to_json(trace_request([s for n in traces[k::8] for s in whole[n][2:]]))
             for k in range(8)]
    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(_post, [receiver.endpoint] * 4, [firsts[k::4] for k in range(4)]))
        codes += list(pool.map(lambda b: _post(receiver.endpoint, b, "application/json"),
                               [rests[k::4] for k in range(4)]))
    assert set(itertools.chain(*codes)) == {200}
    assert receiver.stop() == 130
    store = tmp_path / "store"
    stored, twice, invalid = _stored(store)
    assert sorted(stored) == sorted(f"{n:032x}" for n in traces) and (twice, invalid) == (0, 0)
    with Intake(tmp_path / "one") as one:  # the same traces through one intake
        one.take(trace_request([s for n in traces for s in whole[n]]).SerializeToString(),
                 signal="traces", fmt="pb")
    assert _events(store) == _events(tmp_path / "one")
    owners = {slot_of(bytes.fromhex(t), 2) for t in stored}
    assert owners == {0, 1} and receiver.said("worker 0 stopped") \
        and receiver.said("worker 1 stopped")
    assert list((store / "ingest" / "raw").rglob("*.pending")) == []
    doctor = subprocess.run([sys.executable, "-m", "lens.cli", "doctor", "--store", str(store)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert doctor.returncode == 0 and "healthy" in doctor.stdout, doctor.stdout + doctor.stderr


def _load(endpoint: str, acked: set[str], numbers: Iterator[int], stop: threading.Event) -> None:
    with httpx.Client(timeout=60) as client:
        while not stop.is_set():
            ids = [next(numbers) for _ in range(8)]
            body = trace_request([s for n in ids for s in agent_trace(n)]).SerializeToString()
            try:
                answer = client.post(f"{endpoint}/v1/traces", content=body, headers=PB)
            except httpx.HTTPError:
                continue  # a connection the killed worker held: sent again as a new batch
            if answer.status_code == 200:
                acked.update(f"{n:032x}" for n in ids)
            time.sleep(0.02)  # a steady load, not a flood the drain then spends a minute on


def _kill_under_load(receiver: Receiver, store: str | Path) -> None:
    """Two senders under way, worker 1 SIGKILLed, Ctrl-C: the killed worker is reported
    and started again, and every acknowledged trace is stored once in ``store``."""
    acked: set[str] = set()
    numbers, stop = itertools.count(1), threading.Event()
    senders = [threading.Thread(target=_load, args=(receiver.endpoint, acked, numbers, stop))
               for _ in range(2)]
    for s in senders:
        s.start()
    time.sleep(1.0)
    killed = receiver.workers()[1]
    os.kill(killed, signal.SIGKILL)
    time.sleep(1.5)
    stop.set()
    for s in senders:
        s.join()
    assert receiver.stop() == 130
    assert receiver.said(f"worker 1 (pid {killed}) stopped by signal 9; started again"), \
        receiver.lines
    stored, twice, invalid = _stored(store)
    assert len(acked) > 0 and acked <= set(stored), len(acked - set(stored))
    assert (len(stored) - len(set(stored)), twice) == (0, 0)
    assert invalid == 0


def test_given_a_worker_killed_under_load_when_restarted_then_it_is_reported_and_every_acknowledged_trace_is_stored_once(  # noqa: E501
        tmp_path: Path, receiver: Receiver) -> None:
    _kill_under_load(receiver, tmp_path / "store")
    assert list((tmp_path / "store" / "ingest" / "raw").rglob("*.pending")) == []


def test_given_workers_writing_a_bucket_when_one_is_killed_under_load_then_every_acknowledged_trace_is_stored_once_in_the_bucket(  # noqa: E501
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fanout_support import moto_bucket

    from recorder.write._upload import staging_root

    with moto_bucket(tmp_path, monkeypatch) as bucket:
        receiver = Receiver(bucket)
        try:
            _kill_under_load(receiver, bucket)
        finally:
            if receiver.proc.poll() is None:
                receiver.proc.kill()
                receiver.proc.wait()
        work = staging_root(bucket)
        assert list((work / "ingest" / "raw").rglob("*.pending")) == []
        assert not [p for p in work.rglob("*.parquet") if "/live/" not in p.as_posix()]


def test_given_a_worker_that_keeps_dying_when_watched_then_the_receiver_stops_with_one_line(
        receiver: Receiver) -> None:
    from lens.cli._receive_workers import GIVE_UP_DEATHS

    for _ in range(GIVE_UP_DEATHS):
        deadline = time.monotonic() + 60
        while len(pids := receiver.workers()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(pids[0], signal.SIGKILL)
        time.sleep(0.5)
    assert receiver.proc.wait(timeout=120) == 1
    receiver._reader.join(timeout=10)
    assert receiver.said(f"its {GIVE_UP_DEATHS}th death in 60 s; stopping every worker"), \
        receiver.lines
    assert receiver.said("worker 1 stopped;")


def _named(store: Path) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Per question: the turn its run is, and the origin of every message it sent."""
    out = {}
    with open_store(store) as s:
        for (run_id,) in s.rows("SELECT run_id FROM runs"):
            events = s.events(run_id)
            start = next(e for e in events if isinstance(e, RunStart))
            out[start.user_message] = (start.turn, tuple(
                e.injection_id or "" for e in events
                if isinstance(e, ContextInjected) and e.slot == "messages"))
    return out


def _runs(store: Path) -> int:
    if not (store / "live").is_dir() and not (store / "events").is_dir():
        return 0
    with open_store(store) as s:
        return int(s.rows("SELECT count(*) FROM runs")[0][0])


def test_given_a_conversation_whose_turns_land_on_different_workers_when_mapped_then_turns_match_one_intake(  # noqa: E501
        tmp_path: Path, receiver: Receiver) -> None:
    conversations, turns = 8, 4
    store = tmp_path / "store"
    for t in range(turns):  # a turn is sent once the one before it is stored, as a chat goes
        body = trace_request([s for c in range(conversations) for s in conversation_turn(c, t)])
        assert _post(receiver.endpoint, [body.SerializeToString()]) == [200]
        deadline = time.monotonic() + 60
        while _runs(store) < conversations * (t + 1) and time.monotonic() < deadline:
            time.sleep(0.3)
        time.sleep(1.0)  # a worker reads the store again at most once a second
    assert receiver.stop() == 130
    with Intake(tmp_path / "one") as one:
        for t in range(turns):
            one.take(trace_request([s for c in range(conversations)
                                    for s in conversation_turn(c, t)]).SerializeToString(),
                     signal="traces", fmt="pb")
    owners = {(c, t): slot_of(bytes.fromhex(f"{10_000_000 + c * 100 + t:032x}"), 2)
              for c in range(conversations) for t in range(turns)}
    assert any(owners[c, t] != owners[c, t + 1] for c in range(conversations)
               for t in range(turns - 1))  # turns did change workers
    assert _named(store) == _named(tmp_path / "one")


@pytest.mark.parametrize(("extra", "named"), [
    (["--workers", "0"], "receive --workers 0: a number of worker processes >= 1"),
    (["--workers", "2", "--grpc-port", "0"], "gRPC is served by a single receiver only"),
])
def test_given_workers_the_receiver_cannot_run_when_started_then_one_line_names_the_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
        named: str) -> None:
    from lens.cli import main

    code = main(["receive", "--port", "0", "--store", str(tmp_path / "store"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and named in err, (code, err)
