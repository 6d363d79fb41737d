"""``verify_run``: walk one run's audit chain (``recorder.write._chain``), name the first break."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa

from footprint._errors import ConfigError
from footprint.events import TERMINAL_TYPES
from recorder.store._catalog import Store
from recorder.store._damage import guarded
from recorder.store._derived import DERIVED_COLUMNS, DerivedCheck
from recorder.store._rows_check import where
from recorder.store._stopped import stopped_writer
from recorder.write._adopt import writer_alive, writer_of
from recorder.write._chain import (
    AFTER_END_TYPES,
    CHAIN_FORMAT,
    ENVELOPE_ORDER,
    KEY_ENV,
    KEYED_FORMAT,
    chain_key,
    envelope_values_canonical,
    frame,
    keyed_head,
    record_canonical,
    row_check,
)
from recorder.write._rows import BLOB_KEY, ENVELOPE_NAMES
from recorder.write._scorehead import SCORE_HEADS, ScoreHead, read_score_head, score_head

__all__ = ["INCOMPLETE", "WINDOW", "ChainTail", "Progress", "VerifyResult", "chain_tail",
           "verify_run"]

_TYPE, _SEQ = ENVELOPE_NAMES.index("type"), ENVELOPE_NAMES.index("seq")
FEEDBACK = "feedback.recorded"
assert ENVELOPE_NAMES == ENVELOPE_ORDER, "the store's envelope columns are in canonical order"


INCOMPLETE = "incomplete"
"""The reason of a run whose last batch its writer stored but died before heading: a crash,
not a tamper (``recorder.store._stopped``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyResult:
    """The verdict on one run's chain.

    ``reason`` is ``hash mismatch`` (the record's bytes changed: its row
    check, or the head over it), ``chain broken`` (its ``prev_check`` is not
    the previous record's row check), ``missing record`` (a seq is absent and
    the chain does not bridge it), ``duplicate record``, ``blob mismatch`` or
    ``unknown chain format`` (written by another version), or :data:`INCOMPLETE`: the
    writer was killed between storing its last batch and its head (:attr:`interrupted`;
    the run is not proven past the last head, and nothing was tampered). ``skipped`` counts seqs the
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
    note: str = ""
    """What the verdict cannot vouch for beyond the records (e.g. that no score was removed
    from a run scored before the store kept score heads)."""

    @property
    def interrupted(self) -> bool:
        """Broken only because its writer died before heading its last batch."""
        return self.reason == INCOMPLETE

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
            note = f"; {self.note}" if self.note else ""
            return f"valid, {self.records} records{extra}{note}"
        if self.interrupted:
            return f"incomplete: {self.detail}"
        tail = f" ({self.detail})" if self.detail else ""
        return f"broken at seq {self.broken_seq}: {self.reason}{tail}"


Progress = Callable[[int, int], object]
"""``progress(rows_done, rows_total)``, called after each window of rows."""

WINDOW = 32_768
"""Seqs read per query: the walk holds one window of rows in memory, never the run."""

COLUMNS = (*ENVELOPE_NAMES, "payload", "prev_check", "row_check", *DERIVED_COLUMNS)


def verify_run(store: Store, run_id: str, *, progress: Progress | None = None,
               window: int | None = None, key: bytes | str | None = None) -> VerifyResult:
    """Walk ``run_id``'s records in seq order against its row checks and its heads.

    Each row's ``prev_check``/``row_check`` are recomputed from its payload,
    and at every seq where the writer stored a head, the SHA-256 over the
    run's framed canonical records so far must equal it (a tail cut off
    after a head is missing). Records after the run's terminal event must be
    headed too: feedback (:data:`footprint.events.AFTER_END_TYPES`) is written
    that way, chained onto the run after its end. Then every blob the run
    references is checked.
    The rows are read ``window`` seqs at a time (default :data:`WINDOW`;
    bounded memory, streamed from the views, no cached outline trusted);
    ``progress`` hears each window. Nothing but :data:`AFTER_END_TYPES` may follow the
    run's terminal event. With ``key`` (the writer's chain key) every head must be the
    HMAC under it; a run recorded with a key cannot be verified without it.
    """
    return _verify(store, run_id, progress, window, key)[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainTail:
    """Where a run's verified chain stands: what a record appended to it must continue.

    ``stream`` is the running SHA-256 over every record so far (a ``hashlib``
    object; copy it before updating), ``check`` the last row check,
    ``records`` the rows walked, ``next_seq`` the seq the next record takes.
    """

    run_id: str
    records: int
    next_seq: int
    check: int
    stream: Any
    ended: bool


def chain_tail(store: Store, run_id: str, *,
               key: bytes | str | None = None) -> ChainTail | VerifyResult:
    """The run's :class:`ChainTail` after a full :func:`verify_run` walk (``key``: the
    chain key of a keyed store), or the verdict that stops anything from extending it
    (broken, or no such run)."""
    result, walk = _verify(store, run_id, None, None, key)
    if not result.valid or walk is None or walk.rows == 0:
        return result
    return tail_of(walk)


def tail_of(walk: Walk) -> ChainTail:
    """Where a fully walked, unbroken run's chain stands."""
    return ChainTail(run_id=walk.run_id, records=walk.rows, next_seq=walk.expected,
                     check=walk.check, stream=walk.stream.copy(), ended=walk.end is not None)


