"""The pytest11 entry point: pytest glue only (options, ini, marker, report header, fixture).

Every option exists on the command line and in the ini file, with one precedence rule:
a per-call argument (or the test's ``tlgraph`` marker) wins over the command line,
which wins over the ini file, which wins over the default. Nothing heavy is imported
here: torch loads only when a test calls the fixture.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_tlgraph.errors import UsageError

if TYPE_CHECKING:
    from pytest_tlgraph.results.runs import Run
    from pytest_tlgraph.review.outcome import CallOutcome
    from pytest_tlgraph.snapshots.fixture import TlgraphSnapshot
    from pytest_tlgraph.snapshots.settings import Settings

__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_pyfunc_call",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_unconfigure",
    "tlgraph_snapshot",
]

_SETTINGS: Final = pytest.StashKey["Settings"]()
_DEFAULT_RENDERER: Final = pytest.StashKey[str]()
_HTML: Final = pytest.StashKey["tuple[Path, int]"]()
_HTML_ERROR: Final = pytest.StashKey[str]()
_FIXTURE: Final = pytest.StashKey["TlgraphSnapshot"]()
_FAILED: Final = pytest.StashKey[bool]()
_WARNINGS: Final = pytest.StashKey["list[str]"]()
_UPGRADE: Final = pytest.StashKey[str]()
_COLLISIONS: Final = pytest.StashKey["dict[str, str]"]()
_CLAIMS: Final = pytest.StashKey["dict[tuple[str, str], str]"]()
_RUN: Final = pytest.StashKey["Run"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--tlgraph-*`` options and their ini keys, one of each per setting
    of the table (:data:`pytest_tlgraph.snapshots.settings.SETTINGS`)."""
    from pytest_tlgraph.snapshots.settings import SETTINGS

    group = parser.getgroup("tlgraph", "tlgraph: snapshots of PyTorch model graphs")
    for spec in SETTINGS:
        if spec.kind is bool:  # a switch: on (or off, for a setting on by default)
            group.addoption(
                spec.flag, action="store_true", default=False, dest=spec.dest,
                help=spec.full_help(),
            )  # fmt: skip
        else:
            group.addoption(
                spec.flag, default=None, dest=spec.dest, help=spec.full_help(),
                type=spec.kind if spec.kind in (int, float) else None,
                choices=spec.choices or None, metavar=spec.metavar,
            )  # fmt: skip
        if spec.ini:
            parser.addini(
                spec.ini_key, ("false: " if spec.default is True else "") + spec.help, default=""
            )


def _given(config: pytest.Config, name: str) -> tuple[Any, str]:
    """The setting's value from the command line, else the ini file (``None``: not
    given), and where it came from."""
    from pytest_tlgraph.snapshots.settings import setting

    spec = setting(name)
    value = config.getoption(spec.dest)
    if spec.kind is bool:
        value = (not spec.default) if value else None
    if value is not None:
        return value, spec.flag
    if not spec.ini:
        return None, spec.flag
    try:
        return spec.parse_ini(str(config.getini(spec.ini_key))), f"ini {spec.ini_key}"
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def _settings(config: pytest.Config) -> Settings:
    from pytest_tlgraph.results.artifacts import ResultsDir
    from pytest_tlgraph.snapshots.settings import SETTING_NAMES, Settings, check_setting

    values: dict[str, Any] = {}
    for name in SETTING_NAMES:
        value, where = _given(config, name)
        if value is not None:
            try:
                values[name] = check_setting(name, value, where)
            except (TypeError, ValueError) as error:
                raise pytest.UsageError(str(error)) from None
    return Settings(
        rootdir=config.rootpath,
        results=ResultsDir(_results(config)),
        force_render=bool(_given(config, "force_render")[0]),
        summary=_summary(config),
        **values,
    )


def _results(config: pytest.Config) -> Path:
    """The results folder: a command-line path reads from where pytest was started, an
    ini path from the rootdir (as pytest's own path options do)."""
    from pytest_tlgraph.snapshots.settings import setting

    spec = setting("results")
    results, base = config.getoption(spec.dest), config.invocation_params.dir
    if results is None:
        results, base = _given(config, "results")[0] or spec.default, config.rootpath
    if "__snapshots__" in (base / results).resolve().parts:
        raise pytest.UsageError(
            f"--tlgraph-results={results} is a snapshot folder or inside one; results are "
            "cleared between runs and would overwrite baselines. Choose a folder of its own, "
            "e.g. --tlgraph-results=tlgraph-results"
        )
    return Path(base / results)


