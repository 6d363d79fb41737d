"""House rules: layering, lazy imports, types and lint stay clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"pyarrow", "duckdb", "opentelemetry", "textual"}
LINTED = ("footprint", "recorder", "lens", "tests", "examples")
BANNED = {
    "footprint": {"recorder", "lens"} | HEAVY,
    "recorder": {"lens", "textual"},
}


def _imports_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", sorted(BANNED))
def test_given_a_package_when_its_imports_are_parsed_then_none_cross_the_layering(
    package: str,
) -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in _imports_of(path)
        if name.split(".")[0] in BANNED[package]
    ]
    assert offenders == []


def test_given_a_fresh_interpreter_when_footprint_is_imported_then_no_heavy_module_loads() -> None:
    probe = (
        "import sys, footprint, footprint.providers, footprint.events, footprint.injection\n"
        f"heavy = {sorted(HEAVY | {'recorder', 'lens', 'httpx'})!r}\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & set(heavy))\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("package", ["footprint", "recorder", "lens"])
def test_given_the_source_when_sizes_are_measured_then_modules_stay_within_600_lines(
    package: str,
) -> None:
    too_long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in sorted((ROOT / package).rglob("*.py"))
        if (n := p.read_text(encoding="utf-8").count("\n")) > 600
    ]
    assert too_long == []


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed in this environment")
    return found


def test_given_the_tree_when_ruff_checks_it_then_it_is_clean() -> None:
    result = subprocess.run(
        [_tool("ruff"), "check", *[d for d in LINTED if (ROOT / d).is_dir()]],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_given_the_engine_recorder_and_lens_when_mypy_strict_runs_then_it_is_clean() -> None:
    result = subprocess.run(
        [_tool("mypy"), "--strict", "footprint", "recorder", "lens"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