def _verify(store: Store, run_id: str, progress: Progress | None, window: int | None,
            key: bytes | str | None) -> tuple[VerifyResult, Walk | None]:
    window = WINDOW if window is None else window
    if type(window) is not int or window < 1:
        raise ConfigError(f"verify_run(window={window!r}): pass a positive int (seqs per read)")
    try:
        secret = chain_key(key, origin="verify_run(key=…)")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    heads = _heads(store, run_id, secret)
    if isinstance(heads, VerifyResult):
        return heads, None
    total, lo, hi = _bounds(store, run_id)
    walk = Walk(run_id, total, heads, secret)
    walk.score_at = _score_at(store, run_id)
    for rows in windows(store, run_id, lo, hi, window):
        broken = walk.feed(rows)
        if broken is not None:
            return located(store, broken), None
        if progress is not None:
            progress(walk.rows, total)
    return located(store, _after_walk(store, walk)), walk


def located(store: Store, result: VerifyResult) -> VerifyResult:
    """A broken verdict with where its record is stored (file and row), and the store's
    damaged files named: a file left out may be where the run's missing records were."""
    if result.valid or result.broken_seq is None:
        return result
    notes = []
    if result.reason in ("hash mismatch", "chain broken", "duplicate record", "blob mismatch"):
        notes.append(f"seq {result.broken_seq} is stored in "
                     f"{where(store, result.run_id, result.broken_seq)}")
    damaged = {**store.files.reasons, **store.damaged}
    if damaged:
        shown = "; ".join(f"{path} ({why})" for path, why in sorted(damaged.items())[:3])
        more = f" and {len(damaged) - 3} more" if len(damaged) > 3 else ""
        notes.append(f"damaged store files left out: {shown}{more} — `footprint doctor` "
                     "lists them")
    if not notes:
        return result
    detail = "; ".join([result.detail, *notes] if result.detail else notes)
    return VerifyResult(run_id=result.run_id, valid=False, records=result.records,
                        broken_seq=result.broken_seq, reason=result.reason, detail=detail,
                        skipped=result.skipped, dropped=result.dropped,
                        filtered=result.filtered)


def _after_walk(store: Store, walk: Walk) -> VerifyResult:
    """The verdicts that need the whole walk (:func:`walk_break`); else valid, with the
    run's drops and the note on its scores."""
    broken = walk_break(store, walk, bad_blobs(store, walk.refs))
    if broken is not None:
        return broken
    run_id, total = walk.run_id, walk.total
    dropped, filtered = _drops(store, run_id)
    note = "" if walk.scored or not walk.scores else (
        f"completeness of its {walk.scores} scores unknown (no score head in {SCORE_HEADS}: "
        "scored before footprint kept score heads)")
    return VerifyResult(run_id=run_id, valid=True, records=total, skipped=walk.skipped,
                        dropped=dropped, filtered=filtered, note=note)


