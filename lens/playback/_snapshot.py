"""A recorded run as test data: a small, self-contained folder and a test module replaying it.

``export_run`` writes ``<out>/<name>/`` with

- ``recording.json`` — the manifest: format, the run, every run of its
  conversation up to it (turn order), and the agent reference;
- ``events.jsonl`` — each event as a flat JSON record, one per line; texts
  longer than :data:`INLINE` characters are replaced by ``{"$blob": sha256}``;
- ``blobs.jsonl`` — those texts, once each (``{"hash": …, "text": …}``);
- ``decisions.json`` — the decision-level snapshot (``lens.playback._decisions``);

and ``<out>/test_<name>.py``, which replays it with the pytest plugin.
Events are exported as the store holds them, so redacted values stay
redacted. :class:`Recording` reads such a folder back; it answers what a
store answers (``run_ids``, ``resolve_run``, ``events``), so replay, diff
and why accept it in place of a store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError
from footprint.events import Event, RunConfigured, RunStart, from_record, to_record
from lens.playback._conversation import conversation_of
from lens.playback._decisions import decisions_json
from lens.playback._files import real_folder, write_text_safely
from recorder.store._runref import SHOWN, resolve_ref

__all__ = ["FORMAT", "INLINE", "Recording", "export_run", "is_recording", "module_text"]

FORMAT = "footprint.recording/1"
INLINE = 80
"""Texts up to this many characters stay inline in ``events.jsonl``."""
_BLOB = "$blob"
_PLAIN = (str, int, float, bool, type(None))
MANIFEST, EVENTS, BLOBS, DECISIONS = ("recording.json", "events.jsonl", "blobs.jsonl",
                                      "decisions.json")


def is_recording(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder ``footprint snapshot`` wrote."""
    return (Path(path) / MANIFEST).is_file()


class Recording:
    """A snapshot folder read back: the runs of one conversation, as a store would give them."""

    def __init__(self, root: Path, manifest: Mapping[str, Any],
                 runs: Mapping[str, list[Event]]) -> None:
        self.root = root
        self.manifest = manifest
        self._runs = dict(runs)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Recording:
        """Read the folder at ``path``; a missing or foreign one is a ``ConfigError``."""
        root = Path(path)
        if not is_recording(root):
            raise ConfigError(f"{str(root)!r} is not a recording folder (no {MANIFEST}); "
                              "write one with `footprint snapshot RUN --agent M:F -o DIR`")
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise ConfigError(f"{str(root / MANIFEST)!r} has format {manifest.get('format')!r}; "
                              f"this version reads {FORMAT!r}: snapshot the run again")
        texts = {str(b["hash"]): str(b["text"]) for b in _lines(root / BLOBS)}
        runs: dict[str, list[Event]] = {rid: [] for rid in manifest["runs"]}
        for record in _lines(root / EVENTS):
            event = from_record({k: _unblob(v, texts, root) for k, v in record.items()})
            runs.setdefault(event.run_id, []).append(event)
        return cls(root, manifest, runs)

    @property
    def run(self) -> str:
        """The run the folder was made for (the conversation's last turn in it)."""
        return str(self.manifest["run"])

    @property
    def agent(self) -> str | None:
        """The ``MODULE:FACTORY`` reference the snapshot was taken with."""
        ref = self.manifest.get("agent")
        return str(ref) if ref else None

    def run_ids(self) -> list[str]:
        return list(self._runs)

    def resolve_run(self, ref: str) -> str:
        ids = self.run_ids()
        return resolve_ref(ref, ids, where=f"recording {str(self.root)!r}", last=self.run,
                           hint=f"it holds {', '.join(repr(i) for i in ids[:SHOWN])}"
                                f"{' …' if len(ids) > SHOWN else ''}, or use `last`")

    def events(self, run_id: str) -> list[Event]:
        return list(self._runs.get(run_id, ()))

    def starts(self) -> list[tuple[str, int, str | None]]:
        return [(e.run_id, e.turn, e.conversation_id) for events in self._runs.values()
                for e in events if isinstance(e, RunStart)]


