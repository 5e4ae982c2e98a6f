"""compare_png against the pixelmatch package, the reference it must agree with."""

from __future__ import annotations

import functools
import io
import math
import struct
import zlib
from typing import NamedTuple
from unittest import mock

import numpy as np
import pixelmatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont

from pytest_tlgraph.pixels import antialias, pixeldiff
from pytest_tlgraph.pixels.pixeldiff import MAX_IMAGE_PIXELS, PngComparison, compare_png
from pytest_tlgraph.pixels.pngmeta import add_text_chunks

RED, YELLOW = (255, 0, 0, 255), (255, 255, 0, 255)


def encode(image: Image.Image, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", **options)
    return out.getvalue()


def reference(expected: bytes, actual: bytes, threshold: float = 0.1) -> tuple[int, np.ndarray]:
    """pixelmatch's count and its diff image (as an (h, w, 4) array)."""
    img1 = Image.open(io.BytesIO(expected)).convert("RGBA")
    img2 = Image.open(io.BytesIO(actual)).convert("RGBA")
    output: list[int | float] = [0] * (img1.width * img1.height * 4)
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
        keyed = [encode(im.convert("RGB"), transparency=key) for im in (base, edited)]
        return keyed[0], keyed[1]
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


# --- text-heavy drawings -------------------------------------------------------------

LABEL_CHARS = "abcdefgilmnorstuxyz_0123456789=(),."
BOX_FILLS = [(242, 243, 245, 255), (200, 230, 240, 255), (255, 236, 200, 255), (255, 255, 255, 255)]
INKS = [(20, 20, 20, 255), (90, 90, 90, 255), (0, 0, 170, 255), (0, 0, 0, 160)]


@functools.cache
def font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled FreeType font: anti-aliased glyphs, as in a rendered drawing."""
    loaded = ImageFont.load_default(size=size)
    assert isinstance(loaded, ImageFont.FreeTypeFont)
    return loaded


class Label(NamedTuple):
    left: int
    top: int
    text: str
    size: int
    fill: tuple[int, int, int, int]
    ink: tuple[int, int, int, int]

    def draw(self, pen: ImageDraw.ImageDraw, *, nudge: int = 0) -> None:
        """An outlined rounded box with the anti-aliased label inside."""
        right, bottom = self.left + 8 + 6 * len(self.text), self.top + self.size + 8
        pen.rounded_rectangle(
            (self.left, self.top, right, bottom), 4, fill=self.fill, outline=(70, 80, 90, 255)
        )
        pen.text(
            (self.left + 4 + nudge, self.top + 3), self.text, fill=self.ink, font=font(self.size)
        )


def text_scene(
    width: int, height: int, labels: list[Label], background: tuple[int, ...]
) -> Image.Image:
    image = Image.new("RGBA", (width, height), background)
    pen = ImageDraw.Draw(image)
    for label in labels:
        label.draw(pen)
    return image


@st.composite
def text_scene_pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """Labels in boxes (on white or on a transparent page) and an edited copy: shifted,
    one label rewritten, recoloured or nudged by a pixel, one box moved."""
    width, height = draw(st.integers(30, 150)), draw(st.integers(20, 110))
    labels = [
        Label(
            draw(st.integers(-12, width - 8)),
            draw(st.integers(-8, height - 6)),
            draw(st.text(LABEL_CHARS, min_size=1, max_size=12)),
            draw(st.sampled_from([9, 11, 13])),
            draw(st.sampled_from(BOX_FILLS)),
            draw(st.sampled_from(INKS)),
        )
        for _ in range(draw(st.integers(1, 7)))
    ]
    background = draw(st.sampled_from([(255, 255, 255, 255), (255, 255, 255, 0)]))
    base = text_scene(width, height, labels, background)
    edit = draw(st.sampled_from(["shift", "rewrite", "recolour", "nudge", "move"]))
    which = draw(st.integers(0, len(labels) - 1))
    if edit == "shift":
        edited = Image.new("RGBA", base.size, background)
        dx, dy = draw(st.integers(-2, 2)), draw(st.integers(-2, 2))
        edited.paste(base, (dx, dy))
    else:
        label = labels[which]
        if edit == "rewrite":
            label = label._replace(text=draw(st.text(LABEL_CHARS, min_size=1, max_size=12)))
        elif edit == "recolour":
            label = label._replace(ink=draw(st.sampled_from(INKS)))
        elif edit == "move":
            label = label._replace(left=label.left + draw(st.integers(-3, 3)), top=label.top + 1)
        edited = base.copy()
        label.draw(ImageDraw.Draw(edited), nudge=int(edit == "nudge"))
    mode = draw(st.sampled_from(["RGB", "RGBA"])) if background[3] == 255 else "RGBA"
    return encode(base.convert(mode)), encode(edited.convert(mode))


def assert_same_as_reference(
    expected: bytes, actual: bytes, threshold: float = 0.1
) -> tuple[int, np.ndarray]:
    """Our count and diff image's red and yellow pixels equal the reference's (and
    its greys are within a level of the reference's), whether
    the anti-aliasing test takes the rows in one band, one by one or a few at a time;
    returns the reference's count and diff image."""
    count, ref_diff = reference(expected, actual, threshold)
    for band_pixels in (antialias.BAND_PIXELS, 1, 200):
        with mock.patch.object(antialias, "BAND_PIXELS", band_pixels):
            result = compare_png(expected, actual, threshold=threshold)
        assert result.mismatched == count
        if result.diff_png is None:  # nothing over the threshold: the reference marks nothing
            assert count_colour(ref_diff, RED) == count_colour(ref_diff, YELLOW) == 0
            continue
        ours = decoded(result.diff_png)
        for colour in (RED, YELLOW):
            marked = np.all(ours == colour, axis=-1)
            assert np.array_equal(marked, np.all(ref_diff == colour, axis=-1))
        # Elsewhere the faded grey, within one level of the reference's.
        rest = ~(np.all(ours == RED, axis=-1) | np.all(ours == YELLOW, axis=-1))
        assert np.abs(ours[rest].astype(int) - ref_diff[rest].astype(int)).max(initial=0) <= 1
    return count, ref_diff


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_scene_pairs(), st.sampled_from([0.0, 0.05, 0.1, 0.1, 0.3]))
def test_text_scenes_match_the_reference(pair: tuple[bytes, bytes], threshold: float) -> None:
    assert_same_as_reference(*pair, threshold)


def dense_labels(width: int, height: int) -> list[Label]:
    """A page of labels, five to a row, as in a drawing of a deep model."""
    return [
        Label(
            4 + col * 58,
            3 + row * 22,
            f"op{row * 5 + col}(x)",
            11,
            BOX_FILLS[row % 3],
            INKS[col % 3],
        )
        for row in range((height - 6) // 22)
        for col in range(min(5, (width - 4) // 58))
    ]


@pytest.mark.parametrize(
    "mode, dx, dy", [("RGB", 2, 2), ("RGBA", 0, 1), ("RGB", -2, 0), ("RGBA", 1, -2)]
)
def test_shifted_text_page_matches_reference(mode: str, dx: int, dy: int) -> None:
    background = (255, 255, 255, 255) if mode == "RGB" else (255, 255, 255, 0)
    base = text_scene(180, 140, dense_labels(180, 140), background)
    moved = Image.new("RGBA", base.size, background)
    moved.paste(base, (dx, dy))
    expected, actual = encode(base.convert(mode)), encode(moved.convert(mode))
    count, ref_diff = assert_same_as_reference(expected, actual)
    assert count > 500
    assert count_colour(ref_diff, YELLOW) > 50  # the detector really decides here


def test_local_change_in_the_middle_of_a_tall_page_matches_reference() -> None:
    # The changed rows sit far from the top and bottom, so the anti-aliasing test
    # works on an inner band of rows: its edges must not be taken for the image's.
    labels = dense_labels(300, 600)
    base = text_scene(300, 600, labels, (255, 255, 255, 255))
    edited = base.copy()
    labels[67]._replace(text="op33(y)").draw(ImageDraw.Draw(edited))
    labels[68].draw(ImageDraw.Draw(edited), nudge=1)
    expected, actual = encode(base.convert("RGB")), encode(edited.convert("RGB"))
    assert 0 < assert_same_as_reference(expected, actual)[0] < 500


def test_opaque_colour_deltas_equal_the_reference_function() -> None:
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**24, size=(2, 4000), dtype=np.uint32) | np.uint32(0xFF000000)
    words[1, :1000] = words[0, :1000] ^ rng.integers(1, 8, size=1000, dtype=np.uint32)  # near twins
    ours = pixeldiff._opaque_deltas(words[0], words[1])
    channels = words.view(np.uint8).reshape(2, -1, 4).tolist()
    for n in range(words.shape[1]):
        rgba = channels[0][n] + channels[1][n]
        assert ours[n] == pixelmatch.color_delta(rgba, rgba, 0, 4)


def test_band_brightness_equals_the_reference_function() -> None:
    rng = np.random.default_rng(1)
    flat = rng.integers(0, 256, size=(6 * 7, 4), dtype=np.uint8)
    flat[::3, 3] = 255
    band = antialias._Image(flat, flat.view("<u4").reshape(-1), 6, 7, True, True)
    framed = band.brightness().reshape(8, 9)
    assert np.isnan(framed[[0, -1]]).all() and np.isnan(framed[:, [0, -1]]).all()
    black = [0, 0, 0, 255]
    for n, (row, col) in enumerate(np.ndindex(6, 7)):
        pixel = [int(v) for v in flat[n]]
        if pixel == black:
            continue
        # color_delta(..., y_only=True) against black is the pixel's own brightness.
        assert framed[row + 1, col + 1] == pixelmatch.color_delta(pixel, black, 0, 0, True)


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
    with pytest.raises(ValueError, match=f"expected image is 20000x20000.*{MAX_IMAGE_PIXELS:,}"):
        compare_png(huge, huge + b"\0")


def test_a_size_change_is_read_from_the_headers_without_decoding() -> None:
    # A header-only PNG has no image data: decoding it would raise, reading the size not.
    small = encode(graph_like())
    result = compare_png(header_only_png(14_142, 14_142), small)
    assert result.size_changed and not result.passed and result.diff_png is None
    assert result.expected_size == (14_142, 14_142)
    assert result.mismatched == 14_142 * 14_142


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
