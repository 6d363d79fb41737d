"""The aiohttp side of ``footprint lens --serve``: textual-serve's server with deep links,
the token, and the ``Host`` and ``Origin`` checks (``lens.cli._serve`` holds the options;
this module imports aiohttp)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, web
from aiohttp.typedefs import Handler
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from footprint._errors import ConfigError
from lens.cli._serve_parts import (
    SCREENS,
    check_token,
    cookie_name,
    is_loopback,
    loopback_hosts,
    quiet_logging,
    resolve_async,
    same_origin,
    session_command,
)

__all__ = ["LensServer"]

_PAGES = ("/", "/run/{run}", "/run/{run}/{view}")
_LOG = logging.getLogger("footprint.lens.serve")


class LensServer(Server):
    """textual-serve's ``Server``, one ``footprint lens`` process per session, at the path's
    run and screen. ``token`` guards every page and websocket; on a loopback ``host`` the
    ``Host`` header must name this machine at ``port``; a websocket's ``Origin`` must be the
    page's own."""

    def __init__(self, *, root: Path, host: str, port: int, token: str,
                 first: str | None = None, view: str = "timeline", follow: bool = False,
                 agent: str | None = None) -> None:
        if view not in SCREENS:
            raise ConfigError(f"view {view!r} is not a lens screen; pick one of "
                              f"{', '.join(SCREENS)}")
        if len(token) < 16:
            raise ConfigError(f"token {token[:4]!r}…: use at least 16 characters")
        super().__init__(session_command(root, first, view, agent=agent), host=host, port=port,
                         title="footprint lens")
        self.root, self.token, self.first, self.view = root, token, first, view
        self.follow, self.agent = follow, agent
        self._sockets: set[web.WebSocketResponse] = set()
        self._hosts = loopback_hosts(host, port) if is_loopback(host) else None
        self._cookie = cookie_name(port)

    def initialize_logging(self) -> None:
        quiet_logging()

    async def on_startup(self, app: web.Application) -> None:
        """Nothing printed here: ``serve`` has said where the lens is."""

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._check_host])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        routes: list[web.AbstractRouteDef] = [web.get(p, self.handle_index) for p in _PAGES]
        routes += [web.get("/ws" + p.rstrip("/"), self.handle_websocket) for p in _PAGES]
        routes.append(web.static("/static", self.statics_path, name="static"))
        app.add_routes(routes)
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self._close_sessions)
        return app

    async def _close_sessions(self, app: web.Application) -> None:
        """On Ctrl-C, close every open websocket, so each session's handler ends its lens
        process and returns (aiohttp would otherwise wait for the browsers to go)."""
        await asyncio.gather(*(ws.close(code=WSCloseCode.GOING_AWAY,
                                        message=b"footprint lens stopped")
                               for ws in list(self._sockets)), return_exceptions=True)

    @web.middleware
    async def _check_host(self, request: web.Request,
                          handler: Handler) -> web.StreamResponse:
        """Every request (static files too) must name the bound address in ``Host``: a page
        under another name (a DNS-rebound one) gets nothing."""
        host = request.headers.get("Host", "")
        if self._hosts is not None and host.lower() not in self._hosts:
            _refuse(request, f"Host {host[:80]!r} is not this lens's address; open the URL "
                             "it printed")
        return await handler(request)

    def _allowed(self, request: web.Request, *, websocket: bool = False) -> None:
        """Refuse a request without the token (or, for a websocket, from another origin)."""
        given = request.query.get("token") or request.cookies.get(self._cookie)
        if not check_token(self.token, given):
            _refuse(request, "this lens needs its token: open the URL it printed "
                             "(…/?token=…)")
        origin = request.headers.get("Origin")
        if websocket and not same_origin(origin, request.scheme, request.host):
            _refuse(request, f"a websocket from origin {(origin or 'none')[:80]!r}: only "
                             "the lens's own page may open one")

    async def _target(self, request: web.Request) -> tuple[str | None, str]:
        """The run and screen the path asks for (``/``: the one given on the command line)."""
        run, view = request.match_info.get("run"), request.match_info.get("view", "timeline")
        if view not in SCREENS:
            raise web.HTTPNotFound(text=f"footprint lens: no screen {view!r}; use one of "
                                        f"{', '.join(SCREENS)}\n")
        if run is None:
            return self.first, self.view if self.first else "timeline"
        try:
            return await resolve_async(self.root, run), view
        except ConfigError as exc:
            raise web.HTTPNotFound(text=f"footprint lens: {exc}\n") from None

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """The page: textual-serve's template, its websocket at ``/ws`` + this path."""
        self._allowed(request)
        run, view = await self._target(request)
        path = f"/ws/run/{run}/{view}" if run else "/ws"
        scheme = "wss" if request.secure else "ws"
        static = f"{request.scheme}://{request.host}/static/"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{scheme}://{request.host}{path}",
            "config": {"static": {"url": static}},
            "application": {"name": self.title},
        }
        response: web.StreamResponse = aiohttp_jinja2.render_template(
            "app_index.html", request, context)
        response.set_cookie(self._cookie, self.token, httponly=True, samesite="Strict")
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One session: a ``footprint lens`` process at the path's run and screen."""
        self._allowed(request, websocket=True)
        run, view = await self._target(request)
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        self._sockets.add(websocket)
        async def close() -> None:
            await websocket.close()

        service = AppService(
            session_command(self.root, run, view, follow=self.follow, agent=self.agent),
            write_bytes=websocket.send_bytes, write_str=websocket.send_str, close=close,
            download_manager=self.download_manager, debug=False)
        try:
            await service.start(to_int(request.query.get("width", "80"), 80),
                                to_int(request.query.get("height", "24"), 24))
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        finally:
            self._sockets.discard(websocket)
            await service.stop()
            await _reaped(service)
        return websocket


async def _reaped(service: AppService) -> None:
    """Wait for the session's lens process to exit (killed after 10 s). textual-serve's
    ``stop()`` waits for the process's output to end, not for the process: a transport
    left to the garbage collector once Ctrl-C has closed the event loop printed a
    traceback (``BaseSubprocessTransport.__del__``: "Event loop is closed")."""
    process = getattr(service, "_process", None)
    if process is None:
        return
    try:
        await asyncio.wait_for(process.wait(), timeout=10)
    except TimeoutError:
        process.kill()
        await process.wait()


def _refuse(request: web.Request, reason: str) -> None:
    """A 403 with a one-line ``reason``, logged (the path only, as it may hold a token, and
    with its control characters escaped: a terminal shows the log)."""
    from lens.cli._common import clip

    _LOG.warning("refused %s %s from %s: %s", request.method, clip(request.path, 120),
                 request.remote, reason)
    raise web.HTTPForbidden(text=f"footprint lens: {reason}\n")
