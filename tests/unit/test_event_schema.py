"""Each event's JSON Schema (``footprint.events.record_schema``) accepts exactly the records
``to_record`` writes: every generated event and every event of a real support-desk run."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given
from strategies import events

from footprint._errors import ConfigError
from footprint.events import EVENT_TYPES, Event, ListSink, record_schema, to_record
from lens._examples.support_desk import make_agent

VALIDATORS = {cls: jsonschema.Draft202012Validator(record_schema(cls))
              for cls in EVENT_TYPES.values()}


@pytest.mark.parametrize("tag", list(EVENT_TYPES))
def test_given_an_event_class_when_its_schema_is_built_then_it_is_valid_json_schema(
        tag: str) -> None:
    schema = record_schema(EVENT_TYPES[tag])
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["type"] == {"enum": [tag]}


@given(events())
def test_given_any_event_when_recorded_then_its_schema_accepts_the_record(event: Event) -> None:
    VALIDATORS[type(event)].validate(to_record(event))


def test_given_a_support_desk_run_when_recorded_then_every_record_fits_its_schema() -> None:
    sink = ListSink()
    make_agent(sink=sink).run_sync("I was charged $40 for order A-1047 and it arrived broken")
    assert len({type(e) for e in sink.events}) > 10
    for event in sink.events:
        VALIDATORS[type(event)].validate(to_record(event))


def test_given_a_record_with_an_unknown_key_when_validated_then_the_schema_refuses_it() -> None:
    sink = ListSink()
    make_agent(sink=sink).run_sync("Hello")
    record = {**to_record(sink.events[0]), "extra": 1}
    with pytest.raises(jsonschema.ValidationError):
        VALIDATORS[type(sink.events[0])].validate(record)


def test_given_something_not_an_event_class_when_asked_then_one_config_error_names_it() -> None:
    with pytest.raises(ConfigError, match=r"'run\.start' is not an event class"):
        record_schema("run.start")  # type: ignore[arg-type]
