"""Experiments: a dataset tried with a release, compared item by item, every regression
explained (``examples/release_regression.py``), the exact paired test, stored results."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import RunError
from lens.cli import main as footprint
from lens.explain._experiment_compare import exact_p
from recorder import open_store
from recorder._datasets import load_dataset
from recorder._experiments import load_experiment

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import release_regression as example  # noqa: E402

AGENT = f"{ROOT / 'examples' / 'release_regression.py'}"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = footprint(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's store: production, the dataset and its three experiments."""
    store = tmp_path_factory.mktemp("release") / "store"
    assert example.main([str(store)]) == 0
    return store


def _compare(capsys: pytest.CaptureFixture[str], store: Path, a: str, b: str,
             *extra: str) -> tuple[int, dict[str, object]]:
    code, out = _cli(capsys, "experiment", "compare", a, b, "--format", "json",
                     "--store", str(store), *extra)
    return code, json.loads(out.splitlines()[0])


def test_given_a_release_changing_one_injection_when_compared_then_its_3_regressions_name_it(
    ran: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _compare(capsys, ran, "baseline", "changed", "--fail-on-regression")
    assert code == 1
    items = {i.item_id: i for i in load_dataset(ran, "helpdesk").items}
    regressed = [i for i in report["items"] if i["change"] == "regressed"]  # type: ignore[attr-defined]
    assert sorted(items[i["item_id"]].message for i in regressed) == sorted(example.OPENED)
    assert [i["cause"] for i in regressed] == ["returns"] * 3
    assert all("returns" in i["divergence"] and "context.injected" in i["divergence"]
               for i in regressed)
    assert report["summary"]["regressed"] == 3  # type: ignore[index]
    assert report["summary"]["unchanged"] == 17  # type: ignore[index]
    assert report["summary"]["p_value"] == pytest.approx(0.25)  # type: ignore[index]


def test_given_a_release_that_only_rewords_when_compared_then_nothing_regresses_and_no_cause(
    ran: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _compare(capsys, ran, "baseline", "reworded", "--fail-on-regression")
    assert code == 0
    assert report["summary"]["regressed"] == 0  # type: ignore[index]
    assert [i["cause"] for i in report["items"]] == [None] * 20  # type: ignore[attr-defined]


def test_given_the_releases_swapped_when_compared_then_the_3_items_improved_and_none_explained(
    ran: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _compare(capsys, ran, "changed", "baseline", "--fail-on-regression")
    assert code == 0
    summary = report["summary"]
    assert (summary["improved"], summary["regressed"], summary["p_value"]) == (  # type: ignore[index]
        3, 0, pytest.approx(0.25))
    assert {i["divergence"] for i in report["items"]} == {None}  # type: ignore[attr-defined]


def test_given_the_comparison_as_a_table_when_printed_then_it_names_the_cause_per_item(
    ran: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _cli(capsys, "experiment", "compare", "baseline", "changed", "--store",
                     str(ran))
    assert code == 0
    assert "3 regressed, 0 improved, 17 unchanged" in out
    assert out.count("cause: returns (removing 'returns' from B") == 3


def test_given_experiments_when_queried_in_sql_then_results_link_to_tagged_runs(
    ran: Path,
) -> None:
    with open_store(ran) as store:
        rows = store.rows("SELECT r.run_id, e.item_id, list_contains(r.tags, "
                          "'experiment:changed') FROM experiment_results e JOIN runs r "
                          "USING (run_id) WHERE e.experiment = 'changed'")
        summary = store.rows("SELECT experiment, items, passed FROM experiments "
                             "ORDER BY experiment")
    assert len(rows) == 20 and all(tagged for _, _, tagged in rows)
    assert summary == [("baseline", 20, 20), ("changed", 20, 17), ("reworded", 20, 20)]


def test_given_repeats_when_compared_then_each_item_pairs_every_repeat(
    ran: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    shutil.copytree(ran, store)
    for name, factory in (("a3", "baseline"), ("b3", "release_changed")):
        code, out = _cli(capsys, "experiment", "run", "helpdesk", "--agent",
                         f"{AGENT}:{factory}", "--name", name, "--repeat", "3",
                         "--concurrency", "4", "--store", str(store))
        assert code == 0, out
    code, report = _compare(capsys, store, "a3", "b3")
    regressed = [i for i in report["items"] if i["change"] == "regressed"]  # type: ignore[attr-defined]
    assert [(i["pairs"], i["regressed_pairs"]) for i in regressed] == [(3, 3)] * 3
    assert [i["p_value"] for i in regressed] == [pytest.approx(0.25)] * 3


def test_given_a_changed_value_that_removal_cannot_restore_when_compared_then_a_swap_names_it(
    ran: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    shutil.copytree(ran, store)
    code, out = _cli(capsys, "experiment", "run", "helpdesk", "--agent",
                     f"{AGENT}:release_slow_shipping", "--name", "slow", "--store", str(store))
    assert code == 0, out
    _, report = _compare(capsys, store, "baseline", "slow")
    regressed = [i for i in report["items"] if i["change"] == "regressed"]  # type: ignore[attr-defined]
    assert len(regressed) == len(example.SHIPPING)
    assert {i["cause"] for i in regressed} == {"shipping"}
    assert all(i["cause_note"].startswith("putting A's version of 'shipping' into B")
               for i in regressed)


def verdict(answer: str) -> str:
    """A judge for ``--judge``: pass when the answer gives a number of days."""
    return "pass" if "3 days" in answer or "30 days" in answer else "fail"


def test_given_a_judge_when_both_releases_are_judged_then_the_same_3_regress_with_their_cause(
    ran: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    shutil.copytree(ran, store)
    for name, factory in (("ja", "baseline"), ("jb", "release_changed")):
        code, out = _cli(capsys, "experiment", "run", "helpdesk", "--agent",
                         f"{AGENT}:{factory}", "--name", name, "--judge",
                         f"{__file__}:verdict", "--store", str(store))
        assert code == 0, out
    _, report = _compare(capsys, store, "ja", "jb")
    regressed = [i for i in report["items"] if i["change"] == "regressed"]  # type: ignore[attr-defined]
    assert [(i["a_verdict"], i["b_verdict"], i["cause"]) for i in regressed] == [
        ("pass", "fail", "returns")] * 3


def test_given_an_edited_result_when_loaded_then_the_chain_refuses_it(
    ran: Path, tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    shutil.copytree(ran, store)
    path = store / "experiments" / "changed.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[5]["passed"] = not rows[5]["passed"]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with pytest.raises(RunError, match="row 5 was changed"):
        load_experiment(store, "changed")


def _binomial_tail(worse: int, better: int) -> float:
    """Brute force: the probability, under fair coins, of a split as uneven or more."""
    n = worse + better
    if n == 0:
        return 1.0
    extreme = abs(worse - better)
    uneven = sum(1 for flips in itertools.product((0, 1), repeat=n)
                 if abs(2 * sum(flips) - n) >= extreme)
    return uneven * 0.5**n


@given(st.integers(0, 8), st.integers(0, 8))
def test_given_discordant_pairs_when_tested_then_exact_p_is_the_two_sided_binomial_tail(
    worse: int, better: int,
) -> None:
    assert math.isclose(exact_p(worse, better), _binomial_tail(worse, better))
    assert exact_p(worse, better) == exact_p(better, worse)


_SLOW_AGENT = '''
import time
from footprint import Agent, FunctionModel


def _slow(request):
    time.sleep(0.2)
    return "slow answer"


def make_agent(sink=None):  # the system clock: runs.started is when a run began
    return Agent(provider=FunctionModel(_slow), model="slow", sink=sink)
'''


def test_given_ctrl_c_during_a_run_when_it_stops_then_started_runs_end_whole_and_no_result(
    tmp_path: Path,
) -> None:
    import os
    import signal
    import subprocess
    import time

    from recorder import ParquetSink, Recorder
    from recorder._datasets import DatasetItem, add_items

    store = tmp_path / "store"
    Recorder(sinks=[ParquetSink(store)]).close()
    add_items(store, "many", [DatasetItem(item_id=f"i{k}", message=f"q{k}") for k in range(60)])
    (tmp_path / "slow_agent.py").write_text(_SLOW_AGENT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    proc = subprocess.Popen([sys.executable, "-m", "lens.cli", "experiment", "run", "many",
                             "--agent", f"{tmp_path / 'slow_agent.py'}:make_agent",
                             "--name", "cut", "--concurrency", "2", "--store", str(store)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    before = set((store / "live").glob("*"))
    deadline = time.monotonic() + 60
    while set((store / "live").glob("*")) == before and time.monotonic() < deadline:
        time.sleep(0.05)  # until the first run's events reach the store
    time.sleep(0.5)  # then a few items of 0.2 s, two at a time
    sent, sent_at = time.perf_counter(), time.time()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.perf_counter() - sent < 3.0  # 60 items x 0.2 s / 2 would take 6 s
    assert not (store / "experiments" / "cut.parquet").exists()
    with open_store(store) as s:
        rows = s.rows("SELECT status, epoch_us(started) / 1e6 FROM runs WHERE "
                      "list_contains(tags, 'experiment:cut')")
    # the runs under way ended whole; queued items did not start once Ctrl-C was pressed
    # (at most one per worker in the instant before the interrupt was handled)
    assert rows and {status for status, _ in rows} == {"complete"}
    assert sum(1 for _, began in rows if began > sent_at) <= 2, (sent_at, sorted(rows))
