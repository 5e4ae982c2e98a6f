"""A draw whose specs nobody edits takes the short path: it must write the same bytes."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.trace import Trace
from tests.models import CNN, HostileCluster, HostileNames, RecurrentCell, ResidualMLP, seeded


def _keep(node: object, spec: dict[str, Any]) -> None:
    """A node_spec_fn that edits nothing: it only routes the draw through the specs."""
    return None


def _traces() -> dict[str, Trace]:
    return {
        "cnn": capture(seeded(CNN()), torch.randn(2, 3, 8, 8)),
        "recurrent": capture(seeded(RecurrentCell()), torch.randn(2, 8)),
        "residual": capture(seeded(ResidualMLP(blocks=3)), torch.randn(2, 32)),
        "hostile names": capture(seeded(HostileNames()), torch.randn(2, 4)),
        "hostile cluster": capture(seeded(HostileCluster()), torch.randn(2, 4)),
    }


_TRACES = _traces()
_OPTIONS: list[dict[str, Any]] = [
    {},
    {"view": "rolled"},
    {"collapse": "auto"},
    {"depth": 1, "page": "dark"},
    {"layout": "dot", "direction": "leftright"},
    {"node_label_fields": ["name", "op", "args", "module"], "show_saved_for_backward": True},
]


@pytest.mark.parametrize("options", _OPTIONS, ids=repr)
@pytest.mark.parametrize("name", sorted(_TRACES))
def test_the_short_path_writes_what_the_spec_path_writes(
    name: str, options: dict[str, Any]
) -> None:
    trace = _TRACES[name]
    short = trace.draw(**options)
    through_specs = trace.draw(node_spec_fn=_keep, **options)
    assert short.dot == through_specs.dot
    assert dict(short.nodes) == dict(through_specs.nodes)
    assert type(short.nodes) is type(through_specs.nodes) is MappingProxyType
    assert short.edges == through_specs.edges and short.clusters == through_specs.clusters


def test_an_edit_reaches_the_dot_only_through_the_spec_path() -> None:
    trace = _TRACES["cnn"]

    def recolour(node: object, spec: dict[str, Any]) -> dict[str, Any]:
        return {**spec, "fillcolor": "#123456"}

    assert "#123456" not in trace.draw().dot
    assert trace.draw(node_spec_fn=recolour).dot.count('fillcolor="#123456"') == len(trace.ops)


@pytest.mark.parametrize("name", sorted(_TRACES))
def test_drawing_nodes_read_like_a_mapping_proxy_of_a_dict_on_both_paths(name: str) -> None:
    trace = _TRACES[name]
    short, through_specs = trace.draw(), trace.draw(node_spec_fn=_keep)
    for nodes in (short.nodes, through_specs.nodes):
        expected = dict(through_specs.nodes)
        assert nodes.copy() == expected and type(nodes.copy()) is dict
        assert nodes | {"extra": None} == {**expected, "extra": None}
        assert {"extra": None} | nodes == {"extra": None, **expected}
        assert list(reversed(nodes)) == list(reversed(list(expected)))
        assert repr(nodes) == f"mappingproxy({expected!r})"
        assert nodes == expected and len(nodes) == len(expected)
