"""The sessions screen (``S`` from the runs): each session's runs, users, failures and scores.

A session is the runs sharing a ``session_id`` (``agent.run(..., session=…)``);
a run without one belongs to its conversation (its follow-up turns share the
engine's ``conversation_id``), listed when it has more than one turn. Each line:
the session, its user(s), runs, failed runs, first and last start, and each
numeric score's mean over its runs (each run's latest value). ``enter`` opens
the session: its runs in start order, each with its user, tags, scores, the
message it was asked and its answer (or error); ``enter`` on one opens the
run's timeline, ``escape`` goes back. Everything is read on workers.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from lens.tui._base import LensFooter, LensHeader, Loader
from lens.tui._runs import RunLines, outcome_text, scores_text
from lens.tui._state import RUN_FIELDS, LensState
from lens.tui._table import Cell, Column, TableLines, columns_line

__all__ = ["SESSION_COLUMNS", "SESSION_RUN_COLUMNS", "LensListing", "SessionScreen",
           "SessionsScreen", "read_session", "read_sessions", "run_cells", "session_cells"]

SESSION_COLUMNS = (Column("session", 24), Column("kind", 12), Column("user", 14),
                   Column("runs", 5, right=True), Column("failed", 6, right=True),
                   Column("first", 19), Column("last", 19), Column("mean scores", 11))
SESSION_RUN_COLUMNS = (Column("#", 3, right=True), Column("started", 19), Column("run id", 14),
                       Column("status", 9), Column("user", 10), Column("tags", 10),
                       Column("scores", 14), Column("message → answer / error", 24))
_KEY = "coalesce(session_id, conversation_id)"
_SESSIONS_SQL = f"""
WITH r AS (SELECT run_id, start_ns, started, status, user_id, session_id IS NOT NULL AS named,
                  {_KEY} AS key FROM runs),
g AS (SELECT key, bool_or(named) AS named, min(user_id) AS user_id,
             count(DISTINCT user_id) AS users, count(*) AS runs,
             count(*) FILTER (WHERE status = 'failed') AS failed,
             strftime(min(started), '%Y-%m-%d %H:%M:%S') AS first,
             strftime(max(started), '%Y-%m-%d %H:%M:%S') AS last, min(start_ns) AS start_ns
      FROM r WHERE key IS NOT NULL GROUP BY key HAVING bool_or(named) OR count(*) > 1),
v AS (SELECT run_id, name, arg_max(value, seq) AS value FROM scores
      WHERE value IS NOT NULL AND name IS NOT NULL GROUP BY run_id, name),
m AS (SELECT r.key, v.name, avg(v.value) AS mean FROM v JOIN r USING (run_id)
      GROUP BY r.key, v.name),
s AS (SELECT key, list([name, CAST(round(mean, 2) AS VARCHAR)] ORDER BY name) AS scores
      FROM m GROUP BY key)
SELECT g.key, g.named, g.user_id, g.users, g.runs, g.failed, g.first, g.last, s.scores,
       ids.run_ids
FROM g LEFT JOIN s USING (key)
     JOIN (SELECT key, list(run_id ORDER BY start_ns, run_id) AS run_ids FROM r GROUP BY key)
     ids USING (key)
ORDER BY g.start_ns, g.key
"""
_SCORES_SQL = """
SELECT run_id, list([name, shown] ORDER BY name) FROM (
  SELECT run_id, name, arg_max(coalesce(label, CAST(value AS VARCHAR)), seq) AS shown
  FROM scores WHERE name IS NOT NULL AND run_id IN ? GROUP BY run_id, name) GROUP BY run_id
"""
_MESSAGE_SQL = """
SELECT run_id, coalesce((SELECT b.text FROM blobs b WHERE b.hash =
           json_extract_string(payload, '$.user_message."$blob"')),
       json_extract_string(payload, '$.user_message'))
