"""The projects ``bench_suite.py`` runs: each suite twice, with the plugin and with plain
shape asserts, written into a fresh directory without stored snapshots.

* ``zoo``: ``examples/models.py`` with ``examples/test_zoo.py`` (12 snapshot calls), and
  the same models asserted by output shape, one forward pass per snapshot call. The
  failing run's one-layer change: MnistMLP's first activation becomes a GELU.
* ``corpus``: ten real models of ``tests/corpus`` (tiny configs, random weights), one
  snapshot each, and the same ten forwards asserted by output shape. The failing run's
  one-layer change: GPT-2's final LayerNorm is left out (an ``nn.Identity``).

The plain suites assert what a user without the plugin would: the output shape, which
a one-layer change that keeps shapes does not alter, so their failing run passes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The corpus models of the corpus suite (``tests.corpus.build(name)``).
CORPUS_NAMES = (
    "bert", "gpt2", "t5", "llama", "mistral", "qwen2", "vit", "whisper", "mamba",
    "nn_transformer",
)  # fmt: skip

ZOO_BEFORE = "self.act1 = nn.ReLU()"
ZOO_AFTER = "self.act1 = nn.GELU()"
CORPUS_BEFORE = "CHANGED = False"
CORPUS_AFTER = "CHANGED = True"

ZOO_PLAIN = '''\
"""The example zoo's models with plain shape asserts, one per snapshot call."""

import torch

from examples.models import ConvNet, MnistMLP, RecurrentTagger, TinyTransformer


def test_mlp():
    model = MnistMLP()
    for _ in range(4):
        assert model(model.example_input_array).shape == (4, 10)


def test_convnet():
    model = ConvNet()
    for _ in range(2):
        assert model(model.example_input_array).shape == (2, 10)
    assert model(torch.zeros(1, 3, 64, 64)).shape == (1, 10)


def test_convnet_dark_page():
    model = ConvNet()
    assert model(model.example_input_array).shape == (2, 10)


def test_recurrent():
    model, sequence = RecurrentTagger(), torch.zeros(2, 4, 6)
    for _ in range(2):
        assert model(sequence).shape == (2, 4, 4)


def test_transformer():
    model = TinyTransformer()
    for _ in range(2):
        assert model(model.example_input_array).shape == (2, 8, 100)
'''

CORPUS_CASES = '''\
"""Ten corpus models, built fresh for each test (GPT-2 optionally changed)."""

from torch import nn

from tests.corpus import build

NAMES = {names!r}
#: The failing run's one-layer change: GPT-2 without its final LayerNorm.
CHANGED = False


def case_of(name):
    case = build(name)
    if CHANGED and name == "gpt2":
        case.model.transformer.ln_f = nn.Identity()
    return case
'''

CORPUS_PLUGIN = '''\
"""One graph snapshot per corpus model."""

import pytest

from examples.cases import NAMES, case_of


@pytest.mark.parametrize("name", NAMES)
def test_corpus(tlgraph_snapshot, name):
    case = case_of(name)
    tlgraph_snapshot(case.model, case.inputs, kwargs=case.kwargs)
'''

CORPUS_PLAIN = '''\
"""The same corpus models with plain output-shape asserts."""

import pytest
import torch

from examples.cases import NAMES, case_of

SHAPES = {shapes!r}


@pytest.mark.parametrize("name", NAMES)
def test_corpus(name):
    case = case_of(name)
    out = case.run()
    first = out if isinstance(out, torch.Tensor) else out[0]
    assert tuple(first.shape) == SHAPES[name]
'''


@dataclass(frozen=True)
class Suite:
    """A suite's two projects and the edit that makes its failing run."""

    name: str
    plugin: Path
    plain: Path
    changed_file: str  # relative to a project
    before: str
    after: str


def _project(path: Path) -> Path:
    (path / "examples").mkdir(parents=True)
    (path / "pytest.ini").write_text("[pytest]\ntestpaths = examples\n")
    return path


def make_zoo(base: Path) -> Suite:
    """The example zoo with the plugin (no snapshots yet) and its plain twin."""
    plugin, plain = _project(base / "zoo-plugin"), _project(base / "zoo-plain")
    for project in (plugin, plain):
        shutil.copy(ROOT / "examples" / "models.py", project / "examples" / "models.py")
    shutil.copy(ROOT / "examples" / "test_zoo.py", plugin / "examples" / "test_zoo.py")
    (plain / "examples" / "test_plain.py").write_text(ZOO_PLAIN)
    if ZOO_BEFORE not in (plugin / "examples" / "models.py").read_text():
        raise SystemExit(f"examples/models.py no longer has {ZOO_BEFORE!r}: update this script")
    return Suite("zoo", plugin, plain, "examples/models.py", ZOO_BEFORE, ZOO_AFTER)


def corpus_shapes() -> dict[str, tuple[int, ...]]:
    """Each corpus model's first output shape, for the plain suite's asserts."""
    import torch

    from tests.corpus import build

    shapes = {}
    for name in CORPUS_NAMES:
        case = build(name)
        with torch.no_grad():
            out = case.run()
        first = out if isinstance(out, torch.Tensor) else out[0]
        shapes[name] = tuple(first.shape)
    return shapes


def make_corpus(base: Path, shapes: Callable[[], dict[str, tuple[int, ...]]]) -> Suite:
    """The corpus suite with the plugin (no snapshots yet) and its plain twin."""
    plugin, plain = _project(base / "corpus-plugin"), _project(base / "corpus-plain")
    cases = CORPUS_CASES.format(names=CORPUS_NAMES)
    for project in (plugin, plain):
        (project / "examples" / "__init__.py").write_text("")
        (project / "examples" / "cases.py").write_text(cases)
    (plugin / "examples" / "test_corpus.py").write_text(CORPUS_PLUGIN)
    (plain / "examples" / "test_corpus_plain.py").write_text(CORPUS_PLAIN.format(shapes=shapes()))
    return Suite("corpus", plugin, plain, "examples/cases.py", CORPUS_BEFORE, CORPUS_AFTER)
