"""Plain draws (ENCODING.md §2, §2.1): views, directions, pages, clusters, caption, rows,
the ``Drawing`` data, option checking and escaping of every user string."""

from __future__ import annotations

import io
import os
import re
import shutil
from itertools import pairwise

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from torch import nn

from pytest_tlgraph import Drawing, Trace, capture
from tests.models import CNN, MLP, HostileCluster, HostileNames, RecurrentCell, seeded


@pytest.fixture(scope="module")
def cnn() -> Trace:
    torch.manual_seed(0)
    return capture(seeded(CNN()).eval(), torch.randn(2, 3, 8, 8))


@pytest.fixture(scope="module")
def loop() -> Trace:
    torch.manual_seed(0)
    return capture(seeded(RecurrentCell(steps=3)), torch.randn(2, 8))


def _graph_attr(drawing: Drawing, name: str) -> str:
    graph_line = drawing.dot.splitlines()[1]
    found = re.search(rf'\b{name}="([^"]*)"', graph_line)
    assert found, graph_line
    return found.group(1)


# -- the drawn graph as data -----------------------------------------------------------
def test_unrolled_nodes_are_the_ops_with_their_kind_members_and_module(cnn: Trace) -> None:
    drawing = cnn.draw()
    assert list(drawing.nodes) == [op.label for op in cnn.ops]
    assert [n.kind for n in drawing.nodes.values()] == ["input"] + ["op"] * 10 + ["output"]
    conv = drawing.nodes["conv2d_1"]
    assert conv.members == ("conv2d_1",) and conv.module == "features.0"
    assert drawing.nodes["flatten_1"].module == ""
    assert drawing.nodes["input_1"].module is None and drawing.nodes["output_1"].module is None
    assert drawing.state is None
    assert isinstance(drawing.dot, str) and drawing.dot.endswith("}\n")


def test_edges_are_the_op_edges_in_emission_order(cnn: Trace) -> None:
    drawing = cnn.draw()
    expected = tuple((parent, op.label) for op in cnn.ops for parent in op.parents)
    assert drawing.edges == expected
    emitted = re.findall(r'^  "([^"]+)" -> "([^"]+)";$', drawing.dot, flags=re.M)
    assert tuple(emitted) == drawing.edges


def test_rolled_nodes_are_layers_titled_with_their_pass_count(loop: Trace) -> None:
    drawing = loop.draw(view="rolled")
    assert list(drawing.nodes) == list(loop.layers)
    linear = drawing.nodes["linear_1"]
    assert linear.kind == "layer"
    assert linear.rows[0] == "linear_1 (x3)"
    assert linear.members == ("linear_1:1", "linear_1:2", "linear_1:3")
    assert drawing.nodes["input_1"].rows[0] == "x"  # named by its argument, one pass: no count
    assert ("tanh_1", "linear_1") in drawing.edges  # the loop's back edge
    assert "<B>linear_1 (x3)</B>" in drawing.dot


def test_unrolled_multi_pass_nodes_are_titled_with_their_label(loop: Trace) -> None:
    drawing = loop.draw()
    assert drawing.nodes["linear_1:2"].rows[0] == "linear_1:2"
    assert '"linear_1:2" [label=<<B>linear_1:2</B>' in drawing.dot


def test_default_rows_are_title_shape_and_bytes_args_params_and_module(cnn: Trace) -> None:
    rows = cnn.draw().nodes
    assert rows["linear_1"].rows == (
        "linear_1", "2x10, 80 B", "params: weight 10x16, bias 10", "@head",
    )  # fmt: skip
    # Inside the @features cluster the row is relative to it.
    assert rows["relu_1"].rows == ("relu_1", "2x8x8x8, 4 KB", "@2")
    assert rows["input_1"].rows == ("x", "2x3x8x8, 1.5 KB")  # its forward argument
    # Root module: no module row; flatten's own argument on its args row.
    assert rows["flatten_1"].rows == ("flatten_1", "2x16, 128 B", "start_dim=1")
    assert "<B>linear_1</B><BR/>2x10, 80 B<BR/>" in cnn.draw().dot


# -- graph attributes --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("direction", "rankdir"), [("bottomup", "BT"), ("topdown", "TB"), ("leftright", "LR")]
)
def test_direction_sets_rankdir(cnn: Trace, direction: str, rankdir: str) -> None:
    assert _graph_attr(cnn.draw(direction=direction), "rankdir") == rankdir


def test_default_direction_is_bottom_up(cnn: Trace) -> None:
    assert cnn.draw().dot == cnn.draw(direction="bottomup").dot


def test_light_and_dark_pages_change_colours_only(cnn: Trace) -> None:
    light, dark = cnn.draw(), cnn.draw(page="dark")
    assert _graph_attr(light, "bgcolor") == "#FFFFFF"
    assert _graph_attr(dark, "bgcolor") == "#1E1F22"
    assert light.nodes == dark.nodes and light.edges == dark.edges
    colourless = re.compile(r'(bgcolor|fillcolor|fontcolor|color)="#[0-9A-F]{6}"')
    assert colourless.sub("", light.dot) == colourless.sub("", dark.dot)
    assert light.dot != dark.dot


