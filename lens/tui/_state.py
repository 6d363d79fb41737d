"""What the lens holds: the open store, its gate, and the selected run's head.

No Textual here. Opening the store and resolving RUN happen before the screen
is taken (a bad store or run fails there, in one line); everything larger is
read by the screens on workers, through :meth:`LensState.reader`.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError
from footprint.events import Event, LLMEnd, RunSource
from lens.playback._answer import answer_flags
from lens.playback._foreign import source_note
from lens.tui._reader import RunReader, StoreGate
from recorder.store._damage import StoreWarning

__all__ = ["RUNS_SQL", "RUN_FIELDS", "GatedStore", "LensState", "Resend", "RunHead", "resend_of"]

_EXAMPLE = "examples/planted/wrong_fact.py:make_agent"
RUN_FIELDS = ("started", "run_id", "status", "iterations", "tokens", "model", "events",
              "answer", "error_type", "error_message", "failed_step", "user_id", "session_id",
              "tags", "release", "scores")
"""The fields of a row of :meth:`LensState.runs`, in order (those of the ``runs`` view)."""
RUNS_SQL = (
    "SELECT strftime(started, '%Y-%m-%d %H:%M:%S'), run_id, status, iterations, tokens, "
    "model, events, answer, error_type, error_message, failed_step, user_id, session_id, "
    "tags, release, s.scores FROM runs LEFT JOIN ("
    " SELECT run_id, list([name, shown] ORDER BY name) AS scores FROM ("
    "  SELECT run_id, name, arg_max(coalesce(label, CAST(value AS VARCHAR)), seq) AS shown"
    "  FROM scores WHERE name IS NOT NULL GROUP BY run_id, name) GROUP BY run_id) s"
    " USING (run_id) {where} ORDER BY start_ns, run_id"
)
"""The runs list; ``scores``: each score's latest record as ``[name, label or value]``."""

