"""``footprint dataset create|add|list|show|export``: datasets made from recorded runs.

``create NAME --from-runs [runs filters]`` takes the runs ``footprint runs`` would
list with the same filters (every match: ``--limit`` defaults to 0 here);
``add NAME RUN…`` adds runs to the next version. An item is the run's input (its
message; for a later turn, the conversation before it), its expected answer
(``--expected TEXT``, or ``--expected-from-feedback [NAME]``: the newest score
named NAME, default ``expected``, gives its label or comment) and its labels (the
run's scores). ``export`` writes JSON Lines, one flat object per item.
Exit 0 done, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lens.cli._common import MAX_COUNT, count_arg

__all__ = ["add_parser", "run"]


def _store(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def _expect_options(p: argparse.ArgumentParser) -> None:
    how = p.add_mutually_exclusive_group()
    how.add_argument("--expected", metavar="TEXT", help="the expected answer of every item")
    how.add_argument("--expected-from-feedback", nargs="?", const="expected", metavar="NAME",
                     help="each run's newest score named NAME (default 'expected') gives its "
                          "expected answer: its label, else its comment")


def _run_filters(p: argparse.ArgumentParser) -> None:
    """The filters of ``footprint runs`` (``lens.cli._main`` and ``lens.cli._runs``)."""
    from lens.cli._runs import add_filters

    p.add_argument("--limit", type=count_arg(0, MAX_COUNT), default=0, metavar="N",
                   help="take at most the N newest matching runs (default 0: every one)")
    p.add_argument("--status", action="append", choices=("complete", "failed", "incomplete"))
    p.add_argument("--model", metavar="TEXT", help="only runs whose model name contains TEXT")
    p.add_argument("--since", metavar="AGE|DATE", help="only runs started on or after")
    p.add_argument("--until", metavar="AGE|DATE", help="only runs started on or before")
    p.add_argument("--search", metavar="TEXT", help="only runs whose answer contains TEXT")
    add_filters(p)


def add_parser(sub: Any) -> None:
    """Register ``dataset`` and its actions on the CLI's subparsers."""
    p = sub.add_parser("dataset", help="datasets of recorded inputs: create, add, list, "
                                       "show, export")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True,
                            parser_class=type(p))
    create = acts.add_parser("create", help="a new dataset from the runs the filters match")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--from-runs", action="store_true", required=True,
                        help="take the runs the filters below match (those of `runs`)")
    _run_filters(create)
    _expect_options(create)
    add = acts.add_parser("add", help="add runs to a dataset (its next version)")
    add.add_argument("name", metavar="NAME")
    add.add_argument("runs", nargs="+", metavar="RUN", help="run ids, unique prefixes or 'last'")
    _expect_options(add)
    listing = acts.add_parser("list", help="every dataset, its versions and items")
    show = acts.add_parser("show", help="the items of one version")
    export = acts.add_parser("export", help="one version as JSON Lines (datasets' JSON loader "
                                            "reads it)")
    for q in (show, export):
        q.add_argument("name", metavar="NAME")
        q.add_argument("--version", type=count_arg(1, MAX_COUNT), metavar="N",
                       help="the version (default: the newest)")
    export.add_argument("--output", "-o", metavar="FILE", help="write there (default: stdout)")
    for q in (create, add, listing, show, export):
        _store(q)


def run(args: argparse.Namespace) -> int:
    from lens.cli._common import open_from

    if args.action == "create":  # bad filter text fails before the store is opened
        from lens.cli._runs import _query

        query = _query(args)
    with open_from(args) as store:
        if args.action == "create":
            return _create(store, args, query)
        if args.action == "add":
            return _add(store, args)
        if args.action == "list":
            return _list(store)
        if args.action == "show":
            return _show(store, args)
        return _export(store, args)


def _create(store: Any, args: argparse.Namespace, query: Any) -> int:
    from footprint._errors import ConfigError
    from recorder import list_runs
    from recorder._datasets import dataset_versions

    if any(name == args.name for name, _ in dataset_versions(store)):
        raise ConfigError(f"dataset {args.name!r} exists; add runs to it with `footprint "
                          f"dataset add {args.name} RUN…`, or pick another name")
    found = list_runs(store, query).column("run_id").to_pylist()
    if not found:
        raise ConfigError(f"no runs match those filters in {str(store.root)!r}; see "
                          "`footprint runs` with the same filters")
    return _save(store, args, list(reversed(found)))


def _add(store: Any, args: argparse.Namespace) -> int:
    from recorder._datasets import load_dataset

    load_dataset(store, args.name)  # it must exist: a typo is not a new dataset
    return _save(store, args, [store.resolve_run(ref) for ref in args.runs])


def _save(store: Any, args: argparse.Namespace, run_ids: list[str]) -> int:
    from lens.playback._items import items_from_runs
    from recorder._datasets import add_items

    items = items_from_runs(store, run_ids, expected=args.expected,
                            expected_from=args.expected_from_feedback)
    made = add_items(store, args.name, items)
    expected = sum(1 for i in items if i.expected is not None)
    print(f"dataset {made.name} v{made.version}: {len(made.items)} items "
          f"({len(items)} from runs given, {expected} with an expected answer)")
    return 0


def _list(store: Any) -> int:
    from lens.cli._common import table
    from recorder._datasets import dataset_versions, load_dataset

    versions = dataset_versions(store)
    if not versions:
        print(f"no datasets in {store.root} (footprint dataset create NAME --from-runs …)")
        return 0
    newest: dict[str, int] = {}
    for name, version in versions:
        newest[name] = max(version, newest.get(name, 0))
    rows = []
    for name, version in newest.items():
        data = load_dataset(store, name, version)
        rows.append([name, version, len(data.items), _when(data.created_ns)])
    print(table(("dataset", "version", "items", "created"), rows))
    return 0


def _when(ns: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _show(store: Any, args: argparse.Namespace) -> int:
    from lens.cli._common import table
    from recorder._datasets import load_dataset

    data = load_dataset(store, args.name, args.version)
    print(f"dataset {data.name} v{data.version}: {len(data.items)} items, created "
          f"{_when(data.created_ns)} UTC, chain intact (head {data.head[:16]}…)")
    rows = [[i.item_id, i.source_run or "", i.source_turn, i.message, i.expected or "",
             " ".join(f"{k}={v}" for k, v in (i.labels or {}).items())] for i in data.items]
    print(table(("item", "source run", "turn", "message", "expected", "labels"), rows,
                width=40))
    return 0


def _export(store: Any, args: argparse.Namespace) -> int:
    from recorder._datasets import load_dataset

    data = load_dataset(store, args.name, args.version)
    lines = [json.dumps({"dataset": data.name, "version": data.version,
                         "item_id": i.item_id, "message": i.message,
                         "history": json.dumps([dict(m) for m in i.history],
                                               ensure_ascii=False),
                         "expected": i.expected,
                         "labels": json.dumps(dict(i.labels or {}), sort_keys=True,
                                              ensure_ascii=False),
                         "source_run": i.source_run, "source_turn": i.source_turn},
                        ensure_ascii=False) for i in data.items]
    text = "".join(line + "\n" for line in lines)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"{len(lines)} items of {data.name} v{data.version} written to {args.output}",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
