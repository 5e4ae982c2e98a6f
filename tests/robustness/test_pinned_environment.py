"""The test environment is pinned (issue 22, item 12): ``constraints/test.txt`` fixes
every package the test install resolves, ``scripts/setup.sh`` and tox install through
it, and the ranges a user installs from ``pyproject.toml`` stay wide."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints" / "test.txt"
#: What the suite's verdicts depend on most: a new release of any of them has changed
#: test ids, snapshot files or failure messages before.
KEY = (
    "pytest", "syrupy", "transformers", "hypothesis", "mypy", "ruff", "pytest-xdist", "tox",
    "build", "numpy", "pillow", "pixelmatch", "graphviz", "graphviz-pure", "torch", "pluggy",
    "torchview", "torchlens", "tokenizers", "huggingface-hub", "safetensors",
)  # fmt: skip


def pins() -> dict[str, Version]:
    """``constraints/test.txt`` as name -> pinned version (every line is ``name==x.y``)."""
    out: dict[str, Version] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)", line)
        assert match, f"not a name==version pin: {line!r}"
        name = canonicalize_name(match[1])
        assert name not in out, f"{name} pinned twice"
        out[name] = Version(match[2])
    return out


def project_requirements() -> list[Requirement]:
    """The dependencies and the test extra of ``pyproject.toml``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [Requirement(text) for text in texts]


def test_every_key_package_is_pinned_to_one_version() -> None:
    pinned = pins()
    assert not [name for name in KEY if name not in pinned]
    assert "pytest-tlgraph" not in pinned  # the project itself moves with each release


def test_every_requirement_is_pinned_inside_its_range() -> None:
    pinned = pins()
    for requirement in project_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is not pinned in {CONSTRAINTS.name}"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{name}=={pinned[name]} is outside pyproject's {requirement.specifier}"
        )


def test_the_user_facing_ranges_stay_wide() -> None:
    exact = {
        canonicalize_name(r.name)
        for r in project_requirements()
        if any(spec.operator == "==" for spec in r.specifier)
    }
    # Only what decides the drawn bytes or the reference traces is exact in pyproject.
    assert exact == {"graphviz-pure", "torchview", "torchlens"}


def test_setup_and_tox_install_the_test_extra_through_the_constraints() -> None:
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert re.search(r'pip install [^\n]*-c constraints/test\.txt -e "\.\[test\]"', setup)
    torch = re.search(r'"torch==([^"]+)"', setup)
    assert torch is not None and Version(torch[1]) == pins()["torch"]
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    assert "PIP_CONSTRAINT = {toxinidir}/constraints/test.txt" in tox
