"""Values a model keeps in tensors count; a drawing depends on the model and inputs only
(issue 39: constants, cold and warm captures, reads, numbers by value, quantized schemes,
FLOPs of alias spellings)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.trace import Trace


def _dot(model: nn.Module, *inputs: Any, **options: Any) -> str:
    return capture(model, inputs, **options).draw().dot


def _consts(trace: Trace) -> dict[str, dict[str, str]]:
    """Each ``const`` record's written arguments, by label."""
    return {op.label: {a.name: a.text for a in op.call} for op in trace.ops if op.func == "const"}


class Rotary(nn.Module):
    """A rotary table from a non-persistent ``inv_freq`` and a persistent ``scale``."""

    def __init__(self, theta: float = 10000.0, persistent_scale: float = 1.0) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        freq = 1.0 / (theta ** (torch.arange(0, 8, 2).float() / 8))
        self.register_buffer("inv_freq", freq, persistent=False)
        self.register_buffer("scale", torch.full((8,), persistent_scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[1]).float()
        angles = torch.outer(positions, self.inv_freq).repeat(1, 2)
        return self.proj(x) * angles.cos() * self.scale


def test_a_non_persistent_buffer_is_drawn_by_value_and_a_change_to_it_fails() -> None:
    torch.manual_seed(0)
    base = Rotary()
    trace = capture(base, (torch.randn(1, 4, 8),))
    # The whole rotary table is computed from the buffer and literals: one constant.
    (const,) = _consts(trace).values()
    assert const["values"].startswith("#") and "buffer" not in const
    assert not any(op.func in ("arange", "outer", "cos") for op in trace.ops)
    torch.manual_seed(0)
    assert _dot(Rotary(theta=500000.0), torch.randn(1, 4, 8)) != trace.draw().dot


def test_learned_values_and_persistent_buffers_keep_their_shape_only_rows() -> None:
    x = torch.randn(1, 4, 8)
    torch.manual_seed(0)
    first = _dot(Rotary(persistent_scale=1.0), x)
    torch.manual_seed(1)  # a retrain: other weights, another running statistic
    assert _dot(Rotary(persistent_scale=2.0), x) == first
    torch.manual_seed(0)
    # Opted in by name, the persistent buffer counts by value too.
    opted = _dot(Rotary(persistent_scale=1.0), x, value_buffers=("*scale",))
    torch.manual_seed(0)
    changed = _dot(Rotary(persistent_scale=2.0), x, value_buffers="scale")
    assert opted != changed and "buffer=scale, values=[1, 1, 1" in opted


def test_a_named_buffer_read_as_is_is_drawn_with_its_name_and_values() -> None:
    class Positions(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(16, 4)
            self.register_buffer("position_ids", torch.arange(4)[None], persistent=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.embed(self.position_ids)

    trace = capture(Positions(), (torch.randn(1, 4, 4),))
    assert list(_consts(trace).values()) == [{"buffer": "position_ids", "values": "[0, 1, 2, 3]"}]
    model = Positions()
    model.position_ids += 1  # an off-by-one position table
    assert capture(model, (torch.randn(1, 4, 4),)).draw().dot != trace.draw().dot


class Scheduler:
    """A DDPM noise schedule on a plain object, outside any module."""

    def __init__(self, beta_end: float) -> None:
        self.betas = torch.linspace(1e-4, beta_end, 50)
        self.alphas_cumprod = torch.cumprod(1 - self.betas, dim=0)


class Denoise(nn.Module):
    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__()
        self.net = nn.Linear(4, 4)
        self.scheduler = scheduler

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        a = self.scheduler.alphas_cumprod[t].sqrt()[:, None]
        for step in (3, 2):
            x = x - self.scheduler.betas[step] * self.net(x)
        return x * a


def test_a_schedule_held_outside_the_model_counts_by_value() -> None:
    x, t = torch.randn(2, 4), torch.tensor([5, 7])
    torch.manual_seed(0)
    base = capture(Denoise(Scheduler(0.02)), (x, t))
    torch.manual_seed(0)
    changed = capture(Denoise(Scheduler(0.04)), (x, t))
    assert base.draw().dot != changed.draw().dot
    # The table indexed by an input is one constant feeding the gather; the betas read
    # at fixed steps are scalars written by value.
    texts = sorted(c["values"] for c in _consts(base).values())
    assert texts[0].startswith("#") and texts[1:] == ["0.0009122449", "0.0013183673"]
    torch.manual_seed(5)  # a retrain only
    assert capture(Denoise(Scheduler(0.02)), (x, t)).draw().dot == base.draw().dot


@functools.lru_cache(maxsize=4)
def _relative_index(size: int) -> torch.Tensor:
    grid = torch.stack(torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij"))
    flat = grid.flatten(1)
    return (flat[:, :, None] - flat[:, None, :]).sum(0) + size - 1


class CachedBias(nn.Module):
    """A relative position bias whose index comes from a cache shared by every instance
    (BEiT's ``generate_relative_position_index``)."""

    def __init__(self) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(7, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        index = _relative_index(2).view(-1)
        return x + self.table[index].view(4, 4, 2).sum(-1)


def test_a_table_computed_in_the_forward_and_one_taken_from_a_cache_draw_the_same() -> None:
    _relative_index.cache_clear()
    x = torch.randn(4, 4)
    cold = capture(CachedBias(), (x,))
    warm = capture(CachedBias(), (x,))
    assert cold.draw().dot == warm.draw().dot
    assert cold.draw(collapse="auto").dot == warm.draw(collapse="auto").dot
    assert [op.func for op in cold.ops] == [op.func for op in warm.ops]


def test_random_and_uninitialised_tensors_are_never_folded() -> None:
    class Noisy(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            noise = torch.randn(2, 3)
            buffer = torch.empty(2, 3)
            return x + noise + buffer.fill_(1.0)

    funcs = [op.func for op in capture(Noisy(), (torch.randn(2, 3),)).ops]
    assert "randn" in funcs and "empty" in funcs and "fill_" in funcs


class Scaled(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.scale.item()
        return x * s + x.mean().item() + float(x.amax())


def test_a_number_read_out_of_a_tensor_is_drawn_as_that_read() -> None:
    x = torch.randn(2, 3)
    trace = capture(Scaled(0.0123), (x,))
    mul = next(op for op in trace.ops if op.func == "mul")
    assert [(a.name, a.text) for a in mul.call] == [
        ("self", "in1"),
        ("other", "param scale.item()"),
    ]
    adds = [op for op in trace.ops if op.func == "add"]
    # The reads are wired: the mean and the amax feed the adds that use their values.
    assert {trace.op(p).func for op in adds for p in op.parents} >= {"mean", "amax"}
    assert any("in2.item()" in a.text for op in adds for a in op.call)
    # A retrained scale, other inputs: the same drawing.
    assert capture(Scaled(0.5), (torch.randn(2, 3),)).draw().dot == trace.draw().dot


def test_a_scalar_is_written_by_its_value() -> None:
    x = torch.randn(2, 3)
    dots = {v: _dot(_offset(v), x) for v in (True, 1, 1.0)}
    assert len(set(dots.values())) == 1
    assert "· + 1" in dots[1.0]
    assert _dot(_offset(2.0), x) != dots[1]


def _offset(value: Any) -> nn.Module:
    class Offset(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (x + value) * value

    return Offset()


def test_an_integer_tensor_promoted_by_a_float_still_draws_differently() -> None:
    class Count(nn.Module):
        def __init__(self, value: Any) -> None:
            super().__init__()
            self.value = value

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.value

    ints = torch.arange(6).view(2, 3) + torch.zeros(2, 3, dtype=torch.long)
    assert _dot(Count(1), ints) != _dot(Count(1.0), ints)


def _quantized(qconfig: Any) -> nn.Module:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).eval()
    return torch.ao.quantization.quantize_dynamic(model, {nn.Linear: qconfig})


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_quantized_linear_records_its_scheme() -> None:
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig

    x = torch.randn(2, 8)
    per_tensor = capture(_quantized(default_dynamic_qconfig), (x,))
    per_channel = capture(_quantized(per_channel_dynamic_qconfig), (x,))
    assert per_tensor.draw().dot != per_channel.draw().dot
    linear = next(op for op in per_channel.ops if op.func == "linear_dynamic")
    text = " ".join(a.text for a in linear.call)
    assert "qscheme: per_channel_affine" in text and "axis: 0" in text and "qint8" in text


@pytest.mark.parametrize(
    ("alias", "name"),
    [(torch.multiply, torch.mul), (torch.greater, torch.gt), (torch.subtract, torch.sub),
     (torch.true_divide, torch.div)],
)  # fmt: skip
def test_alias_spellings_count_flops_like_their_names(alias: Any, name: Any) -> None:
    class Call(nn.Module):
        def __init__(self, fn: Any) -> None:
            super().__init__()
            self.fn = fn

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fn(x, x)

    x = torch.randn(3, 5)
    spelled = capture(Call(alias), (x,)).ops[1]
    canonical = capture(Call(name), (x,)).ops[1]
    assert spelled.flops_forward == canonical.flops_forward == 15


@pytest.mark.parametrize(
    ("alias", "name"), [(torch.absolute, torch.abs), (torch.negative, torch.neg)]
)
def test_unary_alias_spellings_count_flops_like_their_names(alias: Any, name: Any) -> None:
    class Call(nn.Module):
        def __init__(self, fn: Any) -> None:
            super().__init__()
            self.fn = fn

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fn(x)

    x = torch.randn(3, 5)
    assert capture(Call(alias), (x,)).ops[1].flops_forward == 15
    assert capture(Call(name), (x,)).ops[1].flops_forward == 15


def test_a_bad_value_buffers_argument_is_refused_naming_the_remedy() -> None:
    with pytest.raises(TypeError, match="value_buffers takes buffer name patterns"):
        capture(Rotary(), (torch.randn(1, 4, 8),), value_buffers=(3,))  # type: ignore[arg-type]
