"""The skill graph: declaration, compilation, the cursor, reachability, the gate, effects,
turn routing — plus the leaf (matchers, guards, tier-2 routing) and the periphery
(check-up, Mermaid, vocabulary, brains, stepped skills).

Every function here is pure: data in, data out. The host emits the events.
"""

from footprint.graph._brains import (
    EscalationPolicy,
    FoldedSkillBrains,
    ProviderChoice,
    ResolvedBrain,
    build_brain_for,
    describe_serving_brain,
    fold_skill_brains,
)
from footprint.graph._builder import SkillGraphBuilder, skill_graph
from footprint.graph._cascade import (
    DeciderQuery,
    EntryPick,
    Posture,
    TurnRouting,
    apply_decider,
    menu_outstanding,
    pick_entry,
    route_turn,
    skill_menu_hint,
)
from footprint.graph._checkup import checkup
from footprint.graph._declare import (
    CheckMode,
    EdgeKind,
    Entry,
    EntryRouter,
    GraphEdge,
    Provenance,
    Route,
    SkillGraph,
)
from footprint.graph._effects import (
    AcceptedProposal,
    EffectOutcome,
    EffectsResult,
    ProposeTransition,
    RequireInstruction,
    ToolEffect,
    apply_tool_effects,
)
from footprint.graph._gate import PickVerdict, RefusalReason, check_pick
from footprint.graph._guards import (
    CompiledGuard,
    GuardCondition,
    Hop,
    compile_guard,
    unsatisfiable_reasons,
)
from footprint.graph._matchers import (
    All,
    CompiledMatcher,
    Intent,
    Keywords,
    Matcher,
    MatchHit,
    Regex,
    compile_matcher,
)
from footprint.graph._mermaid import to_mermaid
from footprint.graph._problems import Checkup, GraphProblem
from footprint.graph._routing import (
    KeywordScorer,
    RoutingPolicy,
    Scorer,
    Tier2Verdict,
    decide_tier2,
    keyword_tokens,
)
from footprint.graph._vocabulary import check_artifact_vocabularies, vocabulary_of

__all__ = [
    "AcceptedProposal",
    "All",
    "CheckMode",
    "Checkup",
    "CompiledGuard",
    "CompiledMatcher",
    "DeciderQuery",
    "EdgeKind",
    "EffectOutcome",
    "EffectsResult",
    "Entry",
    "EntryPick",
    "EntryRouter",
    "EscalationPolicy",
    "FoldedSkillBrains",
    "GraphEdge",
    "GraphProblem",
    "GuardCondition",
    "Hop",
    "Intent",
    "KeywordScorer",
    "Keywords",
    "MatchHit",
    "Matcher",
    "PickVerdict",
    "Posture",
    "ProposeTransition",
    "Provenance",
    "ProviderChoice",
    "RefusalReason",
    "Regex",
    "RequireInstruction",
    "ResolvedBrain",
    "Route",
    "RoutingPolicy",
    "Scorer",
    "SkillGraph",
    "SkillGraphBuilder",
    "Tier2Verdict",
    "ToolEffect",
    "TurnRouting",
    "apply_decider",
    "apply_tool_effects",
    "build_brain_for",
    "check_artifact_vocabularies",
    "check_pick",
    "checkup",
    "compile_guard",
    "compile_matcher",
    "decide_tier2",
    "describe_serving_brain",
    "fold_skill_brains",
    "keyword_tokens",
    "menu_outstanding",
    "pick_entry",
    "route_turn",
    "skill_graph",
    "skill_menu_hint",
    "to_mermaid",
    "unsatisfiable_reasons",
    "vocabulary_of",
]
