"""compare_png against the pixelmatch package, the reference it must agree with."""

from __future__ import annotations

import io
import math
import struct
import zlib

import numpy as np
import pixelmatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from pytest_tlgraph.snapshots import pixeldiff
from pytest_tlgraph.snapshots.pixeldiff import MAX_IMAGE_PIXELS, PngComparison, compare_png
from pytest_tlgraph.snapshots.pngmeta import add_text_chunks

RED, YELLOW = (255, 0, 0, 255), (255, 255, 0, 255)


def encode(image: Image.Image, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", **options)
    return out.getvalue()


def reference(expected: bytes, actual: bytes, threshold: float = 0.1) -> tuple[int, np.ndarray]:
    """pixelmatch's count and its diff image (as an (h, w, 4) array)."""
    img1 = Image.open(io.BytesIO(expected)).convert("RGBA")
    img2 = Image.open(io.BytesIO(actual)).convert("RGBA")
    output = [0] * (img1.width * img1.height * 4)
    count = pixelmatch.pixelmatch(
        list(img1.tobytes()), list(img2.tobytes()), img1.width, img1.height, output, threshold
    )
    return count, np.array(output, dtype=np.uint8).reshape(img1.height, img1.width, 4)


def decoded(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def count_colour(image: np.ndarray, colour: tuple[int, int, int, int]) -> int:
    return int(np.all(image == colour, axis=-1).sum())


def graph_like(width: int = 64, height: int = 48, label: str = "conv1") -> Image.Image:
    """Boxes, anti-aliased text and a line: the kind of picture we compare."""
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((4, 4, 50, 22), fill=(200, 230, 240), outline="black")
    draw.text((7, 7), label, fill="black")
    draw.line((27, 22, 35, 44), fill="black", width=2)
    return image


def supersampled_disc(width: int, height: int, cx: float, cy: float, r: float) -> Image.Image:
    """A disc with genuinely anti-aliased edges (drawn at 4x, then downsampled)."""
    big = Image.new("RGB", (width * 4, height * 4), "white")
    ImageDraw.Draw(big).ellipse(
        (4 * (cx - r), 4 * (cy - r), 4 * (cx + r), 4 * (cy + r)), fill=(30, 60, 150)
    )
    return big.resize((width, height), Image.Resampling.LANCZOS)


# --- agreement with the reference -------------------------------------------------

channel = st.integers(0, 255)
# Opaque and fully transparent colours are over-represented: rendered images are
# made of them, and transparent pixels of different RGB are the tricky equal case.
colours = st.one_of(
    st.tuples(channel, channel, channel, st.just(255)),
    st.tuples(channel, channel, channel, st.just(0)),
    st.tuples(channel, channel, channel, channel),
)


@st.composite
def image_pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """Small images of every PNG flavour, and an edited copy: local edits, shifts,
    alpha changes, anti-aliased text."""
    width, height = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    mode = draw(st.sampled_from(["RGB", "RGBA", "L", "LA", "P", "tRNS"]))
    # A few colours per picture, so equal neighbours (which the anti-aliasing test
    # counts) are common, as in a rendered graph.
    chosen = draw(st.lists(colours, min_size=2, max_size=5))
    if draw(st.booleans()):  # twins: raw-different pixels that look the same on white
        grey = draw(channel)
        chosen += [(grey, grey, grey, 255), (0, 0, 0, 255 - grey)]
    palette = st.sampled_from(chosen)
    base = Image.new("RGBA", (width, height), draw(palette))
    pen = ImageDraw.Draw(base)
    for _ in range(draw(st.integers(0, 5))):
        x, y = draw(st.integers(-4, width)), draw(st.integers(-4, height))
        shape = draw(st.sampled_from(["box", "line", "text", "dot"]))
        fill = draw(palette)
        if shape == "box":
            pen.rectangle((x, y, x + draw(st.integers(0, 12)), y + draw(st.integers(0, 12))), fill)
        elif shape == "line":
            pen.line((x, y, draw(st.integers(0, width)), draw(st.integers(0, height))), fill)
        elif shape == "text":
            pen.text((x, y), draw(st.sampled_from(["Ag", "x", "in=32"])), fill=fill)
        else:
            pen.point((x, y), fill)
    edited = base.copy()
    edit = draw(st.sampled_from(["pixels", "shift", "alpha", "text"]))
    if edit == "pixels":
        for _ in range(draw(st.integers(1, 8))):
            xy = (draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1)))
            edited.putpixel(xy, draw(st.one_of(palette, colours)))
    elif edit == "shift":
        edited = Image.new("RGBA", base.size, base.getpixel((0, 0)))
        edited.paste(base, (draw(st.integers(-2, 2)), draw(st.integers(-2, 2))))
    elif edit == "alpha":
        pixels = np.array(edited)
        pixels[..., 3] = np.minimum(pixels[..., 3], draw(st.integers(0, 255)))
        edited = Image.fromarray(pixels, "RGBA")
    else:
        ImageDraw.Draw(edited).text((draw(st.integers(-3, width)), 0), "B", fill=draw(colours))
    if mode == "P":
        return encode(base.convert("RGB").quantize(16)), encode(edited.convert("RGB").quantize(16))
    if mode == "tRNS":  # RGB with one colour keyed transparent
        key = base.convert("RGB").getpixel((0, 0))
        return tuple(encode(im.convert("RGB"), transparency=key) for im in (base, edited))
    return encode(base.convert(mode)), encode(edited.convert(mode))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(image_pairs(), st.sampled_from([0.0, 0.02, 0.1, 0.25, 0.6, 1.0]))
