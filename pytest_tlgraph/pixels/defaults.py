"""The pixel comparison's defaults, written once: ``compare_png`` takes them when called
alone, and the run's setting table (``snapshots.settings``) declares them. Nothing is
imported here, so the plugin reads them at start-up without numpy or Pillow."""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_MAX_DIFF_PIXELS", "DEFAULT_THRESHOLD"]

#: pixelmatch's per-pixel colour threshold when no setting says otherwise.
DEFAULT_THRESHOLD: Final = 0.1
#: The mismatched pixels a PNG may have when no setting says otherwise.
DEFAULT_MAX_DIFF_PIXELS: Final = 0
