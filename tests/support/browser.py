"""Headless Chromium from Debian's packages, driven by Playwright for Python, for the web client's
tests: one browser for the whole run, a fresh context (its own storage: one person, one device)
per user.

Playwright's own browser download cannot run here (no network but the package registries), so
it is pointed at `/usr/bin/chromium` (`WARBLE_CHROMIUM` to use another), which
`scripts/bootstrap.sh` installs.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("WARBLE_CHROMIUM", "/usr/bin/chromium")
# The flags that keep Chromium quiet on a machine with no network but loopback: without the
# background-networking ones it keeps trying Google's hosts.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1100, "height": 760}
PHONE = {"width": 390, "height": 844}  # a phone's viewport (the issue 34 report's)
AXE = ROOT / "web" / "vendor" / "axe.min.js"  # axe-core, vendored (web/vendor/README.md)


def screenshot_dir(default: Path) -> Path:
    """Where screenshots go: `docs/screenshots` when WARBLE_SCREENSHOTS=docs (to refresh the
    pictures of the README and docs/web-client.md), else the test's own temporary directory
    (taken all the same, so the screens are rendered on every run without touching the work
    tree)."""
    if os.environ.get("WARBLE_SCREENSHOTS") == "docs":
        target = ROOT / "docs" / "screenshots"
        target.mkdir(parents=True, exist_ok=True)
        return target
    return default


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium for the run, or a clear failure naming what to install."""
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).is_file():
        raise RuntimeError(
            f"{CHROMIUM} not found: run scripts/bootstrap.sh (it installs Debian's chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class WebUser:
    """One person in one browser context, using the client as a person would: by labels,
    buttons and links, never by calling the API behind the page's back."""

    def __init__(
        self, browser: Any, web_url: str, apis: tuple[str, ...] = (), **context_args: Any
    ) -> None:
        self.web = web_url
        # Where the page may go: its own origin and the APIs, nothing else (no CDN, no private
        # endpoint on another port).
        # (blob: the page's own downloads, "Download my data").
        self.allowed = ("data:", "blob:", *(url.rstrip("/") + "/" for url in (web_url, *apis)))
        self.elsewhere: list[str] = []
        self.context = browser.new_context(**{"viewport": VIEWPORT, **context_args})
        self.context.set_default_timeout(15_000)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        # What the Content-Security-Policy refused is an error of the page too (issue 33).
        self.page.on("console", self._csp_violation)
        # A confirm() is accepted unless a test answers it otherwise (set `on_dialog`).
        self.on_dialog: Any = lambda dialog: dialog.accept()
        self.page.on("dialog", lambda dialog: self.on_dialog(dialog))
        self.page.on("request", lambda request: self._went(request.url))
        self.page.on("websocket", self._socket)
        self.sockets: list[str] = []  # the URL of every WebSocket the page opened, in order
        self.username = ""

    def _csp_violation(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.errors.append(message.text)

    def _socket(self, socket: Any) -> None:
        self.sockets.append(socket.url)
        self._went(socket.url)

    def _went(self, url: str) -> None:
        if not url.startswith(self.allowed):
            self.elsewhere.append(url)

    def open(self, route: str = "") -> None:
        self.page.goto(self.web + (f"#/{route}" if route else ""))

    def go(self, route: str) -> None:
        """Follow an in-app route without reloading the page (as a click on a link does)."""
        self.page.evaluate("route => { location.hash = '#/' + route; }", route)

    def sign_up(self, username: str, password: str = "password1") -> None:
        self.open("signup")
        form = self.page.locator("form.form")
        form.get_by_label("Username").fill(username)
        form.get_by_label("Email").fill(f"{username}@example.com")
        form.get_by_label("Password").fill(password)
        form.get_by_role("button", name="Create account").click()
        self.page.get_by_role("heading", name="Home").wait_for()
        self.username = username

    def log_in(self, login: str, password: str = "password1") -> None:
        self.open("login")
        form = self.page.locator("form.form")
        form.get_by_label("Username or email").fill(login)
        form.get_by_label("Password").fill(password)
        form.get_by_role("button", name="Log in").click()
        self.username = login

    def nav_badge(self, name: str) -> Any:
        """The unread badge on a navigation link (home, notifications, messages)."""
        return self.page.locator(f'a[data-nav="{name}"] .badge')

    def live(self) -> Any:
        return self.page.get_by_test_id("live-state")

    def accessibility(
        self, impacts: tuple[str, ...] = ("serious", "critical")
    ) -> list[dict[str, Any]]:
        """axe-core's violations of these impacts on the page as it is now (injected here; the
        client never loads it): each rule with the elements that break it. Serious and critical
        ones fail the browser tests (issue 47, item 14: contrast is "serious")."""
        if not self.page.evaluate("typeof axe !== 'undefined'"):
            # Evaluated by the browser's devtools protocol, which the page's Content Security
            # Policy does not govern (a <script> tag of it would be refused as inline script).
            self.page.evaluate(AXE.read_text() + "\n;undefined")
        violations: list[dict[str, Any]] = self.page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        )
        return [
            {"rule": v["id"], "help": v["help"], "where": [n["target"] for n in v["nodes"]]}
            for v in violations
            if v["impact"] in impacts
        ]

    def shot(self, directory: Path, name: str) -> Path:
        path = directory / f"{name}.png"
        self.page.locator(".toast").first.wait_for(state="detached", timeout=8_000)
        self.page.mouse.move(self.page.viewport_size["width"] - 1, 0)  # no hover effect
        self.page.screenshot(path=str(path))
        return path

    def close(self) -> None:
        self.context.close()
        assert not self.errors, f"uncaught errors in the page: {self.errors}"
        assert not self.elsewhere, f"requests outside the web client and the APIs: {self.elsewhere}"
        # A socket's URL is printed by the browser when a connect fails and kept by proxies: it
        # holds a single-use connect ticket, never the session's token (issue 47 item 15).
        tokens = [url for url in self.sockets if not SOCKET_URL.fullmatch(url)]
        assert not tokens, f"WebSocket URLs without a ticket, or with more: {tokens}"


# What the web client's socket URL may be: the API's root with one connect ticket.
SOCKET_URL = re.compile(r"wss?://[^/?#]+/?\?ticket=wst_[1-9][0-9]*_[A-Za-z0-9_-]{43}")


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")
