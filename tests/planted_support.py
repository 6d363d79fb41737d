"""The planted-bug examples (``examples/planted/``), loaded by path as ``--agent`` loads them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from footprint import SeededIds
from recorder import ParquetSink, Recorder

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "examples" / "planted"
if str(PLANTED) not in sys.path:  # main() imports the folder's _record, as a script does
    sys.path.append(str(PLANTED))

# Each example's expected outcome of `footprint why last --agent examples/planted/X.py:make_agent`.
CONFIRMS_INJECTION = ("wrong_fact", "wrong_rag_chunk", "steering_over_fact", "skill_wrong_tool",
                      "lease_instruction", "early_instruction", "twin_tools", "mid_loop_rule",
                      "long_run", "seed_wording", "crowded_prompt")
# the shapes added for issue 33 (each headed by its root; see test_planted_shapes.py)
NEW_SHAPES = ("user_gated_rule", "zone_argument", "rag_vs_instruction", "locale_fact",
              "refusal_wording", "cross_turn_pair", "memory_guard", "stepped_fee",
              "escalated_fee")
NAMES = (*CONFIRMS_INJECTION, "stale_history", "bad_guard", "redundant_pair", "sampling",
         "crash", "tool_result", "conjunction", "redundant_triple", "wording_innocents",
         "yearless_date", "mixed_pair", "number_words", "two_causes", "euro_prices",
         *NEW_SHAPES)

# What the first line of each example's report must name: its root cause(s), every member
# of a conjunction or a redundant set (the sampling model has none: why stays inconclusive).
ROOTS: dict[str, tuple[str, ...]] = {
    "wrong_fact": ("supplier-memo",), "wrong_rag_chunk": ("chunk-x1-specs",),
    "steering_over_fact": ("customer-delight",), "skill_wrong_tool": ("invoicing",),
    "lease_instruction": ("voucher-discount",), "early_instruction": ("snapshot-first",),
    "twin_tools": ("legacy-oms",), "mid_loop_rule": ("staff-rate",), "long_run": ("fee-memo",),
    "seed_wording": ("room-memo",), "crowded_prompt": ("carrier-note",),
    "stale_history": ("message llm#2",),
    "bad_guard": ("cursor billing→auto_refund", "amount lte 1000 (saw 400)"),
    "redundant_pair": ("spec-2019", "forum-post"), "sampling": (),
    "crash": ("limit-raise",), "tool_result": ("price_feed",),
    "conjunction": ("member-discount", "apply-discounts"),
    "redundant_triple": ("manual-2019", "forum-post", "reseller-faq"),
    "wording_innocents": ("old-flyer",), "yearless_date": ("old-calendar",),
    "mixed_pair": ("fact 'spring-memo'", "tool promo_lookup #call_1"),
    "number_words": ("old-roster",), "two_causes": ("price-memo", "ship-memo"),
    "euro_prices": ("supplier-note-2024",),
    "user_gated_rule": ("student-rate", "because the user said"),
    "zone_argument": ("zones-2023",), "rag_vs_instruction": ("returns-faq-2021",),
    "locale_fact": ("tarif-fournisseur",), "refusal_wording": ("blade-safety",),
    "cross_turn_pair": ("renewal-memo-2023", "assistant message llm#1 of turn 1"),
    "memory_guard": ("memory-r9",), "stepped_fee": ("fee-memo-2022",),
    "escalated_fee": ("late-fee-2021",),
}


def ref(name: str) -> str:
    """The ``--agent`` reference a user types, relative to the repository root."""
    return f"examples/planted/{name}.py:make_agent"


def load(name: str) -> ModuleType:
    """The example module, imported from its file (once per process)."""
    key = f"_planted_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, PLANTED / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def record(name: str, store: Path) -> str:
    """Record the example's conversation into ``store`` (seeded run ids); the last answer."""
    module = load(name)
    recorder = Recorder(sinks=[ParquetSink(store)])
    try:
        agent = module.make_agent(sink=recorder).variant(ids=SeededIds(7))
        answer: str = module.converse(agent).answer
    finally:
        recorder.close()
    return answer
