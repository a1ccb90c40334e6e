"""benchmarks/motion_bench.py runs (tiny, once) and prints its table — so it cannot rot (times: `make bench`)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is in the bench extra")
def test_the_motion_benchmark_runs_and_prints_every_row():
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "motion_bench.py"), "--quick"],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split("|")[1].strip() for r in rows] == ["export", "gif", "pptx", "mp4", "matplotlib gif"]
    assert "320×180, 4 fps" in proc.stdout
