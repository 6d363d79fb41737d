"""`footprint why last --agent examples/planted/X.py:make_agent` on every planted bug.

The call is the plain one a new user types (only ``--json`` added for the
assertions): it must confirm each culprit, confirm no innocent piece, call
a sampling model inconclusive and a crashing re-run broke. The JSON report
validates against the schema the package ships.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from docs_support import section as docs_section
from planted_support import CONFIRMS_INJECTION, NAMES, ROOT, ROOTS, load, record, ref

from footprint import ListSink
from lens import why
from lens.cli import main

Report = dict[str, Any]
Suspect = dict[str, Any]

# tool calls on the culprit's own path: confirming them is true (their removal also changes
# the answer) and tolerated; every other confirmed piece must be the culprit
ON_PATH: dict[str, frozenset[str]] = {
    "skill_wrong_tool": frozenset({"fx_rate_fixed", "read_skill"}),
    "lease_instruction": frozenset({"apply_voucher", "cart_total"}),
    "early_instruction": frozenset({"stock_snapshot"}),
    "twin_tools": frozenset({"get_order_status"}),
    "stale_history": frozenset({"profile_address", "order_history"}),
    "bad_guard": frozenset({"lookup_order", "issue_refund"}),
    "mid_loop_rule": frozenset({"lookup_member", "staff_price"}),
    "long_run": frozenset({"ledger_page"}),
}


def _cli(store: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _in_repo(store: Path) -> Iterator[None]:
    """The user's shell: the repository as the working directory, the store in the env."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        mp.setenv("FOOTPRINT_STORE", str(store))
        yield


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    """Each example recorded into its own store, then explained once by the plain call."""
    done: dict[str, Report] = {}
    for name in NAMES:
        store = tmp_path_factory.mktemp(name) / "store"
        record(name, store)
        with _in_repo(store):
            code, out, err = _cli(store, "why", "last", "--agent", ref(name), "--json")
        assert code == 0, f"{name}: exit {code}: {err[-400:]}"
        done[name] = json.loads(out)
    return done


def _ids(s: Suspect) -> frozenset[str]:
    if s.get("ids"):
        return frozenset(s["ids"])
    return frozenset({s["id"]}) if s.get("id") else frozenset()


def _text(s: Suspect | list[Suspect]) -> str:
    return json.dumps(s, ensure_ascii=False)


def _confirmed(report: Report) -> list[Suspect]:
    return [s for s in report["suspects"] if s.get("verdict") == "confirmed"]


def _on_path(name: str, s: Suspect) -> bool:
    """A confirmed tool-call suspect on the culprit's path (named by its tool)."""
    if s.get("kind") in ("injection", "set", "message"):
        return False
    return any(tool in _text(s) for tool in ON_PATH.get(name, ()))


def _assert_nothing_innocent(name: str, report: Report, culprits: list[frozenset[str]]) -> None:
    innocent = set(load(name).INNOCENT)
    for s in _confirmed(report):
        assert not (_ids(s) & innocent), f"{name}: innocent confirmed: {_text(s)}"
        assert _ids(s) in culprits or _on_path(name, s), f"{name}: confirmed {_text(s)}"


def _schema() -> dict[str, Any]:
    found = sorted((ROOT / "lens").rglob("*why*.json"))
    assert len(found) == 1, f"expected one shipped why schema, found {found}"
    data: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", NAMES)
def test_given_a_planted_run_when_why_reports_json_then_it_validates_against_the_schema(
    name: str, reports: dict[str, Report],
) -> None:
    report = reports[name]
    jsonschema.validate(report, _schema())
    assert report["mode"] == "CAUSAL"
    assert 0 < report["events_read"] <= report["events_total"]


@pytest.mark.parametrize("name", NAMES)
def test_given_a_planted_run_when_why_runs_then_no_decoy_is_confirmed(
    name: str, reports: dict[str, Report],
) -> None:
    innocent = set(load(name).INNOCENT)
    wrongly = [s for s in _confirmed(reports[name]) if _ids(s) & innocent]
    assert wrongly == [], [_text(s) for s in wrongly]


