"""Shared test configuration."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# The pytest plugin's own tests (tests/plugin) run pytest in a sandbox; pytest
# accepts pytest_plugins only in this top-level conftest.
pytest_plugins = ["pytester"]

# Redaction markers are keyed (recorder.write._redact_key): the tests' Redactors, and the
# subprocesses they start, share this key instead of making ~/.config/footprint/redact.key.
os.environ.setdefault("FOOTPRINT_REDACT_KEY", "footprint-tests-redaction-key-000")

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """CI's count of the documentation examples it ran (tests marked ``docs_example``: every
    Python block and shell session of the README and the site)."""
    counts = {outcome: sum(1 for r in terminalreporter.stats.get(outcome, ())
                           if (outcome == "skipped" or getattr(r, "when", "call") == "call")
                           and "docs_example" in getattr(r, "keywords", {}))
              for outcome in ("passed", "failed", "skipped")}
    if any(counts.values()):
        terminalreporter.write_line(
            f"documentation examples executed: {counts['passed'] + counts['failed']} "
            f"({counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['skipped']} skipped)")
