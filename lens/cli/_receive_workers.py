"""``footprint receive --workers N``: N worker processes, each its own intake and store
writer, behind one listening socket.

The parent maps what an earlier receiver left pending, binds the OTLP/HTTP port (shared by
the workers: the kernel hands each connection to one of them) and one private loopback port
per worker, then starts the workers (``footprint receive --worker K``). A worker that takes
a request keeps the traces it owns (the trace id's last 8 bytes modulo N) and hands each
other share to its owner's private port, answering 200 only once every share is stored
raw; so every span of a trace is mapped by one worker, and each worker's raw batches
(named ``-w<K>``) are its own: a restarted worker maps its pending ones again, nobody
else's.

A worker that dies (SIGKILL, a crash) is reported and started again (its port stays
bound by the parent, so nothing is refused meanwhile); one that dies
:data:`GIVE_UP_DEATHS` times within :data:`GIVE_UP_S` seconds stops the receiver (exit 1,
one line). Ctrl-C drains in two steps — every worker stops taking requests and finishes
those it took (its shares handed on included), then every worker writes what it
acknowledged — and exits 130; a second Ctrl-C exits at once (the next start finishes).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from footprint._errors import ConfigError

__all__ = ["GIVE_UP_DEATHS", "GIVE_UP_S", "serve_workers", "worker"]

GIVE_UP_DEATHS = 5
GIVE_UP_S = 60.0
_POLL_S = 0.2


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=1024)


class _Worker:
    """One worker process and the parent's end of its control line (from the worker ``r``:
    it serves, ``d``: it finished the requests it took; to it ``s`` or end of line: write
    down and exit)."""

    def __init__(self, args: argparse.Namespace, slot: int, public: socket.socket,
                 private: socket.socket, peers: list[str]) -> None:
        self.slot = slot
        self.control, theirs = socket.socketpair()
        fds = (public.fileno(), private.fileno(), theirs.fileno())
        command = [sys.executable, "-m", "lens.cli", "receive", "--host", args.host,
                   "--worker", str(slot), "--worker-fds", ",".join(map(str, fds)),
                   "--peers", ",".join(peers)]
        command += ["--store", args.store] if args.store else []
        command += ["--redact"] if args.redact else []
        command += [] if args.seal_after is None else ["--seal-after", str(args.seal_after)]
        command += ["--allow-remote"] if args.allow_remote else []
        self.proc = subprocess.Popen(command, pass_fds=fds, start_new_session=True)
        theirs.close()

    def tell(self, word: bytes) -> None:
        with contextlib.suppress(OSError):
            self.control.sendall(word)

    def heard(self, word: bytes) -> None:
        """Wait until the worker says ``word`` (or is gone)."""
        with contextlib.suppress(OSError):
            while self.control.recv(1) not in (word, b""):
                continue

    def died(self) -> str:
        code = self.proc.returncode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return f"worker {self.slot} (pid {self.proc.pid}) stopped by {how}"


def serve_workers(args: argparse.Namespace) -> int:
    """The parent: recover, bind, start ``args.workers`` workers, watch them; 130 after
    Ctrl-C, 1 when a worker keeps dying."""
    from lens.cli._exits import INTERRUPTED
    from recorder.ingest._receiver import is_loopback
    from recorder.ingest._workdir import claim, workdir

    if args.grpc_port is not None:
        raise ConfigError(f"receive --workers {args.workers} --grpc-port {args.grpc_port}: "
                          "gRPC is served by a single receiver only; drop --grpc-port or "
                          "--workers")
    if not is_loopback(args.host) and not args.allow_remote:
        raise ConfigError(f"receive --host {args.host!r} is not a loopback address; anyone "
                          "who can reach it could write into the store: pass --allow-remote "
                          "to mean it, or use 127.0.0.1")
    _recover_all(args)
    _held = claim(workdir(args.store), None)  # a URI's working directory: this receiver's
    public = _listen(args.host, args.port)
    private = [_listen("127.0.0.1", 0) for _ in range(args.workers)]
    peers = [f"http://127.0.0.1:{s.getsockname()[1]}" for s in private]
    stop = threading.Event()
    # Ctrl-C only sets ``stop``: an exception raised inside Popen's bookkeeping could leave
    # its wait lock taken, and the drain would wait for the workers forever
    signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    workers = [_Worker(args, k, public, private[k], peers) for k in range(args.workers)]
    for w in workers:
        w.heard(b"r")  # it serves
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"footprint receive: set OTEL_EXPORTER_OTLP_ENDPOINT=http://{host}:"
          f"{public.getsockname()[1]} (OTLP/HTTP, protobuf or JSON; {args.workers} workers) "
          "and turn on the framework's content capture; Ctrl-C stops", flush=True)
    code = _watch(args, workers, public, private, peers, stop)
    return INTERRUPTED if code is None else code


def _recover_all(args: argparse.Namespace) -> None:
    """Map every raw batch an earlier receiver (of any worker) left pending, here, once."""
    from lens.cli._ingest import intake_for

    intake = intake_for(args)
    try:
        recovered = intake.recover()
    finally:
        intake.close()
    if recovered.spans or recovered.problems:
        print(f"footprint receive: mapped again what an earlier receiver acknowledged "
              f"but had not written: {recovered.line()}", flush=True)


def _watch(args: argparse.Namespace, workers: list[_Worker], public: socket.socket,
           private: list[socket.socket], peers: list[str], stop: threading.Event) -> int:
    """Restart a worker that died; 1 (all stopped) when one dies too often, 130 once
    ``stop`` is set (Ctrl-C) and every worker wrote what it acknowledged."""
    deaths: dict[int, list[float]] = {k: [] for k in range(len(workers))}
    while not stop.wait(_POLL_S):
        for k, w in enumerate(workers):
            if w.proc.poll() is None:
                continue
            now = time.monotonic()
            deaths[k] = [t for t in deaths[k] if t > now - GIVE_UP_S] + [now]
            if len(deaths[k]) >= GIVE_UP_DEATHS:
                print(f"footprint receive: {w.died()}, its {GIVE_UP_DEATHS}th death in "
                      f"{GIVE_UP_S:.0f} s; stopping every worker (what they acknowledged "
                      "is written; the next start maps what is pending)", flush=True)
                _drain([x for x in workers if x is not w])
                return 1
            workers[k] = _Worker(args, k, public, private[k], peers)
            print(f"footprint receive: {w.died()}; started again as pid "
                  f"{workers[k].proc.pid} (it maps its pending batches again; requests it "
                  "had not answered are retried by their senders)", flush=True)
    return _drain(workers)


def _drain(workers: list[_Worker]) -> int:
    """Ctrl-C: every worker stops taking requests and finishes the ones it took, then every
    worker writes down what it acknowledged. A second Ctrl-C exits at once."""
    def now(signum: int, frame: object) -> None:
        for w in workers:
            with contextlib.suppress(OSError):
                w.proc.send_signal(signal.SIGINT)  # a worker's second Ctrl-C: exit now
        print("footprint receive: stopped before the drain finished; the next "
              "`footprint receive` on this store maps what is pending", flush=True)
        os._exit(130)

    signal.signal(signal.SIGINT, now)
    print(f"footprint receive: stopping {len(workers)} workers — writing what was "
          "acknowledged (Ctrl-C again exits now, the next start finishes)", flush=True)
    for w in workers:
        with contextlib.suppress(OSError):
            w.proc.send_signal(signal.SIGINT)
    for w in workers:
        w.heard(b"d")  # it took its last request
    for w in workers:
        w.tell(b"s")
    for w in workers:
        w.proc.wait()
    print(f"footprint receive: stopped; {len(workers)} workers wrote what they "
          "acknowledged", flush=True)
    return 130


def worker(args: argparse.Namespace) -> int:
    """One worker (``--worker K``): its intake, the shared port and its private port."""
    from lens.cli._exits import INTERRUPTED
    from lens.cli._ingest import intake_for
    from recorder.ingest import Receiver

    slot, peers = args.worker, args.peers.split(",")
    public_fd, private_fd, control_fd = (int(x) for x in args.worker_fds.split(","))
    control = socket.socket(fileno=control_fd)
    intake = intake_for(args, slot)
    recovered = intake.recover()
    if recovered.spans or recovered.problems:
        print(f"footprint receive: worker {slot} mapped again what it had acknowledged but "
              f"not written: {recovered.line()}", flush=True)
    report = _reporter(slot)
    public = Receiver(intake, host=args.host, allow_remote=args.allow_remote,
                      listen=socket.socket(fileno=public_fd), peers=peers, slot=slot,
                      on_report=report).start()
    side = Receiver(intake, host="127.0.0.1", listen=socket.socket(fileno=private_fd),
                    on_report=report).start()
    with contextlib.suppress(KeyboardInterrupt):
        with contextlib.suppress(OSError):  # the parent is gone: _orphaned stops us
            control.sendall(b"r")
        threading.Thread(target=_orphaned, args=(control,), daemon=True).start()
        threading.Event().wait()
    _exit_on_second_interrupt(slot, intake)
    public.halt()
    with contextlib.suppress(OSError):
        control.sendall(b"d")
        control.recv(1)  # every worker finished its requests (or the parent is gone)
    side.halt()
    last = intake.close()
    totals = intake.totals
    print(f"footprint receive: worker {slot} stopped; {totals['spans']} spans, "
          f"{totals['runs']} runs mapped" + (f" (last flush: {last.line()})" if last.runs
                                             else ""), flush=True)
    return INTERRUPTED


def _reporter(slot: int) -> Any:
    def report(batch: Any) -> None:
        if batch.runs or batch.problems:
            print(f"batch (worker {slot}): {batch.line()}", flush=True)
    return report


def _orphaned(control: socket.socket) -> None:
    """The parent is gone (its end of the control line closed): stop as after Ctrl-C."""
    with contextlib.suppress(OSError):
        while control.recv(1, socket.MSG_PEEK):
            time.sleep(_POLL_S)
    os.kill(os.getpid(), signal.SIGINT)


def _exit_on_second_interrupt(slot: int, intake: Any) -> None:
    def now(signum: int, frame: object) -> None:
        print(f"footprint receive: worker {slot} stopped before the drain finished; "
              f"{intake.pending} raw batches left pending", flush=True)
        os._exit(130)
    signal.signal(signal.SIGINT, now)
