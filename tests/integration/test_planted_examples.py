"""The planted-bug examples behave as their docstrings say, before any `why` looks at them.

Each culprit is a real cause (removing it changes the answer), each decoy is
innocent (removing it changes nothing), the redundant pair needs both gone,
the crash trap raises, the sampling model flips, and every script records
into a store offline.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docs_support import section as docs_section
from planted_support import CONFIRMS_INJECTION, NAMES, NEW_SHAPES, PLANTED, ROOT, load

from footprint import ConfigError, ListSink, RunError
from footprint.events import ContextEvaluated, ContextInjected
from recorder import open_store


def _answer(name: str, *without: str, **options: Any) -> str:
    module = load(name)
    agent = module.make_agent(**options)
    answer: str = module.converse(agent.without(*without) if without else agent).answer
    return answer


def test_given_the_planted_folder_when_listed_then_every_example_is_exercised() -> None:
    assert sorted(p.stem for p in PLANTED.glob("[!_]*.py")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_given_an_example_when_read_then_its_docstring_names_the_one_line_why_command(
    name: str,
) -> None:
    doc = load(name).__doc__ or ""
    assert f"footprint why last --agent examples/planted/{name}.py:make_agent" in doc
    assert f"python examples/planted/{name}.py" in doc


@pytest.mark.parametrize("name", (*CONFIRMS_INJECTION, "crash", *NEW_SHAPES))
def test_given_the_culprit_removed_when_re_run_then_the_answer_changes(name: str) -> None:
    culprit = load(name).CULPRIT
    assert _answer(name, culprit) != _answer(name)


@pytest.mark.parametrize("name", (*CONFIRMS_INJECTION, "redundant_pair", "crash",
                                  "stale_history", "bad_guard", *NEW_SHAPES))
def test_given_any_decoy_removed_when_re_run_then_the_answer_stays(name: str) -> None:
    recorded = _answer(name)
    for decoy in load(name).INNOCENT:
        if decoy in getattr(load(name), "WORDING", ()):  # re-words the answer: tested apart
            continue
        assert _answer(name, decoy) == recorded, decoy


def test_given_the_wrong_fact_removed_then_only_the_number_changes_not_the_first_word() -> None:
    assert _answer("wrong_fact") == "The C40 grinder costs 189 EUR."
    assert _answer("wrong_fact", "supplier-memo") == "The C40 grinder costs 149 EUR."


def test_given_the_yearless_date_when_its_style_is_removed_then_only_the_wording_changes(
) -> None:
    assert _answer("yearless_date") == "Your membership renews on March 3."
    assert _answer("yearless_date", "date-style") == "Your membership renews on 2026-03-03."
    assert _answer("yearless_date", "old-calendar") == "Your membership renews on April 3."
    for decoy in ("renewal-terms", "renewal-reminder", "gym-voice"):
        assert _answer("yearless_date", decoy) == "Your membership renews on March 3.", decoy


def test_given_the_euro_prices_when_the_format_is_removed_then_only_the_wording_changes(
) -> None:
    assert _answer("euro_prices") == "Die Siebträgermaschine S9 kostet 1.620,00 €."
    assert _answer("euro_prices", "amount-format") == "Die Siebträgermaschine S9 kostet €1,620.00."
    assert _answer("euro_prices", "supplier-note-2024") == \
        "Die Siebträgermaschine S9 kostet 1.490,00 €."
    for decoy in ("shop-voice", "price-list"):
        assert _answer("euro_prices", decoy) == "Die Siebträgermaschine S9 kostet 1.620,00 €."


def test_given_the_number_words_when_its_style_is_removed_then_only_the_wording_changes(
) -> None:
    assert _answer("number_words") == "There are three seats left on the Tuesday tour."
    assert _answer("number_words", "spell-numbers") == \
        "There are 3 seats left on the Tuesday tour."
    assert _answer("number_words", "old-roster") == \
        "There are seven seats left on the Tuesday tour."
    for decoy in ("roster", "tour-voice"):
        assert _answer("number_words", decoy) == _answer("number_words"), decoy


def test_given_two_causes_when_each_is_removed_then_each_fixes_its_own_value() -> None:
    assert _answer("two_causes") == "The Orbit desk costs 210 EUR and ships in 9 days."
    assert _answer("two_causes", "price-memo") == \
        "The Orbit desk costs 300 EUR and ships in 9 days."
    assert _answer("two_causes", "ship-memo") == \
        "The Orbit desk costs 210 EUR and ships in 3 days."
    for decoy in load("two_causes").INNOCENT:
        assert _answer("two_causes", decoy) == _answer("two_causes"), decoy


def test_given_the_mixed_pair_when_one_or_both_are_removed_then_only_both_matter() -> None:
    module = load("mixed_pair")
    agent = module.make_agent()
    no_tool = agent.variant(tools=())
    assert _answer("mixed_pair") == "The Orbit desk costs 210 EUR today."
    assert module.converse(no_tool).answer == _answer("mixed_pair", "spring-memo") == \
        "The Orbit desk costs 210 EUR today."
    assert module.converse(no_tool.without("spring-memo")).answer == \
        "The Orbit desk costs 300 EUR today."
    for decoy in module.INNOCENT:
        assert _answer("mixed_pair", decoy) == "The Orbit desk costs 210 EUR today.", decoy


def test_given_the_redundant_pair_when_one_or_both_are_removed_then_only_both_matter() -> None:
    a, b = load("redundant_pair").CULPRIT
    recorded = _answer("redundant_pair")
    assert recorded == "The TX-9 shelf holds up to 40 kg."
    assert _answer("redundant_pair", a) == recorded == _answer("redundant_pair", b)
    assert _answer("redundant_pair", a, b) == "The TX-9 shelf holds up to 25 kg."


def test_given_the_crash_trap_when_its_format_piece_is_removed_then_the_model_raises() -> None:
    with pytest.raises(RunError, match="no 'Reply format:' line"):
        _answer("crash", load("crash").BROKE)


def test_given_the_sampling_model_when_re_run_then_its_answer_flips_with_its_rng() -> None:
    module = load("sampling")
    agent = module.make_agent(seed=3)
    answers = {module.converse(agent.variant(seed=s)).answer for s in range(12)}
    assert answers == {module.YES, module.NO}
    assert {_answer("sampling", p=0.0), _answer("sampling", p=1.0)} == {module.YES, module.NO}
    greedy = module.make_agent(p=1.0).variant(temperature=None)
    assert module.converse(greedy).answer == module.YES
    with pytest.raises(ConfigError, match="not a probability"):
        module.make_agent(p=1.5)


def test_given_the_stale_history_when_the_turn_1_answer_is_withheld_then_turn_2_is_right() -> None:
    module = load("stale_history")
    agent = module.make_agent()
    agent.run_sync(module.FIRST)
    saved = agent.checkpoint()
    assert module.CULPRIT_TEXT in [m["content"] for m in saved["history"]]
    stale = module.make_agent().run_sync(module.MESSAGE, continue_from=saved).answer
    kept = [m for m in saved["history"] if m["content"] != module.CULPRIT_TEXT]
    fresh = module.make_agent().run_sync(module.MESSAGE,
                                         continue_from={**saved, "history": kept}).answer
    assert stale == "Order 88 will ship to 12 Old Street, Leeds."
    assert fresh == "Order 88 will ship to 5 New Road, York."
    assert module.make_agent().run_sync(module.MESSAGE).answer == fresh


def test_given_the_bad_guard_when_run_then_the_route_took_400_eur_past_the_review() -> None:
    module = load("bad_guard")
    sink = ListSink()
    answer = module.converse(module.make_agent(sink=sink)).answer
    assert answer == "Refund of 400 EUR for order R-7 issued automatically."
    moves = [e.cursor_move for e in sink.events if isinstance(e, ContextEvaluated)
             and e.cursor_move is not None]
    route = next(m for m in moves if m.by == "route")
    assert route.guard is not None and (route.from_skill, route.to) == ("billing", "auto_refund")
    cond = route.guard.conditions[0]
    assert (cond.key, cond.op, cond.value, cond.actual_summary) == ("amount", "lte", 1000, "400")
    assert moves[-1].by == "stay"
    fixed = module.converse(module.make_agent(limit=100)).answer
    assert fixed == "Order R-7 (400 EUR) is waiting for a supervisor's review."


def test_given_the_early_instruction_when_run_then_it_reached_only_the_first_call() -> None:
    module = load("early_instruction")
    sink = ListSink()
    module.converse(module.make_agent(sink=sink))
    steps = {e.step_id for e in sink.events
             if isinstance(e, ContextInjected) and e.injection_id == module.CULPRIT}
    assert steps == {"engine#1"}


def test_given_the_lease_example_when_run_then_only_the_lease_admits_the_instruction() -> None:
    module = load("lease_instruction")
    sink = ListSink()
    module.converse(module.make_agent(sink=sink))
    vias = {(e.step_id, e.admitted_via) for e in sink.events
            if isinstance(e, ContextInjected) and e.injection_id == module.CULPRIT}
    assert vias == {("engine#2", "lease"), ("engine#3", "lease")}


@pytest.mark.parametrize("name", NAMES)
def test_given_an_example_when_its_main_runs_then_the_store_holds_its_runs(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    assert load(name).main([str(store)]) == 0
    out = capsys.readouterr().out
    assert f"footprint why last --agent examples/planted/{name}.py:make_agent" in out
    runs = open_store(store).sql("SELECT count(*) FROM runs").fetchall()
    assert runs == [(2 if hasattr(load(name), "FIRST") else 1,)]  # a turn before the last


def test_given_a_planted_script_when_run_offline_then_it_records_and_prints_the_answer(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "FOOTPRINT_STORE": str(tmp_path / "store")}
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env[key] = "http://127.0.0.1:9"
    done = subprocess.run([sys.executable, "examples/planted/wrong_fact.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("The C40 grinder costs 189 EUR.")
    assert (tmp_path / "store").is_dir()


def test_given_a_planted_script_when_asked_for_help_then_it_prints_usage_and_records_nothing(
    tmp_path: Path,
) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples/planted/wrong_fact.py"),
                           "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: wrong_fact.py [-h] [store]")
    assert list(tmp_path.iterdir()) == []  # no store named '--help'


def test_given_the_docs_when_their_planted_table_is_read_then_it_lists_each_example_once() -> None:
    section = docs_section("## Planted bugs")
    rows = re.findall(r"^\| `(\w+)\.py` \| .+ \| (.+) \|$", section, re.M)
    assert [name for name, _ in rows] == list(NAMES)
    for name, culprit in rows:
        declared = getattr(load(name), "CULPRIT", ())
        for culprit_id in (declared,) if isinstance(declared, str) else declared:
            assert f"`{culprit_id}`" in culprit, name
    assert "footprint why last --agent examples/planted/wrong_fact.py:make_agent" in section
