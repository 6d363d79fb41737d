"""Cost: USD per call, run, model and skill from genai-prices; unknown models are "unpriced"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_support import page_holding
from genai_prices import Usage, calc_price
from hypothesis import given
from hypothesis import strategies as st

from footprint._errors import ConfigError
from footprint.agent import Agent, SeededIds, StepClock
from footprint.providers import FunctionModel, LLMRequest, LLMResponse, call
from footprint.providers import Usage as Tokens
from lens._examples.support_desk import make_agent
from recorder import ParquetSink, Recorder, RunQuery, list_runs, open_store
from recorder.otel._mapping import RunTrace
from recorder.store._prices import Price, Prices, load_prices, prices_version
from recorder.write._layout import SUMMARIES

USAGES = (Tokens(input_tokens=1200, output_tokens=40, cache_read_tokens=1000),
          Tokens(input_tokens=2300, output_tokens=75))

SKILL_COST_SQL = re.search(r"```sql\n-- which skill costs most\n(.*?)```",
                           page_holding("-- which skill costs most").read_text(encoding="utf-8"),
                           re.S).group(1)  # type: ignore[union-attr]
"""The documentation's "which skill costs most" query (docs/concepts/cost.md), as written."""


def _genai(usage: Tokens, model: str) -> float:
    return float(calc_price(Usage(input_tokens=usage.input_tokens,
                                  output_tokens=usage.output_tokens,
                                  cache_read_tokens=usage.cache_read_tokens or 0), model)
                 .total_price)


def _record(root: Path, model: str, usages: tuple[Tokens, Tokens] = USAGES) -> str:
    """One run of ``model``: a tool call, then an answer, each reply with ``usages``."""

    def brain(request: LLMRequest) -> LLMResponse:
        if not any(m.role == "tool" for m in request.messages):
            return LLMResponse(content="", tool_calls=(call("lookup_order", order_id="A-1"),),
                               usage=usages[0], stop_reason="tool_use")
        return LLMResponse(content="Shipped.", usage=usages[1])

    def lookup_order(order_id: str) -> str:
        """Find an order by its id."""
        return f"order {order_id}: shipped"

    with Recorder(sinks=[ParquetSink(root)]) as rec:
        agent = Agent(provider=FunctionModel(brain, name="openai"), model=model,
                      tools=[lookup_order], sink=rec, clock=StepClock(), ids=SeededIds(3))
        return agent.run_sync("where is A-1?").run_id


def _footprint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lens.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def priced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("priced") / "store"
    return root, _record(root, "gpt-4o-mini")


def test_given_a_run_of_a_priced_model_when_read_then_its_cost_matches_genai_prices(
    priced: tuple[Path, str],
) -> None:
    root, run_id = priced
    expected = [_genai(u, "gpt-4o-mini") for u in USAGES]
    with open_store(root) as store:
        calls = store.rows("SELECT cost_usd FROM llm_calls WHERE run_id = ? ORDER BY start_seq",
                           [run_id])
        run = store.rows("SELECT cost_usd, unpriced_calls FROM runs WHERE run_id = ?",
                         [run_id])[0]
        (listed,) = list_runs(store, RunQuery(run_ids=(run_id,))).to_pylist()
        source = store.rows("SELECT source FROM prices WHERE model = 'gpt-4o-mini'")
    assert [c[0] for c in calls] == pytest.approx(expected, rel=1e-9)
    assert run == (pytest.approx(sum(expected), rel=1e-9), 0)
    assert (listed["cost_usd"], listed["unpriced_calls"]) == run
    assert source == [(prices_version(),)]


def test_given_a_priced_run_when_listed_and_shown_then_the_cli_prints_its_dollars(
    priced: tuple[Path, str],
) -> None:
    root, run_id = priced
    total = f"${sum(_genai(u, 'gpt-4o-mini') for u in USAGES):.8f}".rstrip("0")
    listed = _footprint("runs", "--store", str(root))
    shown = _footprint("show", run_id, "--store", str(root))
    assert listed.returncode == 0 and shown.returncode == 0, listed.stderr + shown.stderr
    assert total in listed.stdout and f"\ncost: {total}\n" in shown.stdout
    assert f"{_genai(USAGES[0], 'gpt-4o-mini'):.8f}".rstrip("0") in shown.stdout


def test_given_an_unknown_model_when_read_then_it_is_unpriced_never_zero(tmp_path: Path) -> None:
    run_id = _record(tmp_path, "acme-private-llm-7")
    with open_store(tmp_path) as store:
        assert store.rows("SELECT cost_usd FROM llm_calls") == [(None,), (None,)]
        assert store.rows("SELECT cost_usd, unpriced_calls FROM runs") == [(None, 2)]
        assert store.rows("SELECT count(*) FROM prices") == [(0,)]
    listed = _footprint("runs", "--store", str(tmp_path))
    line = next(x for x in listed.stdout.splitlines() if x.startswith(run_id[:30]))
    assert "unpriced" in line and "$0" not in line