@pytest.mark.parametrize("name", (*CONFIRMS_INJECTION, "wording_innocents", "yearless_date",
                                  "number_words", "euro_prices"))
def test_given_an_injection_culprit_when_why_runs_then_it_alone_is_confirmed(
    name: str, reports: dict[str, Report],
) -> None:
    report, culprit = reports[name], load(name).CULPRIT
    hits = [s for s in report["suspects"] if s["kind"] == "injection" and s.get("id") == culprit]
    assert hits and hits[0]["verdict"] == "confirmed", f"{name}: {hits}"
    assert hits[0]["chain"], f"{name}: the culprit has no custody chain"
    _assert_nothing_innocent(name, report, [frozenset({culprit})])


def test_given_the_lease_example_when_why_confirms_the_instruction_then_its_chain_names_the_lease(
    reports: dict[str, Report],
) -> None:
    culprit = load("lease_instruction").CULPRIT
    hit = next(s for s in reports["lease_instruction"]["suspects"] if s.get("id") == culprit)
    assert "lease" in _text(hit["chain"]).lower()


def test_given_the_redundant_pair_when_why_runs_then_the_pair_is_confirmed_as_a_set(
    reports: dict[str, Report],
) -> None:
    report, pair = reports["redundant_pair"], frozenset(load("redundant_pair").CULPRIT)
    sets = [s for s in report["suspects"] if s["kind"] == "set" and _ids(s) == pair]
    assert sets and sets[0]["verdict"] == "confirmed", _text(report["suspects"])
    alone = [s for s in report["suspects"] if s["kind"] == "injection" and _ids(s) <= pair]
    assert all(s["verdict"] != "confirmed" for s in alone)
    _assert_nothing_innocent("redundant_pair", report, [pair])


def test_given_a_pair_of_a_fact_and_a_tool_result_when_why_runs_then_each_is_named_by_label(
    reports: dict[str, Report],
) -> None:
    report, (fact, tool) = reports["mixed_pair"], load("mixed_pair").CULPRIT
    sets = [s for s in report["suspects"] if s["kind"] == "set"]
    assert len(sets) == 1 and sets[0]["verdict"] == "confirmed", _text(report["suspects"])
    members = [s for s in report["suspects"] if s["kind"] != "set" and s["id"] in sets[0]["ids"]]
    assert {s.get("flavor") for s in members} == {"fact", tool}, _text(members)
    assert [s["id"] for s in members if s["kind"] == "injection"] == [fact]
    for member in members:
        assert member["label"] in _first_line(report) and member["label"] in sets[0]["label"]
        assert member["verdict"] != "confirmed"
    assert not re.search(r"(?<![#\w])call_\d", _first_line(report)), _first_line(report)
    assert report["necessary"] == ["fact 'price-list'"]
    _assert_nothing_innocent("mixed_pair", {"suspects": [
        s for s in _confirmed(report) if s["kind"] != "set" and s["effect"] != "lost"]}, [])


def test_given_two_independent_causes_when_why_runs_then_each_is_headed_with_its_own_value(
    reports: dict[str, Report],
) -> None:
    report, first = reports["two_causes"], _first_line(reports["two_causes"])
    assert "conjunction" not in first and "independent" in first, first
    assert "fact 'price-memo' changes the answer (210 EUR → 300 EUR" in first, first
    assert "fact 'ship-memo' changes" in first and "(9 days → 3 days" in first, first
    roots = [s for s in report["suspects"] if s.get("role") == "root"]
    assert {s["id"] for s in roots} == set(load("two_causes").CULPRIT)
    assert " + " not in report["path"][0], report["path"]
    _assert_nothing_innocent("two_causes", report, [frozenset({c}) for c in
                                                    load("two_causes").CULPRIT])


