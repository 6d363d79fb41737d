"""`why` with a budget on the planted bugs: a search the budget stops names what it isolated
and the budget that completes it, and that budget does complete it."""

from __future__ import annotations

import re
from types import ModuleType

from planted_support import load

from footprint import ListSink
from footprint.events import EventBase
from lens import why
from lens.explain._report import render_why


def _recorded(name: str) -> tuple[ModuleType, list[EventBase], str]:
    """The planted example ``name`` run once: its module, events and run id."""
    module = load(name)
    sink = ListSink()
    run = module.converse(module.make_agent(sink=sink))
    return module, list(sink.events), run.run_id


def test_given_a_budget_that_stops_before_a_pair_is_confirmed_when_why_runs_then_it_names_the_pair(
) -> None:
    module, events, run_id = _recorded("mixed_pair")
    report = why(events, run_id, agent=module.make_agent, budget=35)
    text = report.conclusion_text
    assert text.startswith("budget spent: the screens isolated the set {"), text
    assert re.search(r"\{(fact 'spring-memo' \+ tool promo_lookup #call_1|tool promo_lookup "
                     r"#call_1 \+ fact 'spring-memo')\} \(\d+ re-runs\)", text), text
    assert "would test it" in text, text


def test_given_a_budget_on_120_injections_when_why_runs_then_it_confirms_first_and_names_a_budget_that_completes(  # noqa: E501
) -> None:
    module, events, run_id = _recorded("crowded_prompt")
    planned: list[str] = []
    report = why(events, run_id, agent=module.make_agent, budget=100,
                 plan=planned.append)
    assert report.reruns == 100 and report.conclusion == "confirmed", report.conclusion_text
    assert [s.id for s in report.suspects if s.verdict == "confirmed"] == [module.CULPRIT]
    (plan,) = planned
    assert re.search(r"over 120 pieces.*about (\d+) re-runs; --budget 100 caps it at 100",
                     plan), plan
    more = re.search(r"(\d+) piece\(s\) not tested alone .*--budget (\d+) would finish it",
                     report.conclusion_text)
    assert more is not None, report.conclusion_text
    assert int(more.group(1)) == len(report.untested) > 0
    again = why(events, run_id, agent=module.make_agent, budget=int(more.group(2)))
    assert again.untested == () and again.conclusion == "confirmed", again.conclusion_text
    assert "budget" not in again.conclusion_text and again.reruns <= int(more.group(2))


def test_given_a_budget_that_stops_a_confirming_test_when_why_prints_then_it_reads_untested(
) -> None:
    module, events, run_id = _recorded("crowded_prompt")
    report = why(events, run_id, agent=module.make_agent, budget=30)
    memo = next(s for s in report.suspects if s.id == module.CULPRIT)
    assert memo.verdict == "untested" and memo.runs == 0, memo
    assert re.fullmatch(r"isolated by the screens in \d+ re-runs; the budget stopped before "
                        r"its confirming test ended", memo.note), memo.note
    text = "\n".join(render_why(report))
    assert "changed in 0/" not in text, text
    more = re.search(r"--budget (\d+) would test it", report.conclusion_text)
    assert more is not None, report.conclusion_text
    again = why(events, run_id, agent=module.make_agent, budget=int(more.group(1)))
    assert again.untested == () and [s.id for s in again.suspects
                                     if s.verdict == "confirmed"] == [module.CULPRIT]
