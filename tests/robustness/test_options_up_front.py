"""Items 12 and 14 of "nothing lost": draw options refused before anything runs, and
the fixture leaves a model exactly as it found it."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.capture import capture as capture_fn
from pytest_tlgraph.errors import EncodingRefusal
from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def trace() -> Any:
    return capture(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), torch.zeros(1, 3))


@pytest.mark.parametrize(
    ("options", "error", "names"),
    [
        ({"node_spec_fn": 123}, TypeError, ["node_spec_fn=123", "callable"]),
        ({"show_legend": "no"}, TypeError, ["show_legend='no'", "True or False"]),
        ({"show_redundant_args": 1}, TypeError, ["show_redundant_args=1", "True or False"]),
        ({"size_scale": 2}, TypeError, ["size_scale=2", "'sqrt' or 'linear'"]),
        ({"color_by": "speed"}, EncodingRefusal, ["color_by='speed'", "flops"]),
        ({"size_scale": "log", "size_by": "bytes"}, EncodingRefusal, ["'log'", "'linear'"]),
    ],
)
def test_bad_options_are_refused_before_any_capture(
    options: dict[str, Any], error: type[Exception], names: list[str]
) -> None:
    from pytest_tlgraph.draw.request import DrawRequest

    with pytest.raises(error) as info:
        DrawRequest.parse(options)
    for name in names:
        assert name in str(info.value)


def test_draw_refuses_the_same_options(trace: Any) -> None:
    with pytest.raises(TypeError, match="show_legend='no'"):
        trace.draw(show_legend="no")
    with pytest.raises(TypeError, match="node_spec_fn=123"):
        trace.draw(node_spec_fn=123)


def test_a_spec_function_returning_a_non_spec_is_named(trace: Any) -> None:
    with pytest.raises(TypeError, match=r"node_spec_fn returned 5 for node .*spec dict"):
        trace.draw(node_spec_fn=lambda node, spec: 5)


def test_a_value_too_large_for_a_float_is_refused_clearly(trace: Any) -> None:
    with pytest.raises(EncodingRefusal, match="too large for a float") as info:
        trace.draw(color_by=lambda node: 10**400)
    assert info.value.code == "encoding_value_invalid"


def test_an_absurd_dpi_is_refused_before_the_renderer_runs(trace: Any) -> None:
    with pytest.raises(ValueError, match="from 1 to 600"):
        trace.draw().png(dpi=100_000)


def test_the_fixture_checks_options_before_running_the_model(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_RAISE", "1")  # the model's forward raises if it is ever run
    project.makepyfile(
        test_graph="from tinymodels import MLP\n\n"
        "def test_mlp(tlgraph_snapshot):\n"
        "    tlgraph_snapshot(MLP(), show_legend='no')\n"
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TypeError: draw(show_legend='no') is not accepted*"])
    assert "the model is broken" not in result.stdout.str()


FREEZING = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Freezing(nn.Module):
        '''train(False) also freezes the parameters; train(True) does not undo it.'''

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.norm = nn.BatchNorm1d(2)
            self.calls = []
            self.example_input_array = torch.randn(4, 3)

        def train(self, mode=True):
            self.calls.append(mode)
            if not mode:
                for p in self.parameters():
                    p.requires_grad_(False)
            return super().train(mode)

        def forward(self, x):
            return self.norm(self.fc(x))


    def test_freezing(tlgraph_snapshot):
        model = Freezing()
        mean = model.norm.running_mean.clone()
        rng = torch.random.get_rng_state()
        tlgraph_snapshot(model)
        assert model.calls == [], "the fixture called the model's own train()/eval()"
        assert all(p.requires_grad for p in model.parameters())
        assert model.training and model.norm.training
        assert torch.equal(model.norm.running_mean, mean)
        assert torch.equal(torch.random.get_rng_state(), rng)
    """
)


def test_the_fixture_sets_training_flags_itself(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=FREEZING)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert sorted(p.suffix for p in snapshot_dir(project).iterdir()) == [".gv", ".png"]


def test_capture_in_train_mode_runs_the_forward_exactly_once_as_documented() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Dropout(0.5)).train()
    plain = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Dropout(0.5)).train()
    plain.load_state_dict(model.state_dict())
    x = torch.randn(4, 3)
    torch.manual_seed(1)
    capture(model, x)
    after_capture = torch.random.get_rng_state()
    torch.manual_seed(1)
    plain(x)
    # The same BatchNorm update and the same RNG draws as one plain training call.
    assert torch.equal(model[1].running_mean, plain[1].running_mean)
    assert int(model[1].num_batches_tracked) == 1
    assert torch.equal(after_capture, torch.random.get_rng_state())
    doc = capture_fn.__doc__ or ""
    assert "BatchNorm" in doc and "RNG" in doc
