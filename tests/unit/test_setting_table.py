"""Every setting of a run is declared once (``snapshots.settings.SETTINGS``): its flag,
ini key, help and default come from the table, and nothing else writes them again."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.render import RENDERERS
from pytest_tlgraph.snapshots.pair import PngPart, ReceivedPair
from pytest_tlgraph.snapshots.settings import (
    SETTING_NAMES,
    SETTINGS,
    Settings,
    check_setting,
    setting,
)

pytest_plugins = ["pytester"]


def test_the_run_defaults_are_the_table_s() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(Settings)}
    compared = ("renderer", "png", "threshold", "max_diff_pixels", "force_render")
    for name in compared:
        assert defaults[name] == setting(name).default, name
    received = ReceivedPair("digraph tlgraph {}", None, PngPart.NONE)
    assert received.threshold == setting("threshold").default
    assert received.max_diff_pixels == setting("max_diff_pixels").default
    from pytest_tlgraph.pixels.pixeldiff import compare_png

    keywords = inspect.signature(compare_png).parameters
    assert keywords["threshold"].default == setting("threshold").default
    assert setting("renderer").choices == RENDERERS


def test_the_per_call_settings_are_the_fixture_s_keywords() -> None:
    from pytest_tlgraph.snapshots.fixture import TlgraphSnapshot

    keywords = inspect.signature(TlgraphSnapshot.__call__).parameters
    assert set(SETTING_NAMES) == {"png", "renderer", "threshold", "max_diff_pixels"}
    assert set(SETTING_NAMES) <= keywords.keys()


@pytest.mark.parametrize(
    ("name", "value", "error", "said"),
    [
        ("png", "no", TypeError, "png must be True or False"),
        ("renderer", "cairo", UsageError, "renderer must be 'pure' or 'system'"),
        ("threshold", 1.5, UsageError, "threshold must be a number from 0 to 1"),
        ("threshold", True, UsageError, "threshold must be a number from 0 to 1"),
        ("max_diff_pixels", -1, UsageError, "max_diff_pixels must be an int >= 0"),
        ("max_diff_pixels", 2.0, UsageError, "max_diff_pixels must be an int >= 0"),
    ],
)
def test_one_check_per_setting_names_where_the_value_came_from(
    name: str, value: object, error: type[Exception], said: str
) -> None:
    with pytest.raises(error, match=f"^here: {said}, got"):
        check_setting(name, value, "here")


def test_good_values_pass_as_the_run_reads_them() -> None:
    assert check_setting("threshold", 0, "here") == 0.0
    assert isinstance(check_setting("threshold", 1, "here"), float)
    assert check_setting("max_diff_pixels", 5, "here") == 5
    assert check_setting("renderer", "system", "here") == "system"


def test_every_setting_has_its_flag_and_ini_key(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    text = result.stdout.str()
    for spec in SETTINGS:
        assert spec.flag in text, spec.flag
        if spec.ini:
            assert spec.ini_key in text, spec.ini_key
    flat = " ".join(text.split())  # argparse wraps the help lines
    assert "pixelmatch per-pixel colour threshold, 0 to 1 (default 0.1)" in flat


def test_the_docs_list_the_settings_from_the_table() -> None:
    from pathlib import Path

    from pytest_tlgraph.snapshots.settings import markdown_table

    root = Path(__file__).resolve().parents[2]
    for doc in ("docs/usage.md", "docs/guide.md"):
        assert markdown_table() in (root / doc).read_text(encoding="utf-8"), doc
