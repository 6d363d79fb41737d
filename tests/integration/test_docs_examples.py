"""Every Python block of the README and of the documentation site runs as written and
prints what its ``# comment`` says it prints; every SQL block runs in the SQL sandbox over
a store holding a support-desk run."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from docs_support import code_blocks

from lens._examples.support_desk import make_agent
from recorder import ParquetSink, Recorder, open_store

PYTHON = code_blocks("python")


@pytest.mark.docs_example
@pytest.mark.parametrize(("page", "index", "code"), PYTHON,
                         ids=[f"{page}#{index}" for page, index, _ in PYTHON])
def test_given_a_documented_python_block_when_run_then_it_prints_what_it_says(
    page: str, index: int, code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / f"example_{index}.py"
    script.write_text(code, encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    for expected in re.findall(r"print\(.*\)\s+# (.+?)\s*$", code, re.M):
        assert expected in printed, (page, index, expected)


SQL = code_blocks("sql")


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    with Recorder(sinks=[ParquetSink(root)]) as recorder:
        make_agent(sink=recorder).run_sync("I was charged $40 for order A-1047; it is broken")
    return root


@pytest.mark.docs_example
@pytest.mark.parametrize(("page", "index", "query"), SQL,
                         ids=[f"{page}#{index}" for page, index, _ in SQL])
def test_given_a_documented_sql_block_when_run_on_a_store_then_the_sandbox_answers_it(
        page: str, index: int, query: str, demo_store: Path) -> None:
    open_store(demo_store).sql(query).fetchall()  # a refused or failing query raises
