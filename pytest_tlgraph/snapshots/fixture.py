"""The logic behind the ``tlgraph_snapshot`` fixture: capture, draw, render, compare, report.

Torch and the capture machinery are imported inside the call, so a test session that
never uses the fixture never imports torch.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.draw.canvas import canvas_problem, png_problem
from pytest_tlgraph.draw.request import DrawRequest
from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.snapshots.call import SnapshotCall
from pytest_tlgraph.snapshots.checks import check_draw_names, check_results_folder
from pytest_tlgraph.snapshots.collisions import Claims, claim, folded
from pytest_tlgraph.snapshots.extensions import TlgraphPairExtension
from pytest_tlgraph.snapshots.pair import PngPart, ReceivedPair
from pytest_tlgraph.snapshots.provenance import DPI, render_snapshot_png
from pytest_tlgraph.snapshots.settings import SETTING_NAMES, Settings, check_setting
from pytest_tlgraph.snapshots.syrupy_private import forget_assertions

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion
    from torch import nn

    from pytest_tlgraph.draw import Drawing
    from pytest_tlgraph.trace import Trace

__all__ = ["TlgraphSnapshot"]
#: pytest leaves this module's frames out of a failing test's traceback: a capture error
#: shows the user's frames and the cause, not the plugin's own (``--full-trace`` shows all).
__tracebackhide__ = True


class TlgraphSnapshot:
    """The callable returned by the ``tlgraph_snapshot`` fixture (one per test)."""

    def __init__(
        self,
        *,
        snapshot: SnapshotAssertion,
        settings: Settings,
        marker: Mapping[str, Any],
        nodeid: str,
        module: Path,
        claims: Claims | None = None,
    ) -> None:
        self._snapshot = snapshot
        #: The files claimed by every test of the session so far (collisions.claim).
        self._claims: Claims = {} if claims is None else claims
        self._nodeid = nodeid
        self._module = module
        self._settings = settings
        self._marker = dict(marker)
        self._calls = 0
        self._names: set[int | str] = set()
        #: The mismatch messages of this test's calls, raised together by :meth:`finish`.
        self.failures: list[str] = []
        self._files: dict[str, int | str] = {}  # case-folded file name -> snapshot index
        #: The snapshot indexes whose pair an assertion of this test has compared or kept.
        self._asserted: set[int | str] = set()
        for key in SETTING_NAMES:
            if key in self._marker:
                check_setting(key, self._marker[key], "@pytest.mark.tlgraph")
        check_draw_names(
            {k: v for k, v in self._marker.items() if k not in SETTING_NAMES},
            "@pytest.mark.tlgraph",
        )

    def __call__(
        self,
        model: nn.Module,
        inputs: Any = None,
        *,
        name: str | None = None,
        kwargs: Mapping[str, Any] | None = None,
        backward: bool = False,
        png: bool | None = None,
        renderer: str | None = None,
        threshold: float | None = None,
        max_diff_pixels: int | None = None,
        value_buffers: tuple[str, ...] | str = (),
        **draw_options: Any,
    ) -> Drawing:
        """Snapshot ``model``'s drawing: see ``pytest_tlgraph.plugin.tlgraph_snapshot``."""
        __tracebackhide__ = True
        where = _call_site()
        index = self._claim_index(name)
        per_call = {"png": png, "renderer": renderer, "threshold": threshold}
        per_call["max_diff_pixels"] = max_diff_pixels
        settings = self._resolve(per_call)
        check_draw_names(draw_options, "tlgraph_snapshot()")
        options = {
            **{k: v for k, v in self._marker.items() if k not in SETTING_NAMES},
            **draw_options,
        }
        request = DrawRequest.parse(options)  # before the capture: a bad option costs no forward
        check_results_folder(settings.results.root, self._snapshot_folder())
        call = SnapshotCall(self._snapshot, index)
        try:
            args, call_kwargs = _resolve_inputs(model, inputs, kwargs)
            trace = _capture(
                model, args, call_kwargs, backward, request.reads_magnitudes, value_buffers
            )
            from pytest_tlgraph.draw import draw_request

            drawing = draw_request(trace, request, mask_volatile=True)
            too_large = canvas_problem(drawing, DPI) if settings.png else None
            received_png = (
                call.received_png(drawing.dot, settings.renderer, force=settings.force_render)
                if settings.png and too_large is None
                else None
            )
            if received_png is not None:  # the estimate read low: refused all the same
                too_large = png_problem(received_png, "the received PNG")
                received_png = None if too_large is not None else received_png
        except BaseException:
            # A draw that failed writes nothing; its stored pair, and those of the calls
            # after it, count as used, so --snapshot-update does not delete them either.
            self.keep_stored()
            raise
        stem = settings.results.stem(self._module, call.name)
        received = ReceivedPair(
            drawing.dot,
            received_png,
            _png_part(received_png, run_png=self._settings.png, call_png=settings.png),
            threshold=settings.threshold,
            max_diff_pixels=settings.max_diff_pixels,
            update=call.update,
        )
        self._asserted.add(index)
        message = call.compare(
            drawing, received, settings, stem, self._nodeid, png_skipped=too_large
        )
        if too_large is not None and message is None:
            warnings.warn(f"{call.name}: {too_large}", stacklevel=2)
        if settings.png and too_large is None and request.volatile:
            measured_too_large = _write_measured(trace, request, stem, settings)
            if measured_too_large is not None:
                warnings.warn(f"{call.name}: {measured_too_large}", stacklevel=2)
        if message is not None:
            # Compared, recorded and written; the test goes on, so every later call is
            # compared too, and finish() fails the test once at its end.
            self.failures.append(f"{where}: {message}" if where else message)
        return drawing

    def finish(self) -> None:
        """Fail the test once, listing every mismatch of its calls (none: return)."""
        if not self.failures:
            return
        import pytest

        count = len(self.failures)
        head = (
            []
            if count == 1
            else [f"{count} of {self._calls} tlgraph_snapshot calls in this test do not match:"]
        )
        pytest.fail("\n\n".join([*head, *self.failures]), pytrace=False)

    def interrupted(self, error: BaseException) -> None:
        """The test raised before its end: the calls it never reached keep their stored
        snapshots (syrupy would report them unused, and --snapshot-update delete them),
        and the mismatches found before are added to ``error`` as notes."""
        self.keep_stored()
        if self.failures and isinstance(error, Exception):
            error.add_note(f"and {len(self.failures)} tlgraph snapshot mismatch(es) before:")
            for message in self.failures:
                error.add_note(message)

    def retire(self) -> None:
        """This attempt of the test is over and the test runs again (a rerun plugin
        such as pytest-rerunfailures): forget what the attempt reported, so the final
        attempt alone is reported, in the terminal, report.html and the summaries. Its
        failure records and artifacts are removed, and its assertions are taken out of
        syrupy's session (else syrupy counts the failed attempt's snapshots as failed)."""
        self._settings.results.forget(self._nodeid)
        forget_assertions(self._snapshot.session, self._nodeid)

    def keep_stored(self) -> None:
        """Count every stored pair of the test that no call compared as used: the test
        failed (or a call's draw raised), so none of them is known to be obsolete."""
        location = self._snapshot.test_location
        base = TlgraphPairExtension.get_snapshot_name(test_location=location, index=0)
        folder = Path(TlgraphPairExtension.dirname(test_location=location))
        for index in _stored_indexes(folder, base):
            if index not in self._asserted:
                self._asserted.add(index)
                SnapshotCall(self._snapshot, index).keep()

    def _snapshot_folder(self) -> Path:
        """The ``__snapshots__`` folder of the test module."""
        location = self._snapshot.test_location
        return Path(TlgraphPairExtension.dirname(test_location=location)).parent

    def _claim_index(self, name: str | None) -> int | str:
        """syrupy's numbering: a name, else the number of earlier calls in the test."""
        if name is not None and (not isinstance(name, str) or not name):
            raise UsageError(f"tlgraph_snapshot(name=...) must be a non-empty str, got {name!r}")
        index: int | str = name if name is not None else self._calls
        self._calls += 1
        if index in self._names:
            raise UsageError(
                f"tlgraph_snapshot: the snapshot name {index!r} is used twice in this test; "
                "give each call its own name=..."
            )
        self._names.add(index)
        location = self._snapshot.test_location
        file = TlgraphPairExtension.get_snapshot_name(test_location=location, index=index)
        other = self._files.setdefault(folded(file), index)
        if other != index:
            raise UsageError(
                f"tlgraph_snapshot: the snapshot names {other!r} and {index!r} are stored as "
                f"the same file {file!r} (file names drop characters such as / \\ : * ? "
                'and " and ignore case and Unicode normalisation on some systems); give '
                "the calls names that differ in letters or digits"
            )
        claim(
            self._claims, TlgraphPairExtension.dirname(test_location=location), file, self._nodeid
        )
        return index

    def _resolve(self, per_call: Mapping[str, Any]) -> Settings:
        changes = {}
        for key in SETTING_NAMES:
            if per_call.get(key) is not None:
                changes[key] = check_setting(key, per_call[key], "tlgraph_snapshot()")
            elif key in self._marker:
                changes[key] = self._marker[key]
        return dataclasses.replace(self._settings, **changes)


