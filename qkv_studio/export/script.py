"""``qkv_studio.export(scene, path, …)``: the command line's export, for scripts and notebooks.

The format follows the suffix of ``path`` through the export-format registry (:mod:`.formats`), so a
new format is offered here as on the command line.  Numbers formats are written without loading Qt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from qkv_studio.core.scene import Scene
from qkv_studio.core.sessionfile import atomic_write
from qkv_studio.core.view import View
from qkv_studio.export import formats


def export(scene: Scene, path: str | os.PathLike[str], *, stage: str | None = None, query: int | str | None = None,
           mask: Any = None, scale: bool | None = None, width: int | None = None, theme: str = "light",
           colormap: str = "viridis", heading: str = "") -> Path:
    """Write ``scene`` as ``qkv-studio export`` would: the format follows the suffix of ``path``.

    ``.png`` (``width`` pixels wide, default 1600), ``.svg``, ``.pdf`` (the heatmap figure of ``stage``),
    ``.csv`` (that stage's numbers), ``.json`` (every stage), ``.html`` (the interactive page, opening on
``stage`` and ``query``), and any other registered format.
    ``stage``, ``query`` (an index or a token's name), ``mask`` ("none", "causal" or a boolean matrix) and
    ``scale`` (False: no ÷√d_k) change the scene first, as ``--stage``, ``--query``, ``--mask`` and
    ``--unscaled`` do; ``theme`` and ``colormap`` as their options.  The bytes are the command line's for
    the same scene and options.  Returns the path.

    Raises :class:`~qkv_studio.core.scene.SceneError` for a bad option of the scene, ValueError (bad
    suffix, width, theme) or OSError ("cannot write PATH: reason"), each one line; no partial file is
    left behind.
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"export() takes a Scene (e.g. Scene.from_arrays(q, k, v)), not {type(scene).__name__}")
    out = Path(path)
    fmt = formats.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"cannot write {str(out)!r}: the name must end in {formats.spelled(formats.suffixes())}")
    view = View()
    if stage is not None:
        view = view.with_stage(stage).check(scene)
    if query is not None:
        view = view.with_query(scene.find_token(query))
    if mask is not None:
        scene = scene.with_mask(mask)
    if scale is not None:
        scene = scene.with_scale(scale)
    if not fmt.needs_qt:  # numbers, the interactive page: as the command line writes them, Qt is never loaded
        atomic_write(out, fmt.write(formats.ExportJob(scene=scene, stage=view.stage, query=view.query)))
        return out
    from qkv_studio.export.files import export_file
    from qkv_studio.render.figure import FigureOptions

    export_file(scene, out, width=width, theme=theme, colormap=colormap,
                options=FigureOptions(stage=view.stage, query=view.query, heading=heading))
    return out
