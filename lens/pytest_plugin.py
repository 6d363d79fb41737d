"""The pytest plugin (entry point ``pytest11``): recorded runs as regression tests.

The ``footprint_replay`` fixture offers

- ``assert_replays(run_or_path, agent_factory)`` — the recorded run must
  replay decision for decision; a failure shows the first divergent decision
  and the diff of the model request, as ``footprint replay`` prints them;
- ``assert_decisions(recording, agent_factory)`` — the decision-level
  snapshot (routing, cursor moves, injections per slot, tool calls, answer)
  must match the folder's ``decisions.json``; ``pytest --footprint-update``
  rewrites it instead.

``footprint snapshot RUN --agent MODULE:FACTORY -o tests/recordings/``
writes a recording folder and a test module using the fixture.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from footprint._errors import FootprintError

__all__ = ["FootprintReplay", "footprint_replay", "pytest_addoption"]

_UPDATE = "--footprint-update"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("footprint", "recorded agent runs as regression tests")
    group.addoption(_UPDATE, action="store_true", default=False,
                    help="rewrite the decision snapshots (decisions.json) of recordings "
                         "whose decisions changed, instead of failing")


class FootprintReplay:
    """What the ``footprint_replay`` fixture gives a test."""

    def __init__(self, *, update: bool) -> None:
        self.update = update

    def assert_replays(self, run_or_path: str | os.PathLike[str], agent_factory: Any, *,
                       store: Any = None) -> Any:
        """Fail with the replay report unless the run replays decision for decision."""
        from lens._api import assert_replays

        __tracebackhide__ = True
        try:
            return assert_replays(run_or_path, agent_factory, store=store)
        except AssertionError as exc:
            report = f"recorded run diverged on replay:\n{exc}"
        except FootprintError as exc:
            report = str(exc)
        pytest.fail(report, pytrace=False)

    def assert_decisions(self, recording: str | os.PathLike[str], agent_factory: Any) -> str:
        """Fail with a unified diff unless the decisions match the snapshot (or update it)."""
        from lens._api import assert_decisions

        __tracebackhide__ = True
        try:
            return assert_decisions(recording, agent_factory, update=self.update)
        except (AssertionError, FootprintError) as exc:
            report = str(exc)
        pytest.fail(report, pytrace=False)


@pytest.fixture
def footprint_replay(request: pytest.FixtureRequest) -> FootprintReplay:
    """Assertions over recorded runs (see :class:`FootprintReplay`)."""
    return FootprintReplay(update=bool(request.config.getoption(_UPDATE)))