def walk_break(store: Store, walk: Walk, bad: set[str]) -> VerifyResult | None:
    """What breaks a fully walked run: heads never reached, records after the last head of
    an ended run, a derived column, a blob among ``bad`` (:func:`bad_blobs`); ``None``:
    nothing."""
    run_id, total = walk.run_id, walk.total
    if walk.heads:
        last, (_, segment) = max(walk.heads.items())
        return _broken(run_id, total, walk.expected, "missing record",
                       f"seq {walk.expected}..{last} absent; segment {segment} stored the "
                       f"run's head up to seq {last}")
    if walk.score_at is not None:
        last, count, _ = walk.score_at
        return _broken(run_id, total, walk.expected, "missing record",
                       f"seq {walk.expected}..{last} absent; the store's score head "
                       f"({SCORE_HEADS}) covers the run up to seq {last} with {count} "
                       "scores: a score, or a score segment, was removed")
    unheaded = _unheaded_end(store, walk)
    if unheaded is not None:
        return unheaded
    if walk.bad_column is not None:
        seq, column = walk.bad_column
        return _broken(run_id, total, seq, "hash mismatch",
                       f"column {column} no longer matches the payload it was lifted from")
    wrong = [digest for digest in walk.refs if digest in bad]
    if wrong:
        first = min(wrong, key=walk.refs.__getitem__)
        return _broken(run_id, total, walk.refs[first], "blob mismatch",
                       f"blob {first[:12]}… is missing or its text does not hash to its id")
    return None


def _score_at(store: Store, run_id: str) -> ScoreHead | None:
    """The run's score head (``recorder.write._scorehead``); ``None`` when there is none,
    or the file does not read (``footprint doctor`` names it)."""
    try:
        return read_score_head(store.root, run_id)
    except (OSError, pa.ArrowException, ValueError):
        return None


def _bounds(store: Store, run_id: str) -> tuple[int, int, int]:
    """``(rows, first seq, last seq)`` of the run, counted from the rows themselves."""
    n, lo, hi = store.rows("SELECT count(*), min(seq), max(seq) FROM _events_all "
                           "WHERE run_id = ?", [run_id])[0]
    return int(n or 0), int(lo or 0), int(hi or 0)


def windows(store: Store, run_id: str, lo: int, hi: int,
             window: int) -> Iterator[list[tuple[Any, ...]]]:
    """The run's rows in seq order, one seq window at a time."""
    select = ", ".join(COLUMNS)
    while lo <= hi:
        # a seq stored twice: the copy with its checks first, so the second reads as the
        # duplicate it is (in scan order a stray copy without checks read as a broken chain)
        table = store.arrow(f"SELECT {select} FROM _events_all WHERE run_id = ? AND seq >= ? "
                            "AND seq <= ? ORDER BY seq, prev_check IS NULL, row_check IS NULL",
                            [run_id, lo, lo + window - 1])
        yield list(zip(*(column.to_pylist() for column in table.columns), strict=True))
        lo += window


def _unheaded_end(store: Store, walk: Walk) -> VerifyResult | None:
    """Records of an ended run that no head covers: the writer heads every batch it
    writes, so these were added, or their head removed, after it wrote them.

    Not while they are all still in live segments whose writers hold their locks: a
    writer before heads came first (``recorder.write._segment``) wrote a batch's rows,
    then its heads, so a reader between the two saw the rows alone (and a killed one left
    them: :data:`INCOMPLETE`). A segment whose writer is gone (killed, or a name made up)
    is no excuse."""
    block, end = walk.block, walk.end
    if block is None or end is None:
        return None  # all headed, or a run in flight: its newest records wait for a head
    (live,) = store.rows("SELECT count(*) FROM _live_events WHERE run_id = ? AND seq >= ?",
                         [walk.run_id, block])[0]
    holders = [segment for segment, lasts in store.files.live_segments.items()
               if lasts.get(walk.run_id, -1) >= block]
    if live == walk.in_block and all(
            writer_alive(store.root, writer_of(segment)) for segment in holders):
        return None
    last = walk.expected - 1
    stopped = stopped_writer(store, walk.run_id, block, last)
    if stopped is not None:
        return _broken(walk.run_id, walk.total, block, INCOMPLETE,
                       f"the writer stopped before sealing; seq {block}..{last} unsealed "
                       f"({stopped}): what is there is not proven")
    if block > end:
        why = (f"seq {block}..{last} follow the run's end (seq {end}) and no stored head "
               "covers them: appended after the run ended")
    else:
        why = (f"seq {block}..{last} of this ended run are covered by no stored head (their "
               "head was removed, or the writer failed to hash them)")
    return _broken(walk.run_id, walk.total, block, "chain broken", why)


