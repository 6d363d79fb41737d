"""lens — replay, diff, why, the TUI and the command line.

``lens.why(store_or_events, run, agent=...)`` explains why a recorded run
answered what it did: every candidate on the answer's causal past, and —
with the agent that made it — counterfactual re-runs that may confirm a
cause at a stated confidence (see :class:`WhyReport`).
"""

from lens._why import why
from lens._why_report import WhyReport

__all__: list[str] = ["WhyReport", "why"]