def test_given_the_stale_history_when_why_runs_then_the_turn_1_message_is_confirmed(
    reports: dict[str, Report],
) -> None:
    module, report = load("stale_history"), reports["stale_history"]
    stale = [s for s in report["suspects"]
             if s["kind"] == "message" and module.CULPRIT_TEXT in _text(s)]
    assert stale, "no message suspect carries the stale turn-1 answer"
    assert stale[0]["verdict"] == "confirmed", _text(stale[0])
    assert "llm#2" in _text(stale[0]), "the message's origin (llm#2 of turn 1) is not named"
    others = [s for s in _confirmed(report) if s is not stale[0]]
    _assert_nothing_innocent("stale_history", {"suspects": others}, [])


def test_given_the_bad_guard_when_why_runs_then_the_guarded_move_is_evidence_with_its_values(
    reports: dict[str, Report],
) -> None:
    report = reports["bad_guard"]
    moves = [s for s in report["suspects"] if s["kind"] == "cursor_move"
             and all(w in _text(s) for w in ("amount", "lte", "1000", "400"))]
    assert moves, "no cursor_move suspect names the guard amount lte 1000 against 400"
    assert moves[0]["verdict"] in ("confirmed", None), _text(moves[0])
    assert moves[0]["chain"]
    rest = [s for s in _confirmed(report) if s["kind"] not in ("cursor_move", "gate")]
    _assert_nothing_innocent("bad_guard", {"suspects": rest}, [])


def test_given_a_sampling_model_when_why_runs_then_nothing_is_confirmed(
    reports: dict[str, Report],
) -> None:
    report = reports["sampling"]
    assert _confirmed(report) == []
    assert any(f.startswith("baseline-unstable") for f in report["flags"]), report["flags"]


def test_given_a_sampling_model_when_why_runs_then_it_says_inconclusive(
    reports: dict[str, Report],
) -> None:
    verdicts = {s.get("verdict") for s in reports["sampling"]["suspects"] if s.get("removable")}
    assert verdicts == {"inconclusive"}, verdicts


def test_given_a_piece_whose_removal_crashes_when_why_runs_then_it_is_broke_not_a_cause(
    reports: dict[str, Report],
) -> None:
    module, report = load("crash"), reports["crash"]
    broke = [s for s in report["suspects"] if s.get("id") == module.BROKE]
    assert broke and broke[0]["verdict"] == "broke", _text(broke)
    _assert_nothing_innocent("crash", report, [frozenset({module.CULPRIT})])
    assert any(s.get("id") == module.CULPRIT for s in _confirmed(report))


# ── the first line names the root cause; the path; one removal, one suspect ──


def _first_line(report: Report) -> str:
    return f"{report['conclusion'].upper()}: {report['conclusion_text']}"


@pytest.mark.parametrize("name", NAMES)
def test_given_a_planted_run_when_why_runs_then_the_first_line_names_the_root_cause(
    name: str, reports: dict[str, Report],
) -> None:
    report, first = reports[name], _first_line(reports[name])
    for root in ROOTS[name]:
        assert root in first, f"{name}: {root!r} not in {first!r}"
    if not ROOTS[name]:
        assert report["conclusion"] == "inconclusive" and report["root_causes"] == []
    for innocent in load(name).INNOCENT:
        assert not re.search(rf"(?<![\w-]){re.escape(innocent)}(?![\w-])", first), first


@pytest.mark.parametrize("name", NAMES)
def test_given_a_planted_run_when_why_runs_then_no_removal_is_stamped_on_two_suspects(
    name: str, reports: dict[str, Report],
) -> None:
    stamped = [s["removal"] for s in reports[name]["suspects"] if s.get("verdict")]
    assert len(stamped) == len(set(stamped)), sorted(stamped)


@pytest.mark.parametrize("name", NAMES)
def test_given_a_planted_run_when_why_runs_then_no_wording_change_reads_as_a_fact_change(
    name: str, reports: dict[str, Report],
) -> None:
    for s in reports[name]["suspects"]:
        assert not any("+00" in c or c.startswith("1 → 13") for c in s["changes"]), _text(s)


