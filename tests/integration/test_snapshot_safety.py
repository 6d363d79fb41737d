"""What `footprint snapshot` and `pytest --footprint-update` write is safe: the generated test
module holds every recorded string as a ``repr`` literal (any text parses, adds no statement
and runs nothing at collection), and no file is written through a link or outside its folder.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.events import Event, ListSink, RunStart
from lens._examples.support_desk import make_agent
from lens.playback._files import write_text_safely
from lens.playback._snapshot import export_run, module_text

DESK = "lens._examples.support_desk:make_agent"
ROOT = Path(__file__).resolve().parents[2]
ANY_TEXT = st.text(st.characters(exclude_categories=()))  # surrogates and controls too
SLUG = st.from_regex(r"[0-9a-z]+(_[0-9a-z]+)*", fullmatch=True)
DOCSTRING = ast.get_docstring(ast.parse(module_text(run="r", message="m", name="n", agent="a:b",
                                                   out=Path("/"))))
KINDS = ["Expr", "ImportFrom", "Assign", "Assign", "Assign", "Assign", "FunctionDef",
         "FunctionDef"]


def _desk_run(run_id: str, message: str) -> list[Event]:
    """The support desk's run, recorded in memory, under ``run_id`` with ``message``."""
    sink = ListSink()
    make_agent(sink=sink).answer()
    events = [dataclasses.replace(e, run_id=run_id) for e in sink.events]  # type: ignore[type-var]
    return [dataclasses.replace(e, user_message=message) if isinstance(e, RunStart) else e
            for e in events]


def _module_level_names(tree: ast.Module) -> set[str]:
    """Every name the module's own statements (not its functions' bodies) read."""
    top = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
    return {n.id for stmt in top for n in ast.walk(stmt) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


@settings(max_examples=200, deadline=None)
@given(run=ANY_TEXT, message=ANY_TEXT, name=SLUG,
       module=ANY_TEXT.filter(lambda t: "\x00" not in t), attr=ANY_TEXT,
       as_file=st.booleans())
def test_given_any_recorded_text_when_the_test_module_is_written_then_it_parses_to_its_own_code(
    tmp_path_factory: pytest.TempPathFactory, run: str, message: str, name: str, module: str,
    attr: str, as_file: bool,
) -> None:
    out = tmp_path_factory.getbasetemp().resolve()
    agent = f"{module}{'.py' if as_file else ''}:{attr}"
    text = module_text(run=run, message=message, name=name, agent=agent, out=out)

    tree = ast.parse(text)
    assert [type(n).__name__ for n in tree.body] == KINDS
    assert ast.get_docstring(tree) == DOCSTRING  # the same for every run: nothing recorded
    assert _module_level_names(tree) <= {"Path", "__file__", "str"}
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert [f.name for f in functions] == [f"test_{name}_replays_decision_for_decision",
                                           f"test_{name}_decisions_match_the_snapshot"]
    assert all(not f.decorator_list and len(f.body) == 1 for f in functions)
    namespace: dict[str, object] = {"__file__": str(out / f"test_{name}.py")}
    exec(compile(tree, "<generated>", "exec"), namespace)  # what collecting it runs
    assert namespace["RUN"] == run and namespace["RECORDING"] == out / name
    clipped = " ".join(message.split())
    assert namespace["MESSAGE"] == (clipped if len(clipped) <= 50 else clipped[:49] + "…")
    file, _, factory = agent.rpartition(":")
    if file.endswith(".py") or "/" in file or "\\" in file:  # made relative to the module
        where, _, tail = str(namespace["AGENT"]).rpartition(":")
        assert tail == factory and Path(where).resolve() == Path(file).resolve()
    else:
        assert namespace["AGENT"] == agent


def test_given_a_run_id_that_closes_a_docstring_when_its_module_is_collected_then_nothing_runs(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    payload = f'import pathlib; pathlib.Path({str(marker)!r}).write_text("ran")'
    run_id = f'0190-x"""\n{payload}\n"""'
    events = _desk_run(run_id, f'hi"""\n{payload}\n"""')
    _folder, module = export_run(events, run_id, tmp_path / "out", agent=DESK, name="desk")
    assert module is not None
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", str(module)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 tests collected" in done.stdout
    assert not marker.exists()


@pytest.mark.parametrize("planted", ["test_desk.py", "desk/events.jsonl", "desk/decisions.json"])
def test_given_a_link_at_a_snapshot_file_when_exported_then_refused_and_its_target_kept(
    tmp_path: Path, planted: str,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "out" / planted
    link.parent.mkdir(parents=True)
    link.symlink_to(victim)
    events = _desk_run("0190-run", "hello")
    with pytest.raises(ConfigError) as caught:
        export_run(events, "0190-run", tmp_path / "out", agent=DESK, name="desk")
    assert str(caught.value) == (
        f"{str(link)!r} is a symbolic link (to {str(victim)!r}); footprint writes nothing "
        f"through a link: remove it (rm {link}) and run again")
    assert victim.read_text(encoding="utf-8") == "keep me\n"


def test_given_the_recording_folder_is_a_link_elsewhere_when_exported_then_refused(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "desk").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        export_run(_desk_run("0190-run", "hello"), "0190-run", tmp_path / "out", agent=DESK,
                   name="desk")
    assert list(elsewhere.iterdir()) == []


def test_given_a_hard_link_at_the_path_when_written_then_replaced_whole_and_the_other_name_kept(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    path = tmp_path / "decisions.json"
    os.link(victim, path)
    path.chmod(0o640)
    write_text_safely(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert victim.read_text(encoding="utf-8") == "keep me\n"  # a rename, not a rewrite in place
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decisions.json", "victim.txt"]
