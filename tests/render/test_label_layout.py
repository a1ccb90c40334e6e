"""The label layout shared by the heatmap and the figure: no overlaps, the query labelled, numbers fit."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv_studio.render.label_layout import (
    ELLIPSIS,
    UPRIGHT,
    TextMeasure,
    abbreviate,
    axis_title,
    bar_ticks,
    key_labels,
    row_labels,
    thin,
    value_px,
    value_px_cap,
)

# A monospace-like measure: 0.6 px of width per px of size and character, lines 1.2 px per px.
MONO = TextMeasure(width=lambda text, px: 0.6 * px * len(text), line=1.2)
NAMES = ["the", "cat", "sat", "on", "a", "mat", "extraordinarily", "x"]


def _names(n: int, long: bool = False) -> list[str]:
    word = "tokenization_is_long_" if long else "w"
    return [f"{word}{i}" for i in range(n)]


def _boxes_along(labels, cell: float, measure: TextMeasure, across_width: bool):
    """(start, end) along the axis of each shown label: side by side their width, upright a line."""
    out = []
    for i, text in labels.pairs():
        half = (measure.width(text, labels.px) if across_width else measure.height(labels.px)) / 2
        centre = (i + 0.5) * cell
        out.append((centre - half, centre + half))
    return out


def _no_overlap(boxes) -> bool:
    boxes = sorted(boxes)
    return all(a[1] <= b[0] + 1e-6 for a, b in zip(boxes, boxes[1:], strict=False))


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 1024), cell=st.floats(0.5, 120), px=st.floats(8, 40),
       query=st.integers(0, 1023), long=st.booleans())
def test_row_labels_never_overlap_and_always_name_the_query(n, cell, px, query, long):
    query %= n
    labels = row_labels(_names(n, long), cell, px, MONO, min_px=0.6 * px, max_width=12 * px, keep=[query])
    assert query in labels.shown
    assert _no_overlap(_boxes_along(labels, cell, MONO, across_width=False))
    assert all(MONO.width(t, labels.px) <= 12 * px + 1e-6 for t in labels.texts)
    if n <= 32 and MONO.height(0.6 * px) * 1.125 <= cell:
        assert labels.shown == tuple(range(n))  # all of them when a smaller size fits


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 1024), cell=st.floats(0.5, 160), px=st.floats(8, 40),
       selected=st.integers(0, 1023), long=st.booleans())
def test_key_labels_never_overlap_and_keep_the_selected_key(n, cell, px, selected, long):
    selected %= n
    labels = key_labels(_names(n, long), cell, px, MONO, min_px=0.6 * px, max_extent=8 * px, keep=[selected])
    assert selected in labels.shown
    side_by_side = labels.rotation == 0
    assert _no_overlap(_boxes_along(labels, cell, MONO, across_width=side_by_side))
    if side_by_side:
        assert labels.shown == tuple(range(n))
        assert all(MONO.width(t, labels.px) <= cell for t in labels.texts)
    else:
        assert labels.rotation == UPRIGHT
        assert all(MONO.width(t, labels.px) <= 8 * px + 1e-6 for t in labels.texts)


@pytest.mark.parametrize("n", [1, 2, 4, 16, 31, 32, 33, 64, 65, 256, 1000, 1024])
@pytest.mark.parametrize("span", [300.0, 700.0, 1800.0])
def test_every_token_is_named_when_there_is_room_and_the_query_always(n, span):
    cell = span / n
    query = (n // 2 + 1) % n
    rows = row_labels(_names(n), cell, 17, MONO, min_px=11, max_width=200, keep=[query])
    keys = key_labels(_names(n), cell, 17, MONO, min_px=11, max_extent=120, keep=[query])
    assert query in rows.shown and query in keys.shown
    if cell >= MONO.height(11) * 1.125:
        assert rows.shown == keys.shown == tuple(range(n))
    else:  # thinned evenly: gaps no larger than the step (and the query's neighbours make way)
        assert len(rows.shown) >= min(n, span / (MONO.height(17) * 1.125)) / 2 - 1
    assert _no_overlap(_boxes_along(rows, cell, MONO, across_width=False))


def test_zoomed_in_every_visible_token_is_named():
    names = _names(256)
    whole = row_labels(names, 2.0, 17, MONO, min_px=11, max_width=200, keep=[100])
    assert whole.step > 1
    zoomed = row_labels(names, 40.0, 17, MONO, min_px=11, max_width=200, keep=[100], visible=(90, 110))
    assert zoomed.shown == tuple(range(90, 110)) and zoomed.step == 1


def test_the_lesson_keys_lie_flat_when_they_fit_and_stand_up_when_they_do_not():
    flat = key_labels(NAMES[:4], 120, 17, MONO, min_px=11, max_extent=200)
    assert flat.rotation == 0 and flat.texts == tuple(NAMES[:4]) and flat.px == 17
    narrow = key_labels(NAMES, 22, 17, MONO, min_px=11, max_extent=60)
    assert narrow.rotation == UPRIGHT and narrow.shown == tuple(range(8))
    assert narrow.texts[6].endswith(ELLIPSIS) and MONO.width(narrow.texts[6], narrow.px) <= 60


def test_thin_keeps_the_grid_and_makes_room_for_the_kept_index():
    assert thin(0, 10, 1, [3]) == list(range(10))
    assert thin(0, 10, 3) == [0, 3, 6, 9]
    assert thin(0, 10, 3, [4]) == [0, 4, 9]  # 3 and 6 would crowd 4
    assert thin(0, 10, 3, [4, 5]) == [0, 4, 9]  # the first kept wins over a close second
    assert thin(5, 12, 3) == [6, 9]  # zoomed: the same grid, not one shifted to the view


def test_abbreviate_cuts_with_an_ellipsis_and_keeps_what_fits():
    assert abbreviate("cat", 10, 100, MONO) == "cat"
    short = abbreviate("extraordinarily", 10, 40, MONO)
    assert short.endswith(ELLIPSIS) and MONO.width(short, 10) <= 40 and len(short) >= 2


@pytest.mark.parametrize("room", [1000, 250, 120, 60, 10])
def test_an_axis_title_is_never_wider_than_its_room_and_never_doubled(room):
    title = axis_title(["attending from (query)", "query"], 15, room, MONO, min_px=11)
    assert title.width <= room + 1e-6 and (title.text or room < MONO.width("q" + ELLIPSIS, 11))
    assert 11 <= title.px <= 15
    if room >= MONO.width("attending from (query)", 15):
        assert title.text == "attending from (query)" and title.px == 15
    elif room >= MONO.width("query", 11):
        assert title.text in ("query", "attending from (query)")


@settings(max_examples=300, deadline=None)
@given(cell_w=st.floats(1, 200), cell_h=st.floats(1, 200), max_px=st.floats(8, 64))
def test_numbers_fit_their_cells_or_are_not_drawn(cell_w, cell_h, max_px):
    samples = ["0.54", "−12.3", "−∞"]
    px = value_px(samples, cell_w, cell_h, MONO, max_px=max_px, min_px=8)
    if px:
        assert 8 <= px <= max_px
        assert max(MONO.width(t, px) for t in samples) <= cell_w
        assert MONO.height(px) <= cell_h
    else:
        assert min(0.86 * cell_w / MONO.width("−12.3", 1), 0.8 * cell_h / 1.2, max_px) < 8


@settings(max_examples=200, deadline=None)
@given(height=st.floats(5, 2000), count=st.integers(2, 12), px=st.floats(8, 40))
def test_colour_bar_ticks_never_overlap_and_keep_both_ends(height, count, px):
    positions = [height * i / (count - 1) for i in range(count)]
    kept = bar_ticks(positions, px, MONO)
    assert kept[0] == 0
    ys = [positions[i] for i in kept]
    assert all(b - a >= MONO.height(px) for a, b in zip(ys, ys[1:], strict=False))
    if height >= 2 * MONO.height(px):
        assert kept[-1] == count - 1


@settings(max_examples=300, deadline=None)
@given(cell_w=st.floats(1, 200), cell_h=st.floats(1, 200), max_px=st.floats(8, 64),
       samples=st.lists(st.text("0123456789.−∞", min_size=1, max_size=8), min_size=1, max_size=5))
def test_the_cap_bounds_every_size_so_below_it_nothing_needs_formatting(cell_w, cell_h, max_px, samples):
    # The heatmap asks for the cap before it formats any number: below min_px it skips them all.
    cap = value_px_cap(cell_h, MONO, max_px=max_px, height_frac=0.8)
    px = value_px(samples, cell_w, cell_h, MONO, max_px=max_px, min_px=8, height_frac=0.8)
    assert px <= cap
    if cap < 8:
        assert px == 0
