"""The export dialog's preview: the picture the options describe, fitted into a box, with its alt text.

:class:`PreviewBox` is a part the dialog is composed of: the Preview box (the picture, a caption, the
description and its *Copy description* button, its public attributes) and the picture drawn at the
box's size (:meth:`~PreviewBox.fit_figure`, :meth:`~PreviewBox.fit_slide`).  The description is the
one every exported file carries (:func:`qkv_studio.export.figures.alt_text`), to paste where the figure
goes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGroupBox, QLabel, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout

from qkv_studio.core import Scene
from qkv_studio.export.figures import figure_image
from qkv_studio.render.figure import FigureOptions

if TYPE_CHECKING:
    from qkv_studio.export.slide import SlidePainter

PREVIEW_SIZE = QSize(400, 320)
PREVIEW_DELAY_MS = 120


class PreviewBox:
    """The Preview box (:attr:`box`) and its widgets; draws the figure or the slide to fit its picture."""

    def __init__(self) -> None:
        self.preview_label = QLabel()
        self.preview_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.preview_label.setFixedSize(PREVIEW_SIZE)
        self.preview_label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.preview_label.setStyleSheet("QLabel { border: 1px solid palette(mid); }")
        self.preview_caption = QLabel()
        self.preview_caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.preview_caption.setWordWrap(True)
        self.preview_caption.setMaximumWidth(PREVIEW_SIZE.width())
        # The figure's alt text (the files carry it too), to paste where the figure goes.
        self.alt_text_edit = QPlainTextEdit()
        self.alt_text_edit.setReadOnly(True)
        self.alt_text_edit.setMaximumWidth(PREVIEW_SIZE.width())
        self.alt_text_edit.setFixedHeight(110)
        self.alt_text_edit.setToolTip("The figure's description for readers who cannot see it; every exported "
                                      "file carries it")
        self.copy_alt_button = QPushButton("Copy description")
        self.box = QGroupBox("Preview")
        lay = QVBoxLayout(self.box)
        lay.addWidget(self.preview_label, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addWidget(self.preview_caption)
        lay.addWidget(QLabel("Description (alt text):"))
        lay.addWidget(self.alt_text_edit)
        lay.addWidget(self.copy_alt_button, 0, Qt.AlignmentFlag.AlignRight)
        lay.addStretch(1)

    def fit_figure(self, scene: Scene, options: FigureOptions, natural: QSize, dpr: float) -> QImage:
        """The figure of ``scene`` with ``options`` (its size at scale 1 ``natural``) fitted into the preview
        box, in device pixels (``dpr`` of them per logical pixel)."""
        width = fit_width(self.preview_label.contentsRect().size(), natural, dpr)
        return figure_image(scene, options, width)

    def fit_slide(self, slide: SlidePainter, dpr: float) -> QImage:
        """The composed slide scaled into the preview box, in device pixels (``dpr`` per logical pixel)."""
        w, h = slide.size
        width = fit_width(self.preview_label.contentsRect().size(), QSize(w, h), dpr)
        k = width / w
        img = QImage(width, max(1, round(h * k)), QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor("#ffffff"))
        painter = QPainter(img)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.scale(k, k)
        slide.paint(painter)
        painter.end()
        return img


def fit_width(box: QSize, natural: QSize, dpr: float) -> int:
    """The width in device pixels a picture of ``natural`` size has fitted into ``box`` (less a margin)."""
    box = QSize(max(box.width() - 8, 60), max(box.height() - 8, 60))
    fit = min(box.width() / max(1, natural.width()), box.height() / max(1, natural.height()))
    return max(16, round(natural.width() * fit * dpr))


def on_checkerboard(img: QImage, cell: int = 8) -> QImage:
    """``img`` over a light checkerboard, so a transparent background is visible in the preview."""
    out = QImage(img.size(), QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(QColor("#ffffff"))
    p = QPainter(out)
    grey = QColor("#e4e4e4")
    for y in range(0, img.height(), cell):
        for x in range((y // cell) % 2 * cell, img.width(), 2 * cell):
            p.fillRect(x, y, cell, cell, grey)
    p.drawImage(0, 0, img)
    p.end()
    return out
