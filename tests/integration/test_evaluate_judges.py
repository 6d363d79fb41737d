"""`footprint evaluate` / `recorder.evaluate` with judges that fail: a raising judge, a
judge returning something other than scores. The runs it judged are scored, the
failures named, nothing is ever a traceback or an "internal error"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from footprint import Agent, RunError, ScriptedModel
from footprint._errors import ConfigError
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, Score, StoredRun, evaluate, open_store, verify_run

JUDGES = '''
from recorder import Score

def fails_on_second(run):
    if run.answer == "answer 1":
        raise ValueError("cannot parse answer 1")
    return Score(name="ok", value=1.0)

def a_number(run):
    return 0.5

def yields_then_fails(run):
    yield Score(name="ok", value=1.0)
    raise KeyError("missing field")
'''


def _store(path: Path, runs: int = 3) -> list[str]:
    """``runs`` runs answering ``answer 0``, ``answer 1``, …; their ids in order."""
    with Recorder(sinks=[ParquetSink(path)]) as rec:
        return [Agent(provider=ScriptedModel([f"answer {i}"]), model="m", sink=rec)
                .run_sync("hi").run_id for i in range(runs)]


def _scored(path: Path) -> dict[str, str]:
    with open_store(path) as store:
        return dict(store.rows("SELECT run_id, name FROM scores"))


@pytest.fixture
def judges(tmp_path: Path) -> Path:
    path = tmp_path / "judges.py"
    path.write_text(JUDGES, encoding="utf-8")
    return path


def test_given_a_judge_raising_on_one_run_when_evaluate_then_the_others_are_scored_and_it_named(
    tmp_path: Path, judges: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    ids = _store(tmp_path / "s")
    code = footprint(["evaluate", "--judge", f"{judges}:fails_on_second",
                      "--store", str(tmp_path / "s")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "2 scores recorded on 2 runs" in out
    assert len(err.strip().splitlines()) == 1
    assert f"raised on 1 run (not scored; the others were), first on {ids[1]}" in err
    assert "ValueError: cannot parse answer 1" in err and "internal error" not in err
    assert _scored(tmp_path / "s") == {ids[0]: "ok", ids[2]: "ok"}
    with open_store(tmp_path / "s") as store:
        assert all(verify_run(store, run_id).valid for run_id in ids)


def test_given_a_generator_judge_failing_midway_when_evaluate_then_that_run_gets_no_score(
    tmp_path: Path, judges: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _store(tmp_path / "s", runs=2)
    code = footprint(["evaluate", "--judge", f"{judges}:yields_then_fails",
                      "--store", str(tmp_path / "s")])
    out, err = capsys.readouterr()
    assert code == 1 and out.strip() == "no scores recorded"
    assert "raised on 2 runs (not scored; no run was)" in err and "KeyError" in err
    assert _scored(tmp_path / "s") == {}


def test_given_a_judge_returning_a_number_when_evaluate_then_exit_2_naming_the_run(
    tmp_path: Path, judges: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    ids = _store(tmp_path / "s", runs=1)
    code = footprint(["evaluate", "--judge", f"{judges}:a_number",
                      "--store", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"judge returned 0.5 for run {ids[0]!r}; return a recorder.Score" in err
    assert _scored(tmp_path / "s") == {}


def test_given_a_raising_judge_and_no_on_error_when_evaluate_is_called_then_the_others_are_kept(
    tmp_path: Path,
) -> None:
    ids = _store(tmp_path)

    def judge(run: StoredRun) -> Score:
        if run.run_id == ids[2]:
            raise ZeroDivisionError("division by zero")
        return Score(name="ok", value=1)

    with pytest.raises(RunError, match=f"raised ZeroDivisionError on run {ids[2]!r}") as caught:
        evaluate(tmp_path, judge)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    assert _scored(tmp_path) == {ids[0]: "ok", ids[1]: "ok"}
    heard: list[tuple[str, str]] = []
    assert evaluate(tmp_path, judge, on_error=lambda r, e: heard.append((r, str(e)))) == []
    assert heard == [(ids[2], "division by zero")]
    assert _scored(tmp_path) == {ids[0]: "ok", ids[1]: "ok"}
    with open_store(tmp_path) as store:
        assert all(verify_run(store, run_id).valid for run_id in ids)


@pytest.mark.parametrize("returned", ["good", {"name": "ok"}, 1, True])
def test_given_a_judge_returning_no_scores_when_evaluate_is_called_then_config_error(
    tmp_path: Path, returned: object,
) -> None:
    _store(tmp_path, runs=1)
    with pytest.raises(ConfigError, match=f"judge returned {returned!r} for run"):
        evaluate(tmp_path, lambda run: returned)  # type: ignore[arg-type,return-value]
    assert _scored(tmp_path) == {}


@pytest.mark.parametrize(("source", "error"), [
    ("def judge(run):\n    return (\n", "SyntaxError: '(' was never closed"),
    ("raise RuntimeError('no API key at import')\n", "RuntimeError: no API key at import")])
def test_given_a_judge_module_failing_at_import_when_evaluate_then_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    source: str, error: str,
) -> None:
    _store(tmp_path / "s", runs=1)
    (tmp_path / "broken_judges.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for ref in ("broken_judges:judge", f"{tmp_path / 'broken_judges.py'}:judge"):
        code = footprint(["evaluate", "--judge", ref, "--store", str(tmp_path / "s")])
        err = capsys.readouterr().err
        assert code == 2 and "internal error" not in err, err
        assert "failed to import" in err and error in err and "fix the" in err
        sys.modules.pop("broken_judges", None)
