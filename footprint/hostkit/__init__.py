"""The host contract and its conformance kit: what any host owes the skill graph.

``SkillGraphHost`` states the five obligations; ``read_skill_descriptor``,
``list_skills_descriptor`` and ``skip_step_descriptor`` describe the tools the
graph needs; ``check_host(make_host)`` drives a host adapter through
scripted iterations and reports each obligation ``passed`` or its violation.
"""

from footprint.hostkit._contract import SkillGraphHost, SkillToolDescriptor
from footprint.hostkit._descriptors import (
    list_skills_descriptor,
    read_skill_descriptor,
    skip_step_descriptor,
)
from footprint.hostkit._kit import (
    OBLIGATIONS,
    HostReport,
    KitEvent,
    KitHost,
    KitIteration,
    ObligationResult,
    check_host,
    kit_graph,
)

__all__ = [
    "OBLIGATIONS",
    "HostReport",
    "KitEvent",
    "KitHost",
    "KitIteration",
    "ObligationResult",
    "SkillGraphHost",
    "SkillToolDescriptor",
    "check_host",
    "kit_graph",
    "list_skills_descriptor",
    "read_skill_descriptor",
    "skip_step_descriptor",
]
