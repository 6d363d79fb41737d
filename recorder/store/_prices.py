"""Prices: USD per million tokens for each model, from ``genai-prices`` and the store's overrides.

Cost is computed at read time: the views join each model call to a small
``prices`` table (one row per model the store has seen) built here when the
views are made. ``genai-prices`` (maintained by its authors, updated with
each release) prices a model by name; a store may add or replace prices for
private or self-hosted models in a ``prices.json`` file at its root::

    {"my-private-llm": {"input_mtok": 0.5, "output_mtok": 1.5}}

(``cache_read_mtok`` and ``cache_write_mtok`` are optional: cache tokens
cost the input price when they are missing). A model neither knows is
*unpriced*: its calls' ``cost_usd`` is ``NULL``, never 0. A model with
tiered prices (by prompt size) is priced at its base tier (``tiered`` says
so). Token counts follow ``genai-prices``: input tokens include cache reads
and writes, except for the ``anthropic`` provider, whose usage counts them
apart (the views and spans add them back).
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footprint._errors import ConfigError
from recorder.store._views import CACHE_APART
from recorder.write._layout import SUMMARIES

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PRICES_DDL", "PRICES_FILE", "Price", "Prices", "load_prices", "prices_arrow",
           "prices_version", "usd"]

PRICES_FILE = "prices.json"
"""The store's own prices (``{model: {input_mtok, output_mtok, …}}``), beside ``events/``."""

_RATES = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")


def prices_version() -> str:
    """``genai-prices <version>``: the price table the costs come from."""
    from importlib.metadata import version

    return f"genai-prices {version('genai-prices')}"


def usd(cost: float | None, unpriced: int = 0) -> str:
    """A cost as footprint shows it (``runs``, ``show``, the lens): ``$0.000450``, or
    ``unpriced`` when it is ``None`` or ``unpriced`` calls are (never a made-up 0)."""
    if cost is None or unpriced:
        return "unpriced"
    return f"${cost:.8f}".rstrip("0").rstrip(".") if cost < 1 else f"${cost:,.2f}"


def _rate(where: str, name: str, value: object, *, required: bool) -> float | None:
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value < 0:
        raise ConfigError(f"{where}: {name}={value!r} is not a price; pass a number of USD "
                          f"per million tokens, e.g. {name}=0.5")
    return float(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """One model's prices, in USD per million tokens, and where they come from."""

    input_mtok: float
    output_mtok: float
    cache_read_mtok: float | None = None
    cache_write_mtok: float | None = None
    source: str = PRICES_FILE
    tiered: bool = False

    def __post_init__(self) -> None:
        for name in _RATES:
            _rate("Price", name, getattr(self, name), required=name in _RATES[:2])
        if not isinstance(self.source, str) or not self.source:
            raise ConfigError(f"Price(source={self.source!r}): name where the price comes from")

    def cost(self, *, input_tokens: int, output_tokens: int, cache_read: int = 0,
             cache_write: int = 0, provider: str | None = None) -> float:
        """USD for one call (``input_tokens`` as the provider ``provider`` recorded them)."""
        if provider in CACHE_APART:
            input_tokens += cache_read + cache_write
        plain = max(input_tokens - cache_read - cache_write, 0)
        read = self.input_mtok if self.cache_read_mtok is None else self.cache_read_mtok
        write = self.input_mtok if self.cache_write_mtok is None else self.cache_write_mtok
        return (plain * self.input_mtok + cache_read * read + cache_write * write
                + output_tokens * self.output_mtok) / 1e6


def _base(value: Any) -> tuple[float | None, bool]:
    """A ``genai-prices`` rate as a float (a tiered rate: its base tier, and ``True``)."""
    if value is None:
        return None, False
    base = getattr(value, "base", None)
    return (float(base), True) if base is not None else (float(value), False)


def _genai_model(model: str) -> Any:
    """``genai-prices``' model info for a name (``None``: it does not know it). A name with
    a provider's prefix (``openai/gpt-4o-mini``, as LiteLLM, gateways and other frameworks'
    traces name models) is looked up as that provider's model when the bare name is not
    one: ``genai-prices`` reads the prefix so for its ``litellm`` provider id."""
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    for provider_id in (None, "litellm") if "/" in model else (None,):
        try:
            return snapshot.find_provider_model(model, None, provider_id, None)[1]
        except LookupError:
            continue
    return None


def _from_genai(model: str) -> Price | None:
    info = _genai_model(model)
    if info is None:
        return None
    found = info.get_prices(datetime.datetime.now(datetime.UTC))
    rates = {name: _base(getattr(found, name, None)) for name in _RATES}
    if rates["input_mtok"][0] is None and rates["output_mtok"][0] is None:
        return None  # priced per request or per image, not per token
    return Price(input_mtok=rates["input_mtok"][0] or 0.0,
                 output_mtok=rates["output_mtok"][0] or 0.0,
                 cache_read_mtok=rates["cache_read_mtok"][0],
                 cache_write_mtok=rates["cache_write_mtok"][0],
                 source=prices_version(), tiered=any(t for _, t in rates.values()))


def _override(model: object, entry: object) -> Price:
    where = f"prices[{model!r}]"
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{where}: a model name must be non-empty text")
    if isinstance(entry, Price):
        return entry
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}={entry!r}: pass {{'input_mtok': …, 'output_mtok': …}}")
    unknown = sorted(set(entry) - set(_RATES))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; the keys are "
                          f"{', '.join(_RATES)}")
    rates = {n: _rate(where, n, entry.get(n), required=n in _RATES[:2]) for n in _RATES}
    return Price(**rates, source=PRICES_FILE)  # type: ignore[arg-type]


