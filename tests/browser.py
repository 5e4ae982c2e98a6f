"""A small Chrome DevTools Protocol driver for headless Chromium (Debian's ``chromium``).

It speaks CDP over ``--remote-debugging-pipe`` (JSON messages separated by NUL bytes on
file descriptors 3 and 4), so it needs no websocket library and opens no port. Only
what the report tests need: open a page, evaluate an expression, press keys, drag and
turn the wheel with the mouse, take a screenshot, and keep every script error and
console error the page produced.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

__all__ = ["CHROMIUM", "Browser", "BrowserError"]

CHROMIUM: Final = "/usr/bin/chromium"
FLAGS: Final = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-pipe", "--window-size=1280,900",
)  # fmt: skip


#: ``code`` and Windows key code of the keys :meth:`Browser.press` knows by name or
#: that are not letters.
_KEYS: Final = {
    "ArrowDown": ("ArrowDown", 40), "ArrowUp": ("ArrowUp", 38), "Escape": ("Escape", 27),
    "ArrowLeft": ("ArrowLeft", 37), "ArrowRight": ("ArrowRight", 39),
    "Home": ("Home", 36), "End": ("End", 35),
    "?": ("Slash", 191), "+": ("Equal", 187), "-": ("Minus", 189),
    **{str(d): (f"Digit{d}", 48 + d) for d in range(10)},
}  # fmt: skip


class BrowserError(RuntimeError):
    """Chromium is missing, died, or did not answer in time."""


def _high(*fds: int) -> tuple[int, ...]:
    """The descriptors moved to 10 and above, clear of the 3 and 4 Chromium reads."""
    import fcntl

    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, timeout: float = 20.0) -> None:
        if not os.access(CHROMIUM, os.X_OK):
            raise BrowserError(
                f"{CHROMIUM} not found: install Debian's chromium (scripts/setup.sh does)"
            )
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="tlgraph-chromium-")
        to_child, self._out = _high(*os.pipe())  # we write commands, Chromium reads fd 3
        self._in, from_child = _high(*os.pipe())  # Chromium writes fd 4, we read
        # The shell puts our pipe ends on the descriptors Chromium expects, 3 and 4.
        moves = f"3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-"
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" {moves}', CHROMIUM, *FLAGS,
             f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_child, from_child),
        )  # fmt: skip
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.errors: list[str] = []
        self.session = ""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        attached = self.call("Target.attachToTarget", targetId=target, flatten=True)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop this Chromium and remove its profile."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._in, self._out):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _send(self, method: str, params: dict[str, Any]) -> int:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        return self._next

    def _read(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer within {self.timeout:g} s")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed its debugging pipe (it exited)")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        self._note(message)
        return message

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"script error: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            args = " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            self.errors.append(f"console error: {args}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"log error: {params['entry'].get('text')}")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (raises on a protocol error)."""
        wanted = self._send(method, params)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def wait_for(self, event: str) -> dict[str, Any]:
        """Read messages until ``event`` arrives; return its parameters."""
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline)
            if message.get("method") == event:
                params: dict[str, Any] = message.get("params", {})
                return params

    def open(self, path: Path) -> None:
        """Load a local file and wait for its load event (every image fetched)."""
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (promises awaited)."""
        found = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in found:
            raise BrowserError(f"evaluate failed: {found['exceptionDetails']}")
        return found["result"].get("value")

    def press(self, key: str) -> None:
        """Press and release one key as a user would (``"j"``, ``"?"``, ``"ArrowDown"``),
        on whatever element has the focus."""
        code, keycode = _KEYS[key] if key in _KEYS else (f"Key{key.upper()}", ord(key.upper()))
        down: dict[str, Any] = {"key": key, "code": code, "windowsVirtualKeyCode": keycode}
        if len(key) == 1:
            self.call("Input.dispatchKeyEvent", type="keyDown", text=key, **down)
        else:
            self.call("Input.dispatchKeyEvent", type="rawKeyDown", **down)
        self.call("Input.dispatchKeyEvent", type="keyUp", **down)

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 4) -> None:
        """Drag with the left button from ``start`` to ``end`` (viewport pixels)."""
        (x0, y0), (x1, y1) = start, end
        mouse = "Input.dispatchMouseEvent"
        self.call(mouse, type="mouseMoved", x=x0, y=y0)
        self.call(mouse, type="mousePressed", x=x0, y=y0, button="left", buttons=1, clickCount=1)
        for i in range(1, steps + 1):
            x, y = x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps
            self.call(mouse, type="mouseMoved", x=x, y=y, button="left", buttons=1)
        self.call(mouse, type="mouseReleased", x=x1, y=y1, button="left", buttons=0, clickCount=1)

    def wheel(self, at: tuple[float, float], delta_y: float) -> None:
        """Turn the mouse wheel over ``at`` (negative ``delta_y``: away from the user)."""
        x, y = at
        self.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0,
                  deltaY=delta_y)  # fmt: skip

    def screenshot(self, *, full_page: bool = False) -> bytes:
        """A PNG of the viewport (or of the whole page)."""
        found = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=full_page)
        return base64.b64decode(found["data"])
