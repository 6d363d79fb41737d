"""The catalog's shape: every event is frozen, slotted, keyword-only and tagged."""

from __future__ import annotations

import ast
import dataclasses
import re
import typing
from pathlib import Path
from typing import Any, Literal

import pytest

from footprint.events import (
    ENVELOPE_FIELDS,
    EVENT_TYPES,
    Event,
    EventBase,
    field_types,
    type_tag_of,
)

# DESIGN.md §3 "Catalog", as agreed; the test below also re-reads the live
# document when it is present, so drift in either direction fails.
DESIGN_CATALOG = """
- run: `run.configured`, `run.start`, `run.end`, `iteration.start`, `iteration.end`,
  `route.decided`
- declarations: `skill.graph_declared` (nodes, edges, guards), `injection.declared`
- context: `context.evaluated`, `context.injected` (one per InjectionRecord),
  `context.slot_composed`, `context.budget_pressure`
- skill: `skill.activated`, `skill.deactivated`, `skill.rejected`, `skill.escalated`,
  `skill.route_conflict`, `skill.reroute_superseded`, `skill.turn_routed`,
  `skill.step_advanced`, `skill.step_skipped`, `skill.steps_unfinished`
- model: `llm.start`, `llm.end`
- tools: `tool.start`, `tool.end`, `tool.effect`
- errors: `run.error`
"""
EXTENSIONS = {
    "run.source": "issue 23: what a run recorded from another framework's traces can tell "
                  "(framework, dialect, fidelity), from recorder.ingest",
}
"""Types an issue asked for after the design's catalog was agreed, each with its reason: a
new type is added here on purpose (and to the README's event catalog), never by accident."""
DESIGN_PATHS = (
    Path(__file__).resolve().parents[2] / "DESIGN.md",
    Path("/work/shared/DESIGN.md"),
)
_TYPE_NAME = re.compile(r"`([a-z]+\.[a-z_]+)`")

CLASSES = sorted(EVENT_TYPES.items())


def _design_names(text: str) -> set[str]:
    return set(_TYPE_NAME.findall(text))


def _catalog_section(text: str) -> str:
    start = text.index("Catalog (names are the `type` column")
    return text[start : text.index("Large text", start)]


def _nested_dataclasses(cls: type, seen: set[type] | None = None) -> set[type]:
    seen = set() if seen is None else seen
    for tp in field_types(cls).values():
        for candidate in (tp, *typing.get_args(tp), *_flat_args(tp)):
            is_shape = dataclasses.is_dataclass(candidate) and isinstance(candidate, type)
            if is_shape and candidate not in seen:
                seen.add(candidate)
                _nested_dataclasses(candidate, seen)
    return seen


def _flat_args(tp: Any) -> list[Any]:
    found: list[Any] = []
    for arg in typing.get_args(tp):
        found.append(arg)
        found.extend(_flat_args(arg))
    return found


def test_given_the_design_catalog_when_compared_then_every_type_has_exactly_one_class() -> None:
    agreed = _design_names(DESIGN_CATALOG)
    assert agreed | set(EXTENSIONS) == set(EVENT_TYPES) and not agreed & set(EXTENSIONS)


def test_given_the_live_design_doc_when_present_then_its_catalog_matches_event_types() -> None:
    doc = next((p for p in DESIGN_PATHS if p.is_file()), None)
    if doc is None:
        pytest.skip("DESIGN.md is not reachable from this checkout")
    names = _design_names(_catalog_section(doc.read_text(encoding="utf-8")))
    assert names <= set(EVENT_TYPES), "the design names a type the engine lacks"
    assert set(EVENT_TYPES) - names <= set(EXTENSIONS), "a type neither designed nor asked for"


@pytest.mark.parametrize(("tag", "cls"), CLASSES)
def test_given_an_event_class_when_inspected_then_its_literal_tag_matches_its_key(
    tag: str, cls: type[Event]
) -> None:
    hint = field_types(cls)["type"]
    assert typing.get_origin(hint) is Literal
    assert typing.get_args(hint) == (tag,)
    assert type_tag_of(cls) == tag
    assert issubclass(cls, EventBase)


