"""``did you mean ...?`` for a mistyped option value or name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(value: object, choices: Iterable[object]) -> str:
    """`` (did you mean 'flops'?)`` when ``value`` is a string close to one of the string
    ``choices`` (difflib's ratio at least 0.6), else ``""``: append it to an error."""
    if not isinstance(value, str):
        return ""
    names = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
    if not close:
        lowered = {n.lower(): n for n in names}
        close = [lowered[value.lower()]] if value.lower() in lowered else []
    return f" (did you mean {close[0]!r}?)" if close else ""
