"""Route guards (spec §2.3, §7 cases 12-13): evidence, refusals, captions, unsatisfiability."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.events import ConditionEvidence
from footprint.graph._guards import (
    MISSING,
    CompiledGuard,
    GuardCondition,
    Hop,
    compile_guard,
    summarize_actual,
    unsatisfiable_reasons,
)
from footprint.injection import TOOL_STATUSES, ToolStatus

ROUTE = "route 'triage' -> 'found'"


def _guard(spec: Mapping[str, Mapping[str, object]]) -> CompiledGuard:
    return compile_guard(spec, where=ROUTE)


def _hop(result: str = "{}", **kw: object) -> Hop:
    return Hop(tool_name=str(kw.pop("tool_name", "probe")), result=result, **kw)  # type: ignore[arg-type]


def _one(spec: Mapping[str, Mapping[str, object]], hop: Hop) -> ConditionEvidence:
    evidence = _guard(spec).evaluate(hop)
    assert len(evidence.conditions) == 1
    return evidence.conditions[0]


# ── case 12: evidence ──────────────────────────────────────────────────────


@pytest.mark.parametrize(("actual", "passed"), [("severe", True), ("high", True), ("amber", False)])
def test_given_gte_high_when_the_result_carries_a_risk_level_then_strings_order_lexicographically(
    actual: str, passed: bool
) -> None:
    cond = _one({"riskLevel": {"gte": "high"}}, _hop(json.dumps({"riskLevel": actual})))
    assert cond == ConditionEvidence(
        key="riskLevel", op="gte", value="high", actual_summary=json.dumps(actual), passed=passed
    )


@pytest.mark.parametrize(
    ("key", "value", "hop"),
    [
        ("tool_name", "lookup", _hop(tool_name="lookup")),
        ("toolName", "lookup", _hop(tool_name="lookup")),
        ("result", "plain text", _hop("plain text")),
        ("status", "denied", _hop(status="denied")),
        ("iteration", 4, _hop(iteration=4)),
        ("user_message", "hi", _hop(user_message="hi")),
        ("userMessage", "hi", _hop(user_message="hi")),
        ("current_skill_id", "triage", _hop(current_skill_id="triage")),
        ("currentSkillId", "triage", _hop(current_skill_id="triage")),
    ],
)
def test_given_a_hop_key_when_evaluated_then_it_is_read_from_the_hop_not_the_result(
    key: str, value: object, hop: Hop
) -> None:
    assert _one({key: {"eq": value}}, hop).passed


def test_given_a_hop_key_also_present_in_the_result_json_when_evaluated_then_the_hop_wins() -> None:
    cond = _one({"toolName": {"eq": "spoofed"}}, _hop('{"toolName": "spoofed"}'))
    assert cond.passed is False
    assert cond.actual_summary == '"probe"'


def test_given_an_absent_status_when_eq_is_judged_then_it_fails_as_missing() -> None:
    cond = _one({"status": {"eq": "success"}}, _hop(status=None))
    assert (cond.passed, cond.actual_summary, cond.note) == (False, "undefined", "missing")


@pytest.mark.parametrize("result", ["not json at all", "[1, 2]", '"a string"', "{bad", "NaN", ""])
def test_given_a_result_that_is_not_a_json_object_when_a_field_is_read_then_it_is_undefined(
    result: str,
) -> None:
    cond = _one({"score": {"gt": 1}}, _hop(result))
    assert (cond.passed, cond.actual_summary, cond.note) == (False, "undefined", "not-json")


def test_given_not_in_when_the_field_is_missing_then_it_passes() -> None:
    for result in ('{"other": 1}', "not json"):
        cond = _one({"tier": {"notIn": ["gold"]}}, _hop(result))
        assert (cond.passed, cond.op, cond.value, cond.actual_summary) == (
            True, "not_in", ["gold"], "undefined",
        )


@pytest.mark.parametrize(
    ("op", "value", "passed", "note"),
    [("in", ["a"], False, "missing"), ("eq", None, False, "missing"), ("ne", "a", True, None),
     ("gt", 0, False, "missing")],
)
def test_given_a_missing_field_when_each_op_is_judged_then_only_negative_ops_pass(
    op: str, value: object, passed: bool, note: str | None
) -> None:
    cond = _one({"x": {op: value}}, _hop("{}"))
    assert (cond.passed, cond.note) == (passed, note)


def test_given_a_json_null_when_eq_none_is_judged_then_it_passes_unlike_a_missing_field() -> None:
    assert _one({"x": {"eq": None}}, _hop('{"x": null}')).passed


def test_given_a_long_actual_value_when_summarised_then_it_is_capped_at_80_chars() -> None:
    cond = _one({"note": {"eq": "x"}}, _hop(json.dumps({"note": "y" * 500})))
    assert len(cond.actual_summary) == 80
    assert cond.actual_summary == '"' + "y" * 78 + "…"


@pytest.mark.parametrize(
    ("actual", "summary"),
    [(MISSING, "undefined"), (None, "null"), (True, "true"), (False, "false"), (42, "42"),
     (10**20, "100000000000000000000"), (2.5, "2.5"), ("é\"", '"é\\""'),
     ([1, {"a": None}], '[1, {"a": null}]')],
)
def test_given_an_actual_value_when_summarised_then_it_is_its_json_or_undefined(
    actual: object, summary: str
) -> None:
    assert summarize_actual(actual) == summary


@pytest.mark.parametrize(
    ("op", "bound", "actual"),
    [("gt", 5, "7"), ("lt", "z", 3), ("gte", 0, True), ("lte", 1, None), ("gt", 1, [2])],
)
def test_given_an_ordering_across_types_when_judged_then_it_fails_with_type_mismatch(
    op: str, bound: object, actual: object
) -> None:
    cond = _one({"v": {op: bound}}, _hop(json.dumps({"v": actual})))
    assert (cond.passed, cond.note) == (False, "type-mismatch")


@pytest.mark.parametrize(
    ("expected", "actual", "equal"),
    [(1, 1.0, True), (1, True, False), (0, False, False), (True, True, True), ("1", 1, False)],
)
def test_given_eq_when_bools_meet_numbers_then_they_are_never_equal(
    expected: object, actual: object, equal: bool
) -> None:
    hop = _hop(json.dumps({"v": actual}))
    assert _one({"v": {"eq": expected}}, hop).passed is equal
    assert _one({"v": {"ne": expected}}, hop).passed is not equal
    assert _one({"v": {"in": [expected]}}, hop).passed is equal


def test_given_several_conditions_when_the_first_fails_then_every_one_is_still_judged() -> None:
    guard = _guard({"a": {"eq": 1, "gt": 5}, "b": {"in": ["x", "y"]}})
    evidence = guard.evaluate(_hop('{"a": 9, "b": "y"}'))
    assert evidence.verdict is False
    assert [(c.key, c.op, c.passed) for c in evidence.conditions] == [
        ("a", "eq", False), ("a", "gt", True), ("b", "in", True),
    ]
    assert guard.evaluate(_hop('{"a": 1, "b": "x"}')).verdict is False
    assert _guard({"a": {"gte": 1}, "b": {"ne": "z"}}).evaluate(_hop('{"a": 1}')).verdict is True


def test_given_a_guard_when_compiled_then_conditions_keep_order_and_canonical_ops() -> None:
    guard = _guard({"riskLevel": {"gte": "high"}, "tier": {"notIn": ["free"]}})
    assert guard.conditions == (
        GuardCondition("riskLevel", "gte", "high"), GuardCondition("tier", "not_in", ("free",)),
    )


# ── case 12: every compile refusal names the route ─────────────────────────

_REFUSALS: list[tuple[object, str]] = [
    (["score"], "['score']"),
    ("score > 5", "'score > 5'"),
    ({}, "{}"),
    ({"__proto__": {"eq": 1}}, "'__proto__'"),
    ({"constructor": {"eq": 1}}, "'constructor'"),
    ({"prototype": {"eq": 1}}, "'prototype'"),
    ({"toString": {"eq": 1}}, "'toString'"),
    ({"__class__": {"eq": 1}}, "'__class__'"),
    ({"": {"eq": 1}}, "''"),
    ({"score": 5}, "5"),
    ({"score": "gt"}, "'gt'"),
    ({"score": {}}, "{}"),
    ({"score": {"gtt": 5}}, "'gtt'"),
    ({"score": {"in": "gold"}}, "'gold'"),
    ({"score": {"in": []}}, "[]"),
    ({"score": {"notIn": list(range(1001))}}, "1001"),
    ({"score": {"in": [1, {"a": 1}]}}, "{'a': 1}"),
    ({"score": {"not_in": [[1]]}}, "[1]"),
    ({"score": {"in": [math.nan]}}, "nan"),
    ({"score": {"gt": True}}, "True"),
    ({"score": {"lt": None}}, "None"),
    ({"score": {"gte": [1]}}, "[1]"),
    ({"score": {"lte": math.inf}}, "inf"),
    ({"score": {"eq": [1]}}, "[1]"),
    ({"score": {"ne": {"a": 1}}}, "{'a': 1}"),
    ({"score": {"notIn": [1], "not_in": [2]}}, "'not_in'"),
]


@pytest.mark.parametrize(("spec", "quoted"), _REFUSALS)
def test_given_a_malformed_guard_when_compiled_then_config_error_names_the_route_and_value(
    spec: object, quoted: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        compile_guard(spec, where=ROUTE)  # type: ignore[arg-type]
    assert ROUTE in str(caught.value)
    assert quoted in str(caught.value)


def test_given_a_misspelled_operator_when_compiled_then_the_error_suggests_the_right_one() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'gte'\?"):
        _guard({"score": {"gtee": 5}})


# ── captions ───────────────────────────────────────────────────────────────


def test_given_a_guard_when_captioned_then_conditions_render_with_symbols_joined_by_and() -> None:
    guard = _guard({
        "a": {"eq": "x", "ne": 2}, "b": {"gt": 1, "gte": 1.5, "lt": 9, "lte": 8},
        "c": {"in": ["p", "q|r"], "notIn": [None, True]},
    })
    assert guard.caption() == (
        'a = "x" AND a ≠ 2 AND b > 1 AND b ≥ 1.5 AND b < 9 AND b ≤ 8 '
        'AND c in ["p","q|r"] AND c not in [null,true]'
    )
    assert guard.mermaid_caption() == (
        "when a = #quot;x#quot; AND a ≠ 2 AND b > 1 AND b ≥ 1.5 AND b < 9 AND b ≤ 8 "
        "AND c in [#quot;p#quot;,#quot;q#124;r#quot;] AND c not in [null,true]"
    )


# ── case 13: unsatisfiable guards ──────────────────────────────────────────


def _reasons(
    spec: Mapping[str, Mapping[str, object]],
    on_tool_return: str | None = None,
    on_tool_status: tuple[ToolStatus, ...] | None = None,
) -> tuple[str, ...]:
    return unsatisfiable_reasons(
        _guard(spec), on_tool_return=on_tool_return, on_tool_status=on_tool_status
    )


def test_given_crossed_bounds_when_checked_then_the_reason_quotes_the_contradiction() -> None:
    (reason,) = _reasons({"score": {"gt": 5, "lt": 3}})
    assert "score > 5 AND score < 3" in reason


def test_given_status_eq_a_typo_when_checked_then_the_reason_says_it_is_not_a_result_status(
) -> None:
    (reason,) = _reasons({"status": {"eq": "sucess"}})
    assert "'sucess' is not a result status" in reason
    assert 'status = "sucess"' in reason


@pytest.mark.parametrize(
    ("spec", "caption"),
    [
        ({"k": {"eq": 3, "ne": 3}}, "k = 3 AND k ≠ 3"),
        ({"k": {"eq": "a", "in": ["b", "c"]}}, 'k = "a" AND k in ["b","c"]'),
        ({"k": {"eq": "a", "notIn": ["a"]}}, 'k = "a" AND k not in ["a"]'),
        ({"k": {"eq": 2, "gte": 3}}, "k = 2 AND k ≥ 3"),
        ({"k": {"lt": "m", "eq": "z"}}, 'k < "m" AND k = "z"'),
        ({"k": {"gte": 5, "lt": 5}}, "k ≥ 5 AND k < 5"),
        ({"k": {"gt": "b", "lte": "a"}}, 'k > "b" AND k ≤ "a"'),
        ({"k": {"in": [1, 2], "not_in": [2, 1.0, 3]}}, "k in [1,2] AND k not in [2,1.0,3]"),
        ({"toolName": {"eq": "a"}, "tool_name": {"ne": "a"}}, 'toolName = "a" AND tool_name ≠ "a"'),
    ],
)
def test_given_a_single_key_contradiction_when_checked_then_it_is_reported_with_its_caption(
    spec: Mapping[str, Mapping[str, object]], caption: str
) -> None:
    reasons = _reasons(spec)
    assert len(reasons) == 1
    assert caption in reasons[0]


@pytest.mark.parametrize(
    "spec",
    [
        {"k": {"gte": 5, "lte": 5}},
        {"k": {"gt": 5, "lt": "a"}},
        {"k": {"eq": "5", "gt": 7}},
        {"k": {"eq": True, "gte": 3}},
        {"a": {"eq": 1}, "b": {"ne": 1}},
        {"a": {"gt": 5}, "b": {"lt": 3}},
        {"k": {"in": [1, 2], "notIn": [2]}},
        {"k": {"eq": 1, "ne": True}},
        {"status": {"in": ["success", "sucess"]}},
    ],
)
def test_given_a_satisfiable_or_unprovable_guard_when_checked_then_no_reason_is_given(
    spec: Mapping[str, Mapping[str, object]],
) -> None:
    assert _reasons(spec) == ()


@pytest.mark.parametrize(
    ("spec", "statuses", "caption"),
    [
        ({"status": {"eq": "success"}}, ("failure",), 'status = "success"'),
        ({"status": {"in": ["success", "partial"]}}, ("failure", "denied"), "status in"),
        ({"status": {"notIn": ["failure"]}}, ("failure",), "status not in"),
        ({"status": {"ne": "denied"}}, ("denied",), 'status ≠ "denied"'),
    ],
)
def test_given_a_status_guard_against_the_edges_on_tool_status_when_checked_then_it_is_reported(
    spec: Mapping[str, Mapping[str, object]], statuses: tuple[ToolStatus, ...], caption: str
) -> None:
    (reason,) = _reasons(spec, on_tool_status=statuses)
    assert caption in reason
    assert "on_tool_status" in reason
    assert _reasons(spec, on_tool_status=(*statuses, "success", "partial", "denied")) == ()


@pytest.mark.parametrize(
    ("ops", "says"),
    [({"eq": "sucess"}, "'sucess' is not a result status"),
     ({"in": ["sucess", "failed"]}, "none of ['sucess', 'failed'] is a result status")],
)
def test_given_a_status_typo_on_a_status_edge_when_checked_then_it_is_reported_once(
    ops: Mapping[str, object], says: str
) -> None:
    reasons = _reasons({"status": ops}, on_tool_status=("success",))
    assert len(reasons) == 1 and says in reasons[0]


def test_given_a_tool_name_guard_against_an_exact_on_tool_return_when_checked_then_reported(
) -> None:
    (reason,) = _reasons({"toolName": {"eq": "lookup"}}, on_tool_return="probe")
    assert 'toolName = "lookup"' in reason and "'probe'" in reason
    assert _reasons({"toolName": {"eq": "probe"}}, on_tool_return="probe") == ()
    assert _reasons({"tool_name": {"in": ["a", "b"]}}, on_tool_return="probe") != ()


def test_given_a_regex_on_tool_return_when_checked_then_no_regex_reasoning_happens() -> None:
    import re

    guard = _guard({"toolName": {"eq": "lookup"}})
    pattern = re.compile("^probe")
    assert unsatisfiable_reasons(guard, on_tool_return=pattern, on_tool_status=None) == ()


# ── properties ─────────────────────────────────────────────────────────────

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=4),
    max_leaves=20,
)
_BROAD_GUARD = _guard({
    "score": {"gt": 1, "lte": 9.5}, "riskLevel": {"gte": "high"}, "tier": {"notIn": ["x", 1]},
    "flag": {"eq": True}, "nothing": {"ne": None}, "status": {"in": ["success"]},
    "iteration": {"lt": 3}, "result": {"ne": ""}, "userMessage": {"eq": "hi"},
})


@given(
    result=st.one_of(_JSON.map(json.dumps), st.text(max_size=200),
                     st.dictionaries(st.sampled_from(["score", "riskLevel", "tier", "flag"]),
                                     _JSON).map(json.dumps)),
    status=st.none() | st.sampled_from(TOOL_STATUSES),
    iteration=st.integers(-5, 50),
)
def test_given_any_result_text_when_a_guard_evaluates_then_it_never_raises_and_is_complete(
    result: str, status: ToolStatus | None, iteration: int
) -> None:
    evidence = _BROAD_GUARD.evaluate(_hop(result, status=status, iteration=iteration))
    assert len(evidence.conditions) == len(_BROAD_GUARD.conditions)
    assert evidence.verdict == all(c.passed for c in evidence.conditions)
    assert all(len(c.actual_summary) <= 80 for c in evidence.conditions)


_DOMAIN: list[object] = [0, 1, 2, 3, 1.0, 2.5, -1, True, False, None, "a", "b", "m", "z", ""]
_VALUES = st.sampled_from(_DOMAIN)
_ORDERABLE = st.sampled_from([0, 1, 2, 3, 2.5, -1, "a", "b", "m", "z", ""])
_OPS = st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in"])


@st.composite
def _ops(draw: st.DrawFn) -> dict[str, object]:
    ops: dict[str, object] = {}
    for op in draw(st.lists(_OPS, min_size=1, max_size=4, unique=True)):
        if op in ("in", "not_in"):
            name = "notIn" if op == "not_in" and draw(st.booleans()) else op
            ops[name] = draw(st.lists(_VALUES, min_size=1, max_size=3))
        elif op in ("gt", "gte", "lt", "lte"):
            ops[op] = draw(_ORDERABLE)
        else:
            ops[op] = draw(_VALUES)
    return ops


def _results_over_domain() -> list[str]:
    return ["{}", "not json", *(json.dumps({"k": v}) for v in _DOMAIN)]


@given(ops=_ops())
def test_given_a_guard_with_unsatisfiable_reasons_when_evaluated_on_any_value_then_it_never_passes(
    ops: dict[str, object],
) -> None:
    guard = _guard({"k": ops})
    if unsatisfiable_reasons(guard, on_tool_return=None, on_tool_status=None):
        for result in _results_over_domain():
            assert guard.evaluate(_hop(result)).verdict is False, result


_STATUS_VALUES = st.sampled_from([*TOOL_STATUSES, "sucess", None, 1])


@given(
    op=st.sampled_from(["eq", "ne", "in", "not_in"]),
    value=_STATUS_VALUES,
    members=st.lists(_STATUS_VALUES, min_size=1, max_size=3),
    edge=st.none() | st.lists(st.sampled_from(TOOL_STATUSES), min_size=1, max_size=3, unique=True),
)
def test_given_an_unsatisfiable_status_guard_when_the_edge_admits_the_hop_then_it_never_passes(
    op: str, value: object, members: list[object], edge: list[ToolStatus] | None,
) -> None:
    on_status = tuple(edge) if edge is not None else None
    guard = _guard({"status": {op: members if op in ("in", "not_in") else value}})
    if unsatisfiable_reasons(guard, on_tool_return=None, on_tool_status=on_status):
        for status in on_status or TOOL_STATUSES:
            assert guard.evaluate(_hop(status=status)).verdict is False, status


@given(
    op=st.sampled_from(["eq", "ne", "in", "not_in"]),
    names=st.lists(st.sampled_from(["probe", "lookup", "Probe", ""]), min_size=1, max_size=3),
    edge=st.sampled_from(["probe", "lookup"]),
)
def test_given_an_unsatisfiable_tool_name_guard_when_the_edge_admits_the_hop_then_it_never_passes(
    op: str, names: list[str], edge: str
) -> None:
    guard = _guard({"toolName": {op: names if op in ("in", "not_in") else names[0]}})
    if unsatisfiable_reasons(guard, on_tool_return=edge, on_tool_status=None):
        assert guard.evaluate(_hop(tool_name=edge)).verdict is False
