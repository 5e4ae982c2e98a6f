"""``python -m pytest_tlgraph``: the ``tlgraph`` command line."""

from __future__ import annotations

import sys

from pytest_tlgraph.cli import main

if __name__ == "__main__":
    sys.exit(main())
