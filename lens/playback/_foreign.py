"""What a reader must say about a run footprint did not run: its ``run.source``."""

from __future__ import annotations

from footprint.events import RunSource

__all__ = ["source_lines", "source_note"]


def source_note(source: RunSource) -> str:
    """One line: whose trace the run was mapped from, in which dialect, at what fidelity."""
    return (f"mapped from a trace of {source.framework} ({source.dialect}, "
            f"fidelity {source.fidelity}); not run by footprint")


def source_lines(source: RunSource) -> list[str]:
    """The note, what the trace cannot tell, and every piece of content flagged as cut."""
    lines = [f"source: {source_note(source)}"]
    lines += [f"  not in the trace: {u}" for u in source.unknown]
    lines += [f"  flagged: {f}" for f in source.flagged]
    return lines
