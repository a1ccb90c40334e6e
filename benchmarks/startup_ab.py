"""Start-up of two source trees side by side: the bare window, tree A and tree B, alternated.

Usage: ``python benchmarks/startup_ab.py [--runs N] BEFORE_TREE [AFTER_TREE]`` (AFTER_TREE defaults to this
checkout).  Each round starts a bare PySide6 + pyqtgraph window, then QKV Studio from each tree, with
``startup_child.py`` (the child ``run.py --only startup`` uses); printed are the medians of the wall time
to the first paint and of each child's CPU time (user + system, from ``os.wait4``), and their ratios
to the bare window.  The CPU time moves less than the wall time on a machine shared with other work: a
change that saves work shows there first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = str(HERE / "startup_child.py")


def _start(kind: str, tree: str) -> tuple[float, float]:
    env = dict(os.environ, PYQTGRAPH_QT_LIB="PySide6", PYTHONPATH=tree)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    proc = subprocess.Popen([sys.executable, CHILD, kind, repr(time.perf_counter())], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    words = out.split()
    if status != 0 or len(words) < 2 or words[0] != "FIRST_PAINT" or words[1] == "timeout":
        raise SystemExit(f"{kind} from {tree}: no first paint ({out.strip()!r}, status {status})")
    return float(words[1]), usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=str(HERE.parent))
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    kinds = {"bare": ("bare", args.after), "before": ("app", args.before), "after": ("app", args.after)}
    times: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in kinds}
    for kind, tree in kinds.values():  # warm the file cache, unmeasured
        _start(kind, tree)
    for _ in range(args.runs):
        for name, (kind, tree) in kinds.items():
            wall, cpu = _start(kind, tree)
            times[name]["wall"].append(wall)
            times[name]["cpu"].append(cpu)
    med = {k: {m: statistics.median(v) for m, v in d.items()} for k, d in times.items()}
    for name in kinds:
        m, b = med[name], med["bare"]
        print(f"{name:7s} wall {m['wall']:.3f} s ({m['wall'] / b['wall']:.2f} ×)   "
              f"cpu {m['cpu']:.3f} s ({m['cpu'] / b['cpu']:.2f} ×)")


if __name__ == "__main__":
    main()
