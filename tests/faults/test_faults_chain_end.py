"""The chain proves the end, and a key proves the writer.

A record forged after ``run.end`` — in a made-up live segment named after a
pid that runs (pid 1), or appended to the sealed file with the heads
recomputed from what the store itself holds — is named by ``verify``. The
limit of a chain without a secret is shown too: a run rewritten whole,
heads recomputed, still verifies without a key; with the writer's key
(``ParquetSink(chain_key=…)``, ``footprint verify --key-file``) it does not.
"""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from footprint import ConfigError
from footprint.events import Event, RunEnd, RunStart, ToolEnd
from recorder import ParquetSink, Recorder, open_store, row_check, verify_run
from recorder.write._chain import envelope_values_canonical, frame, record_canonical
from recorder.write._rows import CHAIN_SCHEMA, ENVELOPE_NAMES, EVENT_SCHEMA

T0 = 1_700_000_000_000_000_000
RUN = "run-end"
KEY = b"k" * 32
FORGED = '{"duration_ms":0.0,"error":false,"result":"issue_refund(100000 -> attacker)",' \
         '"status":null,"step_note":null,"tool_call_id":"c99","tool_name":"issue_refund"}'


def _events(n: int = 12) -> list[Event]:
    body: list[Event] = [RunStart(run_id=RUN, seq=0, ts=T0, user_message="refund?")]
    body += [ToolEnd(run_id=RUN, seq=i, ts=T0 + i, tool_call_id=f"c{i}", tool_name="lookup",
                     result=f"r{i}") for i in range(1, n - 1)]
    return [*body, RunEnd(run_id=RUN, seq=n - 1, ts=T0 + n, final_content="no refund")]


def _record(root: Path, key: bytes | None = None) -> None:
    with Recorder([ParquetSink(root, chain_key=key)]) as rec:
        for e in _events():
            rec.emit(e)


def _sealed(root: Path) -> tuple[Path, pa.Table]:
    (path,) = (root / "events").rglob("*.parquet")
    return path, pq.read_table(path, partitioning=None).sort_by("seq")


def _forged_row(last: dict[str, object], seq: int, prev: object) -> dict[str, object]:
    return {**last, "seq": seq, "type": "tool.end", "tool_name": "issue_refund",
            "tool_call_id": "c99", "payload": FORGED, "prev_check": prev,
            "row_check": row_check(FORGED)}


def _heads(rows: list[dict[str, object]], key: bytes | None = None) -> list[bytes]:
    """The head after each row, recomputed from the stored rows (no secret needed)."""
    stream, out = hashlib.sha256(), []
    for row in rows:
        env = envelope_values_canonical([row[n] for n in ENVELOPE_NAMES])  # type: ignore[misc]
        stream.update(frame(record_canonical(env, str(row["payload"]))))
        digest = stream.copy().digest()
        out.append(digest if key is None else hmac.new(key, digest, hashlib.sha256).digest())
    return out


def _write_chain(path: Path, segment: str, heads: list[tuple[int, bytes]], fmt: str) -> None:
    pq.write_table(pa.table({
        "run_id": [RUN] * len(heads), "segment": [segment] * len(heads),
        "last_seq": pa.array([s for s, _ in heads], pa.int64()),
        "head": pa.array([h for _, h in heads], pa.binary(32)),
        "format": [fmt] * len(heads)}, schema=CHAIN_SCHEMA.with_metadata(
            {b"footprint.store": b"chain"})), path)


