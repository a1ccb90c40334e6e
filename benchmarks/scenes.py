"""The scenes the benchmarks use: n random tokens with d_k = d_v = 64 (seeded, so runs compare)."""

import numpy as np

from qkv_studio.core import Scene


def random_scene(n: int, d: int = 64, *, seed: int = 0) -> Scene:
    """The scene (content only: the benchmarks look at it with query 0 and the stage they ask for)."""
    rng = np.random.default_rng(seed)
    return Scene.create([f"t{i}" for i in range(n)], q=rng.normal(size=(n, d)), k=rng.normal(size=(n, d)),
                        v=rng.normal(size=(n, d)))
