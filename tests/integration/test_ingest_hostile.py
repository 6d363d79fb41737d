"""Hostile input against the real receiver on 127.0.0.1 (raw sockets and http.client): a
gzip bomb, lengths that are not byte counts, chunked bodies, IPv6 loopback, and a corrupt
raw batch that a remap must not read again and again."""

from __future__ import annotations

import gzip
import http.client
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from otlp_build import agent_trace, trace_request

from recorder import open_store
from recorder.ingest import Intake, Receiver, remap

LIMIT = 1_000_000


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    r = Receiver(Intake(tmp_path / "store"), port=0, max_body=LIMIT).start()
    yield r
    r.stop()


def _raw_files(store: Path) -> list[Path]:
    return sorted((store / "ingest" / "raw").glob("date=*/*"))


def _runs(store: Path) -> int:
    with open_store(store) as s:
        return int(s.rows("SELECT count(*) FROM runs")[0][0])


def _send(r: Receiver, head: str, body: bytes = b"") -> int:
    """One request written byte for byte; the status code of the answer."""
    with socket.create_connection(("127.0.0.1", r.port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        answer = sock.makefile("rb").readline()
    return int(answer.split()[1])


def _post(r: Receiver, body: bytes, **headers: str) -> int:
    conn = http.client.HTTPConnection(r.host, r.port, timeout=10)
    try:
        conn.request("POST", "/v1/traces", body=body, headers={
            "Content-Type": "application/x-protobuf", **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def _chunked(body: bytes, size: int = 4096) -> bytes:
    parts = [body[i:i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def _head(length: str | None = None, chunked: bool = False) -> str:
    lines = ["POST /v1/traces HTTP/1.1", "Host: 127.0.0.1",
             "Content-Type: application/x-protobuf"]
    lines += [f"Content-Length: {length}"] if length is not None else []
    lines += ["Transfer-Encoding: chunked"] if chunked else []
    return "\n".join(lines) + "\n"


def test_given_a_gzip_bomb_when_posted_then_413_and_nothing_is_kept(
        receiver: Receiver) -> None:
    bomb = gzip.compress(b"\0" * (50 * LIMIT))  # 50 MB of zeros in ~50 KB
    assert len(bomb) < LIMIT
    assert _post(receiver, bomb, **{"Content-Encoding": "gzip"}) == 413
    assert receiver.intake.totals[
        f"body over the {LIMIT}-byte limit once decompressed"] == 1
    good = gzip.compress(trace_request(agent_trace(1)).SerializeToString())
    assert _post(receiver, good, **{"Content-Encoding": "gzip"}) == 200
    assert len(_raw_files(receiver.intake.store)) == 1  # the good batch only


@pytest.mark.parametrize("length", ["-1", "abc", "1e3", "+5", " -0"])
def test_given_a_content_length_that_is_no_byte_count_when_posted_then_400_and_nothing_is_read(
        receiver: Receiver, length: str) -> None:
    assert _send(receiver, _head(length), b"x" * 4096) == 400
    assert receiver.intake.totals[f"corrupt batch (Content-Length {length.strip()!r} "
                                  "is not a byte count)"] == 1
    assert _raw_files(receiver.intake.store) == []
    assert _post(receiver, trace_request(agent_trace(2)).SerializeToString()) == 200


def test_given_chunked_bodies_when_posted_then_one_within_the_cap_is_stored_and_one_over_is_413(
        receiver: Receiver) -> None:
    body = trace_request(agent_trace(3)).SerializeToString()
    assert _send(receiver, _head(chunked=True), _chunked(body, 100)) == 200
    assert _send(receiver, _head(chunked=True), _chunked(b"x" * (LIMIT + 1), 65536)) == 413
    assert _send(receiver, _head(chunked=True), b"zz\r\nxx\r\n0\r\n\r\n") == 400
    assert _send(receiver, _head(), b"") == 411  # neither a length nor chunks
    receiver.intake.flush()
    assert len(_raw_files(receiver.intake.store)) == 1
    assert _runs(receiver.intake.store) == 1
    assert receiver.intake.totals["spans"] == len(agent_trace(3))


def test_given_ipv6_loopback_when_a_batch_is_posted_then_it_is_mapped(tmp_path: Path) -> None:
    r = Receiver(Intake(tmp_path / "store"), host="::1", port=0).start()
    try:
        assert r.endpoint == f"http://[::1]:{r.port}"
        assert _post(r, trace_request(agent_trace(4)).SerializeToString()) == 200
    finally:
        r.stop()
    assert _runs(tmp_path / "store") == 1


def test_given_a_corrupt_raw_batch_when_remapped_twice_then_it_is_named_once_and_set_aside(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    with Intake(store) as intake:
        intake.take(trace_request(agent_trace(5)).SerializeToString(), signal="traces", fmt="pb")
        intake.take(b"\xff" * 100_000, signal="traces", fmt="pb")
    bad = [p for p in _raw_files(store) if p.stat().st_size == 100_000]
    assert len(bad) == 1
    _, first = remap(store)
    named = [why for why in first.problems if bad[0].name in why]
    assert named and "quarantine" in named[0], first.problems
    assert (store / "ingest" / "quarantine" / bad[0].name).is_file()
    _, second = remap(store)
    assert second.problems == {} and len(second.runs) == 1, second.problems
