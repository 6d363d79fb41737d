"""The store on object storage, against a local S3-compatible server (moto's server
mode on 127.0.0.1): two writer processes record into one bucket, then
``footprint runs`` and ``footprint sql`` read it back through the mirror."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fanout_support import moto_bucket

from lens.cli import main

pytestmark = pytest.mark.slow

WRITER = """
import sys
from lens._examples.support_desk import make_agent
from recorder import ParquetSink, Recorder
with Recorder(sinks=[ParquetSink(sys.argv[1])]) as rec:
    make_agent(sink=rec).run_sync("Refund order A1001, please", user=sys.argv[2])
"""


@pytest.fixture
def bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with moto_bucket(tmp_path, monkeypatch) as uri:
        yield uri


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_given_two_processes_writing_one_bucket_when_read_then_both_runs_are_there(
    bucket: str, capsys: pytest.CaptureFixture[str],
) -> None:
    writers = [subprocess.run([sys.executable, "-c", WRITER, bucket, user],
                              env=dict(os.environ), capture_output=True, text=True, timeout=120)
               for user in ("u-a", "u-b")]
    assert [w.returncode for w in writers] == [0, 0], [w.stderr[-500:] for w in writers]
    staging = Path(os.environ["FOOTPRINT_CACHE"]) / "staging"
    assert not [p for p in staging.rglob("*.parquet") if "/live/" not in p.as_posix()]
    code, out = _cli(capsys, "runs", "--store", bucket)
    assert code == 0 and out.count("complete") >= 2
    code, out = _cli(capsys, "sql", "SELECT user_id, status FROM runs ORDER BY user_id",
                     "--format", "json", "--store", bucket)
    assert code == 0
    assert json.loads(out) == [{"user_id": "u-a", "status": "complete"},
                               {"user_id": "u-b", "status": "complete"}]


def test_given_a_bucket_when_a_new_run_lands_then_the_next_read_sees_it(
    bucket: str, capsys: pytest.CaptureFixture[str],
) -> None:
    from lens._examples.support_desk import make_agent
    from recorder import ParquetSink, Recorder, open_store

    for user in ("first", "second"):
        with Recorder(sinks=[ParquetSink(bucket)]) as rec:
            make_agent(sink=rec).run_sync("Where is my parcel?", user=user)
        with open_store(bucket) as store:
            users = [r[0] for r in store.rows("SELECT user_id FROM runs ORDER BY user_id")]
        assert user in users
    assert users == ["first", "second"]


def test_given_an_empty_prefix_when_opened_then_one_line_names_the_fix(
    bucket: str, capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["runs", "--store", bucket.replace("traces/", "traces/nothing-here-")])
    err = capsys.readouterr().err
    assert code == 2 and "no footprint store at" in err and err.count("\n") == 1


def test_given_a_writer_killed_with_a_live_segment_when_the_next_writer_starts_then_its_rows_reach_the_bucket(  # noqa: E501
    bucket: str,
) -> None:
    from recorder import ParquetSink, open_store

    writer = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("store_writer.py")), bucket, "killed",
         "1", "1000000", "100", "1000000", "--no-end"],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    assert writer.stdout is not None
    flushed = [writer.stdout.readline() for _ in range(2)]
    writer.send_signal(signal.SIGKILL)  # its run open, its segment live: nothing uploaded
    writer.wait(timeout=30)
    assert flushed[-1].split()[:2] == ["flushed", "killed-000"], flushed
    ParquetSink(bucket).shutdown()  # seals the killed writer's segment, then uploads it
    staging = Path(os.environ["FOOTPRINT_CACHE"]) / "staging"
    assert not [p for p in staging.rglob("*.parquet") if "/live/" not in p.as_posix()]
    with open_store(bucket) as store:
        (seen,) = store.rows("SELECT count(*) FROM events WHERE run_id = 'killed-000'")[0]
    assert seen > int(flushed[-1].split()[2])


def test_given_a_file_removed_from_the_bucket_when_mirrored_again_then_the_mirror_drops_it(
    bucket: str,
) -> None:
    from pyarrow import fs as pafs

    from lens._examples.support_desk import make_agent
    from recorder import ParquetSink, Recorder
    from recorder.store._remote import mirror

    with Recorder(sinks=[ParquetSink(bucket)]) as rec:
        make_agent(sink=rec).run_sync("Where is my parcel?", user="gone")
    local = mirror(bucket)
    (chain,) = list((local / "chain").glob("*.parquet"))
    fs, base = pafs.FileSystem.from_uri(bucket)
    fs.delete_file(f"{base}/chain/{chain.name}")
    assert mirror(bucket) == local and not chain.exists()
    assert list((local / "events").rglob("*.parquet"))  # the rest stays


def test_given_more_sealed_files_than_downloads_at_once_when_a_new_machine_reads_then_every_run_is_there(  # noqa: E501
    bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lens._examples.support_desk import make_agent
    from recorder import ParquetSink, Recorder, open_store
    from recorder.store import _remote

    users = [f"user-{k:02d}" for k in range(24)]
    for user in users:  # a writer each: sealed files of their own
        with Recorder(sinks=[ParquetSink(bucket)]) as rec:
            make_agent(sink=rec).run_sync("Where is my parcel?", user=user)
    monkeypatch.setenv("FOOTPRINT_CACHE", str(tmp_path / "new-machine"))
    local = _remote.mirror(bucket)
    assert len(list(local.glob("events/**/*.parquet"))) > _remote.DOWNLOADS
    with open_store(bucket) as store:
        assert [r[0] for r in store.rows("SELECT user_id FROM runs ORDER BY 1")] == users
    monkeypatch.setenv("FOOTPRINT_CACHE", str(tmp_path / "third-machine"))
    real, calls = _remote._download, []

    def failing(fs: object, key: str, target: Path) -> None:
        calls.append(key)
        if len(calls) == 5:
            raise OSError("connection reset by peer")
        real(fs, key, target)

    monkeypatch.setattr(_remote, "_download", failing)
    with pytest.raises(OSError, match="connection reset"):  # never a silent partial mirror
        _remote.mirror(bucket)
