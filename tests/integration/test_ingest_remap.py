"""`--remap` never stores a run twice: after a compaction merged the mapping's files with
others (under an id the remap cannot drop) it is refused, and the store is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from otlp_build import agent_trace, trace_request

from footprint._errors import ConfigError
from recorder import open_store
from recorder.ingest import Intake, remap
from recorder.write._compact import compact


def _counts(store: Path) -> tuple[int, int, int]:
    with open_store(store) as s:
        return tuple(s.rows("SELECT count(*), count(DISTINCT (run_id, seq)), "  # type: ignore[return-value]
                            "count(DISTINCT run_id) FROM events")[0])


def test_given_a_compaction_merged_the_mapped_files_when_remapped_then_refused_and_nothing_doubles(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    for n in (1, 2):  # two intakes: two writers, two small files a compaction merges
        with Intake(store) as intake:
            intake.take(trace_request(agent_trace(n)).SerializeToString(), signal="traces",
                        fmt="pb")
    assert compact(store), "nothing was compacted"
    before = _counts(store)
    assert before[0] == before[1] and before[2] == 2
    with pytest.raises(ConfigError, match="merged by a compaction hold mapped runs"):
        remap(store)
    assert _counts(store) == before
