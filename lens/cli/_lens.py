"""``footprint lens [RUN] [--agent REF | --provider REF | --base-url URL --model NAME]
[--follow] [--store DIR]``: the terminal UI over a store.

Textual is imported only inside :func:`run`, so ``footprint --help`` stays fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from footprint._errors import ConfigError
from lens.cli._serve import add_serve_options, unserved

__all__ = ["add_parser", "has_terminal", "run"]


def add_parser(sub: Any) -> None:
    """Register ``lens`` on the ``footprint`` sub-parsers."""
    p = sub.add_parser(
        "lens",
        help="browse runs in a terminal UI: timeline, decisions, skills, why, SQL",
        description="Open the lens on the store. Keys: enter opens a run; ←/→ or [/] step "
                    "iterations, 1/2/3 the System · Messages · Tools tabs; d decisions, s skills, "
                    "w why (a there runs the causal search, esc cancels it), : SQL, "
                    "t timeline, r runs, T trends (from the runs), esc back, q quit.",
    )
    p.add_argument("run", metavar="RUN", nargs="?", default=None,
                   help="open this run's timeline: a run id, a unique prefix, or 'last'")
    p.add_argument("--agent", metavar="FILE.py:FACTORY", default=None,
                   help="the agent the why screen re-runs for its causal search (key a), as "
                        "FILE.py:FACTORY or module:factory; default: the Agent(factory=...) "
                        "the run recorded")
    p.add_argument("--provider", metavar="FILE.py:FACTORY", default=None,
                   help="the why screen's causal search re-sends the recorded request through "
                        "this provider (a factory returning one) instead of re-running an "
                        "agent: the search of a run taken in from another framework's trace")
    p.add_argument("--base-url", metavar="URL", default=None,
                   help="re-send through this OpenAI-compatible server instead (with --model)")
    p.add_argument("--model", metavar="NAME", default=None,
                   help="the model name to re-send to (default: the recorded one)")
    p.add_argument("--follow", action="store_true",
                   help="re-read the store every second, for a run still being written")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")
    add_serve_options(p)


def has_terminal() -> bool:
    """Whether the UI has somewhere to draw: stdin and stdout a terminal, or a driver
    Textual was handed instead (``TEXTUAL_DRIVER``: textual-serve's web driver, for a
    browser session of ``footprint lens --serve``). Without either it would spin, drawing
    to nobody."""
    import os
    import sys

    return bool(os.environ.get("TEXTUAL_DRIVER")) or (sys.stdin.isatty() and sys.stdout.isatty())


def run(args: argparse.Namespace) -> int:
    """Open the store (bad store or RUN fail here, before the screen is taken), then the app."""
    if args.serve:
        from lens.cli._serve import serve

        if args.provider or args.base_url or args.model:
            raise ConfigError("--provider, --base-url and --model are not passed on to the "
                              "browser sessions of --serve; open `footprint lens` in a "
                              "terminal with them, or use `footprint why RUN --resend`")

        return serve(args)
    unserved(args)
    try:
        from lens.tui import LensApp
    except ImportError as exc:  # textual is a UI extra, not a core dependency
        raise ConfigError(
            f"the lens needs the 'textual' package ({exc}); install it into this "
            "environment (pip install textual) and run `footprint lens` again"
        ) from exc
    from lens.tui._state import resend_of

    app = LensApp(args.store, run=args.run, follow=args.follow, view=args.view,
                  agent=args.agent, resend=resend_of(args.provider, args.base_url, args.model))
    if not has_terminal():
        raise ConfigError("footprint lens needs a terminal (stdin or stdout is not one); run "
                          "it in a terminal, or use `footprint runs`, `show` or `sql` in scripts")
    app.run()
    return app.return_code or 0
