"""An args row or call as a mapping: ``kernel_size=(3, 3), stride=1`` ->
``{"kernel_size": "(3, 3)", "stride": "1"}``.

The label rows' reading (:mod:`pytest_tlgraph.diff.view.rows`), an op's facts
(:mod:`.facts`) and the story's name of a constant (:mod:`.constants`) split the
drawing's text the same way, here.
"""

from __future__ import annotations

__all__ = ["split_args"]


def split_args(text: str) -> dict[str, str]:
    """``kernel_size=(3, 3), stride=1`` -> ``{"kernel_size": "(3, 3)", "stride": "1"}``.

    Splits on commas outside brackets, so tuple values stay whole; a part that does not
    start with ``identifier=`` belongs to the previous arg (a comma inside an unbracketed
    value). Values come back stripped.
    """
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    out: dict[str, str] = {}
    for part in parts:
        name, sep, value = part.strip().partition("=")
        if sep and name.isidentifier():
            out[name] = value.strip()
        elif out:
            # A comma inside an unbracketed value: it belongs to the previous arg.
            last = next(reversed(out))
            out[last] += "," + part
    return out
