"""Widgets of the QKV Studio window: each binds to the Session, none holds maths."""

import os

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
