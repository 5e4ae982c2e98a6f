"""Fixtures of the pytester tests."""

from __future__ import annotations

import pytest

# Imported before any in-process pytester run: pytester drops the modules a run imported
# when it ends, torch's extension modules cannot be imported a second time, and
# re-importing the rest on every run would cost seconds.
import torch  # noqa: F401

import pytest_tlgraph.capture
import pytest_tlgraph.drawing
import pytest_tlgraph.snapshots.fixture
import pytest_tlgraph.snapshots.html
import pytest_tlgraph.snapshots.pixeldiff  # noqa: F401
from tests.integration.project import MODELS


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester project holding ``tinymodels.py``, isolated from the outer run."""
    # The outer run may itself be an xdist worker: the inner run must not think so.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    for name in ("TL_HIDDEN", "TL_BIAS", "TL_RAISE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(tinymodels=MODELS)
    # Speed: the unraisable-exception plugin runs gc.collect() five times a session
    # (about a second with torch loaded), and the hypothesis and benchmark plugins
    # re-import (and assertion-rewrite) their packages in every in-process run.
    pytester.makeini(
        "[pytest]\naddopts = -p no:cacheprovider -p no:unraisableexception "
        "-p no:hypothesispytest -p no:benchmark\n"
    )
    pytester.syspathinsert()
    return pytester