def test_given_a_row_forged_after_the_end_in_a_fake_live_segment_of_pid_1_when_verified_then_named(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _record(root)
    _, table = _sealed(root)
    last = table.to_pylist()[-1]
    forged = _forged_row(last, int(last["seq"]) + 1, last["row_check"])
    forged.pop("date", None)
    live = root / "live" / "20260101T000000-1-deadbeef-00001.events.arrows"
    live.parent.mkdir(exist_ok=True)
    with pa.OSFile(str(live), "wb") as sink, pa.ipc.new_stream(sink, EVENT_SCHEMA) as writer:
        writer.write_table(pa.Table.from_pylist([forged], schema=EVENT_SCHEMA))
    result = verify_run(open_store(root), RUN)
    assert (result.valid, result.broken_seq, result.reason) == (False, 12, "chain broken")
    assert "after the run ended" in result.detail
    doctor = subprocess.run([sys.executable, "-m", "lens.cli", "doctor", "--store", str(root)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert doctor.returncode == 1 and "20260101T000000-1-deadbeef-00001" in doctor.stdout


def test_given_a_row_appended_to_the_sealed_file_with_heads_recomputed_when_verified_then_named(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _record(root)
    path, table = _sealed(root)
    rows = table.to_pylist()
    rows.append(_forged_row(rows[-1], int(rows[-1]["seq"]) + 1, rows[-1]["row_check"]))
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    (chain,) = (root / "chain").glob("*.parquet")
    heads = _heads(rows)
    _write_chain(chain, chain.stem, [(int(r["seq"]), h) for r, h in zip(rows, heads,
                                                                          strict=True)],
                 "footprint-chain/2")
    result = verify_run(open_store(root), RUN)
    assert (result.valid, result.broken_seq) == (False, 12), result.summary()
    assert "after the run ended" in result.detail
    shown = subprocess.run([sys.executable, "-m", "lens.cli", "verify", RUN, "--store",
                            str(root)], capture_output=True, text=True, timeout=120,
                           check=False)
    assert shown.returncode == 1 and "seq 12" in shown.stdout, shown.stdout + shown.stderr


def _rewrite_tail(root: Path, key: bytes | None) -> None:
    """Insert a forged record before the end, re-check every later row, recompute every
    head (with ``key``: the HMACs; without: the plain digests) — a whole-run rewrite."""
    path, table = _sealed(root)
    rows = table.to_pylist()
    end = rows.pop()
    forged = _forged_row(rows[-1], int(end["seq"]), rows[-1]["row_check"])
    end = {**end, "seq": int(end["seq"]) + 1, "prev_check": forged["row_check"]}
    rows += [forged, end]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    (chain,) = (root / "chain").glob("*.parquet")
    fmt = "footprint-chain/2" if key is None else "footprint-chain/2+hmac-sha256"
    heads = _heads(rows, key)
    _write_chain(chain, chain.stem, [(int(rows[-1]["seq"]), heads[-1])], fmt)


def test_given_a_run_rewritten_with_recomputed_heads_when_verified_without_a_key_then_it_passes(
    tmp_path: Path,
) -> None:
    """The documented limit: without a secret, whoever rewrites a run and its heads wins."""
    root = tmp_path / "store"
    _record(root)
    _rewrite_tail(root, None)
    assert verify_run(open_store(root), RUN).valid


def test_given_a_keyed_run_when_verified_with_the_key_then_valid_and_without_it_refused(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _record(root, KEY)
    chain = pq.read_table(next((root / "chain").glob("*.parquet")), columns=["format"])
    (fmt,) = set(chain["format"].to_pylist())
    assert fmt == "footprint-chain/2+hmac-sha256"
    store = open_store(root)
    assert verify_run(store, RUN, key=KEY).valid
    with pytest.raises(ConfigError, match="recorded with a chain key"):
        verify_run(store, RUN)
    wrong = verify_run(store, RUN, key=b"w" * 32)
    assert not wrong.valid and "key is not the one" in wrong.detail
    key_file = tmp_path / "chain.key"
    key_file.write_bytes(KEY + b"\n")
    done = subprocess.run([sys.executable, "-m", "lens.cli", "verify", RUN, "--key-file",
                           str(key_file), "--store", str(root)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "valid" in done.stdout, done.stdout + done.stderr
    refused = subprocess.run([sys.executable, "-m", "lens.cli", "verify", RUN, "--store",
                              str(root)], capture_output=True, text=True, timeout=120,
                             check=False)
    assert refused.returncode == 2 and "--key-file" in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("forger_key", [None, b"f" * 32])
def test_given_a_keyed_run_rewritten_by_someone_without_the_key_when_verified_then_broken(
    tmp_path: Path, forger_key: bytes | None,
) -> None:
    root = tmp_path / "store"
    _record(root, KEY)
    _rewrite_tail(root, forger_key)  # plain heads, or HMACs under a guessed key
    result = verify_run(open_store(root), RUN, key=KEY)
    assert not result.valid and result.reason == "hash mismatch", result.summary()


def test_given_a_chain_key_too_short_when_a_sink_is_made_then_config_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="at least 16 bytes"):
        ParquetSink(tmp_path / "store", chain_key=b"short")
