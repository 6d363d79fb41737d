"""Blast radius of one flipped byte: at most the runs of the row group it lands in.

A small store (6 runs, 3 to a segment, each with a blob), as written and once
compacted, its runs listed once so the cached outlines exist. Each of 50
seeded cases copies one of the two, XORs one random byte of one random file
(events, chain, blobs or summaries) with a random nonzero value, then opens
the store, reads ``runs`` through SQL and verifies every run. A run is *lost*
when it no longer verifies. The bound, from the file before the flip: the
runs with rows in the row group whose byte range holds the flip (for a blob
file, the runs that reference its blobs; a flip in a file's header or footer
counts every row group of the file). The Guarantees page (docs/guarantees.md) carries the figures.
"""

from __future__ import annotations

import random
import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from docs_support import check_generated

from footprint.events import Event, RunEnd, RunStart, ToolEnd
from recorder import ParquetSink, open_store, verify_run
from recorder.write._compact import compact

START, END = "<!-- blast-flips:start -->\n", "<!-- blast-flips:end -->"
RUNS, FLIPS = 6, 50
T0 = 1_767_225_600_000_000_000
KINDS = ("events", "chain", "blobs", "summaries")


def _run(n: int) -> list[Event]:
    run = f"run-{n}"
    body: list[Event] = [RunStart(run_id=run, seq=0, ts=T0 + n, user_message=f"request {n}")]
    body += [ToolEnd(run_id=run, seq=s, ts=T0 + n + s, tool_call_id=f"c{s}", tool_name="lookup",
                     result=f"run {n} step {s}: " + "order history " * 8) for s in range(1, 6)]
    return [*body, RunEnd(run_id=run, seq=6, ts=T0 + n + 6, final_content=f"answer {n}")]


def _write(root: Path) -> None:
    sink = ParquetSink(root, blob_min_chars=64)
    for first in range(0, RUNS, 3):
        sink.export([e for n in range(first, first + 3) for e in _run(n)])
    sink.shutdown()
    _same_names(root)


def _same_names(root: Path) -> None:
    """Give the writer's segments fixed names (the writer id is made of the time, the pid and
    a random part), so every run of this test flips the same bytes of the same files."""
    fixed = "20260101T000000-10000-00000000"
    for path in sorted(root.rglob("*.parquet")):
        number = path.stem.rpartition("-")[2]
        name = path.with_name(f"{fixed}-{number}.parquet")
        if path.parent.name in ("chain", "stats"):
            table = pq.read_table(path)
            column = "segment" if path.parent.name == "chain" else "writer"
            value = f"{fixed}-{number}" if column == "segment" else fixed
            table = table.set_column(table.schema.get_field_index(column), column,
                                     pa.array([value] * table.num_rows, pa.string()))
            pq.write_table(table, path)
        path.rename(name)


def _outlined(root: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = open_store(root)
        store.run_ids()  # writes the cached outlines (summaries)
        store.close()
    return root


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("flips")
    plain = base / "plain"
    _write(plain)
    merged = base / "compacted"
    shutil.copytree(plain, merged)
    assert compact(merged)
    return _outlined(plain), _outlined(merged)


def _files(root: Path, kind: str) -> list[Path]:
    return sorted(p for p in (root / kind).rglob("*.parquet") if not p.name.startswith("."))


_REFS: dict[Path, dict[str, set[str]]] = {}


def _refs(root: Path) -> dict[str, set[str]]:
    """Blob hash -> the runs whose payloads reference it (in the store before any flip)."""
    if root in _REFS:
        return _REFS[root]
    store = open_store(root)
    rows = store.rows("SELECT run_id, payload FROM _events_all")
    store.close()
    out: dict[str, set[str]] = {}
    for run, payload in rows:
        for part in str(payload).split('"$blob":"')[1:]:
            out.setdefault(part.split('"', 1)[0], set()).add(str(run))
    _REFS[root] = out
    return out


def _bound(source: Path, path: Path, at: int) -> set[str]:
    """The runs of the row group of ``path`` (before the flip) whose bytes hold ``at``."""
    meta = pq.ParquetFile(path).metadata
    groups = []
    for g in range(meta.num_row_groups):
        spans = [meta.row_group(g).column(c) for c in range(meta.num_columns)]
        lo = min(min(s.data_page_offset, s.dictionary_page_offset or s.data_page_offset)
                 for s in spans)
        hi = max(lo2 + s.total_compressed_size for s in spans
                 for lo2 in [min(s.data_page_offset,
                                 s.dictionary_page_offset or s.data_page_offset)])
        groups.append((g, lo, hi))
    hit = [g for g, lo, hi in groups if lo <= at < hi] or [g for g, _, _ in groups]
    table = pq.ParquetFile(path)
    if path.parent.name == "blobs":
        refs = _refs(source)
        hashes = {h for g in hit for h in table.read_row_group(g, columns=["hash"])
                  .column("hash").to_pylist()}
        return {run for h in hashes for run in refs.get(h, set())}
    return {str(r) for g in hit for r in table.read_row_group(g, columns=["run_id"])
            .column("run_id").to_pylist() if r is not None}


def _lost(root: Path) -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = open_store(root)
        store.rows("SELECT run_id, answer, scores, tags FROM runs")  # never raises
        results = [verify_run(store, f"run-{n}") for n in range(RUNS)]
        assert not any(r.interrupted for r in results)  # damage never reads as a crash
        lost = {r.run_id for r in results if not r.valid}
        store.close()
    return lost


def _case(stores: tuple[Path, Path], seed: int, work: Path) -> tuple[int, int]:
    """One flip: ``(runs lost, runs in its row group)``."""
    rng = random.Random(seed)
    source = stores[seed % 2]
    root = work / f"case-{seed}"
    shutil.copytree(source, root)
    kind = KINDS[seed % len(KINDS)]
    path = rng.choice(_files(root, kind))
    data = bytearray(path.read_bytes())
    at = rng.randrange(len(data))
    bound = _bound(source, path, at)
    data[at] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))
    lost = _lost(root)
    shutil.rmtree(root)
    assert lost <= bound, (seed, kind, path.name, at, sorted(lost), sorted(bound))
    return len(lost), len(bound)


def test_given_50_random_byte_flips_when_every_run_is_verified_then_each_costs_its_row_group(
    stores: tuple[Path, Path], tmp_path: Path,
) -> None:
    results = [_case(stores, seed, tmp_path) for seed in range(FLIPS)]
    lost = [n for n, _ in results]
    fragment = (f"  {FLIPS} seeded byte flips (events, chain, blobs and cached-outline files of a "
                f"{RUNS}-run store, half of them compacted): {sum(lost)} runs lost in all, at "
                f"most {max(lost)} per flip, never more than the runs of the damaged row group "
                f"({sum(1 for n in lost if n)} flips cost any run; "
                f"`tests/faults/test_faults_blast_flips.py`).\n  ")
    check_generated(START, END, fragment, "the byte-flip figures")
