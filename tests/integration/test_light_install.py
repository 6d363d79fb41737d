"""An agent process records with the engine and the recorder alone: the lens, the TUI and
web stack, OpenTelemetry and the query engine are never imported to record a run, and the
``footprint`` command says in one line what a record-only install lacks."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from recorder import open_store, verify_run

ROOT = Path(__file__).resolve().parents[2]

NOT_NEEDED_TO_RECORD = ("lens", "textual", "textual_serve", "textual_plotext", "plotext",
                        "rich", "aiohttp", "opentelemetry", "grpc", "google", "duckdb",
                        "jsonschema", "genai_prices", "babel", "pint", "dateparser",
                        "text_to_num")
"""Top-level packages of the default install that recording a run must not need."""



def _absent(names: tuple[str, ...]) -> str:
    """Code that makes ``names`` unimportable, as in an install without them."""
    return textwrap.dedent(f"""
        import importlib.abc, sys
        class Absent(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {names!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Absent())
    """)


RECORD = _absent(NOT_NEEDED_TO_RECORD) + textwrap.dedent("""
    import json, sys
    from footprint import Agent, ScriptedModel, call, define_fact, tool
    from recorder import ParquetSink, Recorder

    def lookup(order_id: str) -> dict:
        "Look an order up."
        return {"order_id": order_id, "age_days": 47}

    with Recorder(sinks=[ParquetSink(sys.argv[1])]) as recorder:
        agent = Agent(provider=ScriptedModel([call("lookup", order_id="A1"),
                                              "DECLINED"]),
                      model="m", sink=recorder, tools=[tool(lookup)],
                      injections=[define_fact("policy", "Refunds within 30 days.")])
        run = agent.run_sync("Refund A1")
    print(json.dumps({"run_id": run.run_id, "answer": run.answer,
                      "modules": sorted({m.split(".")[0] for m in sys.modules})}))
""")


def test_given_the_lens_and_query_stacks_absent_when_an_agent_records_then_the_run_is_whole(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = subprocess.run([sys.executable, "-c", RECORD, str(store)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["answer"] == "DECLINED"
    assert set(out["modules"]) & set(NOT_NEEDED_TO_RECORD) == set()
    result = verify_run(open_store(store), out["run_id"])
    assert result.valid and result.complete, result.summary()


def test_given_a_record_only_install_when_a_query_command_runs_then_it_names_the_package(
        tmp_path: Path) -> None:
    script = _absent(("duckdb",)) + (
        "import sys\nfrom lens.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", script, "runs", "--store", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        "footprint runs: this install lacks the package 'duckdb' (a record-only install?); "
        "`pip install footprint-lens` installs what every command needs"]
