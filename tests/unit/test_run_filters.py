"""The run filters' small languages: score filters, ages, where texts, RunQuery checks."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint import ConfigError
from recorder import RunQuery, Score
from recorder.store._filters import ScoreFilter, parse_score, parse_since, parse_where

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
OPS = st.sampled_from(["<", "<=", ">", ">=", "=", "!="])
NUMBERS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)
LABELS = st.from_regex(r"[a-z][a-z_\-]{0,12}", fullmatch=True).filter(
    lambda t: t not in ("inf", "nan", "infinity"))
NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)


@given(name=NAMES, op=OPS, value=NUMBERS)
def test_given_a_numeric_score_filter_when_parsed_then_name_op_and_value_round_trip(
    name: str, op: str, value: float,
) -> None:
    assert parse_score(f"{name}{op}{value!r}") == ScoreFilter(name=name, op=op, value=value)  # type: ignore[arg-type]


@given(name=NAMES, op=st.sampled_from(["=", "!="]), label=LABELS)
def test_given_a_label_score_filter_when_parsed_then_it_compares_the_label(
    name: str, op: str, label: str,
) -> None:
    parsed = parse_score(f"{name} {op} {label}")
    assert (parsed.name, parsed.op, parsed.value, parsed.label) == (name, op, None, label)


@given(text=st.text(max_size=20))
def test_given_any_text_when_parsed_as_a_score_filter_then_it_parses_or_says_how_to_write_it(
    text: str,
) -> None:
    try:
        parsed = parse_score(text)
    except ConfigError as exc:
        assert repr(text) in str(exc)
    else:
        assert parsed.name and (parsed.value is not None or parsed.label)


@pytest.mark.parametrize(("text", "expected"), [
    ("helpful<<1", "is not NAME OP VALUE; write e.g. 'helpful<1'"),
    ("helpful<good", "< needs a number, not 'good'; compare a label with = or !="),
    ("<1", "is not NAME OP VALUE"),
    ("helpful", "is not NAME OP VALUE"),
])
def test_given_a_bad_score_filter_when_parsed_then_the_message_quotes_it_and_names_the_fix(
    text: str, expected: str,
) -> None:
    with pytest.raises(ConfigError, match="score filter") as info:
        parse_score(text)
    assert repr(text) in str(info.value) and expected in str(info.value)


@given(amount=st.integers(min_value=0, max_value=10_000),
       unit=st.sampled_from([("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604800)]))
def test_given_an_age_when_parsed_then_it_is_that_long_before_now(
    amount: int, unit: tuple[str, int],
) -> None:
    got = parse_since(f"{amount}{unit[0]}", now=NOW)
    assert got == NOW - dt.timedelta(seconds=amount * unit[1])


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-01-31", dt.datetime(2026, 1, 31, tzinfo=dt.UTC)),
    ("2026-01-31T08:30", dt.datetime(2026, 1, 31, 8, 30, tzinfo=dt.UTC)),
    (dt.date(2026, 1, 31), dt.datetime(2026, 1, 31, tzinfo=dt.UTC)),
    (None, None),
])
def test_given_a_day_or_moment_when_parsed_as_since_then_it_is_that_utc_moment(
    value: object, expected: dt.datetime | None,
) -> None:
    assert parse_since(value) == expected


@pytest.mark.parametrize("value", ["2x", "h2", "yesterday", "-2h", 7])
def test_given_a_bad_since_when_parsed_then_the_message_quotes_it_and_names_the_forms(
    value: object,
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_since(value)
    assert repr(value) in str(info.value) and "2h" in str(info.value)


def test_given_a_where_text_when_parsed_then_repeated_keys_collect() -> None:
    assert parse_where("release=1.4 tag=a tag='b c' score=helpful<1") == {
        "release": ["1.4"], "tag": ["a", "b c"], "score": ["helpful<1"]}


@pytest.mark.parametrize(("text", "expected"), [
    ("relase=1.4", "where key 'relase' is unknown (did you mean 'release'?)"),
    ("release", "where term 'release' is not key=value"),
    ("release='1.4", "close the quote"),
])
def test_given_a_bad_where_text_when_parsed_then_it_says_what_to_write(
    text: str, expected: str,
) -> None:
    with pytest.raises(ConfigError, match="where") as info:
        parse_where(text)
    assert expected in str(info.value)


def test_given_a_where_text_when_made_a_query_then_each_key_lands_in_its_field() -> None:
    query = RunQuery.from_where("user=u1 session=s1 tag=a tag=b release=1.4 env=prod "
                                "status=failed since=2h score=helpful<1", limit=7)
    assert (query.user, query.session, query.tags, query.release, query.environment,
            query.status, query.since, query.scores, query.limit) == (
        "u1", "s1", ("a", "b"), "1.4", "prod", ("failed",), "2h", ("helpful<1",), 7)
    assert RunQuery.from_where({"tag": ["a"], "release": "1.4"}) == RunQuery(
        tags=("a",), release="1.4")


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"scores": ("helpful<<1",)}, "score filter 'helpful<<1'"),
    ({"scores": "helpful<1"}, "RunQuery(scores='helpful<1'): pass a tuple"),
    ({"tags": ("",)}, "RunQuery(tags=('',)): pass a tuple of non-empty texts"),
    ({"since": "2x"}, "since='2x'"),
    ({"status": ("faild",)}, "did you mean 'failed'"),
    ({"release": 1.4}, "RunQuery(release=1.4): pass text"),
])
def test_given_bad_filters_when_a_run_query_is_built_then_it_refuses_with_the_fix(
    kwargs: dict[str, object], expected: str,
) -> None:
    with pytest.raises(ConfigError) as info:
        RunQuery(**kwargs)  # type: ignore[arg-type]
    assert expected in str(info.value)


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"name": ""}, "name the score"),
    ({"name": "helpful"}, "give a value=… or a label=…"),
    ({"name": "helpful", "value": float("nan")}, "pass a finite number"),
    ({"name": "helpful", "value": True}, "pass a finite number"),
    ({"name": "helpful", "label": 3}, "Score(label=3): pass text"),
])
def test_given_a_bad_score_when_built_then_it_refuses_with_the_fix(
    kwargs: dict[str, object], expected: str,
) -> None:
    with pytest.raises(ConfigError) as info:
        Score(**kwargs)  # type: ignore[arg-type]
    assert expected in str(info.value)


def test_given_a_query_and_a_where_when_merged_then_where_sets_its_filters_on_top() -> None:
    from recorder.store._runlist import _merged

    merged = _merged(RunQuery(model="gpt", release="1.3", limit=7), "release=1.4 tag=beta")
    assert (merged.model, merged.release, merged.tags, merged.limit) == (
        "gpt", "1.4", ("beta",), 7)
    assert _merged(None, None) == RunQuery()


@pytest.mark.parametrize("kwargs", [
    {"name": "h", "op": "<"},
    {"name": "h", "op": "<", "value": 1.0, "label": "x"},
    {"name": "h", "op": "<", "label": "x"},
    {"name": "h", "op": "~", "value": 1.0},
])
def test_given_an_inconsistent_score_filter_when_built_then_it_refuses(
    kwargs: dict[str, object],
) -> None:
    with pytest.raises(ConfigError, match="ScoreFilter"):
        ScoreFilter(**kwargs)  # type: ignore[arg-type]


@given(name=st.text(min_size=1, max_size=20))
def test_given_any_score_name_feedback_accepts_when_filtered_then_the_filter_names_it(
    name: str,
) -> None:
    try:
        Score(name=name, value=1)
    except ConfigError as exc:
        assert repr(name) in str(exc)
    else:
        assert parse_score(f"{name}<1") == ScoreFilter(name=name, op="<", value=1.0)
        assert parse_score(f"{name} = needs work!").label == "needs work!"


@pytest.mark.parametrize(("name", "problem"), [
    ("a<b", "holds one of < > = !"), ("wow!", "holds one of < > = !"),
    (" helpful", "starts or ends with a space"), ("tab\there", "holds a control character")])
def test_given_a_score_name_no_filter_could_name_when_scored_then_refused_naming_the_fix(
    name: str, problem: str,
) -> None:
    with pytest.raises(ConfigError, match="no filter") as info:
        Score(name=name, value=0)
    assert f"Score(name={name!r}): the name {problem}" in str(info.value)



@pytest.mark.parametrize("where", [{"user": None}, {"tag": ["beta", None]}, {"release": []}])
def test_given_a_where_mapping_with_no_value_when_built_then_refused_not_matched_as_text(
    where: dict[str, object],
) -> None:
    key = next(iter(where))
    with pytest.raises(ConfigError, match=f"where={{{key!r}: .*leave {key!r} out"):
        RunQuery.from_where(where)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@given(label=st.text(min_size=0, max_size=20).filter(lambda t: not _number(t)))
def test_given_any_label_feedback_accepts_when_filtered_then_the_filter_matches_it(
    label: str,
) -> None:
    try:
        Score(name="verdict", label=label)
    except ConfigError as exc:
        assert f"Score(label={label!r})" in str(exc)
    else:
        assert parse_score(f"verdict={label}") == ScoreFilter(name="verdict", op="=",
                                                             label=label)


@pytest.mark.parametrize("text", ["helpful<nan", "helpful != NaN", "helpful>=-nan"])
def test_given_a_nan_score_filter_when_parsed_then_refused_not_passing_every_score(
    text: str,
) -> None:
    with pytest.raises(ConfigError, match="nan is no number to compare a score with") as info:
        parse_score(text)
    assert repr(text) in str(info.value)
    with pytest.raises(ConfigError, match="nan"):
        ScoreFilter(name="helpful", op="<", value=float("nan"))


@pytest.mark.parametrize(("field", "example"), [("tags", "beta"), ("scores", "helpful<1")])
def test_given_a_blank_tag_or_score_when_queried_then_refused_with_an_example_of_that_field(
    field: str, example: str,
) -> None:
    with pytest.raises(ConfigError) as info:
        RunQuery(**{field: (" ",)})  # type: ignore[arg-type]
    assert str(info.value).endswith(f"e.g. {field}=({example!r},)")
