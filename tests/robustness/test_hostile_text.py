"""Items 10-11 of "nothing lost": module names with control characters give valid DOT,
and nothing read from a stored file reaches the terminal as a control sequence."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.render import render_png
from tests.drawn import reads_back
from tests.integration.project import snapshot_dir
from tests.models import NamedBlocks as Named

pytest_plugins = ["pytester"]

HOSTILE = ["nul\x00x", "soh\x01x", "vt\x0bx", "esc\x1b[2Jx", "lone\ud800x", "new\nline", "del\x7f"]


def hostile_drawing(names: list[str]) -> str:
    return capture(Named(names), torch.zeros(1, 2)).draw().dot


def test_control_characters_are_escaped_visibly_and_the_dot_is_one_line_each() -> None:
    dot = hostile_drawing(HOSTILE)
    dot.encode("utf-8")  # a lone surrogate left in would raise here
    assert not any(c in dot for c in "\x00\x01\x0b\x1b\x7f\ud800")
    for shown in ("nul\\x00x", "soh\\x01x", "esc\\x1b[2Jx", "lone\\ud800x", "new line"):
        assert shown in dot, shown
    # No character that splits a line (\v, \x1c, U+2028 ...) is left inside a statement.
    assert dot.splitlines() == dot.split("\n")[:-1]


@pytest.mark.parametrize("renderer", ["pure", "system"])
def test_both_renderers_accept_the_escaped_dot(renderer: str) -> None:
    if renderer == "system" and shutil.which("dot") is None:
        pytest.fail("Graphviz dot is part of the test environment (scripts/setup.sh)")
    png = render_png(hostile_drawing(HOSTILE), renderer=renderer)
    assert png.startswith(b"\x89PNG")


def test_a_hostile_drawing_reads_back_unchanged() -> None:
    drawing = capture(Named(HOSTILE), torch.zeros(1, 2)).draw()
    assert reads_back(drawing)


def test_system_dot_parses_it_too() -> None:
    found = shutil.which("dot")
    assert found is not None
    done = subprocess.run(
        [found, "-Tcanon"], input=hostile_drawing(HOSTILE).encode(), capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")


def _edit_label(gv_text: str, old: str, new: str) -> str:
    assert old in gv_text
    return gv_text.replace(old, new, 1)


def test_escape_sequences_in_a_stored_dot_never_reach_the_terminal(
    stored: pytest.Pytester,
) -> None:
    gv = snapshot_dir(stored) / "test_mlp.gv"
    text = gv.read_text()
    forged = _edit_label(text, "fc1", "fc1\x1b[2J\x1b]0;owned\x07\r===== 1 passed =====")
    gv.write_text(forged)
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b[2J" in out


def test_garbage_dot_bytes_are_never_echoed(stored: pytest.Pytester) -> None:
    gv = snapshot_dir(stored) / "test_mlp.gv"
    gv.write_bytes(b"digraph tlgraph {\n\x1b[31mGARBAGE-\xff\xfe-LINE\x1b[0m\n\x00\x01 more")
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "\x1b" not in out and "\x00" not in out and "\x01" not in out
    # The DOT diff of garbage is left out; the parse error quotes the line escaped.
    assert "-\\x1b[31mGARBAGE" not in out and "left out: the stored file" in out
    result.stdout.fnmatch_lines(["*test_mlp.gv is not a tlgraph drawing*"])
