"""Install weight: what an agent process that records loads, and what each install weighs.

``agent_process_import_ms``: median wall time of ``import footprint, recorder`` plus the
names a recording process uses (``Agent``, ``Recorder``, ``ParquetSink``), in a fresh
interpreter. ``agent_process_modules``: modules that process loads, beyond the
interpreter's own start-up, to record one run into a Parquet store (none of the lens,
TUI/web, OpenTelemetry or DuckDB stacks: tests/integration/test_light_install.py).
``light_install_mb``: the installed size of the lightest supported install (footprint-lens
with ``--no-deps`` plus ``RECORD_ONLY`` and what they require), ``full_install_mb`` that of
``pip install .`` (every runtime dependency), both summed from the installed
distributions' file lists in this environment; ``full_install_packages`` and
``light_install_packages`` count the distributions.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
RECORD_ONLY = ("httpx", "pyyaml", "pyarrow", "orjson", "regex")
"""The runtime dependencies recording needs (docs/how-to/light-install.md)."""

IMPORT = """
import time
t = time.perf_counter()
import footprint, recorder
from footprint import Agent
from recorder import ParquetSink, Recorder
print((time.perf_counter() - t) * 1000)
"""

RECORD = """
import sys
before = set(sys.modules)
from footprint import Agent, ScriptedModel
from recorder import ParquetSink, Recorder
with Recorder(sinks=[ParquetSink(sys.argv[1])]) as recorder:
    Agent(provider=ScriptedModel(["Hello!"]), model="m", sink=recorder).run_sync("Hi")
print(len(set(sys.modules) - before))
"""


def _python(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, cwd=ROOT, timeout=120)
    return done.stdout.split()[-1]


def _closure(roots: tuple[str, ...]) -> set[str]:
    """The installed distributions ``roots`` need, themselves included (none of the roots'
    own extras; the extras one dependency asks of another, such as
    ``markdown-it-py[linkify]``, are followed)."""
    seen: set[tuple[str, str]] = set()
    todo = [(canonicalize_name(r), "") for r in roots]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        for spec in metadata.requires(name) or ():
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": extra}):
                todo += [(canonicalize_name(req.name), e) for e in ("", *sorted(req.extras))]
    return {name for name, _ in seen}


def _mb(names: set[str]) -> float:
    total = 0
    for name in names:
        if name == "footprint-lens":  # an editable install lists no files: the packages
            total += sum(p.stat().st_size for pkg in ("footprint", "recorder", "lens")
                         for p in (ROOT / pkg).rglob("*") if p.is_file()
                         and "__pycache__" not in p.parts)
            continue
        dist = metadata.distribution(name)
        for f in dist.files or ():
            where = Path(str(dist.locate_file(f)))
            if where.is_file():
                total += where.stat().st_size
    return round(total / 1e6, 1)


def figures(quick: bool) -> dict[str, float]:
    runs = 3 if quick else 9
    import_ms = statistics.median(float(_python(IMPORT)) for _ in range(runs))
    with tempfile.TemporaryDirectory() as store:
        modules = int(_python(RECORD, store))
    light = {"footprint-lens"} | _closure(RECORD_ONLY)
    full = _closure(("footprint-lens",))
    return {"agent_process_import_ms": round(import_ms, 1),
            "agent_process_modules": modules,
            "light_install_mb": _mb(light), "light_install_packages": len(light),
            "full_install_mb": _mb(full), "full_install_packages": len(full)}


if __name__ == "__main__":
    print(json.dumps(figures(quick="--quick" in sys.argv)))
