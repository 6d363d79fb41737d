"""A recorded run as a cassette: its model responses and tool results, served back.

``ReplayModel`` is a ``Provider`` that answers a request with the response
recorded for the same request hash (the sha256 of the request's canonical
JSON, as the host records it in ``llm.start.request_hash``), in recorded
order per hash. ``ReplayTools`` is a ``ToolSource`` that serves each plain
tool call the recorded ``tool.end`` result (its own result, without the
host's step note), status and effects, matched by tool name and arguments
in call order. The decider call of a turn cascade is served its recorded
pick. Anything the recording does not hold raises :class:`ReplayDivergence`,
which names what differs (or, given a ``fallback`` provider, goes live).
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from footprint._errors import RunError
from footprint.agent import ServedTool
from footprint.agent._compose import content_hash
from footprint.agent._turn import DECIDER_SYSTEM, decider_request
from footprint.agent._wire import json_safe, request_json
from footprint.events import (
    Event,
    LLMEnd,
    LLMStart,
    RunFailed,
    RunStart,
    ToolEffect,
    ToolEnd,
    ToolStart,
    TurnRouted,
)
from footprint.graph import DeciderQuery
from footprint.providers import LLMRequest, LLMResponse, Provider, ToolCall, Usage
from lens.playback._redacted import parse_marker
from lens.playback._stream import canonical, clip

__all__ = [
    "LiveModels",
    "PartDiff",
    "ReplayDivergence",
    "ReplayModel",
    "ReplayTools",
    "decider_requests",
    "own_result",
    "redacted_digest",
    "request_parts_diff",
]

Gate = Callable[[], "str | None"]


class ReplayDivergence(RunError):
    """The replayed agent asked for something the recording does not hold, or was stopped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartDiff:
    """One part of a model request that differs from the recorded one."""

    part: str
    detail: str
    expected: str
    got: str


def own_result(end: ToolEnd) -> str:
    """The tool's own result: the recorded text without the host's step note."""
    note = end.step_note
    if note and end.result.endswith(note):
        return end.result[: len(end.result) - len(note)]
    return end.result


def _never() -> str | None:
    return None


# ── the model ──────────────────────────────────────────────────────────────


def _response(end: LLMEnd) -> LLMResponse:
    return LLMResponse(
        content=end.content, tool_calls=end.tool_calls, stop_reason=end.stop_reason,
        usage=Usage(input_tokens=end.input_tokens, output_tokens=end.output_tokens,
                    cache_read_tokens=end.cache_read_tokens,
                    cache_write_tokens=end.cache_write_tokens),
        model=end.model)


def decider_requests(events: Sequence[Event]) -> list[tuple[str, str, str]]:
    """``(request hash, request JSON, recorded pick)`` of every decider call in ``events``.

    The host does not record the decider's request; it is rebuilt from the
    turn's ``skill.turn_routed`` (the menu offered) and ``run.start`` (the
    message), exactly as the host builds it. A decider that failed or
    answered off the menu is served ``none``, which leaves the menu standing
    as it did.
    """
    out: list[tuple[str, str, str]] = []
    message = ""
    for e in events:
        if isinstance(e, RunStart):
            message = e.user_message
        if isinstance(e, TurnRouted) and e.decider is not None:
            offered = e.offered or ()
            query = DeciderQuery(
                user_message=message, offered=offered, stay_offered=e.stay_offered,
                options=(*offered, *(("stay",) if e.stay_offered else ()), "none"))
            wire = request_json(decider_request(e.decider.model, query))
            out.append((content_hash(wire), wire, e.decider.picked or "none"))
    return out


