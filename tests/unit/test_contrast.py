"""Text contrast (REVIEW.md §1.1): every node's text reads on its fill, both pages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_tlgraph.draw import style
from pytest_tlgraph.draw.contrast import MIN_CONTRAST, contrast_ratio, text_colour
from tests.colours import lowest_contrast, node_colours
from tests.corpus import names
from tests.corpus.traces import corpus_trace

fills = st.integers(0, 0xFFFFFF).map(lambda v: f"#{v:06X}")


def test_wcag_reference_values() -> None:
    assert contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)
    # 0.1's darkest viridis fill under the light page's text: 1.14:1.
    assert contrast_ratio("#440154", "#1A1A1A") == pytest.approx(1.14, abs=0.01)
    with pytest.raises(ValueError, match="#RRGGBB"):
        contrast_ratio("purple", "#FFFFFF")


@settings(max_examples=400)
@given(fill=fills, page=st.sampled_from(sorted(style.PAGES)))
def test_every_fill_gets_readable_text(fill: str, page: str) -> None:
    default = style.PAGES[page].text
    chosen = text_colour(fill, default)
    shown = default if chosen is None else chosen
    assert contrast_ratio(shown, fill) >= MIN_CONTRAST
    # The page's text colour is kept wherever it reads.
    assert (chosen is None) == (contrast_ratio(default, fill) >= MIN_CONTRAST)


@pytest.mark.parametrize("page", sorted(style.PAGES))
def test_role_fills_read_with_the_page_text(page: str) -> None:
    palette = style.PAGES[page]
    for kind, fill in palette.fills.items():
        assert contrast_ratio(palette.text, fill) >= MIN_CONTRAST, (page, kind)


@pytest.mark.parametrize(
    "name", [n for n in names() if n not in ("sequential_2000", "deep_chain_1000")]
)
def test_every_corpus_node_reads_on_its_fill(name: str) -> None:
    trace = corpus_trace(name, magnitudes=True)
    for page in ("light", "dark"):
        for options in (
            {},
            {"color_by": "flops"},
            {"color_by": "bytes", "collapse": "auto"},
            {"color_by": "magnitude", "depth": 1},
        ):
            drawing = trace.draw(page=page, **options)
            assert lowest_contrast(drawing) >= MIN_CONTRAST, (page, options)


def test_the_darkest_fill_gets_light_text() -> None:
    trace = corpus_trace("gpt2")
    drawing = trace.draw(color_by="flops")
    colours = node_colours(drawing)
    darkest = [font for fill, font in colours.values() if fill.upper() == "#440154"]
    assert darkest and set(darkest) == {"#FFFFFF"}
