"""Drawing is plain data in, DOT out: nothing under ``draw/`` (its ``encoding/`` stage
too) imports torch, directly or through a package module, and a trace draws the same
DOT in a process where torch cannot be imported at all (the constructor defaults a
salient args row reads were recorded at capture)."""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_tlgraph import capture
from pytest_tlgraph.trace import Trace
from tests.corpus.registry import build
from tests.runtime_imports import reaches, runtime_imports

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_tlgraph"


def test_no_drawing_module_imports_torch() -> None:
    graph = runtime_imports(PACKAGE)
    drawing = [name for name in graph if name.startswith("pytest_tlgraph.draw")]
    assert len(drawing) > 30
    chains = {name: reaches(graph, name, "torch") for name in drawing}
    assert {name: chain for name, chain in chains.items() if chain} == {}


def test_the_check_sees_an_import_through_a_package_module(tmp_path: Path) -> None:
    # The rule must catch torch reached through another module, lazily inside a
    # function, and must not count an import only the type checker reads.
    package = tmp_path / "pkg"
    (package / "draw").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "draw" / "__init__.py").write_text("from pkg import helper\n")
    (package / "helper.py").write_text("def f():\n    import torch.nn\n")
    (package / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n"
    )
    graph = runtime_imports(package)
    assert reaches(graph, "pkg.draw", "torch") == ["pkg.draw", "pkg.helper", "torch.nn"]
    assert reaches(graph, "pkg.typed", "torch") is None


_DRAWN: tuple[str, ...] = (
    "ops", "layers", "modules", "model_name", "param_count", "io_names", "magnitudes",
    "values", "default_dtype",
)  # fmt: skip


def _fields(trace: Trace) -> dict[str, Any]:
    """The trace's fields a drawing reads, whole (dtypes are names: nothing of torch to
    take out), as plain data a process without torch can unpickle."""
    found = {name: getattr(trace, name) for name in _DRAWN}
    # Layers are built lazily, mappings held read-only: plain dicts here.
    layers = {k: replace(v, varying=dict(v.varying)) for k, v in trace.layers.items()}
    return found | {"layers": layers, "io_names": dict(trace.io_names)}


_CHILD = textwrap.dedent(
    """
    import importlib.abc, pickle, sys

    class NoTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError(f"torch is blocked: {name}")
            return None

    sys.meta_path.insert(0, NoTorch())
    from pytest_tlgraph.trace import Trace

    fields, options = pickle.loads(sys.stdin.buffer.read())
    dot = Trace(**fields).draw(**options).dot
    assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules)
    sys.stdout.write(dot)
    """
)


@pytest.mark.parametrize(
    ("case", "options"),
    [
        ("resnet18_basic", {}),
        ("resnet18_basic", {"collapse": "auto", "color_by": "flops"}),
        ("convnext_layernorm2d", {}),
        ("transformer_encoder_layer", {"view": "rolled"}),
    ],
)
def test_a_trace_draws_the_same_dot_where_torch_cannot_be_imported(
    case: str, options: dict[str, Any]
) -> None:
    built = build(case)
    fields = _fields(capture(built.model, built.inputs, kwargs=built.kwargs))
    expected = Trace(**fields).draw(**options).dot
    assert "=" in expected  # some args row is drawn, salient args and all
    # Defaults are hidden from the rows; the drawing records them (tl_defaults, and
    # every arg of a collapsed node's ops in tl_ops).
    drawn = re.sub(r' tl_(?:defaults|ops)="[^"]*",', "", expected)
    assert "dilation=(1, 1)" not in drawn and "eps=1e-05" not in drawn
    assert 'tl_defaults="' in expected
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=pickle.dumps((fields, options)),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == expected


def test_recorded_defaults_are_plain_data_that_survive_pickling() -> None:
    from torch import nn

    from pytest_tlgraph.capture.module_args import module_args
    from pytest_tlgraph.constructors import REQUIRED, Unreadable

    _, _, conv = module_args(nn.Conv2d(3, 4, 3))
    _, _, layer = module_args(nn.TransformerEncoderLayer(8, 2))
    assert conv is not None and layer is not None and conv.defaults is not None
    assert conv.defaults["in_channels"] is REQUIRED and conv.defaults["stride"] == 1
    assert layer.defaults is not None and layer.defaults["activation"] == "relu"  # by name
    copy = pickle.loads(pickle.dumps(conv))
    assert copy.defaults == conv.defaults and copy.defaults["in_channels"] is REQUIRED
    # Every call of one class shares one recorded object.
    _, _, other = module_args(nn.Conv2d(8, 8, 1))
    assert other is not None and other.defaults is conv.defaults
    assert not any(isinstance(v, Unreadable) for v in conv.defaults.values())
