"""The store's ledger of mapped traces (``ingest/mapped``): what a new intake reads back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.ingest import _raw
from recorder.ingest._raw import mapped_traces, note_mapped

_IDS = st.lists(st.integers(0, 2**128 - 1).map(lambda n: f"{n:032x}"), max_size=300)


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(_IDS, max_size=5), last=st.integers(1, 400))
def test_given_a_ledger_noted_in_batches_when_read_then_its_last_ids_come_back_in_order(
        tmp_path_factory: object, batches: list[list[str]], last: int) -> None:
    store = Path(tmp_path_factory.mktemp("store"))  # type: ignore[attr-defined]
    for batch in batches:
        note_mapped(store, batch)
    every = [t for batch in batches for t in batch]
    assert mapped_traces(store, last) == every[-last:]


def test_given_a_long_ledger_when_read_then_only_its_tail_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [f"{n:032x}" for n in range(200_000)]
    note_mapped(tmp_path, ids)
    read: list[int] = []

    def counting_open(path: Path, mode: str = "r", **kw: Any) -> Any:
        f = open(path, mode, **kw)  # noqa: SIM115
        real = f.read
        f.read = lambda *a: (data := real(*a), read.append(len(data)))[0]  # type: ignore[method-assign]
        return f

    monkeypatch.setattr(_raw, "open", counting_open, raising=False)
    assert mapped_traces(tmp_path, 10) == ids[-10:]
    assert 0 < sum(read) <= 10 * 64, read


def test_given_no_ledger_when_read_then_nothing_is_mapped(tmp_path: Path) -> None:
    assert mapped_traces(tmp_path, 100) == []
