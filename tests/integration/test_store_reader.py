"""``StoreReader``: paged, filtered, columnar reads agree with the events that were recorded."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from store_scale import T0, run_events, run_id_of, write_many_runs

from footprint._errors import ConfigError
from footprint.events import ContextEvaluated, Event, LLMEnd
from recorder import EventQuery, Store, StoreReader, open_store

RUNS, ITERATIONS = 4, 60


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("reader") / "store"
    write_many_runs(root, RUNS, iterations=ITERATIONS, together=2)
    return open_store(root)


def _recorded(n: int) -> list[Event]:
    return list(run_events(n, ITERATIONS, start_ns=T0 + n * 60 * 10**9))


def test_given_a_run_when_paged_forward_then_the_pages_are_the_recorded_events(
    store: Store,
) -> None:
    reader, run = StoreReader(store), run_id_of(1)
    got: list[Event] = []
    after: int | None = None
    while True:
        page = reader.page(EventQuery(run_id=run), after_seq=after, limit=97)
        if page.num_rows == 0:
            break
        got += reader.decode(page)
        after = got[-1].seq
    assert got == _recorded(1)


def test_given_a_run_when_paged_backward_then_the_last_rows_come_in_seq_order(
    store: Store,
) -> None:
    reader, run = StoreReader(store), run_id_of(2)
    page = reader.page(EventQuery(run_id=run), before_seq=10**9, limit=5)
    assert reader.decode(page) == _recorded(2)[-5:]
    earlier = reader.page(EventQuery(run_id=run), before_seq=page["seq"][0].as_py(), limit=3)
    assert reader.decode(earlier) == _recorded(2)[-8:-5]


FILTERS: list[tuple[dict[str, object], Callable[[Event], bool]]] = [
    ({"types": ("llm.end",)}, lambda e: e.type == "llm.end"),
    ({"types": ("tool.", "run.start")}, lambda e: e.type.startswith("tool.")
     or e.type == "run.start"),
    ({"iterations": (3, 5)}, lambda e: 3 <= e.iteration <= 5),
    ({"seqs": (10, 30)}, lambda e: 10 <= e.seq <= 30),
    ({"skill": "skill-2"}, lambda e: isinstance(e, ContextEvaluated) and e.cursor_move
     is not None and "skill-2" in (e.cursor_move.to, e.cursor_move.from_skill)),
    ({"injection": "skill-4"}, lambda e: getattr(e, "injection_id", None) == "skill-4"),
    ({"tool": "lookup"}, lambda e: getattr(e, "tool_name", None) == "lookup"),
]


@pytest.mark.parametrize(("kwargs", "keep"), FILTERS)
def test_given_a_filter_when_streamed_then_exactly_the_matching_events_in_seq_order(
    store: Store, kwargs: dict[str, object], keep: Callable[[Event], bool]
) -> None:
    reader = StoreReader(store)
    query = EventQuery(run_id=run_id_of(3), **kwargs)  # type: ignore[arg-type]
    expected = [e for e in _recorded(3) if keep(e)]
    assert list(reader.events(query, window=50)) == expected
    assert reader.count(query) == len(expected)


@given(lo=st.integers(0, 500), width=st.integers(0, 500), limit=st.integers(1, 64),
       prefix=st.sampled_from(["", "tool.", "llm.", "iteration.", "context."]))
def test_given_any_seq_range_and_type_when_paged_then_it_matches_a_filter_in_python(
    store: Store, lo: int, width: int, limit: int, prefix: str
) -> None:
    reader = StoreReader(store)
    query = EventQuery(run_id=run_id_of(0), seqs=(lo, lo + width),
                       types=(prefix,) if prefix else ())
    expected = [e for e in _recorded(0)
                if lo <= e.seq <= lo + width and e.type.startswith(prefix)][:limit]
    assert reader.decode(reader.page(query, limit=limit)) == expected


def test_given_columns_when_batched_then_only_those_columns_come_back(store: Store) -> None:
    reader = StoreReader(store)
    batches = list(reader.batches(EventQuery(run_id=run_id_of(0)), columns=("type",),
                                  window=64))
    assert len(batches) > 1 and all(b.schema.names == ["type"] for b in batches)
    assert [t for b in batches for t in b.column(0).to_pylist()] == [
        e.type for e in _recorded(0)]


def test_given_a_run_when_summarized_then_iterations_counts_and_tokens_match(
    store: Store,
) -> None:
    events = _recorded(1)
    outline = StoreReader(store).summary(run_id_of(1))
    assert outline.events == len(events) and outline.last_seq == events[-1].seq
    assert outline.status == "complete"
    spans = {s["iteration"]: (s["first_seq"], s["last_seq"], s["events"])
             for s in outline.iterations.to_pylist()}
    for it in (0, 1, ITERATIONS):
        seqs = [e.seq for e in events if e.iteration == it]
        assert spans[it] == (min(seqs), max(seqs), len(seqs))
    assert dict(outline.type_counts)["llm.end"] == ITERATIONS
    assert outline.input_tokens == sum(e.input_tokens for e in events if isinstance(e, LLMEnd))
    found = outline.iteration_of(events[20].seq)
    assert found is not None and found.iteration == events[20].iteration
    assert outline.iteration_of(10**9) is None and outline.span(-1).iteration == ITERATIONS


def test_given_an_unknown_run_when_summarized_then_it_is_empty_and_pages_are_empty(
    store: Store,
) -> None:
    reader = StoreReader(store)
    assert reader.summary("no-such-run").events == 0
    assert reader.page(EventQuery(run_id="no-such-run")).num_rows == 0


@pytest.mark.parametrize("bad", [
    {"run_id": ""}, {"run_id": "r", "types": "llm.end"}, {"run_id": "r", "seqs": (5, 1)},
    {"run_id": "r", "iterations": (1.0, 2)}, {"run_id": "r", "skill": ""},
])
def test_given_a_bad_query_when_built_then_a_one_line_config_error(
    bad: dict[str, object],
) -> None:
    with pytest.raises(ConfigError) as caught:
        EventQuery(**bad)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def test_given_bad_paging_arguments_when_paged_then_config_errors(store: Store) -> None:
    reader, query = StoreReader(store), EventQuery(run_id=run_id_of(0))
    for kwargs in ({"limit": 0}, {"after_seq": 1, "before_seq": 5}, {"columns": ("nope",)}):
        with pytest.raises(ConfigError):
            reader.page(query, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        StoreReader(Path("."))  # type: ignore[arg-type]


def _view_names(store: Store) -> set[str]:
    return {r[0] for r in store.con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}


@pytest.fixture
def one_run(tmp_path: Path) -> Iterator[tuple[Path, Store]]:
    root = tmp_path / "store"
    write_many_runs(root, 1, iterations=3, together=1)
    opened = open_store(root)
    yield root, opened
    opened.close()


def test_given_a_fresh_store_when_only_raw_rows_are_read_then_no_public_view_is_bound(
    one_run: tuple[Path, Store],
) -> None:
    _, fresh = one_run
    fresh.rows("SELECT count(*) FROM _events_all")
    fresh.resolve_run(run_id_of(0))
    assert "llm_calls" not in _view_names(fresh)
    (count,) = fresh.rows("SELECT count(*) FROM llm_calls WHERE run_id = ?", [run_id_of(0)])
    assert count[0] == 3
    assert "llm_calls" in _view_names(fresh)


def test_given_public_views_when_the_store_refreshes_then_they_see_the_new_runs(
    one_run: tuple[Path, Store],
) -> None:
    root, fresh = one_run
    assert fresh.rows("SELECT count(DISTINCT run_id) FROM runs") == [(1,)]
    write_many_runs(root, 2, iterations=3, together=1, start=1)
    fresh.refresh()
    assert fresh.rows("SELECT count(DISTINCT run_id) FROM runs") == [(3,)]


def test_given_many_request_blobs_when_sealed_then_row_groups_stay_small_and_verify_holds(
    tmp_path: Path,
) -> None:
    """A reader decodes a row group's texts together: 3,000 requests of 4 KiB are sealed in
    row groups of at most BLOB_ROW_GROUP rows (they were one group of every blob), and
    verify streams them back."""
    import pyarrow.parquet as pq
    from store_scale import write_requests_run

    from recorder import open_store, verify_run
    from recorder.write._segment import BLOB_ROW_GROUP

    root = tmp_path / "store"
    run = write_requests_run(root, 3_000, 4_096)
    files = sorted((root / "blobs").rglob("*.parquet"))
    groups = [pq.ParquetFile(f).metadata.row_group(i).num_rows
              for f in files for i in range(pq.ParquetFile(f).metadata.num_row_groups)]
    assert sum(groups) == 3_000 and max(groups) <= BLOB_ROW_GROUP
    with open_store(root) as store:
        result = verify_run(store, run)
    assert result.valid and result.records == 3_002
