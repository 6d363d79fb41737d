"""The folders are the architecture: layers inside ``lens`` and ``recorder``, and no circles.

Every import counts — at module level, inside a function, and under
``TYPE_CHECKING`` — because a type-only circle is still two modules that
cannot be understood (or moved) apart.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = "(top)"
LAYERS = {
    "recorder": ("write", "store", "otel", "ingest", TOP),
    "lens": ("_examples", "playback", "explain", "tui", "cli", TOP),
}
"""Each package's subpackages, lowest first; a module may import its own layer or a lower
one. ``(top)`` is the package's own modules (its facade, the public API), which sit above
every subpackage."""
MAX_TOP_ENTRIES = 8


def _modules(package: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = {**_modules("lens"), **_modules("recorder")}


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if MODULES[module].name != "__init__.py":
        base.pop()
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every import of ours in ``module``, anywhere in it."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node)
            for alias in node.names:
                child = f"{target}.{alias.name}"
                yield (child if child in MODULES else target), node.lineno


def _graph() -> dict[str, set[str]]:
    return {m: {t for t, _ in _imports(m) if t in MODULES and t != m} for m in MODULES}


def _layer(module: str) -> tuple[str, int]:
    package, *rest = module.split(".")
    layers = LAYERS[package]
    sub = rest[0] if len(rest) > 1 or (rest and (ROOT / package / rest[0]).is_dir()) else TOP
    if sub not in layers:
        raise AssertionError(f"{module}: subpackage {sub!r} has no place in LAYERS[{package!r}]")
    return package, layers.index(sub)


def _upward(module: str) -> Iterator[str]:
    package, level = _layer(module)
    for target, line in _imports(module):
        if target.split(".")[0] != package or target not in MODULES:
            continue
        if _layer(target)[1] > level:
            yield f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            component.append(node)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_given_lens_and_recorder_when_every_import_is_walked_then_none_runs_in_a_circle() -> None:
    assert _circles(_graph()) == []


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_given_a_package_when_its_imports_are_walked_then_none_reaches_a_higher_layer(
    package: str,
) -> None:
    offenders = [line for m in MODULES if m.split(".")[0] == package for line in _upward(m)]
    assert offenders == []


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_given_a_package_when_its_folder_is_listed_then_its_top_level_stays_small(
    package: str,
) -> None:
    entries = [p.name for p in (ROOT / package).iterdir()
               if p.name != "__pycache__" and not (p / "__init__.py").exists()]
    assert len(entries) <= MAX_TOP_ENTRIES, entries


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_given_a_subpackage_when_it_opens_then_its_docstring_says_what_it_may_import(
    package: str,
) -> None:
    quiet = []
    for init in sorted((ROOT / package).glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if "May import" not in doc:
            quiet.append(str(init.relative_to(ROOT)))
    assert quiet == []


def test_given_a_known_circle_when_the_walk_runs_then_it_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
