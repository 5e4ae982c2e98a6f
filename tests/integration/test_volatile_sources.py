"""A snapshot is masked, and the measured picture written, for every source that reads
run-to-run noise, however it is named: the ``time`` token and the ``func_duration``
field it reads are one source (the fixture decides from the resolved source, as the
channels do, never from the keyword's text)."""

from __future__ import annotations

import pytest

from pytest_tlgraph.draw.request import DrawRequest

pytest_plugins = ["pytester"]


@pytest.mark.parametrize(
    ("options", "volatile"),
    [
        ({"color_by": "time"}, True),
        ({"color_by": "func_duration"}, True),
        ({"size_by": "func_duration"}, True),
        ({"size_by": "device_time"}, True),
        ({"color_by": "flops"}, False),
        ({"stack_by": "func_duration"}, False),  # stacking draws no measured value
    ],
)
def test_the_request_knows_a_volatile_source_by_its_field(
    options: dict[str, str], volatile: bool
) -> None:
    assert DrawRequest.parse(options).volatile is volatile


@pytest.mark.parametrize("source", ["time", "func_duration"])
def test_a_duration_field_masks_the_snapshot_and_keeps_the_measured_picture(
    project: pytest.Pytester, source: str
) -> None:
    project.makepyfile(
        test_graph=f"""
        from tinymodels import MLP

        def test_timed(tlgraph_snapshot):
            drawing = tlgraph_snapshot(MLP(), color_by={source!r})
            assert any("masked" in note for note in drawing.state.notes)
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    measured = project.path / "tlgraph-results" / "test_graph" / "test_timed-measured.png"
    assert measured.read_bytes().startswith(b"\x89PNG")
    # Measured durations differ on every run; the masked snapshot does not.
    project.runpytest().assert_outcomes(passed=1)
    assert measured.is_file()


def test_a_stable_source_writes_no_measured_picture(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import MLP

        def test_flops(tlgraph_snapshot):
            drawing = tlgraph_snapshot(MLP(), color_by="flops_forward")
            assert not any("masked" in note for note in drawing.state.notes)
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    results = project.path / "tlgraph-results"
    assert not list(results.rglob("*-measured.png"))
