"""``python -m footprint``: the ``footprint`` command line.

The engine never imports the lens (the layering rule), so this module does
not either: it asks the installed distribution's metadata for the command it
declares as its ``footprint`` console script and runs that, exactly as the
``footprint`` executable would.
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points

__all__ = ["main"]

DISTRIBUTION = "footprint-lens"


def _ours(ep: EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", "") or ""
    return name.replace("_", "-").lower() == DISTRIBUTION


def main() -> int:
    found = [ep for ep in entry_points(group="console_scripts", name="footprint") if _ours(ep)]
    if not found:
        print(f"footprint: the command line is not installed; install the {DISTRIBUTION} "
              "distribution (from a checkout: pip install -e .)", file=sys.stderr)
        return 2
    command = found[0].load()
    code = command()
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
