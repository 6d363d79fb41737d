"""A partition the reader may not read is an error naming it (exit 3), never "no runs".

The reader runs as an unprivileged user (``setpriv``; root reads everything),
so this needs root and ``setpriv``, else it is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_scale import write_many_runs

ROOT = Path(__file__).resolve().parent.parent.parent
SETPRIV = shutil.which("setpriv")
NOBODY = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None,
                                reason="needs root and setpriv to read as another user")


@pytest.fixture
def shared() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="footprint-unreadable-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
    assert SETPRIV is not None
    return subprocess.run(
        [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-m", "lens.cli", *args], capture_output=True, text=True, timeout=120,
        check=False, cwd="/", env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": "/tmp"})


def test_given_an_unreadable_partition_when_runs_lists_then_an_error_naming_it(
    shared: Path,
) -> None:
    store = shared / "store"
    write_many_runs(store, 3)
    for path in store.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    store.chmod(0o755)
    readable = _as_nobody("runs", "--store", str(store))
    if readable.returncode != 0:
        pytest.skip(f"the unprivileged user cannot run footprint here: {readable.stderr[-200:]}")
    (partition,) = (store / "events").iterdir()
    partition.chmod(0o000)
    done = _as_nobody("runs", "--store", str(store))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert str(partition) in done.stderr and "no runs" not in done.stderr + done.stdout
    assert len(done.stderr.strip().splitlines()) == 1
