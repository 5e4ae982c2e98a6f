"""The HTML report: every failure of a session in one self-contained file.

Each failure shows its report sections and the expected / actual / diff images side by
side. Images are inlined as base64 data URIs, so ``report.html`` is one file to upload
as a CI artifact. It is written once, at the end of the session, from the records the
tests (on any pytest-xdist worker) left in the results directory.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any, Final

__all__ = ["render_html", "write_html"]

_STYLE: Final = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1a1a1a; }
h1 { font-size: 20px; margin: 0 0 4px; }
.meta { color: #5a6270; margin-bottom: 20px; }
section.failure { border: 1px solid #d0d4da; border-radius: 8px; margin: 0 0 24px;
  padding: 12px 16px; }
section.failure h2 { font-size: 15px; margin: 0 0 8px; word-break: break-all; }
h3 { font-size: 13px; margin: 12px 0 4px; color: #3b4350; }
pre { background: #f6f7f9; padding: 8px 10px; border-radius: 6px; overflow-x: auto;
  font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; margin: 0;
  white-space: pre-wrap; overflow-wrap: anywhere; }
pre .del { color: #b31d28; background: #ffeef0; display: inline-block; min-width: 100%; }
pre .add { color: #22863a; background: #e6ffed; display: inline-block; min-width: 100%; }
pre .hunk { color: #6f42c1; }
.images { display: flex; gap: 12px; align-items: flex-start; margin-top: 8px; }
.images figure { flex: 1 1 0; margin: 0; min-width: 0; }
.images figcaption { font-weight: 600; font-size: 12px; margin-bottom: 4px; }
.frame { max-height: 80vh; overflow: auto; border: 1px solid #d0d4da; background: #fff; }
.frame img { display: block; max-width: 100%; cursor: zoom-in; }
.frame img.full { max-width: none; cursor: zoom-out; }
nav ol { padding-left: 20px; }
"""


def _diff_line(line: str) -> str:
    text = escape(line)
    if line.startswith(("---", "+++")):
        return f"<b>{text}</b>"
    if line.startswith("-"):
        return f'<span class="del">{text}</span>'
    if line.startswith("+"):
        return f'<span class="add">{text}</span>'
    if line.startswith("@@"):
        return f'<span class="hunk">{text}</span>'
    return text


def _data_uri(path: Path) -> tuple[str | None, str]:
    """The image as a data URI, or ``None`` and why it is not inlined: missing, or over
    the size guard's limits (whatever wrote it, report.html never carries such an image)."""
    from pytest_tlgraph.draw.canvas import png_problem

    try:
        data = path.read_bytes()
    except OSError:
        return None, "(image missing)"
    problem = png_problem(data, "image", "open the file instead")
    if problem is not None:
        return None, f"({problem}: {path.name})"
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii"), ""


_CAPTIONS: Final = {"graphdiff": "structural diff (snapshot -> received)"}
# Click an image to see it at its natural size (a tall graph fits the width otherwise).
_ZOOM: Final = "this.classList.toggle('full')"


def _figure(kind: str, rel: str, root: Path) -> str:
    uri, why = _data_uri(root / rel)
    body = (
        f'<div class="frame"><img alt="{escape(kind)}" src="{uri}" onclick="{_ZOOM}" '
        'title="click to enlarge"></div>'
        if uri
        else f"<p>{escape(why)}</p>"
    )
    caption = escape(_CAPTIONS.get(kind, kind))
    return f'<figure class="{escape(kind)}"><figcaption>{caption}</figcaption>{body}</figure>'


def _failure(number: int, record: Mapping[str, Any], root: Path) -> str:
    parts = [f'<section class="failure" id="f{number}">']
    parts.append(f"<h2>{number}. {escape(str(record.get('nodeid', '')))}</h2>")
    parts.append(f"<div>{escape(str(record.get('title', '')))}</div>")
    images: Mapping[str, str] = record.get("images", {})
    if "graphdiff" in images:  # the picture that says what changed comes first
        parts.append('<div class="images">')
        parts.append(_figure("graphdiff", images["graphdiff"], root))
        parts.append("</div>")
    sections: Sequence[Sequence[Any]] = record.get("sections", ())
    for heading, lines in sections:
        parts.append(f"<h3>{escape(str(heading))}</h3>")
        is_diff = str(heading).startswith("DOT diff")
        shown = (_diff_line(str(x)) if is_diff else escape(str(x)) for x in lines)
        parts.append("<pre>" + "\n".join(shown) + "</pre>")
    if images.keys() & {"expected", "actual", "diff"}:
        parts.append('<div class="images">')
        parts.extend(
            _figure(kind, images[kind], root)
            for kind in ("expected", "actual", "diff")
            if kind in images
        )
        parts.append("</div>")
    parts.append("</section>")
    return "\n".join(parts)


def render_html(records: Sequence[Mapping[str, Any]], root: Path) -> str:
    """The report page for ``records`` (images read from ``root``, the results dir)."""
    count = len(records)
    index = "".join(
        f'<li><a href="#f{i}">{escape(str(r.get("nodeid", "")))}</a></li>'
        for i, r in enumerate(records, start=1)
    )
    body = "\n".join(_failure(i, r, root) for i, r in enumerate(records, start=1))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>tlgraph snapshot failures ({count})</title><style>{_STYLE}</style></head>"
        f"<body><h1>tlgraph snapshot failures: {count}</h1>"
        '<div class="meta">expected = stored snapshot, actual = this run, diff = '
        "mismatched pixels in red (anti-aliasing in yellow); click an image to enlarge</div>"
        f"<nav><ol>{index}</ol></nav>\n{body}\n</body></html>\n"
    )


def write_html(records: Sequence[Mapping[str, Any]], root: Path, path: Path) -> Path:
    """Write the report page to ``path`` and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(records, root), encoding="utf-8")
    return path
