"""What the slide's layout rule (:mod:`.policy`) is given: each view's legible size, measured with the
fonts of the slide (the caption's text: the slide's body text, read from the last row).

- the heatmap: its cells wide enough for their widest number and tall enough for a line of it, in the
  caption's text, plus its token labels, its heading lines and its colour bar with its tick labels —
  for every stage the heatmap's slide shows, so a step between them moves nothing;
- the calculation table: every column of the heatmap's stages and every row, in the caption's text
  (headings wider than their numbers broken onto two lines: the table's compact form);
- the plane and the blend: a reading area measured in lines of the caption's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QFont, QFontMetricsF

from qkv_studio.core import STAGES
from qkv_studio.core.stages import stage_spec
from qkv_studio.ui.panels.heatmap_overlay import CellTexts
from qkv_studio.ui.slide.policy import Need

if TYPE_CHECKING:
    from qkv_studio.state.session import Session
    from qkv_studio.ui.panels.calc_table import CalcTable

#: A number fills at most this share of its cell's width and its line this share of the row's height
#: (the heatmap's own rule for its numbers: :func:`~qkv_studio.ui.panels.heatmap_overlay.text_plan`).
NUMBER_WIDTH_FRAC = 0.86
NUMBER_HEIGHT_FRAC = 0.8
#: The plane's and the blend's reading area, in lines of the caption's text (wide × tall): an arrow's
#: label and its neighbour's apart, the blend's bars each a labelled line.
PLANE_LINES = (18, 12)
BLEND_LINES = (18, 8)


def heatmap_stages() -> list[str]:
    """The stages whose slide the heatmap is (the score stages)."""
    return [s for s in STAGES if stage_spec(s).slide_view == "heatmap"]


def heatmap_need(session: Session, font: QFont) -> Need:
    """The heatmap's legible size in ``font``: every cell holds its number (see the module's docstring)."""
    fm = QFontMetricsF(font)
    line = fm.height()
    scene, result = session.shown, session.result
    n = scene.n
    widest = 0.0
    texts = CellTexts()
    for stage in heatmap_stages():
        if stage_spec(stage).previews:
            continue
        _, longest = texts.texts(result.stage(stage), stage, 0, 0)
        widest = max(widest, fm.horizontalAdvance(longest + " "))
    cell_w = max(line, widest / NUMBER_WIDTH_FRAC)
    cell_h = line / NUMBER_HEIGHT_FRAC
    labels = max((fm.horizontalAdvance(scene.token_label(i)) for i in range(n)), default=0.0) + line
    bar = fm.horizontalAdvance("−0.00") + 2 * line  # the colour bar and its tick labels
    width = labels + n * cell_w + bar
    height = 3 * line + line + n * cell_h  # its heading (up to three lines), the key labels, the rows
    return Need(int(width + 0.5), int(height + 0.5))


def table_need(table: CalcTable, font: QFont) -> Need:
    """The calculation table's size showing every column of the heatmap's stages and every row, in
    ``font`` (set on the table, compact headings): nothing scrolls."""
    table.set_compact(True)
    if table.font() != font:
        table.setFont(font)
    last = heatmap_stages()[-1]
    table.set_last_stage(last)
    table.fit_columns(even_hidden=True)
    # (every row and the heading, as the header lays it out for the columns shown; no scroll bar: the
    # slide gives the table this room or leaves it out)
    header = table.horizontalHeader()
    rows = sum(table.rowHeight(r) for r in range(table.calc_model.rowCount()))
    height = header.sizeHint().height() + rows + 2 * table.frameWidth()
    return Need(table.content_width(through=last, scroll_bar=False) + 2, height + 2)


def lines_need(font: QFont, lines: tuple[int, int]) -> Need:
    """A reading area of ``lines`` (wide, tall) lines of ``font``."""
    line = QFontMetricsF(font).height()
    return Need(int(lines[0] * line), int(lines[1] * line))
