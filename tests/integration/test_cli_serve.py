"""``footprint lens --serve``: a real server on 127.0.0.1 in a subprocess, driven by a real
HTTP client and websocket (aiohttp): deep links, the session's screen, refusals, the token
(on loopback too), the ``Host`` and ``Origin`` checks, SIGINT with a session open."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from serve_support import (
    ROOT,
    RUN4,
    free_port,
    lens_argv,
    serving,
    start_serving,
    stop,
    token_in,
)
from trends_store import write_trends_store

from lens.cli._serve import is_loopback
from lens.cli._serve_parts import SCREENS, session_command

TOKEN = "t0ken-for-the-test-0123456789"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_trends_store(tmp_path_factory.mktemp("serve") / "store")


async def _painted(ws: aiohttp.ClientWebSocketResponse, wanted: tuple[str, ...],
                   seconds: float = 90) -> str:
    """What the session's lens painted on ``ws`` (its terminal bytes, decoded) once all of
    ``wanted`` showed up."""
    seen = ""
    deadline = time.monotonic() + seconds
    while not all(w in seen for w in wanted):
        left = deadline - time.monotonic()
        assert left > 0, f"the lens never painted {wanted}: {seen[-400:]!r}"
        message = await ws.receive(timeout=left)
        if message.type == aiohttp.WSMsgType.BINARY:
            seen += message.data.decode("utf-8", "replace")
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            raise AssertionError(f"the session closed: {seen[-400:]!r}")
    return seen


async def _screen_text(url: str, origin: str, *, wanted: tuple[str, ...],
                       seconds: float = 90) -> str:
    """What the session at ``url`` (opened as a page of ``origin`` would) painted once all
    of ``wanted`` showed up."""
    async with aiohttp.ClientSession() as http, http.ws_connect(url, origin=origin) as ws:
        return await _painted(ws, wanted, seconds)


def test_given_a_served_lens_when_a_deep_link_is_opened_then_its_websocket_shows_that_screen(
    store: Path,
) -> None:
    with serving(store) as (base, line):
        token = token_in(line)
        assert line.startswith("footprint lens: serving ") and f"{base}/?token={token}" in line

        async def drive() -> tuple[int, str, str]:
            async with aiohttp.ClientSession() as http, \
                    http.get(f"{base}/run/last/why?token={token}") as page:
                html = await page.text()
                status = page.status
            ws = f"ws{base[4:]}/ws/run/{RUN4}/why"
            painted = await _screen_text(f"{ws}?width=120&height=40&token={token}", base,
                                         wanted=(RUN4, "why"))
            return status, html, painted

        status, html, painted = asyncio.run(drive())
        assert status == 200 and f'"ws{base[4:]}/ws/run/{RUN4}/why"' in html
        assert "footprint lens" in painted


def test_given_an_open_session_when_the_server_gets_sigint_then_it_closes_it_and_exits_0(
    store: Path,
) -> None:
    proc, base, line = start_serving(store)
    try:
        async def drive() -> tuple[int | None, str]:
            url = f"ws{base[4:]}/ws/run/{RUN4}/why?width=100&height=30&token={token_in(line)}"
            async with aiohttp.ClientSession() as http, http.ws_connect(url, origin=base) as ws:
                await _painted(ws, (RUN4,))
                proc.send_signal(signal.SIGINT)  # as `kill -INT`; Ctrl-C reaches the sessions too
                while True:  # the lens's last frames, then the close
                    message = await ws.receive(timeout=60)
                    if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                        return ws.close_code, str(message.extra)

        code, said = asyncio.run(drive())
        assert proc.wait(timeout=15) == 0
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    finally:
        stop(proc)
    assert (code, said) == (aiohttp.WSCloseCode.GOING_AWAY, "footprint lens stopped")


@pytest.mark.parametrize(("path", "said"), [("/run/nope/why", "no run 'nope'"),
                                             ("/run/last/nope", "no screen 'nope'")])
def test_given_a_served_lens_when_a_bad_deep_link_is_opened_then_404_names_it(
    store: Path, path: str, said: str,
) -> None:
    with serving(store) as (base, line):
        async def get() -> tuple[int, str]:
            url = f"{base}{path}?token={token_in(line)}"
            async with aiohttp.ClientSession() as http, http.get(url) as page:
                return page.status, await page.text()

        status, text = asyncio.run(get())
        assert status == 404 and said in text


def test_given_allow_remote_when_requests_come_without_then_with_the_token_then_only_those_pass(
    store: Path,
) -> None:
    with serving(store, "--allow-remote", "--token", TOKEN) as (base, line):
        assert f"?token={TOKEN}" in line

        async def drive() -> tuple[int, int, int, bool]:
            # a browser keeps cookies of an IP-address host; aiohttp's jar must be told to
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
                async with http.get(f"{base}/") as bare:
                    refused = bare.status
                with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
                    await http.ws_connect(f"ws{base[4:]}/ws?width=80&height=24", origin=base)
                async with http.get(f"{base}/?token={TOKEN}") as page:
                    allowed = page.status  # and the cookie the page's websocket will send
                async with http.ws_connect(f"ws{base[4:]}/ws?width=80&height=24",
                                           origin=base) as ws:
                    opened = not ws.closed
            return refused, allowed, caught.value.status, opened

        refused, allowed, ws_refused, opened = asyncio.run(drive())
        assert (refused, allowed, ws_refused) == (403, 200, 403)
        assert opened  # the websocket opens with the page's cookie


async def _refusals(base: str, token: str) -> dict[str, tuple[int, str]]:
    """What a loopback lens answers requests that must not pass: (status, body) by case."""
    port = base.rsplit(":", 1)[1]
    ws = f"ws{base[4:]}/ws?width=80&height=24"
    pages = {"no token": (f"{base}/run/last/why", {}),
             "a wrong token": (f"{base}/?token=not-the-token-0123456789", {}),
             "an escape in the path": (f"{base}/run/%1B%5D0;owned%07/why", {}),
             "a rebound Host": (f"{base}/?token={token}", {"Host": f"evil.example:{port}"}),
             "another port in Host": (f"{base}/?token={token}", {"Host": "127.0.0.1:1"})}
    sockets = {"a websocket without token": (ws, base, {}),
               "a websocket from another local origin": (f"{ws}&token={token}",
                                                         "http://127.0.0.1:1", {}),
               "a websocket from another site": (f"{ws}&token={token}", "http://evil.example",
                                                 {}),
               "a websocket without Origin": (f"{ws}&token={token}", None, {}),
               "a websocket with a rebound Host": (f"{ws}&token={token}", base,
                                                   {"Host": f"evil.example:{port}"})}
    out: dict[str, tuple[int, str]] = {}
    async with aiohttp.ClientSession() as http:
        for case, (url, headers) in pages.items():
            async with http.get(url, headers=headers) as page:
                out[case] = page.status, await page.text()
        for case, (url, origin, headers) in sockets.items():
            with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
                await http.ws_connect(url, origin=origin, headers=headers)
            out[case] = caught.value.status, ""
    return out


def test_given_a_loopback_lens_when_requests_lack_the_token_host_or_origin_then_403_logged(
    store: Path,
) -> None:
    proc, base, line = start_serving(store)
    token = token_in(line)
    try:
        answers = asyncio.run(_refusals(base, token))
        proc.terminate()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        log = proc.stderr.read()
    finally:
        stop(proc)
    assert {case: status for case, (status, _text) in answers.items()} == dict.fromkeys(
        answers, 403)
    assert answers["no token"][1] == ("footprint lens: this lens needs its token: open the URL "
                                      "it printed (…/?token=…)\n")
    port = base.rsplit(":", 1)[1]
    assert answers["a rebound Host"][1] == (
        f"footprint lens: Host 'evil.example:{port}' is not this lens's address; open the URL "
        "it printed\n")
    refused = [x for x in log.splitlines() if x.startswith("footprint lens: refused ")]
    assert len(refused) == len(answers) and token not in log and "\x1b" not in log
    assert "refused GET /run/last/why from 127.0.0.1: this lens needs its token" in refused[0]
    assert any("websocket from origin 'http://127.0.0.1:1'" in x for x in refused)
    assert any("websocket from origin 'none'" in x for x in refused)


def test_given_the_printed_url_when_opened_then_its_cookie_opens_deep_links_and_the_websocket(
    store: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FOOTPRINT_LENS_TOKEN", TOKEN)
    with serving(store) as (base, line):
        assert token_in(line) == TOKEN
        port = base.rsplit(":", 1)[1]

        async def drive() -> tuple[str, list[int], str]:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
                async with http.get(f"{base}/?token={TOKEN}") as page:
                    cookie = page.headers["Set-Cookie"]
                statuses = []
                for host in (f"localhost:{port}", f"[::1]:{port}", f"127.0.0.1:{port}"):
                    async with http.get(f"{base}/run/{RUN4}/why", headers={"Host": host}) as p:
                        statuses.append(p.status)
                async with http.ws_connect(f"ws{base[4:]}/ws/run/{RUN4}/why?width=100&height=30",
                                           origin=base) as ws:
                    painted = await _painted(ws, (RUN4,))
            return cookie, statuses, painted

        cookie, statuses, painted = asyncio.run(drive())
    assert cookie.startswith(f"footprint_lens_token_{port}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert statuses == [200, 200, 200] and "footprint lens" in painted


def test_given_no_token_given_when_served_then_a_random_one_is_printed_each_time(
    store: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FOOTPRINT_LENS_TOKEN"}
    tokens = []
    for _ in range(2):
        argv = lens_argv("--serve", "--port", str(free_port()), "--store", str(store))
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            tokens.append(token_in(proc.stdout.readline()))
        finally:
            stop(proc)
    assert len(set(tokens)) == 2 and all(len(t) >= 32 for t in tokens)


def test_given_a_non_loopback_host_without_allow_remote_when_served_then_one_line_and_exit_2(
    store: Path,
) -> None:
    done = subprocess.run(lens_argv("--serve", "--host", "0.0.0.0", "--store", str(store)),
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "--allow-remote" in done.stderr
    assert "'0.0.0.0' is not a loopback address" in done.stderr


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("192.168.1.20", False), ("::", False),
    ("lens.example.org", False)])
def test_given_a_host_when_checked_then_only_this_machine_counts_as_loopback(
    host: str, loopback: bool,
) -> None:
    assert is_loopback(host) is loopback


@given(root=st.text(min_size=1).filter(lambda t: "\x00" not in t),
       run=st.none() | st.text(min_size=1).filter(lambda t: "\x00" not in t),
       view=st.sampled_from(SCREENS), follow=st.booleans(),
       agent=st.none() | st.text(min_size=1).filter(lambda t: "\x00" not in t))
def test_given_any_store_path_and_run_when_a_session_command_is_made_then_the_shell_reads_it_back(
    root: str, run: str | None, view: str, follow: bool, agent: str | None,
) -> None:
    import shlex

    argv = shlex.split(session_command(Path(root), run, view, follow=follow, agent=agent))
    assert argv == [sys.executable, "-m", "lens.cli", "lens", "--store", str(Path(root)),
                    "--view", view, *(["--follow"] if follow else []),
                    *(["--agent", agent] if agent else []), *([run] if run else [])]
