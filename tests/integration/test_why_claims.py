"""Every sentence of a why headline is backed by the experiment that tests it (issue 33).

A set the search finds by screening *everything but* a confirmed cause is not a cause of its
own; a set is reported minimal only when each member's removal from it was tested; the
user's own words are context, never a root cause (test_planted_shapes.py).
"""

from __future__ import annotations

import re

from footprint import Agent, FunctionModel, ListSink, StepClock, define_fact, define_steering
from footprint.providers import LLMRequest, Reply
from lens import why
from lens.explain._report import verdict_line
from lens.explain._search import Finding
from lens.explain._stats import Ablation, Tally
from lens.explain._verdicts import _shown_minimal
from lens.tui._verdict import verdict_class

_INNOCENT = ("shop-voice", "price-list", "grinder-care")


def _thin_context_model(request: LLMRequest) -> Reply:
    """The memo's price wins; with none of the three other pieces left the model guesses."""
    if "now 189" in request.system and not any(
            w in request.system for w in ("State every price", "Price list", "Care:")):
        return "The C40 grinder costs about 200 EUR."
    if "now 189" in request.system:
        return "The C40 grinder costs 189 EUR."
    if "149 EUR" in request.system:
        return "The C40 grinder costs 149 EUR."
    return "I have no price for the C40 grinder."


def _shop(sink: ListSink | None = None, seed: int = 0) -> Agent:
    return Agent(
        provider=FunctionModel(_thin_context_model, name="thin"), model="m",
        injections=[
            define_steering("shop-voice", "State every price in EUR."),
            define_fact("price-list", "Price list: C40 grinder 149 EUR."),
            define_fact("grinder-care", "Care: burrs cost 35 EUR."),
            define_fact("supplier-memo", "Memo (2022): C40 now 189."),
        ],
        sink=sink, clock=StepClock(), seed=seed)


def test_given_everything_but_the_culprit_changes_the_answer_when_why_runs_then_that_set_is_no_cause(  # noqa: E501
) -> None:
    sink = ListSink()
    run = _shop(sink).run_sync("How much does the C40 grinder cost?")
    report = why(sink.events, run.run_id, agent=_shop)
    (rest,) = [s for s in report.suspects if s.kind == "set" and s.verdict == "confirmed"]
    assert set(rest.ids or ()) == set(_INNOCENT)  # the search did find it: it is no cause
    assert "the complement of the confirmed cause" in rest.note and rest.role is None
    assert report.root_causes == ("fact 'supplier-memo'",), report.conclusion_text
    for piece in _INNOCENT:
        assert not re.search(rf"'{piece}'", report.conclusion_text), report.conclusion_text
    assert [c.names for c in report.claims] == [("fact 'supplier-memo'",)]
    line = verdict_line(rest, report) or ""
    assert "not a cause of its own: " in line and "the complement of the confirmed" in line
    assert verdict_class(rest, report) == "apart"  # the lens says what the CLI says


def _ablation(verdict: str, changed: int, same: int) -> Ablation:
    return Ablation(tally=Tally(changed=changed, same=same), p_value=0.01,
                    verdict=verdict)  # type: ignore[arg-type]


def test_given_a_confirmed_set_when_its_members_are_tested_then_minimal_is_what_they_showed(
) -> None:
    from lens.explain._candidates import Removal

    a, b, c = Removal("injection", "a"), Removal("injection", "b"), Removal("injection", "c")
    held, flipped = _ablation("not-confirmed", 0, 2), _ablation("confirmed", 2, 0)
    pair = Finding(removals=(a, b), test=flipped, alone=((a, held), (b, held)))
    assert _shown_minimal(pair) is True
    assert _shown_minimal(Finding(removals=(a, b), test=flipped,
                                  alone=((a, held), (b, flipped)))) is False
    triple = Finding(removals=(a, b, c), test=flipped)
    assert _shown_minimal(triple) is None  # not tested: not shown minimal
    kept = Tally(same=1)
    assert _shown_minimal(Finding(removals=(a, b, c), test=flipped, without=(
        (a, kept), (b, kept), (c, kept)))) is True
    assert _shown_minimal(Finding(removals=(a, b, c), test=flipped, without=(
        (a, kept), (b, Tally(changed=1)), (c, kept)))) is False


_SAID = "Please deliver my orders on Saturdays only."


def _delivery_model(request: LLMRequest) -> Reply:
    """A delivery day the user gave in the conversation wins over the profile's."""
    asks = [m.content for m in request.messages if m.role == "user"]
    if not asks[-1].startswith("When"):
        return "Noted."
    said = next((d.group(1) for a in asks[:-1] if (d := re.search(r"on (\w+)days", a))), None)
    profile = re.search(r"Delivery day: (\w+)day\.", request.system)
    day = said or (profile.group(1) if profile else "Mon")
    return f"Order 12 will arrive on {day}day."


def _desk(sink: ListSink | None = None, seed: int = 0) -> Agent:
    return Agent(provider=FunctionModel(_delivery_model, name="desk"), model="m",
                 injections=[define_steering("desk-voice", "One sentence."),
                             define_fact("profile", "Delivery day: Tuesday.")],
                 sink=sink, clock=StepClock(), seed=seed)


def test_given_only_what_the_user_said_changes_the_answer_when_why_runs_then_it_quotes_them(
) -> None:
    sink = ListSink()
    agent = _desk(sink)
    agent.run_sync(_SAID)
    run = agent.follow_up_sync("When will my order 12 arrive?")
    assert run.answer == "Order 12 will arrive on Saturday."
    report = why(sink.events, run.run_id, agent=_desk)
    assert report.conclusion == "confirmed" and report.root_causes == (), report.conclusion_text
    assert report.conclusion_text.startswith(f"because the user said “{_SAID}”: removing "
                                             "that message changes the answer"), \
        report.conclusion_text
    assert "no piece of the agent was shown to cause it" in report.conclusion_text
    assert report.user_said == (_SAID,) and report.path == ()
    assert [c.kind for c in report.claims] == ["user-said"]
    assert not [s for s in report.suspects if s.role == "root"]
