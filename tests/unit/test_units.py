from __future__ import annotations

import decimal
import locale
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph.draw.encoding.units import (
    format_bytes,
    format_device_time,
    format_flops,
    format_integer,
    format_plain,
    format_time,
    format_value,
    key_name,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.000098, "0.098 ms"),
        (0.00146, "1.46 ms"),
        (0.0142, "14.2 ms"),
        (0.0001, "0.1 ms"),
        (0.001455, "1.46 ms"),  # halves round up from the shortest repr
        (1.2345, "1230 ms"),  # stays in ms at any magnitude
        (0.0009996, "1 ms"),
        (0.0, "0 ms"),
        (-0.0, "0 ms"),
        (-0.00146, "-1.46 ms"),
        (1e-9, "0.000001 ms"),
    ],
)
def test_format_time(seconds: float, text: str) -> None:
    assert format_time(seconds) == text
    assert format_value("time", seconds) == text


@pytest.mark.parametrize(
    ("ns", "text"), [(98_000, "0.098 ms"), (1_460_000, "1.46 ms"), (100_000, "0.1 ms"), (0, "0 ms")]
)
def test_format_device_time(ns: float, text: str) -> None:
    assert format_device_time(ns) == text
    assert format_value("device_time", ns) == text


@pytest.mark.parametrize(
    ("num_bytes", "text"),
    [
        (40, "40 B"),
        (15 * 1024, "15 KB"),
        (1280, "1.25 KB"),
        (3.5 * 2**20, "3.5 MB"),
        (60 * 1024, "60 KB"),
        (1.5 * 2**30, "1.5 GB"),
        (2 * 2**40, "2 TB"),
        (2050 * 2**40, "2050 TB"),  # no unit past TB: the mantissa grows
        (0, "0 B"),
        (0.4, "0.4 B"),
        (1000, "1000 B"),
        (1023.9, "1020 B"),  # 3 significant digits never round up to 1024
        (1024, "1 KB"),
        (1048575, "1020 KB"),
        (1555, "1.52 KB"),
        (-1280, "-1.25 KB"),
    ],
)
def test_format_bytes(num_bytes: float, text: str) -> None:
    assert format_bytes(num_bytes) == text
    assert format_value("bytes", num_bytes) == text


@pytest.mark.parametrize(
    ("flops", "text"),
    [
        (68, "68 FLOPs"),
        (2080, "2.08 KFLOPs"),
        (1.2e9, "1.2 GFLOPs"),
        (4.56e6, "4.56 MFLOPs"),
        (3.2e13, "32 TFLOPs"),
        (999.4, "999 FLOPs"),
        (999.6, "1 KFLOPs"),  # rounding that reaches the base carries
        (999_600, "1 MFLOPs"),
        (0, "0 FLOPs"),
        (0.5, "0.5 FLOPs"),
        (-2080, "-2.08 KFLOPs"),
    ],
)
def test_format_flops(flops: float, text: str) -> None:
    assert format_flops(flops) == text
    assert format_value("flops", flops) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.123456, "0.1235"),
        (1234.5, "1235"),
        (12345.6, "12350"),
        (3.0, "3"),
        (0.0001, "0.0001"),
        (0.00009999, "9.999e-5"),
        (-2.5e-7, "-2.5e-7"),
        (999_999.6, "1e6"),
        (123_456_789.0, "1.235e8"),
        (0.0, "0"),
        (-0.0, "0"),
    ],
)
def test_format_plain(value: float, text: str) -> None:
    assert format_plain(value) == text
    for token in ("magnitude", "grad_norm", "some_field", "callable f"):
        assert format_value(token, value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(3072, "3072"), (1, "1"), (2.5, "3"), (-2.5, "-3"), (1e21, "1" + "0" * 21)]
)
def test_format_integer(value: float, text: str) -> None:
    assert format_integer(value) == text
    assert format_value("dims", value) == text


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("token", ["time", "device_time", "bytes", "flops", "magnitude", "dims"])
def test_missing_values_read_na(token: str, value: float | None) -> None:
    assert format_value(token, value) == "n/a"


def test_key_names() -> None:
    assert key_name("time") == "time"
    assert key_name("bytes") == "output bytes"
    assert key_name("flops") == "forward FLOPs"
    assert key_name("grad_norm") == "grad norm"
    assert key_name("device_time") == "device time"
    assert key_name("dims") == "output numel"
    assert key_name("transformed_activation_memory") == "transformed_activation_memory"


def test_independent_of_decimal_context_and_locale() -> None:
    expected = [format_bytes(1555), format_plain(1 / 3), format_integer(1e30)]
    with decimal.localcontext() as ctx:
        ctx.prec = 2
        ctx.rounding = decimal.ROUND_FLOOR
        assert [format_bytes(1555), format_plain(1 / 3), format_integer(1e30)] == expected
    saved = locale.setlocale(locale.LC_NUMERIC)
    try:
        for name in ("de_DE.UTF-8", "fr_FR.UTF-8"):
            try:
                locale.setlocale(locale.LC_NUMERIC, name)
            except locale.Error:
                continue
            assert format_bytes(1555) == "1.52 KB"
    finally:
        locale.setlocale(locale.LC_NUMERIC, saved)


finite = st.floats(allow_nan=False, allow_infinity=False)


@given(finite)
def test_sign_symmetry(value: float) -> None:
    for fmt in (format_time, format_bytes, format_flops, format_plain):
        positive, negative = fmt(abs(value)), fmt(-abs(value))
        is_zero = positive.split(" ")[0] == "0"
        assert negative == (positive if is_zero else "-" + positive)


@given(st.integers(-(10**12), 10**12), st.integers(-12, 3))
def test_device_nanoseconds_read_like_the_same_seconds(digits: int, exponent: int) -> None:
    # The same decimal digits as seconds and as nanoseconds (9 places further): one text,
    # with no binary noise from a float division between the two.
    seconds, nanoseconds = float(f"{digits}e{exponent}"), float(f"{digits}e{exponent + 9}")
    assert format_device_time(nanoseconds) == format_time(seconds)


@given(st.floats(min_value=0, max_value=1e15))
def test_scaled_mantissa_has_at_most_three_significant_digits(value: float) -> None:
    for text in (format_bytes(value), format_flops(value)):
        mantissa, _unit = text.split(" ")
        digits = mantissa.replace(".", "").lstrip("0").rstrip("0")
        assert len(digits) <= 3, text
        assert "e" not in mantissa
