"""Exporting figures and numbers to files: the format registry (:mod:`.formats`), the writers
(:mod:`.figures`, :mod:`.png`, :mod:`.numbers`), one file (:mod:`.files`), a deck of all stages
(:mod:`.deck`) and the atomic writing they share (:mod:`.atomic`).

The package is also the function ``qkv_studio.export(scene, path, …)`` of the Python API:
``qkv_studio.export`` names this package once anything under it is imported, so the package is made
callable — calling it is :func:`.script.export`.
"""

import sys
import types
from pathlib import Path
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Path:
        from qkv_studio.export.script import export

        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
