"""Renderers (PLUGIN.md §3): graphviz-pure by default, system dot on request, explicit
dpi, and a clear ``RenderError`` naming the renderer and the remedy."""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from PIL import Image

from pytest_tlgraph import RenderError, capture
from pytest_tlgraph import render as render_module
from pytest_tlgraph.render import (
    get_default_renderer,
    render_png,
    renderer_version,
    set_default_renderer,
)
from tests.models import CNN, seeded

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")


@pytest.fixture(scope="module")
def dot() -> str:
    torch.manual_seed(0)
    return capture(seeded(CNN()).eval(), torch.randn(1, 3, 8, 8)).draw().dot


@pytest.fixture
def no_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No renderer program anywhere: an empty PATH and an interpreter in an empty dir."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    render_module._pure_executable.cache_clear()
    yield
    render_module._pure_executable.cache_clear()


def _image(png: bytes) -> Image.Image:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def test_pure_renders_a_png_that_pillow_decodes(dot: str) -> None:
    image = _image(render_png(dot, renderer="pure"))
    assert image.width > 100 and image.height > 300
    # Not a blank canvas: the drawing has ink on it.
    extrema = image.convert("L").getextrema()
    assert extrema[0] < 100 < extrema[1]


def test_pure_png_bytes_are_stable(dot: str) -> None:
    assert render_png(dot, renderer="pure") == render_png(dot, renderer="pure")


@pytest.mark.parametrize("renderer", ["pure", pytest.param("system", marks=needs_dot)])
def test_explicit_dpi_is_honoured(dot: str, renderer: str) -> None:
    small = _image(render_png(dot, renderer=renderer, dpi=96))
    large = _image(render_png(dot, renderer=renderer, dpi=192))
    assert large.width == pytest.approx(2 * small.width, rel=0.03)
    assert large.height == pytest.approx(2 * small.height, rel=0.03)


@needs_dot
def test_the_system_renderer_renders_too() -> None:
    drawing = capture(seeded(CNN()).eval(), torch.randn(1, 3, 8, 8)).draw()
    image = _image(drawing.png(renderer="system"))
    assert image.height > 300
    assert renderer_version("system").startswith("dot ")


def test_drawing_png_uses_the_default_renderer(dot: str) -> None:
    before = get_default_renderer()
    assert before == "pure"
    drawing = capture(seeded(CNN()).eval(), torch.randn(1, 3, 8, 8)).draw()
    assert drawing.png() == render_png(dot, renderer="pure")
    try:
        set_default_renderer("system")
        assert get_default_renderer() == "system"
    finally:
        set_default_renderer(before)


def test_a_missing_pure_renderer_names_it_and_the_remedy(dot: str, no_programs: None) -> None:
    with pytest.raises(RenderError) as info:
        render_png(dot, renderer="pure")
    assert info.value.renderer == "pure"
    message = str(info.value)
    assert "graphviz-pure" in message and "not found" in message
    assert "pip install graphviz-pure" in message and "--tlgraph-renderer=system" in message


def test_a_missing_system_renderer_names_it_and_the_remedy(dot: str, no_programs: None) -> None:
    with pytest.raises(RenderError) as info:
        render_png(dot, renderer="system")
    assert info.value.renderer == "system"
    message = str(info.value)
    assert "dot program" in message and "install Graphviz" in message
    assert "--tlgraph-renderer=pure" in message
    with pytest.raises(RenderError, match="install Graphviz") as version_info:
        renderer_version.__wrapped__("system")
    # Asking for the version without dot says the very same thing.
    assert str(version_info.value) == message
    assert version_info.value.renderer == "system"


@pytest.mark.parametrize("renderer", ["pure", pytest.param("system", marks=needs_dot)])
def test_a_renderer_that_fails_reports_its_error_output(renderer: str) -> None:
    with pytest.raises(RenderError) as info:
        render_png("digraph { a -> }\n", renderer=renderer)
    assert info.value.renderer == renderer
    assert "syntax error" in str(info.value).lower()


@pytest.mark.parametrize("dpi", [0, -96, 601, 96.5, True, "96", 1201, 100_000])
def test_a_bad_dpi_is_refused_before_rendering(dot: str, dpi: object) -> None:
    with pytest.raises(ValueError, match=r"dpi must be a whole number from 1 to 600.*dpi=96"):
        render_png(dot, dpi=dpi)  # type: ignore[arg-type]


def test_an_unknown_renderer_is_refused_with_the_choices(dot: str) -> None:
    with pytest.raises(RenderError, match=r"'cairo'.*pure, system"):
        render_png(dot, renderer="cairo")
    with pytest.raises(RenderError):
        set_default_renderer("cairo")
    assert get_default_renderer() == "pure"


def test_renderer_versions_are_recorded_by_name() -> None:
    assert renderer_version("pure").startswith("graphviz-pure ")


def test_a_render_that_times_out_names_the_size_remedy(
    dot: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    def slow(*args: object, **kwargs: object) -> None:
        raise subprocess.TimeoutExpired(cmd="graphviz-pure", timeout=300)

    monkeypatch.setattr(subprocess, "run", slow)
    with pytest.raises(RenderError, match=r"did not finish within 300 s.*collapse='auto'") as info:
        render_png(dot, renderer="pure")
    assert "reinstall" not in str(info.value)
