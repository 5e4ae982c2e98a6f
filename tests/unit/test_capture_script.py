"""TorchScript is refused in one line, and no drawing depends on what ran before it in
the process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

from pytest_tlgraph import TraceError, capture

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).relu()


class _Holder(nn.Module):
    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.body = nn.Sequential(inner)
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def _refusal(model: nn.Module) -> str:
    before = {k: v.clone() for k, v in model.state_dict().items()}
    forwards = [vars(m).get("forward") for m in model.modules()]
    with pytest.raises(TraceError) as info:
        capture(model, torch.randn(2, 4))
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert [vars(m).get("forward") for m in model.modules()] == forwards
    message = str(info.value)
    assert "\n" not in message
    assert "capture the eager module" in message and "Fix the model" not in message
    return message


def test_a_scripted_model_is_refused_naming_the_eager_module() -> None:
    message = _refusal(torch.jit.script(_Block()))
    assert "TorchScript module (_Block from torch.jit.script)" in message


def test_a_traced_model_is_refused_naming_the_eager_module() -> None:
    message = _refusal(torch.jit.trace(_Block(), torch.randn(2, 4)))
    assert "torch.jit.trace" in message


def test_a_model_holding_a_scripted_submodule_is_refused_naming_its_address() -> None:
    message = _refusal(_Holder(torch.jit.script(_Block())))
    assert message.startswith("submodule 'body.0' is a TorchScript module")


_HISTORY = textwrap.dedent(
    """
    import sys, warnings
    sys.path.insert(0, ".")
    warnings.simplefilter("ignore")
    import torch
    from torch import nn
    from pytest_tlgraph import capture
    from tests.corpus import build

    @torch.jit.script
    def fused(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * x + 1

    class Scripted(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return fused(self.lin(x)).relu() + x.int().float()

    def dot(model, inputs, kwargs=None):
        return capture(model, inputs, kwargs=kwargs or {}).draw().dot

    def scripted():
        torch.manual_seed(0)
        return dot(Scripted(), (torch.randn(2, 4, requires_grad=True),))

    def corpus(name):
        case = build(name)
        return dot(case.model, case.inputs, case.kwargs)

    first = [scripted(), corpus("roberta"), corpus("lstm_cell_loop")]
    for _ in range(3):  # TorchScript optimises a function after its first runs
        fused(torch.randn(2, 4, requires_grad=True)).sum().backward()
        corpus("gpt2"), corpus("dict_output")
    again = [scripted(), corpus("roberta"), corpus("lstm_cell_loop")]
    print("same" if first == again else "differ")
    print("detach" in first[0] or "detach" in again[0])
    """
)


def test_a_drawing_is_the_same_first_in_a_process_and_after_other_captures(
    tmp_path: Path,
) -> None:
    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "history.py"  # TorchScript reads the function's source file
    script.write_text(_HISTORY, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["same", "False"]