def _png_part(received_png: bytes | None, *, run_png: bool, call_png: bool) -> PngPart:
    """What the call does with its pair's PNG: compare the one drawn; keep the stored
    one when the run draws none (unless an update leaves it stale) or the size guard
    refused it; none at all when the call itself says ``png=False``."""
    if received_png is not None:
        return PngPart.COMPARED
    if call_png:
        return PngPart.KEPT  # over the size guard: the DOT is compared, the PNG stays
    return PngPart.KEPT_UNLESS_STALE if not run_png else PngPart.NONE


def _stored_indexes(folder: Path, base: str) -> list[int | str]:
    """The snapshot indexes of the pairs stored in ``folder`` for the test whose first
    snapshot is named ``base`` (``base``, ``base.2``, ``base[name]``)."""
    stems = {p.stem for p in folder.glob("*.gv")} | {p.stem for p in folder.glob("*.png")}
    found: list[int | str] = []
    for stem in sorted(stems):
        if stem == base:
            found.append(0)
        elif stem.startswith(base + ".") and stem[len(base) + 1 :].isdigit():
            found.append(int(stem[len(base) + 1 :]))
        elif stem.startswith(base + "[") and stem.endswith("]"):
            found.append(stem[len(base) + 1 : -1])
    return found


def _call_site() -> str | None:
    """``test_file.py:12``: the line of the test that called the fixture."""
    import sys

    try:
        frame = sys._getframe(2)
    except ValueError:
        return None
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"


