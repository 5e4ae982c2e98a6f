"""Fixtures of the robustness suite: the pytester project of the integration tests."""

from __future__ import annotations

from tests.integration.conftest import project, stored

__all__ = ["project", "stored"]