def test_given_a_prices_file_when_read_then_a_private_model_is_priced_by_it(
    tmp_path: Path,
) -> None:
    _record(tmp_path, "acme-private-llm-7")
    (tmp_path / "prices.json").write_text(json.dumps(
        {"acme-private-llm-7": {"input_mtok": 2.0, "output_mtok": 8.0, "cache_read_mtok": 0.5}}))
    expected = sum((((u.input_tokens or 0) - (u.cache_read_tokens or 0)) * 2.0
                    + (u.cache_read_tokens or 0) * 0.5 + (u.output_tokens or 0) * 8.0) / 1e6
                   for u in USAGES)
    with open_store(tmp_path) as store:
        assert store.rows("SELECT cost_usd, unpriced_calls FROM runs") == [
            (pytest.approx(expected, rel=1e-12), 0)]
        assert store.rows("SELECT source FROM prices") == [("prices.json",)]


@pytest.mark.parametrize(("content", "fix"), [
    ('{"m": {"input_mtok": "cheap", "output_mtok": 1}}', "input_mtok='cheap' is not a price"),
    ('{"m": {"input_mtok": 1, "output_mtok": 1, "ouput": 2}}', "unknown key 'ouput'"),
    ('["m"]', "write an object"),
    ("{not json", "is not JSON"),
])
def test_given_a_bad_prices_file_when_the_cli_reads_costs_then_one_line_and_exit_2(
    priced: tuple[Path, str], tmp_path: Path, content: str, fix: str,
) -> None:
    root = tmp_path / "store"
    _record(root, "gpt-4o-mini")
    (root / "prices.json").write_text(content)
    out = _footprint("runs", "--store", str(root))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert fix in out.stderr and "prices.json" in out.stderr
    with pytest.raises(ConfigError, match=r"prices\.json"):
        load_prices(root)


def test_given_the_desk_with_prices_when_asked_which_skill_costs_most_then_sql_answers(
    tmp_path: Path,
) -> None:
    with Recorder(sinks=[ParquetSink(tmp_path)]) as rec:
        make_agent(sink=rec).answer()
    rates = {"desk-standard": (1.0, 4.0), "desk-refunds": (3.0, 12.0), "desk-senior": (10.0, 40.0)}
    (tmp_path / "prices.json").write_text(json.dumps(
        {m: {"input_mtok": i, "output_mtok": o} for m, (i, o) in rates.items()}))
    with open_store(tmp_path) as store:
        answer = store.sql(SKILL_COST_SQL).fetchall()
        calls = store.rows("SELECT iteration, model, input_tokens, output_tokens FROM llm_calls")
        skills = dict(store.rows("SELECT DISTINCT iteration, injection_id FROM injections "
                                 "WHERE flavor = 'skill'"))
    by_skill: dict[str, float] = {}
    for iteration, model, tin, tout in calls:
        i, o = rates[model]
        skill = skills[iteration]
        by_skill[skill] = by_skill.get(skill, 0.0) + (tin * i + tout * o) / 1e6
    assert [s for s, _, _ in answer] == sorted(by_skill, key=by_skill.__getitem__, reverse=True)
    assert {s: u for s, u, _ in answer} == pytest.approx(by_skill, rel=1e-12)
    assert answer[0][0] == "refund"


def test_given_a_priced_run_when_mapped_to_spans_then_chat_spans_carry_cost_usd(
    priced: tuple[Path, str],
) -> None:
    root, run_id = priced
    from recorder import EventQuery, StoreReader

    with open_store(root) as store:
        events = list(StoreReader(store).events(EventQuery(run_id=run_id)))
    trace = RunTrace(run_id)
    spans = [s for e in events for s in trace.feed(e)]
    chats = [s.attributes["footprint.usage.cost_usd"] for s in spans if s.kind == "client"]
    assert chats == pytest.approx([_genai(u, "gpt-4o-mini") for u in USAGES], rel=1e-9)
    root_span = spans[-1]
    assert root_span.attributes["footprint.usage.cost_usd"] == pytest.approx(sum(chats))
    assert not any(k.startswith("gen_ai.usage.cost") for s in spans for k in s.attributes)


def test_given_an_unknown_model_when_mapped_to_spans_then_they_say_unpriced(tmp_path: Path) -> None:
    run_id = _record(tmp_path, "acme-private-llm-7")
    from recorder import EventQuery, StoreReader

    with open_store(tmp_path) as store:
        events = list(StoreReader(store).events(EventQuery(run_id=run_id)))
    trace = RunTrace(run_id, prices=Prices())
    spans = [s for e in events for s in trace.feed(e)]
    assert all("footprint.usage.cost_usd" not in s.attributes for s in spans)
    assert spans[-1].attributes["footprint.usage.unpriced_calls"] == 2


