"""Fixtures of the pytester tests."""

from __future__ import annotations

import pytest

# Imported before any in-process pytester run: pytester drops the modules a run imported
# when it ends, torch's extension modules cannot be imported a second time, and
# re-importing the rest on every run would cost seconds.
import torch  # noqa: F401

from tests.integration.project import BASIC_TEST, INI, MODELS


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester project holding ``tinymodels.py``, isolated from the outer run."""
    # The outer run may itself be an xdist worker: the inner run must not think so.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    for name in ("TL_HIDDEN", "TL_BIAS", "TL_RAISE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(tinymodels=MODELS)
    pytester.makeini(INI)
    pytester.syspathinsert()
    return pytester


@pytest.fixture
def stored(project: pytest.Pytester) -> pytest.Pytester:
    """A project with the basic test and its stored snapshots."""
    project.makepyfile(test_graph=BASIC_TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    return project