def test_the_caption_names_model_op_count_bytes_and_params(cnn: Trace) -> None:
    assert (
        cnn.draw()
        .dot.splitlines()[1]
        .startswith("  graph [label=<CNN · 10 ops · 19.3 KB · 1,610 params>")
    )
    shapes = [op.shape for op in cnn.ops if op.has_function and op.shape is not None]
    total = sum(op.activation_memory or 0 for op in cnn.ops if op.has_function)
    assert total == 4 * sum(int(torch.Size(s).numel()) for s in shapes)
    assert round(total / 1024, 1) == 19.3  # the caption's figure


@pytest.mark.parametrize("page", ["light", "dark"])
@pytest.mark.parametrize("direction", ["bottomup", "topdown", "leftright"])
def test_the_graph_line_is_the_pages_graph_attributes_with_the_caption(
    page: str, direction: str
) -> None:
    from pytest_tlgraph.draw.dot import attr_list, html_label
    from pytest_tlgraph.draw.style import graph_attrs
    from pytest_tlgraph.schema import SCHEMA_VERSION

    model = nn.Sequential(nn.Linear(2, 2))
    model.__class__ = type('Seq<&>"\\ \u00e9', (nn.Sequential,), {})  # hostile model name
    trace = capture(model, torch.randn(1, 2))
    graph_line = trace.draw(page=page, direction=direction).dot.splitlines()[1]
    caption = html_label([f"{trace.model_name} · 1 ops · 8 B · 6 params"])
    assert "&lt;&amp;&gt;&quot;" in caption
    attrs = {**graph_attrs(page, direction, caption), "tl_schema": SCHEMA_VERSION}
    assert graph_line == f"  graph {attr_list(attrs)};"


# -- clusters ----------------------------------------------------------------------------
def test_modules_with_two_or_more_nodes_are_titled_clusters(cnn: Trace) -> None:
    drawing = cnn.draw()
    assert drawing.clusters == ("@features (Sequential)",)
    block = re.search(r'subgraph "cluster_features#1" \{\n(.*?)\n  \}', drawing.dot, re.S)
    assert block is not None
    members = re.findall(r'^    "([^"]+)";$', block.group(1), flags=re.M)
    assert members == [op.label for op in cnn.ops if op.module.startswith("features.")]
    assert "label=<@features (Sequential)>" in block.group(1)


def test_each_call_is_a_cluster_unrolled_and_one_per_module_rolled() -> None:
    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(self.block(x))

    trace = capture(Twice(), torch.randn(1, 4))
    unrolled, rolled = trace.draw(), trace.draw(view="rolled")
    assert unrolled.clusters == ("@block (Sequential)", "@block (Sequential)")
    assert 'subgraph "cluster_block#1"' in unrolled.dot
    assert 'subgraph "cluster_block#2"' in unrolled.dot
    assert rolled.clusters == ("@block (Sequential)",)
    assert 'subgraph "cluster_block"' in rolled.dot


def test_nested_clusters_are_written_inside_their_parent() -> None:
    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), nn.Tanh())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x)

    dot = capture(Outer(), torch.randn(1, 4)).draw().dot
    outer = dot.index('subgraph "cluster_body#1"')
    inner = dot.index('subgraph "cluster_body.0#1"')
    assert outer < inner < dot.rindex("  }\n}")
    assert dot[inner:].index("    }") < dot[inner:].index("  }")


# -- options -----------------------------------------------------------------------------
def test_unknown_options_raise_type_error_naming_them(cnn: Trace) -> None:
    with pytest.raises(TypeError, match=r"'colour_by'.*valid options are"):
        cnn.draw(colour_by="time")


def test_bad_option_values_are_refused_with_the_choices(cnn: Trace) -> None:
    with pytest.raises(ValueError, match="sideways"):
        cnn.draw(direction="sideways")


def test_every_channel_off_explicitly_is_byte_identical_to_a_plain_draw(cnn: Trace) -> None:
    plain = cnn.draw()
    off = cnn.draw(color_by=None, size_by=None, stack_by=None, size_scale=None)
    assert off.dot == plain.dot and off.state is None
    assert cnn.draw(stack_by=False).dot == plain.dot
    assert cnn.draw(color_by=False, size_by=False).dot == plain.dot  # type: ignore[arg-type]
    defaults = cnn.draw(
        view="unrolled", direction="bottomup", page="light", depth=None, collapse=None,
        show_legend=True, node_label_fields=None, show_saved_for_backward=False,
        show_redundant_args=False, node_spec_fn=None,
    )  # fmt: skip
    assert defaults.dot == plain.dot


