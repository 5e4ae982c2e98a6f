"""Constructor args read from the signature of a module's torch.nn class (issue 21,
items 3 and 7): what each family records, how stored values read back, and which op
carries the row."""

from __future__ import annotations

import functools
import pickle
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.capture.module_args import module_args
from pytest_tlgraph.constructors import ModuleArgs
from pytest_tlgraph.trace import Trace


def _rows(trace: Trace, **options: Any) -> dict[str, str]:
    """Node id -> its args row (wrapped lines joined), for every node that has one."""
    rows = {
        node_id: " ".join(r for r in node.rows if "=" in r and not r.startswith(("params:", "@")))
        for node_id, node in trace.draw(**options).nodes.items()
    }
    return {node_id: row for node_id, row in rows.items() if row}


def test_args_follow_the_signature_of_the_torch_class() -> None:
    family, call_family, args = module_args(nn.Conv2d(3, 4, 3, padding_mode="reflect"))
    assert (family, call_family) == ("conv", "conv")
    assert isinstance(args, ModuleArgs) and args.torch_class == "Conv2d"
    assert list(args) == [
        "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
        "groups", "bias", "padding_mode",
    ]  # fmt: skip
    assert args["padding_mode"] == "reflect" and args["bias"] is True
    # A plain user module derives from no torch.nn class: no args to name.
    assert module_args(nn.Module()) == (None, None, None)


def test_module_args_pickle_and_compare_like_mappings() -> None:
    _, _, args = module_args(nn.Embedding(5, 2, max_norm=1.0))
    assert args is not None
    assert pickle.loads(pickle.dumps(args)) == args
    assert args == dict(args.items()) and args.torch_class == "Embedding"


def test_inplace_true_is_shown_like_any_arg_off_its_default() -> None:
    trace = capture(nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True)), torch.randn(2, 4))
    assert _rows(trace) == {"relu_1": "inplace=True"}


def test_flags_stored_as_parameters_read_back_as_flags() -> None:
    _, _, plain = module_args(nn.LayerNorm(4, bias=False))
    assert plain is not None and plain["bias"] is False
    # No learnable parameters, so no bias to read back at all.
    _, _, frozen = module_args(nn.LayerNorm(4, elementwise_affine=False))
    assert frozen is not None and "bias" not in frozen
    _, _, instance = module_args(nn.InstanceNorm2d(4))
    assert instance is not None and "bias" not in instance


def test_attention_args_torch_keeps_under_other_names() -> None:
    _, _, args = module_args(nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, kdim=8))
    assert args is not None
    assert (args["bias"], args["add_bias_kv"], args["kdim"], args["vdim"]) == (
        False, True, None, None,
    )  # fmt: skip
    _, _, other = module_args(nn.MultiheadAttention(8, 2, kdim=6, vdim=4))
    assert other is not None and (other["kdim"], other["vdim"]) == (6, 4)


def test_functions_and_objects_read_without_memory_addresses() -> None:
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=F.gelu)
    _, _, args = module_args(layer)
    assert args is not None and args["activation"] == "gelu"
    assert "dim_feedforward" not in args  # torch keeps it on linear1, not on the layer
    default = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    rows = _rows(capture(nn.Sequential(layer, default), torch.randn(3, 2, 8)), depth=0)
    assert rows["@0#1"] == "activation=gelu"
    assert "@1#1" not in rows  # relu is the default: hidden
    edited = nn.Softmax(dim=1)
    edited.dim = functools.partial(max, 1)  # type: ignore[assignment]
    _, _, written = module_args(edited)
    assert written is not None and written["dim"].startswith("functools.partial(")
    assert " at 0x" not in written["dim"]


class _GroupNorm1(nn.GroupNorm):
    """timm's ``GroupNorm1``: one group, its own forward."""

    def __init__(self, channels: int) -> None:
        super().__init__(1, channels, eps=1e-6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps).mul(1.0)


def test_a_subclass_with_its_own_forward_carries_the_row_on_the_op_its_class_names() -> None:
    trace = capture(nn.Sequential(_GroupNorm1(4)), torch.randn(1, 4, 3, 3))
    (holder,) = [op for op in trace.ops if op.module_args is not None]
    assert holder.func == "group_norm" and holder.module_type == "_GroupNorm1"
    # GroupNorm's defaults: eps=1e-06 differs, affine=True and bias=True do not.
    assert _rows(trace) == {"group_norm_1": "num_groups=1, num_channels=4, eps=1e-06"}
