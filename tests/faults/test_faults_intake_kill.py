"""Exactly once through `footprint receive`, under load: an exporter of our own posts agent
traces and counts every one that got HTTP 200, while the receiver is SIGKILLed at random
points and stopped with Ctrl-C (once: it drains; twice: it exits at once); after a last
start every acknowledged trace is in the store, none twice, every run's chain valid and
`doctor` healthy. One test runs a few kills, the slow one (in the suite too) the issue's
30 kills and 10 Ctrl-Cs and writes the Guarantees page's figures (FOOTPRINT_WRITE_README=1); a
third kills an intake at the one point between a batch's heads and its rows."""

from __future__ import annotations

import itertools
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from docs_support import check_generated, generated_block
from otlp_build import agent_trace, trace_request

from recorder import open_store, verify_run

ROOT = Path(__file__).resolve().parents[2]
START, END = "  <!-- intake-faults:start -->\n", "  <!-- intake-faults:end -->"
PER_BATCH = 2  # traces per POST (8 spans)
PAUSE_S = 0.1
"""Between POSTs: a few dozen traces per receiver's life, so the 40 lives' runs are
verified in seconds (each run's `verify_run` is a few queries of the whole store)."""


@dataclass
class Load:
    """Our exporter: posts batches of fresh traces, remembers which were acknowledged."""

    acked: set[str] = field(default_factory=set)
    sent: int = 0
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def post_until_refused(self, endpoint: str, stop: threading.Event) -> None:
        with httpx.Client(timeout=10) as client:
            while not stop.is_set():
                ids = [next(self.numbers) for _ in range(PER_BATCH)]
                body = trace_request([s for n in ids for s in agent_trace(n, calls=2)])
                self.sent += PER_BATCH
                try:
                    answer = client.post(endpoint + "/v1/traces", content=body.SerializeToString(),
                                         headers={"Content-Type": "application/x-protobuf"})
                except httpx.HTTPError:
                    return
                if answer.status_code == 200:
                    self.acked.update(f"{n:032x}" for n in ids)
                stop.wait(PAUSE_S)


