"""A seeded random user on the real main window (the driver is tests/monkey_driver.py; ``make soak``
runs it for 20 000 actions).  CI runs a few hundred actions and expects no failure at all."""

import os

import numpy as np
import pytest

from tests import monkey_driver

ACTIONS = int(os.environ.get("QKV_MONKEY_ACTIONS", "500"))


@pytest.fixture
def window(qtbot):
    w = monkey_driver.make_window()
    qtbot.addWidget(w)
    qtbot.waitExposed(w)
    return w


def test_monkey_keeps_every_invariant(qtbot, window, tmp_path):
    report = monkey_driver.run(ACTIONS, seed=20240607, workdir=tmp_path, window=window)
    window.session.undo_stack.setClean()  # no close prompt at teardown
    details = "\n".join(f"action {i} ({name}): {msg}" for i, name, msg in report.failures[:10])
    assert report.failures == [], f"{len(report.failures)} failures in {report.actions} actions:\n{details}"
    assert report.actions == ACTIONS
    assert report.undo_checks >= 1 and report.autosave_checks >= ACTIONS // 50
    # every kind of action ran
    assert len(report.counts) >= 25, sorted(report.counts)


def test_the_driver_notices_a_broken_invariant(qtbot, window, tmp_path, monkeypatch):
    """The driver is only worth its green if it turns red: a heatmap that shows stale numbers."""
    monkeypatch.setattr(window.heatmap, "displayed_matrix", lambda: np.full(window.session.result.scores.shape, 0.5))
    report = monkey_driver.run(5, seed=1, workdir=tmp_path, window=window)
    window.session.undo_stack.setClean()
    assert report.failures and any("heatmap" in msg for _, _, msg in report.failures)
