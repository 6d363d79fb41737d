"""Redaction on intake: an API key in a foreign span's message and in its tool result reaches
no file of the store — raw batches, events, blobs, chains — through the receiver (protobuf
and gzipped OTLP/JSON), `footprint ingest --redact` and `--remap --redact`; every byte of
every file and every decoded cell is searched."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from otlp_build import agent_trace, to_json, trace_request
from store_bytes import every_byte

from recorder import Redactor, open_store
from recorder.ingest import Intake, Receiver, remap

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-proj-Intak3K3yK3yK3y0123456789"
SSN = "078-05-1120"


def _leaky(trace: int) -> list[dict[str, Any]]:
    """An agent trace whose user message and tool results carry the key."""
    spans = [dict(s) for s in agent_trace(trace, calls=2)]
    for span in spans:
        span["attributes"] = {
            k: v.replace("refund A-1?", f"refund A-1? my key is {SECRET}").replace(
                '\\"amount\\": 1', f'\\"amount\\": 1, \\"key\\": \\"{SECRET}\\"').replace(
                '"amount": 1', f'"amount": 1, "key": "{SECRET}", "ssn": "{SSN}"')
            if isinstance(v, str) else v for k, v in span["attributes"].items()}
    return spans


def _fragments(secret: str, size: int = 12) -> list[bytes]:
    return [secret[i:i + size].encode() for i in range(len(secret) - size + 1)]


def _leaks(store: Path) -> list[bytes]:
    held = every_byte(store)
    return [piece for piece in _fragments(SECRET) if piece in held]


def _marked(store: Path) -> bool:
    """The runs were mapped, with the key's place marked (not dropped)."""
    with open_store(store) as s:
        texts = [r[0] for r in s.rows("SELECT coalesce(raw_content, '') FROM injections")]
    return any("[redacted hmac-sha256:" in t for t in texts)


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "control"])
def test_given_a_key_in_a_foreign_message_and_tool_result_when_received_then_no_file_holds_it(
        tmp_path: Path, redact: bool) -> None:
    assert SECRET in json.dumps(_leaky(1))
    store = tmp_path / "store"
    processors = [Redactor()] if redact else []
    r = Receiver(Intake(store, processors=processors), port=0).start()
    try:
        pb = trace_request(_leaky(1)).SerializeToString()
        assert httpx.post(r.endpoint + "/v1/traces", content=pb, timeout=10, headers={
            "Content-Type": "application/x-protobuf"}).status_code == 200
        js = gzip.compress(to_json(trace_request(_leaky(2))))
        assert httpx.post(r.endpoint + "/v1/traces", content=js, timeout=10, headers={
            "Content-Type": "application/json", "Content-Encoding": "gzip"}).status_code == 200
    finally:
        r.stop()
    assert len(list((store / "ingest" / "raw").rglob("*.traces.*"))) == 2
    if not redact:  # the control: the same search finds the key when nothing redacts
        assert _leaks(store)
        return
    assert _leaks(store) == []
    assert _marked(store)
    remap(store, processors=processors)  # mapped again from the redacted raw batches
    assert _leaks(store) == [] and _marked(store)


def _footprint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_given_the_store_redaction_when_ingest_and_remap_redact_then_paths_and_patterns_hold(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "redaction.json").write_text(json.dumps({"paths": ["tool.end:result.ssn"]}))
    lines = tmp_path / "traces.jsonl"
    lines.write_bytes(to_json(trace_request(_leaky(3))) + b"\n")
    done = _footprint("ingest", str(lines), "--redact", "--store", str(store))
    assert done.returncode == 0 and "1 runs mapped" in done.stdout, done.stdout + done.stderr
    assert _leaks(store) == [] and _marked(store)
    with open_store(store) as s:
        results = [r[0] for r in s.rows("SELECT result FROM tool_calls")]
    assert results and SSN not in results[0] and "[redacted hmac-sha256:" in results[0], results
    # a store first filled without redaction: --remap --redact rewrites its raw batches
    plain = tmp_path / "plain"
    assert _footprint("ingest", str(lines), "--store", str(plain)).returncode == 0
    assert _leaks(plain)
    done = _footprint("ingest", "--remap", "--redact", "--store", str(plain))
    assert done.returncode == 0 and "1 runs mapped" in done.stdout, done.stdout + done.stderr
    assert _leaks(plain) == []
