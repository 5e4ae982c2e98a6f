"""The HTML report: every failure of a session in one self-contained file, for review.

Each failure shows the structural diff drawing first, at 100 % in a pan and zoom
viewer (with the whole graph a button away when the record names one), then its
report sections, then expected and actual in three views switched by tabs: side by
side (with the pixel diff), a slider and an onion skin, the last two on the union
canvas of both sizes (both images at the top-left, as the pixel diff aligns them).
Keys move between failures (``?`` lists them). Images are inlined once each as base64
data URIs (:mod:`pytest_tlgraph.snapshots.review.html_images`), so ``report.html`` is one
file to upload as a CI artifact; it needs no network. It is written once, at the end
of the session, from the records the tests (on any pytest-xdist worker) left in the
results directory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from pytest_tlgraph.escaping import html_text
from pytest_tlgraph.snapshots.review.html_assets import SCRIPT, STYLE
from pytest_tlgraph.snapshots.review.html_images import Inlined, InlinedImages, budget

__all__ = ["accept_command", "call_title", "render_html", "write_html"]

#: Image kinds with a place of their own; any other kind a record names is shown after
#: the comparison views under its own name.
_PLACED: Final = ("graphdiff", "graphdiff_full", "expected", "actual", "diff")
_CAPTIONS: Final = {
    "graphdiff": "structural diff (snapshot -> received)",
    "graphdiff_full": "structural diff, whole graph",
    "diff": "pixel diff",
}
_KEYS: Final = (
    (("j", "n", "\u2193"), "next failure"),
    (("k", "p", "\u2191"), "previous failure"),
    (("1",), "side by side"),
    (("2",), "slider: expected left of the line, actual right"),
    (("3",), "onion skin: actual over expected"),
    (("+", "-"), "zoom the structural diff"),
    (("f",), "fit the structural diff"),
    (("0",), "structural diff at 100%"),
    (("w",), "whole graph / changes in context"),
    (("?",), "this help (Esc closes)"),
)


def _diff_line(line: str) -> str:
    text = html_text(line)
    if line.startswith(("---", "+++")):
        return f"<b>{text}</b>"
    if line.startswith("-"):
        return f'<span class="del">{text}</span>'
    if line.startswith("+"):
        return f'<span class="add">{text}</span>'
    if line.startswith("@@"):
        return f'<span class="hunk">{text}</span>'
    return text


def _caption(kind: str) -> str:
    return html_text(_CAPTIONS.get(kind, kind.replace("_", " ")))


def _figure(kind: str, rel: str, root: Path, images: InlinedImages | None = None) -> str:
    """One image with its caption, in a frame that scrolls; a click shows it at its
    natural size. ``images`` is the page's pool (a pool of its own when not given)."""
    pool = InlinedImages(root) if images is None else images
    picture, why = pool.get(rel)
    if picture is None:
        return _figure_missing(kind, why)
    img = pool.tag(picture, kind, title="click to enlarge", style=f"--w:{picture.width}px")
    return (
        f'<figure class="{html_text(kind)}"><figcaption>{_caption(kind)}</figcaption>'
        f'<div class="frame">{img}</div></figure>'
    )


