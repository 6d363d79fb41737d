"""``footprint lens --serve``: the same lens in a browser, through ``textual-serve``.

Each browser session runs its own ``footprint lens`` process under Textual's
web driver (textual-serve's ``AppService``; ``--follow`` is passed on); no
second UI exists. Deep links
open a run and a screen: ``/run/<id>`` (its timeline) and ``/run/<id>/<screen>``
(``timeline``, ``decisions``, ``skills``, ``why``, ``sql``). The page's
websocket lives at the same path under ``/ws`` (textual-serve's script adds the
terminal size as the query), which is how the path reaches the session.

Every page and websocket needs the lens's token, on loopback too (another
web page or another local user must not read the store or re-run an agent):
``?token=…`` in the URL printed at start, then an HTTP-only, same-site cookie
the page sets. ``Host`` must name the bound address (a DNS-rebinding defence)
and a websocket's ``Origin`` must be the served page's. Loopback only by
default; another host needs ``--allow-remote``.
"""

from __future__ import annotations

import argparse
from typing import Any

from footprint._errors import ConfigError
from lens.cli._serve_parts import SCREENS, is_loopback

__all__ = ["add_serve_options", "is_loopback", "serve", "unserved"]


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """``--view`` and the ``--serve`` options of ``footprint lens``."""
    from lens.cli._common import count_arg

    p.add_argument("--view", choices=SCREENS, default="timeline",
                   help="the screen RUN opens on (default timeline)")
    p.add_argument("--serve", action="store_true",
                   help="serve the lens to a browser (textual-serve) instead of this terminal; "
                        "open the URL it prints (http://127.0.0.1:PORT/?token=…: every page "
                        "and websocket needs the token); deep links: /run/<id>/<screen>")
    p.add_argument("--host", default="127.0.0.1",
                   help="with --serve: the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=count_arg(1, 65535), default=8000,
                   help="with --serve: the port (default 8000)")
    p.add_argument("--allow-remote", action="store_true",
                   help="with --serve: allow a non-loopback --host (the token is then all "
                        "that guards the store; there is no TLS)")
    p.add_argument("--token", default=None,
                   help="with --serve: the token every page and websocket needs (default "
                        "$FOOTPRINT_LENS_TOKEN, else a new random one, printed in the URL)")


def unserved(args: argparse.Namespace) -> None:
    """Refuse the ``--serve`` options on a lens for this terminal (they would do nothing)."""
    given = [f"--{name.replace('_', '-')}" for name, plain in _SERVE_DEFAULTS
             if getattr(args, name) != plain]
    if given:
        raise ConfigError(f"{', '.join(given)} only apply with --serve; add --serve or drop "
                          f"{'them' if len(given) > 1 else 'it'}")


_SERVE_DEFAULTS = (("host", "127.0.0.1"), ("port", 8000), ("allow_remote", False),
                   ("token", None))


def _token(args: argparse.Namespace) -> str:
    """The token every page and websocket must carry: ``--token``, else
    ``$FOOTPRINT_LENS_TOKEN``, else a new random one (on loopback too)."""
    import os
    import re
    import secrets

    if not args.allow_remote and not is_loopback(args.host):
        raise ConfigError(
            f"--host {args.host!r} is not a loopback address, so anyone who reaches it "
            "could read the store; add --allow-remote (the token is then all that guards "
            "it) or use --host 127.0.0.1")
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
    where = f"http://{host}:{args.port}/?token={token}"
    print(f"footprint lens: serving {root} on {where} (Ctrl-C stops)", flush=True)
    server.serve()
    return 0


def _server_class() -> Any:
    """The server class, built on first use (aiohttp and textual-serve load only here)."""
    from lens.cli._serve_app import LensServer

    return LensServer
