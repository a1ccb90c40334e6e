"""Stage steps on a presentation slide (the slide's own views, :mod:`qkv_studio.ui.slide`): the right main
view at every stage, the plane and the blend showing the current numbers after a step away and back,
each view laid out at one size per slide, and the plots' cached pictures kept from one visit of their
slide to the next."""

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QImage, QPixmapCache

from qkv_studio.core import STAGES
from qkv_studio.core.stages import stage_spec
from qkv_studio.ui.update_policy import settle
from tests.views import LESSON_VIEW

#: back and forth over the stages, as a lecturer steps: into and out of the plane's and the blend's slides
ROUND = list(STAGES) + list(reversed(STAGES[1:-1])) + [STAGES[0]]


@pytest.fixture
def window(show_window, lesson_scene):
    w = show_window(lesson_scene, (1920, 1080), view=LESSON_VIEW)
    w.set_presentation(True, fullscreen=False)
    settle(w)
    return w


def step(window, stage: str) -> None:
    window.session.set_stage(stage)
    window.session.flush()
    settle(window)


def view(window, name: str):
    """The slide's own view ``name`` (heatmap, plane, blend, calc)."""
    return window.presentation.slide.views.get(name)


def main_views(window) -> dict[str, bool]:
    return {name: view(window, name).isVisible() for name in ("heatmap", "plane", "blend")}


def test_each_stage_shows_its_main_view_and_no_other(window):
    for stage in ROUND:
        step(window, stage)
        shown = main_views(window)
        assert shown == {name: name == stage_spec(stage).slide_view for name in shown}, stage
        # (the window behind the slide keeps its own heatmap and docks: the slide is not the window)
        assert window.heatmap.isVisible() and window.docks.editors.isVisible()


def _fresh_picture(view):
    """The view's picture with every item drawn again now (into its cache, if it has one)."""
    for item in view.scene().items():
        item.update()
    return view.grab().toImage()


def _pixels(image) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4).astype(int)


def _blur(p: np.ndarray) -> np.ndarray:
    """A 3×3 mean: a glyph's anti-aliasing at another sub-pixel offset (a label drawn at its first paint
    and the same label drawn again) alike, a moved arrow or label not."""
    padded = np.pad(p, ((1, 1), (1, 1), (0, 0)), mode="edge")
    h, w = p.shape[:2]
    return sum(padded[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)) // 9


def _alike(a, b, reach: int = 2) -> bool:
    """The same picture but for where a cached label or arrow sits up to ``reach`` px off (a cached
    pixmap is placed on whole pixels, a fresh drawing anywhere between them): every pixel of ``a`` has
    its colour within ``reach`` px in ``b``.  A stale arrow or label — drawn where the numbers were —
    does not."""
    pa, pb = _blur(_pixels(a)), _blur(_pixels(b))
    if pa.shape != pb.shape:
        return False
    h, w = pa.shape[:2]
    best = np.full((h, w), 255)
    padded = np.pad(pb, ((reach, reach), (reach, reach), (0, 0)), mode="edge")
    for dy in range(2 * reach + 1):
        for dx in range(2 * reach + 1):
            best = np.minimum(best, np.abs(pa - padded[dy:dy + h, dx:dx + w]).max(axis=2))
    return int((best > 64).sum()) == 0


def test_the_plane_after_a_step_away_and_an_edit_shows_the_current_numbers(window):
    s = window.session
    step(window, "vectors")
    before = view(window, "plane").plot_widget.grab().toImage()
    step(window, "scores")
    q = s.query
    s.set_value("Q", q, 0, float(s.scene.qkv()[0][q, 0]) + 1.5)  # (edited while the plane is hidden)
    s.flush()
    settle()
    step(window, "vectors")
    head = view(window, "plane").head_view_pos("Q", q)
    Q = s.scene.qkv()[0]
    assert (head.x(), head.y()) == pytest.approx((float(Q[q, 0]), float(Q[q, 1])))
    plot = view(window, "plane").plot_widget
    after = plot.grab().toImage()
    assert _alike(after, _fresh_picture(plot))  # (no stale cached picture on the slide)
    assert not _alike(after, before)  # (the edit shows: the comparison tells them apart)


