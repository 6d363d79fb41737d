"""The documentation site builds with ``mkdocs build --strict``: no broken link, anchor or
nav entry, and every generated reference part (CLI, events, views, schemas, API) renders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_given_the_site_when_built_strictly_then_it_builds_with_its_generated_reference(
        tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "footprint receive" in cli and "--key-file" in cli
    events = (site / "reference" / "events" / "index.html").read_text(encoding="utf-8")
    assert "context.injected" in events and "admitted_by" in events
    schemas = (site / "reference" / "schemas" / "index.html").read_text(encoding="utf-8")
    assert schemas.count("draft/2020-12") >= 30 and "why_report.schema.json" in schemas
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="recorder.ParquetSink"' in api and 'id="footprint.Agent"' in api
