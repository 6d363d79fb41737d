"""`footprint snapshot` and `footprint replay --store FOLDER`: a run exported and replayed back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from footprint.events import RunStart
from lens._examples.support_desk import make_agent
from lens.cli import main as footprint
from lens.playback._snapshot import Recording
from recorder import ParquetSink, Recorder, Redactor, open_store

DESK = "lens._examples.support_desk:make_agent"


def _record(store: Path, **recorder: object) -> str:
    rec = Recorder(sinks=[ParquetSink(store)], **recorder)  # type: ignore[arg-type]
    try:
        desk = make_agent(sink=rec)
        desk.answer()
        return desk.follow_up_sync("And what did you decide?").run_id
    finally:
        rec.close()


def test_given_a_follow_up_when_snapshot_then_the_folder_holds_the_conversation_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = _record(tmp_path / "store")
    assert footprint(["snapshot", run_id[:24], "--agent", DESK, "-o", str(tmp_path / "out"),
                      "--store", str(tmp_path / "store")]) == 0
    folder = tmp_path / "out" / f"support_desk_{run_id[-8:]}"
    assert f"wrote {folder} (" in capsys.readouterr().out
    manifest = json.loads((folder / "recording.json").read_text(encoding="utf-8"))
    assert manifest["run"] == run_id and manifest["turns"] == 2 and manifest["agent"] == DESK
    assert footprint(["replay", "last", "--agent", DESK, "--store", str(folder)]) == 0
    assert capsys.readouterr().out.startswith(f"replay of {run_id}: identical — 2 turns, ")


def test_given_a_redacted_store_when_snapshot_then_the_export_keeps_the_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _record(tmp_path / "store", processors=[Redactor(paths=["run.start:user_message"])])
    assert footprint(["snapshot", "last", "--agent", DESK, "-o", str(tmp_path / "out"),
                      "--name", "desk", "--store", str(tmp_path / "store")]) == 0
    recording = Recording.load(tmp_path / "out" / "desk")
    with open_store(tmp_path / "store") as store:
        for run_id in recording.run_ids():
            assert recording.events(run_id) == store.events(run_id)
    starts = [e for rid in recording.run_ids() for e in recording.events(rid)
              if isinstance(e, RunStart)]
    assert len(starts) == 2
    assert all(s.user_message.startswith(f"[redacted hmac-sha256:{Redactor().key_id}:")
               for s in starts)
    code = footprint(["replay", "last", "--agent", DESK, "--store", str(tmp_path / "out/desk")])
    err = capsys.readouterr().err
    assert code == 2 and "the person's message of run" in err and "was redacted" in err


@pytest.mark.parametrize(("argv", "expected"), [
    (["snapshot", "nope", "--agent", DESK], "no run 'nope'"),
    (["snapshot", "last", "--agent", "lens._examples.support_desk:make_agnt"],
     "did you mean 'make_agent'"),
])
def test_given_bad_input_when_snapshot_then_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str,
) -> None:
    _record(tmp_path / "store")
    code = footprint([*argv, "-o", str(tmp_path / "out"), "--store", str(tmp_path / "store")])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_given_a_link_at_the_test_module_when_snapshot_then_exit_2_naming_it_and_the_target_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _record(tmp_path / "store")
    victim = tmp_path / "victim.py"
    victim.write_text("# keep me\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "test_desk.py").symlink_to(victim)
    code = footprint(["snapshot", "last", "--agent", DESK, "-o", str(tmp_path / "out"),
                      "--name", "desk", "--store", str(tmp_path / "store")])
    err = capsys.readouterr().err
    link = tmp_path / "out" / "test_desk.py"
    assert code == 2 and err == (f"footprint snapshot: {str(link)!r} is a symbolic link (to "
                                 f"{str(victim)!r}); footprint writes nothing through a link: "
                                 f"remove it (rm {link}) and run again\n")
    assert victim.read_text(encoding="utf-8") == "# keep me\n"
