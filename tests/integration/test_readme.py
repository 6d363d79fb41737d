"""The README is the front door: it starts with the set-up commands, stays short, and
every page it links to exists. Its code blocks run with the site's
(tests/integration/test_docs_examples.py and test_docs_shell.py)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_given_the_readme_when_read_then_its_first_block_is_the_setup_commands() -> None:
    first = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first is not None
    lines = [line for line in first.group(1).splitlines() if line.strip()]
    assert lines == ["pip install . && footprint demo", "pip install -e '.[dev]' && pytest"]


def test_given_the_readme_when_its_lines_are_counted_then_it_stays_a_front_door() -> None:
    assert README.read_text(encoding="utf-8").count("\n") <= 200


def test_given_the_readme_when_its_links_are_followed_then_each_page_exists() -> None:
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    assert links, "the README links into the documentation site"
    missing = [link for link in links if not (README.parent / link).is_file()]
    assert missing == []
