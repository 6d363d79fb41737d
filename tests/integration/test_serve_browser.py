"""``footprint lens --serve`` in a real headless Chromium (Playwright): a real server on
127.0.0.1 in a subprocess, its page and a deep link opened in the browser, the lens read
back from the page's xterm.js terminal, a key pressed in the page; the owner's printed URL
opens it, a page of another local origin cannot open its websocket.

Skips only when the ``playwright`` module or a Chromium binary is missing (Debian:
``apt-get install chromium``; ``.ci/run`` tries that). The browser is the system's, so
Playwright's own browser download is never needed.
"""

from __future__ import annotations

import http.server
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_support import RUN4, free_port, serving, token_in
from trends_store import write_trends_store

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="the playwright module is not installed (pip install -e '.[dev]')")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium binary on PATH (Debian: apt-get install chromium)")

WAIT_MS = 90_000  # a session starts a `footprint lens` process; a loaded machine is slow

# Every binary websocket frame the page receives, decoded: how the test knows the lens sent
# a screen before it looks at the terminal.
RECORD_FRAMES = """
window.lensFrames = [];
const PageSocket = window.WebSocket;
window.WebSocket = class extends PageSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        window.lensFrames.push(new TextDecoder().decode(event.data));
      }
    });
  }
};
"""

# The terminal's selection, as xterm.js copies it (its copy handler fills the clipboard).
COPY_SELECTION = """() => {
  const clipboard = new DataTransfer();
  document.querySelector(".xterm-helper-textarea").dispatchEvent(
    new ClipboardEvent("copy", {clipboardData: clipboard, bubbles: true, cancelable: true}));
  return clipboard.getData("text/plain");
}"""

# How many colours a PNG (base64) holds: 1 for a blank page.
COLOURS = """async (png) => {
  const image = new Image();
  image.src = "data:image/png;base64," + png;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const seen = new Set();
  for (let i = 0; i < data.length; i += 4) {
    seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
  }
  return seen.size;
}"""


# A page's script that opens a websocket to the lens: "open", or "closed <code>" if refused.
OPEN_SOCKET = """(url) => new Promise((resolve) => {
  const socket = new WebSocket(url);
  socket.onopen = () => { resolve("open"); socket.close(); };
  socket.onclose = (event) => resolve("closed " + event.code);
})"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A served lens over the trends store (four runs; RUN4 the newest): its base URL and
    the URL it printed (with its token)."""
    store = write_trends_store(tmp_path_factory.mktemp("browser") / "store")
    with serving(store) as (url, line):
        printed = re.search(r"http://\S+", line)
        assert printed is not None and token_in(line) in printed.group(0)
        yield url, printed.group(0)


@pytest.fixture(scope="module")
def base(served: tuple[str, str]) -> str:
    return served[0]


@pytest.fixture(scope="module")
def printed(served: tuple[str, str]) -> str:
    return served[1]


