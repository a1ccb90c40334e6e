#!/usr/bin/env python
"""Real-model speed: loading each model, running a 20-token text through all its layers, generating a token.

    python benchmarks/model_bench.py [--model all|minilm|smollm2] [--reps 30] [--loads 5]
                                     [--precision float32|float64] [--no-naive] [--json]

all-MiniLM-L6-v2 (``minilm``):

* ``model_load_s``: the first ``load_minilm()`` in a fresh Python process that has imported
  qkv_studio.core (and so NumPy, as the app has when Run is pressed) — importing safetensors and
  tokenizers, reading config.json, tokenizer.json and the 90 MB model.safetensors, converting the
  weights — median of ``--loads`` processes (the files come from the page cache after the first).
  Budget ≤ 1 s.
* ``model_run_ms_n20``: ``MiniLM.run()`` on a sentence of exactly 20 tokens ([CLS] and [SEP]
  included): tokenizing, embeddings, 6 layers × 12 heads keeping every Q, K, V and weight matrix —
  median of ``--reps`` runs after 3 warm-ups.  Budget ≤ 50 ms.  Also printed: the fastest run and
  the median CPU time (on a busy machine, what the run costs without waiting for a core).

SmolLM2-135M-Instruct (``smollm2``), measured in a child process of its own (so its peak memory is its own):

* ``smollm2_load_s``: ``load_smollm2()`` in a fresh process once the dequantized weights are cached
  (memory-mapped .npy files in the user's cache folder) — median of ``--loads``.  Budget ≤ 1.5 s.
  Against the naive way (``smollm2_naive_load_s``, skipped with ``--no-naive``): reading and dequantizing
  the GGUF file, as a load without the cache would do.
* ``smollm2_run_ms_n20``: ``SmolLM2.run()`` on a prompt of exactly 20 tokens through all 30 blocks (every
  q, k, v and weight matrix kept) — median wall time of ``--reps``.  Budget ≤ 300 ms.
* ``smollm2_step_ms_n64``: one generated token at 64 tokens with the KV cache (``Generation.step``: the new
  row only, earlier K/V rows reused, and the next-token logits) against ``smollm2_full_ms_n64``, recomputing
  all 64 tokens (the naive way).  Budgets: ≤ 60 ms and ≥ 5× faster (``smollm2_step_speedup``, from CPU time).
* ``smollm2_peak_mb``: the child's peak resident memory with the model loaded and run.  Budget ≤ 900 MB.

The machine's load average is printed with the table: on 2 shared cores the wall times follow it; the CPU
times are what a run costs on an idle core.  ``measure()`` returns MiniLM's numbers as a dict, for
benchmarks/run.py.  Exits 2 with the install command when a model package is missing.
"""

from __future__ import annotations

import argparse
import json
import os
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
PROMPT_20 = "The lecturer pressed the arrow key, and every number on the projector changed at once, as planned."
SMOLLM2_BUDGETS = {"smollm2_load_s": 1.5, "smollm2_run_ms_n20": 300.0, "smollm2_step_ms_n64": 60.0,
                   "smollm2_peak_mb": 900.0}
SMOLLM2_MIN_SPEEDUP = 5.0


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


