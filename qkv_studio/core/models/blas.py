"""One BLAS thread while a model runs (NumPy only; threadpoolctl when it is installed).

A model's forward pass is many small matrix products: on a 2-core machine OpenBLAS's own threads
cost more in hand-offs than they win, and they would compete with the window's thread.  The
controller inspects the loaded BLAS libraries once (it is slow), then limits them per call.
"""

from __future__ import annotations

import contextlib
from typing import Any

_CONTROLLER: Any = None  # threadpoolctl's controller, False when threadpoolctl is missing or cannot inspect


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """A context manager that runs its block with one BLAS thread (a no-op without threadpoolctl).

    Called once without ``with``, it inspects the libraries now rather than in the first run."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER = ThreadpoolController()
        except Exception:  # noqa: BLE001 - not installed, or it could not inspect the libraries
            _CONTROLLER = False
    if not _CONTROLLER:
        return contextlib.nullcontext()
    limited: contextlib.AbstractContextManager[object] = _CONTROLLER.limit(limits=1, user_api="blas")
    return limited