@pytest.fixture
def other_origin() -> Iterator[str]:
    """Another local web server (127.0.0.1, another port), as any page the user has open
    could be: its base URL (every path serves an empty page)."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>another page</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, base: str) -> Iterator[Any]:
    """A fresh tab that reaches only the served lens (the page also links a web font,
    which an offline test machine must not wait for)."""
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(RECORD_FRAMES)
    context.route("**/*", lambda route: route.continue_()
                  if route.request.url.startswith(base + "/") else route.abort())
    tab = context.new_page()
    yield tab
    context.close()


def _sent(page: Any, *wanted: str, after: int = 0) -> int:
    """Wait until the lens's frames (from the ``after``-th on) hold every ``wanted`` and the
    terminal shows (past its fade-in); how many frames came so far."""
    page.wait_for_function(
        """([wanted, after]) => {
             const text = window.lensFrames.slice(after).join("");
             const terminal = document.querySelector(".textual-terminal");
             return wanted.every((w) => text.includes(w)) && terminal !== null
               && getComputedStyle(terminal).opacity === "1";
           }""", arg=[list(wanted), after])
    return int(page.evaluate("() => window.lensFrames.length"))


def _terminal_text(page: Any, *wanted: str) -> list[str]:
    """The terminal's lines as xterm.js holds them (a shift-drag selects past Textual's
    mouse reporting, then its copy), once they hold every ``wanted``."""
    box = page.locator(".xterm-screen").bounding_box()
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        page.keyboard.down("Shift")
        page.mouse.move(box["x"] + 1, box["y"] + 1)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] - 1, box["y"] + box["height"] - 1, steps=4)
        page.mouse.up()
        page.keyboard.up("Shift")
        text = str(page.evaluate(COPY_SELECTION))
        if all(w in text for w in wanted):
            return text.splitlines()
        assert time.monotonic() < deadline, f"the terminal never showed {wanted}: {text!r}"
        page.wait_for_timeout(200)


def _screenshot(page: Any, path: Path) -> bytes:
    """A screenshot saved at ``path``, checked not to be blank."""
    png: bytes = page.screenshot(path=path)
    import base64

    colours = page.evaluate(COLOURS, base64.b64encode(png).decode("ascii"))
    assert colours >= 8, f"{path.name} is blank ({colours} colours)"
    return png


def test_given_a_served_lens_when_chromium_opens_its_page_then_the_terminal_shows_the_runs(
    page: Any, printed: str, tmp_path: Path,
) -> None:
    page.goto(printed)  # the owner's URL, as `footprint lens --serve` printed it
    _sent(page, "4 runs")
    _screenshot(page, tmp_path / "runs.png")

    lines = _terminal_text(page, "4 runs", "2026-01-02 12:00:00")
    assert lines[0].split() == ["footprint", "lens", "runs", "·", "store", "store", "·", "4",
                                "runs"]
    assert sum(" complete " in line or " failed " in line or " incomplete " in line
               for line in lines) == 4


def test_given_a_deep_link_when_chromium_opens_it_and_presses_d_then_the_screen_changes(
    page: Any, base: str, printed: str, tmp_path: Path,
) -> None:
    page.context.request.get(printed)  # the owner's URL once: its cookie opens deep links
    page.goto(f"{base}/run/last/why")
    frames = _sent(page, RUN4, "why")
    why_png = _screenshot(page, tmp_path / "why.png")
    [title, *_] = _terminal_text(page, f"why · run {RUN4}")
    assert title.split()[:5] == ["footprint", "lens", "why", "·", "run"]
    assert RUN4 in title

    page.focus(".xterm-helper-textarea")  # where xterm.js takes the keyboard
    page.keyboard.press("d")
    _sent(page, "decisions", after=frames)
    decisions_png = _screenshot(page, tmp_path / "decisions.png")
    # the rows may paint a frame after the title and count: wait for one of them too
    [title, *rest] = _terminal_text(page, f"decisions · run {RUN4}", "5 of 5 events",
                                    "route.decided")
    assert title.split()[:5] == ["footprint", "lens", "decisions", "·", "run"]
    assert any("route.decided" in line for line in rest)
    assert decisions_png != why_png


def test_given_the_owners_cookie_when_another_local_origin_opens_the_websocket_then_refused(
    browser: Any, base: str, printed: str, other_origin: str,
) -> None:
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    allowed = (base + "/", other_origin + "/")
    context.route("**/*", lambda route: route.continue_()
                  if route.request.url.startswith(allowed) else route.abort())
    try:
        context.request.get(printed)  # the owner opened the lens in this browser
        assert [c["name"] for c in context.cookies(base)] == \
            [f"footprint_lens_token_{base.rsplit(':', 1)[1]}"]
        socket = f"ws{base[4:]}/ws?width=80&height=24"
        tab = context.new_page()
        tab.goto(other_origin + "/")
        refused = tab.evaluate(OPEN_SOCKET, socket)
        tab.goto(f"{base}/run/last/why")  # the lens's own page, the same script, the same cookie
        opened = tab.evaluate(OPEN_SOCKET, socket)
    finally:
        context.close()
    assert (refused, opened) == ("closed 1006", "open")


@pytest.fixture(scope="module")
def helpdesk_printed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A served lens over the helpdesk store (sessions, a dataset, two experiments): its
    base URL and the URL it printed."""
    from lens_data_support import record_lens_data

    store = tmp_path_factory.mktemp("helpdesk") / "store"
    writer = threading.Thread(target=record_lens_data, args=(store,))  # off Playwright's loop
    writer.start()
    writer.join()
    assert (store / "experiments" / "changed.parquet").is_file()
    with serving(store) as (url, line):
        printed = re.search(r"http://\S+", line)
        assert printed is not None
        yield url, printed.group(0)


def test_given_a_served_lens_when_s_and_e_are_pressed_then_sessions_and_a_comparison_show(
    browser: Any, helpdesk_printed: tuple[str, str], tmp_path: Path,
) -> None:
    base, printed = helpdesk_printed
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(RECORD_FRAMES)
    context.route("**/*", lambda route: route.continue_()
                  if route.request.url.startswith(base + "/") else route.abort())
    try:
        page = context.new_page()
        page.goto(printed)
        frames = _sent(page, "42 runs")
        page.focus(".xterm-helper-textarea")
        page.keyboard.press("S")
        frames = _sent(page, "chat-0", after=frames)
        lines = _terminal_text(page, "sessions ·", "chat-1", "conversation")
        assert any(line.split()[:2] == ["chat-0", "session"] for line in lines)
        _screenshot(page, tmp_path / "sessions.png")
        page.keyboard.press("Escape")  # alone: escape then a key at once reads as alt+key
        _terminal_text(page, "runs ·", "answer / error")
        page.keyboard.press("E")
        frames = _sent(page, "changed", after=frames)
        for key in ("b", "ArrowDown", "c"):
            page.keyboard.press(key)
        _sent(page, "regressed", after=frames)
        lines = _terminal_text(page, "compare ·", "cause: returns")
        assert sum(line.split()[1:4] == ["regressed", "1/1", "0/1"] for line in lines) == 3
        _screenshot(page, tmp_path / "compare.png")
    finally:
        context.close()