# ---- SmolLM2 ------------------------------------------------------------------------------------------------
def _smollm2_load_once() -> float:
    """Seconds for one load_smollm2() in a fresh process (the cache already built)."""
    code = ("import time, sys; sys.path.insert(0, sys.argv[1]); import qkv_studio.core; "
            "t = time.perf_counter(); from qkv_studio.core.models.smollm2 import load_smollm2; "
            "load_smollm2().tokenize('warm'); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _timed(f, reps: int) -> tuple[float, float]:
    """Median wall and median CPU seconds of ``reps`` calls of f."""
    wall, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def smollm2_child(reps: int, naive: bool) -> dict[str, float]:
    """The run, step and memory numbers, measured in this (fresh) process; see the module notes."""
    import numpy as np

    from qkv_studio.core.models.smollm2 import convert_gguf, gguf_path, load_smollm2

    model = load_smollm2()
    ids = model.encode(PROMPT_20)
    if len(ids) != 20:
        raise RuntimeError(f"the benchmark prompt has {len(ids)} tokens, not 20")
    for _ in range(3):
        model.run(PROMPT_20)
    run_wall, run_cpu = _timed(lambda: model.run(PROMPT_20), reps)
    prompt63 = np.resize(ids, 63)  # the prompt repeated: 63 tokens, then one generated at position 64
    gen = model.start(prompt63)

    def step():
        gen.step()
        gen.back()
    step()
    step_wall, step_cpu = _timed(step, reps)
    full_wall, full_cpu = _timed(lambda: model.forward(np.append(prompt63, 7)), max(3, reps // 3))
    results = {"smollm2_run_ms_n20": 1000 * run_wall, "smollm2_run_cpu_ms_n20": 1000 * run_cpu,
               "smollm2_step_ms_n64": 1000 * step_wall, "smollm2_step_cpu_ms_n64": 1000 * step_cpu,
               "smollm2_full_ms_n64": 1000 * full_wall, "smollm2_full_cpu_ms_n64": 1000 * full_cpu,
               "smollm2_step_speedup": full_cpu / step_cpu}
    from rss_child import peak_rss_kb  # (benchmarks/ is on the path: this file's folder)

    results["smollm2_peak_mb"] = peak_rss_kb() / 1024
    if naive:
        t = time.perf_counter()
        convert_gguf(gguf_path())
        results["smollm2_naive_load_s"] = time.perf_counter() - t
    return results


def measure_smollm2(reps: int = 20, loads: int = 5, naive: bool = True) -> dict[str, float]:
    from qkv_studio.core.models.smollm2 import load_smollm2

    load_smollm2()  # builds the cache if it is not there yet (the first run of all: 5–20 s)
    results = {"smollm2_load_s": statistics.median(_smollm2_load_once() for _ in range(loads))}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--smollm2-child", str(reps)]
                         + ([] if naive else ["--no-naive"]), capture_output=True, text=True, check=True)
    results.update(json.loads(out.stdout.strip().splitlines()[-1]))
    return results


def _print_smollm2(results: dict[str, float]) -> bool:
    rows = [("SmolLM2 load (fresh process, cached)", results["smollm2_load_s"], "s", "smollm2_load_s"),
            ("20 tokens, all 30 blocks (median)", results["smollm2_run_ms_n20"], "ms", "smollm2_run_ms_n20"),
            ("1 token with the KV cache at 64", results["smollm2_step_ms_n64"], "ms", "smollm2_step_ms_n64"),
            ("peak memory, model loaded and run", results["smollm2_peak_mb"], "MB", "smollm2_peak_mb")]
    ok = True
    for name, value, unit, key in rows:
        budget = SMOLLM2_BUDGETS[key]
        ok &= value <= budget
        print(f"{name:<38} {value:8.3f} {unit:<2}  budget ≤ {budget:g} {unit}  {'ok' if value <= budget else 'OVER'}")
    speedup = results["smollm2_step_speedup"]
    ok &= speedup >= SMOLLM2_MIN_SPEEDUP
    print(f"{'  the naive way: recompute all 64':<38} {results['smollm2_full_ms_n64']:8.3f} ms  "
          f"cached step {speedup:.1f}× faster (CPU time)  budget ≥ {SMOLLM2_MIN_SPEEDUP:g}×  "
          f"{'ok' if speedup >= SMOLLM2_MIN_SPEEDUP else 'OVER'}")
    if "smollm2_naive_load_s" in results:
        print(f"{'  the naive way: dequantize the GGUF':<38} {results['smollm2_naive_load_s']:8.3f} s")
    print(f"{'20 tokens, CPU time (median)':<38} {results['smollm2_run_cpu_ms_n20']:8.3f} ms")
    print(f"{'1 cached token / 64 recomputed, CPU':<38} {results['smollm2_step_cpu_ms_n64']:8.3f} ms / "
          f"{results['smollm2_full_cpu_ms_n64']:.3f} ms")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--model", choices=("all", "minilm", "smollm2"), default="all",
                        help="which model to measure (default all)")
    parser.add_argument("--reps", type=int, default=30, help="runs of the 20-token text (default 30)")
    parser.add_argument("--loads", type=int, default=5, help="fresh-process loads (default 5)")
    parser.add_argument("--precision", choices=("float32", "float64"), default="float32",
                        help="MiniLM's dense layers' arithmetic (default float32, as the app runs it)")
    parser.add_argument("--no-naive", action="store_true", help="skip SmolLM2's naive load (dequantizing: 5–20 s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--smollm2-child", type=int, metavar="REPS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smollm2_child is not None:
        print(json.dumps(smollm2_child(args.smollm2_child, not args.no_naive)))
        return 0
    from qkv_studio.core.models import ModelUnavailable

    results: dict[str, float] = {}
    try:
        if args.model in ("all", "minilm"):
            results.update(measure(args.reps, args.loads, args.precision))
        if args.model in ("all", "smollm2"):
            results.update(measure_smollm2(max(5, args.reps * 2 // 3), args.loads, not args.no_naive))
    except ModelUnavailable as exc:
        print(f"model_bench: {exc}", file=sys.stderr)
        return 2
    results["load_average_1min"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(results))
        return 0
    ok = True
    if "model_load_s" in results:
        rows = [("model load (fresh process)", results["model_load_s"], "s", BUDGETS["model_load_s"]),
                ("20 tokens, all 6 layers (median)", results["model_run_ms_n20"], "ms", BUDGETS["model_run_ms_n20"])]
        for name, value, unit, budget in rows:
            verdict = "ok" if value <= budget else "OVER"
            print(f"{name:<34} {value:8.3f} {unit:<2}  budget ≤ {budget:g} {unit}  {verdict}")
        print(f"{'20 tokens, all 6 layers (fastest)':<34} {results['model_run_ms_n20_min']:8.3f} ms")
        print(f"{'20 tokens, CPU time (median)':<34} {results['model_run_cpu_ms_n20']:8.3f} ms"
              "  (≈ the wall time on an idle core: a run uses one BLAS thread when threadpoolctl is installed)")
        ok &= all(results[k] <= b for k, b in BUDGETS.items())
    if "smollm2_load_s" in results:
        ok &= _print_smollm2(results)
    print(f"load average (1 min): {results['load_average_1min']:.2f} on {os.cpu_count()} cores")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
