"""``footprint feedback RUN --name helpful --value 0 [--key-file FILE]``: a score on a run.

Appended to the store as the run's ``feedback.recorded`` event, chained
after its end (``recorder.feedback``; on a keyed run with ``--key-file``
or ``$FOOTPRINT_CHAIN_KEY``). Exit 0 written, 2 bad input (an
unknown run, no value and no label, a run not ended or whose chain is broken,
a keyed run without its key).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from lens.cli._common import key_file_option

__all__ = ["add_parser", "run"]


def _number(text: str) -> float:
    """An argparse ``type``: a finite number, else a one-line usage error."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:24]!r} is not a number; write e.g. 0, 1 "
                                         "or 0.75") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:24]!r} is not a finite number; write e.g. 0")
    return value


def add_parser(sub: Any) -> None:
    """Register ``feedback`` on the CLI's subparsers."""
    p = sub.add_parser("feedback", help="attach a score or a user's feedback to a recorded run")
    p.add_argument("run", metavar="RUN", help="a run id, a unique prefix, or 'last'")
    p.add_argument("--name", required=True, help="the score's name, e.g. helpful")
    p.add_argument("--value", type=_number, default=None, metavar="NUMBER",
                   help="a number, e.g. 0 (thumbs down) or 1 (thumbs up)")
    p.add_argument("--label", default=None, help="a category, e.g. wrong-refund")
    p.add_argument("--comment", default=None, help="why, in the user's words")
    p.add_argument("--by", default=None, help="who gave it (a user id)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")
    key_file_option(p, "the feedback is chained with it")


def run(args: argparse.Namespace) -> int:
    """Write the feedback; 0 written."""
    from footprint._errors import ConfigError
    from lens.cli._common import chain_key_from, open_from
    from recorder import feedback

    if args.value is None and args.label is None:
        raise ConfigError(f"feedback {args.name!r} says nothing: give --value NUMBER or "
                          "--label TEXT (or both), e.g. --value 0")
    with open_from(args) as store:
        event = feedback(store, args.run, args.name, value=args.value, label=args.label,
                         comment=args.comment, by=args.by,
                         chain_key=chain_key_from(args.key_file))
    given = [f"value {event.value:g}"] if event.value is not None else []
    given += [f"label {event.label!r}"] if event.label is not None else []
    print(f"feedback {event.name!r} ({', '.join(given)}) recorded on run {event.run_id} "
          f"as seq {event.seq}")
    return 0
