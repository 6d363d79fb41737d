"""Feedback on a keyed store: chained with the writer's key, or refused before a byte is written.

A run recorded with ``ParquetSink(chain_key=…)`` stores HMAC heads; a
``feedback.recorded`` event appended after its end must be headed the same
way, else ``verify --key-file`` would find a plain head among keyed ones
(or, with no check at all, anyone could forge the score).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from footprint import Agent, ConfigError, ScriptedModel
from lens.cli import main as footprint
from recorder import ParquetSink, Recorder, feedback, open_store, verify_run
from recorder.write._chain import KEY_ENV

KEY = b"k" * 32
ROOT = Path(__file__).resolve().parents[2]


def _record(root: Path, key: bytes | None, runs: int = 1) -> list[str]:
    with Recorder(sinks=[ParquetSink(root, chain_key=key)]) as rec:
        agent = Agent(provider=ScriptedModel(["refund sent"] * runs), model="m", sink=rec)
        return [agent.run_sync("refund please").run_id for _ in range(runs)]


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*.parquet")}


def _key_file(tmp_path: Path) -> Path:
    path = tmp_path / "chain.key"
    path.write_bytes(KEY + b"\n")
    return path


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def test_given_a_keyed_store_when_feedback_is_given_with_the_key_then_it_verifies_with_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    (run_id,) = _record(root, KEY)
    event = feedback(root, run_id, "helpful", value=0, chain_key=KEY)
    with open_store(root) as store:
        result = verify_run(store, run_id, key=KEY)
        last = store.rows("SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq DESC "
                          "LIMIT 1", [run_id])
    assert result.valid and result.complete, result.summary()
    assert last == [(event.seq, "feedback.recorded")]


def test_given_a_keyed_store_when_feedback_is_given_without_the_key_then_refused_unwritten(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    (run_id,) = _record(root, KEY)
    before = _files(root)
    with pytest.raises(ConfigError) as refused:
        feedback(root, run_id, "helpful", value=0)
    message = str(refused.value)
    assert repr(str(root)) in message and "--key-file" in message and "chain_key=" in message
    assert _files(root) == before
    with open_store(root) as store:
        assert verify_run(store, run_id, key=KEY).valid


def test_given_a_keyed_store_and_the_key_in_the_environment_when_feedback_then_it_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "store"
    (run_id,) = _record(root, KEY)
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    feedback(root, run_id, "helpful", label="good")
    with open_store(root) as store:
        assert verify_run(store, run_id, key=KEY).valid


def test_given_a_plain_store_and_a_key_in_the_environment_when_feedback_then_refused_unwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A keyed head appended to a plain chain would leave a run no one can verify."""
    root = tmp_path / "store"
    (run_id,) = _record(root, None)
    before = _files(root)
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    with pytest.raises(ConfigError, match="recorded without a chain key") as refused:
        feedback(root, run_id, "helpful", value=1)
    assert KEY_ENV in str(refused.value)
    assert _files(root) == before
    monkeypatch.delenv(KEY_ENV)
    with open_store(root) as store:
        assert verify_run(store, run_id).valid


def test_given_a_keyed_store_when_footprint_feedback_has_the_key_file_then_verify_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "store"
    (run_id,) = _record(root, KEY)
    key_file = _key_file(tmp_path)
    assert footprint(["feedback", run_id, "--name", "helpful", "--value", "1", "--key-file",
                      str(key_file), "--store", str(root)]) == 0
    assert footprint(["verify", run_id, "--key-file", str(key_file), "--store",
                      str(root)]) == 0
    assert "valid" in capsys.readouterr().out


def test_given_a_keyed_store_when_footprint_feedback_lacks_the_key_file_then_exit_2_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "store"
    (run_id,) = _record(root, KEY)
    before = _files(root)
    assert footprint(["feedback", run_id, "--name", "helpful", "--value", "1", "--store",
                      str(root)]) == 2
    err = capsys.readouterr().err
    assert "--key-file" in err and repr(str(root)) in err and len(err.strip().splitlines()) == 1
    assert _files(root) == before


def test_given_a_missing_key_file_when_footprint_feedback_runs_then_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "store"
    (run_id,) = _record(root, KEY)
    missing = tmp_path / "nope.key"
    assert footprint(["feedback", run_id, "--name", "helpful", "--value", "1", "--key-file",
                      str(missing), "--store", str(root)]) == 2
    assert f"--key-file {str(missing)!r}" in capsys.readouterr().err


def test_given_a_keyed_store_when_footprint_evaluate_has_the_key_file_then_every_run_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "store"
    ids = _record(root, KEY, runs=2)
    monkeypatch.chdir(ROOT)
    judge = "examples/feedback_loop.py:helpful"
    assert footprint(["evaluate", "--judge", judge, "--store", str(root)]) == 2
    assert "--key-file" in capsys.readouterr().err
    assert footprint(["evaluate", "--judge", judge, "--key-file", str(_key_file(tmp_path)),
                      "--store", str(root)]) == 0
    assert "2 scores recorded on 2 runs" in capsys.readouterr().out
    with open_store(root) as store:
        assert all(verify_run(store, r, key=KEY).valid for r in ids)
        assert store.rows("SELECT count(*) FROM scores") == [(2,)]


def test_given_a_keyed_store_when_evaluate_scores_in_batches_with_the_key_then_all_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:

    ids = _record(tmp_path / "s", KEY, runs=5)
    (tmp_path / "judges.py").write_text(
        "from recorder import Score\n\ndef ok(run):\n    return [Score(name='ok', value=1), "
        "Score(name='tone', label='calm')]\n", encoding="utf-8")
    judge = ["evaluate", "--judge", f"{tmp_path / 'judges.py'}:ok", "--store",
             str(tmp_path / "s"), "--concurrency", "3"]
    assert footprint(judge) == 2  # a keyed store without its key: refused, nothing judged
    assert "recorded with a chain key" in capsys.readouterr().err
    assert footprint([*judge, "--key-file", str(_key_file(tmp_path))]) == 0
    assert "10 scores recorded on 5 runs" in capsys.readouterr().out
    with open_store(tmp_path / "s") as store:
        verdicts = [verify_run(store, run_id, key=KEY) for run_id in ids]
        assert store.rows("SELECT count(*), count(DISTINCT run_id) FROM scores") == [(10, 5)]
    assert all(v.valid and not v.note for v in verdicts), [v.summary() for v in verdicts]
