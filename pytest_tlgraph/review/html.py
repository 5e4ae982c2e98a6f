"""The HTML report: every failure of a session in one file, for review.

Each failure reads from the top down: its story first (what changed, one list item a
line), then the structural diff drawing at 100 % in a pan and zoom viewer (with the
whole graph a button away when the record names one), then expected and actual in
three views switched by tabs: side by side (with the pixel diff), a slider and an
onion skin, the last two on the union canvas of both sizes (both images at the
top-left, as the pixel diff aligns them). The long text comes last and folded: the DOT
diff and every change node by node (``<details>``). Keys move between failures (``?``
lists them). Images are inlined once each as base64 data URIs up to the page's budget
(:mod:`pytest_tlgraph.review.html_images`), past it linked from the results
folder and loaded lazily, so ``report.html`` is one file to upload as a CI artifact
with the results folder around it; it needs no network. It is written once, at the end
of the session, from the records the tests (on any pytest-xdist worker) left in the
results directory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from pytest_tlgraph.escaping import html_text
from pytest_tlgraph.review.html_assets import script, style
from pytest_tlgraph.review.html_images import Inlined, InlinedImages, budget
from pytest_tlgraph.review.merge import conflict_line
from pytest_tlgraph.review.outcome import CallOutcome, Place
from pytest_tlgraph.review.report import DOT_DIFF, EVERY_CHANGE, STRUCTURE

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


def call_title(outcome: CallOutcome, numbered: bool) -> str:
    """The call as the page names it: ``test_m.py::test_a, call "depth1"``
    (``numbered``: its test has other calls on the page)."""
    from pytest_tlgraph.review.nodeids import call_heading

    return call_heading(outcome.nodeid, outcome.call, outcome.name, numbered=numbered)


def accept_command(outcome: CallOutcome) -> str | None:
    """The ``tlgraph accept`` command that accepts this call alone, run from the
    rootdir (``None`` when the call has nothing to accept)."""
    import shlex

    from pytest_tlgraph.review.nodeids import call_key

    if not outcome.nodeid or not outcome.name or outcome.accept is None:
        return None
    words = ["tlgraph", "accept"]
    results = outcome.where.results_from_rootdir
    if results and results != "tlgraph-results":
        words += ["--results", results]
    words += [outcome.nodeid, "--call", call_key(outcome.call, outcome.name)]
    return " ".join(shlex.quote(word) for word in words)


def _accept_bar(outcome: CallOutcome) -> str:
    command = accept_command(outcome)
    if command is None:
        return ""
    text = html_text(command)
    return (
        f'<div class="accept"><code>{text}</code><button data-copy="{text}" '
        'title="copy the command (run it in the rootdir)">copy</button></div>'
    )


def _story_lines(outcome: CallOutcome) -> list[tuple[str, Place | None]]:
    """What changed, every line (the report's story), each with its place in the
    drawing where the call found one; a missing snapshot's message when it has none."""
    report = outcome.report
    if report is None:
        return []
    lines = report.story or next((lines for heading, lines in report.sections), ())
    places = outcome.places if len(outcome.places) == len(lines) else (None,) * len(lines)
    return list(zip(lines, places, strict=True))


def _story(lines: Sequence[tuple[str, Place | None]], notes: Sequence[str]) -> str:
    """The story: what changed, one list item a line, each a link to its place in the
    drawing where it has one; then, muted, the notes (where the diff drawings are, or
    why one was not made)."""
    if not lines:
        return ""
    items = "".join(_story_item(line, place) for line, place in lines)
    shown = "".join(f"<li>{html_text(x)}</li>" for x in notes)
    return f'<h3>what changed</h3><ol class="story">{items}</ol>' + (
        f'<ul class="notes">{shown}</ul>' if shown else ""
    )


def _story_item(line: str, place: Place | None) -> str:
    if place is None:
        return f"<li>{html_text(line)}</li>"
    x, y, w, h = place
    return (
        f'<li><a class="place" href="#" data-x="{x}" data-y="{y}" data-w="{w}" '
        f'data-h="{h}" title="show it in the drawing">{html_text(line)}</a></li>'
    )


def _details(outcome: CallOutcome) -> str:
    """The sections after the pictures: the encoding state and the PNG verdict open (a
    few lines each), then the DOT diff and every change folded (long)."""
    shown, folded = [], []
    sections = () if outcome.report is None else outcome.report.sections
    for heading, lines in sections:
        if heading == STRUCTURE or not heading:
            continue  # told by the story
        is_diff = heading == DOT_DIFF
        text = "\n".join(_diff_line(x) if is_diff else html_text(x) for x in lines)
        if is_diff or heading == EVERY_CHANGE:
            count = f"{len(lines)} line{'s' * (len(lines) != 1)}"
            kind = "dotdiff" if is_diff else "every"
            folded.append(
                f'<details class="{kind}"><summary>{html_text(heading.rstrip(":"))} '
                f'<span class="hint">({count})</span></summary><pre>{text}</pre></details>'
            )
        else:
            shown.append(f"<h3>{html_text(heading)}</h3><pre>{text}</pre>")
    return "".join(shown + folded)


def _failure(
    number: int, outcome: CallOutcome, images: InlinedImages, numbered: bool = False
) -> str:
    """One call: its title and accept command, then the story, the structural diff
    drawing and the pixel views, then the folded text (DOT diff, every change)."""
    parts = [f'<section class="failure" id="f{number}">']
    shard = outcome.shard
    shard_tag = f' <span class="shard">(shard {html_text(shard)})</span>' if shard else ""
    parts.append(f"<h2>{number}. {html_text(call_title(outcome, numbered))}{shard_tag}</h2>")
    parts.append(f"<div>{html_text(outcome.title)}</div>")
    flag = conflict_line(outcome.shard, outcome.conflict)
    if flag is not None:
        parts.append(f'<div class="conflict">{html_text(flag)}</div>')
    parts.append(_accept_bar(outcome))
    parts.append(_story(_story_lines(outcome), outcome.notes))
    paths = dict(outcome.images)
    if "graphdiff" in paths:  # the picture of what changed, right below its story
        parts.append(_viewer(paths, images))
    elif "graphdiff_full" in paths:
        parts.append(_figure("graphdiff_full", paths["graphdiff_full"], images.root, images))
    if paths.keys() & {"expected", "actual", "diff"}:
        parts.append(_compare(paths, images))
    others = [kind for kind in paths if kind not in _PLACED]
    if others:
        parts.append('<div class="images others">')
        parts.extend(_figure(kind, paths[kind], images.root, images) for kind in others)
        parts.append("</div>")
    parts.append(_details(outcome))
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


def _several(records: Sequence[CallOutcome]) -> set[str]:
    """The node ids with more than one call on the page (their first call is numbered)."""
    from collections import Counter

    counts = Counter(r.nodeid for r in records)
    return {nodeid for nodeid, n in counts.items() if n > 1}


def render_html(
    records: Sequence[CallOutcome],
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
    numbered = [r.nodeid in several for r in records]
    index = "".join(
        f'<li><a href="#f{i}">{html_text(call_title(r, numbered[i - 1]))}</a></li>'
        for i, r in enumerate(records, start=1)
    )
    body = "\n".join(
        _failure(i, r, images, numbered[i - 1]) for i, r in enumerate(records, start=1)
    )
    top = "".join(f'<div class="upgrade">{html_text(note)}</div>' for note in notes)
    capped = ""
    if images.linked:
        capped = (
            f'<div class="meta">The page inlines at most {budget()} of images: '
            f"{images.linked} later images load from their files in the results folder "
            "when scrolled to (keep report.html in that folder).</div>"
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
        f"<title>tlgraph snapshot failures ({count})</title><style>{style()}</style></head>"
        f"<body>{pager}<h1>tlgraph snapshot failures: {count}</h1>"
        '<div class="meta">Each failure tells what changed first, then draws it: the '
        "structural diff opens at 100% (drag to pan, wheel to zoom). Then expected (the "
        "stored snapshot) and actual (this run) side by side with the pixel diff "
        "(mismatched pixels in red, anti-aliasing in yellow), with the slider or as an "
        "onion skin. The DOT diff is folded at the end. Press <kbd>?</kbd> for the keys."
        "</div>"
        f"{capped}{top}<nav><ol>{index}</ol></nav>\n{body}\n{_help()}<script>{script()}</script>"
        "</body></html>\n"
    )


def write_html(
    records: Sequence[CallOutcome],
    root: Path,
    path: Path,
    *,
    notes: Sequence[str] = (),
    shards: Sequence[Path] = (),
) -> Path:
    """Write the report page to ``path`` (in the results folder ``root``: atomically,
    never through a link) and return it; ``shards``: the results folders a merged
    page's images lie in."""
    from pytest_tlgraph.disk.files import atomic_write

    page = render_html(records, root, notes=notes, shards=shards)
    atomic_write(path, page.encode("utf-8"), anchor=root)
    return path
