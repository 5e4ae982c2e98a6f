"""The house's function-length budget (``scripts/house.py``): no function or method of the
package spans more than 80 lines, ``def`` line to last line."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("house", ROOT / "scripts" / "house.py")
assert _spec is not None and _spec.loader is not None
house = importlib.util.module_from_spec(_spec)
sys.modules["house"] = house  # dataclasses resolve the module by name
_spec.loader.exec_module(house)


def _function(name: str, body_lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines - 1))
    return f"{indent}def {name}():\n{body}"


def test_no_function_in_the_package_is_over_80_lines() -> None:
    long = house.long_functions(ROOT / "pytest_tlgraph")
    assert not long, "split these functions (at most 80 lines each):\n" + "\n".join(
        f"  {f.path}:{f.line} {f.name}: {f.lines} lines" for f in long
    )


def test_the_check_finds_long_functions_methods_and_nested_ones(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text(_function("fits", 80), encoding="utf-8")
    method = "class Box:\n" + _function("method", 81, "    ")
    nested = "def outer():\n" + _function("inner", 90, "    ") + "    return inner\n"
    (package / "sub" / "mod.py").write_text(method + "\n\n" + nested, encoding="utf-8")
    found = [(f.path, f.name, f.lines) for f in house.long_functions(package)]
    assert found == [
        ("pkg/sub/mod.py", "outer", 92),
        ("pkg/sub/mod.py", "outer.inner", 90),
        ("pkg/sub/mod.py", "Box.method", 81),
    ]


def test_decorators_do_not_count(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    decorated = "import functools\n\n\n" + "@functools.cache\n" * 5 + _function("f", 80)
    (package / "mod.py").write_text(textwrap.dedent(decorated), encoding="utf-8")
    assert house.long_functions(package) == []
