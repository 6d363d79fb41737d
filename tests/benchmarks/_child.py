"""The parent side of a benchmark measured in a fresh child process: run the module
again with ``--child`` and its arguments, read the figures it prints last (one JSON object)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child_figures(script: str, *args: str, what: str) -> dict[str, float]:
    """The figures ``script --child ARGS`` printed on its last line; ``what`` names the
    benchmark in the error a failed child raises (with the end of its stderr)."""
    out = subprocess.run([sys.executable, script, "--child", *args], capture_output=True,
                         text=True, timeout=900, cwd=ROOT, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the {what} benchmark child failed:\n{out.stderr[-3000:]}")
    found: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def sized(found: dict[str, float], size: str) -> dict[str, float]:
    """The child's ``_N_`` figure names with the size measured in them."""
    return {k.replace("_N_", f"_{size}_"): v for k, v in found.items()}
