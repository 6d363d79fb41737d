"""What a tool returned, read as data or as the exact effects envelope (spec §1.2).

A tool's return value is data and reaches the model whole, with one
exception: the **exact effects envelope** — a mapping with the keys
``content`` and ``effects`` and nothing else but an optional ``status``,
where ``effects`` is a non-empty list of effects of known kinds
(``propose-transition``, ``require-instruction``) with only their own keys,
and ``status`` (when present) is one of the closed statuses. Anything else —
an extra key, an unknown status, an empty or unknown effect list — is data.

A tool that wants to declare a status without effects returns a
:class:`ToolReturn` instead: a typed value is never mistaken for data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from footprint._errors import ConfigError
from footprint.agent._wire import to_text
from footprint.graph import ProposeTransition, RequireInstruction, ToolEffect
from footprint.injection import TOOL_STATUSES, ToolStatus
from footprint.providers import ToolCall

__all__ = ["Read", "ToolReturn", "effects_of", "is_envelope", "read_result"]

_ENVELOPE_KEYS = frozenset({"content", "effects", "status"})
_LEASES = ("next-call", "until-skill-exit")
# per effect kind: the keys naming its target (exactly one is required), and the optional keys
_EFFECT_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "propose-transition": (frozenset({"target_skill_id", "targetSkillId"}),
                           frozenset({"kind", "reason"})),
    "require-instruction": (frozenset({"instruction_id", "instructionId"}),
                            frozenset({"kind", "delivery_lease", "deliveryLease"})),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolReturn:
    """A tool's typed result: the content the model reads, a declared status, effects.

    Return it from a tool to declare a status (``"denied"``, ``"partial"``, …)
    that ``on_tool_status`` routes and ``status`` guards read; ``effects``
    are effect mappings as in the envelope.
    """

    content: Any
    status: ToolStatus | None = None
    effects: Sequence[Mapping[str, Any]] = ()

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in TOOL_STATUSES:
            raise ConfigError(
                f"ToolReturn(status={self.status!r}) is not a result status; use one of "
                f"{', '.join(TOOL_STATUSES)} or None"
            )
        if isinstance(self.effects, str | bytes | Mapping) or not isinstance(
            self.effects, Sequence
        ):
            raise ConfigError(
                f"ToolReturn(effects={self.effects!r}) must be a list of effect mappings; "
                "wrap one effect in a list"
            )
        bad = [e for e in self.effects if not _known_effect(e)]
        if bad:
            raise ConfigError(
                f"ToolReturn effect {bad[0]!r} is not a known effect; use "
                "{'kind': 'propose-transition', 'target_skill_id': ...} or "
                "{'kind': 'require-instruction', 'instruction_id': ...}"
            )


def _known_effect(item: object) -> bool:
    if not isinstance(item, Mapping):
        return False
    kind = item.get("kind")
    if not isinstance(kind, str) or kind not in _EFFECT_KEYS:
        return False
    ids, optional = _EFFECT_KEYS[kind]
    if not set(item) <= ids | optional:
        return False
    named = [item[k] for k in ids if k in item]
    if len(named) != 1 or not isinstance(named[0], str) or not named[0]:
        return False
    reason = item.get("reason", "")
    lease = item.get("delivery_lease", item.get("deliveryLease", "next-call"))
    return isinstance(reason, str) and lease in _LEASES


def is_envelope(value: object) -> bool:
    """True only for the exact effects envelope (see the module docstring)."""
    if not isinstance(value, Mapping) or "content" not in value or "effects" not in value:
        return False
    if not set(value) <= _ENVELOPE_KEYS:
        return False
    status = value.get("status")
    if status is not None and (not isinstance(status, str) or status not in TOOL_STATUSES):
        return False
    effects = value["effects"]
    return (isinstance(effects, list | tuple) and bool(effects)
            and all(_known_effect(e) for e in effects))


def effects_of(raw: Sequence[Mapping[str, Any]], call: ToolCall) -> list[ToolEffect]:
    """The known effects among ``raw``, typed, in order (unknown ones are left out)."""
    effects: list[ToolEffect] = []
    for item in raw:
        if not _known_effect(item):
            continue
        if item["kind"] == "propose-transition":
            effects.append(ProposeTransition(
                target_skill_id=str(item.get("target_skill_id", item.get("targetSkillId"))),
                reason=str(item.get("reason", "")), tool_name=call.name, tool_call_id=call.id))
        else:
            effects.append(RequireInstruction(
                instruction_id=str(item.get("instruction_id", item.get("instructionId"))),
                delivery_lease=str(item.get("delivery_lease",
                                            item.get("deliveryLease", "next-call"))),
                tool_name=call.name, tool_call_id=call.id))
    return effects


@dataclass(frozen=True, slots=True)
class Read:
    """A tool's value as read: the text, the declared status and the effects."""

    text: str
    status: ToolStatus | None
    effects: list[ToolEffect]


def read_result(value: object, call: ToolCall) -> Read:
    """Read ``value``; a value that cannot become text raises (the caller reports it)."""
    if isinstance(value, ToolReturn):
        return Read(_clean(to_text(value.content)), value.status,
                    effects_of(value.effects, call))
    if is_envelope(value):
        assert isinstance(value, Mapping)
        return Read(_clean(to_text(value["content"])), value.get("status"),
                    effects_of(value["effects"], call))
    return Read(_clean(to_text(value)), None, [])


def _clean(text: str) -> str:
    """``text`` with lone surrogates escaped (``\\ud800``), so it always encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text

