"""CI summaries: ``summary.json`` and ``summary.md`` in the results folder
(docs/usage.md, "In CI (GitHub Actions)").

With ``--tlgraph-summary=json,markdown`` every ``tlgraph_snapshot`` call keeps its
outcome (:mod:`.outcome`: a failing call keeps it anyway, for report.html); at the end
of the session the controller reads them all and writes the summaries, and appends the
markdown to the file that ``GITHUB_STEP_SUMMARY`` names, when it is set.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.disk.nofollow import NotRegular, kind_of
from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.escaping import markdown
from pytest_tlgraph.review.outcome import (
    CallOutcome,
    outcome_to_json,
    read_outcomes,
    sorted_calls,
)
from pytest_tlgraph.suggest import did_you_mean

if TYPE_CHECKING:
    from pytest_tlgraph.results.artifacts import ResultsDir

__all__ = [
    "KINDS",
    "SUMMARY_JSON",
    "SUMMARY_MD",
    "parse_kinds",
    "read_calls",
    "render_markdown",
    "summary_json",
    "write_summaries",
]

KINDS: Final = ("json", "markdown")
SUMMARY_JSON: Final = "summary.json"
SUMMARY_MD: Final = "summary.md"
_MARKS: Final = {
    "passed": "pass", "written": "written", "failed": "**FAIL**", "missing": "**MISSING**",
}  # fmt: skip


def parse_kinds(text: str | None, where: str) -> tuple[str, ...]:
    """``"json,markdown"`` -> ``("json", "markdown")``; an unknown kind raises
    ``ValueError`` naming ``where`` it came from and the accepted kinds."""
    if not text:
        return ()
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if part not in KINDS:
            raise UsageError(
                f"{where}: summary kind {part!r} is not one of {', '.join(KINDS)}"
                f"{did_you_mean(part, KINDS)}; e.g. --tlgraph-summary=json,markdown"
            )
        if part not in out:
            out.append(part)
    return tuple(out)


def read_calls(root: Path, damaged: list[str] | None = None) -> list[CallOutcome]:
    """Every call outcome of the session, by test id and name (a record that does not
    read left out, with its line in ``damaged``)."""
    return sorted_calls([outcome for _, outcome in read_outcomes(root, damaged)])


def _changes(call: CallOutcome) -> str:
    """The table's "what changed": the headline of a DOT mismatch, else nothing."""
    if call.structure is None:
        return ""
    return call.structure.headline or "no structural change"


def _verdict(verdict: str) -> str:
    """A verdict the plugin writes as its mark; any other as text a reader sees as is."""
    return _MARKS.get(verdict) or markdown(verdict)


def render_markdown(
    calls: Sequence[CallOutcome], report: str | None, *, shards: Sequence[str] = ()
) -> str:
    """A GitHub-flavoured markdown summary: counts, then one table row per call (with
    its shard, for a merged run of ``shards``). Every text from a record (test ids,
    names, the headline, paths) is a code span (``escaping.markdown``): a backtick, a
    link, an image or HTML in a module name stays text on the CI page. A run whose
    every failure is of a kind an upgrade causes says so once, above the table."""
    from pytest_tlgraph.review.drift import run_upgrade_line

    counts = Counter(c.verdict for c in calls)
    head = ", ".join(f"{n} {v if v in _MARKS else markdown(v)}" for v, n in sorted(counts.items()))
    lines = [f"### tlgraph snapshots: {head or 'no calls'}", ""]
    if shards:
        named = ", ".join(markdown(name, cell=False) for name in shards)
        lines += [f"Merged from {len(shards)} results folders: {named}.", ""]
    upgrade = run_upgrade_line(calls)
    if upgrade is not None:
        lines += [f"**Upgrade?** {markdown(upgrade, cell=False)}", ""]
    if report:
        lines += [
            f"Full report: {markdown(report)} (upload the results folder as an artifact).",
            "",
        ]
    merged = bool(shards)
    lines += [
        "| test | snapshot | verdict | what changed | structural diff |"
        + (" shard |" if merged else ""),
        "|---|---|---|---|---|" + ("---|" if merged else ""),
    ]
    for call in calls:
        picture = markdown(call.images["graphdiff"]) if "graphdiff" in call.images else ""
        row = (
            f"| {markdown(call.nodeid)} | {markdown(call.name)} | "
            f"{_verdict(call.verdict)} | {markdown(_changes(call))} | {picture} |"
        )
        if merged:
            others = ", ".join(call.conflict)
            flag = f" **differs in** {markdown(others)}" if others else ""
            row += f" {markdown(call.shard or '')}{flag} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def summary_json(calls: Sequence[CallOutcome], *, shards: Sequence[str] = ()) -> bytes:
    """``summary.json``: the counts, every call's outcome (its record's JSON form), the
    upgrade line (``null`` unless every failure is of a kind an upgrade causes), and a
    merged run's shards."""
    from pytest_tlgraph.review.drift import run_upgrade_line

    counts = dict(Counter(c.verdict for c in calls))
    payload: dict[str, Any] = {"counts": counts, "calls": [outcome_to_json(c) for c in calls]}
    payload["upgrade"] = run_upgrade_line(calls)
    if shards:
        payload["shards"] = list(shards)
    return (json.dumps(payload, indent=1, sort_keys=True) + "\n").encode()


