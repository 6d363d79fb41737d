"""The lens's pure views: iterations, labelled blocks, the skill walk, event rows, why text."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from footprint.events import (
    ContextInjected,
    Event,
    LLMEnd,
    LLMStart,
    RunEnd,
    SkillRejected,
    ToolStart,
)
from lens._examples.support_desk import PLANTED_FACT
from lens.explain._custody import answer_custody, failing_custody
from lens.playback._terminal import terminal_safe
from lens.tui._model import SLOTS, build_run
from lens.tui._rows import EventRows, parse_filter
from lens.tui._summary import clip, summarize
from lens.tui._walk import skill_lines
from lens.tui._why import causal_note, chain_text, piece_prompt
from recorder import open_store


def _store_events(desk_store: tuple[Path, str]) -> list[Event]:
    path, run_id = desk_store
    with open_store(path) as store:
        return store.events(run_id)


def test_given_the_desk_run_when_built_then_each_iteration_carries_its_move_tools_and_tokens(
    desk_store: tuple[Path, str],
) -> None:
    events = _store_events(desk_store)
    view = build_run(desk_store[1], events)
    end = next(e for e in events if isinstance(e, RunEnd))
    assert [it.number for it in view.iterations] == list(range(1, end.iteration_count + 1))
    assert sum(it.tokens for it in view.iterations) == (
        end.total_input_tokens + end.total_output_tokens)
    assert [t for it in view.iterations for t in it.tools] == [
        e.tool_name for e in events if isinstance(e, ToolStart)]
    assert sum(it.refusals for it in view.iterations) == sum(
        isinstance(e, SkillRejected) for e in events)
    first = view.iterations[0]
    assert first.move is not None and (first.move.by, first.move.to) == ("entry", "billing")
    assert view.status == "complete" and view.answer == end.final_content


def test_given_an_iteration_when_its_blocks_are_built_then_each_names_its_admitting_seq(
    desk_store: tuple[Path, str],
) -> None:
    events = _store_events(desk_store)
    view = build_run(desk_store[1], events)
    for it in view.iterations:
        assert it.call is not None
        landed = [e for e in events if isinstance(e, ContextInjected)
                  and e.iteration == it.number and e.seq < it.call.seq]
        blocks = it.slot("system-prompt") + it.slot("tools")
        assert len(blocks) == len(landed)
        for block, e in zip(blocks, landed, strict=True):
            assert f"admitted by seq {e.admitted_by}" in block.label
            assert e.admitted_via in block.label
            assert ("content hash", e.content_hash) in block.details
            assert block.text == e.raw_content


def test_given_the_messages_tab_when_built_then_each_message_names_the_event_it_came_from(
    desk_store: tuple[Path, str],
) -> None:
    events = _store_events(desk_store)
    last = build_run(desk_store[1], events).iterations[-1]
    messages = last.slot("messages")
    assert last.call is not None and len(messages) == last.call.messages_count
    assert messages[0].label.startswith("user · from")
    assert all("origin not recorded" not in m.label for m in messages)
    ends = {e.seq for e in events if isinstance(e, LLMEnd)}
    assistant = [m for m in messages if m.label.startswith("assistant")]
    assert assistant and all(any(f"llm.end seq {s})" in m.label for s in ends) for m in assistant)


def test_given_a_redacted_request_when_built_then_the_messages_tab_says_so() -> None:
    call = LLMStart(run_id="r", seq=1, ts=0, iteration=1, step_id="llm#1", provider="p",
                    model="m", request_hash="abc123")
    view = build_run("r", [call])
    (note,) = view.iterations[0].slot("messages")
    assert "not recorded" in note.text and "abc123" in note.text
    assert set(view.iterations[0].blocks) == set(SLOTS)
    assert view.status == "incomplete" and view.answer is None


def test_given_the_desk_run_when_the_skill_walk_is_drawn_then_guards_refusals_and_escalation_show(
    desk_store: tuple[Path, str],
) -> None:
    lines = skill_lines(_store_events(desk_store))
    text = "\n".join(t for _, t in lines)
    assert "billing → refund by route" in text
    assert any(k == "pass" and "risk eq low → \"low\" ✓" in t for k, t in lines)
    assert any(k == "pass" and "amount lte 100 → 40 ✓" in t for k, t in lines)
    refusals = [t for k, t in lines if k == "refusal"]
    assert len(refusals) == 2 and "allowed: refund, triage" in refusals[0]
    assert any(k == "escalation" and "desk-senior" in t for k, t in lines)
    assert lines[-1] == ("head", "2 refusal(s), 1 escalation(s)")


def test_given_the_answer_when_the_why_text_is_drawn_then_it_is_correlational_and_names_seqs(
    desk_store: tuple[Path, str],
) -> None:
    custody = answer_custody(_store_events(desk_store))
    assert custody is not None
    chain = chain_text(custody).plain
    assert "CORRELATIONAL" in chain and "caused" not in chain
    top = piece_prompt(1, custody.pieces[0]).plain
    assert PLANTED_FACT in top
    assert f"LANDED seq {custody.pieces[0].landed.seq}" in top and "BORN seq" in top
    assert causal_note(desk_store[1]).endswith(f"footprint why {desk_store[1][:13]} "
                                               "--agent module:factory")
    assert "no model call" in chain_text(None).plain


def test_given_a_call_that_failed_when_the_why_text_is_drawn_then_it_leads_with_its_error(
    desk_store: tuple[Path, str],
) -> None:
    events = _store_events(desk_store)
    start = [e for e in events if e.type == "llm.start"][-1]
    custody = failing_custody([e for e in events if e.seq <= start.seq], start.step_id,
                              "RunError: provider raised TimeoutError")
    assert custody is not None
    chain = chain_text(custody).plain
    assert chain.startswith("FAILED CALL  ✗ RunError: provider raised TimeoutError\n")
    assert f"the model call that failed: {start.step_id} · " in chain
    assert f"(llm.start seq {start.seq}, no reply)" in chain
    assert "ranked by word overlap with the error — CORRELATIONAL" in chain
    assert "ANSWER" not in chain and "no model call" not in chain
    answered = answer_custody(events)
    assert answered is not None and chain_text(answered, failed=True).plain.startswith(
        "LAST REPLY ")


_TYPES = st.sampled_from(["run.start", "context.injected", "context.evaluated",
                          "skill.rejected", "skill.activated", "llm.start", "tool.end"])


def _rows(types: list[str]) -> EventRows:
    blanks = (None,) * 13
    return EventRows([(i, f"s#{i}", t, 1, *blanks) for i, t in enumerate(types)])


@given(st.lists(_TYPES, max_size=60), st.lists(st.sampled_from(
    ["skill.", "context", "llm", "tool.end", "x"]), max_size=3))
def test_given_any_rows_when_filtered_by_prefixes_then_exactly_the_matching_rows_stay(
    types: list[str], prefixes: list[str],
) -> None:
    rows = _rows(types)
    rows.filter(", ".join(prefixes))
    expected = [i for i, t in enumerate(types) if not prefixes or t.startswith(tuple(prefixes))]
    assert [rows.seq(i) for i in range(len(rows))] == expected
    assert rows.total == len(types)
    rows.filter("")
    assert len(rows) == len(types)


def test_given_a_row_with_key_fields_when_formatted_then_only_present_fields_show() -> None:
    row = (7, "engine#2", "context.injected", 2, None, None, None, None, "tone",
           "system-prompt", "steering", "always", 5, None, None, None, "why")
    line = EventRows([row]).line(0)
    assert line.split()[:3] == ["7", "#2", "engine#2"]
    assert "injection=tone slot=system-prompt flavor=steering via=always admitted_by=5" in line
    assert "tool=" not in line and line.endswith("reason=why")
    assert parse_filter(" skill.,  llm ") == ("skill.", "llm")


@given(st.text(), st.integers(min_value=1, max_value=200))
def test_given_any_text_when_clipped_then_it_is_one_line_within_width(
    text: str, width: int,
) -> None:
    out = clip(text, width)
    assert len(out) <= width and "\n" not in out
    assert not any(unicodedata.category(c) == "Cc" for c in out)  # ESC, CR, BEL… escaped
    shown = terminal_safe(" ".join(text.split()))  # whitespace folded, then escaped
    if len(shown) <= width:
        assert out == shown


def test_given_events_when_summarized_then_seq_type_and_key_fields_are_named(
    desk_store: tuple[Path, str],
) -> None:
    events = _store_events(desk_store)
    rejected = next(e for e in events if isinstance(e, SkillRejected))
    text = summarize(rejected, 200)
    assert text.startswith(f"seq {rejected.seq} skill.rejected:")
    assert "requested_id=escalation" in text and "allowed=" in text
    assert all(len(summarize(e, 90)) <= 90 for e in events)