def test_given_wording_only_innocents_when_why_runs_then_they_are_not_confirmed_and_noted(
    reports: dict[str, Report],
) -> None:
    report, module = reports["wording_innocents"], load("wording_innocents")
    for piece in module.WORDING:
        s = next(x for x in report["suspects"] if x.get("id") == piece)
        assert s["verdict"] == "not-confirmed" and s["changes"] == [], _text(s)
        assert s["wording"], f"{piece}: the re-worded answer is not noted"
    noted = " ".join(w for x in report["suspects"] for w in x["wording"])
    assert "'13:00;' → '1 pm;'" in noted and "'€45.' → '45 EUR.'" in noted


def test_given_a_date_written_without_its_year_when_why_runs_then_the_style_is_only_wording(
    reports: dict[str, Report],
) -> None:
    report, module = reports["yearless_date"], load("yearless_date")
    (style,) = [s for s in report["suspects"] if s.get("id") in module.WORDING]
    assert style["verdict"] == "not-confirmed" and style["changes"] == [], _text(style)
    assert style["wording"] == ["'March 3.' → '2026-03-03.'"], _text(style)
    assert report["necessary"] == [] and report["root_causes"] == ["fact 'old-calendar'"]
    assert "(March 3 → April 3)" in _first_line(report)


def test_given_numbers_written_in_words_when_why_runs_then_the_style_is_only_wording(
    reports: dict[str, Report],
) -> None:
    report, module = reports["number_words"], load("number_words")
    (style,) = [s for s in report["suspects"] if s.get("id") in module.WORDING]
    assert style["verdict"] == "not-confirmed" and style["changes"] == [], _text(style)
    assert style["wording"] == ["'three' → '3'"], _text(style)
    assert report["root_causes"] == ["fact 'old-roster'"] and report["necessary"] == []
    assert "(three → seven)" in _first_line(report) and "conjunction" not in _first_line(report)


def test_given_the_seed_wording_model_when_why_runs_then_it_compares_facts_and_searches(
    reports: dict[str, Report],
) -> None:
    report = reports["seed_wording"]
    assert report["comparator_mode"] == "facts", report["comparator"]
    assert re.search(r"wording varied in [1-9]\d*/\d+ baseline answers", report["comparator"])
    assert report["baseline"]["stable"] and report["conclusion"] == "confirmed"
    assert not [f for f in report["flags"] if f.startswith("baseline-unstable")]


def test_given_the_long_run_when_why_runs_then_its_tool_is_one_necessary_suspect(
    reports: dict[str, Report],
) -> None:
    report, module = reports["long_run"], load("long_run")
    pages = [s for s in report["suspects"] if s["kind"] == "tool_result"]
    assert len(pages) == 1 and len(pages[0]["calls"]) == module.PAGES, _text(pages)
    assert pages[0]["verdict"] == "confirmed" and pages[0]["effect"] == "lost"
    assert report["necessary"] == [pages[0]["label"]] and report["suspects"][0]["id"] == "fee-memo"
    assert report["path"] == ["fact 'fee-memo'", "answer (llm#31)"]


def test_given_a_skill_naming_the_wrong_tool_when_why_runs_then_the_path_runs_through_its_choice(
    reports: dict[str, Report],
) -> None:
    report = reports["skill_wrong_tool"]
    assert report["path"][0] == "skill 'invoicing'" and report["path"][3] == "answer (llm#3)"
    assert report["path"][1] == ('llm#2 chose fx_rate_fixed(base="USD", quote="EUR") (without '
                                 'skill \'invoicing\': fx_rate(base="USD", quote="EUR"))')
    assert report["path"][2].startswith('result #call_2: {"base": "USD", "quote": "EUR", '
                                        '"rate": 0.81'), report["path"]
    tool = next(s for s in report["suspects"] if s["kind"] == "tool_result"
                and s["flavor"] == "fx_rate_fixed")
    assert tool["verdict"] == "confirmed" and tool["role"] == "mediator"
    assert report["root_causes"] == ["skill 'invoicing'"]