@pytest.mark.parametrize(("tag", "cls"), CLASSES)
def test_given_an_event_class_when_inspected_then_it_is_frozen_slotted_and_kw_only(
    tag: str, cls: type[Event]
) -> None:
    for shape in (cls, *_nested_dataclasses(cls)):
        params = shape.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, shape
        assert "__slots__" in vars(shape), shape
        assert all(f.kw_only for f in dataclasses.fields(shape)), shape


@pytest.mark.parametrize(("tag", "cls"), CLASSES)
def test_given_an_event_when_mutated_or_built_positionally_then_it_refuses(
    tag: str, cls: type[Event]
) -> None:
    event = _minimal(cls)
    assert event.type == tag
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seq = 99  # type: ignore[misc]
    assert not hasattr(event, "__dict__")
    with pytest.raises(TypeError):
        typing.cast(Any, cls)("run", 0, 0)


def _minimal(cls: type[Event]) -> Event:
    """Build an event by filling only its required fields with simple values."""
    samples: dict[Any, Any] = {str: "x", int: 1, float: 1.0, bool: True}
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        tp = field_types(cls)[f.name]
        if typing.get_origin(tp) is Literal:
            kwargs[f.name] = typing.get_args(tp)[0]
        elif typing.get_origin(tp) is tuple:
            kwargs[f.name] = ()
        elif dataclasses.is_dataclass(tp) and isinstance(tp, type):
            kwargs[f.name] = tp(**{g.name: "x" for g in dataclasses.fields(tp)
                                   if g.default is dataclasses.MISSING})
        else:
            kwargs[f.name] = samples[tp]
    return cls(**kwargs)


def test_given_the_event_union_when_unpacked_then_it_is_exactly_the_catalog() -> None:
    members = typing.get_args(Event)
    assert len(members) == len(set(members))
    assert set(members) == set(EVENT_TYPES.values())


def test_given_the_envelope_when_listed_then_it_is_event_base_fields_plus_the_tag() -> None:
    base = {f.name for f in dataclasses.fields(EventBase)}
    assert set(ENVELOPE_FIELDS) == base | {"type"}
    assert len(ENVELOPE_FIELDS) == len(set(ENVELOPE_FIELDS))


@pytest.mark.parametrize(("tag", "cls"), CLASSES)
def test_given_an_event_class_when_its_payload_is_listed_then_no_name_shadows_the_envelope(
    tag: str, cls: type[Event]
) -> None:
    declared_here = {f.name for f in dataclasses.fields(cls)} - {
        f.name for f in dataclasses.fields(EventBase)
    }
    assert declared_here & set(ENVELOPE_FIELDS) == {"type"}


def test_given_a_class_without_a_tag_when_asked_for_it_then_the_error_names_the_fix() -> None:
    with pytest.raises(TypeError, match=r"EventBase has no 'type' tag; add `type: Literal"):
        type_tag_of(EventBase)


def test_given_the_context_injected_event_when_inspected_then_it_carries_provenance() -> None:
    hints = field_types(EVENT_TYPES["context.injected"])
    assert hints["admitted_by"] == int | None
    assert set(typing.get_args(hints["admitted_via"])) == {
        "always", "rule", "tool-return", "read-skill", "cursor",
        "lease", "baseline", "delivered", "retrieval", "tool-proposal",
    }


def _runtime_imports(tree: ast.Module) -> list[str]:
    """Module-level imports outside ``if TYPE_CHECKING:`` blocks."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


OWN_IMPORTS = ("footprint.events", "footprint._")


def test_given_the_events_package_when_parsed_then_it_imports_no_other_engine_package() -> None:
    """Injection and graph code import events; events must never import them back."""
    package = Path(__file__).resolve().parents[2] / "footprint" / "events"
    offenders = [
        f"{path.name}: {name}"
        for path in sorted(package.glob("*.py"))
        for name in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")))
        if name.startswith("footprint.") and not name.startswith(OWN_IMPORTS)
    ]
    assert offenders == []
