"""Every argument of a torch call reaches the drawing: a one-layer mistake in any corpus
model changes its DOT (default options, ``collapse="auto"``, ``depth=1``).

Each mutation of :mod:`tests.corpus.mutations` (a flag flipped, a string mode switched,
a constant doubled, an ``eps`` changed, another dim, another index, a permuted pad,
another dtype, swapped operands, the layer run without grad) is made in one middle
module of each subject, and each of :mod:`tests.corpus.value_mutations` (a
non-persistent buffer's values, a tensor held outside the model, a constant read out
with ``.item()``) anywhere in it; each must change the DOT in every view, while the
controls, the model rebuilt from another seed, the capture run a second time and the
capture after the model's caches were cleared (cold), must not. The
table of every outcome is printed at the end of the run (and by
``python -m tests.corpus.mutations``).
"""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.edits import ConstantChanged
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import story_lines
from tests.corpus.mutations import (
    CONTROLS,
    MUTATIONS,
    SUBJECTS,
    SUMMARIES,
    VIEWS,
    MutationMode,
    counts,
    installed,
    study,
    table,
)


@pytest.mark.parametrize("name", SUBJECTS)
def test_the_controls_leave_the_dot_unchanged(name: str) -> None:
    subject = study(name)
    for control in CONTROLS:
        changed = [v for v in VIEWS if subject.controls[control][v] != subject.baseline[v]]
        assert not changed, f"{name}: the {control!r} control changed the DOT in {changed}"


@pytest.mark.parametrize("name", SUBJECTS)
def test_every_one_layer_mutation_changes_the_dot_in_every_view(name: str) -> None:
    """Each mutation that applies to the model (its middle module makes a matching
    call whose rewrite runs and changes the output) changes the DOT in every view; the
    kinds that do not apply are counted by the summary table, not skipped here."""
    subject = study(name)
    passed = []
    for mutation, outcome in subject.outcomes.items():
        if outcome.status != "applied":
            continue
        # The model computes something else (no_grad alone computes the same values).
        assert outcome.output_changed is not False, (name, mutation)
        unchanged = [view for view in VIEWS if not outcome.changed[view]]
        if unchanged:
            passed.append(f"{mutation} ({outcome.detail}): unchanged in {unchanged}")
    assert not passed, f"{name} @{subject.address}: " + "; ".join(passed)


#: Models whose mutated middle layer's story is checked line by line (decoders with
#: SDPA and RMSNorm, an encoder, a CNN, a U-Net and a GNN).
_STORIES = ("llama", "stablelm", "falcon", "electra", "convnext_v2", "unet",
            "gnn_message_passing")  # fmt: skip
_NAMES_A_CHANGE = re.compile(r" -> |now runs under |no longer runs under |inputs reordered ")


@pytest.mark.parametrize("name", _STORIES)
def test_the_story_of_each_mutation_names_the_node_its_address_and_the_argument(
    name: str,
) -> None:
    """In the default view each mutation reads as the changed op at its full address
    (inside the middle module) with the argument's old and new value, and nothing
    outside the middle module changed."""
    subject = study(name)
    checked = 0
    for mutation, outcome in subject.outcomes.items():
        if outcome.status != "applied" or MUTATIONS[mutation].value:
            continue  # a constant's values: checked by the test below
        lines = story_lines(compare(subject.baseline["default"], outcome.dots["default"]))
        assert lines, (name, mutation)
        for line in lines:
            if line.startswith(("edges added", "edges removed")):
                continue  # node ids only: a cast that now runs, or no longer does
            assert f"@{subject.address}" in line, (name, mutation, lines)
        assert any(_NAMES_A_CHANGE.search(line) for line in lines), (name, mutation, lines)
        checked += 1
    assert checked >= 3, name


@pytest.mark.parametrize("name", SUBJECTS)
def test_every_mutation_yields_a_typed_edit_at_the_mutated_module(name: str) -> None:
    """In the default view, each mutation that applies reads as at least one typed
    edit at the middle module's address or below it; a value mutation (a constant of
    the model rewritten, wherever the model keeps it) as a ``ConstantChanged``. (Under
    ``depth=1`` and ``collapse="auto"`` an operand order swapped inside a box is kept
    only in the box's digest, which records no input order: docs/decisions.md, "One
    model diff behind every view (0.5)".)"""
    subject = study(name)
    missed = []
    for mutation, outcome in subject.outcomes.items():
        if outcome.status != "applied":
            continue
        for view in ("default",):
            edits = compare(subject.baseline[view], outcome.dots[view]).edits
            if MUTATIONS[mutation].value:  # a constant of the model, wherever it is kept
                if not any(isinstance(e, ConstantChanged) for e in edits):
                    missed.append(f"{mutation} [{view}]: {[e.kind for e in edits][:3]}")
                continue
            where = [e.address for e in edits]
            if not any(a == subject.address or a.startswith(f"{subject.address}.")
                       for a in where):  # fmt: skip
                missed.append(f"{mutation} [{view}]: {where[:3]}")
    assert not missed, f"{name} @{subject.address}: " + "; ".join(missed)


#: Models with a constant of each value kind (a rotary base, a noise schedule read at
#: fixed steps and with ``.item()``).
_VALUE_SUBJECTS = ("gpt_neox_rotary", "ddpm_loop", "llama")


