"""Export the heatmap figure (PNG, SVG, PDF) and the numbers (CSV, JSON), with no window on screen.

Public API::

    ensure_app() -> QGuiApplication
    figure_image(scene, options=None, width=1600) -> QImage            # e.g. for the clipboard
    export_file(scene, path, *, width=None, theme=None, colormap=None, options=None) -> None
    export_all_stages(scene, base_path, *, width=None, theme=None, colormap=None, options=None) -> list[Path]

The format follows the path's suffix (:data:`FORMATS`).  The figure is drawn by
:mod:`qkv_studio.render.figure` straight onto a ``QImage``, a ``QSvgGenerator`` or a ``QPdfWriter``
(never pyqtgraph's SVG exporter, which is broken on PySide6 ≥ 6.11): in SVG and PDF the labels and
values are text and the cells are shapes.  Every file is produced in memory first and then written
atomically (a temporary file in the same folder, then ``os.replace``): on any failure nothing partial
is left behind and an ``OSError``/``ValueError`` says, in one line, which path and why.
"""

from __future__ import annotations

import math
import os
import struct
import sys
import tempfile
import zlib
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QIODevice, QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import QGuiApplication, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter

from qkv_studio.core import Scene
from qkv_studio.core.stages import DECK_STAGES
from qkv_studio.render.figure import (
    FigureOptions, background_color, figure_size, figure_title, paint_figure, render_image,
)

IMAGE_FORMATS = (".png", ".svg", ".pdf")
NUMBER_FORMATS = (".csv", ".json")
FORMATS = IMAGE_FORMATS + NUMBER_FORMATS
DEFAULT_WIDTH = 1600
# DECK_STAGES (from the stage registry: its ``in_deck`` stages) are the stages export_all_stages writes,
# numbered 1… in order; ``vectors`` is left out, its figure would repeat the scores.
#: A PDF point per logical figure pixel (CSS's 96 px = 72 pt), so a 540 px figure is a 405 pt page.
PT_PER_PX = 0.75
_PDF_DPI = 1200

_APP: QGuiApplication | None = None


def ensure_app() -> QGuiApplication:
    """The running QGuiApplication, creating one if there is none (fonts and QPainter text need it).

    Without a display (Linux with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY``) and with
    ``QT_QPA_PLATFORM`` unset, the ``offscreen`` platform is chosen, so exporting works in a terminal,
    over SSH or in CI.
    """
    global _APP
    app = QCoreApplication.instance()
    if app is None:
        headless = sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        if headless and not os.environ.get("QT_QPA_PLATFORM"):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        app = QGuiApplication([sys.argv[0] if sys.argv and sys.argv[0] else "qkv-studio"])
        _APP = app  # keep it alive for the life of the process
    if not isinstance(app, QGuiApplication):
        raise RuntimeError("a QCoreApplication is running, but drawing figures needs a QGuiApplication")
    return app


# ---- options ----------------------------------------------------------------------------------
def resolve_options(scene: Scene, options: FigureOptions | None = None, *, theme: str | None = None,
                    colormap: str | None = None) -> FigureOptions:
    """``options`` (default: the scene's stage, light theme) with ``theme``/``colormap`` applied when
    given; ValueError for an unknown stage, theme, background or colormap."""
    opts = options if options is not None else FigureOptions(stage=scene.stage)
    changes = {}
    if theme is not None:
        changes["theme"] = theme
    if colormap is not None:
        changes["colormap"] = colormap
    return replace(opts, **changes).validated()


def _check_width(width: int | None) -> int:
    if width is None:
        return DEFAULT_WIDTH
    if isinstance(width, bool) or not isinstance(width, int):
        raise ValueError(f"width must be a whole number of pixels, got {width!r}")
    from qkv_studio.render.figure import MAX_WIDTH_PX

    if not 16 <= width <= MAX_WIDTH_PX:
        raise ValueError(f"width must be 16–{MAX_WIDTH_PX} pixels, got {width}")
    return width


# ---- rendering to bytes -------------------------------------------------------------------------
def figure_image(scene: Scene, options: FigureOptions | None = None, width: int = DEFAULT_WIDTH) -> QImage:
    """The figure as an image ``width`` pixels wide (for the clipboard or a preview)."""
    ensure_app()
    return render_image(scene, resolve_options(scene, options), _check_width(width))


def png_bytes(scene: Scene, options: FigureOptions, width: int) -> bytes:
    """The figure as PNG file contents."""
    img = render_image(scene, options, width)
    return encode_png(img, opaque=background_color(options).alpha() == 255)


