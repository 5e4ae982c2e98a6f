"""The docs the package cites exist, and docs/architecture.md names the code as it is.

* Every ``*.md`` file and every ``docs/...`` path a docstring or comment of the package
  names is a file of this repository (or, for a bare ``*.md`` name, one the package
  itself writes, such as ``summary.md``), and a cited section heading
  (``docs/decisions.md, "Channels"``) is a heading of that document.
* Every module file under ``pytest_tlgraph/`` is named in docs/architecture.md: a
  package's ``__init__.py`` by its package's row, any other file by its name on a line
  that names its folder (or by its full path); and every file and folder named there
  exists.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_tlgraph"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

MD_NAME = re.compile(r"(?<![\w./-])([\w./-]*\w\.md)\b")
DOCS_PATH = re.compile(r"(?<![\w./-])(docs/[\w./-]*\w)")
#: ``docs/decisions.md, "Heading"``: a cited section.
SECTION = re.compile(r"(docs/[\w./-]+\.md),\s+\"([^\"]+)\"")
SPAN = re.compile(r"`([^`\s]+)`")


def _prose(path: Path) -> Iterator[str]:
    """The docstrings and comments of one module, each whole."""
    text = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc
    comments = [
        token.string.lstrip("#: ")
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    ]
    yield "\n".join(comments)


def _written_names() -> set[str]:
    """The string constants of the package's code (the file names it writes)."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
    return names


def _citations() -> list[tuple[str, str]]:
    """``(module path, prose)`` for every docstring and comment block of the package,
    a block's lines joined with spaces so a citation broken over two lines reads whole."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for prose in _prose(path):
            out.append((path.relative_to(ROOT).as_posix(), " ".join(prose.split())))
    return out


def _headings(doc: Path) -> set[str]:
    return {
        line.lstrip("#").strip()
        for line in doc.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_every_cited_file_is_in_the_repository() -> None:
    written = _written_names()
    missing = []
    for where, prose in _citations():
        for name in MD_NAME.findall(prose):
            if "/" in name:
                found = (ROOT / name).is_file()
            else:
                found = (ROOT / name).is_file() or name in written
            if not found:
                missing.append((where, name))
        missing.extend(
            (where, path) for path in DOCS_PATH.findall(prose) if not (ROOT / path).exists()
        )
    assert missing == []


def test_every_cited_section_is_a_heading_of_its_document() -> None:
    cited = [(where, *m) for where, prose in _citations() for m in SECTION.findall(prose)]
    assert len(cited) > 20  # the package cites its docs by section
    wrong = [
        (where, doc, heading)
        for where, doc, heading in cited
        if heading not in _headings(ROOT / doc)
    ]
    assert wrong == []


def test_the_checks_fail_on_a_file_outside_the_repository() -> None:
    # The rules read what a citation of the team's old specification would look like.
    prose = 'Value sources (ENCODING.md §3); see docs/options.md and docs/usage.md, "Nope".'
    assert MD_NAME.findall(prose) == ["ENCODING.md", "docs/options.md", "docs/usage.md"]
    assert not (ROOT / "ENCODING.md").exists() and "ENCODING.md" not in _written_names()
    assert DOCS_PATH.findall(prose) == ["docs/options.md", "docs/usage.md"]
    assert SECTION.findall(prose) == [("docs/usage.md", "Nope")]
    assert "Nope" not in _headings(ROOT / "docs" / "usage.md")


def _architecture_lines() -> list[tuple[set[str], set[str]]]:
    """Per line of docs/architecture.md: the folders it names (``draw/collapse`` for
    ``draw/collapse/`` or ``draw/collapse/rows.py``) and the ``.py`` names it names."""
    lines = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        spans = [s.strip("(),") for s in SPAN.findall(line)]
        folders = {s.rstrip("/") for s in spans if s.endswith("/")}
        folders |= {s.rsplit("/", 1)[0] for s in spans if s.endswith(".py") and "/" in s}
        files = {s for s in spans if s.endswith(".py")}
        lines.append((folders, files))
    return lines


def _module_files() -> list[str]:
    return sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("module", _module_files())
def test_every_module_file_is_named_in_the_architecture(module: str) -> None:
    folder, _, name = module.rpartition("/")
    lines = _architecture_lines()
    if name == "__init__.py" and folder:
        named = any(folder in folders for folders, _ in lines)
    elif not folder:
        named = any(name in files for _, files in lines)
    else:
        named = any(
            module in files or (name in files and folder in folders) for folders, files in lines
        )
    assert named, f"docs/architecture.md does not name pytest_tlgraph/{module}"


def test_every_file_the_architecture_names_exists() -> None:
    missing = []
    for folders, files in _architecture_lines():
        for folder in folders:
            if not ((PACKAGE / folder).is_dir() or (ROOT / folder).is_dir()):
                missing.append(folder + "/")
        for name in files:
            if "/" in name:
                found = (PACKAGE / name).is_file() or (ROOT / name).is_file()
            else:
                places = [PACKAGE, *(PACKAGE / f for f in folders)]
                found = any((place / name).is_file() for place in places)
            if not found:
                missing.append(name)
    assert missing == []
