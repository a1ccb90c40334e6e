"""The heatmap figure tells the truth: sizes, colours per cell, legends, masks, themes, 1–1024 tokens.

Cell positions come from ``figure_layout`` (the function ``paint_figure`` draws), the expected colours
from the colormap lookup tables computed here from the raw numbers, not from the figure's own scale.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, QSizeF
from PySide6.QtGui import QColor, QImage, QPainter

from qkv_studio.core import Scene
from qkv_studio.render.colormaps import DIVERGING, SEQUENTIAL, lut
from qkv_studio.render.figure import (
    MAX_SHAPE_TOKENS,
    FigureOptions,
    figure_layout,
    figure_size,
    format_value,
    paint_figure,
    render_image,
)
from qkv_studio.render.theme import THEMES

TOL = 3  # per channel, 0–255


@pytest.fixture(autouse=True)
def _app(qapp):
    return qapp


def rgb(img: QImage, x: float, y: float) -> tuple[int, int, int, int]:
    c = img.pixelColor(int(x), int(y))
    return c.red(), c.green(), c.blue(), c.alpha()


def expected_sequential(value: float, cmap: str) -> np.ndarray:
    table = lut(cmap)
    return table[int(round(float(np.clip(value, 0, 1)) * (len(table) - 1)))][:3].astype(int)


def expected_diverging(value: float, m: float) -> np.ndarray:
    table = lut(DIVERGING)
    t = (value + m) / (2 * m)
    return table[int(round(t * (len(table) - 1)))][:3].astype(int)


def close(actual, expected, tol=TOL) -> bool:
    return all(abs(int(a) - int(e)) <= tol for a, e in zip(actual[:3], expected[:3], strict=False))


def render_with_layout(scene, options, width):
    img = render_image(scene, options, width)
    lay = figure_layout(scene, options, QSizeF(img.width(), img.height()))
    return img, lay


def random_scene(n: int, *, mask="causal", d=8, seed=0) -> Scene:
    rng = np.random.default_rng(seed)
    return Scene.create([f"tok{i}" for i in range(n)], q=rng.normal(size=(n, d)), k=rng.normal(size=(n, d)),
                        v=rng.normal(size=(n, 3)), mask=mask)


LESSON_QUERY = 2  # the lesson preset's view: query "sat" (a figure's query comes with its options)
BARE = FigureOptions(query=LESSON_QUERY, title=False, token_labels=False, values=False, colorbar=False)


# ---- size ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("width", [800, 3840, 7680])
def test_image_has_exactly_the_requested_width_and_the_figure_aspect(lesson_scene, width):
    opts = FigureOptions(query=LESSON_QUERY, stage="weights")
    img = render_image(lesson_scene, opts, width)
    size = figure_size(lesson_scene, opts)
    assert img.width() == width
    assert img.height() == round(width * size.height() / size.width())
    assert img.format() == QImage.Format.Format_ARGB32_Premultiplied


def test_cells_are_64_px_for_few_tokens_and_shrink_to_4_for_many(lesson_scene):
    lay4 = figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY))
    assert lay4.cell == 64
    lay64 = figure_layout(random_scene(64), FigureOptions(query=32))
    assert 4 <= lay64.cell < 64
    lay1024 = figure_layout(random_scene(1024), FigureOptions(query=700))
    assert lay1024.cell == 4


def test_width_outside_the_allowed_range_is_refused(lesson_scene):
    with pytest.raises(ValueError, match="width"):
        render_image(lesson_scene, FigureOptions(query=LESSON_QUERY), 8)
    with pytest.raises(ValueError, match="width"):
        render_image(lesson_scene, FigureOptions(query=LESSON_QUERY), 100_000)


# ---- colours tell the truth ----------------------------------------------------------------------
@pytest.mark.parametrize("cmap", SEQUENTIAL)
def test_each_weight_cell_centre_has_the_colormap_colour_of_its_value(lesson_scene, cmap):
    opts = FigureOptions(query=LESSON_QUERY, stage="weights", values=False, colormap=cmap)
    img, lay = render_with_layout(lesson_scene, opts, 1200)
    w = lesson_scene.result().weights
    for i in range(4):
        for j in range(4):
            c = lay.cell_rect(i, j).center()
            assert close(rgb(img, c.x(), c.y()), expected_sequential(w[i, j], cmap)), (i, j, cmap)


def test_cells_keep_their_colour_around_the_printed_value(lesson_scene):
    """With numbers in the cells, the cell's dominant colour is still its value's colour."""
    opts = FigureOptions(query=LESSON_QUERY, stage="weights")
    img, lay = render_with_layout(lesson_scene, opts, 1600)
    w = lesson_scene.result().weights
    for i in range(4):
        for j in range(4):
            r = lay.cell_rect(i, j).adjusted(4, 4, -4, -4).toRect()
            cell = img.copy(r).convertToFormat(QImage.Format.Format_RGB32)
            arr = np.frombuffer(cell.constBits(), np.uint8).reshape(cell.height(), cell.bytesPerLine() // 4, 4)
            colours, counts = np.unique(arr[:, : cell.width(), :3].reshape(-1, 3), axis=0, return_counts=True)
            bgr = colours[np.argmax(counts)]
            assert close(bgr[::-1], expected_sequential(w[i, j], "viridis")), (i, j)


def test_scores_use_the_diverging_map_symmetric_at_the_data_max(lesson_scene):
    opts = FigureOptions(query=LESSON_QUERY, stage="scores", values=False)
    img, lay = render_with_layout(lesson_scene, opts, 1200)
    scores = lesson_scene.result().scores
    m = float(np.max(np.abs(scores)))
    assert m == 4.0  # sat·cat in the lesson
    assert lay.scale.cmap == DIVERGING
    assert (lay.scale.lo, lay.scale.hi) == (-m, m)
    for i in range(4):
        for j in range(4):
            c = lay.cell_rect(i, j).center()
            assert close(rgb(img, c.x(), c.y()), expected_diverging(scores[i, j], m)), (i, j)
    # the zero score (the·the) sits at the middle of the map, not at an end
    c = lay.cell_rect(0, 0).center()
    assert scores[0, 0] == 0
    assert close(rgb(img, c.x(), c.y()), lut(DIVERGING)[127][:3], tol=6)


def test_vectors_stage_shows_the_scores_and_output_stage_the_weights(lesson_scene):
    r = lesson_scene.result()
    for stage, shown in (("vectors", r.scores), ("output", r.weights)):
        assert np.array_equal(figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY, stage=stage)).matrix, shown)
    assert figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY, stage="output")).scale.lo == 0.0


def colorbar_samples(img, lay):
    """Colours near the top and bottom of the bar, inside its outline, with the LUT entries there."""
    bar = lay.colorbar_rect()
    x = bar.center().x()
    table = lut(lay.scale.cmap)
    out = []
    for y in (bar.top() + 8, bar.bottom() - 8):
        t = (bar.bottom() - y) / bar.height()
        out.append((rgb(img, x, y), table[int(round(t * (len(table) - 1)))]))
    return out


def test_weights_colour_bar_runs_from_0_to_1_with_the_colormap_ends(lesson_scene):
    opts = FigureOptions(query=LESSON_QUERY, stage="weights")
    img, lay = render_with_layout(lesson_scene, opts, 1600)
    ticks = [v for v, _ in lay.colorbar_ticks]
    assert ticks[0] == 0.0 and ticks[-1] == 1.0
    (top, top_lut), (bottom, bottom_lut) = colorbar_samples(img, lay)
    assert close(top, top_lut, tol=8) and close(top, lut("viridis")[-1], tol=16)
    assert close(bottom, bottom_lut, tol=8) and close(bottom, lut("viridis")[0], tol=16)
    assert lay.scale.label == "softmax weight (0–1)"


def test_scores_colour_bar_runs_from_minus_m_to_m(lesson_scene):
    opts = FigureOptions(query=LESSON_QUERY, stage="scores")
    img, lay = render_with_layout(lesson_scene, opts, 1600)
    ticks = lay.colorbar_ticks
    assert ticks[0] == (-4.0, "−4") and ticks[-1] == (4.0, "4")
    assert (0.0, "0") in ticks
    labels = [t.text for t in lay.texts]
    assert "−4" in labels and "4" in labels and "score q·k" in labels
    (top, top_lut), (bottom, bottom_lut) = colorbar_samples(img, lay)
    assert close(top, top_lut, tol=8) and close(top, lut(DIVERGING)[-1], tol=16)
    assert close(bottom, bottom_lut, tol=8) and close(bottom, lut(DIVERGING)[0], tol=16)
    # the middle of the bar is the colour of 0
    bar = lay.colorbar_rect()
    assert close(rgb(img, bar.center().x(), lay.colorbar_value_y(0.0)), lut(DIVERGING)[127], tol=8)


def test_scaled_stage_legend_is_symmetric_at_the_scaled_max(lesson_scene):
    lay = figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY, stage="scaled"))
    m = 4 / np.sqrt(2)
    assert lay.scale.lo == pytest.approx(-m) and lay.scale.hi == pytest.approx(m)
    assert [t for _, t in lay.colorbar_ticks][0] == "−2.83"


# ---- numbers, labels, title ----------------------------------------------------------------------
def texts(lay) -> list[str]:
    return [t.text for t in lay.texts]


def test_lesson_figure_carries_title_axis_titles_tokens_and_row_sums(lesson_scene):
    lay = figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY, stage="weights"))
    t = texts(lay)
    assert "softmax weights · query “sat” · dₖ = 2" in t
    assert "attending from (query)" in t and "attending to (key)" in t
    for token in ("the", "cat", "sat", "mat"):
        assert t.count(token) == 2  # a row label and a column label
    assert t.count("Σ = 1.00") == 4
    assert lay.show_values


def test_values_are_formatted_like_the_lesson():
    assert format_value(0.5387760704802101, "weights") == "0.54"
    assert format_value(0.06458483864659637, "weights") == "0.06"
    assert format_value(2.8284271247461903, "scaled") == "2.83"
    assert format_value(-0.7071067811865476, "scores") == "−0.707"
    assert format_value(-0.0819, "scores") == "−0.082"
    assert format_value(0.0, "scores") == "0"
    assert format_value(-0.0, "scores") == "0"
    assert format_value(1234.5, "scores") == "1.23e3"


def test_row_sums_only_at_the_weights_stage(lesson_scene):
    for stage in ("vectors", "scores", "scaled", "output"):
        lay = figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY, stage=stage))
        assert not any(x.startswith("Σ") for x in texts(lay))


def test_options_switch_parts_off(lesson_scene):
    lay = figure_layout(lesson_scene, BARE)
    t = texts(lay)
    assert not any("softmax weights" in x for x in t)
    assert "cat" not in t
    assert not lay.show_values
    assert lay.colorbar_rect() is None
    full = figure_size(lesson_scene, FigureOptions(query=LESSON_QUERY))
    bare = figure_size(lesson_scene, BARE)
    assert bare.width() < full.width() and bare.height() < full.height()


def test_selected_query_row_is_outlined_in_the_highlight_colour(lesson_scene):
    for theme in THEMES:
        opts = FigureOptions(query=LESSON_QUERY, theme=theme)
        img, lay = render_with_layout(lesson_scene, opts, 1600)
        r = lay.query_rect()
        x = lay.cell_rect(2, 1).center().x()
        assert close(rgb(img, x, r.top()), QColor(THEMES[theme].highlight).getRgb(), tol=4), theme
        assert close(rgb(img, x, r.bottom()), QColor(THEMES[theme].highlight).getRgb(), tol=4), theme
        # and no outline when switched off
        img2 = render_image(lesson_scene, FigureOptions(query=LESSON_QUERY, theme=theme, highlight_query=False), 1600)
        assert not close(rgb(img2, x, r.top()), QColor(THEMES[theme].highlight).getRgb(), tol=30), theme
    lay = figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY))
    bold = [t for t in lay.texts if t.bold and t.text == "sat"]
    assert len(bold) == 1 and bold[0].color == THEMES["light"].highlight


def test_the_figures_query_is_the_options_not_the_scenes(lesson_scene):
    """A Scene holds no query: the figure names and outlines the row its options say."""
    for query, name in ((0, "the"), (3, "mat")):
        lay = figure_layout(lesson_scene, FigureOptions(query=query))
        assert f"softmax weights · query “{name}” · dₖ = 2" in texts(lay)
        assert [t.text for t in lay.texts if t.bold and t.text in lesson_scene.tokens] == [name]
        assert lay.logical_query_rect().center().y() == lay.logical_cell(query, 0).center().y()
    with pytest.raises(ValueError, match="query 4 is out of range"):
        figure_layout(lesson_scene, FigureOptions(query=4))
    with pytest.raises(ValueError, match="query"):
        FigureOptions(query=-1).validated()


def test_masked_cells_are_labelled_minus_infinity_before_and_0_after_the_softmax(lesson_scene):
    scene = lesson_scene.with_mask("causal")
    for stage, label in (("scores", "−∞"), ("scaled", "−∞"), ("weights", "0")):
        opts = FigureOptions(query=LESSON_QUERY, stage=stage, values=False)
        img, lay = render_with_layout(scene, opts, 1600)
        assert lay.blocked.sum() == 6
        for i, j in zip(*np.nonzero(lay.blocked), strict=False):
            c = lay.cell_rect(i, j).center()
            px = rgb(img, c.x() + 1, c.y() + 3)
            m = QColor(THEMES["light"].masked)
            # the masked fill (or its hatch), never a colormap colour
            assert abs(px[0] - px[1]) <= 3 and abs(px[1] - px[2]) <= 3, (stage, i, j, px)
            assert px[0] <= m.red() + 2
        assert f"blocked cells {label}" in " ".join(texts(lay))


# ---- themes and backgrounds ----------------------------------------------------------------------
@pytest.mark.parametrize("theme", list(THEMES))
def test_each_theme_paints_its_background_and_ink(lesson_scene, theme):
    opts = FigureOptions(query=LESSON_QUERY, theme=theme)
    img = render_image(lesson_scene, opts, 900)
    bg = QColor(THEMES[theme].background)
    assert close(rgb(img, 2, 2), bg.getRgb(), tol=0)
    assert close(rgb(img, img.width() - 2, img.height() - 2), bg.getRgb(), tol=0)
    assert all(t.color in (THEMES[theme].text, THEMES[theme].muted, THEMES[theme].highlight)
               for t in figure_layout(lesson_scene, opts).texts)


def test_white_background_uses_dark_ink_even_in_the_dark_theme(lesson_scene):
    opts = FigureOptions(query=LESSON_QUERY, theme="dark", background="white")
    img = render_image(lesson_scene, opts, 900)
    assert rgb(img, 2, 2) == (255, 255, 255, 255)
    lay = figure_layout(lesson_scene, opts)
    title = next(t for t in lay.texts if t.text.startswith("softmax weights"))
    assert QColor(title.color).lightness() < 60


@pytest.mark.parametrize("theme", list(THEMES))
def test_transparent_background_has_alpha_0_at_the_corners(lesson_scene, theme):
    img = render_image(lesson_scene, FigureOptions(query=LESSON_QUERY, theme=theme, background="transparent"), 900)
    for x, y in ((0, 0), (img.width() - 1, 0), (0, img.height() - 1), (img.width() - 1, img.height() - 1)):
        assert img.pixelColor(x, y).alpha() == 0
    lay = figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY, background="transparent"),
                        QSizeF(img.width(), img.height()))
    c = lay.cell_rect(2, 1).center()
    assert img.pixelColor(int(c.x()), int(c.y())).alpha() == 255


def test_unknown_options_are_refused_with_their_name(lesson_scene):
    for bad, word in ((FigureOptions(stage="nope"), "stage"), (FigureOptions(theme="neon"), "theme"),
                      (FigureOptions(background="pink"), "background"), (FigureOptions(colormap="jet"), "colormap"),
                      (FigureOptions(font_scale=0), "font scale")):
        with pytest.raises(ValueError, match=word):
            figure_layout(lesson_scene, bad)


# ---- any size, any device ------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 16, 64, 129, 300, 1024])
def test_any_token_count_renders_with_true_colours(n):
    scene = random_scene(n)
    opts = FigureOptions(stage="weights", values=False, query=n - 1 if n > 1 else 0)
    img, lay = render_with_layout(scene, opts, 2400 if n <= 300 else 7680)
    w = scene.result().weights
    rng = np.random.default_rng(n)
    open_cells = np.argwhere(~lay.blocked)
    for i, j in open_cells[rng.choice(len(open_cells), size=min(30, len(open_cells)), replace=False)]:
        r = lay.cell_rect(i, j)
        assert r.width() >= 1.5  # only sample cells that own a full pixel
        c = r.center()
        assert close(rgb(img, c.x(), c.y()), expected_sequential(w[i, j], "viridis")), (n, i, j)


def test_values_show_when_they_fit_and_hide_when_cells_are_small(lesson_scene):
    assert figure_layout(lesson_scene, FigureOptions(query=LESSON_QUERY)).show_values
    assert figure_layout(random_scene(16), FigureOptions(stage="scaled", query=8)).show_values
    assert not figure_layout(random_scene(64), FigureOptions(query=32)).show_values
    big = MAX_SHAPE_TOKENS + 1
    assert not figure_layout(random_scene(big), FigureOptions(query=big // 2)).show_values


@pytest.mark.parametrize("n", [64, 200, 1024])
def test_dense_labels_are_thinned_so_none_overlap_and_the_query_keeps_its_label(n):
    scene = random_scene(n)
    lay = figure_layout(scene, FigureOptions(query=n // 3))
    rows = [t for t in lay.texts if t.anchor is None and t.text.startswith("tok")]
    rows.sort(key=lambda t: t.rect.top())
    assert len(rows) <= n
    for a, b in zip(rows, rows[1:], strict=False):
        assert a.rect.bottom() <= b.rect.top() + 1e-6, (a.text, b.text)
    assert scene.token_label(n // 3) in [t.text for t in rows]
    if n == 1024:
        assert len(rows) < n  # thinned


def test_all_text_lies_inside_the_figure(lesson_scene):
    from qkv_studio.render.figure import _text_bounds

    for scene, query in ((lesson_scene, LESSON_QUERY), (random_scene(64), 32), (random_scene(1), 0)):
        for stage in ("scores", "weights"):
            lay = figure_layout(scene, FigureOptions(stage=stage, query=query))
            page = QRectF(QPointF(0, 0), lay.logical_size)
            for t in lay.texts:
                assert page.contains(_text_bounds(t)), (t.text, _text_bounds(t), page)


def test_paint_figure_fits_any_rect_of_any_painter(lesson_scene):
    img = QImage(1000, 300, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QColor("#123456"))
    p = QPainter(img)
    lay = paint_figure(p, QRectF(0, 0, 1000, 300), lesson_scene,
                       FigureOptions(query=LESSON_QUERY, background="transparent", values=False))
    p.end()
    grid = lay.grid_rect()
    assert grid.height() < 300 and grid.left() > 200  # scaled to fit the height, centred horizontally
    c = lay.cell_rect(2, 1).center()
    assert close(rgb(img, c.x(), c.y()), expected_sequential(lesson_scene.result().weights[2, 1], "viridis"))
    assert rgb(img, 1, 1)[:3] == (0x12, 0x34, 0x56)


def test_key_labels_never_touch_their_neighbours():
    """Long-ish names under 64 px columns get slightly smaller type or turn vertical, never collide."""
    from qkv_studio.render.figure import _width

    for tokens in (["I", "like", "green", "tea", "[PAD]", "[PAD]"], ["a", "bb", "attention", "x"],
                   ["supercalifragilistic", "b", "c"]):
        n = len(tokens)
        scene = Scene.create(tokens, q=np.eye(n, 2), k=np.eye(n, 2), v=np.eye(n, 2))
        lay = figure_layout(scene, FigureOptions())
        grid = lay.logical_grid()
        cols = [t for t in lay.texts if t.anchor is None and t.rect.top() > grid.bottom()
                and t.text != "attending to (key)"]
        if cols:  # horizontal: each label's ink stays inside its column with a gap
            assert len(cols) == n
            for t in cols:
                ink = _width(t.text, t.px)
                assert ink <= lay.cell - 11, (tokens, t.text, ink)
                assert t.px >= 9
        else:  # vertical labels, one per column
            rotated = [t for t in lay.texts if t.rotate == -90.0 and t.anchor.y() > grid.bottom()]
            assert len(rotated) == n
