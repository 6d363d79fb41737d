"""The support desk with a model that takes its time, so ``footprint why`` runs long
enough to be interrupted (its live baseline calls the model many times)."""

from __future__ import annotations

import time
from typing import Any

from footprint import FunctionModel
from footprint.providers import LLMRequest
from lens._examples.support_desk import PROVIDER_NAME, desk_brain
from lens._examples.support_desk import make_agent as make_desk


def _slow_brain(request: LLMRequest) -> Any:
    time.sleep(0.3)
    return desk_brain(request)


def make_agent(**options: Any) -> Any:
    """The desk, answering as it always does, 0.3 s per model call."""
    return make_desk(**options).variant(
        provider=FunctionModel(_slow_brain, name=PROVIDER_NAME))

