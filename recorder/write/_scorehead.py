"""The store's score heads (format ``footprint-scores/1``): a score removed is a break.

Feedback is appended to a run after its end, each batch in a segment of its
own, chained and headed like any record (``recorder._feedback``). A chain
proves what is there; it cannot miss what was removed whole: deleting the
newest score segment (its rows and its heads) leaves a shorter chain that
still verifies. So each time feedback is written, the store records, per
run scored, where its chain then stood, in ``scores/heads.parquet`` (one
row per run, rewritten atomically under the feedback lock):

* ``last_seq``: the seq of the run's last record (its newest score);
* ``scores``: how many ``feedback.recorded`` records the run then held;
* ``head``: :func:`score_head` over the run's chain head at ``last_seq``
  and ``scores`` — SHA-256 of ``footprint-scores/1 NUL``, the head, and the
  count as 8 bytes big-endian; with a chain key, HMAC-SHA256 under the key
  (so it cannot be copied from a chain head, nor made without the key).

``verify`` walks the run past ``last_seq`` and checks the head there: a
score segment removed (``missing record``) or a score deleted or edited
(``hash mismatch``) is named. A store written before score heads has no
file (or no row for a run): its runs verify as before, and the verdict
notes that the completeness of their scores is unknown. The limit: the
file is in the store, so removing it whole, or putting an older copy of it
back together with removing the newer score segments, is not detected
(copy it outside the store to guard against that).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = ["SCORE_HEADS", "SCORE_HEAD_FORMAT", "ScoreHead", "read_score_head",
           "read_score_heads", "score_head", "write_score_heads"]

SCORE_HEAD_FORMAT = "footprint-scores/1"
SCORE_HEADS = Path("scores") / "heads.parquet"
"""Where the score heads are, under the store's root."""

_SCHEMA = pa.schema([("run_id", pa.string()), ("last_seq", pa.int64()),
                     ("scores", pa.int64()), ("head", pa.binary(32)),
                     ("format", pa.string())],
                    metadata={b"footprint.store": b"scores"})

ScoreHead = tuple[int, int, bytes]
"""``(last_seq, scores, head)`` of one run."""


def score_head(key: bytes | None, chain_head: bytes, scores: int) -> bytes:
    """The score head over a run's chain head (as stored: the digest, or its HMAC) and its
    count of scores."""
    message = (SCORE_HEAD_FORMAT.encode() + b"\0" + chain_head
               + scores.to_bytes(8, "big", signed=False))
    if key is None:
        return hashlib.sha256(message).digest()
    return hmac.new(key, message, hashlib.sha256).digest()


def _read(root: Path) -> pa.Table:
    path = root / SCORE_HEADS
    if not path.exists():
        return _SCHEMA.empty_table()
    return pq.read_table(path).select(_SCHEMA.names).cast(_SCHEMA)


def read_score_head(root: Path, run_id: str) -> ScoreHead | None:
    """The run's score head, or ``None`` (never scored since score heads were kept). A file
    that does not read raises (``OSError`` or ``pyarrow.ArrowException``)."""
    table = _read(root)
    found = table.filter(pc.equal(table.column("run_id"), run_id)).to_pylist()
    if not found:
        return None
    row = found[-1]
    return int(row["last_seq"]), int(row["scores"]), bytes(row["head"])


def read_score_heads(root: Path) -> dict[str, ScoreHead]:
    """Every run's score head (as :func:`read_score_head` reads one), by run id."""
    heads: dict[str, ScoreHead] = {}
    for row in _read(root).to_pylist():
        heads[str(row["run_id"])] = (int(row["last_seq"]), int(row["scores"]),
                                     bytes(row["head"]))
    return heads


def write_score_heads(root: Path, heads: dict[str, ScoreHead], fmt: str) -> None:
    """Set the score heads of the runs in ``heads`` (the others kept), atomically: a temp
    file, fsync, rename, fsync of the folder. Call it under the feedback lock."""
    if not heads:
        return
    kept = _read(root)
    kept = kept.filter(pc.invert(pc.is_in(kept.column("run_id"),
                                           pa.array(sorted(heads), pa.string()))))
    runs = sorted(heads)
    added = pa.table({"run_id": pa.array(runs, pa.string()),
                      "last_seq": pa.array([heads[r][0] for r in runs], pa.int64()),
                      "scores": pa.array([heads[r][1] for r in runs], pa.int64()),
                      "head": pa.array([heads[r][2] for r in runs], pa.binary(32)),
                      "format": pa.array([fmt] * len(runs), pa.string())}, schema=_SCHEMA)
    final = root / SCORE_HEADS
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    pq.write_table(pa.concat_tables([kept, added]), temp, compression="zstd")
    for path in (temp, final.parent):
        _fsync(path, directory=path is not temp)
        if path is temp:
            os.replace(temp, final)


def _fsync(path: Path, *, directory: bool) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
