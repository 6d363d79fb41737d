"""Datasets in a store: versioned, chained collections of inputs with what was expected.

``add_items(store, name, items)`` writes the dataset's next version (every item of
the last version, then the new ones; an item whose ``item_id`` is there already
replaces it in place, e.g. to set its ``expected``). ``load_dataset(store, name,
version=None)`` reads one version back (the newest by default), its chain checked;
``dataset_versions(store)`` lists every version. See ``recorder.store._record_files``
for the files and the chain, ``recorder.store._records`` for the SQL views.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError, RunError
from recorder.store._record_files import (
    Where,
    check_chain,
    check_name,
    genesis,
    read_rows,
    root_of,
    write_chained,
    writing,
)
from recorder.store._records import DATASET_SCHEMA, DATASETS

__all__ = ["Dataset", "DatasetItem", "add_items", "dataset_versions", "load_dataset"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DatasetItem:
    """One input to try an agent on: the message, the conversation before it (``history``:
    ``{role, content}`` messages), what the answer should be, and the run it came from."""

    item_id: str
    message: str
    history: tuple[Mapping[str, str], ...] = ()
    expected: str | None = None
    labels: Mapping[str, str] | None = None
    source_run: str | None = None
    source_turn: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.item_id, str) or not self.item_id.strip():
            raise ConfigError(f"DatasetItem(item_id={self.item_id!r}): give the item an id")
        if not isinstance(self.message, str):
            raise ConfigError(f"DatasetItem(message={self.message!r}): pass the message text")
        for m in self.history:
            if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant") \
                    or not isinstance(m.get("content"), str):
                raise ConfigError(f"DatasetItem(history=[… {m!r} …]): each message is "
                                  "{'role': 'user'|'assistant', 'content': text}")
        if self.expected is not None and not isinstance(self.expected, str):
            raise ConfigError(f"DatasetItem(expected={self.expected!r}): pass text or None")
        if self.labels is not None and not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.labels.items()):
            raise ConfigError(f"DatasetItem(labels={self.labels!r}): map names to text")


@dataclass(frozen=True, slots=True, kw_only=True)
class Dataset:
    """One version of a dataset, as stored."""

    name: str
    version: int
    items: tuple[DatasetItem, ...]
    created_ns: int
    head: str = field(repr=False)


def _path(root: Path, name: str, version: int) -> Path:
    return root / DATASETS / f"{name}.v{version:04d}.parquet"


def _versions(root: Path, name: str) -> list[int]:
    found = []
    for p in (root / DATASETS).glob(f"{name}.v*.parquet"):
        number = p.name[len(name) + 2:-len(".parquet")]
        if number.isdigit():
            found.append(int(number))
    return sorted(found)


def _row(name: str, version: int, position: int, item: DatasetItem, ts: int) -> dict[str, Any]:
    return {"dataset": name, "version": version, "position": position,
            "item_id": item.item_id, "message": item.message,
            "history": json.dumps([dict(m) for m in item.history], ensure_ascii=False),
            "expected": item.expected,
            "labels": None if item.labels is None else json.dumps(dict(item.labels),
                                                                  sort_keys=True),
            "source_run": item.source_run, "source_turn": item.source_turn, "created_ns": ts}


def _item(row: Mapping[str, Any]) -> DatasetItem:
    return DatasetItem(item_id=row["item_id"], message=row["message"],
                       history=tuple(json.loads(row["history"])), expected=row["expected"],
                       labels=None if row["labels"] is None else json.loads(row["labels"]),
                       source_run=row["source_run"], source_turn=int(row["source_turn"] or 0))


def _read(root: Path, name: str, version: int) -> tuple[Dataset, str]:
    """Version ``version`` of ``name`` and the head its chain started from (checked)."""
    rows = read_rows(_path(root, name, version))
    start = rows[0]["prev_head"] if rows else genesis("dataset", name)
    if version == 1 and start != genesis("dataset", name):
        raise RunError(f"dataset {name!r} v1 does not start its chain; the file was replaced")
    broken = check_chain(rows, start)
    if broken is not None:
        raise RunError(f"dataset {name!r} v{version}: {broken}; the file "
                       f"{str(_path(root, name, version))!r} was tampered with")
    items = tuple(_item(r) for r in rows)
    head = rows[-1]["head"] if rows else start
    made = max((int(r["created_ns"]) for r in rows), default=0)
    return Dataset(name=name, version=version, items=items, created_ns=made, head=head), start


def load_dataset(where: Where, name: str, version: int | None = None) -> Dataset:
    """Version ``version`` (default: the newest) of dataset ``name``, its chain checked
    (and, for a later version, that it continues the version before)."""
    root = root_of(where)
    check_name(name, "dataset")
    versions = _versions(root, name)
    if not versions:
        known = sorted({n for n, _ in _all(root)})
        raise ConfigError(f"no dataset {name!r} in {str(root)!r}; datasets: "
                          f"{', '.join(known) or 'none'} (footprint dataset create NAME …)")
    want = versions[-1] if version is None else version
    if want not in versions:
        raise ConfigError(f"dataset {name!r} has no version {version!r}; versions: "
                          f"{', '.join(map(str, versions))}")
    found, start = _read(root, name, want)
    if want > 1 and want - 1 in versions and _read(root, name, want - 1)[0].head != start:
        raise RunError(f"dataset {name!r} v{want} does not continue v{want - 1}'s chain")
    return found


def _all(root: Path) -> list[tuple[str, int]]:
    out = []
    for p in (root / DATASETS).glob("*.v*.parquet"):
        stem, _, number = p.name[:-len(".parquet")].rpartition(".v")
        if number.isdigit():
            out.append((stem, int(number)))
    return sorted(out)


def dataset_versions(where: Where) -> list[tuple[str, int]]:
    """``(name, version)`` of every dataset version in the store, sorted."""
    return _all(root_of(where))


def add_items(where: Where, name: str, items: Sequence[DatasetItem], *,
              at: int | None = None) -> Dataset:
    """Write the next version of ``name``: the last version's items, each replaced by a
    new item of the same id, then the new items in order. A first call creates it."""
    for item in items:
        if not isinstance(item, DatasetItem):
            raise ConfigError(f"add_items: {item!r} is not a DatasetItem")
    with writing(where, "dataset", name, at) as w:
        versions = _versions(w.root, name)
        last = _read(w.root, name, versions[-1])[0] if versions else None
        merged = {i.item_id: i for i in (last.items if last else ())}
        merged.update({i.item_id: i for i in items})
        version = (versions[-1] if versions else 0) + 1
        start = last.head if last else genesis("dataset", name)
        rows = write_chained(w.root, _path(w.root, name, version),
                             [_row(name, version, k, item, w.ts)
                              for k, item in enumerate(merged.values())], start, DATASET_SCHEMA)
    return Dataset(name=name, version=version, items=tuple(merged.values()), created_ns=w.ts,
                   head=rows[-1]["head"] if rows else start)
