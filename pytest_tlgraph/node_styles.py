"""Ready-made ``node_spec_fn`` styles (public path; they live in the drawing stage,
:mod:`pytest_tlgraph.draw.node_styles`)."""

from __future__ import annotations

from pytest_tlgraph.draw.node_styles import *  # noqa: F403
from pytest_tlgraph.draw.node_styles import __all__ as __all__
