"""The style sheet and the script of ``report.html``: ``assets/report.css`` and
``assets/report.js``, shipped as package data and inlined into the page (one file to
upload as a CI artifact, no network). What the script does is told at the top of
``report.js``.
"""

from __future__ import annotations

import functools
from importlib.resources import files

__all__ = ["script", "style"]


@functools.cache
def _asset(name: str, closing: str) -> str:
    text = files(__package__).joinpath("assets", name).read_text(encoding="utf-8")
    if closing in text.lower():  # it would end the page's element early
        raise ValueError(f"assets/{name} must not contain {closing}")
    return text


def style() -> str:
    """The page's style sheet (``assets/report.css``)."""
    return _asset("report.css", "</style")


def script() -> str:
    """The page's script (``assets/report.js``)."""
    return _asset("report.js", "</script")
