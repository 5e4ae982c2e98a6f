"""PNG tEXt chunks added and read on the encoded bytes."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, PngImagePlugin

from pytest_tlgraph.pixels.pngmeta import (
    PNG_SIGNATURE,
    add_text_chunks,
    read_png_size,
    read_text_chunks,
)

ITEMS = {"tlgraph-renderer": "graphviz-pure 0.2.2", "tlgraph-dot-sha256": "ab" * 32}


def sample_png(**info: str) -> bytes:
    image = Image.new("RGBA", (30, 20), (255, 255, 255, 255))
    ImageDraw.Draw(image).text((2, 4), "fc1", fill=(0, 0, 0, 255))
    meta = PngImagePlugin.PngInfo()
    for key, value in info.items():
        meta.add_text(key, value)
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=meta)
    return out.getvalue()


def chunks(png: bytes) -> list[tuple[bytes, bytes, int]]:
    """(type, data, stored CRC) of every chunk, parsed independently of the module."""
    assert png.startswith(PNG_SIGNATURE)
    found, pos = [], 8
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])
        found.append((kind, data, crc))
        pos += 12 + length
    return found


def test_round_trip() -> None:
    assert read_text_chunks(add_text_chunks(sample_png(), ITEMS)) == ITEMS


def test_chunks_follow_ihdr_sorted_with_valid_crcs() -> None:
    png = add_text_chunks(sample_png(), ITEMS)
    parsed = chunks(png)
    assert [kind for kind, _, _ in parsed[:3]] == [b"IHDR", b"tEXt", b"tEXt"]
    assert [data.split(b"\0")[0] for _, data, _ in parsed[1:3]] == sorted(
        key.encode() for key in ITEMS
    )
    assert all(zlib.crc32(kind + data) == crc for kind, data, crc in parsed)


def test_image_data_untouched_and_pillow_reads_everything() -> None:
    original = sample_png()
    png = add_text_chunks(original, ITEMS)
    kept = [chunk for chunk in chunks(png) if chunk[0] != b"tEXt"]
    assert kept == chunks(original)  # IHDR, IDAT, IEND byte for byte
    with Image.open(io.BytesIO(png)) as image, Image.open(io.BytesIO(original)) as plain:
        assert np.array_equal(np.asarray(image), np.asarray(plain))
        assert image.text == ITEMS  # Pillow also checks the CRCs


def test_deterministic_whatever_the_mapping_order() -> None:
    reordered = dict(reversed(list(ITEMS.items())))
    assert add_text_chunks(sample_png(), ITEMS) == add_text_chunks(sample_png(), reordered)


def test_adding_a_key_again_replaces_it_and_keeps_other_text() -> None:
    png = add_text_chunks(sample_png(Author="someone"), ITEMS)
    png = add_text_chunks(png, {"tlgraph-renderer": "dot 2.43"})
    text = [data for kind, data, _ in chunks(png) if kind == b"tEXt"]
    assert sum(data.startswith(b"tlgraph-renderer\0") for data in text) == 1
    assert read_text_chunks(png) == {
        "Author": "someone",
        "tlgraph-dot-sha256": ITEMS["tlgraph-dot-sha256"],
        "tlgraph-renderer": "dot 2.43",
    }


def test_no_items_changes_nothing_but_stays_valid() -> None:
    png = sample_png()
    assert add_text_chunks(png, {}) == png


@pytest.mark.parametrize(
    "items",
    [
        {"": "x"},
        {"k" * 80: "x"},
        {" padded": "x"},
        {"two  spaces": "x"},
        {"tab\tkey": "x"},
        {"nul\0key": "x"},
        {"key": "nul\0value"},
        {"key": "snowman \u2603"},
        {"\u2603": "x"},
    ],
)
def test_items_that_text_chunks_cannot_hold_are_refused(items: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="tEXt"):
        add_text_chunks(sample_png(), items)


@pytest.mark.parametrize("bad", [b"", b"GIF89a....", PNG_SIGNATURE, sample_png()[:40]])
def test_adding_to_something_not_a_png_is_refused(bad: bytes) -> None:
    with pytest.raises(ValueError):
        add_text_chunks(bad, ITEMS)


def test_reading_damaged_or_foreign_bytes_gives_nothing() -> None:
    png = add_text_chunks(sample_png(), ITEMS)
    text_end = png.index(b"IDAT") - 4
    corrupted = bytearray(png)
    corrupted[png.index(b"tEXt") + 6] ^= 0xFF  # a key byte: the CRC no longer matches
    for bad in (b"", b"not a png", PNG_SIGNATURE + b"\0\0", png[: text_end - 5], corrupted):
        assert read_text_chunks(bytes(bad)) == {}


def test_reading_a_png_cut_inside_its_image_data_still_gives_the_items() -> None:
    png = add_text_chunks(sample_png(), ITEMS)
    assert read_text_chunks(png[: png.index(b"IDAT") + 10]) == ITEMS


def test_first_value_wins_and_text_after_image_data_is_not_read() -> None:
    png = sample_png(dup="first")
    parsed = chunks(png)

    def encode(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    body = [encode(kind, data) for kind, data, _ in parsed]
    idat = next(i for i, (kind, _, _) in enumerate(parsed) if kind == b"IDAT")
    body.insert(idat, encode(b"tEXt", b"dup\0second"))
    body.insert(-1, encode(b"tEXt", b"late\0ignored"))
    assert read_text_chunks(PNG_SIGNATURE + b"".join(body)) == {"dup": "first"}


def test_size_from_the_header() -> None:
    assert read_png_size(sample_png()) == (30, 20)
    assert read_png_size(b"\x89PNG") is None
    assert read_png_size(b"GIF89a" + bytes(40)) is None


printable = st.one_of(
    st.characters(min_codepoint=33, max_codepoint=126),
    st.characters(min_codepoint=161, max_codepoint=255),
)
keys = st.text(printable, min_size=1, max_size=79)
values = st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=200)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(keys, values, max_size=6))
def test_any_latin1_items_round_trip(items: dict[str, str]) -> None:
    png = add_text_chunks(sample_png(), items)
    assert read_text_chunks(png) == items
    with Image.open(io.BytesIO(png)) as image:
        image.load()
        assert image.text == items