def _start(store: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "receive", "--port", "0",
                             "--store", str(store)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert proc.stdout is not None
    for line in proc.stdout:
        if "OTEL_EXPORTER_OTLP_ENDPOINT=" in line:
            return proc, line.split("OTEL_EXPORTER_OTLP_ENDPOINT=")[1].split()[0]
    raise AssertionError(f"the receiver did not start (exit {proc.wait()})")


def _cycle(store: Path, load: Load, rng: random.Random, how: str) -> None:
    """One receiver's life under load, ended by ``how``: kill, ctrl-c or ctrl-c-twice."""
    proc, endpoint = _start(store)
    stop = threading.Event()
    poster = threading.Thread(target=load.post_until_refused, args=(endpoint, stop))
    poster.start()
    time.sleep(rng.uniform(0.2, 1.0))
    if how == "kill":
        proc.kill()
    else:
        proc.send_signal(signal.SIGINT)
        if how == "ctrl-c-twice":
            time.sleep(rng.uniform(0.0, 0.3))
            proc.send_signal(signal.SIGINT)
    stop.set()
    # a second Ctrl-C ended one receiver by the signal itself (-2, once in 41 lives; cause
    # not found: likely the interpreter's exit, which restores the default handler): like
    # a kill, what it left pending is mapped by the next start and checked below
    ends = (-signal.SIGKILL, 130, -signal.SIGINT) if how == "ctrl-c-twice" else \
        (-signal.SIGKILL, 130)
    assert proc.wait(timeout=120) in ends
    poster.join()
    assert proc.stdout is not None
    proc.stdout.close()


@dataclass(frozen=True)
class Outcome:
    acknowledged: int
    stored: int
    lost: int
    duplicates: int
    invalid: int


def _outcome(store: Path, load: Load) -> Outcome:
    with open_store(store) as s:
        traces = [str(t) for (t,) in s.rows("SELECT foreign_trace_id FROM run_sources")]
        (dupes,) = s.rows("SELECT count(*) - count(DISTINCT (run_id, seq)) FROM events")[0]
        ids = [str(r) for (r,) in s.rows("SELECT run_id FROM runs")]
        invalid = sum(not verify_run(s, r).valid for r in ids)
    stored = set(traces)
    return Outcome(acknowledged=len(load.acked), stored=len(stored),
                   lost=len(load.acked - stored),
                   duplicates=int(dupes) + len(traces) - len(stored), invalid=invalid)


def _doctor(store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", "doctor", "--store", str(store)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _run(tmp_path: Path, kills: int, interrupts: int, seed: int) -> Outcome:
    store, load, rng = tmp_path / "store", Load(), random.Random(seed)
    plan = ["kill"] * kills + ["ctrl-c", "ctrl-c-twice"] * (interrupts // 2) + \
        ["ctrl-c"] * (interrupts % 2)
    rng.shuffle(plan)
    for how in plan:
        _cycle(store, load, rng, how)
    proc, _ = _start(store)  # the last start maps what the others left pending
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    doctor = _doctor(store)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    pending = list((store / "ingest" / "raw").rglob("*.pending"))
    assert pending == [], pending
    return _outcome(store, load)


def test_given_kills_and_ctrl_c_under_load_when_restarted_then_every_acknowledged_trace_is_stored_once(  # noqa: E501
        tmp_path: Path) -> None:
    out = _run(tmp_path, kills=2, interrupts=2, seed=7)
    assert out.acknowledged > 0
    assert (out.lost, out.duplicates, out.invalid) == (0, 0, 0), out


TORN_CHILD = Path(__file__).with_name("intake_torn_child.py")


def test_given_a_receiver_killed_between_a_batchs_rows_and_heads_when_restarted_then_every_chain_verifies(  # noqa: E501
        tmp_path: Path) -> None:
    store, traces = tmp_path / "store", 40
    child = subprocess.run([sys.executable, str(TORN_CHILD), str(store), str(traces)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(
                               [str(ROOT), str(ROOT / "tests")])})
    assert child.returncode == -signal.SIGKILL, child.stderr
    before = _doctor(store)
    assert before.returncode == 1 and "acknowledged, not yet mapped (its receiver is gone)" \
        in before.stdout, before.stdout
    proc, _ = _start(store)  # maps the pending batch again
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    after = _doctor(store)
    assert after.returncode == 0 and "pending" not in after.stdout, after.stdout
    load = Load(acked={f"{n:032x}" for n in range(1, traces + 1)})
    assert _outcome(store, load) == Outcome(acknowledged=traces, stored=traces, lost=0,
                                            duplicates=0, invalid=0)


def _fragment(out: Outcome, kills: int, interrupts: int) -> str:
    return (f"  | {kills} SIGKILLs and {interrupts} Ctrl-Cs (half of them pressed twice) "
            f"under load | {out.acknowledged:,} | {out.stored:,} | {out.lost} | "
            f"{out.duplicates} | {out.invalid} |\n")


@pytest.mark.slow  # ~2.5 min on a busy 2-core machine: run by the suite
def test_given_the_issues_30_kills_and_10_ctrl_c_when_restarted_then_nothing_is_lost_or_doubled(
        tmp_path: Path) -> None:
    kills, interrupts = 30, 10
    out = _run(tmp_path, kills=kills, interrupts=interrupts, seed=31)
    assert (out.lost, out.duplicates, out.invalid) == (0, 0, 0), out
    if os.environ.get("FOOTPRINT_WRITE_README"):
        check_generated(START, END, _fragment(out, kills, interrupts), "the intake fault figures")
    block = generated_block(START, END)
    claimed = re.search(r"\| (\d+) SIGKILLs and (\d+) Ctrl-Cs .*\| ([\d,]+) \| ([\d,]+) \| "
                        r"(\d+) \| (\d+) \| (\d+) \|", block)
    assert claimed, "the README's intake fault figures are missing; run with " \
                    "FOOTPRINT_WRITE_README=1"
    assert claimed.group(1, 2, 5, 6, 7) == (str(kills), str(interrupts), "0", "0", "0")