class Prices:
    """Model name -> :class:`Price`: the overrides first, then ``genai-prices``.

    ``cache``: a JSON file remembering what ``genai-prices`` said of each model
    (named after its version, so an upgrade asks again): loading its table costs
    most of a second, a short command should not pay it for models already seen.
    """

    def __init__(self, overrides: Mapping[str, Price | Mapping[str, float]] | None = None,
                 *, cache: Path | None = None) -> None:
        if overrides is not None and not isinstance(overrides, Mapping):
            raise ConfigError(f"Prices(overrides={overrides!r}): pass a mapping of model name "
                              "to {'input_mtok': …, 'output_mtok': …}")
        self.overrides = {m: _override(m, e) for m, e in (overrides or {}).items()}
        self.cache = cache
        self._known: dict[str, Price | None] = _read_cache(cache)
        self._asked = False

    def price(self, model: str | None) -> Price | None:
        """The model's price, or ``None`` when it is unpriced."""
        if not model:
            return None
        if model in self.overrides:
            return self.overrides[model]
        if model not in self._known:
            self._known[model] = _from_genai(model)
            self._asked = True
        return self._known[model]

    def save(self) -> None:
        """Write what ``genai-prices`` said to ``cache`` (if it was asked; best effort)."""
        if self.cache is None or not self._asked:
            return
        data = {m: None if p is None else {n: getattr(p, n) for n in (*_RATES, "tiered")}
                for m, p in self._known.items()}
        tmp = self.cache.with_name(f".{self.cache.name}.{os.getpid()}.tmp")
        try:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.cache)
            self._asked = False
        except OSError:  # a read-only store: ask again next time
            tmp.unlink(missing_ok=True)

    def rows(self, models: Iterable[str | None], *, save: bool = True
             ) -> list[dict[str, object]]:
        """The ``prices`` table's rows for ``models`` (the unpriced left out); ``save``:
        remember new answers in the cache."""
        out: list[dict[str, object]] = []
        for model in sorted({m for m in models if m}):
            found = self.price(model)
            if found is not None:
                out.append({"model": model, **{n: getattr(found, n) for n in _RATES},
                            "source": found.source, "tiered": found.tiered})
        if save:
            self.save()
        return out


def _read_cache(path: Path | None) -> dict[str, Price | None]:
    """The cached answers of ``genai-prices`` (an unreadable cache is no cache)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        source = prices_version()
        return {str(m): None if v is None else Price(**v, source=source)
                for m, v in data.items()}
    except (OSError, ValueError, TypeError, AttributeError, ConfigError):
        return {}


PRICES_DDL = ("model STRING, input_mtok DOUBLE, output_mtok DOUBLE, cache_read_mtok DOUBLE, "
                 "cache_write_mtok DOUBLE, source STRING, tiered BOOLEAN")
"""The ``prices`` table's columns in Spark DDL (:func:`prices_arrow` builds DuckDB's)."""


def prices_arrow(rows: list[dict[str, object]]) -> pa.Table:
    """The ``_prices`` table as Arrow (for DuckDB), from :meth:`Prices.rows`."""
    import pyarrow as pa

    schema = pa.schema([("model", pa.string()), *((n, pa.float64()) for n in _RATES),
                        ("source", pa.string()), ("tiered", pa.bool_())])
    return pa.Table.from_pylist(rows, schema=schema)


_LOOKUP = "prefixes"
"""How :func:`_genai_model` looks names up, in the cache's name: a cache of another lookup
(before provider prefixes were read, every ``openai/…`` was unpriced) is not read."""


def load_prices(root: Path) -> Prices:
    """The prices of the store at ``root``: its ``prices.json`` over ``genai-prices``."""
    path = root / PRICES_FILE
    from importlib.metadata import version

    cache = root / SUMMARIES / f"prices.{version('genai-prices')}.{_LOOKUP}.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Prices(cache=cache)
    except OSError as exc:
        raise ConfigError(f"cannot read {str(path)!r} ({exc}); fix its permissions") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{str(path)!r} is not JSON ({exc}); write "
                          '{"model": {"input_mtok": 0.5, "output_mtok": 1.5}}') from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{str(path)!r} holds {type(data).__name__}; write an object "
                          '{"model": {"input_mtok": 0.5, "output_mtok": 1.5}}')
    try:
        return Prices(data, cache=cache)
    except ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from None
