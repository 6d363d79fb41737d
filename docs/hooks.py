"""MkDocs hook: the reference pages' generated parts, written from the code at build time.

A page holds a marker such as ``<!-- generated:cli -->``; the hook replaces it with text
built from the code itself (the ``footprint`` argparse parser, the event catalog, the
store's views, ``lens/schemas``), so the reference cannot drift from what runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cli() -> str:
    from lens.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps help at the terminal's width
    parser = build_parser()
    out = ["## `footprint`", "", "```text", parser.format_help().rstrip(), "```", ""]
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subs.choices.items():
        out += [f"## `footprint {name}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def _first_paragraph(doc: str | None) -> str:
    text = (doc or "").strip().split("\n\n")[0]
    return " ".join(line.strip() for line in text.splitlines())


def _events() -> str:
    from footprint.events import ENVELOPE_FIELDS, EVENT_TYPES

    out = ["Every event carries the envelope fields "
           + ", ".join(f"`{name}`" for name in ENVELOPE_FIELDS) + ".", ""]
    for tag, cls in EVENT_TYPES.items():
        out += [f"## `{tag}`", "", f"`footprint.events.{cls.__name__}`: "
                + _first_paragraph(cls.__doc__), "", "| field | type |", "|---|---|"]
        for f in dataclasses.fields(cls):
            if f.name not in ENVELOPE_FIELDS and f.name != "type":
                kind = str(f.type).replace("|", "\\|")
                out.append(f"| `{f.name}` | `{kind}` |")
        out.append("")
    return "\n".join(out)


def _views() -> str:
    from footprint import Agent, ScriptedModel
    from recorder import VIEWS, ParquetSink, Recorder, open_store

    out: list[str] = []
    with tempfile.TemporaryDirectory() as where:
        with Recorder(sinks=[ParquetSink(where)]) as recorder:  # the views need one run
            Agent(provider=ScriptedModel(["Hello!"]), model="m", sink=recorder).run_sync("Hi")
        store = open_store(where)
        for name, _sql in VIEWS:
            out += [f"### `{name}`", "", "| column | type |", "|---|---|"]
            for row in store.sql(f"DESCRIBE {name}").fetchall():
                out.append(f"| `{row[0]}` | `{row[1]}` |")
            out.append("")
    return "\n".join(out)


def _event_schemas() -> str:
    from footprint.events import EVENT_TYPES, record_schema

    out: list[str] = []
    for tag, cls in EVENT_TYPES.items():
        schema = json.dumps(record_schema(cls), indent=2, ensure_ascii=False)
        out += [f"### `{tag}`", "", "```json", schema, "```", ""]
    return "\n".join(out)


def _schemas() -> str:
    out: list[str] = []
    for path in sorted((ROOT / "lens" / "schemas").glob("*.json")):
        schema: Any = json.loads(path.read_text(encoding="utf-8"))
        out += [f"### `{path.name}`", "", str(schema.get("description", "")), "",
                "```json", json.dumps(schema, indent=2, ensure_ascii=False), "```", ""]
    return "\n".join(out)


def _promises(markdown: str) -> str:
    """The page's own promises (its ``- **Title.**`` bullets), one a line, each with the
    tests its text names."""
    out = ["| promise | held by |", "|---|---|"]
    for title, body in re.findall(r"^- \*\*(.+?)\*\*(.*?)(?=^- \*\*|^#|\Z)", markdown,
                                  re.S | re.M):
        tests = sorted(set(re.findall(r"tests/[\w/]+\.py", body)))
        out.append(f"| {title.rstrip('.')} | " + ", ".join(f"`{t}`" for t in tests) + " |")
    return "\n".join(out)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": _cli, "events": _events, "views": _views, "schemas": _schemas,
    "event-schemas": _event_schemas,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    marker = "<!-- generated:promises -->"
    if marker in markdown:
        markdown = markdown.replace(marker, _promises(markdown))
    for name, build in GENERATORS.items():
        marker = f"<!-- generated:{name} -->"
        if marker in markdown:
            markdown = markdown.replace(marker, build())
    return markdown
