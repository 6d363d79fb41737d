"""The why report's verdicts as the lens draws them: one place decides each suspect's class
and its colour, and the words are the CLI's own (``lens.explain`` ``verdict_line``,
``headline``, ``path_line``).

The classes, as ``footprint why`` words them:

* ``root`` — a confirmed cause of the answer's value (``CAUSAL … root cause``);
* ``mediator`` — confirmed, on the causal path the root produced (``CAUSAL … on the path``);
* ``context`` — the user's own message whose removal changed the value (``CONTEXT``):
  what the user said, never a root cause;
* ``necessary`` — its removal lost the answer (``NECESSARY``): needed, not a cause;
* ``member`` — one piece of a confirmed culprit set (``part of a culprit set``): alone it
  changed nothing, with the rest of its set it did;
* ``apart`` — a confirmed set the headline does not name: it holds a piece that does it
  alone, or it is everything but the confirmed cause (``not a cause of its own``);
* ``wording`` — only the wording changed (``WORDING``): the same facts written otherwise;
* ``not-confirmed``, ``untested``, ``broke``, ``inconclusive`` — as the CLI says them;
* ``unsearched`` — a correlational report: no trial was made.
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text

from lens.explain._report import Suspect, WhyReport, headline, verdict_line
from lens.tui._summary import clip

__all__ = ["CLASSES", "VerdictClass", "headline_text", "suspect_prompt", "verdict_class"]

VerdictClass = Literal["root", "mediator", "context", "necessary", "member", "apart", "wording",
                       "not-confirmed", "untested", "broke", "inconclusive", "unsearched"]

CLASSES: dict[VerdictClass, tuple[str, str]] = {
    "root": ("CAUSAL · root cause", "bold red"),
    "mediator": ("CAUSAL · on the path", "red"),
    "context": ("CONTEXT · the user's words", "yellow"),
    "necessary": ("NECESSARY", "bold blue"),
    "member": ("part of a culprit set", "dark_orange"),
    "apart": ("not a cause of its own", "dark_orange"),
    "wording": ("WORDING", "cyan"),
    "not-confirmed": ("not confirmed", "green"),
    "untested": ("untested", "dim"),
    "broke": ("broke", "magenta"),
    "inconclusive": ("inconclusive", "bold yellow"),
    "unsearched": ("not tested", "dim"),
}
"""Each class: the tag the suspect list shows (the CLI's words) and its colour."""

_CONCLUSION_STYLE = {"confirmed": "bold red", "inconclusive": "bold yellow",
                     "cause-not-found": "bold green", "broke": "bold magenta"}


def _in_confirmed_set(s: Suspect, r: WhyReport) -> bool:
    """``s`` is one of the pieces of a culprit set the report confirmed."""
    if s.kind == "set" or s.id is None:
        return False
    return any(x.kind == "set" and x.verdict == "confirmed" and s.id in (x.ids or ())
               for x in r.suspects)


def verdict_class(s: Suspect, r: WhyReport) -> VerdictClass:
    """The suspect's class in report ``r`` (module doc); its effect and role decide a
    confirmed one, as ``verdict_line`` words it."""
    if s.verdict is None:
        return "unsearched"
    if s.verdict == "confirmed":
        if s.effect == "lost":
            return "necessary"
        if s.effect == "wording":
            return "wording"
        if s.role == "context":
            return "context"
        if s.kind == "set" and s.role is None and r.conclusion == "confirmed":
            return "apart"
        return "mediator" if s.role == "mediator" else "root"
    if _in_confirmed_set(s, r):
        return "member"
    return s.verdict


def suspect_prompt(s: Suspect, r: WhyReport) -> Text:
    """``rank. [kind] label  TAG`` in the class's colour, then the CLI's verdict line."""
    cls = verdict_class(s, r)
    tag, style = CLASSES[cls]
    text = Text()
    text.append(f"{s.rank:>2}. [{s.kind}] {clip(s.label, 48):<48}", style="bold")
    text.append(f" {tag}", style=style)
    line = verdict_line(s, r)
    if line is not None:
        text.append(f"\n    {clip(line, 160)}", style=style if cls != "unsearched" else "dim")
    return text


def headline_text(report: WhyReport) -> Text:
    """The report's first lines exactly as ``footprint why`` prints them: the conclusion,
    the causal path (root first), the pieces only necessary and the sentence(s) named inside
    a root piece (unknown ones as inconclusive), each in its class's colour."""
    first, *rest = headline(report)
    text = Text(first, style=_CONCLUSION_STYLE.get(report.conclusion, "bold"))
    for line in rest:
        text.append("\n")
        if line.startswith("path: "):
            _path(text, report)
        elif line.startswith("sentence"):  # the sentence(s) named inside a root piece
            text.append(line, style=CLASSES["inconclusive" if line.startswith(
                "sentence of ") else "root"][1])
        else:
            text.append(line, style=CLASSES["necessary"][1])
    return text


def _path(text: Text, report: WhyReport) -> None:
    """``path: a → b → answer``: the root in the root's colour, each later hop in the
    mediator's, the answer plain (the same words as ``path_line``)."""
    text.append("path: ", style="bold")
    for i, hop in enumerate(report.path):
        if i:
            text.append(" → ", style="dim")
        last = i == len(report.path) - 1
        style = "bold" if last else CLASSES["root" if i == 0 else "mediator"][1]
        text.append(hop, style=style)
