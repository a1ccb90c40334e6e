"""The window's typed containers: every registered panel declared with its type, every action of the menu
table reachable by its id, no computed attribute on the window (issue 31 item 3)."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget

from qkv_studio.ui import registry
from qkv_studio.ui.window import actions as menu_table
from qkv_studio.ui.window import parts


def _declared() -> dict[str, type]:
    """Panels' declared types as mypy reads them: the annotations of its TYPE_CHECKING block, resolved
    through parts.py's TYPE_CHECKING imports (neither runs at run time)."""
    tree = ast.parse(inspect.getsource(parts))
    imported = {alias.asname or alias.name: getattr(importlib.import_module(node.module), alias.name)
                for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("qkv_studio.") for alias in node.names}
    panels = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Panels")
    return {node.target.id: imported[ast.unparse(node.annotation)]
            for node in ast.walk(panels) if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and not node.target.id.startswith("_")}


def test_every_registered_panel_is_declared_with_the_type_its_factory_makes(window):
    declared = _declared()
    assert set(declared) == {spec.name for spec in registry.panels()}
    for spec in registry.panels():
        panel = getattr(window.panels, spec.name)
        assert isinstance(panel, declared[spec.name]), (spec.name, type(panel), declared[spec.name])
        assert window.panels[spec.name] is panel and window.panels.built(spec.name) is panel
        if spec.docked:
            assert window.docks[spec.name] is getattr(window.docks, spec.name)
            assert isinstance(window.docks[spec.name], QDockWidget)
            assert window.docks[spec.name].objectName() == f"dock_{spec.name}"  # (saved layouts find it)


def test_every_action_of_the_table_is_reachable_by_its_id(window):
    rows = [r for r in menu_table.MENU if isinstance(r, menu_table.Action)]
    for row in rows:
        act = getattr(window.acts, row.id)
        assert isinstance(act, QAction) and window.acts[row.id] is act and row.id in window.acts
    assert window.acts.get("no_such_action") is None
    with pytest.raises(AttributeError, match="no action 'no_such_action'"):
        _ = window.acts.no_such_action
    # Qt's own QWidget.actions() is still the window's list of actions (the container has its own name)
    assert window.acts.undo in window.actions()


def test_nothing_is_attached_to_the_window_under_a_computed_name(window):
    names = set(vars(window))
    assert not any(n.startswith(("act_", "dock_")) for n in names), sorted(names)
    with pytest.raises(AttributeError, match="no dock 'nope'"):
        _ = window.docks.nope
    assert window.panels.built("model") is None  # (asking whether it is built builds nothing)
