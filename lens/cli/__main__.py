"""``python -m lens.cli``: the ``footprint`` command, as the console script runs it."""

import sys

from lens.cli._main import main

sys.exit(main())
