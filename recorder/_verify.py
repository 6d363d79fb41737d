"""``verify_run``: walk one run's audit chain (``recorder._chain``), name the first break."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from footprint.events import TERMINAL_TYPES
from recorder._catalog import Store
from recorder._chain import CHAIN_FORMAT, envelope_canonical, frame, record_canonical, row_check
from recorder._derived import DERIVED_COLUMNS, derived_mismatch
from recorder._rows import BLOB_KEY, ENVELOPE_NAMES

__all__ = ["VerifyResult", "verify_run"]

_TYPE, _SEQ = ENVELOPE_NAMES.index("type"), ENVELOPE_NAMES.index("seq")


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyResult:
    """The verdict on one run's chain.

    ``reason`` is ``hash mismatch`` (the record's bytes changed: its row
    check, or the head over it), ``chain broken`` (its ``prev_check`` is not
    the previous record's row check), ``missing record`` (a seq is absent and
    the chain does not bridge it), ``duplicate record``, ``blob mismatch`` or
    ``unknown chain format`` (written by another version). ``skipped`` counts seqs the
    writer itself never received (overflow or a processor's DROP): the chain
    bridges those, so they are reported, not failed. ``dropped`` (the
    recorder's full buffer, or an event that could not be stored) and
    ``filtered`` (processors) are the run's counts from the store's stats:
    a valid chain with any of the three is valid but *incomplete* evidence
    (:attr:`complete` is ``False``): what is there is untouched, not all is there.
    """

    run_id: str
    valid: bool
    records: int
    broken_seq: int | None = None
    reason: str | None = None
    detail: str = ""
    skipped: int = 0
    dropped: int = 0
    filtered: int = 0

    @property
    def complete(self) -> bool:
        """Valid, and nothing of the run was dropped, filtered or never received."""
        return self.valid and not (self.skipped or self.dropped or self.filtered)

    def summary(self) -> str:
        """One line: ``valid, N records``, ``valid, N records; INCOMPLETE evidence: …``
        or ``broken at seq S: reason (detail)``."""
        if self.valid:
            gaps = [f"{n} {what}" for n, what in (
                (self.dropped, "events dropped by the recorder"),
                (self.filtered, "filtered by processors"),
                (self.skipped, "seqs never recorded")) if n]
            extra = f"; INCOMPLETE evidence: {', '.join(gaps)}" if gaps else ""
            return f"valid, {self.records} records{extra}"
        tail = f" ({self.detail})" if self.detail else ""
        return f"broken at seq {self.broken_seq}: {self.reason}{tail}"


def verify_run(store: Store, run_id: str) -> VerifyResult:
    """Walk ``run_id``'s records in seq order against its row checks and its heads.

    Each row's ``prev_check``/``row_check`` are recomputed from its payload,
    and at every seq where the writer stored a head, the SHA-256 over the
    run's framed canonical records so far must equal it (a tail cut off
    after a head is missing). Then every blob the run references is checked.
    """
    rows = store.rows(
        f"SELECT {', '.join(ENVELOPE_NAMES)}, payload, prev_check, row_check, "
        f"{', '.join(DERIVED_COLUMNS)} FROM _events_all WHERE run_id = ? ORDER BY seq",
        [run_id],
    )
    heads = _heads(store, run_id)
    if isinstance(heads, VerifyResult):
        return heads
    refs: dict[str, int] = {}
    walked = _walk(run_id, rows, heads, refs)
    if isinstance(walked, VerifyResult):
        return walked
    unheaded = _unheaded_end(store, run_id, rows, walked.block)
    if unheaded is not None:
        return unheaded
    derived = _first_bad_column(run_id, rows)
    if derived is not None:
        return derived
    bad_blob = _first_bad_blob(store, refs)
    if bad_blob is not None:
        return _broken(run_id, len(rows), refs[bad_blob], "blob mismatch",
                       f"blob {bad_blob[:12]}… is missing or its text does not hash to its id")
    dropped, filtered = _drops(store, run_id)
    return VerifyResult(run_id=run_id, valid=True, records=len(rows), skipped=walked.skipped,
                        dropped=dropped, filtered=filtered)


def _unheaded_end(store: Store, run_id: str, rows: list[tuple[Any, ...]],
                  block: int | None) -> VerifyResult | None:
    """Records of an ended run that no head covers: the writer heads every batch it
    writes, so these were added, or their head removed, after it wrote them.

    Not while they are all still in a live segment: a writer writes a batch's rows,
    then its heads, so a reader between the two sees the rows alone."""
    if block is None:
        return None
    end = next((int(r[_SEQ]) for r in rows if r[_TYPE] in TERMINAL_TYPES), None)
    if end is None:
        return None  # a run in flight: its newest records wait for the next head
    (live,) = store.rows("SELECT count(*) FROM _live_events WHERE run_id = ? AND seq >= ?",
                         [run_id, block])[0]
    if live == sum(1 for r in rows if r[_SEQ] >= block):
        return None
    last = rows[-1][_SEQ]
    if block > end:
        why = (f"seq {block}..{last} follow the run's end (seq {end}) and no stored head "
               "covers them: appended after the run ended")
    else:
        why = (f"seq {block}..{last} of this ended run are covered by no stored head (their "
               "head was removed, or the writer failed to hash them)")
    return _broken(run_id, len(rows), block, "chain broken", why)


def _drops(store: Store, run_id: str) -> tuple[int, int]:
    """The run's ``(dropped, filtered)`` counts from the store's stats."""
    found = store.rows("SELECT dropped, filtered FROM runs WHERE run_id = ?", [run_id])
    return (int(found[0][0]), int(found[0][1])) if found else (0, 0)


def _heads(store: Store, run_id: str) -> dict[int, tuple[bytes, str]] | VerifyResult:
    found = store.rows("SELECT last_seq, head, segment, format FROM _chain_all WHERE run_id = ?",
                       [run_id])
    for seq, _, segment, kind in found:
        if kind != CHAIN_FORMAT:
            return _broken(run_id, 0, int(seq), "unknown chain format",
                           f"segment {segment} was written in chain format {kind or '1'!r}; "
                           f"this footprint checks {CHAIN_FORMAT!r} — verify it with the "
                           "footprint version that recorded it")
    return {int(seq): (bytes(head), str(segment)) for seq, head, segment, _ in found}


class _Walk:
    """The state of one run's walk: the last check, the next seq, the open head block."""

    __slots__ = ("block", "check", "expected", "skipped", "stream")

    def __init__(self) -> None:
        self.check, self.expected, self.skipped = 0, 0, 0
        self.block: int | None = None
        self.stream = hashlib.sha256()


def _walk(
    run_id: str, rows: list[tuple[Any, ...]], heads: dict[int, tuple[bytes, str]],
    refs: dict[str, int],
) -> VerifyResult | _Walk:
    """The chain walk: the first broken record's verdict, or where the walk ended."""
    n = len(ENVELOPE_NAMES)
    walk = _Walk()
    for row in rows:
        env = dict(zip(ENVELOPE_NAMES, row[:n], strict=True))
        payload, stored_prev, stored = str(row[n]), row[n + 1], row[n + 2]
        seq = int(env["seq"])
        broken = _link_problem(seq, walk.expected, walk.check, stored_prev)
        if broken is not None:
            return VerifyResult(run_id=run_id, valid=False, records=len(rows), **broken)
        walk.skipped += seq - walk.expected
        check = row_check(payload)
        if check != stored:
            return _broken(run_id, len(rows), seq, "hash mismatch",
                           "the stored payload no longer matches its row check")
        walk.stream.update(frame(record_canonical(envelope_canonical(env), payload)))
        walk.block = seq if walk.block is None else walk.block
        sealed = heads.pop(seq, None)
        if sealed is not None:
            if walk.stream.copy().digest() != sealed[0]:
                return _broken(run_id, len(rows), walk.block, "hash mismatch",
                               f"seq {walk.block}..{seq} no longer hash to the head stored in "
                               f"segment {sealed[1]}; their payloads check out, so an envelope "
                               "value or the head itself changed")
            walk.block = None
        walk.check, walk.expected = check, seq + 1
        _collect_refs(payload, seq, refs)
    if heads:
        last, (_, segment) = max(heads.items())
        return _broken(run_id, len(rows), walk.expected, "missing record",
                       f"seq {walk.expected}..{last} absent; segment {segment} stored the "
                       f"run's head up to seq {last}")
    return walk


def _broken(run_id: str, records: int, seq: int, reason: str, detail: str) -> VerifyResult:
    return VerifyResult(
        run_id=run_id, valid=False, records=records, broken_seq=seq, reason=reason, detail=detail
    )


def _link_problem(
    seq: int, expected: int, prev: int, stored_prev: object
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
            "detail": "prev_check differs from the previous record's row check"}


def _first_bad_column(run_id: str, rows: list[tuple[Any, ...]]) -> VerifyResult | None:
    """The first row whose hot columns or ``admitted_by`` disagree with its payload."""
    at = len(ENVELOPE_NAMES)
    for row in rows:
        column = derived_mismatch(str(row[at]), row[at + 3:])
        if column is not None:
            return _broken(run_id, len(rows), int(row[_SEQ]), "hash mismatch",
                           f"column {column} no longer matches the payload it was lifted from")
    return None


def _collect_refs(payload: str, seq: int, refs: dict[str, int]) -> None:
    if BLOB_KEY not in payload:
        return
    for value in json.loads(payload).values():
        if isinstance(value, dict) and isinstance(value.get(BLOB_KEY), str):
            refs.setdefault(value[BLOB_KEY], seq)


def _first_bad_blob(store: Store, refs: dict[str, int]) -> str | None:
    if not refs:
        return None
    good: set[str] = set()
    bad: set[str] = set()
    # every stored copy (another writer may have stored the same text): one edited copy
    # is a mismatch whichever copy the views happen to read
    for digest, text in store.rows("SELECT hash, text FROM _blobs_all WHERE hash IN ?",
                                   [sorted(refs)]):
        ok = hashlib.sha256(str(text).encode("utf-8")).hexdigest() == digest
        (good if ok else bad).add(str(digest))
    bad |= refs.keys() - good  # absent
    return min(bad, key=refs.__getitem__) if bad else None
