"""The ``footprint`` command: the parser (``_main``) and one module per subcommand.

Each ``_<command>.py`` holds ``run(args) -> int`` and is imported only when its
command runs, so ``footprint --help`` stays fast. ``_exits`` (exit codes and
the one-line error guard), ``_common`` (opening the store, resolving RUN,
tables) and ``_progress`` (rich progress bars) serve every command.

May import: ``footprint``, ``recorder`` and every other ``lens`` subpackage
(``playback``, ``explain``, ``tui``); nothing imports ``lens.cli`` back but the
console script, ``python -m lens.cli`` and the top-level examples.
"""

from lens.cli._main import build_parser, main

__all__ = ["build_parser", "main"]
