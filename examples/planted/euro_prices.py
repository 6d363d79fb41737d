"""Planted bug — a stale price in a German shop, beside a steering that only reformats amounts.

The answer is written the German way (``1.620,00 €``). The price list (a
fact) was updated to 1.490,00 €, but an old supplier note still lists the
machine at 1.620,00 €, and the model quotes the note when it has one.
A steering asks for amounts in the local format, so without it the same
price comes out as ``€1,620.00``: a different string, the same fact.

* Culprit: the fact ``supplier-note-2024``. Without it the answer is
  "Die Siebträgermaschine S9 kostet 1.490,00 € …".
* Decoys: the steering ``amount-format`` (removing it only re-writes the
  amount: ``1.620,00 €`` → ``€1,620.00``, the same 1620 EUR — wording, never
  a cause); ``shop-voice`` is style only; the true ``price-list`` is
  innocent (without it the note still sets the price).

Record a run, then explain it::

    python examples/planted/euro_prices.py
    footprint why last --agent examples/planted/euro_prices.py:make_agent
"""

from __future__ import annotations

import re

from footprint import (
    Agent,
    EventSink,
    FunctionModel,
    RunResult,
    StepClock,
    define_fact,
    define_steering,
)
from footprint.agent import Clock
from footprint.providers import LLMRequest, Reply

__all__ = ["CULPRIT", "INNOCENT", "MESSAGE", "converse", "main", "make_agent", "model"]

MESSAGE = "Was kostet die Siebträgermaschine S9?"
CULPRIT = "supplier-note-2024"
INNOCENT = ("amount-format", "shop-voice", "price-list")

_NOTE = re.compile(r"Lieferantennotiz 2024: S9 (\d+)")
_LIST = re.compile(r"Preisliste: S9 (\d+)")


def _amount(euros: int, local: bool) -> str:
    """``1.620,00 €`` the German way, ``€1,620.00`` otherwise."""
    if local:
        return f"{euros:,}".replace(",", ".") + ",00 €"
    return f"€{euros:,}.00"


def model(request: LLMRequest) -> Reply:
    """Quote the supplier note's price when there is one, else the price list's."""
    found = _NOTE.search(request.system) or _LIST.search(request.system)
    if found is None:
        return "Zu diesem Gerät habe ich leider keinen Preis."
    local = "deutschen Format" in request.system
    return f"Die Siebträgermaschine S9 kostet {_amount(int(found.group(1)), local)}."


def make_agent(*, sink: EventSink | None = None, seed: int = 0,
               clock: Clock | None = None) -> Agent:
    """The shop desk with the stale supplier note planted."""
    return Agent(
        provider=FunctionModel(model, name="planted-euro"), model="shop-small",
        system_prompt="Du beantwortest Preisfragen für den Kaffeeladen Bohne & Co.",
        injections=[
            define_steering("shop-voice", "Antworte in einem Satz und nenne das Gerät."),
            define_steering("amount-format", "Schreibe Beträge im deutschen Format "
                            "(1.234,56 €)."),
            define_fact("price-list", "Preisliste: S9 1490 Euro, Mühle M2 289 Euro."),
            define_fact(CULPRIT, "Lieferantennotiz 2024: S9 1620 Euro (Einkaufsliste, alt)."),
        ],
        sink=sink, clock=clock if clock is not None else StepClock(), seed=seed,
        name="planted-euro-prices")


def converse(agent: Agent) -> RunResult:
    """The recorded conversation: one question."""
    return agent.run_sync(MESSAGE)


def main(argv: list[str] | None = None) -> int:
    """Record one conversation into the store (``argv[0]``, else the default store)."""
    from _record import record  # examples/planted/_record.py: the scripts' shared part

    return record(make_agent, converse, __file__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