def _lines(path: Path) -> Iterable[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _unblob(value: object, texts: Mapping[str, str], root: Path) -> object:
    if isinstance(value, dict) and isinstance(value.get(_BLOB), str):
        if value[_BLOB] not in texts:
            raise ConfigError(f"recording {str(root)!r} refers to blob {value[_BLOB][:12]}… "
                              f"that {BLOBS} lacks; snapshot the run again")
        return texts[value[_BLOB]]
    return value


def _lean(event: Event) -> dict[str, Any]:
    """The event's record without the fields that hold their plain default (``None``, 0…)."""
    record = to_record(event)
    for f in dataclasses.fields(event):
        default = f.default
        if f.name != "type" and default is not dataclasses.MISSING and isinstance(default, _PLAIN) \
                and record.get(f.name) == default and type(record.get(f.name)) is type(default):
            del record[f.name]
    return record


def _blobbed(record: Mapping[str, Any], blobs: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, str) and len(value) > INLINE:
            digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
            blobs[digest] = value
            value = {_BLOB: digest}
        out[key] = value
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower() or "run"


_TEST = '''"""Replays a recorded run and checks its decisions.

Written by `footprint snapshot`. When a change of the agent is intended,
update the decision snapshot with `pytest --footprint-update`, and record
and snapshot the run again to refresh the exact replay.
"""

from pathlib import Path

RUN = {run}
MESSAGE = {message}
RECORDING = Path(__file__).parent / {name}
AGENT = {agent}


def test_{slug}_replays_decision_for_decision(footprint_replay):
    footprint_replay.assert_replays(RECORDING, AGENT)


def test_{slug}_decisions_match_the_snapshot(footprint_replay):
    footprint_replay.assert_decisions(RECORDING, AGENT)
'''


def module_text(*, run: str, message: str, name: str, agent: str, out: Path) -> str:
    """The test module replaying recording ``name``: every recorded string (the run id, the
    person's message) and the agent reference in it is a ``repr`` literal, never inside a
    docstring or an f-string, so no text of a run can add code to it."""
    slug = _slug(name)
    if slug != name:
        raise ConfigError(f"recording name {name!r} is not a Python name part; use {slug!r}")
    return _TEST.format(run=repr(run), message=repr(_clip_message(message)), name=repr(name),
                        slug=slug, agent=_agent_literal(agent, out))


def _agent_literal(agent: str, out: Path) -> str:
    module, _, attr = agent.rpartition(":")
    if module.endswith(".py") or "/" in module or "\\" in module:
        rel = os.path.relpath(Path(module).resolve(), out.resolve())
        return f"str(Path(__file__).parent / {rel!r}) + {':' + attr!r}"
    return repr(agent)


def export_run(source: Any, run: str, out: str | os.PathLike[str], *, agent: str | None,
               name: str | None = None) -> tuple[Path, Path | None]:
    """Write ``run`` (and the earlier turns of its conversation) as a recording; its test module.

    Returns ``(folder, test module)``. ``agent`` is the ``MODULE:FACTORY``
    the test replays with; ``None`` (a run mapped from another framework's trace has
    no footprint agent to replay) writes the recording folder only. Every file is written
    atomically and never through a symbolic link; the folder must be ``out``'s own.
    """
    turns = conversation_of(source, run)
    last = turns[-1]
    conf = next((e for e in last.events if isinstance(e, RunConfigured)), None)
    name = _slug(name or f"{conf.agent_name if conf else 'run'}_{last.run_id[-8:]}")
    folder = real_folder(Path(out), name)
    blobs: dict[str, str] = {}
    rows = [_blobbed(_lean(e), blobs) for t in turns for e in t.events]
    _write_lines(folder / EVENTS, rows)
    _write_lines(folder / BLOBS, [{"hash": h, "text": t} for h, t in blobs.items()])
    manifest = {"format": FORMAT, "run": last.run_id, "runs": [t.run_id for t in turns],
                "turns": len(turns), "agent": agent}
    write_text_safely(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    write_text_safely(folder / DECISIONS, decisions_json([t.events for t in turns]))
    if agent is None:
        return folder, None
    module = Path(out) / f"test_{name}.py"
    write_text_safely(module, module_text(run=last.run_id, message=last.user_message,
                                          name=name, agent=agent, out=Path(out)))
    return folder, module


def _clip_message(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= 50 else one[:49] + "…"


def _write_lines(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    write_text_safely(path, text)
