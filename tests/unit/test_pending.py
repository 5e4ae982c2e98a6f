"""The one-line story ``tlgraph report`` prints for a call pending review."""

from __future__ import annotations

from pytest_tlgraph.snapshots.review.pending import story


def test_the_story_is_the_records_own_when_it_has_one() -> None:
    record = {
        "story": "added @layer1.2 (BasicBlock): 7 nodes\nmore",
        "sections": [["structure (snapshot -> received):", ["nodes added (7): ..."]]],
    }
    assert story(record) == "added @layer1.2 (BasicBlock): 7 nodes"


def test_else_the_first_structure_line_with_the_line_a_heading_introduces() -> None:
    heading = "label rows changed (2 nodes):"
    detail = "  conv2d_1: shape row 1x16 -> 1x32"
    record = {"sections": [["structure (snapshot -> received):", [heading, detail, "x"]]]}
    assert story(record) == "label rows changed (2 nodes): conv2d_1: shape row 1x16 -> 1x32"
    plain = {"sections": [["", ["snapshot a.gv does not exist: ...", "snapshot a.png ..."]]]}
    assert story(plain) == "snapshot a.gv does not exist: ..."
    assert story({"sections": "damaged"}) == "(no summary recorded)"
    assert story({"story": "", "sections": []}) == "(no summary recorded)"
