"""The documentation as the tests read it: README.md and the site's pages under docs/.

One place finds a page, a section, a code block or a generated block (between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers), wherever the page now lives,
so a test checks what a reader sees however the documentation is reorganised.
``docs/incoming/`` holds drafts not yet in the site and is not read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def doc_pages() -> list[Path]:
    """README.md, then every page of the site, in a stable order."""
    pages = sorted(p for p in DOCS.rglob("*.md") if "incoming" not in p.relative_to(DOCS).parts)
    return [README, *pages]


def page_holding(text: str) -> Path:
    """The one page that holds ``text`` (a marker, a heading); an error names the count."""
    found = [p for p in doc_pages() if text in p.read_text(encoding="utf-8")]
    assert len(found) == 1, f"{text!r} is on {len(found)} documentation pages: {found}"
    return found[0]


def section(heading: str) -> str:
    """From ``heading`` to the next heading of its level or higher, on the page holding it."""
    text = page_holding(heading).read_text(encoding="utf-8")
    body = text[text.index(heading):]
    level = len(heading) - len(heading.lstrip("#"))
    after = body.find("\n") + 1 or len(body)
    end = re.search(rf"^#{{1,{level}}} ", body[after:], re.M)
    return body[:after + end.start()] if end else body


def code_blocks(language: str) -> list[tuple[str, int, str]]:
    """Every fenced ``language`` block: (page relative to the root, its index, its code)."""
    found = []
    for page in doc_pages():
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)
        found += [(str(page.relative_to(ROOT)), i, code) for i, code in enumerate(blocks)]
    return found


def check_generated(start: str, end: str, fragment: str, what: str) -> None:
    """Assert the block between ``start`` and ``end`` is ``fragment`` on the page that holds
    the marker; with ``FOOTPRINT_WRITE_README=1`` write it there first."""
    page = page_holding(start)
    text = page.read_text(encoding="utf-8")
    if os.environ.get("FOOTPRINT_WRITE_README"):
        head, _, rest = text.partition(start)
        text = head + start + fragment + end + rest.partition(end)[2]
        page.write_text(text, encoding="utf-8")
    assert start + fragment + end in text, (
        f"{what} in {page.relative_to(ROOT)} is stale; run this test with "
        "FOOTPRINT_WRITE_README=1")


def generated_block(start: str, end: str) -> str:
    """The text between ``start`` and ``end`` on the page that holds them."""
    text = page_holding(start).read_text(encoding="utf-8")
    return text.partition(start)[2].partition(end)[0]
