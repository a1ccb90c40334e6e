"""The slide's one layout rule (qkv_studio.ui.slide.policy): beside, under, left out, or asked for (P)."""

from qkv_studio.ui.slide.policy import Need, place


def test_no_side_view_gives_the_main_view_the_room():
    p = place(1000, 600, Need(400, 300), None, wanted=True, asked=False, gap=10)
    assert p.main == (0, 0, 1000, 600) and p.side is None and not p.left_out


def test_the_side_view_stands_beside_where_both_widths_fit():
    p = place(1000, 600, Need(500, 400), Need(300, 200), wanted=True, asked=False, gap=10)
    assert p.where == "beside" and p.side == (700, 0, 300, 200) and p.main == (0, 0, 690, 600)


def test_else_under_where_both_heights_fit():
    p = place(1000, 600, Need(900, 300), Need(600, 200), wanted=True, asked=False, gap=10)
    assert p.where == "under" and p.side == (0, 400, 600, 200) and p.main == (0, 0, 1000, 390)


def test_else_left_out_and_said_so():
    p = place(1000, 600, Need(900, 500), Need(600, 200), wanted=True, asked=False, gap=10)
    assert p.side is None and p.left_out and p.main == (0, 0, 1000, 600)


def test_a_side_view_taller_than_the_room_is_never_legible_beside():
    p = place(1000, 600, Need(300, 300), Need(300, 700), wanted=True, asked=False, gap=10)
    assert p.left_out


def test_asked_for_it_stands_beside_at_most_half_the_room():
    p = place(1000, 600, Need(900, 500), Need(800, 900), wanted=False, asked=True, gap=10)
    assert p.where == "asked" and p.side == (500, 0, 500, 600) and p.main == (0, 0, 490, 600)


def test_not_wanted_and_not_asked_is_not_shown_and_not_hinted():
    p = place(1000, 600, Need(300, 300), Need(300, 200), wanted=False, asked=False, gap=10)
    assert p.side is None and not p.left_out