class ReplayModel:
    """A ``Provider`` serving a recorded run's model responses by request hash.

    The decider call of a turn cascade is served too (its recorded pick).
    A call the recorded run failed on (an ``llm.start`` with no ``llm.end``
    before ``run.error``) fails again with the recorded message. With
    ``fallback`` (a live ``Provider``) a request the recording does not
    hold goes to the fallback instead of raising, and so does every later
    call: a re-run reuses the recording up to the first changed request and
    asks the model only from there (``served`` and ``called`` count both).
    """

    def __init__(self, events: Sequence[Event], *, gate: Gate = _never,
                 fallback: Provider | None = None) -> None:
        ends = {e.step_id: e for e in events if isinstance(e, LLMEnd)}
        failed = next((e for e in events if isinstance(e, RunFailed)), None)
        self._served: dict[str, deque[LLMResponse | RunError]] = defaultdict(deque)
        self._recorded: list[LLMStart] = []
        for e in events:
            if isinstance(e, LLMStart) and e.step_id in ends:
                self._served[e.request_hash].append(_response(ends[e.step_id]))
                self._recorded.append(e)
            elif isinstance(e, LLMStart) and failed is not None:  # the call the run died on
                self._served[e.request_hash].append(RunError(failed.message))
                self._recorded.append(e)
        self._picks: dict[str, deque[str]] = defaultdict(deque)
        self._decider_wires: list[str] = []
        for digest, wire, picked in decider_requests(events):
            self._picks[digest].append(picked)
            self._decider_wires.append(wire)
        self._gate = gate
        self._fallback = fallback
        self.calls = 0
        self.served = 0
        self.called = 0
        self.mismatch: tuple[str, tuple[PartDiff, ...]] | None = None

    @property
    def name(self) -> str:
        return "replay"

    @property
    def live(self) -> bool:
        """Whether calls now go to the fallback (a request differed from the recording)."""
        return self.called > 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        wire = request_json(request)
        digest = content_hash(wire)
        if request.system == DECIDER_SYSTEM and not request.tools:
            return await self._decide(request, wire, digest)
        self.calls += 1
        queue = self._served.get(digest)
        if self.live or not queue:
            if not self.live:
                expected = self._recorded[self.calls - 1] \
                    if self.calls <= len(self._recorded) else None
                self.mismatch = (f"llm#{self.calls}", request_parts_diff(
                    expected.request_ref if expected else None, wire))
            return await self._miss(request, f"model call llm#{self.calls}", digest)
        stop = self._gate()
        if stop is not None:
            raise ReplayDivergence(f"replay stopped before llm#{self.calls}: {stop}")
        self.served += 1
        served = queue.popleft()
        if isinstance(served, RunError):  # the recorded run failed on this call: so does this
            raise served
        return served

    async def _decide(self, request: LLMRequest, wire: str, digest: str) -> LLMResponse:
        queue = self._picks.get(digest)
        if self.live or not queue:
            if not self.live:
                recorded = self._decider_wires[0] if self._decider_wires else None
                self.mismatch = ("the decider call", request_parts_diff(recorded, wire))
            return await self._miss(request, "the decider call", digest)
        self.served += 1
        return LLMResponse(content=queue.popleft())

    async def _miss(self, request: LLMRequest, what: str, digest: str) -> LLMResponse:
        if self._fallback is None:
            parts = self.mismatch[1] if self.mismatch else ()
            raise ReplayDivergence(
                f"{what}: the request (hash {digest[:12]}) is not in the recording; differs in "
                f"{', '.join(p.part for p in parts) or 'an unrecorded part'}")
        self.called += 1
        return await self._fallback.complete(request)


class LiveModels:
    """A ``Provider`` sending each request to the agent's brain for ``request.model``."""

    def __init__(self, agent: Any) -> None:
        setup = agent.setup
        self._default: Provider = setup.provider
        self._by: dict[str, Provider] = {setup.model: setup.provider}
        brains = setup.brains
        if brains is not None:
            for decl in brains.by_skill.values():
                if decl.model is not None:
                    self._by.setdefault(decl.model, decl.provider or setup.provider)
            for choice in (brains.escalation, brains.decider):
                if choice is not None:
                    self._by.setdefault(choice.model or setup.model, choice.provider)

    @property
    def name(self) -> str:
        return "live"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await self._by.get(request.model, self._default).complete(request)



# ── the tools ──────────────────────────────────────────────────────────────


def _call_key(name: str, args: Any) -> str:
    return f"{name}({canonical(json_safe(args))})"


def _effect(e: ToolEffect) -> dict[str, Any]:
    raw = {"kind": e.kind, "target_skill_id": e.target_skill_id, "reason": e.reason,
           "instruction_id": e.instruction_id, "delivery_lease": e.delivery_lease}
    return {k: v for k, v in raw.items() if v is not None}


def redacted_digest(value: object) -> str | None:
    """The digest a redaction marker (``[redacted hmac-sha256:…]``, and the older unkeyed
    ``[redacted sha256:…]``, ``[sha256:…]``) holds; ``None`` for any other value."""
    found = parse_marker(value) if isinstance(value, str) and value == value.strip() else None
    return found.digest if found is not None else None


