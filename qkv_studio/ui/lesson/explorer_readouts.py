"""The √d_k explorer's four live numbers — score spread σ, mean top weight, entropy, gradient — as cards
(each with the other setting's value small below), or on one line of text when the dock is short.

:class:`Readouts` writes what :class:`~qkv_studio.ui.lesson.sqrt_dk_explorer.SqrtDkExplorer` computed
(two :class:`~qkv_studio.core.saturation.Saturation`: the setting in use and the other one) and lays the
cards out for the room the explorer has.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from qkv_studio.core.saturation import Saturation
from qkv_studio.render.theme import Theme

BASE_PT = 10.0


class Readout(QFrame):
    """One live number: a caption, the value large (with a small unit or theory beside it), and the
    other setting's value small below."""

    def __init__(self, title: str, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(title)
        self.value = QLabel()
        self.unit = QLabel()
        self.note = QLabel()
        for lab in (self.title, self.value, self.unit, self.note):
            lab.setTextFormat(Qt.TextFormat.PlainText)
        row = QHBoxLayout()
        row.setSpacing(6)
        row.addWidget(self.value, 0, Qt.AlignmentFlag.AlignBaseline)
        row.addWidget(self.unit, 1, Qt.AlignmentFlag.AlignBaseline)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setSpacing(0)
        lay.addWidget(self.title)
        lay.addLayout(row)
        lay.addWidget(self.note)


class Readouts(QWidget):
    """The four readout cards in a row or 2 × 2, or (``compact``) their numbers as one ``summary`` line."""

    def __init__(self, parent: QWidget | None = None, *, n_keys: int = 8, samples: int = 1000) -> None:
        super().__init__(parent)
        self._n_keys, self._samples = n_keys, samples
        self._scale = 1.0
        self.std_readout = Readout("score spread σ")
        self.max_readout = Readout("mean top weight")  # (of every query: the bars show one of them)
        self.entropy_readout = Readout("entropy")
        self.gradient_readout = Readout("gradient ‖∂w/∂s‖")
        self.cards = (self.std_readout, self.max_readout, self.entropy_readout, self.gradient_readout)
        self._grid = QGridLayout()
        self._grid.setSpacing(6)
        self._columns = 0
        self.compact = False
        self.summary = QLabel(self)  # the four readouts on one line, for a short dock
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.summary.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addLayout(self._grid)
        lay.addWidget(self.summary)

    def restyle(self, theme: Theme, scale: float, base: QFont) -> None:
        """Card borders, fonts and colours of a theme at a font scale (``base``: the explorer's font)."""
        self._scale = scale

        def font(factor: float, bold: bool = False) -> QFont:
            f = QFont(base)
            f.setPointSizeF(BASE_PT * scale * factor)
            f.setBold(bold)
            return f

        self.summary.setFont(font(1.0))
        for r in self.cards:
            r.setStyleSheet(f"Readout {{ border: {max(1, int(theme.line_scale))}px solid {theme.grid}; }}")
            r.title.setFont(font(0.9))
            r.value.setFont(font(1.6, bold=True))
            r.note.setFont(font(0.85))
            r.unit.setFont(font(0.85))
            for lab in (r.title, r.value, r.unit, r.note):
                lab.setStyleSheet(f"color: {theme.text if lab is r.value else theme.muted}; border: none;")

    def reflow(self, width: int, height: int) -> None:
        """Four cards in a row, or 2 × 2 when ``width`` is narrow for their font (a slim dock), or the one
        line of text when ``height`` (the explorer's) is short: the histogram and the bars come first."""
        compact = height < 620 * self._scale
        if compact != self.compact:
            self.compact = compact
            for r in self.cards:
                r.setVisible(not compact)
            self.summary.setVisible(compact)
        need = 4 * max(r.minimumSizeHint().width() for r in self.cards) + 3 * self._grid.spacing() + 12
        columns = 4 if width >= need else 2
        if columns == self._columns:
            return
        self._columns = columns
        for r in self.cards:
            self._grid.removeWidget(r)
        for i, r in enumerate(self.cards):
            self._grid.addWidget(r, i // columns, i % columns)
        for c in range(4):
            self._grid.setColumnStretch(c, 1 if c < columns else 0)

    def write(self, cur: Saturation, oth: Saturation, theme: Theme, *, tight: bool) -> None:
        """The setting in use (``cur``) large, the other (``oth``) small; ``tight`` leaves the other's
        numbers out of the summary (a very short dock's caption gives its top weight)."""
        c, o = cur.stats, oth.stats
        other = "raw" if cur.scale else "÷√dₖ"
        n = self._n_keys
        self.std_readout.value.setText(f"{c.score_std:.2f}")
        self.std_readout.unit.setText(f"theory {cur.expected_std:.3g}")
        self.std_readout.note.setText(f"{other} {o.score_std:.2f}")
        self.max_readout.value.setText(f"{c.max_weight:.2f}")
        self.max_readout.unit.setText(f"even {1 / n:.3g}")
        self.max_readout.note.setText(f"{other} {o.max_weight:.2f}")
        self.entropy_readout.value.setText(f"{c.entropy_bits:.2f}")
        self.entropy_readout.unit.setText(f"of {c.entropy_max_bits:g} bits")
        self.entropy_readout.note.setText(f"{other} {o.entropy_bits:.2f}")
        self.gradient_readout.value.setText(f"{c.gradient:.3f}")
        self.gradient_readout.unit.setText("0 = flat")
        self.gradient_readout.note.setText(f"{other} {o.gradient:.3f}")
        t = theme
        self.summary.setText(
            f"<span style='color:{t.text}'>σ <b>{c.score_std:.2f}</b> (theory {cur.expected_std:.3g}) · "
            f"mean top weight <b>{c.max_weight:.2f}</b> · entropy <b>{c.entropy_bits:.2f}</b> of "
            f"{c.entropy_max_bits:g} bits · gradient <b>{c.gradient:.3f}</b></span> "
            + ("" if tight else
               f"<span style='color:{t.muted}'>({other}: {o.score_std:.2f} · {o.max_weight:.2f} · "
               f"{o.entropy_bits:.2f} · {o.gradient:.3f})</span>"))
        self.std_readout.setToolTip("standard deviation of the scores that reach the softmax "
                                    "(theory: √d_k raw, 1 after ÷√d_k, both ÷ temperature)")
        self.max_readout.setToolTip(f"the largest softmax weight, averaged over {self._samples:,} random queries "
                                    f"(1/{n} = {1 / n:.3f} when spread evenly, 1 when one key takes all)")
        self.entropy_readout.setToolTip(f"how spread the weights are: log₂ {n} = {c.entropy_max_bits:g} bits "
                                        "when even, 0 when one key takes all")
        self.gradient_readout.setToolTip("size (Frobenius norm) of the softmax's Jacobian diag(w) − w wᵀ: how much "
                                         "the weights respond to the scores; near 0 the softmax is saturated and "
                                         "learning stalls")
