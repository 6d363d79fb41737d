"""The lens against the store's faults: a file found damaged by a read or a ``--follow``
refresh is named in a notice (once), and a refresh while the SQL console's query runs
leaves that query whole."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
from textual.pilot import Pilot
from textual.widgets import Input, Static
from tui_support import settle, write_big_run

from footprint.events import RunEnd, RunStart
from lens.tui import LensApp
from lens.tui._sql import SqlScreen
from recorder import ParquetSink, Recorder

T0 = 1_700_000_000_000_000_000
_SLOW = "SELECT sum(length(a.payload || b.payload)) AS n FROM events a, events b"


def _record(root: Path, run_id: str) -> None:
    with Recorder([ParquetSink(root)]) as rec:
        rec.emit(RunStart(run_id=run_id, seq=0, ts=T0, user_message="q"))
        rec.emit(RunEnd(run_id=run_id, seq=1, ts=T0 + 1, final_content="a"))


async def _until(pilot: Pilot[None], check: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        await pilot.pause(0.1)
    return False


def _notices(app: LensApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_given_a_following_lens_when_a_new_file_is_damaged_then_a_notice_names_it_once(
    tmp_path: Path,
) -> None:
    _record(tmp_path, "run-a")
    app = LensApp(tmp_path, follow=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert _notices(app) == []
        before = set(tmp_path.rglob("*.parquet"))
        _record(tmp_path, "run-b")
        (damaged,) = [p for p in tmp_path.glob("events/*/*.parquet") if p not in before]
        damaged.write_bytes(b"not parquet" * 8)
        assert await _until(pilot, lambda: any(str(damaged) in n for n in _notices(app)))
        await pilot.pause(2.5)  # more refreshes: named once
        named = [n for n in _notices(app) if str(damaged) in n]
        assert len(named) == 1 and "doctor --quarantine" in named[0]


async def test_given_a_file_damaged_inside_when_the_lens_reads_it_then_a_notice_names_it(
    tmp_path: Path,
) -> None:
    _record(tmp_path, "run-a")
    _record(tmp_path, "run-b")
    path = sorted(tmp_path.glob("events/*/*.parquet"))[0]
    meta = pq.read_metadata(path)  # garbage over the payloads' first page; the footer intact
    column = meta.row_group(0).column(meta.schema.to_arrow_schema().names.index("payload"))
    data = bytearray(path.read_bytes())
    data[column.data_page_offset:column.data_page_offset + 24] = b"\xa5" * 24
    path.write_bytes(bytes(data))
    app = LensApp(tmp_path)  # not following: the runs list's first read meets it
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert await _until(pilot, lambda: any(str(path) in n for n in _notices(app)), 10)
        assert len([n for n in _notices(app) if str(path) in n]) == 1


async def test_given_a_following_lens_when_a_refresh_comes_during_a_console_query_then_it_completes(
    tmp_path: Path,
) -> None:
    write_big_run(tmp_path, 3000)
    app = LensApp(tmp_path, follow=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.action_sql()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SqlScreen)
        screen.query_one(Input).value = _SLOW
        await pilot.press("enter")
        status = screen.query_one("#status", Static)
        for _ in range(3):  # refreshes while it runs (the timer's, and these)
            await pilot.pause(0.3)
            app.poll()
        assert await _until(pilot, lambda: "running" not in str(status.render()), 120)
        assert str(status.render()) == "1 rows"
        assert app.state.store.damaged == {}
        assert not [n for n in _notices(app) if "damaged" in n]
