"""The project's own ``tlgraph_results`` ini setting, read as pytest reads it, so the
commands look where the project's runs write (``tlgraph_results =
build/tlgraph-results``: the ``tlgraph accept`` command a failure prints works as
printed).

pytest takes the first of ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml`` (with
``[tool.pytest.ini_options]``), ``tox.ini`` (with ``[pytest]``) and ``setup.cfg`` (with
``[tool:pytest]``) in the rootdir; a path it gives is relative to that folder.
"""

from __future__ import annotations

import configparser
import sys
from pathlib import Path
from typing import Final

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency before 3.11
    import tomli as tomllib

from pytest_tlgraph.disk.bounded import read_regular

__all__ = ["ini_results"]

_SETTING: Final = "tlgraph_results"
_INI_SECTIONS: Final = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", None),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


def ini_results(folder: Path) -> Path | None:
    """The results folder the ini file of ``folder`` (a rootdir) sets with
    ``tlgraph_results``, relative to ``folder``; ``None`` when the first ini file pytest
    would read there sets none (or none can be read)."""
    for name, section in _INI_SECTIONS:
        path = folder / name
        if not path.is_file():
            continue
        try:
            text = read_regular(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        found = _from_toml(text) if section is None else _from_ini(text, section)
        if found is _NOT_PYTEST:
            continue  # pytest reads this file only with its section
        return folder / found if isinstance(found, str) and found.strip() else None
    return None


_NOT_PYTEST: Final = object()


def _from_toml(text: str) -> object:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return _NOT_PYTEST
    options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(options, dict):
        return _NOT_PYTEST
    value = options.get(_SETTING)
    return value.strip() if isinstance(value, str) else None


def _from_ini(text: str, section: str) -> object:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return _NOT_PYTEST
    if not parser.has_section(section):
        return _NOT_PYTEST
    value = parser.get(section, _SETTING, fallback=None)
    return value.strip() if isinstance(value, str) else None
