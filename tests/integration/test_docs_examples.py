"""Every Python block of the README and of the documentation site runs as written and
prints what its ``# comment`` says it prints."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from docs_support import code_blocks

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
