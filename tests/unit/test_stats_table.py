"""``footprint stats``'s table printed without ``rich`` when it is plain text: the same
characters ``rich`` draws for it, and ``rich`` itself for anything else."""

from __future__ import annotations

import io
import sys

import pytest
from rich.console import Console
from rich.table import Table

from lens.cli._stats import _plain

HEADS = ["bucket", "group", "runs", "errors", "p50 ms", "p90 ms", "p99 ms", "tokens",
         "tok/run", "decisions", "cost"]
PLAIN_TABLES = [
    (HEADS[:1] + HEADS[2:], [["2026-03-08", "1,440", "4.7%", "0.025", "0.025", "0.025",
                              "535,680", "372", "4,320", "— +1440 unpriced"],
                             ["2026-03-09", "14", "0.0%", "1,000", "—", "3.5",
                              "7", "0", "12", "$0.0282"]]),
    (HEADS, [["2026-01-01", "[beta]", "1", "0.0%", "100", "100", "100", "15", "15", "2",
              "$0.0050"],
             ["2026-01-01", "—", "3", "33.3%", "200", "280", "298", "45", "15", "7", "—"]]),
    (HEADS[:1] + HEADS[2:10], [["2026-01-02 12:00", "1", "0.0%", "1,000", "1,000", "1,000",
                                "7", "7", "1"]]),
]


def _rich(heads: list[str], cells: list[list[str]]) -> str:
    view = Table(box=None, header_style="bold", pad_edge=False)
    for head in heads:
        view.add_column(head, justify="left" if head in ("bucket", "group") else "right")
    for row in cells:
        view.add_row(*row)
    out = io.StringIO()
    Console(file=out, width=100, highlight=False, markup=False).print(view)
    return out.getvalue()


@pytest.fixture(autouse=True)
def _piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # a pipe, not a terminal
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("heads", "cells"), PLAIN_TABLES)
def test_given_a_plain_table_when_printed_without_rich_then_it_is_what_rich_draws(
    heads: list[str], cells: list[list[str]],
) -> None:
    assert _plain(heads, cells) + "\n" == _rich(heads, cells)  # type: ignore[operator]


@pytest.mark.parametrize("group", ["β-release", "two  spaces", " padded", "x" * 40])
def test_given_wide_characters_odd_spacing_or_no_room_when_printed_then_rich_draws_it(
    group: str,
) -> None:
    heads, cells = PLAIN_TABLES[1]
    assert _plain(heads, [[c if c != "[beta]" else group for c in row] for row in cells]) is None


def test_given_a_terminal_or_forced_colour_when_printed_then_rich_draws_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heads, cells = PLAIN_TABLES[0]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert _plain(heads, cells) is None
