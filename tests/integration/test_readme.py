"""The README's code runs as written, and it starts with the set-up commands."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_given_the_readme_when_read_then_its_first_block_is_the_setup_commands() -> None:
    first = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first is not None
    lines = [line for line in first.group(1).splitlines() if line.strip()]
    assert lines == ["pip install . && footprint demo", "pip install -e '.[dev]' && pytest"]


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_given_a_readme_python_block_when_run_then_it_prints_what_it_says(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code = _python_blocks()[index]
    script = tmp_path / f"readme_{index}.py"
    script.write_text(code, encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    for expected in re.findall(r"print\(.*\)\s+# (.+?)\s*$", code, re.M):
        assert expected in printed
