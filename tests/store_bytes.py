"""Everything a store holds on disk, as bytes: for tests that look for leaked secrets."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from recorder.store._discover import read_live


def every_byte(root: Path) -> bytes:
    """Raw file bytes plus every decoded cell, so compression cannot hide a secret."""
    out = bytearray()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        out += path.read_bytes()
        if path.suffix == ".parquet":
            out += repr(pq.read_table(path).to_pylist()).encode()
        elif path.suffix == ".arrows":
            out += repr([b.to_pylist() for b in read_live(path)]).encode()
    return bytes(out)
