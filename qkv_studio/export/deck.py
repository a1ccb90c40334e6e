"""All stages at once, one figure file each, numbered for a slide deck (``lesson-1-scores.png`` …).

Public API::

    deck_paths(base_path) -> list[Path]
    export_all_stages(scene, base_path, *, width=None, theme=None, colormap=None, options=None) -> list[Path]
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from qkv_studio.core import Scene
from qkv_studio.core.stages import DECK_STAGES
from qkv_studio.export import formats
from qkv_studio.export.atomic import reason, unlink_quietly, write_temp
from qkv_studio.export.figures import check_width, resolve_options
from qkv_studio.export.files import export_bytes
from qkv_studio.render.figure import FigureOptions

# DECK_STAGES (from the stage registry: its ``in_deck`` stages) are the stages export_all_stages writes,
# numbered 1… in order; ``vectors`` is left out, its figure would repeat the scores.


def deck_paths(base_path: str | os.PathLike[str]) -> list[Path]:
    """The files :func:`export_all_stages` writes for ``base_path``: ``name-1-scores.png`` …"""
    base = Path(base_path)
    suffix = base.suffix.lower()
    fmt = formats.get(suffix)
    if fmt is not None and fmt.kind == "figure":
        stem = base.with_suffix("")
    elif fmt is not None:
        raise ValueError(f"cannot export stage images to {base}: use {formats.spelled(formats.suffixes('figure'))}")
    else:  # no suffix (or a dot inside the name, "fig.v2"): PNG
        stem, suffix = base, ".png"
    return [stem.with_name(f"{stem.name}-{i}-{stage}{suffix}") for i, stage in enumerate(DECK_STAGES, 1)]


def export_all_stages(scene: Scene, base_path: str | os.PathLike[str], *, width: int | None = None,
                      theme: str | None = None, colormap: str | None = None,
                      options: FigureOptions | None = None) -> list[Path]:
    """One figure per stage, numbered in stage order, for a slide deck; returns the paths written.

    ``deck/attn.png`` gives ``deck/attn-1-scores.png``, ``-2-scaled``, ``-3-weights``,
    ``-4-output`` (``.svg``/``.pdf`` likewise; no suffix means PNG).  ``vectors`` has no heatmap of
    its own (it would repeat the scores) and is skipped, so numbering starts at scores = 1.  Every
    figure is rendered before anything is written; if writing fails, the files of this call are
    removed again.
    """
    paths = deck_paths(base_path)
    base_opts = resolve_options(scene, options, theme=theme, colormap=colormap)
    px = check_width(width)
    contents = []
    for path, stage in zip(paths, DECK_STAGES, strict=False):
        try:
            contents.append(export_bytes(scene, path.suffix, replace(base_opts, stage=stage), px))
        except OSError as exc:
            raise OSError(f"cannot write {path}: {reason(exc)}") from exc
    temps: list[str] = []
    done: list[Path] = []
    current = paths[0]
    try:
        for path, data in zip(paths, contents, strict=False):
            current = path
            temps.append(write_temp(path, data))
        for path, tmp in zip(paths, temps, strict=False):
            current = path
            os.replace(tmp, path)
            done.append(path)
    except OSError as exc:
        for tmp in temps:
            unlink_quietly(tmp)
        for path in done:
            unlink_quietly(path)
        raise OSError(f"cannot write {current}: {reason(exc)}") from exc
    return paths
