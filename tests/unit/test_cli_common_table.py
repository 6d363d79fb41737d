"""The CLI's plain table: fitted to a terminal's width, whole when piped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.cli._common import table

RUN = "0190dddd-0000-7000-8000-000000000001"


def test_given_a_wide_row_when_fitted_to_80_columns_then_every_line_fits_and_the_id_is_whole(
) -> None:
    text = table(["run", "status", "answer", "error"],
                 [[RUN, "complete", "a long answer " * 6, "llm#2 RunError: " + "x" * 60]],
                 width=48, fit=80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[2].startswith(RUN + "  ") and "…" in lines[2]


def test_given_no_fit_when_printed_then_cells_keep_their_clip_width() -> None:
    text = table(["run", "answer"], [[RUN, "y" * 100]], width=48, fit=None)
    assert "y" * 47 + "…" in text


@given(st.lists(st.text(min_size=0, max_size=80), min_size=3, max_size=3),
       st.integers(min_value=60, max_value=200))
def test_given_any_cells_when_fitted_then_no_line_is_wider_than_the_fit(
        cells: list[str], fit: int) -> None:
    text = table(["run", "b", "c", "d"], [[RUN, *cells]], width=48, fit=fit)
    assert all(len(line) <= fit for line in text.splitlines())
