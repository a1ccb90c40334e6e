"""The presenter view on two screens (issue 23): tests/ui/window/two_screens_cases.py run in a pytest of
its own under Qt's offscreen platform with a laptop screen and a projector (one process has one
platform, so they cannot run in this one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CASES = Path(__file__).with_name("two_screens_cases.py")


@pytest.fixture
def two_screens(tmp_path) -> Path:
    """An offscreen configuration with two screens: the laptop (primary) and the projector at its right."""
    cfg = tmp_path / "screens.json"
    cfg.write_text(json.dumps({"screens": [
        {"name": "laptop", "x": 0, "y": 0, "width": 1280, "height": 720, "logicalDpi": 96, "logicalBaseDpi": 96,
         "dpr": 1},
        {"name": "projector", "x": 1280, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96,
         "logicalBaseDpi": 96, "dpr": 1},
    ]}))
    return cfg


def test_the_presenter_view_on_two_screens(two_screens, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={two_screens}", PYTHONPATH=str(ROOT))
    env.pop("QT_SCALE_FACTOR", None)
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(CASES)], env=env, capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert re.search(r"\b6 passed", res.stdout), res.stdout[-2000:]  # (every case ran: none skipped)
