"""What both sides of ``footprint lens --serve`` share: the screens a link may name, the
session's command, the token, ``Host`` and ``Origin`` checks, run resolution (``_serve``
parses and checks the options; ``_serve_app`` is the aiohttp server)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from footprint._errors import ConfigError

__all__ = ["SCREENS", "check_token", "cookie_name", "is_loopback", "loopback_hosts",
           "quiet_logging", "resolve", "resolve_async", "same_origin", "session_command"]

SCREENS = ("timeline", "decisions", "skills", "why", "sql")
_RUN_REF = re.compile(r"[0-9A-Za-z._:-]{1,128}")


def session_command(root: Path, run: str | None, view: str, *, follow: bool = False,
                    agent: str | None = None) -> str:
    """The shell command of one browser session: ``footprint lens`` on ``run`` and ``view``
    (with the agent its why screen re-runs, when one was given)."""
    import shlex

    argv = [sys.executable, "-m", "lens.cli", "lens", "--store", str(root), "--view", view]
    options = [*(["--follow"] if follow else []), *(["--agent", agent] if agent else [])]
    return shlex.join([*argv, *options, *([run] if run else [])])


def check_token(expected: str, given: str | None) -> bool:
    """Whether ``given`` is the lens's token (a constant-time compare)."""
    import hmac

    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cookie_name(port: int) -> str:
    """The token's cookie: one per port (a browser shares a host's cookies across its
    ports, so two lenses on one machine must not overwrite each other's)."""
    return f"footprint_lens_token_{port}"


def loopback_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` headers a lens bound to loopback ``host`` answers (lower case): this
    machine's names at ``port`` (a page under any other name, e.g. a DNS-rebound one, is
    refused). Port 80 also without the port, as browsers send it."""
    bound = f"[{host.strip('[]')}]" if ":" in host else host
    names = {"127.0.0.1", "localhost", "[::1]", bound.lower()}
    return frozenset({f"{n}:{port}" for n in names} | (names if port == 80 else set()))


def same_origin(origin: str | None, scheme: str, host: str) -> bool:
    """Whether a websocket's ``Origin`` header is the served page's own origin."""
    return origin is not None and origin.lower() == f"{scheme}://{host}".lower()


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