def _summary(config: pytest.Config) -> tuple[str, ...]:
    from pytest_tlgraph.review.summary import parse_kinds

    value, where = _given(config, "summary")
    try:
        return parse_kinds(value, where)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def _color(config: pytest.Config) -> bool:
    """Colour the failure message only when the terminal shows colour (NO_COLOR off)."""
    if os.environ.get("NO_COLOR"):
        return False
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return bool(reporter is not None and config.get_terminal_writer().hasmarkup)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, resolve the settings, clear the previous session's results."""
    from pytest_tlgraph.snapshots.settings import SETTING_NAMES

    config.addinivalue_line(
        "markers",
        f"tlgraph(**options): default draw options (and {', '.join(SETTING_NAMES)}) for "
        "the tlgraph_snapshot calls of a test; per-call arguments win",
    )
    settings = _settings(config)
    if _is_worker(config):
        # The controller chose the folder (its own when another run holds the shared one).
        chosen = config.workerinput.get("tlgraph_results")  # type: ignore[attr-defined]
        if chosen:
            from pytest_tlgraph.results.artifacts import ResultsDir

            settings = replace(settings, results=ResultsDir(Path(chosen)))
    else:
        from pytest_tlgraph.results.runs import start_run

        # Clears what finished runs left; never the files of a run still going.
        run = start_run(settings.results.root)
        config.stash[_RUN] = run
        settings = replace(settings, results=run.results)
    config.stash[_SETTINGS] = settings
    from pytest_tlgraph.snapshots.cleanup import RunLedger

    # Follows the run, so an update that stopped early deletes no unused snapshot.
    config.pluginmanager.register(RunLedger(config), RunLedger.NAME)
    from pytest_tlgraph import render

    # Drawing.png() inside a test uses the run's renderer too; restored at unconfigure.
    config.stash[_DEFAULT_RENDERER] = render.get_default_renderer()
    render.set_default_renderer(settings.renderer)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker writes into the folder the controller chose."""
    node.workerinput["tlgraph_results"] = str(node.config.stash[_SETTINGS].results.root)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give the results folder back; put back the renderer default this run replaced."""
    from pytest_tlgraph.snapshots.cleanup import RunLedger

    ledger = config.pluginmanager.get_plugin(RunLedger.NAME)
    if ledger is not None:
        config.pluginmanager.unregister(ledger)
    run: Run | None = config.stash.get(_RUN, None)
    if run is not None:
        from pytest_tlgraph.results.runs import end_run

        del config.stash[_RUN]
        end_run(run)
    previous = config.stash.get(_DEFAULT_RENDERER, None)
    if previous is not None:
        from pytest_tlgraph import render

        render.set_default_renderer(previous)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """``tlgraph: torch 2.13.0, renderer pure (graphviz-pure 0.2.2)``."""
    from importlib.metadata import PackageNotFoundError, version

    from pytest_tlgraph.errors import RenderError
    from pytest_tlgraph.render import renderer_version

    try:
        torch = f"torch {version('torch')}"  # read from metadata: importing torch is slow
    except PackageNotFoundError:
        torch = "torch not installed"
    settings = config.stash[_SETTINGS]
    try:
        drawn_by = renderer_version(settings.renderer)
    except RenderError as error:
        drawn_by = f"unavailable: {error}"
    png = "" if settings.png else ", PNG comparison off"
    return [f"tlgraph: {torch}, renderer {settings.renderer} ({drawn_by}){png}"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Find the selected tests whose snapshots would share a file (session wide)."""
    if any("tlgraph_snapshot" in getattr(item, "fixturenames", ()) for item in items):
        from pytest_tlgraph.snapshots.collisions import collisions

        config.stash[_COLLISIONS] = collisions(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember whether each phase of a test failed (the fixture's teardown reads it);
    a failure's traceback leaves out the plugin's own frames (``--full-trace``: all)."""
    excinfo = None if item.config.getoption("fulltrace", False) else call.excinfo
    if excinfo is not None:
        from pytest_tlgraph.snapshots.tracebacks import hide_plugin_frames, name_the_test

        hide_plugin_frames(excinfo)
    report = yield
    if excinfo is not None:
        name_the_test(report, item, excinfo)
    # A rerun (pytest-rerunfailures) starts again at setup: only its own phases count.
    before = item.stash.get(_FAILED, False) and call.when != "setup"
    item.stash[_FAILED] = before or bool(report.failed)
    return report


@pytest.fixture
def tlgraph_snapshot(request: pytest.FixtureRequest) -> Iterator[TlgraphSnapshot]:
    """Snapshot a model's graph drawing: the canonical DOT (byte for byte) and its PNG.

    ``tlgraph_snapshot(model, inputs=None, *, name=None, kwargs=None, backward=False,
    png=None, renderer=None, threshold=None, max_diff_pixels=None, value_buffers=(),
    **draw_options)`` captures ``model`` in eval mode (its ``training`` flags cleared
    directly, never through the model's own ``train()``/``eval()``, and restored after,
    as is the global RNG state), draws it with ``draw_options``, and compares with
    ``__snapshots__/<test module>/<test>[<name>].gv`` and ``.png``. ``inputs=None``
    uses ``model.example_input_array``. ``value_buffers`` names persistent buffers
    (``fnmatch`` patterns, ``"*.mask"``) drawn by value, as non-persistent buffers are.
    Unnamed calls are numbered in call order. Returns the ``Drawing``. A missing
    snapshot fails; ``--snapshot-update`` writes it.
    """
    from pytest_tlgraph.snapshots.call import base_assertion
    from pytest_tlgraph.snapshots.fixture import TlgraphSnapshot

    marker: dict[str, Any] = {}
    # The closest marker wins: apply them from the farthest (module) to the test's own.
    for mark in reversed(list(request.node.iter_markers("tlgraph"))):
        if mark.args:
            raise TypeError(
                "@pytest.mark.tlgraph takes keyword arguments only (draw options such as "
                f"color_by='flops', or png/renderer/threshold/max_diff_pixels); got {mark.args!r}"
            )
        marker.update(mark.kwargs)
    config = request.config
    previous = request.node.stash.get(_FIXTURE, None)
    if previous is not None:
        # The test runs again (a rerun plugin): its final attempt alone is reported.
        previous.retire()
    # Printed paths are relative to the folder pytest was started in.
    where = config.invocation_params.dir
    settings = replace(
        config.stash[_SETTINGS], color=_color(config), rootdir=where, project=config.rootpath
    )
    module = Path(request.node.path)
    if module.is_relative_to(config.rootpath):
        module = module.relative_to(config.rootpath)
    fixture = TlgraphSnapshot(
        snapshot=base_assertion(request),
        settings=settings,
        marker=marker,
        nodeid=request.node.nodeid,
        module=module,
        claims=config.stash.setdefault(_CLAIMS, {}),
    )
    request.node.stash[_FIXTURE] = fixture
    collision = config.stash.get(_COLLISIONS, {}).get(request.node.nodeid)
    if collision is not None:  # another test stores the same files: neither writes
        fixture.keep_stored()
        raise UsageError(collision)
    yield fixture
    if request.node.stash.get(_FAILED, True):
        # A failed test (even one that failed before its first call) proves none of its
        # snapshots obsolete: --snapshot-update keeps its .gv and .png, together.
        fixture.keep_stored()


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Every ``tlgraph_snapshot`` call of a test is compared; the test fails once, at its
    end, listing every mismatch (docs/decisions.md, "Failures a reviewer can act on (0.2)")."""
    try:
        result = yield
    except BaseException as error:
        fixture = pyfuncitem.stash.get(_FIXTURE, None)
        if fixture is not None:
            fixture.interrupted(error)
        raise
    fixture = pyfuncitem.stash.get(_FIXTURE, None)
    if fixture is not None:
        fixture.finish()
    return result


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write report.html once, on the controller (or the only process), from the records
    every worker left."""
    config = session.config
    if _is_worker(config) or _SETTINGS not in config.stash:
        return
    from pytest_tlgraph.review.html import write_html
    from pytest_tlgraph.review.pending import pending_calls

    settings = config.stash[_SETTINGS]
    results = settings.results
    records = [entry.outcome for entry in pending_calls(results.root)]
    path = None
    if records:
        target = results.report_path()
        try:
            results.note_written(target)
            notes = _upgrade_notes(records)
            if notes:
                config.stash[_UPGRADE] = notes[0]
            path = write_html(records, results.root, target, notes=notes)
            results.note_written(path)  # with its stamp: the next run deletes only it
            config.stash[_HTML] = (path, len(records))
        except OSError as error:  # a full disk: one line at the end, never a traceback
            from pytest_tlgraph.disk.files import SnapshotWriteError

            path = None
            config.stash[_HTML_ERROR] = "report.html not written: " + (
                str(error)
                if isinstance(error, SnapshotWriteError)
                else f"could not write {target}: {error.strerror or error}; free space "
                "or make the folder writable and run again"
            )
    if settings.summary:
        from pytest_tlgraph.review.summary import write_summaries

        # Never fails the run: a summary that cannot be written is a warning line.
        config.stash[_WARNINGS] = write_summaries(results, settings.summary, report=path)


def _upgrade_notes(records: list[CallOutcome]) -> list[str]:
    """The page's line when every failure is of a kind an upgrade causes."""
    from pytest_tlgraph.review.drift import run_upgrade_line

    line = run_upgrade_line(records)
    return [] if line is None else [line]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Point at the HTML report when snapshots failed; one line per summary that could
    not be written."""
    found = config.stash.get(_HTML, None)
    run = config.stash.get(_RUN, None)
    warned = [*(run.warnings if run is not None else ()), *config.stash.get(_WARNINGS, [])]
    unwritten = config.stash.get(_HTML_ERROR, None)
    if found is not None or warned or unwritten is not None:
        terminalreporter.write_sep("-", "tlgraph")
    from pytest_tlgraph.escaping import terminal

    if unwritten is not None:
        terminalreporter.write_line(terminal(f"tlgraph: {unwritten}"))
    if found is not None:
        path, count = found
        from pytest_tlgraph.snapshots.call import display_path

        shown = display_path(path, config.invocation_params.dir)
        terminalreporter.write_line(
            terminal(f"{count} snapshot failure{'s' if count != 1 else ''}; report: {shown}")
        )
    upgrade = config.stash.get(_UPGRADE, None)
    if upgrade is not None:  # said once for the whole run
        terminalreporter.write_line(terminal(f"tlgraph: {upgrade}"), yellow=True)
    for line in warned:
        terminalreporter.write_line(terminal(line), yellow=True)
