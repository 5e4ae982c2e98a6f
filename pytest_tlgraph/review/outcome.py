"""One frozen :class:`CallOutcome` per ``tlgraph_snapshot`` call: what every surface reads.

A call's outcome is built once, by the call (:func:`.failure.failed_outcome` for a
failing one), written once into the results folder (``.records/<stem>.outcome``: a file
per snapshot, so pytest-xdist workers never write the same file), and read back here,
validated field by field: the terminal, ``report.html``, ``summary.md``/``summary.json``,
``tlgraph report``, ``accept``, ``review`` and the shard merge all read these values. No
surface parses another's text: the story, the notes, the drift line, the headline and
the typed edits are fields of their own.

The file is JSON with a version (:data:`SCHEMA`); a record of another version, or with a
field of the wrong type, is left out with one line naming the file and the cause
(:class:`OutcomeError`), never a traceback further on.

Paths: the images and received files are relative to the results folder (the folder a CI
job uploads: the paths stay right after a download); ``where.results_from_rootdir`` is
that folder relative to pytest's rootdir, so an image relative to the rootdir is the
two joined (docs/decisions.md, "One outcome per call, one record").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pytest_tlgraph.diff.edits import Edit, from_json, to_json
from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.results.artifacts import read_record_files
from pytest_tlgraph.review.report import EncodingShown, LeftOut, Report

if TYPE_CHECKING:
    from pytest_tlgraph.results.artifacts import ResultsDir

__all__ = [
    "FAILED",
    "SCHEMA",
    "SUFFIX",
    "VERDICTS",
    "Acceptance",
    "CallOutcome",
    "Drift",
    "OutcomeError",
    "Place",
    "Structure",
    "Where",
    "call_order",
    "outcome_from_json",
    "outcome_to_json",
    "read_outcomes",
    "sorted_calls",
    "write_outcome",
]

#: The record's format; a reader refuses any other (one line, never a guess).
SCHEMA: Final = "tlgraph-call/1"
#: The record's file in ``.records``.
SUFFIX: Final = ".outcome"
#: A call's verdict: its pair matched, was written, differed, or had no snapshot.
VERDICTS: Final = ("passed", "written", "failed", "missing")
#: The verdicts of a call pending review (``report.html``, ``tlgraph accept``).
FAILED: Final = ("failed", "missing")
#: The record files earlier versions wrote (a failure's ``.json``, a call's ``.call``).
_OLD_SUFFIXES: Final = (".json", ".call")

#: The order the images of a call are shown in (any other kind after them, by name).
IMAGE_ORDER: Final = ("graphdiff", "graphdiff_full", "expected", "actual", "diff")

#: A story line's place in the structural diff drawing: ``x, y, w, h`` in its pixels.
Place = tuple[int, int, int, int]


class OutcomeError(UsageError):
    """A call record that does not read: another schema, or a field of the wrong type."""


@dataclass(frozen=True, slots=True)
class Drift:
    """The versions that drew the stored PNG, the running ones, and the line naming
    those that differ (``review.drift.drift_line``)."""

    stored: Mapping[str, str]
    running: Mapping[str, str]
    line: str


@dataclass(frozen=True, slots=True)
class Acceptance:
    """What ``tlgraph accept`` needs of a failing call: the received files (relative to
    the results folder) with the DOT's sha256, and the sha256 of the stored files as
    the comparison read them (``None``: missing)."""

    received_dot: str
    received_dot_sha256: str
    png_compared: bool
    received_png: str | None
    dot_sha256: str | None
    png_sha256: str | None


@dataclass(frozen=True, slots=True)
class Structure:
    """A DOT mismatch compared as data: the headline, the story, the typed edits and
    each kind of change (node ids), every text cut at the report's width."""

    headline: str
    story: tuple[str, ...]
    edits: tuple[Edit, ...]
    changes: tuple[str, ...]
    nodes_added: tuple[str, ...] = ()
    nodes_removed: tuple[str, ...] = ()
    replaced: tuple[tuple[str, ...], ...] = ()
    changed_nodes: tuple[str, ...] = ()
    moved: tuple[tuple[str, ...], ...] = ()
    renumbered: tuple[tuple[str, ...], ...] = ()
    edges_added: tuple[tuple[str, ...], ...] = ()
    edges_removed: tuple[tuple[str, ...], ...] = ()
    clusters_added: tuple[str, ...] = ()
    clusters_removed: tuple[str, ...] = ()
    clusters_changed: tuple[str, ...] = ()
    unsigned: tuple[str, ...] = ()
    recolour: str | None = None
    #: The kinds of upgrade difference the edits hold (``None``: some other edit).
    upgrade: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Where:
    """Where the call ran: the folder pytest ran in (the report's paths are relative to
    it), pytest's rootdir (node ids are), the results folder written, and that folder
    relative to the rootdir (``None`` outside it)."""

    base: str | None = None
    rootdir: str | None = None
    results: str | None = None
    results_from_rootdir: str | None = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """Everything one ``tlgraph_snapshot`` call found, as values."""

    nodeid: str
    name: str
    verdict: str
    #: The call's index as the fixture numbers it: its ``name=``, else the number of
    #: earlier calls in the test.
    call: int | str | None = None
    #: The failure message section by section (``None`` for a passing call).
    report: Report | None = None
    #: Per line of ``report.story``: its place in the structural diff drawing.
    places: tuple[Place | None, ...] = ()
    #: Why a structural diff drawing or an image is missing (``images`` names those
    #: written).
    notes: tuple[str, ...] = ()
    structure: Structure | None = None
    drift: Drift | None = None
    accept: Acceptance | None = None
    #: The images by kind (actual, expected, diff, graphdiff, graphdiff_full),
    #: relative to the results folder.
    images: Mapping[str, str] = field(default_factory=dict)
    #: Every file the failure left in the results folder, relative to it.
    files: tuple[str, ...] = ()
    where: Where = field(default_factory=Where)
    #: A merged run's shards that recorded it alike, and those that recorded it
    #: otherwise (``merge.conflict_line`` words the flag).
    shard: str | None = None
    conflict: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """The call is pending review (it failed, or had no snapshot)."""
        return self.verdict in FAILED

    @property
    def title(self) -> str:
        """The failure message's first line (``""`` for a passing call)."""
        return "" if self.report is None else self.report.title

    @property
    def story(self) -> tuple[str, ...]:
        """What changed, every line, the drift line first (``()``: a passing call, or a
        missing or unreadable snapshot, whose message says why instead)."""
        return () if self.report is None else self.report.story

    @property
    def headline(self) -> str:
        """The failure in one line: the comparison's headline, else the message's
        first line of what changed (a missing or unreadable snapshot)."""
        if self.structure is not None:
            return self.structure.headline
        report = self.report
        if report is not None:
            first = self.story or next((lines for _, lines in report.sections if lines), ())
            if first:
                return first[0]
        return "(no summary recorded)"

    @property
    def upgrade(self) -> tuple[str, ...] | None:
        """The kinds of upgrade difference of its DOT mismatch (``None``: none)."""
        return None if self.structure is None else self.structure.upgrade

    def fingerprint(self) -> tuple[object, ...]:
        """What makes two records of one call (two shards) the same outcome."""
        accept = self.accept
        stored = None if accept is None else (accept.dot_sha256, accept.png_sha256)
        received = None if accept is None else (accept.received_dot_sha256, accept.png_compared)
        return self.verdict, stored, received, self.headline, self.title


