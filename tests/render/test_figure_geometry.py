"""The figure's layout through the shared label layout: no two texts overlap, the query is named."""

import numpy as np
import pytest

from qkv_studio.core import Scene, load_preset, preset_document
from qkv_studio.render.figure import FigureOptions, _text_bounds, _width, figure_layout
from qkv_studio.render.label_layout import ELLIPSIS


@pytest.fixture(autouse=True)
def _app(qapp):
    return qapp


def _scene(n: int, word: str = "tok") -> Scene:
    rng = np.random.default_rng(n)
    return Scene.create([f"{word}{i}" for i in range(n)], q=rng.normal(size=(n, 4)), k=rng.normal(size=(n, 4)),
                        v=rng.normal(size=(n, 2)))


def _overlaps(lay) -> list[tuple[str, str]]:
    boxes = [(t.text, _text_bounds(t).adjusted(0.5, 0.5, -0.5, -0.5)) for t in lay.texts]
    return [(a, b) for k, (a, ra) in enumerate(boxes) for b, rb in boxes[k + 1:] if ra.intersects(rb)]


CASES = [("lesson", None), ("long", None), ("tok", 16), ("a_rather_long_token_", 24), ("tok", 200)]


@pytest.mark.parametrize("word, n", CASES)
@pytest.mark.parametrize("stage", ["scores", "weights"])
def test_no_two_texts_of_the_figure_overlap_and_the_query_row_is_named(word, n, stage):
    if n is None:
        doc = preset_document(word)
        scene, query = doc.scene, doc.view.query
    else:
        scene, query = _scene(n, word), n // 3
    lay = figure_layout(scene, FigureOptions(stage=stage, query=query))
    assert _overlaps(lay) == []
    rows = [t for t in lay.texts if t.bold and t.color == lay.theme.highlight]
    assert len(rows) == 1 and rows[0].text.rstrip(ELLIPSIS) in scene.token_label(query)
    assert query in lay.row_label_ticks and query in lay.col_label_ticks
    if scene.n <= 32:  # every token named on both axes (whole or abbreviated), none dropped
        assert lay.row_label_ticks == lay.col_label_ticks == list(range(scene.n))


def test_the_long_preset_names_all_64_keys_upright():
    doc = preset_document("long")
    lay = figure_layout(doc.scene, FigureOptions(query=doc.view.query))
    upright = [t for t in lay.texts if t.rotate == -90.0 and t.anchor.y() > lay.logical_grid().bottom()]
    assert len(upright) == 64 == doc.scene.n


def test_numbers_fit_their_cells():
    scene = load_preset("lesson")
    for stage in ("scores", "scaled", "weights"):
        lay = figure_layout(scene, FigureOptions(stage=stage, query=2))
        assert lay.show_values
        widest = max(_width(f"{v:.2f}", lay.value_px) for v in lay.matrix.ravel())
        assert widest <= lay.cell
