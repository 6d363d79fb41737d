"""Random single-bit flips in sealed files: no command fails, each answers in one line.

Seeded and bounded: each case copies a small store, flips one bit of one
sealed file, then runs ``runs``, ``show`` and ``verify`` (every run) and
``doctor`` in process. A flip may make a file unreadable (skipped with a
warning), change a value (``verify`` says broken: exit 1) or nothing at all;
it never raises out of a command.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from store_scale import one_run_per_segment, run_id_of

from lens.cli import main

RUNS = 3
FLIPS = 24


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_run_per_segment(tmp_path_factory.mktemp("flips"), RUNS, 4)


def _flip(root: Path, seed: int) -> Path:
    rng = random.Random(seed)
    files = sorted(p for p in root.rglob("*.parquet") if "summaries" not in p.parts)
    path = rng.choice(files)
    data = bytearray(path.read_bytes())
    at = rng.randrange(len(data))
    data[at] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(FLIPS))
def test_given_one_flipped_bit_when_every_command_runs_then_none_fails(
    pristine: Path, tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    shutil.copytree(pristine, root, ignore=shutil.ignore_patterns("summaries"))
    _flip(root, seed)
    commands = [["runs"], ["show", "last"], ["doctor"],
                *(["verify", run_id_of(n)] for n in range(RUNS))]
    for args in commands:
        code = main([*args, "--store", str(root)])
        out, err = capsys.readouterr()
        assert code in (0, 1, 2), (args, code, err)
        assert "Traceback" not in out + err
        if code == 2:  # a run the flip made unreadable: named in one line
            assert len(err.strip().splitlines()) >= 1 and "footprint" in err, err