class ReplayTools:
    """A ``ToolSource`` serving a recorded run's tool results by name and arguments.

    A result the recording kept only as a redaction marker is not served:
    when the tool is named in ``rerun`` (it is deterministic) the tool runs
    again and the replay checks its result against the recorded hash;
    otherwise the call is refused, naming the tool. With ``live=True`` any
    call the recording cannot serve runs the real tool instead.
    """

    def __init__(self, events: Sequence[Event], *, gate: Gate = _never,
                 rerun: Collection[str] = (), live: bool = False) -> None:
        starts = {e.tool_call_id: e for e in events if isinstance(e, ToolStart)}
        effects: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in events:
            if isinstance(e, ToolEffect) and e.tool_call_id is not None:
                effects[e.tool_call_id].append(_effect(e))
        self._served: dict[str, deque[ServedTool | None]] = defaultdict(deque)
        for e in events:
            start = starts.get(e.tool_call_id) if isinstance(e, ToolEnd) else None
            if isinstance(e, ToolEnd) and start is not None:
                served = None if redacted_digest(e.result) is not None else ServedTool(
                    text=own_result(e), status=e.status, error=e.error,
                    effects=tuple(effects.get(e.tool_call_id, ())))
                self._served[_call_key(e.tool_name, start.args)].append(served)
        self._gate = gate
        self._rerun = frozenset(rerun)
        self._live = live
        self.reran = 0

    def serve(self, call: ToolCall) -> ServedTool | None:
        key = _call_key(call.name, call.arguments)
        queue = self._served.get(key)
        if not queue and self._live:
            return None
        if not queue:
            raise ReplayDivergence(
                f"tool call {clip(key, 90)} has no recorded result left in the recording")
        stop = self._gate()
        if stop is not None:
            raise ReplayDivergence(f"replay stopped before tool {call.name}: {stop}")
        served = queue.popleft()
        if served is None:
            if call.name not in self._rerun and not self._live:
                raise ReplayDivergence(
                    f"tool {call.name!r}: its recorded result was redacted and the tool is not "
                    f"declared deterministic; declare tool({call.name}, deterministic=True) "
                    "or record with capture level 'full'")
            self.reran += 1
        return served


# ── what differs in a request ─────────────────────────────────────────────


def _excerpts(a: str, b: str, width: int = 60) -> tuple[str, str, int]:
    """Both texts around their first differing character, and its offset."""
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
              min(len(a), len(b)))
    lo = max(0, at - width // 3)

    def cut(s: str) -> str:
        piece = s[lo: lo + width]
        return ("…" if lo else "") + piece + ("…" if lo + width < len(s) else "")

    return clip(cut(a), width + 2), clip(cut(b), width + 2), at


def _text_diff(part: str, a: str, b: str) -> PartDiff:
    ea, eb, at = _excerpts(a, b)
    return PartDiff(part=part, detail=f"first differs at character {at} "
                    f"({len(a)} vs {len(b)} chars)", expected=ea, got=eb)


def _messages_diff(a: list[Any], b: list[Any]) -> PartDiff:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            role = x.get("role", "?") if isinstance(x, dict) else "?"
            ea, eb, _ = _excerpts(canonical(x), canonical(y))
            return PartDiff(part="messages", detail=f"message {i} ({role}) differs",
                            expected=ea, got=eb)
    longer, which = (a, "recorded") if len(a) > len(b) else (b, "replayed")
    extra = longer[min(len(a), len(b))]
    return PartDiff(part="messages", detail=f"{len(a)} vs {len(b)} messages; the {which} "
                    "request has more", expected=str(len(a)), got=clip(canonical(extra), 62))


def _tools_diff(a: list[Any], b: list[Any]) -> PartDiff:
    names_a = [t.get("name") for t in a if isinstance(t, dict)]
    names_b = [t.get("name") for t in b if isinstance(t, dict)]
    if names_a != names_b:
        gone = [n for n in names_a if n not in names_b]
        new = [n for n in names_b if n not in names_a]
        detail = "tool menu changed" + (f"; removed {gone}" if gone else "") + (
            f"; added {new}" if new else "")
        return PartDiff(part="tools", detail=detail, expected=", ".join(map(str, names_a)),
                        got=", ".join(map(str, names_b)))
    i = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    ea, eb, _ = _excerpts(canonical(a[i]), canonical(b[i]))
    return PartDiff(part="tools", detail=f"tool {names_a[i]!r} differs", expected=ea, got=eb)


def request_parts_diff(recorded: str | None, replayed: str) -> tuple[PartDiff, ...]:
    """Which parts of a request (system prompt, messages, tools, model…) differ, with excerpts."""
    if recorded is None:
        return (PartDiff(part="request", detail="the recording has no call at this position "
                         "or did not keep its request text", expected="(not recorded)",
                         got=clip(replayed, 62)),)
    a: Mapping[str, Any] = json.loads(recorded)
    b: Mapping[str, Any] = json.loads(replayed)
    out: list[PartDiff] = []
    for key in ("model", "system", "messages", "tools", "temperature", "max_tokens"):
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        if key == "system":
            out.append(_text_diff("system prompt", str(x or ""), str(y or "")))
        elif key == "messages":
            out.append(_messages_diff(list(x or []), list(y or [])))
        elif key == "tools":
            out.append(_tools_diff(list(x or []), list(y or [])))
        else:
            out.append(PartDiff(part=key, detail=f"{key} changed", expected=repr(x),
                                got=repr(y)))
    return tuple(out)