def test_given_a_rule_live_mid_loop_when_why_runs_then_the_path_puts_it_after_the_lookup(
    reports: dict[str, Report],
) -> None:
    path = reports["mid_loop_rule"]["path"]
    rule = next(i for i, p in enumerate(path) if "staff-rate" in p)
    assert _hop(path, "result #call_1: ") < rule < _hop(path, "llm#2 chose staff_price("), path
    assert path[_hop(path, "llm#2 chose")] == ('llm#2 chose staff_price(item="Nord lamp") (without '
                                               'instructions \'staff-rate\': list_price(item='
                                               '"Nord lamp"))'), path
    assert path[_hop(path, "result #call_2")] == 'result #call_2: {"item": "Nord lamp", ' \
        '"price": 60}', path


def _hop(path: list[str], start: str) -> int:
    """Where the path's first hop starting with ``start`` is."""
    return next(i for i, p in enumerate(path) if p.startswith(start))


def test_given_a_stale_tool_result_when_why_runs_then_it_heads_as_the_earliest_removable_link(
    reports: dict[str, Report],
) -> None:
    report = reports["tool_result"]
    assert report["root_causes"] == ["tool price_feed #call_1"]
    assert "the earliest removable link" in report["conclusion_text"]
    assert report["path"][0] == 'llm#1 chose price_feed(sku="M3")', report["path"]
    assert report["path"][1].startswith('result #call_1: {"sku": "M3", "price": 19,')
    assert report["path"][2:] == ["answer (llm#2)"], report["path"]


def test_given_a_tool_an_injection_carries_when_why_runs_then_its_result_names_its_owner(
    reports: dict[str, Report],
) -> None:
    report = reports["twin_tools"]
    culprit = next(s for s in report["suspects"] if s.get("id") == "legacy-oms")
    assert culprit["label"].startswith("custom 'legacy-oms'"), culprit["label"]
    result = next(s for s in report["suspects"] if s["kind"] == "tool_result"
                  and s["flavor"] == "get_order_status")
    assert "custom 'legacy-oms'" in result["note"] and "skill" not in result["note"]
    assert result["verdict"] is None and "registry" not in result["label"]
    assert report["path"][1:3] == ['llm#1 chose get_order_status(order_id="D-310") (without '
                                   'custom \'legacy-oms\': order_status(order_id="D-310"))',
                                   'result #call_1: {"order_id": "D-310", "status": '
                                   '"processing"}'], report["path"]


@pytest.mark.parametrize("name", ("conjunction", "redundant_triple"))
def test_given_a_conjunction_or_a_redundant_set_when_why_runs_then_the_headline_has_them_all(
    name: str, reports: dict[str, Report],
) -> None:
    report, culprits = reports[name], frozenset(load(name).CULPRIT)
    roots = [s for s in report["suspects"] if s.get("role") == "root"]
    if name == "conjunction":
        assert {s["id"] for s in roots} == culprits and "(a conjunction)" in _first_line(report)
    else:
        assert len(roots) == 1 and _ids(roots[0]) == culprits and roots[0]["kind"] == "set"
        alone = [s for s in report["suspects"] if s.get("id") in culprits]
        assert all(s["verdict"] == "not-confirmed" for s in alone), _text(alone)
    _assert_nothing_innocent(name, {"suspects": [s for s in _confirmed(report)
                                                 if not _ids(s) <= culprits]}, [])


# ── the text form a user reads (snapshots) ─────────────────────────────────

SNAPSHOTTED = ("wrong_fact", "redundant_pair", "crash")


@pytest.mark.parametrize("name", SNAPSHOTTED)
def test_given_a_planted_run_when_why_prints_text_then_the_report_reads_as_recorded(
    name: str, tmp_path: Path, snapshot: Any,
) -> None:
    store = tmp_path / "store"
    record(name, store)
    with _in_repo(store):
        code, out, err = _cli(store, "why", "last", "--agent", ref(name))
    assert code == 0, err[-400:]
    assert out == snapshot


