"""Build report.html for 1, 18 and 200 failing calls and screenshot it in headless Chromium.

Each page comes from a real run: a project whose test snapshots, once per call, a model
of the corpus before one of its real changes (``tests/corpus/changes.py``: a block
inserted, a fold broken, an activation swapped, ...) and the tiny MLP of the pytester
tests at some width; ``--snapshot-update`` stores them, then the run with every model
changed fails every call and writes the page. The first calls are the corpus changes
(there are 17), the rest MLPs. Chromium then opens the page, checks what a reviewer
meets (per call: the story, then the drawing, then the pixel views, the DOT diff
folded; every image shown, the ones past the inline budget loaded from their files
when scrolled to) and takes screenshots: the top of the page, and a call past the
budget once scrolled to it.

Usage::

    PYTHONPATH=. python scripts/report_pages.py                 # 1, 18 and 200 calls
    PYTHONPATH=. python scripts/report_pages.py --calls 18 --out /tmp/pages
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import Browser  # noqa: E402

TEST = textwrap.dedent(
    """
    import os

    import pytest
    import torch
    from torch import nn

    from tests.corpus.changes import CHANGES, MOVES

    EDITS = sorted({**CHANGES, **MOVES}.items())
    CALLS = int(os.environ["TL_CALLS"])
    AFTER = os.environ.get("TL_SIDE") == "after"


    class MLP(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.fc1 = nn.Linear(8, hidden)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(hidden, 4)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))


    @pytest.mark.parametrize("n", range(CALLS))
    def test_call(tlgraph_snapshot, n):
        if n < len(EDITS):
            before, after = EDITS[n][1]()
            case = after if AFTER else before
            tlgraph_snapshot(case.model, case.inputs, kwargs=case.kwargs, collapse="auto")
        else:
            hidden = 8 + n % 24 + (1 if AFTER else 0)
            tlgraph_snapshot(MLP(hidden), torch.zeros(2, 8))
    """
)

#: What the page shows, read in Chromium.
CHECKS = """(() => {
  const sections = [...document.querySelectorAll('section.failure')];
  const order = sections.map(s => [...s.children].map(c =>
      c.matches('ol.story') ? 'story' : c.matches('.viewer') ? 'drawing'
      : c.matches('.compare, .images') ? 'pixels' : c.matches('details.dotdiff') ? 'dotdiff'
      : null).filter(Boolean).join(','));
  const imgs = [...document.images];
  return {
    calls: sections.length,
    orders: [...new Set(order)],
    images: imgs.length,
    inlined: imgs.filter(i => (i.getAttribute('src') || '').startsWith('data:')).length,
    linked: imgs.filter(i => i.loading === 'lazy').length,
    shared: imgs.filter(i => i.dataset.same).length,
    openDiffs: document.querySelectorAll('details.dotdiff[open]').length,
    bytes: document.documentElement.outerHTML.length,
  };
})()"""

LAZY = """(() => {
  const lazy = [...document.querySelectorAll('img[loading="lazy"]')];
  const section = lazy.length ? lazy[0].closest('section.failure') : null;
  if (section) section.scrollIntoView({block: 'start'});
  return section ? section.id : null;
})()"""

LOADED = """(() => {
  const section = document.getElementById(%s);
  const imgs = [...section.querySelectorAll('img[loading="lazy"]')].filter(
      i => !i.closest('[hidden]'));
  return {shown: imgs.length, decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length};
})()"""


def _run(*args: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-n", "0", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout.splitlines()[-1] if done.stdout else done.stderr


def build(calls: int, out: Path) -> Path:
    """The project with ``calls`` failing calls, run: its report.html."""
    project = out / f"calls-{calls}"
    project.mkdir(parents=True, exist_ok=True)
    (project / "test_pages.py").write_text(TEST)
    (project / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "TL_CALLS": str(calls), "PYTHONPATH": f"{project}:{ROOT}"}
    print(f"{calls} calls: store:", _run("--snapshot-update", cwd=project, env=env))
    print(f"{calls} calls: fail: ", _run(cwd=project, env=env | {"TL_SIDE": "after"}))
    return project / "tlgraph-results" / "report.html"


def look(report: Path, shots: Path) -> dict[str, object]:
    """Check the page in Chromium and write its screenshots next to ``shots``."""
    with Browser(timeout=120) as browser:
        browser.open(report)
        found: dict[str, object] = browser.evaluate(CHECKS)
        shots.with_name(shots.name + "-top.png").write_bytes(browser.screenshot())
        where = browser.evaluate(LAZY)
        if where is not None:
            browser.evaluate("new Promise(r => setTimeout(r, 1500))")
            found["lazy_call"] = where
            found["lazy_loaded"] = browser.evaluate(LOADED % json.dumps(where))
            shots.with_name(shots.name + "-lazy.png").write_bytes(browser.screenshot())
        found["errors"] = list(browser.errors)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, action="append")
    parser.add_argument("--out", type=Path, default=Path("/tmp/tlgraph-pages"))
    args = parser.parse_args()
    for calls in args.calls or [1, 18, 200]:
        report = build(calls, args.out)
        found = look(report, args.out / f"report-{calls}")
        print(json.dumps({"calls": calls, **found}, indent=1))


if __name__ == "__main__":
    main()
