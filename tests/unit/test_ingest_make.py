"""The mapper's compiled constructors make exactly what the dataclass's own ``__init__`` makes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from strategies import events

from footprint.events import Event
from recorder.ingest._genai import Call, ChatRequest, Msg, ToolDef
from recorder.ingest._make import ENVELOPE, maker


def _fields(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}


@settings(max_examples=300, deadline=None)
@given(events())
def test_given_any_event_when_made_by_its_maker_then_it_equals_the_one_init_makes(
    event: Event,
) -> None:
    made = maker(type(event))(**_fields(event))
    assert type(made) is type(event) and made == event and _fields(made) == _fields(event)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seq = 1  # type: ignore[misc]


@settings(max_examples=100, deadline=None)
@given(events())
def test_given_any_event_when_made_with_the_envelope_as_head_then_it_equals_the_one_init_makes(
    event: Event,
) -> None:
    fields = _fields(event)
    head = tuple(fields.pop(name) for name in ENVELOPE)
    made = maker(type(event), ENVELOPE)(head, **fields)
    assert type(made) is type(event) and made == event and _fields(made) == _fields(event)


def test_given_a_head_naming_no_field_when_asked_for_then_it_is_refused() -> None:
    with pytest.raises(ValueError):
        maker(Msg, ("role", "nope"))


@pytest.mark.parametrize("cls", [Call, ChatRequest, Msg, ToolDef])
def test_given_an_intake_class_when_made_without_optional_fields_then_defaults_match(
    cls: type,
) -> None:
    required = {f.name: _sample(f) for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert maker(cls)(**required) == cls(**required)


def test_given_a_missing_required_field_when_made_then_it_is_a_type_error_as_with_init() -> None:
    with pytest.raises(TypeError):
        maker(Msg)()
    with pytest.raises(TypeError):
        Msg()  # type: ignore[call-arg]


def _sample(f: dataclasses.Field[Any]) -> Any:
    hint = str(f.type)
    if hint.startswith("tuple"):
        return ()
    if hint.startswith("dict") or hint.startswith("Mapping"):
        return {}
    if hint.startswith("int"):
        return 0
    return "x"