# -- JSON ---------------------------------------------------------------------------


def outcome_to_json(outcome: CallOutcome) -> dict[str, Any]:
    """The record's JSON form, versioned (:data:`SCHEMA`)."""
    report = outcome.report
    return {
        "schema": SCHEMA,
        "nodeid": outcome.nodeid,
        "name": outcome.name,
        "verdict": outcome.verdict,
        "call": outcome.call,
        "report": None if report is None else _report_json(report),
        "places": [None if p is None else list(p) for p in outcome.places],
        "notes": list(outcome.notes),
        "structure": None if outcome.structure is None else _structure_json(outcome.structure),
        "drift": None if outcome.drift is None else _plain(outcome.drift),
        "accept": None if outcome.accept is None else _plain(outcome.accept),
        "images": dict(outcome.images),
        "files": list(outcome.files),
        "where": _plain(outcome.where),
        "shard": outcome.shard,
        "conflict": list(outcome.conflict),
    }


def _plain(value: Drift | Acceptance | Where) -> dict[str, Any]:
    return {f.name: _listed(getattr(value, f.name)) for f in fields(value)}


def _listed(value: object) -> object:
    if isinstance(value, tuple):
        return [_listed(v) for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _report_json(report: Report) -> dict[str, Any]:
    left, shown = report.left_out, report.encoding
    return {
        "title": report.title,
        "sections": [[heading, list(lines)] for heading, lines in report.sections],
        "story": list(report.story),
        "left_out": None if left is None else {"count": left.count, "where": left.where},
        "encoding": None
        if shown is None
        else {"active": shown.active, "changed_from": shown.changed_from},
    }


def _structure_json(structure: Structure) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in fields(structure):
        value = getattr(structure, item.name)
        out[item.name] = [to_json(e) for e in value] if item.name == "edits" else _listed(value)
    return out


# -- reading, every field checked ---------------------------------------------------

_T = TypeVar("_T")


class _Reader:
    """One JSON object's fields, each read with its type checked (``where``: the
    field's dotted name, for the one line that says what is wrong)."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, Mapping):
            raise OutcomeError(
                f"its field {where!r} is not an object" if where else "not an object"
            )
        self.data, self.where = data, where

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, check: Callable[[object], bool], default: object = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise OutcomeError(f"it has no {self._name(key)!r}")
            return default
        value = self.data[key]
        if not check(value):
            kind = type(value).__name__
            raise OutcomeError(f"its field {self._name(key)!r} has the wrong type ({kind})")
        return value

    def text(self, key: str) -> str:
        return str(self.get(key, _is_text))

    def maybe_text(self, key: str) -> str | None:
        value = self.get(key, _optional(_is_text), None)
        return None if value is None else str(value)

    def texts(self, key: str) -> tuple[str, ...]:
        return tuple(self.get(key, _is_texts, []))

    def nested(self, key: str, read: Callable[[_Reader], _T]) -> _T | None:
        value = self.get(key, lambda v: True, None)
        return None if value is None else read(_Reader(value, self._name(key)))


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or check(value)


def _is_texts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_text_lists(value: object) -> bool:
    return isinstance(value, list) and all(_is_texts(v) for v in value)


def _is_text_map(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def _is_place(value: object) -> bool:
    return value is None or (
        isinstance(value, list) and len(value) == 4 and all(_is_int(v) and v >= 0 for v in value)
    )


def _is_sections(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(s, list) and len(s) == 2 and isinstance(s[0], str) and _is_texts(s[1])
        for s in value
    )


def _read_report(r: _Reader) -> Report:
    left = r.nested("left_out", lambda x: LeftOut(x.get("count", _is_int), x.maybe_text("where")))
    shown = r.nested(
        "encoding",
        lambda x: EncodingShown(
            bool(x.get("active", lambda v: isinstance(v, bool))),
            x.get("changed_from", _optional(_is_int), None),
        ),
    )
    sections = r.get("sections", _is_sections)
    return Report(
        r.text("title"),
        tuple((heading, tuple(lines)) for heading, lines in sections),
        r.texts("story"),
        left,
        shown,
    )


def _read_edit(data: object, where: str) -> Edit:
    if not isinstance(data, Mapping):
        raise OutcomeError(f"its field {where!r} holds an edit that is not an object")
    try:
        edit = from_json(data)
    except (ValueError, TypeError) as error:
        raise OutcomeError(
            f"its field {where!r} holds an edit that does not read ({error})"
        ) from None
    for item in fields(edit):
        if not _is_plain(getattr(edit, item.name)):
            raise OutcomeError(
                f"its field {where!r} holds an edit whose {item.name!r} is neither text "
                "nor a number"
            )
    return edit


def _is_plain(value: object) -> bool:
    """A value an edit's field holds: text, a number, a flag, nothing, or a tuple of
    texts and numbers."""
    if value is None or isinstance(value, (str, int, float)):
        return True
    return isinstance(value, tuple) and all(isinstance(v, (str, int, float)) for v in value)


#: The fields of :class:`Structure` that list tuples of node ids (pairs, edges, moves).
_PAIRS: Final = frozenset({"replaced", "moved", "renumbered", "edges_added", "edges_removed"})


def _read_structure(r: _Reader) -> Structure:
    values: dict[str, Any] = {}
    for item in fields(Structure):
        name = item.name
        if name == "edits":
            found = r.get(name, lambda v: isinstance(v, list), [])
            values[name] = tuple(_read_edit(e, r._name(name)) for e in found)
        elif name in ("headline", "recolour"):
            values[name] = r.text(name) if name == "headline" else r.maybe_text(name)
        elif name == "upgrade":
            found = r.get(name, _optional(_is_texts), None)
            values[name] = None if found is None else tuple(found)
        elif name in _PAIRS:
            values[name] = tuple(tuple(x) for x in r.get(name, _is_text_lists, []))
        else:
            values[name] = r.texts(name)
    return Structure(**values)


def _read_plain(
    cls: type[_T], checks: Mapping[str, Callable[[object], bool]]
) -> Callable[[_Reader], _T]:
    def read(r: _Reader) -> _T:
        return cls(**{name: r.get(name, check) for name, check in checks.items()})

    return read


_DRIFT = _read_plain(Drift, {"stored": _is_text_map, "running": _is_text_map, "line": _is_text})
_ACCEPT = _read_plain(
    Acceptance,
    {
        "received_dot": _is_text,
        "received_dot_sha256": _is_text,
        "png_compared": lambda v: isinstance(v, bool),
        "received_png": _optional(_is_text),
        "dot_sha256": _optional(_is_text),
        "png_sha256": _optional(_is_text),
    },
)


def _read_where(r: _Reader) -> Where:
    return Where(*(r.maybe_text(f.name) for f in fields(Where)))


def _ordered(images: Mapping[str, str]) -> dict[str, str]:
    """``images`` in :data:`IMAGE_ORDER` (the record's JSON keeps its keys sorted)."""
    rank = {kind: i for i, kind in enumerate(IMAGE_ORDER)}
    return dict(sorted(images.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))


def outcome_from_json(data: object) -> CallOutcome:
    """The outcome :func:`outcome_to_json` wrote; :class:`OutcomeError` with a few words
    when the record is of another schema or a field does not read."""
    r = _Reader(data, "")
    schema = r.get("schema", lambda v: True, None)
    if schema != SCHEMA:
        raise OutcomeError(f"it is of the record schema {schema!r}, not {SCHEMA!r}")
    verdict = r.text("verdict")
    if verdict not in VERDICTS:
        raise OutcomeError(f"its verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return CallOutcome(
        nodeid=r.text("nodeid"),
        name=r.text("name"),
        verdict=verdict,
        call=r.get("call", _optional(lambda v: _is_int(v) or isinstance(v, str)), None),
        report=r.nested("report", _read_report),
        places=tuple(
            None if p is None else (p[0], p[1], p[2], p[3])
            for p in r.get("places", lambda v: isinstance(v, list) and all(map(_is_place, v)), [])
        ),
        notes=r.texts("notes"),
        structure=r.nested("structure", _read_structure),
        drift=r.nested("drift", _DRIFT),
        accept=r.nested("accept", _ACCEPT),
        images=_ordered(r.get("images", _is_text_map, {})),
        files=r.texts("files"),
        where=r.nested("where", _read_where) or Where(),
        shard=r.maybe_text("shard"),
        conflict=r.texts("conflict"),
    )


# -- the record file ----------------------------------------------------------------


def write_outcome(results: ResultsDir, stem: Path, outcome: CallOutcome) -> None:
    """Keep the call's outcome in ``.records`` (atomically, listed in the results
    folder's manifest like every file the plugin writes)."""
    text = json.dumps(outcome_to_json(outcome), indent=1, sort_keys=True)
    path = results.record_path(stem, SUFFIX)
    results.write(path, text.encode("utf-8"), nodeid=outcome.nodeid)


def read_outcomes(root: Path, damaged: list[str] | None = None) -> list[tuple[Path, CallOutcome]]:
    """Every call outcome kept in the results folder ``root``, in name order. A record
    that does not read is left out, with one line in ``damaged`` naming its file and
    the cause; so are an earlier version's records (one line for all of them)."""
    out = []
    for path, data in read_record_files(root, SUFFIX):
        try:
            out.append((path, outcome_from_json(data)))
        except OutcomeError as error:
            if damaged is not None:
                damaged.append(
                    f"left out the record {path}: {error}; rerun pytest to record it again"
                )
    old = [p for suffix in _OLD_SUFFIXES for p, _ in read_record_files(root, suffix)]
    if old and damaged is not None:
        damaged.append(
            f"left out {len(old)} record{'s' * (len(old) != 1)} in {root / '.records'} "
            "written by an earlier pytest-tlgraph; rerun pytest to record them again"
        )
    return out


def sorted_calls(outcomes: Sequence[CallOutcome]) -> list[CallOutcome]:
    """``outcomes`` by test id and snapshot name, numbers by value (``test_x[2]``
    before ``test_x[10]``): the order of the page, the summaries and the commands."""
    return sorted(outcomes, key=call_order)


def call_order(outcome: CallOutcome) -> tuple[object, ...]:
    """The sort key of :func:`sorted_calls`."""
    return _natural(outcome.nodeid), _natural(outcome.name)


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """``text`` as a sort key whose runs of decimal digits compare as numbers (the odd
    parts of the split are those runs; ``²`` is no decimal digit and stays text)."""
    parts = re.split(r"(\d+)", text)
    return tuple((1, int(part)) if i % 2 else (0, part) for i, part in enumerate(parts) if part)
