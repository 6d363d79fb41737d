"""Load Agent Skills folders: every ``<dir>/<name>/SKILL.md`` becomes a skill.

A ``SKILL.md`` starts with YAML front matter between two ``---`` lines
holding at least ``name`` (equal to the folder's name) and ``description``;
the markdown after it is the skill's body. Other front-matter keys are
ignored. Every malformed file is a :class:`ConfigError` naming the file and
the line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from footprint._errors import ConfigError
from footprint.injection import Injection, define_skill

__all__ = ["SKILL_FILE", "skill_from_file", "skills_from_dir"]

SKILL_FILE = "SKILL.md"
_FENCE = "---"


def _split(path: Path, text: str) -> tuple[str, str, int]:
    """(front matter, body, line number of the closing fence)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        raise ConfigError(
            f"{path}:1: no YAML front matter; start the file with a '---' line, then "
            "'name: <folder name>' and 'description: <when to use it>', then '---'."
        )
    for index in range(1, len(lines)):
        if lines[index].strip() == _FENCE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:]), index + 1
    raise ConfigError(
        f"{path}:1: the front matter opened on line 1 is never closed; add a '---' line "
        "after its last key."
    )


def _parse(path: Path, front: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 2
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"{path}:{line}: the front matter is not valid YAML ({problem}); fix that line, "
            "e.g. quote a value containing ': '."
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}:2: the front matter is {data!r}, not a mapping; write "
            "'name: <folder name>' and 'description: <when to use it>'."
        )
    return data


def _line_of(front: str, key: str) -> int:
    for index, line in enumerate(front.splitlines()):
        if re.match(rf"{re.escape(key)}\s*:", line):
            return index + 2
    return 1


def _require(path: Path, data: dict[str, Any], front: str, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        where = _line_of(front, key)
        got = "is missing" if key not in data else f"is {value!r}"
        raise ConfigError(
            f"{path}:{where}: front matter '{key}' {got}; give it a non-empty string "
            f"('{key}: ...')."
        )
    return value.strip()


def skill_from_file(path: Path | str) -> Injection:
    """One ``SKILL.md`` as a ``define_skill`` injection (id = ``name``)."""
    file = Path(path)
    front, body, fence_line = _split(file, file.read_text(encoding="utf-8"))
    data = _parse(file, front)
    name = _require(file, data, front, "name")
    description = _require(file, data, front, "description")
    folder = file.parent.name
    if name != folder:
        raise ConfigError(
            f"{file}:{_line_of(front, 'name')}: name {name!r} does not match its folder "
            f"{folder!r}; rename the folder or set 'name: {folder}'."
        )
    try:
        title = data.get("title")
        return define_skill(
            name, description, body.strip(), title=title if isinstance(title, str) else None
        )
    except ConfigError as exc:
        raise ConfigError(f"{file}:{fence_line + 1}: {exc}") from exc


def skills_from_dir(path: Path | str) -> tuple[Injection, ...]:
    """Every ``*/SKILL.md`` under ``path``, in folder-name order."""
    root = Path(path)
    if not root.is_dir():
        raise ConfigError(
            f"skills directory {str(root)!r} does not exist or is not a directory; "
            "pass the folder that holds one sub-folder per skill."
        )
    return tuple(skill_from_file(f) for f in sorted(root.glob(f"*/{SKILL_FILE}")))