def encode_png(img: QImage, *, opaque: bool) -> bytes:
    """``img`` as a PNG (RGB when ``opaque``, else RGBA), ~5× faster than ``QImage.save``.

    Qt's encoder un-premultiplies and deflates a 4K figure at its default level on one core (~1.3 s).
    Here each row is stored as its difference from the row above (PNG's "Up" filter: the rows of a
    heatmap repeat, so they become runs of zeros) and deflated at level 1 in a few slices at once
    (zlib releases the GIL), joined into one stream with sync flushes.  Raises OSError on failure.
    """
    try:
        return _encode_png(img, opaque)
    except (MemoryError, ValueError, zlib.error) as exc:
        raise OSError(f"the PNG encoder failed ({exc})") from None


def _encode_png(img: QImage, opaque: bool) -> bytes:
    import numpy as np

    fmt = QImage.Format.Format_RGB888 if opaque else QImage.Format.Format_RGBA8888
    channels = 3 if opaque else 4
    conv = img.convertToFormat(fmt)
    w, h = conv.width(), conv.height()
    if conv.isNull() or w <= 0 or h <= 0:
        raise ValueError("empty image")
    bpl = conv.bytesPerLine()
    rows = np.frombuffer(conv.constBits(), np.uint8, count=bpl * h).reshape(h, bpl)[:, : w * channels]
    filtered = np.empty((h, 1 + w * channels), np.uint8)
    filtered[:, 0] = 2  # the "Up" filter on every row (the first row's "above" is zeros)
    filtered[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])
    raw = memoryview(filtered.reshape(-1))
    slices = max(1, min(_PNG_THREADS, h // 64))
    step = -(-h // slices) * filtered.shape[1]
    parts = [raw[i:i + step] for i in range(0, len(raw), step)]

    def deflate(i: int) -> bytes:
        c = zlib.compressobj(1, zlib.DEFLATED, -15)
        return c.compress(parts[i]) + c.flush(zlib.Z_FINISH if i == len(parts) - 1 else zlib.Z_SYNC_FLUSH)

    if len(parts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(parts)) as pool:
            streams = list(pool.map(deflate, range(len(parts))))
    else:
        streams = [deflate(0)]
    idat = b"".join([b"\x78\x01", *streams, struct.pack(">I", zlib.adler32(raw))])

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 2 if opaque else 6, 0, 0, 0)
    phys = struct.pack(">IIB", max(1, img.dotsPerMeterX()), max(1, img.dotsPerMeterY()), 1)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"pHYs", phys) + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


_PNG_THREADS = max(1, min(4, os.cpu_count() or 1))


def _description(scene: Scene, options: FigureOptions) -> tuple[str, str]:
    title, meaning = figure_title(scene, options)
    return title, f"{meaning}. Tokens: {' '.join(scene.tokens[:64])}{f' … ({scene.n} in all)' if scene.n > 64 else ''}. Made with QKV Studio."


def svg_bytes(scene: Scene, options: FigureOptions) -> bytes:
    """The figure as an SVG document: labels and values as <text>, cells as shapes."""
    from PySide6.QtSvg import QSvgGenerator

    size = figure_size(scene, options)
    w, h = math.ceil(size.width()), math.ceil(size.height())
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(w, h))
    gen.setViewBox(QRectF(0, 0, w, h))
    gen.setResolution(96)
    title, desc = _description(scene, options)
    gen.setTitle(title)
    gen.setDescription(desc)
    painter = QPainter()
    if not painter.begin(gen):
        raise OSError("the SVG generator could not start")
    try:
        paint_figure(painter, QRectF(0, 0, w, h), scene, options)
    finally:
        painter.end()
    buf.close()
    return bytes(data.data())


def pdf_bytes(scene: Scene, options: FigureOptions) -> bytes:
    """The figure as a one-page PDF whose page is exactly the figure (0.75 pt per figure pixel)."""
    size = figure_size(scene, options)
    page = QSizeF(size.width() * PT_PER_PX, size.height() * PT_PER_PX)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setResolution(_PDF_DPI)
    title, desc = _description(scene, options)
    writer.setTitle(title)
    writer.setCreator("QKV Studio")
    layout = QPageLayout(QPageSize(page, QPageSize.Unit.Point, "figure", QPageSize.SizeMatchPolicy.ExactMatch),
                         QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Point)
    layout.setMode(QPageLayout.Mode.FullPageMode)
    if not writer.setPageLayout(layout):
        raise ValueError(f"a {page.width():.0f}×{page.height():.0f} pt page is not possible in a PDF")
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError("the PDF writer could not start")
    try:
        full = writer.pageLayout().fullRectPixels(writer.resolution())
        paint_figure(painter, QRectF(0, 0, full.width(), full.height()), scene, options)
    finally:
        painter.end()
    buf.close()
    return bytes(data.data())


def _numbers():
    try:
        from qkv_studio.core import numbers
    except ImportError as exc:  # only if the module itself is missing; errors inside it propagate
        if exc.name not in ("qkv_studio.core.numbers", None):
            raise
        raise ValueError("CSV/JSON export needs qkv_studio.core.numbers, which is not installed") from exc
    return numbers


