"""``LensApp(store_path, run=None)``: the Textual lens over a recorded (or live) store.

Screens: runs → timeline (home of a run) → decisions (``d``) · skills
(``s``) · why (``w``) · SQL console (``:``). ``escape`` goes back one
level (a run's screen → its timeline → the runs), ``t`` shows the timeline,
``r`` the runs, ``T`` the store's trends (plots per day or hour), ``S`` the
sessions (a session's runs in order), ``E`` the experiments (one's results, two
compared with the cause of each regression). A run opened from a session or an
experiment opens over it: ``escape`` on its timeline goes back there. ``agent``
(``"FILE.py:FACTORY"`` or ``"module:factory"``) is the agent the why screen
re-runs for its causal search (``a``; ``esc`` cancels); without it the run's own
``Agent(factory=...)`` is used, if it recorded one. ``resend`` (a provider factory, or
an OpenAI-compatible server and model) makes it re-send the recorded request instead: the
causal search of a run taken in from another framework's trace, which has no agent.
With ``follow=True`` the store is re-read every second and the open screens
redraw when the selected run grew.
"""

from __future__ import annotations

import os
from typing import Literal

from textual.app import App
from textual.binding import Binding

from lens.tui._base import RunScreen, worker_cancelled
from lens.tui._decisions import DecisionsScreen
from lens.tui._experiments import ExperimentsScreen
from lens.tui._reader import ReaderClosed
from lens.tui._runs import RunLines, RunsScreen
from lens.tui._sessions import SessionsScreen
from lens.tui._skills import SkillsScreen
from lens.tui._sql import SqlScreen
from lens.tui._state import LensState, Resend
from lens.tui._timeline import TimelineScreen
from lens.tui._trends import TrendsScreen
from lens.tui._why import WhyScreen

__all__ = ["LensApp", "View"]

View = Literal["timeline", "decisions", "skills", "why", "sql"]
_RUN_SCREENS: dict[str, type[RunScreen]] = {
    "timeline": TimelineScreen, "decisions": DecisionsScreen,
    "skills": SkillsScreen, "why": WhyScreen,
}