def test_counts_equal_pixelmatch(pair: tuple[bytes, bytes], threshold: float) -> None:
    expected, actual = pair
    count, _ = reference(expected, actual, threshold)
    assert compare_png(expected, actual, threshold=threshold).mismatched == count


@pytest.mark.parametrize("dx, dy", [(1, 0), (0, 1), (2, 2), (-1, 1)])
def test_shifted_graph_matches_reference(dx: int, dy: int) -> None:
    base = graph_like()
    moved = Image.new("RGB", base.size, "white")
    moved.paste(base, (dx, dy))
    expected, actual = encode(base), encode(moved)
    count, _ = reference(expected, actual)
    result = compare_png(expected, actual)
    assert result.mismatched == count > 0
    assert not result.passed


def test_anti_aliased_edges_are_ignored_as_the_reference_does() -> None:
    expected = encode(supersampled_disc(40, 40, 20.0, 20.0, 11.0))
    actual = encode(supersampled_disc(40, 40, 20.3, 20.0, 11.0))  # edges move sub-pixel
    count, ref_diff = reference(expected, actual)
    result = compare_png(expected, actual)
    assert result.mismatched == count
    assert result.diff_png is not None
    ours = decoded(result.diff_png)
    # The case really exercises the detector: some differing pixels were ruled AA.
    assert count_colour(ref_diff, YELLOW) > 0
    assert count_colour(ours, YELLOW) == count_colour(ref_diff, YELLOW)


def test_neighbours_that_look_the_same_on_white_count_as_equal() -> None:
    # Grey (54, 54, 54) and black at alpha 201 blend to the same colour. The centre
    # has two raw-equal neighbours and one such twin: three "equal" siblings, so the
    # reference rules out anti-aliasing and counts the pixel.
    g, w, k = (54, 54, 54, 255), (255, 255, 255, 255), (0, 0, 0, 255)
    t1, t2, m = (0, 0, 0, 131), (0, 0, 0, 101), (124, 124, 124, 255)
    grid = [
        [g, k, m, t1, t2],
        [k, g, g, t2, g],
        [t2, g, g, m, w],
        [t2, t1, t1, w, k],
        [g, w, m, k, w],
    ]
    before = np.array(grid, dtype=np.uint8)
    after = before.copy()
    after[2, 2] = t1
    expected, actual = encode(Image.fromarray(before)), encode(Image.fromarray(after))
    assert reference(expected, actual)[0] == 1
    assert compare_png(expected, actual).mismatched == 1


