"""One run-prefix resolver (``recorder.store._runref``) behind every command that takes RUN.

Run ids are UUIDv7: runs made in the same millisecond share their first 13
characters, so an ambiguous prefix must say which runs it matched and the
shortest prefix that names each alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint import ConfigError
from footprint.events import RunEnd, RunStart
from lens.cli import main as footprint
from lens.playback._conversation import resolve_run
from recorder import ParquetSink, Recorder, open_store
from recorder.store._runref import resolve_ref, shortest_prefixes

# Two runs made in the same millisecond: the same 48-bit time, the same version nibble,
# then random bits that first differ at index 17.
SAME_MS_A = "0190f3a2-7b4c-7d01-8e2f-0a1b2c3d4e5f"
SAME_MS_B = "0190f3a2-7b4c-7d0a-9f00-112233445566"
LATER = "0190f3a2-7c00-7000-8000-000000000000"
IDS = [SAME_MS_A, SAME_MS_B, LATER]


def _store(root: Path, ids: list[str]) -> Path:
    with Recorder([ParquetSink(root)]) as rec:
        for i, run in enumerate(ids):
            rec.emit(RunStart(run_id=run, seq=0, ts=10 * i, user_message="hi"))
            rec.emit(RunEnd(run_id=run, seq=1, ts=10 * i + 1, final_content="ok"))
    return root


def test_given_two_runs_of_one_millisecond_when_their_shared_prefix_is_given_then_both_named(
) -> None:
    shared = SAME_MS_A[:13]
    with pytest.raises(ConfigError) as refused:
        resolve_ref(shared, IDS, where="the store '/s'")
    message = str(refused.value)
    assert message.startswith(f"run prefix {shared!r} matches 2 runs: ")
    assert f"{SAME_MS_A!r} (type {SAME_MS_A[:18]!r})" in message
    assert f"{SAME_MS_B!r} (type {SAME_MS_B[:18]!r})" in message
    assert message.endswith("type more characters")


def test_given_the_suggested_prefixes_when_resolved_then_each_names_its_run() -> None:
    short = shortest_prefixes(IDS, IDS)
    assert short == {SAME_MS_A: SAME_MS_A[:18], SAME_MS_B: SAME_MS_B[:18], LATER: LATER[:11]}
    assert [resolve_ref(p, IDS, where="x") for p in short.values()] == list(short)


def test_given_more_than_three_matches_when_resolved_then_three_are_named_and_the_rest_counted(
) -> None:
    ids = [f"0190f3a2-7b4c-7d0{i}-8000-000000000000" for i in range(5)]
    with pytest.raises(ConfigError, match=r"matches 5 runs: .* and 2 more; ") as refused:
        resolve_ref("0190", ids, where="x")
    assert str(refused.value).count("(type ") == 3


def test_given_an_unknown_prefix_when_resolved_then_it_says_so_and_points_at_footprint_runs(
) -> None:
    with pytest.raises(ConfigError) as refused:
        resolve_ref("zzz", IDS, where="the store '/s'")
    assert str(refused.value) == ("no run 'zzz' in the store '/s'; see `footprint runs` for "
                                  "the ids, or use `last`")


@pytest.mark.parametrize(("ref", "expected"), [
    ("last", LATER), (LATER, LATER), (SAME_MS_A[:18], SAME_MS_A), ("0190f3a2-7c", LATER)])
def test_given_a_full_id_a_unique_prefix_or_last_when_resolved_then_the_run(
    ref: str, expected: str,
) -> None:
    assert resolve_ref(ref, IDS, where="x") == expected


def test_given_no_runs_when_resolved_then_told_to_record_one() -> None:
    with pytest.raises(ConfigError, match="no runs in the store '/s'; record one first"):
        resolve_ref("last", [], where="the store '/s'")


def test_given_an_id_another_extends_when_resolved_then_the_whole_id_names_it() -> None:
    assert shortest_prefixes(["abc", "abcd"], ["abc", "abcd"]) == {"abc": "abc", "abcd": "abcd"}
    assert resolve_ref("abc", ["abc", "abcd"], where="x") == "abc"


_IDS = st.lists(st.text("0123456789abcdef-", min_size=1, max_size=12), min_size=1,
                max_size=12, unique=True)


@settings(max_examples=300)
@given(ids=_IDS)
def test_given_any_ids_when_shortest_prefixes_are_taken_then_each_resolves_to_its_own_id(
    ids: list[str],
) -> None:
    for run, prefix in shortest_prefixes(ids, ids).items():
        assert run.startswith(prefix)
        assert resolve_ref(prefix, ids, where="x") == run
        shorter = prefix[:-1]
        if shorter and shorter not in ids:  # one character fewer is ambiguous
            assert len([i for i in ids if i.startswith(shorter)]) > 1


@settings(max_examples=300)
@given(ids=_IDS, ref=st.text("0123456789abcdef-", max_size=6))
def test_given_any_prefix_when_resolved_then_a_run_it_names_or_a_config_error(
    ids: list[str], ref: str,
) -> None:
    matches = [i for i in ids if i.startswith(ref)] if ref else []
    try:
        run = resolve_ref(ref, ids, where="x")
    except ConfigError as refused:
        assert ref not in ids and len(matches) != 1
        assert repr(ref) in str(refused)
    else:
        assert run == ref or matches == [run]


def test_given_a_store_with_two_runs_of_one_millisecond_when_shown_by_their_prefix_then_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = _store(tmp_path / "store", IDS)
    assert footprint(["show", SAME_MS_A[:13], "--store", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"(type {SAME_MS_B[:18]!r})" in err
    assert footprint(["show", SAME_MS_B[:18], "--store", str(store)]) == 0
    assert SAME_MS_B in capsys.readouterr().out


def test_given_a_store_and_its_events_when_the_same_prefix_is_resolved_then_same_answer(
    tmp_path: Path,
) -> None:
    with open_store(_store(tmp_path / "store", IDS)) as store:
        events = [e for run in IDS for e in store.events(run)]
        for ref in ("last", SAME_MS_A[:18], "0190f3a2-7c"):
            assert store.resolve_run(ref) == resolve_run(events, ref)
        for ref in (SAME_MS_A[:13], "nope"):
            with pytest.raises(ConfigError) as from_store:
                store.resolve_run(ref)
            with pytest.raises(ConfigError) as from_events:
                resolve_run(events, ref)
            assert str(from_store.value).split(" in ")[0] == \
                str(from_events.value).split(" in ")[0]


def test_given_a_snapshot_recording_when_a_prefix_is_resolved_then_the_same_rule_applies(
) -> None:
    from lens.playback._snapshot import Recording

    recording = Recording(Path("/snap"), {"run": SAME_MS_A}, {run: [] for run in IDS})
    assert recording.resolve_run("last") == SAME_MS_A  # the run the folder was made for
    assert recording.resolve_run(SAME_MS_B[:18]) == SAME_MS_B
    with pytest.raises(ConfigError, match=r"matches 2 runs: .*\(type '0190f3a2-7b4c-7d0a'\)"):
        recording.resolve_run(SAME_MS_A[:13])
    with pytest.raises(ConfigError, match=r"no run 'nope' in recording '/snap'; it holds "):
        recording.resolve_run("nope")
