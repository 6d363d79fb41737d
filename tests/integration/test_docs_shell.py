"""Every shell session of the documentation (a ```console block: ``$ command`` lines, each
followed by what it prints) runs in a scratch folder, as a new user would type it, and
prints what the page shows.

The commands of one block run in one ``bash``, in order (a variable set by one is seen by
the next), with the project's ``examples/`` beside them and this interpreter's ``footprint``
first on ``PATH``. Every command must succeed, and the lines shown under it must be
printed by it (stdout and stderr), in that order; lines it prints that the page leaves out
are allowed, and ``…`` in a shown line stands for any text.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_support import ROOT, code_blocks

CONSOLE = code_blocks("console")
SEPARATOR = "@@footprint-docs-step"


def _steps(block: str) -> list[tuple[str, list[str]]]:
    """The block's commands, each with the lines shown under it."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps and line.strip():
            steps[-1][1].append(line.rstrip())
    return steps


def _shown_in_order(shown: list[str], printed: list[str]) -> str | None:
    """The first shown line not printed (after the previous one), or None."""
    at = 0
    for expected in shown:
        pattern = re.compile(".*".join(map(re.escape, expected.split("…"))))
        while at < len(printed) and not pattern.fullmatch(printed[at].rstrip()):
            at += 1
        if at == len(printed):
            return expected
        at += 1
    return None


@pytest.mark.docs_example
@pytest.mark.parametrize(("page", "index", "block"), CONSOLE,
                         ids=[f"{page}#{index}" for page, index, _ in CONSOLE])
def test_given_a_documented_shell_session_when_typed_in_a_scratch_folder_then_it_prints_it(
        page: str, index: int, block: str, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    steps = _steps(block)
    script = "".join(f"echo {SEPARATOR}\n{{ {command}\n}} 2>&1\necho {SEPARATOR} $?\n"
                     for command, _ in steps)
    env = {key: value for key, value in os.environ.items()
           if key not in ("FOOTPRINT_STORE", "FOOTPRINT_CHAIN_KEY")}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
               COLUMNS="200")
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    merged = done.stdout + done.stderr
    outputs = re.findall(rf"^{SEPARATOR}\n(.*?)^{SEPARATOR} (\d+)$", done.stdout, re.S | re.M)
    assert len(outputs) == len(steps), (page, index, merged[-3000:])
    for (command, shown), (printed, code) in zip(steps, outputs, strict=True):
        assert code == "0", (page, command, code, merged[-3000:])
        missing = _shown_in_order(shown, printed.splitlines())
        assert missing is None, (page, command, missing, printed[-3000:])
