"""``verify_run``: walk one run's hash chain and name the first broken record."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from recorder._catalog import Store
from recorder._chain import GENESIS, envelope_canonical, link_hash, locator, record_canonical
from recorder._rows import BLOB_KEY, ENVELOPE_NAMES

__all__ = ["VerifyResult", "verify_run"]


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyResult:
    """The verdict on one run's chain.

    ``reason`` is ``hash mismatch`` (the record's bytes changed),
    ``chain broken`` (its ``prev_hash`` is not the previous record's hash),
    ``missing record`` (a seq is absent and the chain does not bridge it),
    ``duplicate record`` or ``blob mismatch``. ``skipped`` counts seqs the
    writer itself never received (overflow or a processor's DROP): the chain
    bridges those, so they are reported, not failed.
    """

    run_id: str
    valid: bool
    records: int
    broken_seq: int | None = None
    reason: str | None = None
    detail: str = ""
    skipped: int = 0

    def summary(self) -> str:
        """One line: ``valid, N records`` or ``broken at seq S: reason (detail)``."""
        if self.valid:
            extra = f" ({self.skipped} seqs never recorded)" if self.skipped else ""
            return f"valid, {self.records} records{extra}"
        tail = f" ({self.detail})" if self.detail else ""
        return f"broken at seq {self.broken_seq}: {self.reason}{tail}"


def verify_run(store: Store, run_id: str) -> VerifyResult:
    """Recompute every link of ``run_id``'s chain in seq order, then check its blobs.

    Each row's ``prev_hash``/``hash`` locators are checked against the full
    recomputed chain, and where a sealed segment recorded the run's chain
    head, the full 32-byte link is checked too (a tail cut off is missing).
    """
    rows = store.rows(
        f"SELECT {', '.join(ENVELOPE_NAMES)}, payload, prev_hash, hash FROM _events_all "
        "WHERE run_id = ? ORDER BY seq",
        [run_id],
    )
    heads: dict[int, tuple[bytes, str]] = {
        int(seq): (bytes(head), str(segment)) for seq, head, segment in store.rows(
            "SELECT last_seq, head, segment FROM _chain_all WHERE run_id = ?", [run_id])
    }
    refs: dict[str, int] = {}
    walked = _walk(run_id, rows, heads, refs)
    if isinstance(walked, VerifyResult):
        return walked
    bad_blob = _first_bad_blob(store, refs)
    if bad_blob is not None:
        return _broken(run_id, len(rows), refs[bad_blob], "blob mismatch",
                       f"blob {bad_blob[:12]}… is missing or its text does not hash to its id")
    return VerifyResult(run_id=run_id, valid=True, records=len(rows), skipped=walked)


def _walk(
    run_id: str, rows: list[tuple[Any, ...]], heads: dict[int, tuple[bytes, str]],
    refs: dict[str, int],
) -> VerifyResult | int:
    """The chain walk: the first broken record's verdict, or the number of bridged seqs."""
    n = len(ENVELOPE_NAMES)
    prev, expected, skipped = GENESIS, 0, 0
    for row in rows:
        env = dict(zip(ENVELOPE_NAMES, row[:n], strict=True))
        payload, stored_prev, stored = str(row[n]), bytes(row[n + 1]), bytes(row[n + 2])
        seq = int(env["seq"])
        broken = _link_problem(seq, expected, locator(prev), stored_prev)
        if broken is not None:
            return VerifyResult(run_id=run_id, valid=False, records=len(rows), **broken)
        skipped += seq - expected
        digest = link_hash(prev, record_canonical(envelope_canonical(env), payload))
        sealed = heads.pop(seq, None)
        if locator(digest) != stored or (sealed is not None and sealed[0] != digest):
            why = ("the stored bytes no longer hash to the stored hash" if sealed is None else
                   f"the stored bytes no longer hash to the chain head sealed in {sealed[1]}")
            return _broken(run_id, len(rows), seq, "hash mismatch", why)
        prev, expected = digest, seq + 1
        _collect_refs(payload, seq, refs)
    if heads:
        last, (_, segment) = max(heads.items())
        return _broken(run_id, len(rows), expected, "missing record",
                       f"seq {expected}..{last} absent; segment {segment} sealed the chain "
                       f"up to seq {last}")
    return skipped


def _broken(run_id: str, records: int, seq: int, reason: str, detail: str) -> VerifyResult:
    return VerifyResult(
        run_id=run_id, valid=False, records=records, broken_seq=seq, reason=reason, detail=detail
    )


def _link_problem(
    seq: int, expected: int, prev: bytes, stored_prev: bytes
) -> dict[str, Any] | None:
    if seq < expected:
        return {"broken_seq": seq, "reason": "duplicate record",
                "detail": f"seq {seq} is stored more than once"}
    if stored_prev == prev:
        return None
    if seq > expected:
        return {"broken_seq": expected, "reason": "missing record",
                "detail": f"seq {expected}..{seq - 1} absent and the chain does not bridge them"}
    return {"broken_seq": seq, "reason": "chain broken",
            "detail": "prev_hash differs from the previous record's hash"}


def _collect_refs(payload: str, seq: int, refs: dict[str, int]) -> None:
    if BLOB_KEY not in payload:
        return
    for value in json.loads(payload).values():
        if isinstance(value, dict) and isinstance(value.get(BLOB_KEY), str):
            refs.setdefault(value[BLOB_KEY], seq)


def _first_bad_blob(store: Store, refs: dict[str, int]) -> str | None:
    if not refs:
        return None
    found = dict(store.rows("SELECT hash, text FROM blobs WHERE hash IN ?", [sorted(refs)]))
    for digest in sorted(refs, key=refs.__getitem__):
        text = found.get(digest)
        if text is None or hashlib.sha256(str(text).encode("utf-8")).hexdigest() != digest:
            return str(digest)
    return None