def csv_bytes(scene: Scene, stage: str) -> bytes:
    """The stage's n×n matrix as CSV (DESIGN.md's layout, full precision), UTF-8."""
    return _numbers().stage_csv(scene, stage).encode("utf-8")


def json_bytes(scene: Scene) -> bytes:
    """Every stage as JSON (tokens, scores, scaled, weights, output, query, options), UTF-8."""
    numbers = _numbers()
    if hasattr(numbers, "json_text"):
        text = numbers.json_text(scene)
    else:
        import json

        text = json.dumps(numbers.all_stages_json(scene), ensure_ascii=False, allow_nan=False) + "\n"
    return text.encode("utf-8")


def export_bytes(scene: Scene, suffix: str, options: FigureOptions, width: int) -> bytes:
    """The contents of an export file of the given suffix (``.png`` … ``.json``)."""
    suffix = suffix.lower()
    if suffix in IMAGE_FORMATS:
        ensure_app()
    if suffix == ".png":
        return png_bytes(scene, options, width)
    if suffix == ".svg":
        return svg_bytes(scene, options)
    if suffix == ".pdf":
        return pdf_bytes(scene, options)
    if suffix == ".csv":
        return csv_bytes(scene, options.stage)
    if suffix == ".json":
        return json_bytes(scene)
    raise ValueError(f"unknown format {suffix or '(no suffix)'!r}: use {', '.join(FORMATS)}")


# ---- atomic writing ----------------------------------------------------------------------------
def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_temp(path: Path, data: bytes) -> str:
    """Write ``data`` to a new temporary file next to ``path``; returns its name (removed on failure)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(name: str | os.PathLike) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once; OSError "cannot write PATH: reason" otherwise."""
    path = Path(path)
    tmp = None
    try:
        tmp = _write_temp(path, data)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            _unlink(tmp)
        raise OSError(f"cannot write {path}: {_reason(exc)}") from exc


# ---- public entry points ------------------------------------------------------------------------
def export_file(scene: Scene, path: str | os.PathLike, *, width: int | None = None, theme: str | None = None,
                colormap: str | None = None, options: FigureOptions | None = None) -> None:
    """Write the figure or the numbers to ``path``; the format follows its suffix.

    ``.png`` is ``width`` pixels wide (default 1600; height follows); ``.svg``/``.pdf`` are vector
    (``width`` is ignored); ``.csv`` is the options' stage (default: the scene's stage), ``.json``
    every stage.  ``theme`` (default light) and ``colormap`` override those of ``options``.
    Raises ValueError (bad option, unknown suffix) or OSError ("cannot write PATH: reason"); either
    way no file, partial or temporary, is left behind.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"cannot export to {path}: unknown format {suffix or '(no suffix)'!r} "
                         f"(use {', '.join(FORMATS)})")
    opts = resolve_options(scene, options, theme=theme, colormap=colormap)
    px = _check_width(width)
    try:
        data = export_bytes(scene, suffix, opts, px)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {_reason(exc)}") from exc
    write_atomic(path, data)


def deck_paths(base_path: str | os.PathLike) -> list[Path]:
    """The files :func:`export_all_stages` writes for ``base_path``: ``name-1-scores.png`` …"""
    base = Path(base_path)
    suffix = base.suffix.lower()
    if suffix in IMAGE_FORMATS:
        stem = base.with_suffix("")
    elif suffix in NUMBER_FORMATS:
        raise ValueError(f"cannot export stage images to {base}: use .png, .svg or .pdf")
    else:  # no suffix (or a dot inside the name, "fig.v2"): PNG
        stem, suffix = base, ".png"
    return [stem.with_name(f"{stem.name}-{i}-{stage}{suffix}") for i, stage in enumerate(DECK_STAGES, 1)]


def export_all_stages(scene: Scene, base_path: str | os.PathLike, *, width: int | None = None,
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
    px = _check_width(width)
    contents = []
    for path, stage in zip(paths, DECK_STAGES):
        try:
            contents.append(export_bytes(scene, path.suffix, replace(base_opts, stage=stage), px))
        except OSError as exc:
            raise OSError(f"cannot write {path}: {_reason(exc)}") from exc
    temps: list[str] = []
    done: list[Path] = []
    current = paths[0]
    try:
        for path, data in zip(paths, contents):
            current = path
            temps.append(_write_temp(path, data))
        for path, tmp in zip(paths, temps):
            current = path
            os.replace(tmp, path)
            done.append(path)
    except OSError as exc:
        for tmp in temps:
            _unlink(tmp)
        for path in done:
            _unlink(path)
        raise OSError(f"cannot write {current}: {_reason(exc)}") from exc
    return paths