_HEAD_SQL = (
    "SELECT count(*), max(seq), bool_or(type = 'run.end'), bool_or(type = 'run.error'), "
    "coalesce(arg_min(model, seq) FILTER (WHERE type = 'run.configured'), "
    "arg_min(model, seq) FILTER (WHERE type = 'llm.start')), "
    "max(seq) FILTER (WHERE type = 'run.end'), min(seq) FILTER (WHERE type = 'run.source'), "
    "max(seq) FILTER (WHERE type = 'llm.end') "
    "FROM _events_all WHERE run_id = ?"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunHead:
    """The runs-view row of one run: enough for the header."""

    run_id: str
    status: str
    model: str
    answer: str | None
    events: int
    last_seq: int
    source: str | None = None
    """For a run mapped from another framework's trace, what its ``run.source`` says."""
    flag: str | None = None
    """When the last reply is not a plain answer: what it is (``lens.playback._answer``)."""


def _checked_agent(ref: object) -> str | None:
    """``ref`` when it looks like ``MODULE:ATTR`` (MODULE a dotted module or a ``.py`` path)."""
    if ref is None:
        return None
    module, sep, attr = ref.rpartition(":") if isinstance(ref, str) else ("", "", "")
    if not sep or not module.strip() or not attr.isidentifier():
        raise ConfigError(f"--agent {ref!r} is not MODULE:ATTR; write e.g. {_EXAMPLE!r}")
    if module.endswith(".py") and not Path(module).is_file():
        raise ConfigError(f"--agent file {module!r} does not exist; give a path to a .py file, "
                          f"e.g. {_EXAMPLE!r}")
    return str(ref)


@dataclass(frozen=True, slots=True, kw_only=True)
class Resend:
    """Where the why screen re-sends a recorded request (``--provider FILE.py:FACTORY``, or
    ``--base-url URL`` with ``--model NAME``): its causal search for a run with no agent to
    re-run, as one taken in from another framework's trace."""

    provider: str | None = None
    base_url: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if (self.provider is None) == (self.base_url is None):
            raise ConfigError("the re-send tier needs exactly one of --provider FILE.py:FACTORY "
                              f"and --base-url URL (got {self.provider!r} and "
                              f"{self.base_url!r})")
        if self.provider is not None:
            module, sep, attr = self.provider.rpartition(":")
            if not sep or not module.strip() or not attr.isidentifier():
                raise ConfigError(f"--provider {self.provider!r} is not FILE.py:FACTORY or "
                                  "module:factory; write e.g. 'tests/models.py:make_model'")
        elif not str(self.base_url).startswith(("http://", "https://")):
            raise ConfigError(f"--base-url {self.base_url!r} is not an http(s) URL; write e.g. "
                              "'http://127.0.0.1:8080/v1'")

    @property
    def ref(self) -> str:
        """What it re-sends through, as the screen names it (and the cache keys it)."""
        through = self.provider or f"{self.base_url}"
        return f"re-send via {through}" + (f" (model {self.model})" if self.model else "")


def resend_of(provider: str | None, base_url: str | None, model: str | None) -> Resend | None:
    """The ``--provider``/``--base-url``/``--model`` options as a :class:`Resend` (``None``
    when none is given)."""
    if provider is None and base_url is None:
        if model is not None:
            raise ConfigError(f"--model {model!r} names the model to re-send to; pass "
                              "--base-url URL (or --provider FILE.py:FACTORY) with it")
        return None
    return Resend(provider=provider, base_url=base_url, model=model)


class LensState:
    """The store, its gate, and the selected run (whose events the screens read by the page)."""

    def __init__(self, store_path: str | os.PathLike[str] | None, run: str | None = None, *,
                 agent: str | None = None, resend: Resend | None = None) -> None:
        from recorder import open_store

        self.agent = _checked_agent(agent)
        """The ``MODULE:ATTR`` of the agent the why screen re-runs (``--agent``), if given."""
        self.resend = resend
        """Where the why screen re-sends the recorded request (``--provider``/``--base-url``)."""

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StoreWarning)
            self.store = open_store(store_path)
        self.warnings = [str(w.message) for w in caught]
        self.announced: set[Path] = set(self._damaged())
        """The damaged files named already (the open's warnings name the first ones)."""
        self.gate = StoreGate(self.store)
        self.run_id: str | None = None
        self.head: RunHead | None = None
        self.where = ""
        """The runs list's filter (``key=value`` terms, :meth:`filter_runs`); empty: all."""
        self.listed = 0
        """How many runs the filter let through when the list was last read."""
        self.run_count = self._run_count()
        if run is not None:
            self.select(run if self._has(run) else self.store.resolve_run(run))

    @property
    def store_name(self) -> str:
        return self.store.root.name or str(self.store.root)

    def _run_count(self) -> int:
        found = self.gate.rows("SELECT count(DISTINCT run_id) FROM _events_all")
        return int(found[0][0]) if found else 0

    def reader(self) -> RunReader:
        """Paged reads of the selected run."""
        if self.run_id is None:
            raise ConfigError("no run is selected; press enter on a run in the runs table")
        return RunReader(self.gate, self.run_id)

    def runs(self) -> list[tuple[Any, ...]]:
        """One row per run (those :attr:`where` lets through), in ``RUN_FIELDS`` order,
        oldest first."""
        if not self.where:
            return self.gate.rows(RUNS_SQL.format(where=""))
        from recorder import RunQuery, list_runs

        query = RunQuery.from_where(self.where, limit=10**9)
        with self.gate.held() as store:
            ids = list_runs(store, query, costs=False).column("run_id").to_pylist()
        self.listed = len(ids)
        return self.gate.rows(RUNS_SQL.format(where="WHERE run_id IN ?"), [ids]) if ids else []

    def costs(self, run_ids: list[str]) -> dict[str, tuple[float | None, int]]:
        """Each run's ``(cost_usd, unpriced_calls)`` as ``footprint runs`` prices it
        (``recorder.run_costs``): a block of the listed runs at a time."""
        from recorder import run_costs

        with self.gate.held() as store:
            return run_costs(store, run_ids)

    def filter_runs(self, where: str) -> None:
        """List only the runs ``where`` lets through (``release=1.4 score=helpful<1``; the
        keys of ``footprint runs``); empty: every run. A bad text raises ``ConfigError``
        that quotes it, and the filter stays as it was."""
        from recorder import RunQuery

        if where.strip():
            RunQuery.from_where(where)
        self.where = where.strip()

    def select(self, run_id: str) -> None:
        """Make ``run_id`` the selected run."""
        head = self._head(run_id)
        if head is None:
            raise ConfigError(f"no run {run_id!r} in the store; pick one from the runs table")
        self.run_id, self.head = run_id, head

    def _has(self, run_id: str) -> bool:
        return bool(self.gate.rows("SELECT 1 FROM _events_all WHERE run_id = ? LIMIT 1", [run_id]))

    def _head(self, run_id: str) -> RunHead | None:
        """The header's facts from the small columns; the answer from the one ``run.end`` row."""
        found = self.gate.rows(_HEAD_SQL, [run_id])
        if not found or not found[0][0]:
            return None
        events, last_seq, ended, failed, model, end_seq, source_seq, reply_seq = found[0]
        status = "complete" if ended else "failed" if failed else "incomplete"
        answer = None
        if end_seq is not None:
            end = RunReader(self.gate, run_id).events_at([end_seq])
            answer = getattr(end[0], "final_content", None) if end else None
        return RunHead(run_id=run_id, status=status, model=str(model or "?"),
                       answer=answer, events=int(events), last_seq=int(last_seq),
                       source=self._source(run_id, source_seq),
                       flag=self._flag(run_id, reply_seq) if ended else None)

    def _flag(self, run_id: str, seq: int | None) -> str | None:
        found = RunReader(self.gate, run_id).events_at([seq]) if seq is not None else []
        if not found or not isinstance(found[0], LLMEnd):
            return None
        flags = answer_flags(found[0])
        return flags[0] if flags else None

    def _source(self, run_id: str, seq: int | None) -> str | None:
        if seq is None:
            return None
        found = RunReader(self.gate, run_id).events_at([seq])
        return source_note(found[0]) if found and isinstance(found[0], RunSource) else None

    def _damaged(self) -> dict[Path, str]:
        """Every file the store reader skipped or found damaged inside, and why."""
        files = self.store.files
        found = {p: files.reasons.get(p, "unreadable") for p in files.skipped}
        found.update(self.store.damaged)
        return found

    def damage_notices(self) -> list[str]:
        """One line per damaged file the reader left out since the last call (each named
        once); read under the gate (a refresh replaces the lists)."""
        with self.gate.held():
            fresh = {p: why for p, why in self._damaged().items() if p not in self.announced}
        self.announced.update(fresh)
        return [f"skipped damaged file {str(p)!r} ({' '.join(why.split())[:160]}); every "
                "other file stays readable — `footprint doctor --quarantine` moves it aside"
                for p, why in sorted(fresh.items())]

    def poll(self) -> bool:
        """Re-read the store; ``True`` when the selected run gained events or changed status.
        Its warnings are not printed (the terminal is the lens's): :meth:`damage_notices`."""
        with self.gate.held() as store, warnings.catch_warnings():
            warnings.simplefilter("ignore", StoreWarning)
            store.refresh()
        self.run_count = self._run_count()
        if self.run_id is None or self.head is None:
            return False
        head = self._head(self.run_id)
        if head is None or head == self.head:
            return False
        self.head = head
        return True

    def close(self) -> None:
        """The lens is closing: reads waiting for the store give up, a running one stops."""
        self.gate.close()


class GatedStore:
    """The lens's store as ``lens.explain`` reads it: a path (``os.PathLike``) for the
    dataset and experiment files, and each run's events read under the lens's gate."""

    def __init__(self, state: LensState) -> None:
        self.state = state
        self.root = Path(state.store.root)

    def __fspath__(self) -> str:
        return str(self.root)

    def events(self, run_id: str) -> list[Event]:
        with self.state.gate.held() as store:
            return store.events(run_id)