def test_given_the_docs_planted_commands_when_run_in_a_shell_then_why_confirms_the_memo(
    tmp_path: Path,
) -> None:
    section = docs_section("## Planted bugs")
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    env = {**os.environ, "FOOTPRINT_STORE": str(tmp_path / "store"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env[key] = "http://127.0.0.1:9"
    outputs = []
    for line in block.group(1).strip().splitlines():
        argv = shlex.split(line)
        argv[0] = sys.executable if argv[0] == "python" else argv[0]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, f"{line}: {done.stderr[-400:]}"
        outputs.append(done.stdout)
    assert outputs[0].startswith("The C40 grinder costs 189 EUR.")
    assert outputs[-1].startswith("CONFIRMED: removing fact 'supplier-memo' changes the answer")


def test_given_the_stale_history_as_events_when_why_runs_then_the_turn_1_message_is_confirmed(
) -> None:
    module = load("stale_history")
    sink = ListSink()
    run = module.converse(module.make_agent(sink=sink))
    report = why(sink.events, run.run_id, agent=module.make_agent())
    stale = [s for s in report.suspects if s.kind == "message" and s.excerpt == module.CULPRIT_TEXT]
    assert stale and stale[0].verdict == "confirmed"
    innocent = set(module.INNOCENT)
    assert not [s for s in report.suspects if s.verdict == "confirmed" and s is not stale[0]
                and (s.kind == "message" or s.id in innocent)]


def test_given_three_turns_when_why_runs_then_each_history_message_names_its_turn() -> None:
    module = load("stale_history")
    sink = ListSink()
    agent = module.make_agent(sink=sink)
    agent.run_sync(module.FIRST)
    agent.follow_up_sync("Where did my order 17 go last year?")  # a second stale address
    run = agent.follow_up_sync(module.MESSAGE)
    report = why(sink.events, run.run_id, agent=module.make_agent())
    messages = [s for s in report.suspects if s.kind == "message"]
    assert len(messages) == 6 and len({s.label for s in messages}) == 6, \
        [s.label for s in messages]
    (pair,) = [s for s in report.suspects if s.kind == "set"]
    assert pair.verdict == "confirmed" and report.root_causes == (
        "assistant message llm#2 of turn 1 and assistant message llm#1 of turn 2",)
    assert report.root_causes[0] in report.conclusion_text


def _hub_model(request: Any) -> Any:
    """Each "Where is parcel N?" turn asks ``locate``; a follow-up reuses the last hub."""
    from footprint.providers import call

    turn = max(i for i, m in enumerate(request.messages) if m.role == "user")
    ask = request.messages[turn].content
    mine = [m for m in request.messages[turn:] if m.role == "tool"]
    if ask.startswith("Where is parcel"):
        parcel = ask.split()[-1].rstrip("?")
        if not mine:
            return call("locate", parcel=parcel)
        return f"Parcel {parcel} is at {json.loads(mine[-1].content)['hub']}."
    hubs = [m.content.split(" is at ")[-1].rstrip(".") for m in request.messages
            if m.role == "assistant" and " is at " in m.content]
    return f"Your parcels go through {hubs[-1] if hubs else 'the nearest hub'}."


def test_given_two_earlier_turns_with_tool_calls_when_why_runs_then_their_calls_are_told_apart(
) -> None:
    from footprint import Agent, FunctionModel, StepClock

    def locate(parcel: str) -> str:
        """Where a parcel is now."""
        return json.dumps({"parcel": parcel, "hub": "Leeds" if parcel == "7" else "York"})

    def make(sink: Any = None, seed: int = 0) -> Agent:
        return Agent(provider=FunctionModel(_hub_model), model="m", tools=[locate],
                     clock=StepClock(), seed=seed, sink=sink)

    sink = ListSink()
    agent = make(sink=sink)
    agent.run_sync("Where is parcel 7?")
    agent.follow_up_sync("Where is parcel 9?")
    run = agent.follow_up_sync("Which hub handles my parcels?")
    assert run.answer == "Your parcels go through York."
    report = why(sink.events, run.run_id, agent=make)
    calls = sorted(s.label for s in report.suspects if s.kind == "message" and s.excerpt == "")
    assert calls == ["assistant message llm#1 of turn 1", "assistant message llm#1 of turn 2"]
    assert report.root_causes == ("assistant message llm#2 of turn 2",), report.conclusion_text


@pytest.mark.parametrize(("name", "expect"), [
    ("redundant_pair", "25 kg"), ("redundant_triple", "2 years"), ("mixed_pair", "300 EUR")])
def test_given_a_redundant_set_and_the_answer_wanted_when_why_runs_then_the_set_is_found(
    name: str, expect: str,
) -> None:
    module = load(name)
    sink = ListSink()
    run = module.converse(module.make_agent(sink=sink))
    report = why(sink.events, run.run_id, agent=module.make_agent, expect=expect)
    (found,) = [s for s in report.suspects if s.kind == "set" and s.verdict == "confirmed"]
    members = {s.id: s for s in report.suspects if s.kind != "set" and s.id in (found.ids or ())}
    assert {m.flavor if m.kind == "tool_result" else m.id for m in members.values()} == \
        set(module.CULPRIT), found
    assert report.conclusion == "confirmed" and report.root_causes[0] in report.conclusion_text


def test_given_the_agent_tier_when_why_runs_from_the_cli_then_it_prints_its_plan_first(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    record("crowded_prompt", store)
    with _in_repo(store):
        code, out, err = _cli(store, "why", "last", "--agent", ref("crowded_prompt"),
                              "--budget", "40")
    assert code == 0, err
    plan = re.search(r"footprint why: plan: 12 baseline re-runs .* over 120 pieces.* about "
                     r"(\d+) re-runs; --budget 40 caps it at 40", err)
    assert plan is not None and int(plan.group(1)) > 40, err
    assert out.startswith("CONFIRMED: removing fact 'carrier-note'"), out[:300]


@pytest.mark.parametrize("name", [n for n in NAMES if ROOTS[n]])
def test_given_a_planted_run_when_why_reports_json_then_each_claim_names_the_experiments_behind_it(
        reports: dict[str, Report], name: str) -> None:
    claims = reports[name]["claims"]
    if reports[name]["conclusion"] != "confirmed":  # nothing claimed, nothing to back
        assert claims == [], claims
        return
    assert claims, name
    named = [n for c in claims for n in c["names"]]
    assert len(named) == len(set(named)), f"{name}: a piece named twice: {claims}"
    for c in claims:
        first, *rest = c["experiments"]
        if c["kind"] == "user-said":  # the user's own words: their removal flipped it
            assert c["names"][0].startswith("user message") and len(c["experiments"]) == 1, c
            assert first["verdict"] == "confirmed", c
            continue
        if c["kind"] in ("set", "redundant-set"):  # minimal: each member's removal tested
            assert c["minimal"] is True, c
            assert len(c["without"]) == (len(c["names"]) if len(c["names"]) > 2 else 0), c
        if c["kind"] in ("cause", "conjunction"):  # each member's own removal flipped it
            assert all(e["verdict"] == "confirmed" and 2 * e["flips"] > e["runs"] - e["broke"]
                       for e in c["experiments"]), c
            assert len(c["experiments"]) == len(c["names"]) == (1 + (c["kind"] != "cause")
                                                                 * (len(c["names"]) - 1)), c
        else:  # the joint removal flipped it; a redundant set: each member's own did not
            assert first["verdict"] == "confirmed" and " + " in first["removal"], c
            assert len(rest) == len(c["names"]) >= 2, c
            if c["kind"] == "redundant-set":
                assert all(e["verdict"] == "not-confirmed" and e["runs"] > 0
                           and e["flips"] == 0 for e in rest), c
