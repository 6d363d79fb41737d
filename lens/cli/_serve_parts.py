"""What both sides of ``footprint lens --serve`` share: the screens a link may name, the
session's command, the token check, run resolution (``_serve`` parses and checks the
options; ``_serve_app`` is the aiohttp server)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from footprint._errors import ConfigError

__all__ = ["COOKIE", "SCREENS", "check_token", "quiet_logging", "resolve", "resolve_async",
           "session_command"]

SCREENS = ("timeline", "decisions", "skills", "why", "sql")
COOKIE = "footprint_lens_token"
_RUN_REF = re.compile(r"[0-9A-Za-z._:-]{1,128}")


def session_command(root: Path, run: str | None, view: str, *, follow: bool = False,
                    agent: str | None = None) -> str:
    """The shell command of one browser session: ``footprint lens`` on ``run`` and ``view``
    (with the agent its why screen re-runs, when one was given)."""
    import shlex

    argv = [sys.executable, "-m", "lens.cli", "lens", "--store", str(root), "--view", view]
    options = [*(["--follow"] if follow else []), *(["--agent", agent] if agent else [])]
    return shlex.join([*argv, *options, *([run] if run else [])])


def check_token(expected: str | None, given: str | None) -> bool:
    """Whether a request may go on: no token needed, or the right one given."""
    import hmac

    return expected is None or (given is not None and hmac.compare_digest(expected, given))


def quiet_logging() -> None:
    """textual-serve logs every request at INFO; the lens server says only what fails."""
    import logging

    logging.getLogger("textual-serve").setLevel(logging.WARNING)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.basicConfig(level=logging.WARNING, format="footprint lens: %(message)s")


def resolve(root: Path, run: str) -> str:
    """The full id of run ``run`` (an id, a unique prefix or ``last``) in the store."""
    from recorder import open_store

    if not _RUN_REF.fullmatch(run):
        raise ConfigError(f"{run[:40]!r} is not a run id")
    with open_store(root) as store:
        return store.resolve_run(run)


async def resolve_async(root: Path, run: str) -> str:
    """:func:`resolve` on a thread, off the server's loop."""
    import asyncio

    return await asyncio.to_thread(resolve, root, run)
