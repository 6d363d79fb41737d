"""The paged reads agree with the whole-run views: same iterations, blocks, heads, walk, custody."""

from __future__ import annotations

from pathlib import Path

import pytest

from footprint.events import Event
from lens.explain._custody import answer_custody
from lens.tui._model import build_run
from lens.tui._reader import ReaderClosed, RunReader, StoreGate
from lens.tui._rows import COLUMNS, EventRows
from lens.tui._skills import read_walk
from lens.tui._walk import entry_lines, skill_lines
from lens.tui._why import read_custody
from recorder import Store, open_store


@pytest.fixture
def opened(desk_store: tuple[Path, str]) -> tuple[Store, RunReader, list[Event]]:
    path, run_id = desk_store
    store = open_store(path)
    return store, RunReader(StoreGate(store), run_id), store.events(run_id)


def test_given_the_desk_run_when_read_by_iteration_then_each_matches_the_whole_run_view(
    opened: tuple[Store, RunReader, list[Event]],
) -> None:
    _, reader, events = opened
    whole = build_run(reader.run_id, events)
    outline = reader.outline()
    assert list(outline.numbers) == [it.number for it in whole.iterations]
    heads = reader.heads(outline.numbers[0], outline.numbers[-1])
    for i, expected in enumerate(whole.iterations):
        got = reader.iteration(outline.numbers[i], outline.first_seq[i], outline.last_seq[i])
        assert got == expected, f"iteration {expected.number} differs when read alone"
        head = heads[expected.number]
        assert head.tools == expected.tools and head.refusals == expected.refusals
        assert head.tokens == expected.tokens
        move = expected.move
        assert head.moved == (move is not None)
        if move is not None:
            assert (head.from_skill, head.to_skill, head.by) == (move.from_skill, move.to, move.by)


def test_given_the_desk_run_when_the_walk_is_read_by_page_then_it_matches_the_whole_walk(
    opened: tuple[Store, RunReader, list[Event]],
) -> None:
    _, reader, events = opened
    walk = read_walk(reader)
    paged = list(walk.before)
    for e in reader.events_at(walk.seqs):
        paged += entry_lines(e)
    assert [*paged, walk.after] == skill_lines(events)


def test_given_the_desk_run_when_custody_is_read_by_need_then_it_matches_the_whole_run(
    opened: tuple[Store, RunReader, list[Event]],
) -> None:
    _, reader, events = opened
    assert read_custody(reader) == answer_custody(events)


def test_given_the_index_when_rows_are_fetched_then_lines_match_the_rows_read_whole(
    opened: tuple[Store, RunReader, list[Event]],
) -> None:
    store, reader, events = opened
    whole = EventRows(store.rows(f"SELECT {COLUMNS} FROM events WHERE run_id = ? ORDER BY seq",
                                 [reader.run_id]))
    paged = EventRows.from_index(*reader.index())
    assert paged.total == whole.total == len(events)
    assert paged.line(0) is None, "nothing is fetched before it is asked for"
    paged.fill(reader.rows_at(COLUMNS, paged.missing(0, len(paged) - 1)))
    assert [paged.line(i) for i in range(len(paged))] == [whole.line(i) for i in range(len(whole))]
    skills = paged.filtered("skill.rej")
    assert [skills.type_of(i) for i in range(len(skills))] == ["skill.rejected"] * 2
    assert len(paged) == whole.total, "a filtered view leaves the first one whole"


def test_given_a_closed_gate_when_a_read_waits_then_it_gives_up(
    opened: tuple[Store, RunReader, list[Event]],
) -> None:
    _, reader, _ = opened
    reader.gate.close()
    with pytest.raises(ReaderClosed):
        reader.outline()
