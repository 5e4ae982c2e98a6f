"""Sequential colour ramps blended in OKLab (docs/decisions.md, "One house (0.4)").

A ramp is a list of sRGB stops. Each stop sits at its share of the path's
perceptual length, so equal value steps read as equal colour steps, and colours
between stops are interpolated linearly in OKLab. The conversion uses Björn
Ottosson's published OKLab matrices and the sRGB transfer function.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from dataclasses import dataclass, field

from pytest_tlgraph.errors import UsageError

__all__ = [
    "VIRIDIS",
    "YLORBR",
    "Ramp",
    "hex_to_oklab",
    "oklab_to_hex",
    "ramp_for_page",
]

Lab = tuple[float, float, float]

_HEX = re.compile(r"#[0-9A-Fa-f]{6}")

# Which built-in ramp color_by uses. Kept internal on purpose: the choice is a
# design decision of the drawing, not a user option.
_SEQUENTIAL = "viridis"


def _srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _linear_to_srgb(c: float) -> float:
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def _cbrt(x: float) -> float:
    # math.cbrt is 3.11+, and ** (1/3) fails on negatives from gamut-edge LMS.
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


def hex_to_oklab(hex_color: str) -> Lab:
    """Convert ``"#RRGGBB"`` (case-insensitive) to an OKLab ``(L, a, b)`` triple."""
    if not _HEX.fullmatch(hex_color):
        raise UsageError(f"not an sRGB hex colour: {hex_color!r}")
    r, g, b = (_srgb_to_linear(int(hex_color[i : i + 2], 16) / 255) for i in (1, 3, 5))
    l_ = _cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b)
    m_ = _cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b)
    s_ = _cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b)
    return (
        0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_,
        1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_,
        0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_,
    )


def oklab_to_hex(lab: Lab) -> str:
    """Convert OKLab to ``"#RRGGBB"`` (uppercase), clamping to the sRGB gamut."""
    big_l, a, b = lab
    l_ = (big_l + 0.3963377774 * a + 0.2158037573 * b) ** 3
    m_ = (big_l - 0.1055613458 * a - 0.0638541728 * b) ** 3
    s_ = (big_l - 0.0894841775 * a - 1.2914855480 * b) ** 3
    linear = (
        4.0767416621 * l_ - 3.3077115913 * m_ + 0.2309699292 * s_,
        -1.2684380046 * l_ + 2.6097574011 * m_ - 0.3413193965 * s_,
        -0.0041960863 * l_ - 0.7034186147 * m_ + 1.7076147010 * s_,
    )
    # Clamp before the transfer function: it is undefined for negative input.
    channels = (_linear_to_srgb(min(1.0, max(0.0, c))) for c in linear)
    # floor(x + 0.5) rounds halves up, independent of Python's banker's rounding.
    return "#" + "".join(f"{math.floor(c * 255 + 0.5):02X}" for c in channels)


@dataclass(frozen=True)
class Ramp:
    """A sequential ramp: sRGB stops placed by perceptual length, blended in OKLab.

    ``stops`` are ``"#RRGGBB"`` strings (normalised to uppercase); at least two,
    and no two consecutive stops may be equal (a zero-length segment would make
    the positions not strictly increasing).
    """

    name: str
    stops: tuple[str, ...]
    positions: tuple[float, ...] = field(init=False, compare=False)
    _labs: tuple[Lab, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        stops = tuple(s.upper() for s in self.stops)
        if len(stops) < 2:
            raise UsageError(f"a ramp needs at least two stops, got {len(stops)}")
        labs = tuple(hex_to_oklab(s) for s in stops)
        steps = [math.dist(p, q) for p, q in itertools.pairwise(labs)]
        if min(steps) == 0.0:
            raise UsageError(f"ramp {self.name!r} has equal consecutive stops")
        total = math.fsum(steps)
        cumulative = [0.0]
        for step in steps:
            cumulative.append(cumulative[-1] + step)
        # Pin the last position to exactly 1.0 so f = 1 lands on the final stop.
        positions = (*(c / total for c in cumulative[:-1]), 1.0)
        object.__setattr__(self, "stops", stops)
        object.__setattr__(self, "positions", positions)
        object.__setattr__(self, "_labs", labs)

    def sample(self, f: float) -> str:
        """Colour at fraction ``f`` of the ramp (clamped to [0, 1]) as ``"#RRGGBB"``."""
        if math.isnan(f):
            raise ValueError("cannot sample a ramp at NaN")
        f = min(1.0, max(0.0, f))
        i = min(bisect.bisect_right(self.positions, f), len(self.positions) - 1)
        lo, hi = self.positions[i - 1], self.positions[i]
        t = (f - lo) / (hi - lo)
        p, q = self._labs[i - 1], self._labs[i]
        return oklab_to_hex(
            (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t, p[2] + (q[2] - p[2]) * t)
        )

    def reversed(self) -> Ramp:
        """The same ramp running the other way: ``r.reversed().sample(f) == r.sample(1 - f)``."""
        return Ramp(self.name, self.stops[::-1])

    @property
    def lightness_rises(self) -> bool:
        """Whether the last stop is lighter (higher OKLab L) than the first."""
        return self._labs[-1][0] > self._labs[0][0]


VIRIDIS = Ramp(
    "viridis",
    (
        "#440154",
        "#472D7B",
        "#3B528B",
        "#2C728E",
        "#21918C",
        "#28AE80",
        "#5EC962",
        "#ADDC30",
        "#FDE725",
    ),
)
"""Viridis as published: dark purple to yellow (the dark-page orientation)."""

YLORBR = Ramp(
    "ylorbr",
    ("#FFF7BC", "#FEE391", "#FEC44F", "#FE9929", "#EC7014", "#CC4C02", "#993404", "#662506"),
)
"""ColorBrewer YlOrBr, 9-class list without its near-white first class: light to dark."""

_BUILTIN = {ramp.name: ramp for ramp in (VIRIDIS, YLORBR)}


def ramp_for_page(page: str) -> Ramp:
    """The ``color_by`` ramp oriented for ``page`` (``"light"`` or ``"dark"``).

    On the light page low values are light and high values dark; on the dark page
    high values are bright. Orientation is decided by the stops' OKLab lightness,
    so any built-in selected by ``_SEQUENTIAL`` is oriented correctly.
    """
    if page not in ("light", "dark"):
        raise UsageError(f"page must be 'light' or 'dark', got {page!r}")
    ramp = _BUILTIN[_SEQUENTIAL]
    want_rising = page == "dark"
    return ramp if ramp.lightness_rises == want_rising else ramp.reversed()