def _drops(store: Store, run_id: str) -> tuple[int, int]:
    """The run's ``(dropped, filtered)`` counts from the store's stats, as ``runs`` adds
    them up (each writer's newest counts, summed), read from the stats alone."""
    found = store.rows(
        "SELECT coalesce(sum(o), 0) + coalesce(sum(u), 0), coalesce(sum(p), 0) FROM ("
        "SELECT max(overflow) AS o, max(unencodable) AS u, max(processor_drops) AS p "
        "FROM _stats_all WHERE run_id = ? GROUP BY writer)", [run_id])
    return (int(found[0][0]), int(found[0][1])) if found else (0, 0)


def _heads(store: Store, run_id: str,
           key: bytes | None) -> dict[int, tuple[bytes, str]] | VerifyResult:
    found = store.rows("SELECT last_seq, head, segment, format FROM _chain_all WHERE run_id = ?",
                       [run_id])
    return head_map(run_id, found, key)


def head_map(run_id: str, found: list[tuple[Any, ...]],
             key: bytes | None) -> dict[int, tuple[bytes, str]] | VerifyResult:
    """The run's stored heads ``(last_seq, head, segment, format)`` as ``seq -> (head,
    segment)``, or the verdict when one is not of the kind ``key`` makes."""
    want = KEYED_FORMAT if key is not None else CHAIN_FORMAT
    for seq, _, segment, kind in sorted(found):
        if kind == want:
            continue
        if kind == KEYED_FORMAT:
            raise ConfigError(
                f"run {run_id!r} was recorded with a chain key (its heads are HMACs); pass "
                f"the key: `footprint verify {run_id} --key-file FILE`, ${KEY_ENV}, or "
                "verify_run(..., key=...)")
        if kind == CHAIN_FORMAT:
            return _broken(run_id, 0, int(seq), "hash mismatch",
                           f"segment {segment} stored a head without the key at seq {seq}; "
                           "with a key every head must be keyed: it was forged, or the run "
                           "was recorded without a key (verify it without one)")
        return _broken(run_id, 0, int(seq), "unknown chain format",
                       f"segment {segment} was written in chain format {kind or '1'!r}; "
                       f"this footprint checks {CHAIN_FORMAT!r} — verify it with the "
                       "footprint version that recorded it")
    return {int(seq): (bytes(head), str(segment)) for seq, head, segment, _ in found}