def _viewer(paths: Mapping[str, str], images: InlinedImages) -> str:
    """The structural diff drawing in a pan and zoom viewer (and the whole graph, when
    the record names one, as a second picture of the same viewer)."""
    main, why = images.get(paths["graphdiff"])
    if main is None:
        return _figure_missing("graphdiff", why)
    whole: Inlined | None = None
    note = ""
    if "graphdiff_full" in paths:
        whole, why_full = images.get(paths["graphdiff_full"])
        if whole is None:
            note = f'<span class="hint">whole graph: {html_text(why_full)}</span>'
        elif whole.ident == main.ident:  # a small graph: the context is the whole of it
            whole, note = None, '<span class="hint">(this is the whole graph)</span>'
    buttons = [
        '<button data-act="out" title="zoom out (-)">\u2212</button>',
        '<button data-act="in" title="zoom in (+)">+</button>',
        '<button data-act="fit" title="fit in view (f)">fit</button>',
        '<button data-act="one" title="natural size (0)">100%</button>',
        '<span class="zoom" title="the scale shown">100%</span>',
    ]
    if whole is not None:
        buttons.append(
            '<button data-act="whole" aria-pressed="false" '
            'title="the whole union graph (w)">whole graph</button>'
        )
    buttons.append('<span class="hint">drag to pan, wheel to zoom</span>' + note)
    pictures = [images.tag(main, "graphdiff", draggable="false")]
    if whole is not None:
        pictures.append(images.tag(whole, "graphdiff_full", draggable="false"))
    return (
        '<div class="viewer graphdiff">'
        f'<div class="caption">{_caption("graphdiff")}</div>'
        f'<div class="bar">{"".join(buttons)}</div>'
        # The script sets the height again (and the picture's place); this one holds
        # the drawing at 100% from the top-left where no script runs.
        f'<div class="port" style="height:min({main.height + 2}px, 75vh)">'
        f"{''.join(pictures)}</div></div>"
    )


def _figure_missing(kind: str, why: str) -> str:
    return (
        f'<figure class="{html_text(kind)}"><figcaption>{_caption(kind)}</figcaption>'
        f"<p>{html_text(why)}</p></figure>"
    )


def _stage(kind: str, expected: Inlined, actual: Inlined, images: InlinedImages) -> str:
    """The two pictures stacked at the top-left of their union canvas."""
    width = max(expected.width, actual.width)
    height = max(expected.height, actual.height)

    def layer(place: str, side: str, picture: Inlined) -> str:
        style = f"width:calc({picture.width}px * var(--k, 1))"
        img = images.tag(picture, side, style=style, draggable="false")
        return f'<div class="layer {place} {side}">{img}</div>'

    if kind == "slider":  # expected on top, cut at the split: left of it, right actual
        over, layers = (
            "swipe",
            layer("under", "actual", actual) + layer("over", "expected", expected),
        )
    else:  # actual on top, as opaque as the range says
        over, layers = (
            "onion",
            layer("under", "expected", expected) + layer("over", "actual", actual),
        )
    extra = (
        '<div class="split"></div><span class="tag expected">expected</span>'
        '<span class="tag actual">actual</span>'
        if kind == "slider"
        else ""
    )
    # --k: the scale that fits the canvas in the page's width (set by the script, at
    # most 1), the same for both pictures.
    style = f"width:calc({width}px * var(--k, 1));aspect-ratio:{width}/{height}"
    return (
        f'<div class="stageframe"><div class="stage {over}" style="{style}" '
        f'data-w="{width}" data-h="{height}">{layers}{extra}</div></div>'
    )


def _sizes(expected: Inlined, actual: Inlined) -> str:
    if (expected.width, expected.height) == (actual.width, actual.height):
        return f"both {expected.width} x {expected.height} px"
    return (
        f"expected {expected.width} x {expected.height} px, actual {actual.width} x "
        f"{actual.height} px, both at the top-left (striped: no pixels)"
    )


def _compare(paths: Mapping[str, str], images: InlinedImages) -> str:
    """Expected, actual and the pixel diff: side by side, and (with both pictures) the
    slider and the onion skin."""
    side = "".join(
        _figure(kind, paths[kind], images.root, images)
        for kind in ("expected", "actual", "diff")
        if kind in paths
    )
    expected = images.get(paths["expected"])[0] if "expected" in paths else None
    actual = images.get(paths["actual"])[0] if "actual" in paths else None
    if expected is None or actual is None:
        return f'<div class="images">{side}</div>'
    tabs = (
        '<div class="bar tabs">'
        '<button data-view="side" aria-pressed="true">side by side<kbd>1</kbd></button>'
        '<button data-view="slider" aria-pressed="false">slider<kbd>2</kbd></button>'
        '<button data-view="onion" aria-pressed="false">onion skin<kbd>3</kbd></button>'
        f'<span class="hint">{_sizes(expected, actual)}</span></div>'
    )
    slider = (
        '<div class="view slider" hidden><label class="range">'
        '<span><span class="swatch expected"></span>expected</span>'
        '<input type="range" min="0" max="100" value="50" aria-label="split">'
        '<span><span class="swatch actual"></span>actual</span><output>50%</output></label>'
        + _stage("slider", expected, actual, images)
        + "</div>"
    )
    onion = (
        '<div class="view onion" hidden><label class="range">'
        '<span><span class="swatch expected"></span>expected</span>'
        '<input type="range" min="0" max="100" value="50" aria-label="opacity of actual">'
        '<span><span class="swatch actual"></span>actual</span><output>50%</output></label>'
        + _stage("onion", expected, actual, images)
        + "</div>"
    )
    return (
        f'<div class="compare" data-view="side">{tabs}'
        f'<div class="view side"><div class="images">{side}</div></div>'
        f"{slider}{onion}</div>"
    )


