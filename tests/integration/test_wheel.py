"""The package as a user installs it: sdist and wheel built with ``python -m build``, the
wheel installed into a fresh virtual environment, a one-test project run against it.

Packaging mistakes (a module, ``py.typed`` or a report asset left out, a missing entry
point) fail here.
The venv sees the packages of the environment running this suite (torch is never
downloaded) and the wheel is installed with ``--no-deps``; nothing from this checkout
is on its path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MODELS = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.head = nn.Linear(4, 2)
            self.example_input_array = torch.randn(1, 3, 8, 8)

        def forward(self, x):
            return self.head(self.conv(x).relu().mean((2, 3)))
    """
)
TEST = textwrap.dedent(
    """
    from models import Net

    def test_net(tlgraph_snapshot):
        tlgraph_snapshot(Net())
    """
)


def _run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdist and wheel, built from a copy of the sources (the checkout stays clean); the
    wheel is built from the sdist, so a file the sdist leaves out fails the build."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "pytest_tlgraph",
        source / "pytest_tlgraph",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source, cwd=source)
    return out


@pytest.mark.packaging
def test_the_wheel_holds_the_package_its_types_and_entry_points(dist: Path) -> None:
    (wheel,) = dist.glob("pytest_tlgraph-*-py3-none-any.whl")
    (sdist,) = dist.glob("pytest_tlgraph-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = archive.read(entry_points).decode()
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "pytest_tlgraph").rglob("*.py")}
    assert sources <= names, sorted(sources - names)
    assert "pytest_tlgraph/py.typed" in names
    assets = _assets()
    assert len(assets) >= 2 and assets <= names, sorted(assets - names)
    assert not {n for n in names if n.startswith(("tests/", "examples/", "benchmarks/"))}
    assert "[console_scripts]\ntlgraph = pytest_tlgraph.cli:main" in text
    assert "[pytest11]\ntlgraph = pytest_tlgraph.plugin" in text
    with tarfile.open(sdist) as archive:
        members = {m.split("/", 1)[-1] for m in archive.getnames()}
    assert {"README.md", "pyproject.toml", "pytest_tlgraph/py.typed"} <= members
    assert assets <= members, sorted(assets - members)


def _assets() -> set[str]:
    """The package's files that are not Python: the report page's style and script."""
    found = (ROOT / "pytest_tlgraph").rglob("*")
    return {
        p.relative_to(ROOT).as_posix() for p in found if p.suffix in (".css", ".js") and p.is_file()
    }


def outer_site_dirs() -> list[str]:
    """The site-packages folders this interpreter imports from, in order.

    ``--system-site-packages`` would not do: from a venv, the new venv's "system" is the
    base interpreter's, without what the venv installed (pytest, syrupy, ...). Their
    ``.pth`` files are not read, so an editable install of this checkout stays out.
    """
    return [
        entry
        for entry in sys.path
        if Path(entry).name in ("site-packages", "dist-packages")
        and Path(entry).is_dir()
        and not Path(entry).resolve().is_relative_to(ROOT.resolve())
    ]  # (a venv beside the checkout, /tmp/ci-venv by /tmp/ci, is not inside it)


def make_venv(venv: Path) -> Path:
    """A venv, without pip, that sees this environment's packages after its own; its
    ``python``."""
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=venv.parent)
    python = venv / "bin" / "python"
    own = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=venv)
    Path(own.strip(), "_outer_environment.pth").write_text(
        "".join(f"{entry}\n" for entry in outer_site_dirs()), encoding="utf-8"
    )
    return python


def test_the_venv_sees_the_packages_of_this_environment(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    code = "import syrupy, pytest, torch, sys; print(sys.prefix); print(syrupy.__file__)"
    prefix, syrupy_file = _run(python, "-c", code, cwd=tmp_path).split()
    assert Path(prefix) == tmp_path / "venv"
    import syrupy

    assert Path(syrupy_file) == Path(syrupy.__file__)  # the suite's syrupy, whatever runs it


@pytest.mark.packaging
def test_a_project_runs_against_the_installed_wheel(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "venv"
    python, scripts = make_venv(venv), venv / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    env["PATH"] = os.pathsep.join([str(scripts), env.get("PATH", "")])
    # pip from this environment, installing into the venv; torch and the rest are this
    # environment's, so --no-deps keeps pip off the network.
    _run(python, "-m", "pip", "install", "-q", "--no-deps", wheel, cwd=tmp_path, env=env)
    project = tmp_path / "project"
    project.mkdir()
    (project / "models.py").write_text(MODELS)
    (project / "test_one.py").write_text(TEST)

    where = _run(
        python, "-c", "import pytest_tlgraph; print(pytest_tlgraph.__file__)", cwd=project, env=env
    )
    installed = Path(where.strip()).parent
    assert installed.is_relative_to(venv), where
    assert (installed / "py.typed").is_file()

    pytest_args = ("-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider")
    first = _run(python, *pytest_args, "--snapshot-update", cwd=project, env=env)
    assert "1 snapshot generated" in first  # the .gv and .png pair counts once
    second = _run(python, *pytest_args, "-v", cwd=project, env=env)
    assert "tlgraph: torch" in second and "1 snapshot passed" in second

    tlgraph = scripts / "tlgraph"
    assert "example:" in _run(tlgraph, "draw", "--help", cwd=project, env=env)
    _run(tlgraph, "draw", "models:Net", "-o", "net.gv", cwd=project, env=env)
    stored = project / "__snapshots__" / "test_one" / "test_net.gv"
    assert (project / "net.gv").read_text() == stored.read_text()  # command line = fixture
    diff = _run(tlgraph, "diff", stored, "net.gv", "-o", "diff.png", cwd=project, env=env)
    assert "no structural change" in diff
    assert (project / "diff.png").read_bytes().startswith(b"\x89PNG")
    report = subprocess.run(
        [str(tlgraph), "report"], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )  # a passing run leaves no results folder: exit 2, one line
    assert report.returncode == 2 and "no results folder" in report.stderr, report.stderr
    assert not (project / "tlgraph-results").exists()

    # A failing run writes report.html with the style and script the wheel carries.
    (project / "models.py").write_text(MODELS.replace("nn.Linear(4, 2)", "nn.Linear(4, 3)"))
    failed = subprocess.run(
        [str(python), *pytest_args], cwd=project, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert failed.returncode == 1, failed.stdout + failed.stderr
    page = (project / "tlgraph-results" / "report.html").read_text(encoding="utf-8")
    css = (installed / "review" / "assets" / "report.css").read_text()
    js = (installed / "review" / "assets" / "report.js").read_text()
    assert f"<style>{css}</style>" in page and f"<script>{js}</script>" in page
