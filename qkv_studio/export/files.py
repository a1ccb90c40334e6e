"""Export the heatmap figure or the numbers to a file, with no window on screen.

Public API::

    export_file(scene, path, *, width=None, theme=None, colormap=None, options=None,
                query=None, stages=None, motion=None, picture=None, slide=None, ink=None, compose=None) -> None
    export_bytes(scene, suffix, options, width, *, query=None, stages=None, motion=None,
                 picture=None, slide=None, ink=None, compose=None) -> bytes

``picture`` is what the file shows (:data:`qkv_studio.export.formats.PICTURES`): the heatmap figure, the
presentation ``slide`` (painted by ``slide``, a :class:`qkv_studio.export.slide.SlidePainter`) or
``slides``, a page per stage; None (the default) the format's own (a ``.pptx`` is slides already).
``ink`` (a :class:`qkv_studio.core.ink.Ink`; None: not asked for) is drawn on the slide or on each page of
the slides, then the presentation slide of its stage (``compose(stage)`` paints it); the bare figure is
laid out differently, so ink with it is refused.

The format follows the path's suffix (the registry :mod:`qkv_studio.export.formats`).  Every file is
produced in memory first and then written atomically (:mod:`qkv_studio.export.atomic`): on any
failure nothing partial is left behind and an ``OSError``/``ValueError`` says, in one line, which path
and why.  The figures themselves are :mod:`qkv_studio.export.figures`'s, one file per stage for a
slide deck :mod:`qkv_studio.export.deck`'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from qkv_studio.core import Scene
from qkv_studio.export import formats
from qkv_studio.export.atomic import reason, write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable

    from qkv_studio.core.ink import Ink
    from qkv_studio.export.slide import SlidePainter
    from qkv_studio.export.timeline import MotionOptions
    from qkv_studio.render.figure import FigureOptions


def unknown_format(path: str | os.PathLike[str], suffix: str, kind: formats.Kind | None = None) -> str:
    """``cannot export to PATH: unknown format '.txt' (use .png, .svg, …)``."""
    return (f"cannot export to {path}: unknown format {suffix or '(no suffix)'!r} "
            f"(use {', '.join(formats.suffixes(kind))})")


def export_bytes(scene: Scene, suffix: str, options: FigureOptions, width: int, *, query: int | None = None,
                 stages: tuple[str, ...] | None = None, motion: MotionOptions | None = None,
                 picture: str | None = None, slide: SlidePainter | None = None, ink: Ink | None = None,
                 compose: Callable[[str], SlidePainter] | None = None) -> bytes:
    """The contents of an export file of the given suffix (``.png`` … ``.json``): the registry's writer
    for it, given ``options`` (validated) and the PNG ``width`` (an animation's frame width); an
    animation's or a deck's ``stages`` and ``motion``; the ``ink`` of a slide; ValueError for an unknown
    suffix."""
    fmt = formats.get(suffix)
    if fmt is None:
        raise ValueError(f"unknown format {suffix or '(no suffix)'!r}: use {', '.join(formats.suffixes())}")
    write = formats.writer(fmt, picture)
    check_ink(fmt, picture, ink)
    if fmt.needs_qt:
        from qkv_studio.export.figures import ensure_app

        ensure_app()
    return write(formats.ExportJob(scene=scene, stage=options.stage, options=options, width=width,
                                   query=options.query if query is None else query, stages=stages,
                                   motion=motion, slide=slide, ink=ink, compose=compose))


def check_ink(fmt: formats.ExportFormat, picture: str | None, ink: Ink | None) -> None:
    """ValueError when ink is asked for a picture that is not the slide's (the bare figure, numbers)."""
    shown = picture if picture is not None else (formats.pictures(fmt) or ("",))[0]  # (a .pptx: slides)
    if ink is not None and shown not in ("slide", "slides"):
        raise ValueError("the ink belongs to the slide: it is drawn on the slide as the audience sees it or on "
                         "slides, a page per stage, not on the heatmap figure (laid out differently)")


def export_file(scene: Scene, path: str | os.PathLike[str], *, width: int | None = None, theme: str | None = None,
                colormap: str | None = None, options: FigureOptions | None = None, query: int | None = None,
                stages: tuple[str, ...] | None = None, motion: MotionOptions | None = None,
                picture: str | None = None, slide: SlidePainter | None = None, ink: Ink | None = None,
                compose: Callable[[str], SlidePainter] | None = None) -> None:
    """Write the figure or the numbers to ``path``; the format follows its suffix.

    ``.png`` is ``width`` pixels wide (default 1600; height follows); ``.svg``/``.pdf`` are vector
    (``width`` is ignored); ``.csv`` is the options' stage, ``.json`` every stage (with the
    options' query and stage as the view); ``.gif``/``.apng``/``.mp4`` the ``stages`` moving as
    ``motion`` says, in 16:9 frames ``width`` px wide.  ``theme`` (default light) and ``colormap``
    override those of ``options``.  ``picture="slide"`` writes the presentation slide ``slide`` paints
    (``.png``/``.svg``/``.pdf``), ``picture="slides"`` a page per stage (``.pdf``, ``.pptx``); ``ink`` is
    drawn on either (``compose(stage)`` paints each stage's slide for the pages).
    Raises ValueError (bad option, unknown suffix) or OSError ("cannot write PATH: reason"); either
    way no file, partial or temporary, is left behind.
    """
    from qkv_studio.export.figures import check_width, resolve_options

    path = Path(path)
    suffix = path.suffix.lower()
    fmt = formats.get(suffix)
    if fmt is None:
        raise ValueError(unknown_format(path, suffix))
    try:
        formats.writer(fmt, picture)
        check_ink(fmt, picture, ink)
    except ValueError as exc:
        raise ValueError(f"cannot export to {path}: {exc}") from None
    opts = resolve_options(scene, options, theme=theme, colormap=colormap)
    px = check_width(width)
    try:
        data = export_bytes(scene, suffix, opts, px, query=query, stages=stages, motion=motion, picture=picture,
                            slide=slide, ink=ink, compose=compose)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {reason(exc)}") from exc
    write_atomic(path, data)
