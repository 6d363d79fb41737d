"""One request text (the system text, or one message) cut into the parts recorded as landed
in it, exactly: each part where its text sits, the text between parts as parts of their own,
and the whitespace between them kept as it was, so the text without some parts is the
recorded text with just those parts (and the whitespace after each) taken out."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

__all__ = ["Layout", "Part", "split_text"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One part of a text: its id (an injection id), flavor and text."""

    id: str
    text: str
    flavor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """``seams[0] + parts[0] + seams[1] + parts[1] + … + seams[-1]`` is the text."""

    parts: tuple[Part, ...]
    seams: tuple[str, ...]
    missing: tuple[Part, ...] = ()
    """Landed parts whose text is not in the text (they cannot be removed)."""

    def text(self, drop: Collection[int] = ()) -> str:
        """The text without the parts at indexes ``drop``: each kept part followed by the
        seam that followed it, the next kept part after that (the seams after the parts
        dropped go with them)."""
        kept = [i for i in range(len(self.parts)) if i not in drop]
        if not kept:
            return ""
        out = [self.seams[0]]
        for n, i in enumerate(kept):
            out.append(self.parts[i].text)
            out.append(self.seams[i + 1] if n + 1 < len(kept) else self.seams[-1])
        return "".join(out)


def _around(outer: Part, inner: Sequence[Part]) -> list[Part]:
    """``outer`` as the text around the parts it holds (each bit under ``outer``'s id; the
    second and later as ``<id> part <n>``) with those parts in their places."""
    bits: list[str | Part] = []
    pos = 0
    for part in sorted(inner, key=lambda q: outer.text.find(q.text)):
        at = outer.text.find(part.text, pos)
        if at < 0:  # overlaps a part already placed
            continue
        bits += [outer.text[pos:at], part]
        pos = at + len(part.text)
    bits.append(outer.text[pos:])
    out: list[Part] = []
    n = 0
    for bit in bits:
        if isinstance(bit, Part):
            out.append(bit)
            continue
        text = bit.strip()
        if text:
            n += 1
            out.append(replace(outer, id=outer.id if n == 1 else f"{outer.id} part {n}",
                               text=text))
    return out


def _holders(landed: Sequence[Part], text: str) -> dict[int, int]:
    """For each landed part that sits inside a longer one (where each first occurs in
    ``text``), the index of the outermost part holding it: one sweep over the parts by
    position, not a comparison of every pair."""
    found, hint = [], 0
    for i, p in enumerate(landed):  # parts land in order, mostly: look after the last one
        at = text.find(p.text, hint) if p.text else -1
        at = text.find(p.text, 0, hint + len(p.text)) if at < 0 and p.text else at
        if at >= 0:
            found.append((at, -len(p.text), i))
            hint = at
    stack: list[tuple[int, int, int]] = []  # (start, end, index) of the parts around here
    out: dict[int, int] = {}
    for start, minus, i in sorted(found):
        end = start - minus
        while stack and stack[-1][1] < end:
            stack.pop()
        top = stack[-1] if stack else None
        if top is not None and top[1] - top[0] > end - start:
            out[i] = stack[0][2] if stack[0][1] - stack[0][0] > end - start else top[2]
        stack.append((start, end, i))
    return out


def _unnest(landed: Sequence[Part], text: str) -> list[Part]:
    """The landed parts with every part that holds others (an instruction a foreign agent
    wrote with its retrieved documents inside) taken apart around them, so each document is
    a piece of its own."""
    holders = _holders(landed, text)
    inner: dict[int, list[Part]] = {}
    for i, h in holders.items():
        inner.setdefault(h, []).append(landed[i])
    out: list[Part] = []
    for i, part in enumerate(landed):
        if i in holders:
            continue
        out += _around(part, inner[i]) if i in inner else [part]
    return out


def _gap(text: str, gap: str, parts: list[Part], seams: list[str]) -> None:
    """The text between two located parts: whitespace only is a seam; anything else is a
    part of its own (``<gap> part #i``) between the whitespace around it."""
    core = text.strip()
    if not core:
        seams[-1] += text
        return
    lead = text[:len(text) - len(text.lstrip())]
    seams[-1] += lead
    parts.append(Part(id=f"{gap} part #{len(parts)}", text=core))
    seams.append(text[len(lead) + len(core):])


def split_text(text: str, landed: Sequence[Part], gap: str = "system") -> Layout:
    """``text`` as its landed parts in the order they sit (module doc); parts not found
    verbatim (or overlapping one placed before) are ``missing``."""
    parts: list[Part] = []
    seams = [""]
    missing: list[Part] = []
    pos = 0
    for part in _unnest(landed, text):
        at = text.find(part.text, pos) if part.text else -1
        if at < 0:
            missing.append(part)
            continue
        _gap(text[pos:at], gap, parts, seams)
        parts.append(part)
        seams.append("")
        pos = at + len(part.text)
    _gap(text[pos:], gap, parts, seams)
    return Layout(parts=tuple(parts), seams=tuple(seams), missing=tuple(missing))