def test_the_blend_after_a_step_away_and_an_edit_shows_the_current_numbers(window):
    s = window.session
    step(window, "output")
    before = view(window, "blend").values_plot.grab().toImage()
    step(window, "weights")
    s.set_value("V", 1, 0, float(s.scene.qkv()[2][1, 0]) - 2.0)
    s.flush()
    settle()
    step(window, "output")
    assert view(window, "blend").isVisible() and view(window, "blend").revealed() == (True, True)
    for plot in (view(window, "blend").bars_plot, view(window, "blend").values_plot):
        assert _alike(plot.grab().toImage(), _fresh_picture(plot))
    assert not _alike(view(window, "blend").values_plot.grab().toImage(), before)


class _Sizes(QObject):
    """Every size each watched widget is resized to."""

    def __init__(self, widgets: dict) -> None:
        super().__init__()
        self.names = {id(w): name for name, w in widgets.items()}
        self.seen: dict[str, list] = {name: [] for name in widgets}
        for w in widgets.values():
            w.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and id(obj) in self.names:
            self.seen[self.names[id(obj)]].append(event.size().toTuple())
        return False


def test_a_step_lays_each_main_view_out_at_its_slide_size_only(window):
    for stage in ROUND:  # (a first round: every slide composed once)
        step(window, stage)
    sizes = {}
    for stage in ROUND:
        step(window, stage)
        name = stage_spec(stage).slide_view
        sizes.setdefault(name, view(window, name).size().toTuple())
    watch = _Sizes({name: view(window, name) for name in ("heatmap", "plane", "blend")})
    for stage in ROUND:
        step(window, stage)
    # (shown at another view's height first and then resized, a view was laid out and painted twice
    # and its cached pictures drawn again)
    for name, seen in watch.seen.items():
        assert set(seen) <= {sizes[name]}, (name, seen)


def test_a_step_back_into_the_planes_slide_draws_nothing_anew(window):
    screen = window.screen()
    pixels = screen.size().width() * screen.size().height() * screen.devicePixelRatio() ** 2
    assert QPixmapCache.cacheLimit() >= 4 * pixels * 4 // 1024  # (room for the slides' caches)
    for stage in ROUND:
        step(window, stage)
    step(window, "scores")
    drawn = []
    for name in ("left", "bottom"):
        axis = view(window, "plane").plot.getAxis(name)
        paint = axis.paint
        axis.paint = lambda p, *args, paint=paint, name=name: (drawn.append(name), paint(p, *args))
    keys = view(window, "plane").arrows.keys
    paint_keys = keys.paint
    keys.paint = lambda p, *args: (drawn.append("keys"), paint_keys(p, *args))
    step(window, "vectors")
    view(window, "plane").plot_widget.viewport().repaint()
    assert view(window, "plane").isVisible()
    assert drawn == []  # (the axes, their grid and the key arrows replayed from their caches)


def test_a_step_back_to_the_heatmaps_slide_places_the_table_for_the_numbers_edited_meanwhile(show_window,
                                                                                           lesson_scene):
    """The table stands beside the heatmap on a wide slide; numbers made too wide for that while the
    plane's slide was shown are placed by the rule at the step back, in the step itself (nothing moves
    a moment later), and the table comes back beside, as it was, once they are undone."""
    window = show_window(lesson_scene, (1600, 900))
    window.set_presentation(True, fullscreen=False)
    settle(window)
    slide, s = window.presentation.slide, window.session
    table = view(window, "calc")

    def where() -> str:
        return slide.placement.where

    step(window, "scores")
    assert where() == "beside" and table.isVisible()
    look = (table.font().toString(), table.compact, table.geometry().getRect())
    for stage in ROUND + ["scores"]:  # (steps away and back with nothing changed: the same table, beside)
        step(window, stage)
    assert where() == "beside" and (table.font().toString(), table.compact, table.geometry().getRect()) == look
    step(window, "vectors")
    edits = [(name, row, j) for name, row in (("K", 0), ("V", 0), ("Q", s.query)) for j in range(2)]
    for name, row, j in edits:
        s.set_value(name, row, j, -123456.789)
    s.flush()
    settle(window)
    s.set_stage("scores")
    placed = (where(), slide.placement.left_out, table.isVisible())
    assert placed[0] != "beside"  # (too wide to stand beside legibly: placed in the step itself)
    settle(window)
    assert (where(), slide.placement.left_out, table.isVisible()) == placed  # (nothing moved later)
    assert table.calc_model.text_of(0, "key") == "[−1.23e5, −1.23e5]"  # (the new numbers)
    step(window, "vectors")
    for _ in edits:
        s.undo_stack.undo()
    s.flush()
    settle(window)
    s.set_stage("scores")
    assert where() == "beside"
    settle(window)
    assert where() == "beside" and (table.font().toString(), table.compact, table.geometry().getRect()) == look
