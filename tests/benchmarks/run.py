"""Benchmark runner: collects every ``bench_*.py`` here and prints the figures.

Each module exposes ``figures(quick: bool) -> dict[str, float]``. The runner
imports them in name order, merges their figures and prints ONE JSON object
on the last line of stdout (progress and notes go to stderr). A module that
fails is reported as ``"<module>.error"`` on stderr and in the exit code,
never by dropping the other figures.

    .venv/bin/python tests/benchmarks/run.py            # full run
    .venv/bin/python tests/benchmarks/run.py --quick    # short run
    .venv/bin/python tests/benchmarks/run.py --only injection
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

FigureFn = Callable[[bool], dict[str, float]]


def discover(only: list[str] | None = None) -> list[Path]:
    """The ``bench_*.py`` modules beside this file, by name; ``only`` filters by suffix."""
    found = sorted(HERE.glob("bench_*.py"))
    if only:
        found = [p for p in found if p.stem.removeprefix("bench_") in only]
    return found


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_footprint_bench_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def collect(paths: list[Path], quick: bool) -> tuple[dict[str, float], list[str]]:
    """Run every module's ``figures(quick)``; return the merged figures and failures."""
    merged: dict[str, float] = {}
    failed: list[str] = []
    for path in paths:
        started = time.perf_counter()
        try:
            fn: FigureFn = _load(path).figures
            figures = fn(quick)
        except Exception:
            failed.append(path.stem)
            print(f"[bench] {path.stem} FAILED", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            continue
        clash = sorted(set(figures) & set(merged))
        if clash:
            print(f"[bench] {path.stem} overrides figures {clash}", file=sys.stderr)
        merged.update({name: float(value) for name, value in figures.items()})
        took = time.perf_counter() - started
        print(f"[bench] {path.stem}: {figures} ({took:.1f}s)", file=sys.stderr)
    return merged, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short run (fewer repeats)")
    parser.add_argument("--only", nargs="*", help="module suffixes to run, e.g. injection")
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    merged, failed = collect(discover(args.only), args.quick)
    print(json.dumps(merged, sort_keys=True))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
