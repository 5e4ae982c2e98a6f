"""Value formatting for the drawn key (docs/decisions.md, "One house (0.4)").

Every formatter is deterministic and locale-independent: numbers go through
:mod:`decimal` starting from the float's shortest round-trip repr, never through
``locale`` or ``%g``. Conventions shared by all of them:

* Rounding is to N significant digits, halves away from zero, applied to the
  shortest repr (so ``1.455`` gives ``1.46`` although the binary double is a
  hair below it). Trailing zeros and a bare decimal point are dropped.
* Zero (and ``-0.0``) formats as ``0``; negative values get a leading ``-`` and
  choose their unit by magnitude.
* ``None``, NaN and infinities format as ``n/a``: the channel leaves such nodes
  unencoded, and the key must still say something.
* Scaled units (bytes, FLOPs) pick the largest unit whose base fits the
  magnitude, round, and move up one unit if rounding reached the base
  (``999.6 FLOPs`` -> ``1 KFLOPs``). With binary bytes and 3 significant digits
  rounding never reaches 1024, so ``1023.9 B`` is ``1020 B``, not ``1 KB``.
  Past the largest unit the mantissa simply grows (``2050 TB``).
* Time stays in milliseconds at every magnitude, as the spec's table says.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from typing import ParamSpec, TypeVar

__all__ = [
    "KEY_NAMES",
    "format_bytes",
    "format_device_time",
    "format_flops",
    "format_integer",
    "format_plain",
    "format_time",
    "format_value",
    "key_name",
]

NA = "n/a"

KEY_NAMES: dict[str, str] = {
    "time": "time",
    "bytes": "output bytes",
    "flops": "forward FLOPs",
    "magnitude": "magnitude",
    "grad_norm": "grad norm",
    "device_time": "device time",
    "dims": "output numel",
    "params": "parameters",
}
"""Key names of the builtin tokens; any other field is named by itself."""

_BYTE_UNITS = ("B", "KB", "MB", "GB", "TB")
_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs")

# format_plain switches to scientific notation outside this magnitude range, so
# a tiny or huge field value cannot produce a key line dozens of digits long.
_PLAIN_MIN = Decimal("1e-4")
_PLAIN_MAX = Decimal("1e6")

# A private context makes results independent of whatever decimal context the
# caller's thread has set; 400 digits hold any finite double exactly.
_CONTEXT = Context(prec=400, rounding=ROUND_HALF_UP)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _isolated(func: Callable[_P, _R]) -> Callable[_P, _R]:
    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with localcontext(_CONTEXT):
            return func(*args, **kwargs)

    return wrapper


def _round_sig(value: Decimal, digits: int) -> Decimal:
    if value == 0:
        return Decimal(0)
    exponent = value.adjusted() - digits + 1
    return value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP)


def _positional(value: Decimal) -> str:
    text = f"{value:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("0", "-0") else text


def _finite(value: float | None) -> Decimal | None:
    if value is None or not math.isfinite(value):
        return None
    # repr gives the shortest string that round-trips, which is what a reader
    # expects rounding to act on; Decimal(float) would expose binary noise.
    return Decimal(repr(float(value)))


def _scaled(value: float | None, base: int, units: tuple[str, ...], digits: int) -> str:
    number = _finite(value)
    if number is None:
        return NA
    sign = "-" if number < 0 else ""
    magnitude = abs(number)
    index = 0
    while index < len(units) - 1 and magnitude >= base ** (index + 1):
        index += 1
    mantissa = _round_sig(magnitude / base**index, digits)
    if mantissa >= base and index < len(units) - 1:
        index += 1
        mantissa = _round_sig(magnitude / base**index, digits)
    text = _positional(mantissa)
    return f"{'' if text == '0' else sign}{text} {units[index]}"


def _milliseconds(value: float | None, ms_exponent: int) -> str:
    """``value`` in units of ``10**ms_exponent`` ms, written in ms to 3 significant digits."""
    number = _finite(value)
    if number is None:
        return NA
    # scaleb shifts the decimal exponent: exact, whatever the unit.
    return f"{_positional(_round_sig(number.scaleb(ms_exponent), 3))} ms"


@_isolated
def format_time(seconds: float | None) -> str:
    """Seconds as milliseconds, 3 significant digits: ``0.000098`` -> ``"0.098 ms"``."""
    return _milliseconds(seconds, 3)


@_isolated
def format_device_time(nanoseconds: float | None) -> str:
    """Device nanoseconds as milliseconds, formatted like :func:`format_time`."""
    return _milliseconds(nanoseconds, -6)


# Memoised: every node's shape row formats its size, and sizes repeat across a graph.
@functools.lru_cache(maxsize=4096)
@_isolated
def format_bytes(num_bytes: float | None) -> str:
    """Binary units (1 KB = 1024 B), 3 significant digits: ``"40 B"``, ``"1.25 KB"``."""
    return _scaled(num_bytes, 1024, _BYTE_UNITS, 3)


@_isolated
def format_flops(flops: float | None) -> str:
    """Decimal units (1 KFLOPs = 1000 FLOPs), 3 significant digits: ``"2.08 KFLOPs"``."""
    return _scaled(flops, 1000, _FLOP_UNITS, 3)


@_isolated
def format_plain(value: float | None, digits: int = 4) -> str:
    """Unitless value to ``digits`` significant digits: ``"0.1235"``, ``"1235"``.

    Magnitudes below 1e-4 or at/above 1e6 (after rounding) use compact
    scientific notation with no ``+`` or leading exponent zeros: ``"1.235e-05"``
    is written ``"1.235e-5"``.
    """
    number = _finite(value)
    if number is None:
        return NA
    rounded = _round_sig(number, digits)
    if rounded == 0 or _PLAIN_MIN <= abs(rounded) < _PLAIN_MAX:
        return _positional(rounded)
    exponent = rounded.adjusted()
    return f"{_positional(rounded.scaleb(-exponent))}e{exponent}"


@_isolated
def format_integer(value: float | None) -> str:
    """Whole number, no grouping separators (halves round away from zero): ``"3072"``."""
    number = _finite(value)
    if number is None:
        return NA
    return _positional(number.quantize(Decimal(1), rounding=ROUND_HALF_UP))


_FORMATTERS: dict[str, Callable[[float | None], str]] = {
    "time": format_time,
    "device_time": format_device_time,
    "bytes": format_bytes,
    "flops": format_flops,
    "dims": format_integer,
    "params": format_integer,
}


def format_value(token: str, value: float | None) -> str:
    """Format ``value`` as the key shows it for source ``token``.

    Builtin tokens use their table units; every other name (record fields,
    ``magnitude``, ``grad_norm``, callables) gets 4 significant digits.
    """
    return _FORMATTERS.get(token, format_plain)(value)


def key_name(token: str) -> str:
    """The quantity name the key prints for ``token`` (a field name names itself)."""
    return KEY_NAMES.get(token, token)
