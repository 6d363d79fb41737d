"""The lens TUI: a Textual app over a recorded (or still-running) store.

Importing this package imports Textual; the CLI imports it only inside
``footprint lens`` so ``footprint --help`` stays fast.

May import: ``footprint``, ``recorder``, ``lens.playback`` and ``lens.explain``;
never ``lens.cli`` or the public API module.
"""

from lens.tui.app import LensApp, View

__all__ = ["LensApp", "View"]
