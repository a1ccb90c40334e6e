#!/usr/bin/env python
"""Real-model speed: loading all-MiniLM-L6-v2 and running a 20-token sentence through all 6 layers.

    python benchmarks/model_bench.py [--reps 30] [--loads 5] [--precision float32|float64] [--json]

* ``model_load_s``: the first ``load_minilm()`` in a fresh Python process that has imported
  qkv_studio.core (and so NumPy, as the app has when Run is pressed) — importing safetensors and
  tokenizers, reading config.json, tokenizer.json and the 90 MB model.safetensors, converting the
  weights — median of ``--loads`` processes (the files come from the page cache after the first).
  Budget ≤ 1 s.
* ``model_run_ms_n20``: ``MiniLM.run()`` on a sentence of exactly 20 tokens ([CLS] and [SEP]
  included): tokenizing, embeddings, 6 layers × 12 heads keeping every Q, K, V and weight matrix —
  median of ``--reps`` runs after 3 warm-ups.  Budget ≤ 50 ms.  Also printed: the fastest run and
  the median CPU time (on a busy machine, what the run costs without waiting for a core).

``measure()`` returns the same numbers as a dict, for benchmarks/run.py.  Exits 2 with the install
command when the model package is missing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SENTENCE_20 = "The lecturer pressed the arrow key, and every number on the projector changed at once."
BUDGETS = {"model_load_s": 1.0, "model_run_ms_n20": 50.0}


def _load_once(precision: str) -> float:
    """Seconds for one cold load_minilm() in a fresh process."""
    code = ("import time, sys; sys.path.insert(0, sys.argv[1]); "
            "from qkv_studio.core.models import load_minilm; t = time.perf_counter(); "
            "load_minilm(precision=sys.argv[2]); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code, str(REPO), precision], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def measure(reps: int = 30, loads: int = 5, precision: str = "float32") -> dict[str, float]:
    from qkv_studio.core.models import load_minilm

    load_s = statistics.median(_load_once(precision) for _ in range(loads))
    model = load_minilm(precision=precision)
    n = model.run(SENTENCE_20).n
    if n != 20:
        raise RuntimeError(f"the benchmark sentence has {n} tokens, not 20")
    for _ in range(3):
        model.run(SENTENCE_20)
    times, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        model.run(SENTENCE_20)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return {"model_load_s": load_s, "model_run_ms_n20": 1000 * statistics.median(times),
            "model_run_ms_n20_min": 1000 * min(times), "model_run_cpu_ms_n20": 1000 * statistics.median(cpu)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="runs of the 20-token sentence (default 30)")
    parser.add_argument("--loads", type=int, default=5, help="fresh-process loads (default 5)")
    parser.add_argument("--precision", choices=("float32", "float64"), default="float32",
                        help="the dense layers' arithmetic (default float32, as the app runs it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    from qkv_studio.core.models import ModelUnavailable

    try:
        results = measure(args.reps, args.loads, args.precision)
    except ModelUnavailable as exc:
        print(f"model_bench: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(results))
        return 0
    rows = [("model load (fresh process)", results["model_load_s"], "s", BUDGETS["model_load_s"]),
            ("20 tokens, all 6 layers (median)", results["model_run_ms_n20"], "ms", BUDGETS["model_run_ms_n20"])]
    for name, value, unit, budget in rows:
        verdict = "ok" if value <= budget else "OVER"
        print(f"{name:<34} {value:8.3f} {unit:<2}  budget ≤ {budget:g} {unit}  {verdict}")
    print(f"{'20 tokens, all 6 layers (fastest)':<34} {results['model_run_ms_n20_min']:8.3f} ms")
    print(f"{'20 tokens, CPU time (median)':<34} {results['model_run_cpu_ms_n20']:8.3f} ms"
          "  (≈ the wall time on an idle core: a run uses one BLAS thread when threadpoolctl is installed)")
    return 0 if all(results[k] <= b for k, b in BUDGETS.items()) else 1


if __name__ == "__main__":
    sys.exit(main())