def test_semi_transparent_pixels_blend_against_white() -> None:
    base = Image.new("RGBA", (8, 8), (0, 0, 0, 0))
    faint = base.copy()
    faint.putpixel((3, 3), (0, 0, 0, 10))  # nearly invisible on white: below 0.1
    strong = base.copy()
    strong.putpixel((3, 3), (0, 0, 0, 200))
    hidden = base.copy()
    hidden.putpixel((3, 3), (255, 0, 0, 0))  # fully transparent: no visible change
    for other, mismatched in ((faint, 0), (strong, 1), (hidden, 0)):
        expected, actual = encode(base), encode(other)
        assert reference(expected, actual)[0] == mismatched
        assert compare_png(expected, actual).mismatched == mismatched
    # An invisible change never counts, even at threshold 0 (its delta is exactly 0).
    assert reference(encode(base), encode(hidden), 0.0)[0] == 0
    assert compare_png(encode(base), encode(hidden), threshold=0.0).mismatched == 0


# --- verdicts ---------------------------------------------------------------------


def test_identical_bytes_pass_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    png = encode(graph_like())

    def fail(png: bytes, side: str) -> Image.Image:
        raise AssertionError("identical bytes were decoded")

    monkeypatch.setattr(pixeldiff, "_decode", fail)
    result = compare_png(png, png)
    assert result == PngComparison(True, 0, False, None, (64, 48), (64, 48), 0.1, 0)


def test_identical_bytes_of_a_huge_image_pass_without_the_cap() -> None:
    huge = header_only_png(20_000, 20_000)
    assert compare_png(huge, huge).expected_size == (20_000, 20_000)


def test_identical_garbage_is_still_not_a_png() -> None:
    with pytest.raises(ValueError, match="expected image is not a PNG"):
        compare_png(b"garbage", b"garbage")


def test_same_pixels_in_other_bytes_pass() -> None:
    image = graph_like()
    expected = encode(image, compress_level=9)
    actual = add_text_chunks(encode(image, compress_level=1), {"tlgraph-renderer": "x"})
    assert expected != actual
    result = compare_png(expected, actual)
    assert (result.passed, result.mismatched, result.diff_png) == (True, 0, None)


def test_size_change_fails_whatever_the_budget() -> None:
    expected, actual = encode(graph_like(64, 48)), encode(graph_like(70, 40))
    result = compare_png(expected, actual, max_diff_pixels=10**9)
    assert result.size_changed and not result.passed
    assert (result.expected_size, result.actual_size) == ((64, 48), (70, 40))
    assert result.mismatched == 64 * 48  # the larger image's pixel count
    assert result.diff_png is not None  # drawn on the union canvas
    assert Image.open(io.BytesIO(result.diff_png)).size == (70, 48)


def test_threshold_decides_what_counts() -> None:
    base = Image.new("RGB", (16, 16), (200, 200, 200))
    tinted = base.copy()
    ImageDraw.Draw(tinted).rectangle((4, 4, 11, 11), fill=(208, 200, 200))
    expected, actual = encode(base), encode(tinted)
    counts = [compare_png(expected, actual, threshold=t).mismatched for t in (0.0, 0.05, 0.1)]
    assert counts == [reference(expected, actual, t)[0] for t in (0.0, 0.05, 0.1)]
    assert counts[0] == 64 and counts[2] == 0


def test_budget() -> None:
    expected, actual = encode(graph_like(label="fc1")), encode(graph_like(label="fc2"))
    mismatched = compare_png(expected, actual).mismatched
    assert mismatched > 0
    assert compare_png(expected, actual, max_diff_pixels=mismatched).passed
    failed = compare_png(expected, actual, max_diff_pixels=mismatched - 1)
    assert not failed.passed and failed.max_diff_pixels == mismatched - 1