def write_summaries(results: ResultsDir, kinds: Sequence[str], *, report: Path | None) -> list[str]:
    """Write the asked summaries into the results folder; append the markdown to
    ``$GITHUB_STEP_SUMMARY`` when set.

    A summary never fails the run: a file that cannot be written (a missing folder, a
    directory, no permission, a full disk) is left out, and the returned list holds one
    warning line for each (empty when everything was written)."""
    root = results.root
    calls = read_calls(root)
    problems: list[str] = []
    if "json" in kinds:
        problems += _write_in_folder(results, SUMMARY_JSON, summary_json(calls))
    if "markdown" in kinds:
        shown = None if report is None else f"{report.parent.name}/{report.name}"
        text = render_markdown(calls, shown)
        missed = _write_in_folder(results, SUMMARY_MD, text.encode("utf-8"))
        problems += missed
        step = os.environ.get("GITHUB_STEP_SUMMARY")
        if step:
            kept = None if missed else results.own_path(SUMMARY_MD)
            problems += _append_step_summary(step, text, kept=kept)
    return problems


def _write_in_folder(results: ResultsDir, name: str, data: bytes) -> list[str]:
    """Write the summary ``name`` where the folder lets this session (``own_path``:
    another tool's ``summary.md`` is kept, and the summary written under its name with a
    ``tlgraph-`` prefix)."""
    path = results.own_path(name)
    if path is None:
        return [
            f"tlgraph: CI summary not written: {results.root / name} and tlgraph-{name} "
            "there are another tool's files, kept as they are; give the run a results "
            "folder of its own (--tlgraph-results); the run's result is unchanged"
        ]
    try:
        results.write(path, data)
    except OSError as error:  # a SnapshotWriteError names the file, cause and remedy
        return [f"tlgraph: CI summary not written: {error}; the run's result is unchanged"]
    return []


def _append(path: str, data: bytes) -> None:
    """Append ``data`` to the regular file ``path`` (made when missing). It is opened
    without blocking and checked before anything is written: a FIFO with no reader, a
    device or a socket is refused (:class:`NotRegular`), never waited on."""
    try:
        kind = kind_of(os.stat(path).st_mode)
    except FileNotFoundError:
        kind = None
    if kind is not None:  # not even opened
        raise NotRegular(Path(path), kind)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0), 0o666)
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegular(Path(path), kind)
        with os.fdopen(fd, "ab", closefd=False) as handle:
            handle.write(data)
    finally:
        os.close(fd)


def _append_step_summary(step: str, text: str, *, kept: Path | None) -> list[str]:
    """Append ``text`` to the file ``$GITHUB_STEP_SUMMARY`` names; a warning line when
    it cannot be (the run's exit status never depends on it)."""
    try:
        _append(step, text.encode("utf-8"))
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the name
        reason = getattr(error, "strerror", None) or str(error)
        if isinstance(error, NotRegular):
            reason = f"it is a {error.kind}, not a regular file"
        where = "" if kept is None else f" ({kept} has it)"
        return [
            f"tlgraph: could not append the markdown summary to GITHUB_STEP_SUMMARY={step!r} "
            f"({reason}); set it to a writable file{where}"
        ]
    return []
