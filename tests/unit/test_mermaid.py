"""Mermaid export (spec §2.11): exact format."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from footprint.graph import Keywords, Regex, skill_graph
from footprint.graph._mermaid import mermaid_escape, mermaid_node_id
from footprint.injection import define_skill


def test_given_a_graph_when_exported_then_the_flowchart_is_exact() -> None:
    triage = define_skill("triage", "T", "t")
    refund = define_skill("refund-2", "R", "r")
    faq = define_skill("faq", "F", "f")
    graph = (
        skill_graph(triage, refund, faq)
        .entry(triage, match=Keywords(("refund", "money", "card", "visa")))
        .entry(faq, match=Regex(re.compile("^faq|help", re.IGNORECASE)))
        .route("triage", "refund-2", guard={"risk": {"gte": "high"}})
        .route("triage", "faq")
        .route("faq", "triage", on_tool_return="probe", label='say "hi"')
        .build(check="off")
    )
    assert graph.to_mermaid() == "\n".join([
        "flowchart TD",
        "  __start__([▶ start])",
        '  n_triage["triage"]',
        '  n_refund_2["refund-2"]',
        '  n_faq["faq"]',
        "  __start__ -->|refund, money, card, +1 more| n_triage",
        "  __start__ -->|/^faq#124;help/i| n_faq",
        "  n_triage -->|when risk ≥ #quot;high#quot;| n_refund_2",
        "  n_triage -.-> n_faq",
        "  n_faq -->|say #quot;hi#quot;| n_triage",
    ])


@given(st.text(max_size=20))
def test_given_any_id_when_made_a_node_id_then_it_is_mermaid_safe(skill_id: str) -> None:
    assert re.fullmatch(r"n_[A-Za-z0-9_]*", mermaid_node_id(skill_id))
    escaped = mermaid_escape(skill_id)
    assert "|" not in escaped and '"' not in escaped