@pytest.mark.parametrize("threshold", [-0.1, 1.5, math.nan])
def test_threshold_out_of_range_is_refused(threshold: float) -> None:
    png = encode(graph_like())
    with pytest.raises(ValueError, match="threshold"):
        compare_png(png, png, threshold=threshold)


def test_negative_budget_is_refused() -> None:
    png = encode(graph_like())
    with pytest.raises(ValueError, match="max_diff_pixels"):
        compare_png(png, png, max_diff_pixels=-1)


# --- the diff image -----------------------------------------------------------------


def test_diff_image_marks_what_the_reference_marks() -> None:
    base = supersampled_disc(48, 40, 20.0, 20.0, 12.0)
    changed = supersampled_disc(48, 40, 20.4, 20.0, 12.0)
    ImageDraw.Draw(changed).rectangle((40, 5, 44, 9), fill=(255, 128, 0))
    expected, actual = encode(base), encode(changed)
    count, ref_diff = reference(expected, actual)
    result = compare_png(expected, actual)
    assert result.diff_png is not None
    ours = decoded(result.diff_png)
    assert ours.shape == ref_diff.shape == (40, 48, 4)
    red = np.all(ours == RED, axis=-1)
    yellow = np.all(ours == YELLOW, axis=-1)
    assert int(red.sum()) == result.mismatched == count
    assert np.array_equal(red, np.all(ref_diff == RED, axis=-1))
    assert np.array_equal(yellow, np.all(ref_diff == YELLOW, axis=-1))
    # Elsewhere a faded grey of the expected image: opaque, r == g == b, and within
    # one level of the reference's float brightness.
    rest = ~(red | yellow)
    assert (ours[rest][:, 3] == 255).all()
    assert (ours[rest][:, 0] == ours[rest][:, 1]).all()
    gap = np.abs(ours[rest].astype(int) - ref_diff[rest].astype(int))
    assert gap.max() <= 1


def test_diff_image_fades_transparent_pixels_to_white() -> None:
    base = Image.new("RGBA", (6, 6), (0, 0, 0, 0))
    base.putpixel((1, 1), (0, 0, 0, 255))
    changed = base.copy()
    changed.putpixel((4, 4), (0, 0, 0, 255))
    result = compare_png(encode(base), encode(changed))
    assert result.diff_png is not None
    ours = decoded(result.diff_png)
    assert tuple(ours[4, 4]) == RED
    assert tuple(ours[0, 0]) == (255, 255, 255, 255)  # transparent: white
    assert tuple(ours[1, 1]) == (229, 229, 229, 255)  # black, faded by 0.1


# --- bad input ----------------------------------------------------------------------


def test_garbage_names_the_expected_side() -> None:
    with pytest.raises(ValueError, match="expected image is not a PNG"):
        compare_png(b"not a png at all", encode(graph_like()))


def test_truncated_actual_names_the_actual_side() -> None:
    png = encode(graph_like())
    with pytest.raises(ValueError, match="actual image could not be decoded"):
        compare_png(png, png[: len(png) // 2])


def test_corrupt_image_data_names_its_side() -> None:
    png = bytearray(encode(graph_like()))
    start = png.index(b"IDAT") + 4
    png[start + 10 : start + 30] = bytes(20)  # damage the deflate stream
    with pytest.raises(ValueError, match="expected image could not be decoded"):
        compare_png(bytes(png), encode(graph_like()))


def header_only_png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def test_image_above_the_cap_is_refused_before_decoding() -> None:
    huge = header_only_png(20_000, 20_000)
    assert MAX_IMAGE_PIXELS < 20_000 * 20_000
    with pytest.raises(ValueError, match=f"actual image is 20000x20000.*{MAX_IMAGE_PIXELS:,}"):
        compare_png(encode(graph_like()), huge)


def test_pillows_global_guard_is_neither_tripped_nor_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A limit this low would make Image.open refuse both images outright.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    expected, actual = encode(graph_like(label="a")), encode(graph_like(label="b"))
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(expected))
    assert compare_png(expected, actual).mismatched > 0
    assert Image.MAX_IMAGE_PIXELS == 100
