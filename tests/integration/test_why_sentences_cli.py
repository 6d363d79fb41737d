"""``footprint why --agent … [--no-sentences]`` as a real subprocess on a recorded store: the
plan on stderr says the sentence step before any re-run, the text headline names the planted
line, the JSON carries its offsets and validates, and ``--no-sentences`` makes no sentence
trial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from planted_support import ROOT
from sentence_cases import cases, make_table_agent

from footprint import SeededIds
from lens.explain._report import schema
from recorder import ParquetSink, Recorder

REF = "tests/sentence_cases.py:make_table_agent"
CASE = next(c for c in cases() if c.name == "table_40_lines")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("table") / "store"
    recorder = Recorder(sinks=[ParquetSink(path)])
    try:
        make_table_agent(sink=recorder).variant(ids=SeededIds(7)).run_sync(CASE.question)
    finally:
        recorder.close()
    return path


def _why(store: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FOOTPRINT_STORE": str(store)}
    done = subprocess.run([sys.executable, "-m", "lens.cli", "why", "last", "--agent", REF,
                           *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-400:]
    return done


def test_given_a_wrong_line_when_why_runs_then_the_plan_and_the_headline_name_the_sentence_step(
        store: Path) -> None:
    done = _why(store)
    first, second = done.stderr.splitlines()[:2]
    assert first.startswith("footprint why: plan: 12 baseline re-runs"), first
    assert second.startswith("footprint why: plan: then, inside each confirmed piece"), second
    headline = done.stdout.splitlines()[:4]
    assert f"sentence: line 23 of fact 'manual': “{CASE.planted[0]}”" in headline, headline


@pytest.fixture(scope="module")
def as_json(store: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_why(store, "--json").stdout)
    return data


def test_given_json_when_why_runs_then_the_sentence_has_its_offsets_and_experiment(
        as_json: dict[str, Any]) -> None:
    data = as_json
    jsonschema.validate(data, schema())
    (claim,) = data["sentences"]
    (span,) = claim["spans"]
    assert claim["text"][span["start"]:span["end"]] == CASE.planted[0] == span["text"]
    assert [c["kind"] for c in data["claims"]] == ["cause", "sentence"]
    assert data["claims"][1]["experiments"] == claim["experiments"]


def test_given_no_sentences_when_why_runs_then_no_sentence_trial_is_made(
        store: Path, as_json: dict[str, Any]) -> None:
    on = as_json
    done = _why(store, "--json", "--no-sentences")
    off = json.loads(done.stdout)
    assert off["sentences"] == [] and "no sentence search" in done.stderr
    assert on["reruns"] - off["reruns"] == on["sentences"][0]["trials"] > 0
    assert [c["kind"] for c in off["claims"]] == ["cause"]
