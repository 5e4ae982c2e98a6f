"""The comparison settings of a run, each declared once in :data:`SETTINGS`: its name,
default, ini key, command-line flag, help and check.

``plugin.py`` registers the flags and ini keys from the table and resolves them
(command line over ini over default); a test's ``tlgraph`` marker and a fixture call
may set the per-call ones (:data:`SETTING_NAMES`), checked here by the same
:meth:`SettingSpec.check`. Nothing heavy is imported: pytest reads this at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.pixels.defaults import DEFAULT_MAX_DIFF_PIXELS, DEFAULT_THRESHOLD
from pytest_tlgraph.render import RENDERERS

if TYPE_CHECKING:
    from pytest_tlgraph.results.artifacts import ResultsDir

__all__ = [
    "DEFAULT_RESULTS",
    "SETTINGS",
    "SETTING_NAMES",
    "SettingSpec",
    "Settings",
    "check_setting",
    "markdown_table",
    "setting",
]

_FALSE: Final = frozenset({"false", "no", "off", "0"})
_TRUE: Final = frozenset({"true", "yes", "on", "1"})
#: The results folder when none is given, relative to the rootdir.
DEFAULT_RESULTS: Final = "tlgraph-results"


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One setting of a run: name, default, value type, help, and how it is checked
    (``choices``; a number's ``low`` and ``high`` bounds). ``per_call``: a marker and a
    fixture call may set it too; ``ini``: it has an ini key (``tlgraph_<name>``)."""

    name: str
    default: Any
    kind: type
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    per_call: bool = False
    ini: bool = True
    metavar: str | None = None

    @property
    def flag(self) -> str:
        """``--tlgraph-max-diff-pixels``; a setting on by default is turned off by its
        ``--tlgraph-no-`` flag (``--tlgraph-no-png``)."""
        name = self.name.replace("_", "-")
        return f"--tlgraph-no-{name}" if self.default is True else f"--tlgraph-{name}"

    @property
    def dest(self) -> str:
        """The attribute of pytest's options the flag sets."""
        return self.flag[2:].replace("-", "_")

    @property
    def ini_key(self) -> str:
        """``tlgraph_threshold``."""
        return f"tlgraph_{self.name}"

    def check(self, value: Any, where: str) -> Any:
        """``value`` as the run reads it, or an error naming ``where`` it came from, the
        value and what is accepted."""
        if self.kind is bool:
            if not isinstance(value, bool):
                raise TypeError(f"{where}: {self.name} must be True or False, got {value!r}")
            return value
        if self.choices:
            if value not in self.choices:
                accepted = " or ".join(repr(c) for c in self.choices)
                raise UsageError(f"{where}: {self.name} must be {accepted}, got {value!r}")
            return value
        if self.kind in (int, float):
            return self._number(value, where)
        if not isinstance(value, self.kind):
            raise TypeError(f"{where}: {self.name} must be a {self.kind.__name__}, got {value!r}")
        return value

    def _number(self, value: Any, where: str) -> Any:
        kinds = (int,) if self.kind is int else (int, float)
        low_ok = self.low is None or (isinstance(value, kinds) and value >= self.low)
        high_ok = self.high is None or (isinstance(value, kinds) and value <= self.high)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low_ok or not high_ok:
            if self.kind is int:
                raise UsageError(
                    f"{where}: {self.name} must be an int >= {self.low:g}, got {value!r}"
                )
            raise UsageError(
                f"{where}: {self.name} must be a number from {self.low:g} to {self.high:g}, "
                f"got {value!r}"
            )
        return self.kind(value)

    def parse_ini(self, raw: str) -> Any:
        """The ini file's text as a value of the setting's type (``None``: not set)."""
        raw = raw.strip()
        if not raw:
            return None
        if self.kind is bool:
            if raw.lower() not in _TRUE | _FALSE:
                raise UsageError(
                    f"ini option {self.ini_key} = {raw!r} is not a valid bool; fix it in "
                    "the ini file"
                )
            return raw.lower() in _TRUE
        try:
            return self.kind(raw)
        except ValueError:
            raise UsageError(
                f"ini option {self.ini_key} = {raw!r} is not a valid {self.kind.__name__}; "
                "fix it in the ini file"
            ) from None

    def full_help(self) -> str:
        """The help line of the flag, with the default and the ini key."""
        if self.default is True:
            return f"{self.help}. ini: {self.ini_key} = false" if self.ini else self.help
        default = "" if self.default in (None, False, ()) else f" (default {self.default})"
        return f"{self.help}{default}" + (f". ini: {self.ini_key}" if self.ini else "")


