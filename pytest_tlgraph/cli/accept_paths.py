"""Where ``tlgraph accept`` may write a call's snapshot files: recomputed from the
record's node id and snapshot name, never read from the record.

A record is a file in a folder anyone can write to (a results folder downloaded from
CI, one shared by two projects). Its node id names the test module and the test; its
snapshot name must be one that test gives (``test_x``, ``test_x.1``, ``test_x[name]``);
the pair's files are then ``<module folder>/__snapshots__/<module stem>/<name>.gv`` and
``.png`` in the checkout the call belongs to. A record whose stored paths say anything
else is refused. A call read from the very results folder another project's run wrote
it into (the record's rootdir is another project on this machine) is refused: two
projects sharing a results folder never accept each other's drawings. A copy of a
results folder (downloaded from CI) is accepted into the checkout accept runs in.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final

from syrupy.extensions.single_file import SingleFileSnapshotExtension

from pytest_tlgraph.errors import TlgraphError

if TYPE_CHECKING:
    from pytest_tlgraph.review.outcome import Where

__all__ = ["SNAPSHOT_DIRNAME", "Refused", "owning_checkout", "snapshot_files"]

#: The folder of snapshots beside a test module (syrupy's default, the plugin's only).
SNAPSHOT_DIRNAME: Final = "__snapshots__"


class Refused(TlgraphError):
    """One call cannot be accepted: the message is the cause and the remedy."""


def owning_checkout(where: Where, folder: Path, project: Path) -> Path:
    """The checkout a call is accepted into: its recorded rootdir when the current
    folder lies in it, else the ``project`` accept runs in (another checkout: a results
    folder downloaded from CI). :class:`Refused` when the record lies in the results
    folder ``folder`` its run wrote it into, and that run's rootdir is another project
    on this machine."""
    rootdir = where.rootdir
    if not rootdir:
        return project
    recorded = Path(rootdir)
    if not recorded.is_absolute() or not recorded.is_dir():
        return project
    here = Path.cwd().resolve()
    if recorded.resolve() == project.resolve() or here.is_relative_to(recorded.resolve()):
        return recorded
    if not _written_here(where, recorded, folder):
        return project  # a copy of the results: this checkout's
    raise Refused(
        f"it was recorded by the project {recorded}, not {project} where tlgraph accept "
        f"runs; run tlgraph accept in {recorded}"
    )


def _written_here(where: Where, rootdir: Path, folder: Path) -> bool:
    """The record lies in the results folder its run wrote, not in a copy of it."""
    written = where.results
    if written is None:
        if where.results_from_rootdir is None:
            return False
        written = str(rootdir / where.results_from_rootdir)
    try:
        return Path(written).resolve() == folder.resolve()
    except (OSError, RuntimeError):
        return False


def snapshot_files(nodeid: str, name: str, home: Path) -> tuple[Path, Path]:
    """The ``.gv`` and ``.png`` of the snapshot ``name`` of test ``nodeid`` in the
    checkout ``home``; :class:`Refused` when the node id names no test module or the
    name is not one the test gives."""
    module, sep, test = nodeid.partition("::")
    parts = PurePosixPath(module).parts
    plain = bool(parts) and not PurePosixPath(module).is_absolute() and "\\" not in module
    if not sep or not test or not module.endswith(".py") or not plain or ".." in parts:
        raise Refused("its record names no test module; rerun pytest to record it again")
    if not _owned_name(name, test):
        raise Refused(
            f"its record names the snapshot {name!r}, which the test {test!r} does not "
            "store; rerun pytest to record the failure again"
        )
    folder = home.joinpath(*parts[:-1], SNAPSHOT_DIRNAME, PurePosixPath(module).stem)
    return folder / f"{name}.gv", folder / f"{name}.png"


def _owned_name(name: str, test: str) -> bool:
    """``name`` is a snapshot name test ``test`` (after the module's ``::``) gives: its
    own, numbered (``.1``), named (``[wide]``), or shortened with a hash (``~``)."""
    if not name or name in (".", "..") or any(c in name for c in "/\\\0"):
        return False
    base = SingleFileSnapshotExtension._sanitize_filename(test.replace("::", "."))
    if name == base:
        return True
    if name.startswith(base + "."):
        return name[len(base) + 1 :].isdigit()
    if name.startswith(base + "[") and name.endswith("]"):
        return True
    if "~" in name:  # storage.fitted_name: a prefix of the full name, then a hash
        prefix = name[: name.rindex("~")]
        return bool(prefix) and (base.startswith(prefix) or prefix.startswith(base))
    return False
