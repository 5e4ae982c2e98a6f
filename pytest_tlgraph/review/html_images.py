"""The images of ``report.html``: each one inlined once, as a base64 data URI, up to the
page's budget; past it, linked by its path relative to the page (the page lies in the
folder the paths are relative to) and loaded lazily, when scrolled near.

The same picture is often shown more than once (the slider and the onion skin show the
expected and actual images again; a small graph's context diff may be its whole
graph), and a data URI is a third larger than its PNG. So the first ``<img>`` of a
picture carries the data URI and an ``id``; every later one names it by
``data-same`` and the page's script copies the ``src`` when it is shown
(:mod:`pytest_tlgraph.review.html_assets`).
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from pytest_tlgraph.escaping import html_text

__all__ = ["MAX_INLINED_BYTES", "Inlined", "InlinedImages", "budget"]

#: The page inlines at most this many bytes of images (data URIs): past it, an image is
#: linked from the results folder and loaded lazily, and the page says so. 500 failing
#: calls stay one page of bounded size.
MAX_INLINED_BYTES = 24 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Inlined:
    """One picture of the page: its ``<img>`` id, its size in pixels and its source: a
    data URI, or (``linked``) its path relative to the page."""

    ident: str
    width: int
    height: int
    uri: str
    linked: bool = False

    def tag(self, alt: str, *, first: bool, **extra: str) -> str:
        """An ``<img>`` of the picture: with its data URI when ``first``, else naming
        the first by ``data-same``; ``extra`` are more attributes (``class_`` for
        ``class``), empty ones left out."""
        attrs = [f'alt="{html_text(alt)}"', f'data-w="{self.width}"', f'data-h="{self.height}"']
        attrs += [f'{k.rstrip("_")}="{html_text(v)}"' for k, v in extra.items() if v]
        if self.linked:  # every <img> names the file: the browser fetches it once
            attrs[:0] = [f'src="{html_text(self.uri)}"', 'loading="lazy"']
        elif first:
            attrs[:0] = [f'id="{self.ident}"', f'src="{self.uri}"']
        else:
            attrs.insert(0, f'data-same="{self.ident}"')
        return "<img " + " ".join(attrs) + ">"


def budget() -> str:
    """:data:`MAX_INLINED_BYTES` as the page states it (``24 MB``)."""
    if MAX_INLINED_BYTES >= 1024 * 1024:
        return f"{MAX_INLINED_BYTES // (1024 * 1024)} MB"
    return f"{MAX_INLINED_BYTES // 1024} KB"


class InlinedImages:
    """The pictures of one page, read from the results folder ``root``."""

    def __init__(self, root: Path, shards: Sequence[Path] = ()) -> None:
        self.root = root
        #: The results folders a merged page reads images from (``../shard/x.png``).
        self.shards = tuple(shards)
        self._by_hash: dict[str, Inlined] = {}
        self._shown: set[str] = set()
        self._inlined = 0
        #: How many images are linked (loaded from their files) once the budget was spent.
        self.linked = 0

    def get(self, rel: str) -> tuple[Inlined | None, str]:
        """The picture at ``rel``, or ``None`` and why it is not inlined: missing,
        outside the results folder, not a regular file, or over the size guard's
        limits (whatever wrote it, the page never carries such an image)."""
        from pytest_tlgraph.disk.bounded import read_regular
        from pytest_tlgraph.draw.canvas import png_problem
        from pytest_tlgraph.pixels.pngmeta import read_png_size

        path = self._place(rel)
        if path is None:  # a record naming ../x.png or /etc/x.png: never opened
            return None, "(not shown: the record names an image outside the results folder)"
        try:  # a regular file of bounded size, never through a link
            data = read_regular(path, follow=False)
        except FileNotFoundError:
            return None, "(image missing)"
        except OSError as error:
            return None, f"(not shown: {error})"
        problem = png_problem(data, "image", "open the file instead")
        if problem is not None:
            return None, f"({problem}: {path.name})"
        size = read_png_size(data)
        if size is None:
            return None, f"(not a PNG: {path.name})"
        digest = hashlib.sha256(data).hexdigest()
        found = self._by_hash.get(digest)
        if found is None:
            ident = f"img{len(self._by_hash) + 1}"
            cost = (len(data) + 2) // 3 * 4
            if self._inlined + cost > MAX_INLINED_BYTES:
                self.linked += 1
                found = Inlined(ident, size[0], size[1], quote(rel), linked=True)
            else:
                self._inlined += cost
                uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
                found = Inlined(ident, size[0], size[1], uri)
            self._by_hash[digest] = found
        return found, ""

    def _place(self, rel: object) -> Path | None:
        """The file ``rel`` names (relative to the page's folder) when it lies inside
        the page's folder or one of its shards' (``artifacts.inside``), else ``None``."""
        from pytest_tlgraph.results.artifacts import inside

        found = inside(self.root, rel)
        if found is not None or not isinstance(rel, str) or Path(rel).is_absolute():
            return found
        target = os.path.normpath(os.path.join(os.path.abspath(self.root), rel))
        for shard in self.shards:
            base = os.path.abspath(shard)
            if os.path.commonpath([target, base]) == base and target != base:
                return inside(shard, Path(os.path.relpath(target, base)).as_posix())
        return None

    def tag(self, picture: Inlined, alt: str, **extra: str) -> str:
        """An ``<img>`` of ``picture`` (``extra``: more attributes, see
        :meth:`Inlined.tag`): the first one of the page carries the data URI."""
        first = picture.ident not in self._shown
        self._shown.add(picture.ident)
        return picture.tag(alt, first=first, **extra)