@given(tin=st.integers(0, 150_000), tout=st.integers(0, 50_000), cached=st.integers(0, 150_000),
       model=st.sampled_from(["gpt-4o-mini", "claude-sonnet-4-5", "gpt-4.1"]))
def test_given_any_usage_when_priced_then_price_cost_equals_genai_prices(
    tin: int, tout: int, cached: int, model: str,
) -> None:
    cached = min(cached, tin)
    price = Prices().price(model)
    assert price is not None
    ours = price.cost(input_tokens=tin, output_tokens=tout, cache_read=cached)
    theirs = calc_price(Usage(input_tokens=tin, output_tokens=tout, cache_read_tokens=cached),
                        model).total_price
    assert ours == pytest.approx(float(theirs), rel=1e-9, abs=1e-15)
    apart = price.cost(input_tokens=tin - cached, output_tokens=tout, cache_read=cached,
                       provider="anthropic")
    assert apart == pytest.approx(ours, rel=1e-12)


@pytest.mark.parametrize(("overrides", "fix"), [
    ({"m": {"input_mtok": -1, "output_mtok": 1}}, "input_mtok=-1 is not a price"),
    ({"m": {"output_mtok": 1}}, "input_mtok=None is not a price"),
    ({"": {"input_mtok": 1, "output_mtok": 1}}, "non-empty text"),
    ({"m": 3}, "pass {'input_mtok'"),
])
def test_given_bad_overrides_when_prices_are_built_then_config_error_names_the_fix(
    overrides: dict[str, object], fix: str,
) -> None:
    with pytest.raises(ConfigError) as caught:
        Prices(overrides)  # type: ignore[arg-type]
    assert fix in str(caught.value)
    with pytest.raises(ConfigError, match="Price"):
        Price(input_mtok=float("nan"), output_mtok=1.0)


def test_given_a_price_cache_when_read_then_genai_prices_is_not_asked_again(
    priced: tuple[Path, str], tmp_path: Path,
) -> None:
    root, _ = priced
    with open_store(root) as store:
        store.rows("SELECT count(*) FROM prices")
    cache = load_prices(root).cache
    assert cache is not None and cache.name.startswith(f"prices.{prices_version().split()[1]}.")
    assert "gpt-4o-mini" in json.loads(cache.read_text())
    planted = tmp_path / "prices.json"
    planted.write_text(json.dumps({"only-in-the-cache": {
        "input_mtok": 1.0, "output_mtok": 2.0, "cache_read_mtok": None,
        "cache_write_mtok": None, "tiered": False}}))
    found = Prices(cache=planted).price("only-in-the-cache")
    assert found is not None and found.output_mtok == 2.0
    planted.write_text("{torn")
    assert Prices(cache=planted).price("only-in-the-cache") is None


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "OpenAI/GPT-4o-mini"])
def test_given_a_model_named_with_its_providers_prefix_when_read_then_genai_prices_prices_it(
    tmp_path: Path, model: str,
) -> None:
    from genai_prices import __version__ as genai_version

    stale = tmp_path / SUMMARIES / f"prices.{genai_version}.json"  # what the old lookup kept
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({model: None}))
    run_id = _record(tmp_path, model)
    expected = sum(_genai(u, "gpt-4o-mini") for u in USAGES)
    with open_store(tmp_path) as store:
        assert store.rows("SELECT cost_usd, unpriced_calls FROM runs") == [
            (pytest.approx(expected, rel=1e-9), 0)]
    listed = _footprint("runs", "--store", str(tmp_path))
    line = next(x for x in listed.stdout.splitlines() if x.startswith(run_id[:30]))
    assert f"{expected:.8f}".rstrip("0") in line and "unpriced" not in line


@pytest.mark.parametrize("model", ["acme/gpt-4o-mini-private", "nosuchprovider/model-x"])
def test_given_a_prefixed_name_genai_prices_does_not_know_when_read_then_it_is_unpriced(
    model: str,
) -> None:
    assert Prices().price(model) is None


def test_given_replies_without_usage_when_read_then_tokens_are_unknown_and_unpriced_never_zero(
    tmp_path: Path,
) -> None:
    unknown = Tokens(input_tokens=None, output_tokens=None)
    run_id = _record(tmp_path, "gpt-4o-mini", (unknown, unknown))
    with open_store(tmp_path) as store:
        assert store.rows("SELECT input_tokens, output_tokens, cost_usd FROM llm_calls") == [
            (None, None, None)] * 2
        assert store.rows("SELECT cost_usd, unpriced_calls FROM runs") == [(None, 2)]
    shown = _footprint("show", run_id, "--store", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("tokens unknown (no usage reported)") == 2
    assert "0+0 tokens" not in shown.stdout
