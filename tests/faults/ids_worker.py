"""Run default agents concurrently in this process and print each run id (one a line).

Used by test_faults_ids.py as one of several real processes: ``python ids_worker.py N``.
Half the agents keep the system clock, half share one frozen ``StepClock`` start, so
only the ids' random bits can tell them apart.
"""

from __future__ import annotations

import asyncio
import sys

from footprint import Agent, FunctionModel, StepClock
from footprint.providers import LLMRequest

GATHERED = 25  # agents per asyncio.gather


def _reply(request: LLMRequest) -> str:
    return "ok"


async def _batch(size: int, step_clock: bool) -> list[str]:
    agents = [Agent(provider=FunctionModel(_reply), model="m",
                    clock=StepClock() if step_clock else None) for _ in range(size)]
    results = await asyncio.gather(*(a.run("hello") for a in agents))
    return [r.run_id for r in results]


async def _all(count: int) -> list[str]:
    ids: list[str] = []
    while len(ids) < count:
        ids += await _batch(min(GATHERED, count - len(ids)), step_clock=len(ids) % 2 == 0)
    return ids


if __name__ == "__main__":
    print("\n".join(asyncio.run(_all(int(sys.argv[1])))))
