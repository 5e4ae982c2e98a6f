"""Renderers: DOT text -> PNG bytes. The only module that runs a Graphviz program.

``pure`` (default) runs the ``graphviz-pure`` command from the pinned wheel: fonts
compiled in, so its PNGs are byte-identical on every machine. ``system`` runs the system
``dot`` through the ``graphviz`` Python package. The dpi is always passed explicitly.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from typing import Final

from pytest_tlgraph.errors import RenderError
from pytest_tlgraph.limits import MAX_DPI, check_dpi

__all__ = [
    "MAX_DPI",
    "RENDERERS",
    "get_default_renderer",
    "render_png",
    "render_png_layout",
    "render_svg",
    "renderer_version",
    "set_default_renderer",
]

RENDERERS: Final = ("pure", "system")
_TIMEOUT_S: Final = 300
_default = "pure"


def set_default_renderer(name: str) -> None:
    """Choose the renderer ``Drawing.png()`` uses when none is named."""
    global _default
    _check(name)
    _default = name


def get_default_renderer() -> str:
    """The renderer ``Drawing.png()`` uses when none is named."""
    return _default


def _check(name: str) -> None:
    if name not in RENDERERS:
        raise RenderError(
            f"unknown renderer {name!r}; use one of {', '.join(RENDERERS)}", renderer=name
        )


@functools.cache
def _pure_executable() -> str:
    """The ``graphviz-pure`` program: beside this interpreter first, then on PATH."""
    local = os.path.join(os.path.dirname(sys.executable), "graphviz-pure")
    found = local if os.access(local, os.X_OK) else shutil.which("graphviz-pure")
    if found is None:
        raise RenderError(
            "renderer 'pure' (graphviz-pure) is not installed: the graphviz-pure command "
            "was not found. Remedy: pip install graphviz-pure==0.2.2 (a pytest-tlgraph "
            "dependency), or choose --tlgraph-renderer=system.",
            renderer="pure",
        )
    return found


def _run_pure(dot: str, dpi: int, fmt: str = "png", *more: str) -> bytes:
    cmd = [_pure_executable(), f"-T{fmt}", *(f"-T{m}" for m in more), f"-Gdpi={dpi}"]
    try:
        done = subprocess.run(cmd, input=dot.encode(), capture_output=True, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        raise RenderError(
            f"renderer 'pure' (graphviz-pure) did not finish within {_TIMEOUT_S} s: the "
            "graph is too large to lay out. Remedy: draw fewer nodes with "
            "collapse='auto' or depth=N, or skip the PNG with png=False.",
            renderer="pure",
        ) from error
    except OSError as error:
        raise RenderError(
            f"renderer 'pure' (graphviz-pure) could not run: {error}. Remedy: reinstall "
            "graphviz-pure, or choose --tlgraph-renderer=system.",
            renderer="pure",
        ) from error
    if done.returncode != 0 or not done.stdout:
        raise RenderError(
            f"renderer 'pure' (graphviz-pure) failed with exit code {done.returncode}: "
            f"{done.stderr.decode(errors='replace').strip()[:500]}. Remedy: check the DOT "
            "text, or choose --tlgraph-renderer=system.",
            renderer="pure",
        )
    return done.stdout


def _dot_not_found() -> RenderError:
    """The error of the ``system`` renderer when Graphviz's ``dot`` is not installed."""
    return RenderError(
        "renderer 'system' needs Graphviz's dot program, which was not found on PATH. "
        "Remedy: install Graphviz (e.g. apt-get install graphviz), or use the default "
        "--tlgraph-renderer=pure.",
        renderer="system",
    )


def _run_system(dot: str, dpi: int, fmt: str = "png") -> bytes:
    import graphviz

    # graphviz.pipe() takes no -G flags; a leading graph attribute statement is the
    # same explicit dpi (our DOT never sets dpi itself, so nothing overrides it).
    text = dot.replace("{\n", f"{{\n  graph [dpi={dpi}];\n", 1)
    if shutil.which("dot") is None:
        raise _dot_not_found()  # one line: no chain of the graphviz package's frames
    try:
        out: bytes = graphviz.pipe("dot", fmt, text.encode(), quiet=True)
        return out
    except graphviz.ExecutableNotFound:
        raise _dot_not_found() from None
    except graphviz.CalledProcessError as error:
        stderr = (error.stderr or b"").decode(errors="replace").strip()[:500]
        raise RenderError(
            f"renderer 'system' (dot) failed: {stderr}. Remedy: check the DOT text, or use "
            "--tlgraph-renderer=pure.",
            renderer="system",
        ) from error


def render_png(dot: str, *, renderer: str | None = None, dpi: int = 96) -> bytes:
    """Render DOT text to PNG bytes with ``renderer`` (default: the configured one)."""
    name = renderer or _default
    _check(name)
    check_dpi(dpi)
    return _run_pure(dot, dpi) if name == "pure" else _run_system(dot, dpi)


def render_png_layout(dot: str, *, renderer: str | None = None, dpi: int = 96) -> tuple[bytes, str]:
    """The PNG and Graphviz's ``plain`` layout of the same drawing (node centres and
    sizes in inches, y up): ``pure`` writes both from one layout, ``system`` lays it
    out twice (``dot`` is deterministic)."""
    name = renderer or _default
    _check(name)
    check_dpi(dpi)
    if name == "system":
        return _run_system(dot, dpi), _run_system(dot, dpi, "plain").decode("utf-8", "replace")
    out = _run_pure(dot, dpi, "png", "plain")
    end = out.find(b"IEND")
    if end < 0:
        raise RenderError("renderer 'pure' wrote no whole PNG", renderer="pure")
    end += 8  # the chunk's type and its CRC
    return out[:end], out[end:].decode("utf-8", "replace")


def render_svg(dot: str, *, renderer: str | None = None) -> bytes:
    """Render DOT text to SVG bytes (UTF-8) with ``renderer`` (default: the configured one)."""
    name = renderer or _default
    _check(name)
    return _run_pure(dot, 72, "svg") if name == "pure" else _run_system(dot, 72, "svg")


@functools.cache
def renderer_version(renderer: str) -> str:
    """``graphviz-pure 0.2.2`` / ``dot 2.43.0``: recorded with every baseline PNG."""
    _check(renderer)
    if renderer == "pure":
        from importlib.metadata import version

        return f"graphviz-pure {version('graphviz-pure')}"
    import graphviz

    if shutil.which("dot") is None:
        raise _dot_not_found()
    try:
        return "dot " + ".".join(str(part) for part in graphviz.version())
    except graphviz.ExecutableNotFound:
        raise _dot_not_found() from None
