"""The why report cached in the store: JSON back to a report, atomic writes, bad files refused;
and the interpreter's switch interval while searches run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.explain._cache import (
    CacheUnreadable,
    cache_path,
    load_report,
    report_from,
    save_report,
)
from lens.explain._report import Baseline, ModelCalls, Suspect, WhyReport, why_dict
from lens.tui._whyread import quick_switches

_FLOAT = st.floats(allow_nan=False, allow_infinity=False, width=32)
_TEXT = st.text(max_size=12)
_SUSPECTS = st.builds(
    Suspect, ids=st.none() | st.lists(_TEXT, max_size=3).map(tuple), score=st.none() | _FLOAT,
    chain=st.lists(_TEXT, max_size=3).map(tuple), confidence=st.none() | _FLOAT,
    p_value=st.none() | _FLOAT, changes=st.lists(_TEXT, max_size=2).map(tuple))
REPORTS = st.builds(
    WhyReport, suspects=st.lists(_SUSPECTS, max_size=3).map(tuple), alpha=_FLOAT,
    alpha_per_test=st.none() | _FLOAT, baseline=st.none() | st.builds(
        Baseline, outcomes=st.lists(_TEXT, max_size=3).map(tuple)),
    flags=st.lists(_TEXT, max_size=2).map(tuple), untested=st.lists(_TEXT, max_size=2).map(tuple),
    model_calls=st.builds(ModelCalls))


@given(REPORTS)
def test_given_any_report_when_its_json_is_read_back_then_it_is_the_same_report(
    report: WhyReport,
) -> None:
    assert report_from(json.loads(json.dumps(why_dict(report)))) == report


def _report() -> WhyReport:
    return WhyReport(run_id="r1", step="llm#1", answer="189 EUR", outcome="189 eur",
                     comparator="the whole answer", comparator_mode="normalised",
                     mode="CORRELATIONAL", conclusion="correlational", conclusion_text="",
                     suspects=())


def test_given_a_saved_report_when_loaded_then_agent_time_and_report_come_back(
    tmp_path: Path,
) -> None:
    path = cache_path(tmp_path, "r1", "shop.py:make_agent", {"seeds": None})
    assert path.parent == tmp_path / "why" and path.name.startswith("r1.")
    assert path != cache_path(tmp_path, "r1", "shop.py:make_agent", {"seeds": 24})
    save_report(path, _report(), agent="shop.py:make_agent", options={"seeds": None})
    cached = load_report(path)
    assert cached is not None and cached.report == _report()
    assert cached.agent == "shop.py:make_agent" and cached.computed_at.endswith(" UTC")
    assert [p.name for p in path.parent.iterdir()] == [path.name], "no temporary file left"
    assert load_report(tmp_path / "why" / "missing.json") is None


@pytest.mark.parametrize("text", ["{", "[]", '{"agent": "a:b", "computed_at": "now"}',
                                  '{"agent": "a:b", "computed_at": "now", "report": {}}'])
def test_given_a_broken_cache_file_when_loaded_then_it_is_refused_by_name(
    tmp_path: Path, text: str,
) -> None:
    path = tmp_path / "r1.abc.json"
    path.write_text(text)
    with pytest.raises(CacheUnreadable, match=r"cached why report r1\.abc\.json is not a valid"):
        load_report(path)


def test_given_overlapping_searches_when_they_end_then_the_switch_interval_is_restored() -> None:
    normal = sys.getswitchinterval()
    first, second = quick_switches(), quick_switches()
    first.__enter__()
    second.__enter__()
    assert sys.getswitchinterval() == pytest.approx(min(normal, 0.001))
    first.__exit__(None, None, None)
    assert sys.getswitchinterval() == pytest.approx(min(normal, 0.001)), "one still runs"
    second.__exit__(None, None, None)
    assert sys.getswitchinterval() == pytest.approx(normal)
