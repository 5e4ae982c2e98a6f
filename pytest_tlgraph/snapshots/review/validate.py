"""The check of a record read from a results folder, before any command trusts it.

A record is JSON in a folder anyone can write to (a downloaded CI artifact, a shared
folder, a hand edit): every field is checked for its type here, once, and a record
with a field of the wrong type is left out with one line naming the file and the
field (``tlgraph report``, ``review`` and ``accept`` print it), never a traceback
further on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["call_problem", "record_problem"]

Check = Callable[[Any], bool]


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _paths(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def _sections(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(s, list) and len(s) == 2 and isinstance(s[0], str) and _texts(s[1])
        for s in value
    )


def _call(value: Any) -> bool:
    return value is None or (isinstance(value, (int, str)) and not isinstance(value, bool))


def _mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


_ACCEPT: Final[dict[str, Check]] = {
    "name": _text,
    "png_compared": lambda v: isinstance(v, bool),
    "received_dot": _text,
    "received_dot_sha256": _text,
    "received_png": _optional(_text),
    "dot_sha256": _optional(_text),
    "png_sha256": _optional(_text),
}

#: The fields of a failure record (``.records/*.json``) and the type each must have.
_FAILURE: Final[dict[str, Check]] = {
    "nodeid": _text,
    "title": _text,
    "story": _optional(_text),
    "sections": _sections,
    "images": _paths,
    "files": _optional(_texts),
    "base": _optional(_text),
    "rootdir": _optional(_text),
    "call": _call,
    "drift": _optional(_mapping),
    "upgrade": _optional(_texts),
    "results_from_rootdir": _optional(_text),
    "results": _optional(_text),
}

#: The fields of a call record (``.records/*.call``) for the summaries.
_CALL: Final[dict[str, Check]] = {
    "nodeid": _text,
    "name": _text,
    "verdict": _text,
    "artifacts": _optional(_paths),
    "structure": _optional(_mapping),
    "drift": _optional(_mapping),
}


def _problem(record: Mapping[str, Any], fields: Mapping[str, Check], required: str) -> str | None:
    for name in required.split():
        if name not in record:
            return f"it has no {name!r}"
    for name, check in fields.items():
        if name in record and not check(record[name]):
            return f"its field {name!r} has the wrong type ({type(record[name]).__name__})"
    return None


def record_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a failure record, in a few words; ``None`` when every field
    it has is of its type (the accept entry's too)."""
    found = _problem(record, _FAILURE, "nodeid")
    if found is not None:
        return found
    accept = record.get("accept")
    if accept is None:
        return None
    if not isinstance(accept, Mapping):
        return f"its field 'accept' has the wrong type ({type(accept).__name__})"
    found = _problem(accept, _ACCEPT, "")
    return None if found is None else found.replace("field '", "field 'accept.", 1)


def call_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a call record of the summaries; ``None`` when nothing is."""
    return _problem(record, _CALL, "nodeid name verdict")