@pytest.mark.parametrize("name", _VALUE_SUBJECTS)
def test_a_changed_constant_reads_as_its_values_in_every_view(name: str) -> None:
    """A constant's values rewritten: the story's first line names the constant node
    (its buffer name, or ``constant``, with its shape) and its values old and new."""
    subject = study(name)
    checked = 0
    for mutation, outcome in subject.outcomes.items():
        if outcome.status != "applied" or not MUTATIONS[mutation].value:
            continue
        for view in VIEWS:
            lines = story_lines(compare(subject.baseline[view], outcome.dots[view]))
            assert lines, (name, mutation, view)
            title = r"\S+( @\S+)? \((buffer|attribute|constant)[^)]*\): values \S"
            assert re.match(title, lines[0]), (name, mutation, view, lines)
        checked += 1
    assert checked >= 1, name


def test_the_summary_table_covers_every_model_and_mutation() -> None:
    studies = [study(name) for name in SUBJECTS]
    text = table(studies)
    SUMMARIES.append(text)
    print(text)
    for view, tally in counts(studies).items():
        assert sum(tally.values()) == len(SUBJECTS) * len(MUTATIONS), view
    applied = {m for s in studies for m, o in s.outcomes.items() if o.status == "applied"}
    assert applied == set(MUTATIONS)


# -- the harness itself ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "mutation", "detail"),
    [
        ("llama", "flag", "scaled_dot_product_attention is_causal True -> False"),
        ("bert", "mode", "gelu approximate 'none' -> 'tanh'"),
        ("whisper", "scalar", "mul operand 0.3535533905932738 -> 0.7071067811865476"),
        ("llama", "eps", "add eps 1e-06 -> 1e-05"),
        ("convnext_v2", "eps", "layer_norm eps 1e-06 -> 1e-05"),
        ("convnext_v2", "dim", "norm dim (1, 2) -> (3, 2)"),
        ("gnn_message_passing", "index", "[0] -> [1]"),
        ("unet", "pad", "pad pad (0, 1, 0, 1) -> (1, 0, 1, 0)"),
        ("llama", "dtype", ".to(torch.float32) -> .to(torch.bfloat16)"),
        ("unet", "order", "cat operands 0 and 1 swapped"),
        ("gnn_message_passing", "no_grad", "@convs.1 run under no_grad"),
        ("gpt_neox_rotary", "buffer", "buffer gpt_neox.rotary_emb.inv_freq 2 x1.5 + 0.01"),
        ("ddpm_loop", "outside", "outside <50> 50 x1.5 + 0.01"),
        ("ddpm_loop", "item", "outside <50> 50 x1.5 + 0.01"),
    ],
)
def test_each_kind_rewrites_the_call_it_is_for(name: str, mutation: str, detail: str) -> None:
    outcome = study(name).outcomes[mutation]
    assert (outcome.status, outcome.detail) == ("applied", detail)


def test_the_middle_modules() -> None:
    addresses = {name: study(name).address for name in ("llama", "t5", "convnext_v2", "unet")}
    assert addresses == {
        "llama": "model.layers.1",
        "t5": "decoder.block.1",
        "convnext_v2": "stages.1",
        "unet": "up1",
    }


class _TwoGelus(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Sequential(nn.Linear(4, 4), nn.GELU())
        self.middle = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.GELU())
        self.last = nn.Sequential(nn.Linear(4, 4), nn.GELU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.last(self.middle(self.first(x)))  # type: ignore[no-any-return]


def test_only_the_first_matching_call_in_the_module_is_rewritten() -> None:
    model = _TwoGelus()
    mode = MutationMode(MUTATIONS["mode"], probe=True)
    with installed(model.middle, mode):
        model(torch.randn(2, 4))
    # Both GELUs of the middle module match; those outside it are never seen.
    assert [(s.occurrence, s.what) for s in mode.sites] == [
        (0, "gelu approximate 'none' -> 'tanh'"),
        (1, "gelu approximate 'none' -> 'tanh'"),
    ]
    rewriting = MutationMode(MUTATIONS["mode"], mode.sites[0])
    with installed(model.middle, rewriting):
        trace = capture(model, torch.randn(2, 4))
    assert rewriting.applied == "gelu approximate 'none' -> 'tanh'"
    assert [op.module for op in trace.ops if op.func == "gelu"] == [
        "first.1", "middle.1", "middle.2", "last.1"
    ]  # fmt: skip


def test_a_raising_module_leaves_no_mode_and_no_grad_state_behind() -> None:
    class _Raises(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise ValueError("broken layer")

    module = _Raises()
    before = torch._C._len_torch_function_stack()
    with installed(module, MutationMode(), no_grad=True):
        with pytest.raises(ValueError, match="broken layer"):
            module(torch.randn(2))
        assert torch._C._len_torch_function_stack() == before
        assert torch.is_grad_enabled()
    assert torch._C._len_torch_function_stack() == before


def test_no_grad_holds_only_inside_the_module() -> None:
    model = _TwoGelus()
    seen: dict[str, bool] = {}
    for name in ("first", "middle", "last"):
        getattr(model, name).register_forward_hook(
            lambda m, a, o, name=name: seen.__setitem__(name, o.requires_grad)
        )
    with installed(model.middle, None, no_grad=True):
        model(torch.randn(2, 4))
    assert seen == {"first": True, "middle": False, "last": True}