class LensApp(App[int]):
    """Reads the store only — never live engine objects."""

    TITLE = "footprint lens"
    BINDINGS = [  # noqa: RUF012
        Binding("t", "show('timeline')", "Timeline"),
        Binding("d", "show('decisions')", "Decisions"),
        Binding("s", "show('skills')", "Skills"),
        Binding("w", "show('why')", "Why"),
        Binding("colon", "sql", "SQL", key_display=":"),
        Binding("r", "runs", "Runs"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None,
        run: str | None = None,
        *,
        follow: bool = False,
        view: View = "timeline",
        agent: str | None = None,
        resend: Resend | None = None,
    ) -> None:
        super().__init__()
        self.state = LensState(store_path, run, agent=agent, resend=resend)
        self.state.gate.abandon = worker_cancelled
        self.follow = follow
        self._start: View = view
        self._cached: dict[str, RunScreen] = {}
        self._polling = False
        self.runs_screen = RunsScreen(self.state, follow=follow)

    async def on_mount(self) -> None:
        if self.state.run_id is None:  # opened on a run: the runs list is built when asked for
            await self.push_screen(self.runs_screen)
        for message in self.state.warnings:
            self.notify(message, title="store warning", severity="warning")
        if self.state.run_id is not None:
            if self._start == "sql":
                await self.action_sql()
            else:
                await self.action_show(self._start)
        if self.follow:
            self.set_interval(1.0, self.poll)

    # ── navigation ──────────────────────────────────────────────────────────
    def _screen(self, name: str) -> RunScreen:
        if name not in self._cached:
            screen = _RUN_SCREENS[name](self.state, follow=self.follow)
            self.install_screen(screen, f"run-{name}")
            self._cached[name] = screen
        return self._cached[name]

    def _forget(self, names: list[str]) -> None:
        for name in names:
            self._cached.pop(name, None)
            self.uninstall_screen(f"run-{name}")

    async def _back_to_runs(self) -> None:
        while len(self.screen_stack) > 1 and self.screen is not self.runs_screen:
            await self.pop_screen()
        if self.screen is not self.runs_screen:
            await self.push_screen(self.runs_screen)

    async def action_runs(self) -> None:
        await self._back_to_runs()

    async def action_show(self, name: str) -> None:
        """Show one screen of the selected run, over the runs (one run screen at a time)."""
        if self.state.run_id is None:
            self.notify("open a run first: press enter on a row of the runs table",
                        severity="warning")
            return
        if name not in _RUN_SCREENS:
            self.notify(f"no screen {name!r}; try one of {', '.join(_RUN_SCREENS)}",
                        severity="error")
            return
        screen = self._screen(name)
        if screen is self.screen:
            return
        if isinstance(self.screen, RunScreen):  # one run screen at a time, over the runs
            await self.switch_screen(screen)
            return
        if getattr(self.screen, "opens_runs", False) and screen not in self.screen_stack:
            await self.push_screen(screen)  # over the session or experiment it came from
            return
        while len(self.screen_stack) > 1 and self.screen is not self.runs_screen:
            await self.pop_screen()
        await self.push_screen(screen)

    async def action_trends(self) -> None:
        """The store's trends (``T``), over the runs."""
        if isinstance(self.screen, TrendsScreen):
            return
        await self._back_to_runs()
        await self.push_screen(TrendsScreen(self.state, follow=self.follow))

    async def action_leave_run(self) -> None:
        """``escape`` on a run's timeline: back to the session or experiment it was opened
        from, else to the runs."""
        below = self.screen_stack[-2] if len(self.screen_stack) > 1 else None
        if isinstance(self.screen, RunScreen) and getattr(below, "opens_runs", False):
            await self.pop_screen()
        else:
            await self._back_to_runs()

    async def action_sessions(self) -> None:
        """The store's sessions (``S``), over the runs."""
        if isinstance(self.screen, SessionsScreen):
            return
        await self._back_to_runs()
        await self.push_screen(SessionsScreen(self.state, follow=self.follow))

    async def action_experiments(self) -> None:
        """The store's experiments (``E``), over the runs."""
        if isinstance(self.screen, ExperimentsScreen):
            return
        await self._back_to_runs()
        await self.push_screen(ExperimentsScreen(self.state, follow=self.follow))

    async def action_sql(self) -> None:
        if isinstance(self.screen, SqlScreen):
            return
        await self.push_screen(SqlScreen(self.state, follow=self.follow))

    async def on_run_lines_open(self, message: RunLines.Open) -> None:
        if message.run_id != self.state.run_id:
            self.state.select(message.run_id)
            self._forget(list(self._cached))
        await self.action_show("timeline")

    async def action_quit(self) -> None:
        """Quit now: reads still waiting for the store give up, a running query stops."""
        self.state.close()
        self.exit()

    def on_unmount(self) -> None:
        self.state.close()

    # ── --follow ────────────────────────────────────────────────────────────
    def poll(self) -> None:
        """Re-read the store on a worker; then redraw what changed."""
        if self._polling:
            return
        self._polling = True
        self.run_worker(self._poll, group="poll", thread=True, exit_on_error=False)

    def _poll(self) -> None:
        try:
            changed = self.state.poll()
            for notice in self.state.damage_notices():  # a file damaged since the last look
                self.call_from_thread(self.notify, notice, title="store warning",
                                      severity="warning")
        except ReaderClosed:
            return
        except Exception as exc:  # a half-written file must not take the lens down
            self.call_from_thread(self.notify, f"could not re-read the store: {exc}",
                                  severity="warning")
            changed = False
        finally:
            self._polling = False
        if not self.state.gate.closed:
            self.call_from_thread(self._redraw, changed)

    def _redraw(self, changed: bool) -> None:
        self.runs_screen.reload()
        if not changed:
            return
        shown = [n for n, s in self._cached.items() if s in self.screen_stack]
        self._forget([n for n in self._cached if n not in shown])
        for name in shown:
            self._cached[name].reload()
