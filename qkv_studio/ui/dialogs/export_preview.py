"""The export dialog's preview: the picture the options describe, fitted into a box, with its alt text.

:func:`build_preview` makes the Preview box (the picture, a caption, the description and its *Copy
description* button) as public attributes of the dialog; :func:`preview_image` draws the figure (or the
composed slide) at the box's size.  The description is the one every exported file carries
(:func:`qkv_studio.export.figures.alt_text`), to paste where the figure goes.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGroupBox, QLabel, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout

from qkv_studio.export.figures import figure_image

PREVIEW_SIZE = QSize(400, 320)
PREVIEW_DELAY_MS = 120


def build_preview(d) -> QGroupBox:
    """The Preview box, its widgets set on the dialog ``d``."""
    d.preview_label = QLabel()
    d.preview_label.setAlignment(Qt.AlignCenter)
    d.preview_label.setFixedSize(PREVIEW_SIZE)
    d.preview_label.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
    d.preview_label.setStyleSheet("QLabel { border: 1px solid palette(mid); }")
    d.preview_caption = QLabel()
    d.preview_caption.setAlignment(Qt.AlignCenter)
    d.preview_caption.setWordWrap(True)
    d.preview_caption.setMaximumWidth(PREVIEW_SIZE.width())
    # The figure's alt text (the files carry it too), to paste where the figure goes.
    d.alt_text_edit = QPlainTextEdit()
    d.alt_text_edit.setReadOnly(True)
    d.alt_text_edit.setMaximumWidth(PREVIEW_SIZE.width())
    d.alt_text_edit.setFixedHeight(110)
    d.alt_text_edit.setToolTip("The figure's description for readers who cannot see it; every exported "
                               "file carries it")
    d.copy_alt_button = QPushButton("Copy description")
    box = QGroupBox("Preview")
    lay = QVBoxLayout(box)
    lay.addWidget(d.preview_label, 0, Qt.AlignHCenter)
    lay.addWidget(d.preview_caption)
    lay.addWidget(QLabel("Description (alt text):"))
    lay.addWidget(d.alt_text_edit)
    lay.addWidget(d.copy_alt_button, 0, Qt.AlignRight)
    lay.addStretch(1)
    return box


def fit_width(box: QSize, natural: QSize, dpr: float) -> int:
    """The width in device pixels a picture of ``natural`` size has fitted into ``box`` (less a margin)."""
    box = QSize(max(box.width() - 8, 60), max(box.height() - 8, 60))
    fit = min(box.width() / max(1, natural.width()), box.height() / max(1, natural.height()))
    return max(16, round(natural.width() * fit * dpr))


def figure_preview(d) -> QImage:
    """The figure as the preview shows it, fitted into the preview box (device pixels)."""
    width = fit_width(d.preview_label.contentsRect().size(), d.natural_size(), d.devicePixelRatioF() or 1.0)
    return figure_image(d.scene, d.options(), width)


def slide_preview(d, slide) -> QImage:
    """The composed slide (a :class:`qkv_studio.export.slide.SlidePainter`) scaled into the preview box."""
    w, h = slide.size
    width = fit_width(d.preview_label.contentsRect().size(), QSize(w, h), d.devicePixelRatioF() or 1.0)
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


def on_checkerboard(img: QImage, cell: int = 8) -> QImage:
    """``img`` over a light checkerboard, so a transparent background is visible in the preview."""
    out = QImage(img.size(), QImage.Format_ARGB32_Premultiplied)
    out.fill(QColor("#ffffff"))
    p = QPainter(out)
    grey = QColor("#e4e4e4")
    for y in range(0, img.height(), cell):
        for x in range((y // cell) % 2 * cell, img.width(), 2 * cell):
            p.fillRect(x, y, cell, cell, grey)
    p.drawImage(0, 0, img)
    p.end()
    return out