def _resolve_inputs(
    model: Any, inputs: Any, kwargs: Mapping[str, Any] | None
) -> tuple[Any, dict[str, Any]]:
    """The call's inputs, or ``model.example_input_array`` as PyTorch Lightning reads it
    (a tuple or list is positional arguments, a dict is keyword arguments)."""
    if inputs is not None:
        return inputs, dict(kwargs or {})
    example = getattr(model, "example_input_array", None)
    if example is None:
        raise TypeError(
            f"tlgraph_snapshot({type(model).__name__}) got no inputs and the model has no "
            "example_input_array. Pass them as the second argument, e.g. "
            "tlgraph_snapshot(model, torch.randn(1, 3, 32, 32)), or set "
            "model.example_input_array to a tensor, a tuple of arguments or a dict of "
            "keyword arguments."
        )
    if isinstance(example, Mapping):
        return (), {**example, **(kwargs or {})}
    return example, dict(kwargs or {})


def _capture(
    model: Any,
    args: Any,
    kwargs: dict[str, Any],
    backward: bool,
    magnitudes: bool,
    value_buffers: tuple[str, ...] | str = (),
) -> Trace:
    """Capture in eval mode, then restore every submodule's mode and the global RNG
    (:func:`~pytest_tlgraph.capture.eval_capture.capture_in_eval_mode`, as ``tlgraph
    draw`` does); ``magnitudes``: whether a channel of the call reads them;
    ``value_buffers``: the persistent buffers drawn by value."""
    import torch

    from pytest_tlgraph.capture.eval_capture import capture_in_eval_mode

    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"tlgraph_snapshot() takes a torch.nn.Module, got {type(model).__name__}; "
            "wrap a plain function in an nn.Module whose forward calls it"
        )
    return capture_in_eval_mode(
        model,
        args,
        kwargs,
        backward=backward,
        magnitudes=magnitudes,
        value_buffers=value_buffers,
    )


def _write_measured(
    trace: Trace, request: DrawRequest, stem: Path, settings: Settings
) -> str | None:
    """Volatile channels are snapshotted masked; the measured picture goes to the
    results, through the size guard (the one-line reason it was not written, or
    ``None``)."""
    from pytest_tlgraph.draw import draw_request

    measured = draw_request(trace, request)
    problem = canvas_problem(measured, DPI)
    if problem is not None:
        return f"measured picture not written: {problem}"
    png = render_snapshot_png(measured.dot, settings.renderer)
    problem = png_problem(png, "the measured picture")
    if problem is None:
        try:
            settings.results.write_measured(stem, png)
        except OSError as error:  # a full disk (SnapshotWriteError too): one line
            reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
            return f"measured picture not written: {reason}"
    return problem
