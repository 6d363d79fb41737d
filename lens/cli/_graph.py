"""``footprint graph MODULE:ATTR``: a skill graph's check-up and its Mermaid drawing.

``ATTR`` names a ``SkillGraph``, an ``Agent`` (its graph is used), or a
factory returning either. Exit 0 when the check-up finds no error, 1 when it
does, 2 on bad input.
"""

from __future__ import annotations

import argparse
from typing import Any

from footprint._errors import ConfigError

__all__ = ["add_parser", "resolve_graph", "run"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("graph", help="check a skill graph (check-up problems) and draw it")
    p.add_argument("target", metavar="MODULE:ATTR",
                   help="a SkillGraph, an Agent, or a factory returning one "
                        "(e.g. lens._examples.support_desk:make_agent)")
    p.add_argument("--mermaid", action="store_true", help="also print the Mermaid flowchart")
    p.add_argument("--known-tools", metavar="A,B", default=None,
                   help="tool names the skills' bodies may mention (enables body-* checks)")


def resolve_graph(target: Any) -> Any:
    """The ``SkillGraph`` behind ``target`` (a graph, an agent, or a factory of either)."""
    from footprint.graph import SkillGraph

    if not isinstance(target, SkillGraph) and not hasattr(target, "setup") and callable(target):
        target = target()
    if hasattr(target, "setup"):
        target = target.setup.graph
    if not isinstance(target, SkillGraph):
        raise ConfigError(
            f"graph: the target gave {type(target).__name__}, not a skill graph; name a "
            "SkillGraph, an Agent built with graph=, or a factory returning one"
        )
    return target


def run(args: argparse.Namespace) -> int:
    from lens.playback._agent_ref import load_target

    graph = resolve_graph(load_target(
        args.target, flag="graph", example="lens._examples.support_desk:make_agent",
        kind="a SkillGraph, an Agent built with graph=, or a factory returning one"))
    known = None
    if args.known_tools is not None:
        known = [t.strip() for t in args.known_tools.split(",") if t.strip()]
    report = graph.checkup(known_tools=known)
    print(f"skill graph: {len(graph.skill_ids)} skills, {len(graph.entries)} entries, "
          f"{len(graph.routes)} routes — check-up {'ok' if report.ok else 'FAILED'}")
    for problem in report.problems:
        where = " ".join(f"{k}={v}" for k, v in (
            ("skill", problem.skill), ("from", problem.from_skill), ("to", problem.to)) if v)
        print(f"  {problem.kind:<7} {problem.code:<28} {where}")
        print(f"          {problem.message}")
    for note in report.notes:
        print(f"  note    {note}")
    if args.mermaid:
        print()
        print(graph.to_mermaid())
    return 0 if report.ok else 1
