"""The wheel holds every package: pyproject's explicit list names each folder of qkv_studio/ with code."""

from __future__ import annotations

from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent


def test_every_package_is_in_pyprojects_list():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "qkv_studio").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert {name for name in listed - found if not name.startswith("qkv_studio.resources")} == set()
