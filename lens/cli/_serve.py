"""``footprint lens --serve``: the same lens in a browser, through ``textual-serve``.

Each browser session runs its own ``footprint lens`` process under Textual's
web driver (textual-serve's ``AppService``; ``--follow`` is passed on); no
second UI exists. Deep links
open a run and a screen: ``/run/<id>`` (its timeline) and ``/run/<id>/<screen>``
(``timeline``, ``decisions``, ``skills``, ``why``, ``sql``). The page's
websocket lives at the same path under ``/ws`` (textual-serve's script adds the
terminal size as the query), which is how the path reaches the session.

Loopback only by default. Another host needs ``--allow-remote``, and then
every page and websocket needs the token (``?token=…`` in the printed URL; the
page hands it on to its websocket in a same-site cookie).
"""

from __future__ import annotations

import argparse
from typing import Any

from footprint._errors import ConfigError
from lens.cli._serve_parts import SCREENS

__all__ = ["add_serve_options", "is_loopback", "serve", "unserved"]


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """``--view`` and the ``--serve`` options of ``footprint lens``."""
    from lens.cli._common import count_arg

    p.add_argument("--view", choices=SCREENS, default="timeline",
                   help="the screen RUN opens on (default timeline)")
    p.add_argument("--serve", action="store_true",
                   help="serve the lens to a browser (textual-serve) instead of this terminal; "
                        "deep links: /run/<id>/<screen>")
    p.add_argument("--host", default="127.0.0.1",
                   help="with --serve: the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=count_arg(1, 65535), default=8000,
                   help="with --serve: the port (default 8000)")
    p.add_argument("--allow-remote", action="store_true",
                   help="with --serve: allow a non-loopback --host, and require a token of "
                        "every page and websocket")
    p.add_argument("--token", default=None,
                   help="with --allow-remote: the token (default $FOOTPRINT_LENS_TOKEN, else a "
                        "new random one, printed in the URL)")


def unserved(args: argparse.Namespace) -> None:
    """Refuse the ``--serve`` options on a lens for this terminal (they would do nothing)."""
    given = [f"--{name.replace('_', '-')}" for name, plain in _SERVE_DEFAULTS
             if getattr(args, name) != plain]
    if given:
        raise ConfigError(f"{', '.join(given)} only apply with --serve; add --serve or drop "
                          f"{'them' if len(given) > 1 else 'it'}")


_SERVE_DEFAULTS = (("host", "127.0.0.1"), ("port", 8000), ("allow_remote", False),
                   ("token", None))


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _token(args: argparse.Namespace) -> str | None:
    """The token every request must carry: ``None`` on loopback without ``--allow-remote``."""
    import os
    import re
    import secrets

    if not args.allow_remote:
        if args.token:
            raise ConfigError("--token is for --allow-remote; add --allow-remote or drop it")
        if not is_loopback(args.host):
            raise ConfigError(
                f"--host {args.host!r} is not a loopback address, so anyone who reaches it "
                "could read the store; add --allow-remote (a token is then required in the "
                "URL) or use --host 127.0.0.1")
        return None
    token: str = args.token or os.environ.get("FOOTPRINT_LENS_TOKEN") or \
        secrets.token_urlsafe(24)
    if len(token) < 16 or not re.fullmatch(r"[A-Za-z0-9_-]+", token):
        raise ConfigError(f"--token {token[:4]!r}…: use at least 16 letters, digits, '-' or "
                          "'_' (or leave it out for a random one)")
    return token


def serve(args: argparse.Namespace) -> int:
    """Check the host, open the store (a bad store fails here, in one line), then serve."""
    from recorder import open_store

    token = _token(args)
    with open_store(args.store) as store:
        root = store.root
        first = store.resolve_run(args.run) if args.run else None
    server = _server_class()(root=root, host=args.host, port=args.port, token=token,
                             first=first, view=args.view, follow=args.follow,
                             agent=args.agent)
    host = f"[{args.host}]" if ":" in args.host else args.host
    where = f"http://{host}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"footprint lens: serving {root} on {where} (Ctrl-C stops)", flush=True)
    server.serve()
    return 0


def _server_class() -> Any:
    """The server class, built on first use (aiohttp and textual-serve load only here)."""
    from lens.cli._serve_app import LensServer

    return LensServer