# -- canonical bytes ---------------------------------------------------------------------
def test_drawing_twice_and_capturing_twice_give_the_same_bytes() -> None:
    model, x = seeded(CNN()).eval(), torch.randn(2, 3, 8, 8)
    first = capture(model, x)
    assert first.draw().dot == first.draw().dot
    assert capture(model, x).draw().dot == first.draw().dot
    assert capture(model, x).draw(view="rolled").dot == first.draw(view="rolled").dot


def test_plain_draws_carry_no_timing_address_path_or_version(cnn: Trace) -> None:
    dot = cnn.draw().dot + cnn.draw(view="rolled").dot
    assert re.search(r"0x[0-9a-fA-F]{4,}", dot) is None  # no id() or address
    assert os.path.dirname(__file__) not in dot and "site-packages" not in dot
    assert ".py" not in dot and torch.__version__ not in dot
    for op in cnn.ops:
        if op.func_duration:
            assert f"{op.func_duration * 1e3:.3g} ms" not in dot


@given(
    widths=st.lists(st.integers(1, 6), min_size=2, max_size=4),
    steps=st.integers(1, 3),
    view=st.sampled_from(["unrolled", "rolled"]),
)
@settings(max_examples=15, deadline=None)
def test_plain_draws_of_any_small_model_are_stable(
    widths: list[int], steps: int, view: str
) -> None:
    layers: list[nn.Module] = []
    for a, b in pairwise(widths):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = seeded(_Repeat(nn.Sequential(*layers), steps, widths[0] == widths[-1]))
    x = torch.randn(2, widths[0])
    first = capture(model, x).draw(view=view).dot
    assert capture(model, x).draw(view=view).dot == first


class _Repeat(nn.Module):
    def __init__(self, body: nn.Module, steps: int, loops: bool) -> None:
        super().__init__()
        self.body, self.steps = body, steps if loops else 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.steps):
            x = self.body(x)
        return x


# -- escaping ----------------------------------------------------------------------------
def test_hostile_module_names_are_escaped_in_rows_and_cluster_titles() -> None:
    drawing = capture(HostileCluster(), torch.randn(1, 4)).draw()
    name = 'blocks.q"<&>\\ \u00fc{}|;'
    # Inside the cluster that names the hostile address, the row is relative to it.
    assert drawing.nodes["linear_1"].rows[-1] == "@0"
    assert drawing.clusters == (f"@{name} (Sequential)",)
    assert "label=<@blocks.q&quot;&lt;&amp;&gt;\\ \u00fc{}|; (Sequential)>" in drawing.dot
    # The newline in a module name becomes a space in its row, never a raw line break.
    assert drawing.nodes["relu_1"].rows[-1] == "@blocks.line\nbreak\\"
    assert "@blocks.line break\\>" in drawing.dot


@pytest.mark.parametrize("renderer", ["pure", "system"])
@pytest.mark.parametrize("model", [HostileNames, HostileCluster])
def test_hostile_names_render_with_both_renderers(renderer: str, model: type[nn.Module]) -> None:
    if renderer == "system" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    png = capture(model(), torch.randn(1, 4)).draw().png(renderer=renderer)
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.width > 50 and image.height > 200  # five nodes stacked bottom-up


def test_node_spec_fn_sees_the_node_and_its_return_replaces_the_spec(cnn: Trace) -> None:
    seen: list[str] = []

    def paint(node: object, spec: dict[str, object]) -> dict[str, object] | None:
        seen.append(getattr(node, "kind", "?"))
        if getattr(node, "kind", None) == "input":
            return {**spec, "fillcolor": "#FF0000", "rows": ["in <put>"]}
        return None

    drawing = cnn.draw(node_spec_fn=paint)
    assert seen == ["input"] + ["op"] * 10 + ["output"]
    # The page's text reads at 4.35:1 on pure red: the node's text turns black.
    assert (
        '"input_1" [label=<<B>in &lt;put&gt;</B>>, fillcolor="#FF0000", fontcolor="#000000", '
        'tl_kind="input"];' in drawing.dot
    )
    assert drawing.nodes["input_1"].rows == ("in <put>",)
    plain = cnn.draw().dot.splitlines()
    assert [line for line in drawing.dot.splitlines() if 'input_1" [' not in line] == [
        line for line in plain if 'input_1" [' not in line
    ]


def test_a_model_with_no_ops_draws_inputs_and_outputs_only() -> None:
    class Identity(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    drawing = capture(Identity(), torch.randn(2)).draw()
    assert list(drawing.nodes) == ["input_1", "output_1"]
    assert drawing.edges == (("input_1", "output_1"),)
    assert "Identity · 0 ops · 0 B · 0 params" in drawing.dot


def test_mlp_draw_lists_params_but_never_draws_them() -> None:
    drawing = capture(MLP(), torch.randn(2, 8)).draw()
    assert not [n for n in drawing.nodes if "weight" in n or "bias" in n]
    assert drawing.nodes["linear_1"].rows[2] == "params: weight 16x8, bias 16"
