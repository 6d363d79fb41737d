"""Stores for the lens TUI tests, recorded by the deterministic support-desk agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import record_desk

from footprint.agent import SeededIds
from footprint.events import Event, ListSink
from lens._examples.support_desk import DEFAULT_SEED, make_agent


@pytest.fixture(scope="session")
def desk_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one complete support-desk run (StepClock, fixed seed): path, run id."""
    path = tmp_path_factory.mktemp("desk") / "store"
    return path, record_desk(path)


@pytest.fixture(scope="session")
def desk_events() -> list[Event]:
    """The same run's events, straight from the engine (no store)."""
    sink = ListSink()
    make_agent(sink=sink, ids=SeededIds(DEFAULT_SEED)).answer()
    return list(sink.events)  # type: ignore[arg-type]
