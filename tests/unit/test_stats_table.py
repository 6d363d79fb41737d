"""``footprint stats``'s table, printed to a pipe: what ``rich`` draws, every cell as text
(a group named ``[beta]`` is not markup), whatever the cells hold."""

from __future__ import annotations

import io
from datetime import datetime
from typing import Any

import pytest
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from lens.cli._stats import _print_table

HEADS = ["bucket", "group", "runs", "errors", "p50 ms", "p90 ms", "p99 ms", "tokens",
         "tok/run", "decisions", "cost"]


def _row(group: str | None, **over: Any) -> dict[str, Any]:
    row = {"bucket": datetime(2026, 1, 1), "group": group, "runs": 3, "error_rate": 1 / 3,
           "p50_ms": 200.0, "p90_ms": 280.0, "p99_ms": 298.0, "tokens": 45,
           "tokens_per_run": 15.0, "decisions": 7, "cost_usd": 0.005, "unpriced": 0}
    return {**row, **over}


def _rich(heads: list[str], cells: list[list[str]]) -> str:
    view = Table(box=None, header_style="bold", pad_edge=False)
    for head in heads:
        view.add_column(head, justify="left" if head in ("bucket", "group") else "right")
    for row in cells:
        view.add_row(*row)
    out = io.StringIO()
    wide = Console(width=10_000)
    natural = Measurement.get(wide, wide.options, view).maximum
    Console(file=out, width=max(100, natural), highlight=False, markup=False).print(view)
    return out.getvalue()


@pytest.mark.parametrize("group", ["[beta]", "β-release", "two  spaces", " padded", "x" * 40,
                                   "release-1.4", "a:b", "end ", "漢字"])
def test_given_any_group_name_when_printed_to_a_pipe_then_it_is_what_rich_draws_as_text(
    group: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    rows = [_row(group, runs=1, error_rate=0.0, p50_ms=100.0, p90_ms=100.0, p99_ms=100.0,
                 tokens=15, decisions=2), _row(None, cost_usd=None)]
    _print_table(rows, priced=True, grouped=True, by="day")
    cells = [["2026-01-01", group, "1", "0.0%", "100", "100", "100", "15", "15", "2",
              "$0.005"],
             ["2026-01-01", "—", "3", "33.3%", "200", "280", "298", "45", "15", "7", "—"]]
    printed = capsys.readouterr().out
    assert printed == _rich(HEADS, cells)
    assert group.strip() in printed  # as text, not markup, unwrapped


@pytest.mark.parametrize("group", [":smile:", "t\tab", "a::b"])
def test_given_a_group_rich_rewrites_when_printed_to_a_pipe_then_it_is_what_rich_draws(
    group: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    _print_table([_row(group)], priced=True, grouped=True, by="day")
    cells = [["2026-01-01", group, "3", "33.3%", "200", "280", "298", "45", "15", "7",
              "$0.005"]]
    assert capsys.readouterr().out == _rich(HEADS, cells)  # an emoji code, a tab expanded


def test_given_hourly_unpriced_rows_when_printed_then_the_hour_and_the_unpriced_count_show(
    capsys: pytest.CaptureFixture[str],
) -> None:
    row = _row(None, bucket=datetime(2026, 1, 2, 12), cost_usd=None, unpriced=1440)
    _print_table([row], priced=True, grouped=False, by="hour")
    heads = [h for h in HEADS if h != "group"]
    cells = [["2026-01-02 12:00", "3", "33.3%", "200", "280", "298", "45", "15", "7",
              "— +1440 unpriced"]]
    assert capsys.readouterr().out == _rich(heads, cells)


@pytest.mark.parametrize(("cost", "unpriced", "shown"), [
    (0.0000177, 0, "$0.0000177"), (0.000146, 2, "$0.000146 +2 unpriced"), (0.0, 0, "$0"),
    (1234.5, 0, "$1,234.50"), (None, 3, "— +3 unpriced")])
def test_given_a_bucket_cost_when_printed_then_it_reads_as_footprint_runs_prints_costs(
    cost: float | None, unpriced: int, shown: str, capsys: pytest.CaptureFixture[str],
) -> None:
    _print_table([_row(None, cost_usd=cost, unpriced=unpriced)], priced=True, grouped=False,
                 by="day")
    cells = [["2026-01-01", "3", "33.3%", "200", "280", "298", "45", "15", "7", shown]]
    assert capsys.readouterr().out == _rich([h for h in HEADS if h != "group"], cells)


def test_given_hourly_grouped_rows_wider_than_100_when_piped_then_each_row_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    rows = [_row(g, bucket=datetime(2026, 1, 1, 9), tokens=711_600, cost_usd=None,
                 unpriced=200) for g in ("release-1.3", "release-1.4")]
    _print_table(rows, priced=True, grouped=True, by="hour")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and len(lines[1]) > 100
    assert [line.split()[:3] for line in lines[1:]] == [
        ["2026-01-01", "09:00", g] for g in ("release-1.3", "release-1.4")]
    assert all(line.endswith("— +200 unpriced") for line in lines[1:])


def test_given_a_group_holding_escape_codes_when_printed_then_they_show_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _print_table([_row("1.4\x1b]0;pwned\x07\x1b[2J")], priced=True, grouped=True, by="day")
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed
    assert r"1.4\x1b]0;pwned\x07\x1b[2J" in printed