class Walk:
    """One run's chain walk, fed a window of rows at a time (see :func:`verify_run`)."""

    __slots__ = ("bad_column", "block", "check", "derived", "end", "expected", "heads",
                 "in_block", "key", "refs", "rows", "run_id", "score_at", "scored", "scores",
                 "skipped", "stream", "total")

    def __init__(self, run_id: str, total: int, heads: dict[int, tuple[bytes, str]],
                 key: bytes | None = None) -> None:
        self.run_id, self.total, self.heads, self.key = run_id, total, heads, key
        self.check, self.expected, self.skipped, self.rows, self.in_block = 0, 0, 0, 0, 0
        self.block: int | None = None
        """The first seq after the last head reached (``None`` right on a head)."""
        self.end: int | None = None
        """The seq of the run's first terminal event."""
        self.bad_column: tuple[int, str] | None = None
        self.refs: dict[str, int] = {}
        self.stream = hashlib.sha256()
        self.derived = DerivedCheck()
        self.score_at: ScoreHead | None = None
        """The store's score head of the run, until the walk reaches its seq."""
        self.scores, self.scored = 0, False
        """Scores walked so far; whether a score head was checked."""

    def feed(self, rows: list[tuple[Any, ...]]) -> VerifyResult | None:
        """Walk ``rows`` (the next ones in seq order); the first broken record's verdict."""
        n = len(ENVELOPE_NAMES)
        for row in rows:
            payload, stored_prev, stored = str(row[n]), row[n + 1], row[n + 2]
            seq = int(row[_SEQ])
            broken = _link_problem(seq, self.expected, self.check, stored_prev)
            if broken is not None:
                return VerifyResult(run_id=self.run_id, valid=False, records=self.total,
                                    **broken)
            self.skipped += seq - self.expected
            if self.end is not None and row[_TYPE] not in AFTER_END_TYPES:
                return _broken(self.run_id, self.total, seq, "chain broken",
                               f"seq {seq} ({row[_TYPE]}) follows the run's end (seq "
                               f"{self.end}): appended after the run ended")
            check = row_check(payload)
            if check != stored:
                return _broken(self.run_id, self.total, seq, "hash mismatch",
                               "the stored payload no longer matches its row check")
            envelope = envelope_values_canonical(row[:n], typed=True)
            self.stream.update(frame(record_canonical(envelope, payload)))
            if self.block is None:
                self.block, self.in_block = seq, 0
            self.in_block += 1
            self.scores += row[_TYPE] == FEEDBACK
            headed = self._head(seq) or self._score_head(seq)
            if headed is not None:
                return headed
            self.check, self.expected, self.rows = check, seq + 1, self.rows + 1
            if self.end is None and row[_TYPE] in TERMINAL_TYPES:
                self.end = seq
            self._payload(seq, payload, row[n + 3:])
        return None

    def _head(self, seq: int) -> VerifyResult | None:
        sealed = self.heads.pop(seq, None)
        if sealed is None:
            return None
        block = seq if self.block is None else self.block
        if keyed_head(self.key, self.stream.copy().digest()) != sealed[0]:
            keyed = " (or the key is not the one it was recorded with)" if self.key else ""
            return _broken(self.run_id, self.total, block, "hash mismatch",
                           f"seq {block}..{seq} no longer hash to the head stored in "
                           f"segment {sealed[1]}; their payloads check out, so an envelope "
                           f"value or the head itself changed{keyed}")
        self.block = None
        return None

    def _score_head(self, seq: int) -> VerifyResult | None:
        """At the seq the store's score head names: it must be over the chain so far and
        the scores walked (``recorder.write._scorehead``)."""
        if self.score_at is None or seq != self.score_at[0]:
            return None
        _, count, head = self.score_at
        self.score_at, self.scored = None, True
        chain = keyed_head(self.key, self.stream.copy().digest())
        if score_head(self.key, chain, self.scores) == head:
            return None
        return _broken(self.run_id, self.total, seq, "hash mismatch",
                       f"the store's score head ({SCORE_HEADS}) over seq ..{seq} and {count} "
                       f"scores does not match the chain and the {self.scores} scores stored: "
                       "a score was removed or edited, or the head changed")

    def _payload(self, seq: int, payload: str, derived: tuple[Any, ...]) -> None:
        """The blob references and the derived columns of one record."""
        try:
            data = orjson.loads(payload)
        except orjson.JSONDecodeError:  # what orjson refuses (a lone surrogate, a huge int)
            try:
                data = json.loads(payload)
            except ValueError:
                data = None
        if not isinstance(data, dict):
            self.bad_column = self.bad_column or (seq, DERIVED_COLUMNS[0])
            return
        if BLOB_KEY in payload:
            for value in data.values():
                if isinstance(value, dict) and isinstance(value.get(BLOB_KEY), str):
                    self.refs.setdefault(value[BLOB_KEY], seq)
        if self.bad_column is None:
            column = self.derived.mismatch(data, derived)
            if column is not None:
                self.bad_column = (seq, column)


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


_BLOB_ROWS = 256
"""Blob texts held at once while checking them (a request can be many KiB)."""


def bad_blobs(store: Store, digests: Iterable[str]) -> set[str]:
    """Which of the blobs ``digests`` are missing, or have a stored copy whose text does
    not hash to its id."""
    wanted = sorted(set(digests))
    if not wanted:
        return set()
    good, bad = guarded(store, lambda: _check_blobs(store, wanted))
    return bad | (set(wanted) - good)


def _check_blobs(store: Store, digests: list[str]) -> tuple[set[str], set[str]]:
    """Which stored copies hash to their id, streamed ``_BLOB_ROWS`` at a time: every
    stored copy (another writer may have stored the same text), so one edited copy is a
    mismatch whichever copy the views happen to read."""
    good: set[str] = set()
    bad: set[str] = set()
    query = store.ready("SELECT hash, text FROM _blobs_all WHERE hash IN ?")
    ((threads,),) = store.con.execute("SELECT current_setting('threads')").fetchall()
    store.con.execute("SET threads = 1")  # each scan thread buffers row groups of texts
    try:
        for batch in store.con.sql(query, params=[digests]).to_arrow_reader(_BLOB_ROWS):
            for digest, text in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(),
                                    strict=True):
                ok = hashlib.sha256(str(text).encode("utf-8")).hexdigest() == digest
                (good if ok else bad).add(str(digest))
    finally:
        store.con.execute(f"SET threads = {int(threads)}")
    return good, bad
