"""The skill graph as a Mermaid flowchart (spec §2.11)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from footprint.graph._declare import GraphEdge, SkillGraph

__all__ = ["mermaid_escape", "mermaid_node_id", "to_mermaid"]

START = "__start__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def mermaid_node_id(skill_id: str) -> str:
    """``n_`` plus the id with every character outside ``[A-Za-z0-9_]`` made ``_``."""
    return "n_" + _UNSAFE.sub("_", skill_id)


def mermaid_escape(text: str) -> str:
    """Make text safe inside a Mermaid caption or label: ``|`` and ``"`` as entities."""
    return text.replace("|", "#124;").replace('"', "#quot;")


def _caption(edge: GraphEdge) -> str:
    if edge.label:
        return mermaid_escape(edge.label)
    if edge.match is not None:
        return mermaid_escape(edge.match.caption())
    if edge.guard is not None:
        return edge.guard.mermaid_caption()
    return ""


def _edge_line(edge: GraphEdge) -> str:
    src = START if edge.from_skill is None else mermaid_node_id(edge.from_skill)
    arrow = "-.->" if edge.kind == "model" else "-->"
    caption = _caption(edge)
    link = f"{arrow}|{caption}|" if caption else arrow
    return f"  {src} {link} {mermaid_node_id(edge.to)}"


def to_mermaid(graph: SkillGraph) -> str:
    """``flowchart TD``, the start node, one node per skill, one line per edge.

    A model (bare) edge is dotted; an edge's caption is its label, else the
    entry's match caption, else its guard caption (``when …``).
    """
    lines = ["flowchart TD", f"  {START}([▶ start])"]
    lines += [
        f'  {mermaid_node_id(sid)}["{mermaid_escape(sid)}"]' for sid in graph.skill_ids
    ]
    lines += [_edge_line(edge) for edge in graph.edges()]
    return "\n".join(lines)