FROM events WHERE type = 'run.start' AND run_id IN ?
"""
_STAMP = "%Y-%m-%d %H:%M:%S"
_STATUS = {"complete": Style(color="green"), "failed": Style(color="red", bold=True)}
_DIM = Style(dim=True)


def read_sessions(state: LensState) -> list[tuple[Any, ...]]:
    """One row per session, oldest first: key, named, user, users, runs, failed, first,
    last, scores (``[name, mean]``), its run ids in start order."""
    return state.gate.rows(_SESSIONS_SQL)


def _row(run: dict[str, Any], scores: list[list[str]] | None) -> tuple[Any, ...]:
    """A ``list_runs`` row in ``RUN_FIELDS`` order (scores: each one's latest record)."""
    started = run["started"]
    shown = {**run, "started": None if started is None else started.strftime(_STAMP),
             "scores": scores}
    return tuple(shown[f] for f in RUN_FIELDS)


def read_session(state: LensState,
                 run_ids: list[str]) -> list[tuple[tuple[Any, ...], str | None]]:
    """The session's runs (``RUN_FIELDS`` rows, in start order; read through
    ``recorder.list_runs``, from the store's outlines), each with its message."""
    from recorder import RunQuery, list_runs

    if not run_ids:
        return []
    query = RunQuery(run_ids=tuple(run_ids), limit=len(run_ids), newest_first=False)
    with state.gate.held() as store:
        runs = list_runs(store, query, costs=False).to_pylist()
        scores = dict(store.rows(_SCORES_SQL, [run_ids]))
        messages = dict(store.rows(_MESSAGE_SQL, [run_ids]))
    runs.sort(key=lambda r: (r["start_ns"], r["run_id"]))
    return [(_row(r, scores.get(r["run_id"])), messages.get(r["run_id"])) for r in runs]


def _text(value: object) -> str:
    return "—" if value is None else str(value)


def session_cells(row: tuple[Any, ...]) -> list[Cell]:
    key, named, user, users, runs, failed, first, last, scores, _ = row
    who = _text(user) + (f" +{users - 1}" if users and users > 1 else "")
    return [(str(key), None), ("session" if named else "conversation", _DIM), (who, None),
            (str(runs), None), (str(failed), _STATUS["failed"] if failed else _DIM),
            (_text(first), None), (_text(last), None), (_text(scores_text(scores)), None)]


def run_cells(turn: int, row: tuple[Any, ...], message: str | None) -> list[Cell]:
    field = dict(zip(RUN_FIELDS, row, strict=True))
    tags = field["tags"]
    outcome = outcome_text(row)
    failed = field["error_type"] is not None
    said = f"{_text(message)} → {_text(outcome)}"
    return [(str(turn), None), (_text(field["started"]), None), (str(field["run_id"]), None),
            (str(field["status"]), _STATUS.get(str(field["status"]))),
            (_text(field["user_id"]), None), (",".join(tags) if tags else "—", None),
            (_text(scores_text(field["scores"])), None),
            (said, Style(color="red") if failed else None)]


class LensListing(Loader):
    """Header, column titles, a table, a hint, the footer; ``escape`` goes back."""

    DEFAULT_CSS = """
    LensListing #columns { height: 1; text-style: bold; background: $panel; }
    LensListing #hint { color: $text-muted; height: 1; }
    """
    BINDINGS = [Binding("escape", "back", "Back")]  # noqa: RUF012
    WHERE = "sessions"
    COLUMNS: tuple[Column, ...] = SESSION_COLUMNS
    HINT = ""
    opens_runs = True
    """A run opened from here opens over this screen (``escape`` comes back)."""

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__()
        self.state, self.follow = state, follow
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield LensHeader(self.state, self.WHERE, follow=self.follow)
        yield Static(columns_line(self.COLUMNS), id="columns")
        yield TableLines(self.COLUMNS, id="table")
        yield from self.below()
        yield Static(self.HINT, id="hint")
        yield LensFooter()

    def below(self) -> ComposeResult:
        """Widgets between the table and the hint line."""
        yield from ()

    def on_screen_resume(self) -> None:
        self.call_after_refresh(self.reload)

    def reload(self) -> None:
        if not self.loaded:
            self.query_one(TableLines).loading = True

    def shown(self, rows: list[list[Cell]], hint: str) -> None:
        table = self.query_one(TableLines)
        table.loading = False
        table.use(rows, keep=self.loaded)
        self.loaded = True
        self.query_one("#hint", Static).update(hint)
        if self.focused is None:
            table.focus()

    async def action_back(self) -> None:
        self.app.pop_screen()


class SessionsScreen(LensListing):
    """Every session of the store, oldest first."""

    HINT = " enter: the session's runs in order"

    def __init__(self, state: LensState, *, follow: bool = False) -> None:
        super().__init__(state, follow=follow)
        self.sessions: list[tuple[Any, ...]] = []

    def reload(self) -> None:
        super().reload()
        self.load("sessions", lambda: read_sessions(self.state), self._fill)

    def _fill(self, rows: list[tuple[Any, ...]]) -> None:
        self.sessions = rows
        hint = (f" {len(rows)} sessions · enter: the session's runs in order" if rows else
                " no sessions: runs get one with agent.run(..., session=ID), or when a "
                "conversation has a follow-up turn")
        self.shown([session_cells(r) for r in rows], hint)

    async def on_table_lines_chosen(self, message: TableLines.Chosen) -> None:
        chosen = self.sessions[message.index]
        await self.app.push_screen(SessionScreen(self.state, str(chosen[0]), list(chosen[-1]),
                                                 follow=self.follow))


class SessionScreen(LensListing):
    """One session's runs in the order they started; ``enter`` opens one."""

    WHERE = "session"
    COLUMNS = SESSION_RUN_COLUMNS
    HINT = " enter: open the run's timeline · escape: the sessions"

    def __init__(self, state: LensState, key: str, run_ids: list[str], *,
                 follow: bool = False) -> None:
        super().__init__(state, follow=follow)
        self.key = key
        self.run_ids = list(run_ids)

    def reload(self) -> None:
        super().reload()
        self.load("session", lambda: read_session(self.state, self.run_ids), self._fill)

    def _fill(self, runs: list[tuple[tuple[Any, ...], str | None]]) -> None:
        self.run_ids = [str(r[1]) for r, _ in runs]
        self.shown([run_cells(i + 1, r, m) for i, (r, m) in enumerate(runs)],
                   f" session {self.key} · {len(runs)} runs · enter: open the run's timeline")

    def on_table_lines_chosen(self, message: TableLines.Chosen) -> None:
        message.stop()
        self.post_message(RunLines.Open(self.run_ids[message.index]))
