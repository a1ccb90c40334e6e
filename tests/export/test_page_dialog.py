"""File → Export heatmap… offers the interactive page (issue 33 item 1): it writes the window's scene as
it is on screen — every head of it, the query, the stage — and says why when it cannot."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from qkv_studio.core import View, load_preset
from qkv_studio.core.scene import Scene
from qkv_studio.export.page import MAX_PAGE_TOKENS
from qkv_studio.ui.dialogs.export_dialog import ExportDialog
from qkv_studio.ui.window.main_window import MainWindow


@pytest.fixture(autouse=True)
def _fresh_settings():
    QSettings().clear()
    yield
    QSettings().clear()


def _entry(path):
    html = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="qkv-data">(.*?)</script>', html, re.S).group(1))["scenes"][0]


def test_dialog_offers_and_writes_the_page(qtbot, tmp_path):
    window = MainWindow(load_preset("multihead"), view=View(query=3, stage="weights", head=1))
    qtbot.addWidget(window)
    dialog = ExportDialog(window)
    qtbot.addWidget(dialog)
    index = dialog.format_combo.findData(".html")
    assert index >= 0 and "Interactive page" in dialog.format_combo.itemText(index)
    dialog.format_combo.setCurrentIndex(index)
    dialog.stage_combo.setCurrentIndex(dialog.stage_combo.findData("scores"))  # (the window shows the weights)
    written = dialog.export_to(tmp_path / "lecture.html")
    assert written == [tmp_path / "lecture.html"]
    entry = _entry(written[0])
    assert (entry["query"], entry["stage"], entry["head"], entry["heads"]) == (3, "scores", 1, 2)
    assert entry["tokens"] == list(load_preset("multihead").tokens)


def test_dialog_says_why_a_scene_cannot_be_a_page(qtbot, tmp_path, monkeypatch):
    n = MAX_PAGE_TOKENS + 1
    window = MainWindow(Scene.from_arrays(np.ones((n, 2)), np.ones((n, 2)), np.ones((n, 2))))
    qtbot.addWidget(window)
    dialog = ExportDialog(window)
    qtbot.addWidget(dialog)
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".html"))
    told = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: told.append(args[2]))
    assert dialog.export_to(tmp_path / "big.html") == []
    assert told and f"at most {MAX_PAGE_TOKENS} tokens" in told[0]
    assert not (tmp_path / "big.html").exists()
