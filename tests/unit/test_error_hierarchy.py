"""Every public exception class the package defines is a ``TlgraphError``: one
``except`` catches whatever pytest-tlgraph raises (a private one, such as the capture's
internal signal, never leaves its module) (docs/decisions.md, "One house (0.5)")."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest_tlgraph
from pytest_tlgraph.errors import TlgraphError


def _package_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(pytest_tlgraph.__path__, "pytest_tlgraph."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_of_the_package_is_a_tlgraph_error() -> None:
    found = _package_exceptions()
    # The walk really reached the modules that define the file and schema errors.
    assert {
        "pytest_tlgraph.cli.accept_paths.Refused",
        "pytest_tlgraph.disk.bounded.NotAFile",
        "pytest_tlgraph.disk.bounded.TooLarge",
        "pytest_tlgraph.schema.SchemaError",
        "pytest_tlgraph.disk.nofollow.LinkRefused",
        "pytest_tlgraph.disk.nofollow.NotRegular",
        "pytest_tlgraph.disk.nofollow.FileInTheWay",
    } <= found.keys()
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, TlgraphError))
    assert outside == []


def test_the_file_errors_stay_os_errors() -> None:
    # Code that catches OSError around a write keeps working.
    from pytest_tlgraph.disk.nofollow import FileInTheWay, LinkRefused, NotRegular

    assert issubclass(LinkRefused, OSError) and issubclass(NotRegular, OSError)
    assert issubclass(FileInTheWay, NotADirectoryError)
