"""The versions that drew a snapshot: pytest-tlgraph, torch, and the model library when
the test imported one (transformers, timm, diffusers).

They are recorded in the stored PNG's metadata (``tEXt``, beside the renderer and the
DOT's hash), never in the DOT bytes: a torch upgrade must not change a baseline that
draws the same. A failing call compares them with the running ones
(:mod:`pytest_tlgraph.review.drift`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from typing import Final

__all__ = ["LIBRARIES", "VERSIONS_KEY", "decode_versions", "encode_versions", "running_versions"]

#: The ``tEXt`` key of the versions in a stored PNG.
VERSIONS_KEY: Final = "tlgraph-versions"
#: Model libraries whose version is recorded when the drawing process imported them.
LIBRARIES: Final = ("transformers", "timm", "diffusers")


@functools.cache
def _distribution_version(name: str) -> str | None:
    """An installed distribution's version (read once per process: it cannot change
    under a running session)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def running_versions() -> dict[str, str]:
    """``{"pytest-tlgraph": ..., "torch": ..., "transformers": ...}``: this process's
    versions; a model library only when it is imported (``sys.modules``)."""
    found: dict[str, str] = {}
    own = _distribution_version("pytest-tlgraph")
    if own is not None:
        found["pytest-tlgraph"] = own
    torch = sys.modules.get("torch")
    torch_version = getattr(torch, "__version__", None) or _distribution_version("torch")
    if torch_version is not None:
        found["torch"] = str(torch_version)
    for name in LIBRARIES:
        module = sys.modules.get(name)
        if module is None:
            continue
        value = getattr(module, "__version__", None) or _distribution_version(name)
        if isinstance(value, str) and value:
            found[name] = value
    return found


def encode_versions(versions: Mapping[str, str]) -> str:
    """``pytest-tlgraph 0.4.0; torch 2.5.1``: the ``tEXt`` value, in a fixed order."""
    order = ("pytest-tlgraph", "torch", *LIBRARIES)
    names = [n for n in order if n in versions] + sorted(set(versions) - set(order))
    return "; ".join(f"{name} {versions[name]}" for name in names)


def decode_versions(text: str | None) -> dict[str, str]:
    """The mapping :func:`encode_versions` wrote (``{}`` for ``None`` or damage)."""
    out: dict[str, str] = {}
    for part in (text or "").split(";"):
        name, _, value = part.strip().partition(" ")
        if name and value and " " not in value:
            out[name] = value
    return out
