"""The corpus never reaches the network: the Hugging Face hub is offline."""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Show the mutation table ``test_every_argument`` built, if it ran."""
    mutations = sys.modules.get("tests.corpus.mutations")
    for text in getattr(mutations, "SUMMARIES", ()):
        terminalreporter.section("one-layer mutations: does the DOT change?")
        terminalreporter.write_line(text)
