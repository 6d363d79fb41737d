"""Planted secrets never reach any file in the store, while their hashes still join."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from store_bytes import every_byte

from footprint.events import (
    ContextInjected,
    Event,
    InjectionDeclared,
    LLMStart,
    RunEnd,
    RunStart,
    ToolEnd,
    ToolStart,
)
from recorder import ParquetSink, Recorder, Redactor, open_store

API_KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0KLmnOPqr"
PASSWORD = "correct-horse-battery-staple"
AWS = "AKIAIOSFODNN7EXAMPLE"


def _run() -> list[Event]:
    r, t = "run-secret", 1_700_000_000_000_000_000
    long_result = "customer record " * 30 + f"aws={AWS} " + "padding " * 10
    return [
        RunStart(run_id=r, seq=0, ts=t, user_message=f"my key is {API_KEY}, please help"),
        InjectionDeclared(run_id=r, seq=1, ts=t + 1, injection_id="fact-1", flavor="fact",
                          trigger_kind="always", content_hash="c0ffee"),
        ContextInjected(run_id=r, seq=2, ts=t + 2, slot="system-prompt", source="fact",
                        content_hash="c0ffee", content_summary="policy", reason="always",
                        admitted_via="always", injection_id="fact-1",
                        raw_content=f"Use {API_KEY} for the billing API."),
        LLMStart(run_id=r, seq=3, ts=t + 3, provider="scripted", model="m",
                 request_hash="rq1", request_ref=f'{{"system": "key {API_KEY}"}}' * 20),
        ToolStart(run_id=r, seq=4, ts=t + 4, tool_name="login", tool_call_id="c1",
                  args={"user": "ann", "password": PASSWORD, "note": f"token {API_KEY}"}),
        ToolEnd(run_id=r, seq=5, ts=t + 5, tool_call_id="c1", tool_name="login",
                result=long_result),
        RunEnd(run_id=r, seq=6, ts=t + 6, final_content="done"),
    ]


def _record(root: Path, processors: list[Redactor]) -> None:
    with Recorder([ParquetSink(root, blob_min_chars=64)], processors) as rec:
        for e in _run():
            rec.emit(e)


@pytest.mark.parametrize("sealed", [True, False])
def test_given_planted_secrets_when_redacted_then_no_store_file_holds_them(
    tmp_path: Path, sealed: bool
) -> None:
    root = tmp_path / "store"
    if sealed:
        _record(root, [Redactor(paths=["tool.start:args.password"])])
    else:  # still live: flushed into the Arrow stream, not yet sealed
        rec = Recorder([ParquetSink(root, blob_min_chars=64)],
                       [Redactor(paths=["tool.start:args.password"])])
        for e in _run()[:-1]:
            rec.emit(e)
        assert rec.flush()
    blob = every_byte(root)
    for secret in (API_KEY, PASSWORD, AWS):
        assert secret.encode() not in blob
        assert hashlib.sha256(secret.encode()).hexdigest().encode() not in blob  # keyed
        assert Redactor().marker(secret).encode() in blob


def test_given_no_redactor_when_recorded_then_the_same_search_finds_the_secrets(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _record(root, [])
    blob = every_byte(root)
    assert all(s.encode() in blob for s in (API_KEY, PASSWORD, AWS))


def test_given_redacted_text_when_queried_then_hashes_still_join(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _record(root, [Redactor(paths=["tool.start:args.password"])])
    store = open_store(root)
    joined = store.rows(
        "SELECT i.injection_id, d.seq FROM injections i JOIN events d "
        "ON d.type = 'injection.declared' AND d.content_hash = i.content_hash"
    )
    assert joined == [("fact-1", 1)]
    key_hash = Redactor().marker(API_KEY)
    hits = store.rows(
        "SELECT seq FROM events WHERE payload LIKE ? UNION "
        "SELECT e.seq FROM events e JOIN blobs b ON e.payload LIKE '%' || b.hash || '%' "
        "WHERE b.text LIKE ? ORDER BY 1",
        [f"%{key_hash}%", f"%{key_hash}%"],
    )
    assert [s for (s,) in hits] == [0, 2, 3, 4]
    args = store.rows("SELECT args FROM tool_calls")[0][0]
    assert Redactor().marker(PASSWORD) in args
