"""The showcase support desk, runnable: ``python examples/support_desk.py``.

The agent itself ships inside the distribution (``lens._examples.support_desk``)
so that ``footprint demo`` works after a plain install; this file only
re-exports it and runs it.
"""

from lens._examples.support_desk import DEFAULT_MESSAGE, main, make_agent

__all__ = ["DEFAULT_MESSAGE", "main", "make_agent"]

if __name__ == "__main__":
    raise SystemExit(main())
