"""A tiny model project for the pytester tests, configured by environment variables.

Model changes between runs go through environment variables rather than edits of a
module: an edit that keeps the file's size within the same mtime second could be served
from a stale bytecode cache.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

MODELS = textwrap.dedent(
    """
    import os

    import torch
    from torch import nn


    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            hidden = int(os.environ.get("TL_HIDDEN", "16"))
            self.fc1 = nn.Linear(8, hidden, bias=os.environ.get("TL_BIAS", "1") == "1")
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(hidden, 4)
            self.example_input_array = torch.zeros(2, 8)

        def forward(self, x):
            if os.environ.get("TL_RAISE"):
                raise RuntimeError("the model is broken")
            return self.fc2(self.act(self.fc1(x)))


    class NoExample(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)
    """
)

BASIC_TEST = textwrap.dedent(
    """
    from tinymodels import MLP

    def test_mlp(tlgraph_snapshot):
        tlgraph_snapshot(MLP())
    """
)


# Speed: the unraisable-exception plugin runs gc.collect() five times a session (about a
# second with torch loaded), and the hypothesis and benchmark plugins re-import (and
# assertion-rewrite) their packages in every in-process run.
INI = (
    "[pytest]\naddopts = -p no:cacheprovider -p no:unraisableexception "
    "-p no:hypothesispytest -p no:benchmark\n"
)
"""The project's ini file; a test appends its own settings to it."""


def snapshot_dir(pytester: pytest.Pytester, module: str = "test_graph") -> Path:
    """``__snapshots__/<module>`` of the project."""
    return pytester.path / "__snapshots__" / module


def snapshot_names(pytester: pytest.Pytester, module: str = "test_graph") -> list[str]:
    """The sorted file names in ``__snapshots__/<module>`` of the project."""
    return sorted(p.name for p in snapshot_dir(pytester, module).iterdir())


def assert_update_refused(pytester: pytest.Pytester, message: str) -> None:
    """Run ``--snapshot-update``: the one test fails with ``message`` (an fnmatch pattern)
    and no snapshot is written."""
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])
    assert not snapshot_dir(pytester).exists()
