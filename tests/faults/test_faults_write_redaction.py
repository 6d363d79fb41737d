"""Secrets used as mapping keys, and secrets cut in two by the 80-character content summary,
reach neither the store (every byte of every file, every decoded cell) nor the OTLP wire
(every request body a real loopback receiver got)."""

from __future__ import annotations

from pathlib import Path

import pytest
from otlp_receiver import HttpReceiver
from store_bytes import every_byte

from footprint._errors import ConfigError
from footprint.agent import Agent, StepClock, tool
from footprint.events import SUMMARY_LIMIT, ToolStart, summarize_content
from footprint.injection import define_fact
from footprint.providers import ScriptedModel, call
from recorder import ParquetSink, Recorder, Redactor, open_store
from recorder.otel import OTelSink, otlp_exporter

AWS = "AKIAIOSFODNN7EXAMPLE"  # 20 characters
TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
KEY_SECRET = "sk-proj-K3yAsAD1ctK3yK3yK3yK3y0123"

# the fact's text puts the AWS key across the summary's cut: 19 of its 20 characters (all
# but the last) fall inside the first SUMMARY_LIMIT - 1 characters
LEAD = "Ledger service credentials are kept as: "
FACT = LEAD.ljust(SUMMARY_LIMIT - 20, ".") + AWS + " (rotate quarterly)."


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _fragments(secret: str, size: int = 12) -> list[bytes]:
    """Every ``size``-character piece of the secret: a partial leak is a leak."""
    return [secret[i:i + size].encode() for i in range(len(secret) - size + 1)]


def _record(root: Path, processors: list[Redactor], receiver: HttpReceiver) -> None:
    otel = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                    capture_content=True, schedule_delay_s=0.05)
    model = ScriptedModel([call("lookup", order="A-1", **{KEY_SECRET: TOKEN}), "Done."])
    with Recorder([ParquetSink(root), otel], [*processors, otel.stamp]) as rec:
        agent = Agent(provider=model, model="m", tools=[tool(lookup)], sink=rec,
                      clock=StepClock(), injections=[define_fact("ledger", FACT)])
        result = agent.run_sync("Where is my order?")
        rec.emit(ToolStart(run_id=result.run_id, seq=10_000, ts=1, tool_name="lookup",
                           tool_call_id="direct", args={AWS: {TOKEN: 1}, "note": "keys"}))
    assert receiver.wait_for(lambda spans: any(s.parent_id == "" for s in spans))


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "control"])
def test_given_secrets_as_keys_and_across_the_summary_cut_when_recorded_then_none_leaks(
    tmp_path: Path, redact: bool,
) -> None:
    root = tmp_path / "store"
    with HttpReceiver() as receiver:
        _record(root, [Redactor()] if redact else [], receiver)
    wire = b"".join(receiver.payloads)
    store = every_byte(root)
    summaries = [s for (s,) in open_store(root).rows("SELECT content_summary FROM injections")]
    if not redact:  # the control: the same search finds every secret when nothing redacts
        assert AWS[:19] in summaries[0] and AWS not in summaries[0]  # cut at the 20th char
        for secret in (AWS, TOKEN, KEY_SECRET):
            assert secret.encode() in store
        assert TOKEN.encode() in wire and KEY_SECRET.encode() in wire  # the key, on the wire
        return
    for secret in (AWS, TOKEN, KEY_SECRET):
        for piece in _fragments(secret):
            assert piece not in store, (secret, piece)
            assert piece not in wire, (secret, piece)
    assert [s for s in summaries if s.startswith("Ledger")] == [  # summarised redacted
        summarize_content(FACT.replace(AWS, Redactor().marker(AWS)))] * 2


SSN = "078-05-1120"


def customer(name: str) -> dict[str, str]:
    """Look a customer up."""
    return {"name": name, "ssn": SSN}


@pytest.mark.parametrize("path", ["tool.end:result.ssn", "tool.end:result", "*.ssn"])
def test_given_a_path_into_a_tool_result_when_recorded_then_the_secret_is_in_no_file_or_span(
    tmp_path: Path, path: str,
) -> None:
    """The result reaches the store twice: on ``tool.end`` and inside the next request the
    model reads (``llm.start``'s request JSON); both, and the OTLP content, are redacted."""
    root = tmp_path / "store"
    with HttpReceiver() as receiver:
        otel = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint),
                        capture_content=True, schedule_delay_s=0.05)
        model = ScriptedModel([call("customer", name="Ann"), "Found Ann."])
        with Recorder([ParquetSink(root), otel], [Redactor(paths=[path]), otel.stamp]) as rec:
            Agent(provider=model, model="m", tools=[tool(customer)], sink=rec,
                  clock=StepClock()).run_sync("Who is Ann?")
        assert receiver.wait_for(lambda spans: any(s.parent_id == "" for s in spans))
    assert SSN.encode() not in every_byte(root)
    assert SSN.encode() not in b"".join(receiver.payloads)
    (result,) = [r for (r,) in open_store(root).rows(
        "SELECT result FROM tool_calls WHERE tool_name = 'customer'")]
    mark = Redactor().marker  # the same key ($FOOTPRINT_REDACT_KEY): the same markers
    assert mark(SSN) in result or result == mark('{"name": "Ann", "ssn": "' + SSN + '"}')
    if path != "tool.end:result":
        assert '"name": "Ann"' in result  # only the key at the path is replaced


@pytest.mark.parametrize(("path", "fix"), [
    ("tool.end:results.ssn", "did you mean 'result'?"),
    ("tool.ends:result", "did you mean 'tool.end'?"),
    ("argz.password", "did you mean 'args'?"),
])
def test_given_a_path_that_can_never_match_when_the_redactor_is_built_then_it_is_refused(
    path: str, fix: str,
) -> None:
    with pytest.raises(ConfigError, match="would never match") as refused:
        Redactor(paths=[path])
    assert repr(path) in str(refused.value) and fix in str(refused.value)