def _image_paths(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's images by kind; entries that are not two strings are left out."""
    found = record.get("images", {})
    if not isinstance(found, Mapping):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}


def _name(record: Mapping[str, Any]) -> str:
    info = record.get("accept")
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) else ""


def call_title(record: Mapping[str, Any], numbered: bool) -> str:
    """The call as the page names it: ``test_m.py::test_a, call "depth1"``
    (``numbered``: its test has other calls on the page)."""
    from pytest_tlgraph.snapshots.review.nodeids import call_heading

    nodeid = str(record.get("nodeid", ""))
    return call_heading(nodeid, record.get("call"), _name(record), numbered=numbered)


def accept_command(record: Mapping[str, Any]) -> str | None:
    """The ``tlgraph accept`` command that accepts this call alone, run from the
    rootdir (``None`` when the record has nothing to accept)."""
    import shlex

    from pytest_tlgraph.snapshots.review.nodeids import call_key

    nodeid, name = record.get("nodeid"), _name(record)
    if not isinstance(nodeid, str) or not nodeid or not name:
        return None
    words = ["tlgraph", "accept"]
    results = record.get("results_from_rootdir")
    if isinstance(results, str) and results and results != "tlgraph-results":
        words += ["--results", results]
    words += [nodeid, "--call", call_key(record.get("call"), name)]
    return " ".join(shlex.quote(word) for word in words)


def _accept_bar(record: Mapping[str, Any]) -> str:
    command = accept_command(record)
    if command is None:
        return ""
    text = html_text(command)
    return (
        f'<div class="accept"><code>{text}</code><button data-copy="{text}" '
        'title="copy the command (run it in the rootdir)">copy</button></div>'
    )


def _failure(
    number: int, record: Mapping[str, Any], images: InlinedImages, numbered: bool = False
) -> str:
    parts = [f'<section class="failure" id="f{number}">']
    shard = record.get("shard")
    shard_tag = (
        f' <span class="shard">(shard {html_text(shard)})</span>' if isinstance(shard, str) else ""
    )
    parts.append(f"<h2>{number}. {html_text(call_title(record, numbered))}{shard_tag}</h2>")
    parts.append(f"<div>{html_text(str(record.get('title', '')))}</div>")
    conflict = record.get("conflict")
    if isinstance(conflict, str):
        parts.append(f'<div class="conflict">{html_text(conflict)}</div>')
    parts.append(_accept_bar(record))
    paths = _image_paths(record)
    if "graphdiff" in paths:  # the picture that says what changed comes first
        parts.append(_viewer(paths, images))
    elif "graphdiff_full" in paths:
        parts.append(_figure("graphdiff_full", paths["graphdiff_full"], images.root, images))
    sections: Sequence[Sequence[Any]] = record.get("sections", ())
    for heading, lines in sections:
        parts.append(f"<h3>{html_text(str(heading))}</h3>")
        is_diff = str(heading).startswith("DOT diff")
        shown = (_diff_line(str(x)) if is_diff else html_text(str(x)) for x in lines)
        parts.append("<pre>" + "\n".join(shown) + "</pre>")
    if paths.keys() & {"expected", "actual", "diff"}:
        parts.append(_compare(paths, images))
    others = [kind for kind in paths if kind not in _PLACED]
    if others:
        parts.append('<div class="images others">')
        parts.extend(_figure(kind, paths[kind], images.root, images) for kind in others)
        parts.append("</div>")
    parts.append("</section>")
    return "\n".join(parts)


