"""The drawing schema's attribute values: any text round-trips through the DOT the
writer emits and the reader parses, and what the reader cannot read is refused with
the node and the remedy named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_tlgraph.diff.dotparse import parse_attrs
from pytest_tlgraph.draw.dot import attr_list
from pytest_tlgraph.schema import (
    ClusterRecord,
    NodeRecord,
    SchemaError,
    cluster_attrs,
    decode_list,
    encode_list,
    node_attrs,
    read_cluster,
    read_node,
)

#: Text a module address, a function name or a call may hold: quotes, unicode,
#: control characters, DOT's and the drawing's own punctuation.
ODD = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(list('#*.,%"\\ <>@-_0123456789aé\u2603\x00\n\x1f'))),
    st.sampled_from(["", "blocks.0#1*4", "a..b", "%2C", "%25", ",", "x,y", '"', "\\", "\udcff"]),
)
NUMBER = st.none() | st.integers(min_value=0, max_value=10**12)
TEXT = st.none() | ODD


def _through_dot(attrs: dict[str, str | None]) -> dict[str, object]:
    """``attrs`` as the canonical writer emits them and the one reader parses them."""
    return parse_attrs(attr_list({"label": "<<B>x</B>>", **attrs}))


@settings(max_examples=300, deadline=None)
@given(items=st.lists(ODD, max_size=6))
def test_a_list_round_trips(items: list[str]) -> None:
    assert decode_list(encode_list(items)) == tuple(items)
    if items:  # written, quoted and parsed back
        text = _through_dot({"tl_members": encode_list(items)})["tl_members"]
        assert decode_list(str(text)) == tuple(items)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["op", "box", "fold", "segment", "input", "output"]),
    address=ODD,
    texts=st.tuples(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT),
    numbers=st.tuples(NUMBER, NUMBER),
    members=st.none() | st.lists(ODD, min_size=1, max_size=5).map(tuple),
)
def test_a_node_record_round_trips_through_dot(
    kind: str,
    address: str,
    texts: tuple[str | None, ...],
    numbers: tuple[int | None, int | None],
    members: tuple[str, ...] | None,
) -> None:
    op, type_name, first, last, call, inside, signature = texts
    record = NodeRecord(
        id="n", kind=kind, address=address, op=op, type=type_name, call_number=numbers[0],
        first=first, last=last, count=numbers[1], members=members, call=call, inside=inside,
        signature=signature,
    )  # fmt: skip
    assert read_node("n", _through_dot(node_attrs(record))) == record


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["module", "fold"]),
    address=ODD,
    texts=st.tuples(TEXT, TEXT, TEXT, TEXT),
    numbers=st.tuples(NUMBER, NUMBER),
)
def test_a_cluster_record_round_trips_through_dot(
    kind: str,
    address: str,
    texts: tuple[str | None, ...],
    numbers: tuple[int | None, int | None],
) -> None:
    type_name, first, last, signature = texts
    record = ClusterRecord(
        id="c", kind=kind, address=address, type=type_name, call_number=numbers[0],
        first=first, last=last, count=numbers[1], signature=signature,
    )  # fmt: skip
    assert read_cluster("c", _through_dot(cluster_attrs(record))) == record


def test_empty_values_are_left_out_of_the_dot() -> None:
    written = attr_list({"label": "<x>", **node_attrs(NodeRecord(id="input_1", kind="input"))})
    assert written == '[label=<x>, tl_kind="input"]'


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"tl_kind": "blob"}, r"node 'n': tl_kind='blob' is not one of op, .*--snapshot-update"),
        ({"tl_kind": "box", "tl_count": "four"}, r"tl_count='four' is not a whole number"),
        ({"tl_kind": "box", "tl_calln": "-1"}, r"tl_calln='-1' is not a whole number"),
        ({"tl_kind": "op", "tl_count": "\u0663"}, r"is not a whole number"),
    ],
)
def test_an_unreadable_value_is_refused_naming_node_and_remedy(
    attrs: dict[str, object], message: str
) -> None:
    with pytest.raises(SchemaError, match=message):
        read_node("n", attrs)


def test_a_node_written_before_the_schema_reads_as_an_op_named_by_nothing_else() -> None:
    assert read_node("conv2d_1", {"label": "<<B>conv2d_1</B>>"}) == NodeRecord(
        id="conv2d_1", kind="op"
    )
    assert read_cluster("cluster_a#1", {}) == ClusterRecord(id="cluster_a#1", kind="module")


def test_a_node_spec_fn_cannot_write_over_the_drawings_identity() -> None:
    import torch

    from pytest_tlgraph import capture
    from pytest_tlgraph.diff.graph import read_records
    from tests.models import MLP, seeded

    trace = capture(seeded(MLP()), torch.zeros(2, 8))

    def forge(node: object, spec: dict[str, object]) -> dict[str, object]:
        return {**spec, "tl_kind": "box", "tl_addr": "elsewhere", "comment": "forged"}

    assert read_records(trace.draw(node_spec_fn=forge).dot) == read_records(trace.draw().dot)
