"""Control characters made visible: one mapping for DOT text and for terminal output.

A module name may hold any code point, and a stored snapshot file any bytes. Written
raw, a NUL or ESC makes DOT that renderers reject, a lone surrogate cannot be encoded
at all, and an escape sequence read from a stored file would reach the terminal (a fake
"1 passed" line, a cleared screen). :func:`visible` replaces each such character by its
escape, ``\\x01`` or ``\\ud800``, so the text stays readable and on one line.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["visible"]

#: Bidirectional overrides and isolates: they reorder the text a reader sees.
_BIDI: Final = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _table() -> dict[int, str]:
    """Every C0/C1 control but tab, DEL, every surrogate, the line and paragraph
    separators (``str.splitlines`` breaks on them) and the bidi controls."""
    codes = [c for c in range(0x100) if unicodedata.category(chr(c)) == "Cc" and c != 0x09]
    codes += [*range(0xD800, 0xE000), 0x2028, 0x2029, *_BIDI]
    return {code: _escape(code) for code in codes}


_VISIBLE: Final = _table()


def visible(text: str) -> str:
    """``text`` with every control character replaced by its visible escape."""
    # Printable text (the usual case) holds none of them: one scan in C.
    if text.isprintable():
        return text
    return text.translate(_VISIBLE)
