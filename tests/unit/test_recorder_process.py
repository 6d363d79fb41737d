"""Processors: redaction by key path and by regex, and content capture levels."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import events

from footprint._errors import ConfigError
from footprint.events import ListSink, LLMEnd, RunStart, ToolEnd, ToolStart, to_record
from recorder import DROP, Recorder, Redactor, capture, marker, parse_marker, redaction_key

_KEY = st.from_regex(r"sk-[A-Za-z0-9]{20,30}", fullmatch=True)
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(before=_TEXT, key=_KEY, after=_TEXT)
def test_given_an_api_key_in_any_text_when_redacted_then_only_its_hash_remains(
    before: str, key: str, after: str
) -> None:
    event = ToolEnd(run_id="r", seq=1, ts=1, tool_call_id="c", tool_name="t",
                    result=f"{before} {key} {after}")
    redactor = Redactor()
    out = redactor(event)
    assert isinstance(out, ToolEnd)
    assert key not in out.result
    assert re.search(r"\[redacted hmac-sha256:[0-9a-f]{8}:[0-9a-f]{64}\]", out.result)
    matched = re.findall(r"sk-[A-Za-z0-9_\-]{16,}", f" {key} ")[0]
    assert redactor.marker(matched) in out.result
    assert hashlib.sha256(matched.encode()).hexdigest() not in out.result  # keyed, not bare


@given(event=events())
def test_given_any_event_without_secrets_when_redacted_then_unchanged(event: object) -> None:
    redactor = Redactor(patterns=[r"\bZZSECRETZZ\b"])
    assert redactor(event) is event  # type: ignore[arg-type]


def test_given_a_key_path_when_redacted_then_the_whole_value_becomes_its_marker() -> None:
    event = ToolStart(run_id="r", seq=0, ts=1, tool_name="login", tool_call_id="c",
                      args={"user": "ann", "auth": {"password": "pw1", "otp": 123456}})
    redactor = Redactor(paths=["tool.start:args.auth.*"], patterns=[])
    out = redactor(event)
    assert isinstance(out, ToolStart)
    assert out.args == {"user": "ann", "auth": {"password": redactor.marker("pw1"),
                                                 "otp": marker("123456", redaction_key())}}
    other = Redactor(paths=["tool.end:result"], patterns=[])(event)  # another type's path
    assert other is event


@pytest.mark.parametrize("bad", ["", "args..x", "run_id", "tool.start:"])
def test_given_a_malformed_path_when_building_then_config_error_names_it(bad: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(repr(bad))):
        Redactor(paths=[bad])


@pytest.mark.parametrize(
    ("level", "expect"),
    [("full", "the secret plan"),
     ("hashes", redaction_key().marker("the secret plan")),
     ("none", "")],
)
def test_given_a_capture_level_when_processing_then_content_is_kept_hashed_or_dropped(
    level: str, expect: str
) -> None:
    event = LLMEnd(run_id="r", seq=3, ts=1, content="the secret plan", response_hash="h9")
    out = capture(level)(event)  # type: ignore[arg-type]
    assert isinstance(out, LLMEnd)
    assert (out.content, out.response_hash) == (expect, "h9")
    start = capture(level)(ToolStart(run_id="r", seq=0, ts=1, tool_name="t", tool_call_id="c",  # type: ignore[arg-type]
                                     args={"q": 1}))
    assert isinstance(start, ToolStart)
    keyed = parse_marker(redaction_key().marker('{"q":1}'))
    assert keyed is not None and keyed.key_id == redaction_key().key_id
    assert dict(start.args) == {"full": {"q": 1}, "hashes": {
        "hmac-sha256": keyed.digest, "key_id": keyed.key_id}, "none": {}}[level]
    assert hashlib.sha256(b"the secret plan").hexdigest() not in repr(out)  # keyed, not bare


def test_given_an_unknown_capture_level_when_built_then_config_error() -> None:
    with pytest.raises(ConfigError, match="'some'"):
        capture("some")  # type: ignore[arg-type]


def test_given_a_processor_that_drops_or_raises_when_recording_then_counted_not_raised() -> None:
    sink = ListSink()

    def sampler(e: object) -> object:
        if getattr(e, "seq", 0) == 2:
            raise RuntimeError("bad processor")
        return DROP if getattr(e, "seq", 0) % 2 else e

    with Recorder([sink], [sampler]) as rec:  # type: ignore[list-item]
        for i in range(6):
            rec.emit(RunStart(run_id="r", seq=i, ts=i, user_message="m"))
    assert [e.seq for e in sink.events] == [0, 4]
    stats = rec.stats()
    assert (stats.dropped_by_processors, stats.processor_errors) == (4, 1)
    assert to_record(sink.events[0])["user_message"] == "m"
