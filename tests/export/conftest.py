"""Fixtures shared by the export tests."""

import pytest


@pytest.fixture(autouse=True)
def _app(qapp):
    """A QApplication before any export (export_file alone would make a QGuiApplication, and widgets abort)."""
    return qapp
