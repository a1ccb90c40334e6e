"""Exports (figures and numbers); the package itself is also the function ``qkv_studio.export(scene, path, …)``.

``qkv_studio.export`` names this package once anything under it is imported, so the package is made
callable: calling it is :func:`qkv_studio.api.export` (the Python API's exporter).
"""

import sys
import types


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from qkv_studio.api import export

        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
