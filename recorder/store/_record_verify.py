"""``verify_records(root)``: every dataset version and experiment file of a store checked.

A file's rows must chain (``recorder.store._record_files``): a dataset's version 1
from its genesis, each later version from the last head of the version before (a
version missing between two is named), an experiment from its genesis; an
experiment must name a dataset version the store holds. The journal
(``records.journal.jsonl``) must chain line to line, and list every file exactly
as it is: a listed file that is gone was deleted, one whose row count or last head
differs was replaced, a file not listed was never written by footprint. A store
written before the journal was kept has none: its files' chains are still checked,
and the result says deletions cannot be seen. Tags ``experiment:NAME`` on runs
whose experiment file is gone are named by the caller (``footprint verify``), which
holds the runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorder.store._record_files import JOURNAL, check_chain, genesis, journal_line, read_rows
from recorder.store._records import DATASETS, EXPERIMENTS

__all__ = ["RecordsResult", "verify_records"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordsResult:
    """What :func:`verify_records` found: the files checked, the journal's lines (``None``:
    no journal), every problem in a sentence, and the experiments the store holds."""

    datasets: int
    experiments: tuple[str, ...]
    journal: int | None
    problems: tuple[str, ...] = field(default=())

    @property
    def valid(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        files = (f"{self.datasets} dataset versions, {len(self.experiments)} experiments, "
                 + ("no journal (written before one was kept: a deleted file cannot be "
                    "seen)" if self.journal is None else f"journal of {self.journal} files"))
        if self.valid:
            return f"valid: {files}"
        return f"{len(self.problems)} problems ({files}):\n" + "\n".join(
            f"  {p}" for p in self.problems)


def verify_records(root: Path) -> RecordsResult:
    """Check every record file under the store directory ``root`` (see the module)."""
    problems: list[str] = []
    heads: dict[str, tuple[int, str]] = {}  # relative path -> (rows, last head)
    versions = _datasets(root, problems, heads)
    experiments = _experiments(root, problems, heads, versions)
    journal = _journal(root, problems, heads)
    return RecordsResult(datasets=sum(len(v) for v in versions.values()),
                         experiments=tuple(experiments), journal=journal,
                         problems=tuple(problems))


def _rows(path: Path, problems: list[str]) -> list[dict[str, Any]] | None:
    try:
        return read_rows(path)
    except Exception as exc:  # damaged past reading: named, the others still checked
        problems.append(f"{path.name}: unreadable ({type(exc).__name__}: {exc})")
        return None


def _datasets(root: Path, problems: list[str],
              heads: dict[str, tuple[int, str]]) -> dict[str, dict[int, str]]:
    """Every dataset's versions and the last head of each, their chains checked."""
    found: dict[str, dict[int, Path]] = {}
    for path in (root / DATASETS).glob("*.v*.parquet"):
        stem, _, number = path.name[:-len(".parquet")].rpartition(".v")
        if number.isdigit():
            found.setdefault(stem, {})[int(number)] = path
    out: dict[str, dict[int, str]] = {}
    for name, files in sorted(found.items()):
        out[name] = {}
        for version in sorted(files):
            rows = _rows(files[version], problems)
            if rows is None:
                continue
            start = _dataset_start(name, version, out[name], problems)
            broken = check_chain(rows, start if start is not None else (
                rows[0]["prev_head"] if rows else ""))
            if broken is not None:
                problems.append(f"dataset {name} v{version}: {broken} (tampered)")
            head = rows[-1]["head"] if rows else (start or "")
            out[name][version] = head
            heads[files[version].relative_to(root).as_posix()] = (len(rows), head)
    return out


def _dataset_start(name: str, version: int, before: dict[int, str],
                   problems: list[str]) -> str | None:
    """The head version ``version`` must start from (``None``: its predecessor is gone)."""
    if version == 1:
        return genesis("dataset", name)
    if version - 1 in before:
        return before[version - 1]
    problems.append(f"dataset {name} v{version - 1} is missing (v{version} continues it: "
                    "deleted)")
    return None


def _experiments(root: Path, problems: list[str], heads: dict[str, tuple[int, str]],
                 versions: dict[str, dict[int, str]]) -> list[str]:
    names = []
    for path in sorted((root / EXPERIMENTS).glob("*.parquet")):
        name = path.stem
        names.append(name)
        rows = _rows(path, problems)
        if rows is None:
            continue
        start = genesis("experiment", name)
        broken = check_chain(rows, start)
        if broken is not None:
            problems.append(f"experiment {name}: {broken} (tampered)")
        heads[path.relative_to(root).as_posix()] = (len(rows), rows[-1]["head"] if rows
                                                    else start)
        if rows and int(rows[0]["version"]) not in versions.get(rows[0]["dataset"], {}):
            problems.append(f"experiment {name} ran on dataset {rows[0]['dataset']} "
                            f"v{rows[0]['version']}, which is missing (deleted)")
    return names


def _journal(root: Path, problems: list[str],
             heads: dict[str, tuple[int, str]]) -> int | None:
    """Check the journal's chain and that it lists every file as it is; its length."""
    path = root / JOURNAL
    if not path.exists():
        return None
    listed: dict[str, tuple[int, str]] = {}
    prev = genesis("journal", "records")
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        entry = json.loads(text)
        if entry.get("prev") != prev or journal_line(prev, entry) != entry.get("line"):
            problems.append(f"{JOURNAL} line {number} does not continue the journal's chain "
                            "(tampered)")
        prev = entry.get("line", "")
        listed[entry["path"]] = (int(entry["rows"]), str(entry["head"]))
    for rel, (rows, head) in sorted(listed.items()):
        if rel not in heads:
            if (root / rel).exists():
                continue  # there but unreadable: named above
            problems.append(f"{rel}: listed in the journal but gone (deleted)")
        elif heads[rel] != (rows, head):
            problems.append(f"{rel}: not the file written ({heads[rel][0]} rows, the journal "
                            f"lists {rows}; or its last head differs: replaced)")
    problems.extend(f"{rel}: not in the journal (not written by footprint, or added by hand)"
                    for rel in sorted(set(heads) - set(listed)))
    return len(listed)
