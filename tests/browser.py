"""A small driver of headless Chromium through the DevTools protocol over a pipe (Chromium's
--remote-debugging-pipe: commands on its fd 3, answers on its fd 4, each a JSON message ended by
a NUL byte), so that tests open real pages without a websocket client or a WebDriver.

    with Browser() as browser:
        browser.navigate(page.as_uri())
        browser.wait_for("document.body.dataset.ready === '1'")
        browser.type("#search", "bcast")
        browser.click("#results a")
        title = browser.evaluate("document.querySelector('h2').textContent")
        browser.screenshot(Path("entry.png"), selector="#entry")

Every method raises BrowserError with what failed (a protocol error, a JavaScript exception, a
condition that did not hold in time); `available()` says whether Chromium is installed.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """What the browser refused or what did not happen in time."""


def executable() -> str | None:
    """The Chromium binary on PATH ($CHROMIUM overrides), or None."""
    override = os.environ.get("CHROMIUM")
    if override:
        return override
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def available() -> bool:
    return executable() is not None


class Browser:
    """One headless Chromium with one page (a tab) attached in flat session mode."""

    def __init__(self, width: int = 1280, height: int = 900, timeout_s: float = 20.0) -> None:
        binary = executable()
        if binary is None:
            raise BrowserError(f"no Chromium on PATH (looked for {', '.join(CANDIDATES)})")
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="hb-chromium-")
        # Chromium's own log goes to a file (a pipe nobody read would fill and stall it).
        self.log = open(Path(self.profile) / "chromium.log", "wb")  # noqa: SIM115 - closed in close()
        flags = [
            "--headless=new", "--remote-debugging-pipe", "--no-first-run",
            "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
            "--disable-background-networking", "--disable-dev-shm-usage", "--mute-audio",
            f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
        ]  # fmt: skip
        if os.geteuid() == 0:
            # Chromium's own sandbox needs an unprivileged user namespace it refuses to make as
            # root; the pages a test opens are the project's own files.
            flags.append("--no-sandbox")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # Above fd 4, so that the shell's redirections below never close the end they move.
        for name in ("to_browser_read", "from_browser_write"):
            low = locals()[name]
            high = fcntl.fcntl(low, fcntl.F_DUPFD, 10)
            os.close(low)
            if name == "to_browser_read":
                to_browser_read = high
            else:
                from_browser_write = high
        # bash (dash takes one-digit fds only) puts the two pipe ends at the fds Chromium reads (3) and writes (4).
        self.process = subprocess.Popen(
            ["/bin/bash", "-c",
             f'exec "$0" "$@" 3<&{to_browser_read} 4>&{from_browser_write} '
             f"{to_browser_read}<&- {from_browser_write}>&-", binary, *flags, "about:blank"],
            pass_fds=(to_browser_read, from_browser_write),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
        )  # fmt: skip
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"}, page=False)
            attached = self.send(
                "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                page=False,
            )  # fmt: skip
            self.session = attached["sessionId"]
            self.send("Page.enable")
            self.send("Runtime.enable")
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            self.close()
            raise

    # -- the protocol ------------------------------------------------------------------------

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrowserError("Chromium did not answer in time")
            # poll, not select: a test session may hold descriptors past FD_SETSIZE.
            waiting = select.poll()
            waiting.register(self.from_browser, select.POLLIN)
            ready = waiting.poll(remaining * 1e3)
            if not ready:
                continue
            data = os.read(self.from_browser, 1 << 20)
            if not data:
                self.log.flush()
                stderr = (Path(self.profile) / "chromium.log").read_bytes().decode(errors="replace")
                raise BrowserError(f"Chromium closed its pipe: {stderr.strip()[-800:]}")
            self.buffer += data
        message, _, self.buffer = self.buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def send(
        self, method: str, params: dict[str, Any] | None = None, page: bool = True
    ) -> dict[str, Any]:
        """One protocol command (to the page's session unless `page` is false); its result."""
        self.next_id += 1
        command: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if page and self.session is not None:
            command["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            message = self._message(deadline)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error'].get('message')}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method: str, timeout_s: float | None = None) -> dict[str, Any]:
        """The first event named `method` since the last one taken (waiting for it)."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            for position, event in enumerate(self.events):
                if event["method"] == method:
                    del self.events[: position + 1]
                    return event
            self.events.append(self._message(deadline))

    # -- what a test does --------------------------------------------------------------------

    def navigate(self, url: str) -> None:
        """Open `url` and wait for its load event (a change of the #fragment alone has none)."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        answer = self.send("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise BrowserError(f"navigate {url}: {answer['errorText']}")
        if answer.get("loaderId"):
            self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        answer = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression[:120]!r} threw: {text}")
        return answer["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float | None = None) -> Any:
        """Poll `expression` until it is truthy; its value."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression[:160]!r} did not hold within the time allowed")
            time.sleep(0.05)

    def center(self, selector: str) -> tuple[float, float]:
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        if box is None:
            raise BrowserError(f"no element matches {selector!r}")
        return float(box[0]), float(box[1])

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the first match."""
        x, y = self.center(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def type(self, selector: str, text: str) -> None:
        """Focus the first match, select what it holds and type `text` over it (input events
        fire as for a person typing)."""
        self.click(selector)
        self.evaluate(f"document.querySelector({json.dumps(selector)}).select()")
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path: Path, selector: str | None = None) -> Path:
        """A PNG of the viewport, or of the first match of `selector` (scrolled to its top)."""
        params: dict[str, Any] = {"format": "png"}
        if selector is not None:
            rect = self.evaluate(
                f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                " if (!e) return null; window.scrollTo(0, 0); const r = e.getBoundingClientRect();"
                " return [r.x + window.scrollX, r.y + window.scrollY, r.width, r.height]; })()"
            )
            if rect is None:
                raise BrowserError(f"no element matches {selector!r}")
            x, y, width, height = rect
            params.update(clip={"x": x, "y": y, "width": width, "height": height, "scale": 1},
                          captureBeyondViewport=True)  # fmt: skip
        shot = self.send("Page.captureScreenshot", params)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def close(self) -> None:
        """End Chromium (politely, then by force) and remove its profile."""
        try:
            if self.process.poll() is None:
                try:
                    os.write(
                        self.to_browser,
                        json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0",
                    )
                    self.process.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    self.process.kill()
                    self.process.wait(timeout=5)
        finally:
            for fd in (self.to_browser, self.from_browser):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
