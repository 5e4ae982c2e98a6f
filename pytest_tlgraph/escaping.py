"""One escaping function per sink a reviewer reads: the terminal, markdown, HTML; one
sanitiser under all three.

A test id, a module name or a snapshot name may hold any code point, and each reaches
the reviewer through one of three sinks. Every writer of a sink passes untrusted text
through that sink's one function:

* :func:`terminal` (the failure message, ``tlgraph report``, ``diff``, ``accept``): every
  control character shown as its visible escape (``\\x1b``), as in the DOT, so a name
  cannot retitle the terminal, clear the screen or fake a line;
* :func:`markdown` (``summary.md``, ``$GITHUB_STEP_SUMMARY``): a code span the content
  cannot close, safe in a table cell: no link, image, HTML or emphasis can come alive;
* :func:`html_text` (``report.html``: headings, the command the copy button copies):
  ``html.escape`` with quotes, for text and attribute values alike, after the same
  sanitiser.

The sanitiser (:func:`reviewer`) shows every character of the Unicode categories Cc
(controls, tab included), Cf (format: bidi overrides, zero-width spaces, soft hyphens),
Zl and Zp (line and paragraph separators), and every lone surrogate, as its escape
(``\\u200b``): none can reorder, hide or break a line a reviewer reads.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Final

__all__ = ["html_text", "markdown", "reviewer", "terminal"]

_BACKTICKS: Final = re.compile(r"`+")
#: The categories a reviewer surface never shows raw.
_HIDDEN: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def reviewer(text: str) -> str:
    """``text`` with every Cc, Cf, Zl and Zp character (and lone surrogate) shown as
    its escape: the one sanitiser of every reviewer surface."""
    if text.isprintable():  # the usual case: one scan in C (every such char is not)
        return text
    return "".join(_escape(c) if unicodedata.category(c) in _HIDDEN else c for c in text)


def terminal(text: str) -> str:
    """``text`` for a terminal (:func:`reviewer`): one line that prints as it reads."""
    return reviewer(text)


def markdown(text: str, *, cell: bool = True) -> str:
    """``text`` as a GitHub-flavoured markdown code span, safe in a table cell (or, with
    ``cell=False``, anywhere inline outside a table); ``""`` for empty text.

    The span's fence is one backtick longer than the longest run of backticks in the
    text, so the text cannot close it; inside a code span nothing is a link, an image,
    HTML or emphasis. Control characters are made visible first (:func:`terminal`: a line
    break would end the table row), and in a cell each ``|`` is written ``\\|``, which a
    table reads as part of the cell and the span shows as ``|``. A space pads the text when
    it starts or ends with a backtick or a space (the span takes one off each side,
    unless it is all spaces)."""
    if not text:
        return ""
    body = terminal(text)
    if cell:
        body = body.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * (longest + 1)
    if body.strip(" ") and (body[0] in "` " or body[-1] in "` "):
        body = f" {body} "
    return f"{fence}{body}{fence}"


def html_text(text: str) -> str:
    """``text`` for HTML, as element text or a quoted attribute value (:func:`reviewer`
    first: a bidi override or a C1 control never reaches a heading or a copied
    command)."""
    return html.escape(reviewer(text), quote=True)