def _help() -> str:
    rows = "".join(
        "<tr><td>"
        + " ".join(f"<kbd>{html_text(k)}</kbd>" for k in keys)
        + f"</td><td>{html_text(what)}</td></tr>"
        for keys, what in _KEYS
    )
    return (
        '<div class="help" id="help" hidden role="dialog" aria-label="keys">'
        f'<div class="card"><h2>Keys</h2><table>{rows}</table>'
        "<p>Keys act on the current (outlined) failure; none fires while typing in a "
        "field. The arrows move between failures when nothing has the focus.</p>"
        "</div></div>"
    )


def _several(records: Sequence[Mapping[str, Any]]) -> set[str]:
    """The node ids with more than one call on the page (their first call is numbered)."""
    from collections import Counter

    counts = Counter(str(r.get("nodeid", "")) for r in records)
    return {nodeid for nodeid, n in counts.items() if n > 1}


def render_html(
    records: Sequence[Mapping[str, Any]],
    root: Path,
    *,
    notes: Sequence[str] = (),
    shards: Sequence[Path] = (),
) -> str:
    """The report page for ``records`` (images read from ``root``, the results dir, or
    from one of the results folders ``shards`` a merged page shows, never from
    anywhere else); ``notes``: lines for the top of the page (a merged run's shards,
    an upgrade)."""
    count = len(records)
    images = InlinedImages(root, shards)
    several = _several(records)
    numbered = [str(r.get("nodeid", "")) in several for r in records]
    index = "".join(
        f'<li><a href="#f{i}">{html_text(call_title(r, numbered[i - 1]))}</a></li>'
        for i, r in enumerate(records, start=1)
    )
    body = "\n".join(
        _failure(i, r, images, numbered[i - 1]) for i, r in enumerate(records, start=1)
    )
    top = "".join(f'<div class="upgrade">{html_text(note)}</div>' for note in notes)
    capped = ""
    if images.left_out:
        capped = (
            f'<div class="meta">The page inlines at most {budget()} of images: '
            f"{images.left_out} later images are named by their files in the results "
            "folder instead.</div>"
        )
    pager = (
        '<div class="pager"><button data-step="-1" title="previous failure (k)">\u2039'
        f'</button><span class="where">1 / {count}</span>'
        '<button data-step="1" title="next failure (j)">\u203a</button>'
        '<button data-help title="keys (?)">?</button></div>'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>tlgraph snapshot failures ({count})</title><style>{STYLE}</style></head>"
        f"<body>{pager}<h1>tlgraph snapshot failures: {count}</h1>"
        '<div class="meta">expected = stored snapshot, actual = this run, pixel diff = '
        "mismatched pixels in red (anti-aliasing in yellow). The structural diff opens at "
        "100%: drag to pan, wheel to zoom. Compare expected and actual side by side, with "
        "the slider or as an onion skin. Press <kbd>?</kbd> for the keys.</div>"
        f"{capped}{top}<nav><ol>{index}</ol></nav>\n{body}\n{_help()}<script>{SCRIPT}</script>"
        "</body></html>\n"
    )


def write_html(
    records: Sequence[Mapping[str, Any]],
    root: Path,
    path: Path,
    *,
    notes: Sequence[str] = (),
    shards: Sequence[Path] = (),
) -> Path:
    """Write the report page to ``path`` (in the results folder ``root``: atomically,
    never through a link) and return it; ``shards``: the results folders a merged
    page's images lie in."""
    from pytest_tlgraph.snapshots.disk.files import atomic_write

    page = render_html(records, root, notes=notes, shards=shards)
    atomic_write(path, page.encode("utf-8"), anchor=root)
    return path
