"""The fixture and the command line ask for magnitudes exactly when a channel reads them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.integration.project import snapshot_dir
from tests.integration.test_cli import MODELS as CLI_MODELS
from tests.integration.test_cli import tlgraph

pytest_plugins = ["pytester"]

ASKED = textwrap.dedent(
    """
    import sys

    import pytest
    from tinymodels import MLP

    asked = []


    @pytest.fixture(autouse=True)
    def spy(monkeypatch):
        package = sys.modules["pytest_tlgraph.capture"]
        real = package.capture

        def capture(*args, **kwargs):
            asked.append(kwargs.get("magnitudes", False))
            return real(*args, **kwargs)

        monkeypatch.setattr(package, "capture", capture)


    @pytest.mark.parametrize("options, expected", [
        ({"color_by": "magnitude"}, True),
        ({"size_by": "magnitude"}, True),
        ({"stack_by": "magnitude"}, True),
        ({"color_by": "flops"}, False),
        ({}, False),
    ])
    def test_asked(tlgraph_snapshot, options, expected):
        asked.clear()
        drawing = tlgraph_snapshot(MLP(), png=False, **options)
        assert asked == [expected]
        if expected:
            assert drawing.state.channels


    @pytest.mark.tlgraph(color_by="magnitude")
    def test_asked_by_the_marker(tlgraph_snapshot):
        asked.clear()
        tlgraph_snapshot(MLP(), png=False)
        assert asked == [True]
    """
)


def test_the_fixture_measures_magnitudes_when_a_channel_reads_them(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_asked=ASKED)
    project.runpytest("--snapshot-update").assert_outcomes(passed=6)
    stored = (snapshot_dir(project, "test_asked") / "test_asked[options0-True].gv").read_text()
    assert "magnitude" in stored  # the key names the channel's source


def test_the_command_line_measures_magnitudes_for_a_magnitude_channel(tmp_path: Path) -> None:
    (tmp_path / "cli_models.py").write_text(CLI_MODELS, encoding="utf-8")
    done = tlgraph("draw", "cli_models:Net", "--color-by", "magnitude", "-o", "m.gv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "magnitude" in (tmp_path / "m.gv").read_text(encoding="utf-8")
