"""Bundled example agents, shipped inside the distribution for ``footprint demo``.

``lens._examples.support_desk`` holds the showcase agent; the runnable
``examples/support_desk.py`` in the repository re-exports it.

May import: ``footprint`` only (an example is an agent like any user's).
"""

__all__: list[str] = []