#: Every setting of a run, once.
SETTINGS: Final = (
    SettingSpec(
        "renderer", "pure", str,
        "renderer that draws snapshot PNGs: pure (graphviz-pure, the same pixels on every "
        "machine) or system (Graphviz dot)",
        choices=RENDERERS, per_call=True,
    ),
    SettingSpec(
        "png", True, bool,
        "compare the DOT only: no PNG is rendered or compared (stored PNGs are kept, but "
        "an update removes one the new DOT leaves stale)",
        per_call=True,
    ),
    SettingSpec(
        "threshold", DEFAULT_THRESHOLD, float, "pixelmatch per-pixel colour threshold, 0 to 1",
        low=0, high=1, per_call=True, metavar="F",
    ),
    SettingSpec(
        "max_diff_pixels", DEFAULT_MAX_DIFF_PIXELS, int,
        "mismatched pixels allowed before a PNG fails",
        low=0, per_call=True, metavar="N",
    ),
    SettingSpec(
        "results", DEFAULT_RESULTS, str,
        "directory for failure artifacts and report.html, relative to the rootdir",
        metavar="DIR",
    ),
    SettingSpec(
        "force_render", False, bool,
        "always render the PNG, even when the stored one provably came from the same DOT "
        "and renderer",
        ini=False,
    ),
    SettingSpec(
        "summary", None, str,
        "CI summaries written into the results directory at the end of the run: json "
        "(summary.json), markdown (summary.md, also appended to $GITHUB_STEP_SUMMARY), or "
        "json,markdown",
        metavar="KINDS",
    ),
)  # fmt: skip
_BY_NAME: Final = {spec.name: spec for spec in SETTINGS}
#: The settings a test's marker and a fixture call may set (over the run's).
SETTING_NAMES: Final = tuple(spec.name for spec in SETTINGS if spec.per_call)


def setting(name: str) -> SettingSpec:
    """The declaration of the setting ``name`` (``KeyError`` if none)."""
    return _BY_NAME[name]


def markdown_table() -> str:
    """The settings reference of docs/usage.md and docs/guide.md: flag, ini key,
    default and meaning, one row per setting."""
    rows = ["| command line | ini | default | meaning |", "|---|---|---|---|"]
    for spec in SETTINGS:
        flag = spec.flag + ("" if spec.kind is bool else f"={spec.metavar or 'VALUE'}")
        if spec.choices:
            flag = f"{spec.flag}=" + "\\|".join(spec.choices)
        ini = f"`{spec.ini_key}" + (" = false`" if spec.default is True else "`")
        shown = str(spec.default).lower() if isinstance(spec.default, bool) else spec.default
        default = "" if spec.default is None else f"`{shown}`"
        meaning = spec.help.replace("|", "\\|")
        rows.append(f"| `{flag}` | {ini if spec.ini else ''} | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def check_setting(name: str, value: Any, where: str) -> Any:
    """Validate one per-call setting, naming ``where`` it came from and the remedy."""
    return _BY_NAME[name].check(value, where)


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved comparison settings of one run (command line over ini over default;
    the defaults are the table's)."""

    rootdir: Path
    results: ResultsDir
    renderer: str = field(default=setting("renderer").default)
    png: bool = field(default=setting("png").default)
    threshold: float = field(default=setting("threshold").default)
    max_diff_pixels: int = field(default=setting("max_diff_pixels").default)
    force_render: bool = field(default=setting("force_render").default)
    color: bool = False
    #: CI summaries to write at the end of the session: ``json``, ``markdown``.
    summary: tuple[str, ...] = ()
    #: pytest's rootdir, which node ids are relative to (``None``: not known).
    project: Path | None = None
