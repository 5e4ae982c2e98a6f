"""Items 7 and 8 of issue 31: nothing injected into what a reviewer reads. A test id or
a module name holding a backtick, a markdown link, raw HTML or a terminal escape
sequence reaches summary.md, ``$GITHUB_STEP_SUMMARY``, ``tlgraph report`` and ``tlgraph
diff`` as text, through one escaping function per sink (``pytest_tlgraph.escaping``)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pytest_tlgraph.escaping import html_text, markdown, reviewer, terminal

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

#: GitHub-flavoured enough: CommonMark with tables (pipes escaped as GFM does).
_MD = MarkdownIt("commonmark").enable("table")
_CELL = re.compile(r"<td>(.*?)</td>", re.S)

#: Text that leans on each sink's syntax, mixed into arbitrary Unicode.
_HOSTILE = st.sampled_from(
    ["`", "``", "|", "\\", "\\|", "[x](https://e.io)", "<img src=x>", "<", "&", "*", "_",
     "\x1b]0;t\x07", "\x1b[2J", "\n", "\r", " ", "\u2028", "\u202e", "\ud800", "\x00"]
)  # fmt: skip
TEXT = st.lists(st.one_of(st.text(), _HOSTILE), max_size=8).map("".join)


def _cells(row: str, columns: int = 2) -> list[str]:
    head = "|" + " h |" * columns + "\n|" + "---|" * columns + "\n"
    page = _MD.render(head + row + "\n")
    body = page.split("<tbody>", 1)[1] if "<tbody>" in page else ""
    return _CELL.findall(body)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_a_markdown_cell_is_the_text_and_nothing_else(text: str) -> None:
    cells = _cells(f"| {markdown(text)} | end |")
    assert len(cells) == 2 and cells[1] == "end", cells
    if not text:
        assert cells[0] == ""
        return
    match = re.fullmatch(r"<code>(.*)</code>", cells[0], re.S)
    assert match is not None, cells[0]
    assert html.unescape(match.group(1)) == reviewer(text)
    assert "<a " not in cells[0] and "<img" not in cells[0]


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_a_markdown_span_outside_a_table_is_the_text(text: str) -> None:
    page = _MD.render(f"Full report: {markdown(text, cell=False)} here\n")
    if not text:
        return
    match = re.fullmatch(r"<p>Full report: <code>(.*)</code> here</p>\n", page, re.S)
    assert match is not None, page
    assert html.unescape(match.group(1)) == reviewer(text)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_terminal_text_holds_no_control_character_and_one_line(text: str) -> None:
    shown = terminal(text)
    assert len(shown.splitlines()) <= 1
    for char in shown:  # issue 37: every Cc (tab too), Cf, Zl, Zp shown as its escape
        assert unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp"), repr(char)
        assert char not in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    if text.isprintable():
        assert shown == text


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_html_text_is_inert_and_reads_back(text: str) -> None:
    shown = html_text(text)
    assert not set(shown) & set("<>\"'")
    assert html.unescape(shown) == reviewer(text)  # issue 37: controls and formats shown


#: A model whose submodule is named to inject into every sink; its width follows WIDTH.
HOSTILE_TEST = textwrap.dedent(
    """
    import os
    import pytest
    import torch
    from torch import nn

    NAME = os.environ["TL_MODULE"]
    ID = "a`[injected id](https://evil.example/x)`<img src=x onerror=alert(1)>"

    @pytest.mark.parametrize("case", [0], ids=[ID])
    def test_net(tlgraph_snapshot, case):
        inner = nn.Sequential(nn.Linear(4, int(os.environ.get("WIDTH", "8"))), nn.ReLU())
        net = nn.Sequential()
        net.add_module(NAME, inner)
        net.add_module("out", nn.Linear(int(os.environ.get("WIDTH", "8")), 2))
        tlgraph_snapshot(net, torch.zeros(1, 4))
    """
)

MODULE = "x`[injected](https:evil)`<img src=y>\x1b]0;pwned\x07\x1b[2J"


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "TL_MODULE": MODULE, **extra}


def _run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=_env(**env), capture_output=True, timeout=300
    )


@pytest.fixture
def failed(tmp_path: Path) -> Path:
    """A project whose one hostile test failed, with the markdown summary asked for."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (tmp_path / "test_hostile.py").write_text(HOSTILE_TEST)
    assert _run("-m", "pytest", "--snapshot-update", cwd=tmp_path).returncode == 0
    step = tmp_path / "step.md"
    run = _run(
        "-m", "pytest", "--tlgraph-summary=markdown", cwd=tmp_path, WIDTH="5",
        GITHUB_STEP_SUMMARY=str(step),
    )  # fmt: skip
    assert run.returncode == 1, run.stdout
    assert b"\x1b]0;" not in run.stdout and b"\x07" not in run.stdout
    return tmp_path


def test_the_markdown_summaries_render_no_link_image_or_html(failed: Path) -> None:
    for path in (failed / "tlgraph-results" / "summary.md", failed / "step.md"):
        text = path.read_text(encoding="utf-8")
        page = _MD.render(text)
        assert "<a " not in page and "<img" not in page, page
        assert "\x1b" not in text and "\x07" not in text
        (row,) = [line for line in text.splitlines() if "FAIL" in line]
        cells = _cells(row, 5)
        assert len(cells) == 5, cells
        assert "injected id" in html.unescape(cells[0])
        assert "injected" in html.unescape(cells[3]), "the headline names the module"


def test_report_and_diff_print_no_escape_sequence(failed: Path) -> None:
    report = _run("-m", "pytest_tlgraph", "report", cwd=failed)
    assert report.returncode == 0, report.stderr
    assert b"\\x1b]0;pwned\\x07" in report.stdout
    assert b"\x1b" not in report.stdout + report.stderr
    assert b"\x07" not in report.stdout + report.stderr
    received = next((failed / "tlgraph-results").rglob("*.gv"))
    stored = next((failed / "__snapshots__").rglob("*.gv"))
    diff = _run(
        "-m", "pytest_tlgraph", "diff", str(stored), str(received), "-o", "d.gv", cwd=failed
    )
    assert diff.returncode in (0, 1), diff.stderr
    assert b"\x1b" not in diff.stdout + diff.stderr and b"\x07" not in diff.stdout
