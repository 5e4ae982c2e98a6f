"""``tlgraph draw`` captures as the ``tlgraph_snapshot`` fixture does
(:func:`~pytest_tlgraph.capture.eval_capture.capture_in_eval_mode`): eval mode through
the ``training`` flags, never the model's own ``eval()``, with the flags and the random
state restored."""

from __future__ import annotations

import textwrap
from pathlib import Path

import torch
from torch import nn

from pytest_tlgraph.capture.eval_capture import capture_in_eval_mode
from tests.integration.test_cli import tlgraph

SWITCHES = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Switches(nn.Module):
        '''A model whose train()/eval() override does more than set the flags.'''

        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)
            self.use_b = False
            self.example_input_array = torch.ones(1, 4)

        def train(self, mode=True):
            self.use_b = not mode
            return super().train(mode)

        def forward(self, x):
            return torch.nn.functional.dropout(self.b(x) if self.use_b else self.a(x), 0.5,
                                               self.training)
    """
)


class _Switches(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.use_b = False

    def train(self, mode: bool = True) -> _Switches:
        self.use_b = not mode
        return super().train(mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.dropout(self.b(x) if self.use_b else self.a(x), 0.5, self.training)


def test_the_cli_draws_what_the_fixture_captures(tmp_path: Path) -> None:
    (tmp_path / "switches.py").write_text(SWITCHES, encoding="utf-8")
    done = tlgraph("draw", "switches:Switches", "-o", "s.gv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    dot = (tmp_path / "s.gv").read_text(encoding="utf-8")
    model = _Switches()
    expected = capture_in_eval_mode(model, torch.ones(1, 4)).draw().dot
    # The override never ran: the drawing shows ``a``, as the fixture's does.
    assert dot == expected.replace("_Switches", "Switches")
    assert "@a>" in dot and "@b>" not in dot
    assert "training=False" in dot  # captured in eval mode all the same


def test_capture_in_eval_mode_restores_flags_and_rng_without_calling_train() -> None:
    model = _Switches().train()
    model.b.training = False  # a mixed state is restored as it was
    state = torch.get_rng_state()
    trace = capture_in_eval_mode(model, torch.ones(1, 4))
    assert not model.use_b  # train()/eval() were never called
    assert [m.training for m in model.modules()] == [True, True, False]
    assert torch.equal(torch.get_rng_state(), state)
    assert [op.func for op in trace.ops if op.has_function] == ["linear", "dropout"]
