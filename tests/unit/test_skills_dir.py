"""Agent Skills folders: ``*/SKILL.md`` into skills, malformed files refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from footprint._errors import ConfigError
from footprint.skills_dir import skills_from_dir


def write(root: Path, folder: str, text: str) -> Path:
    (root / folder).mkdir(parents=True, exist_ok=True)
    path = root / folder / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = "---\nname: {name}\ndescription: Handles {name}.\nlicense: MIT\n---\n# {name}\n\nDo it.\n"


def test_given_skill_folders_when_loaded_then_each_becomes_a_skill_in_folder_order(
    tmp_path: Path,
) -> None:
    write(tmp_path, "refunds", GOOD.format(name="refunds"))
    write(tmp_path, "billing", GOOD.format(name="billing"))
    (tmp_path / "notes").mkdir()
    skills = skills_from_dir(tmp_path)
    assert [s.id for s in skills] == ["billing", "refunds"]
    first = skills[0]
    assert (first.flavor, first.description) == ("skill", "Handles billing.")
    assert first.inject.system_prompt == "# billing\n\nDo it."
    assert first.trigger.kind == "llm-activated"


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("# no front matter\n", 1, "no YAML front matter"),
        ("---\nname: x\n", 1, "never closed"),
        ("---\nname: x\ndescription: [unclosed\n---\nbody\n", 3, "not valid YAML"),
        ("---\n- a list\n---\nbody\n", 2, "not a mapping"),
        ("---\ndescription: d\n---\nbody\n", 1, "'name' is missing"),
        ("---\nname: x\ndescription: ''\n---\nbody\n", 3, "'description' is ''"),
        ("---\ndescription: d\nname: other\n---\nbody\n", 3, "does not match its folder 'x'"),
        ("---\nname: x\ndescription: d\n---\n   \n", 5, "body"),
    ],
)
def test_given_a_malformed_skill_file_when_loaded_then_the_error_names_file_and_line(
    tmp_path: Path, text: str, line: int, needle: str,
) -> None:
    path = write(tmp_path, "x", text)
    with pytest.raises(ConfigError) as err:
        skills_from_dir(tmp_path)
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert needle in str(err.value)


def test_given_a_missing_directory_when_loaded_then_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        skills_from_dir(tmp_path / "nope")
