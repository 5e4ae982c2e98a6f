from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_tlgraph.draw.encoding import ramps
from pytest_tlgraph.draw.encoding.ramps import (
    VIRIDIS,
    YLORBR,
    Ramp,
    hex_to_oklab,
    oklab_to_hex,
    ramp_for_page,
)

FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
unit_floats = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
hex_colors = st.integers(min_value=0, max_value=0xFFFFFF).map(lambda v: f"#{v:06X}")


def channels(hex_color: str) -> tuple[int, int, int]:
    return (int(hex_color[1:3], 16), int(hex_color[3:5], 16), int(hex_color[5:7], 16))


def assert_close(actual: str, expected: str, tol: int = 1) -> None:
    diffs = [abs(a - e) for a, e in zip(channels(actual), channels(expected), strict=True)]
    assert max(diffs) <= tol, f"{actual} vs {expected}"


@pytest.fixture
def ylorbr_selected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ramps, "_SEQUENTIAL", "ylorbr")


def test_default_is_viridis() -> None:
    assert ramps._SEQUENTIAL == "viridis"
    assert ramp_for_page("dark") == VIRIDIS
    assert ramp_for_page("light") == VIRIDIS.reversed()


@pytest.mark.parametrize(
    ("f", "expected"),
    list(zip(FRACTIONS, ("#FDE725", "#6DCC5D", "#22958B", "#3B528B", "#440154"), strict=True)),
)
def test_light_viridis_reference_samples(f: float, expected: str) -> None:
    assert_close(ramp_for_page("light").sample(f), expected)


def test_light_viridis_reference_positions() -> None:
    expected = (0, 0.1396, 0.2707, 0.399, 0.5173, 0.6357, 0.7517, 0.8729, 1)
    assert ramp_for_page("light").positions == pytest.approx(expected, abs=0.001)


@pytest.mark.usefixtures("ylorbr_selected")
@pytest.mark.parametrize(
    ("f", "expected"),
    list(zip(FRACTIONS, ("#FFF7BC", "#FEB845", "#EC7014", "#AE3E03", "#662506"), strict=True)),
)
def test_light_ylorbr_reference_samples(f: float, expected: str) -> None:
    assert_close(ramp_for_page("light").sample(f), expected)


@pytest.mark.usefixtures("ylorbr_selected")
def test_ylorbr_orientation() -> None:
    assert ramp_for_page("light") == YLORBR
    assert ramp_for_page("dark").sample(1.0) == "#FFF7BC"


def test_dark_page_high_is_bright() -> None:
    dark = ramp_for_page("dark")
    assert dark.sample(0.0) == "#440154"
    assert dark.sample(1.0) == "#FDE725"


def test_unknown_page_refused() -> None:
    with pytest.raises(ValueError, match="page"):
        ramp_for_page("sepia")


def test_sample_clamps_and_uppercases() -> None:
    ramp = Ramp("test", ("#000000", "#ffffff"))
    assert ramp.stops == ("#000000", "#FFFFFF")
    assert ramp.sample(-3.0) == "#000000"
    assert ramp.sample(7.5) == "#FFFFFF"
    with pytest.raises(ValueError):
        ramp.sample(float("nan"))


def test_repr_is_readable() -> None:
    text = repr(VIRIDIS)
    assert text.startswith("Ramp(name='viridis', stops=('#440154',")
    assert "positions=(0.0," in text
    assert "_labs" not in text


@pytest.mark.parametrize(
    "stops", [("#000000",), ("#000000", "#000000"), ("#000000", "#zzzzzz"), ("#FFF",)]
)
def test_invalid_stops_refused(stops: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        Ramp("bad", stops)


@given(hex_colors)
def test_oklab_round_trip_is_exact(hex_color: str) -> None:
    assert oklab_to_hex(hex_to_oklab(hex_color)) == hex_color


def test_oklab_known_values() -> None:
    assert hex_to_oklab("#FFFFFF") == pytest.approx((1.0, 0.0, 0.0), abs=1e-4)
    assert hex_to_oklab("#000000") == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    # Ottosson's published OKLab value for sRGB red.
    assert hex_to_oklab("#FF0000") == pytest.approx((0.62796, 0.22486, 0.12585), abs=1e-4)
    assert oklab_to_hex((2.0, 0.0, 0.0)) == "#FFFFFF"  # out of gamut clamps


@given(st.lists(hex_colors, min_size=2, max_size=8))
def test_positions_strictly_increase_from_zero_to_one(stops: list[str]) -> None:
    assume(all(a != b for a, b in itertools.pairwise(stops)))
    positions = Ramp("prop", tuple(stops)).positions
    assert positions[0] == 0.0
    assert positions[-1] == 1.0
    assert all(a < b for a, b in itertools.pairwise(positions))


@given(st.lists(unit_floats, min_size=2, max_size=20))
def test_viridis_lightness_is_monotone(fs: list[float]) -> None:
    fs.sort()
    lightness = [hex_to_oklab(VIRIDIS.sample(f))[0] for f in fs]
    # 8-bit rounding can wobble lightness by a hair between near-equal fractions.
    assert all(b >= a - 2e-3 for a, b in itertools.pairwise(lightness))


@pytest.mark.parametrize("ramp", [VIRIDIS, VIRIDIS.reversed(), YLORBR, YLORBR.reversed()])
def test_sample_at_stop_position_is_the_stop(ramp: Ramp) -> None:
    for stop, position in zip(ramp.stops, ramp.positions, strict=True):
        assert ramp.sample(position) == stop


@given(unit_floats)
def test_reversed_is_the_mirror(f: float) -> None:
    for ramp in (VIRIDIS, YLORBR):
        mirror = ramp.reversed()
        assert mirror.stops == ramp.stops[::-1]
        assert_close(mirror.sample(f), ramp.sample(1.0 - f))
        assert mirror.reversed() == ramp
    assert VIRIDIS.reversed().positions == pytest.approx(
        [1.0 - p for p in reversed(VIRIDIS.positions)]
    )
