"""How numbers are written: one minus sign everywhere (the typographic one the heatmap draws)."""

import numpy as np

from qkv_studio.core.text import fmt, fmt_fixed, fmt_vector


def test_negative_numbers_take_the_typographic_minus_in_every_form():
    # (the table wrote "-2.28e3" beside the heatmap's "−2.28e3": only the exponent form kept a hyphen)
    assert fmt(-2283.7, 3) == "−2.28e3"
    assert fmt(-1.5) == "−1.5"
    assert fmt(1e-5) == "1e−5"
    assert fmt(-123456.789, 3) == "−1.23e5"
    assert fmt_fixed(-1e7) == "−1e7"
    assert fmt_vector(np.array([-123456.789, 2.0])) == "[−1.23e5, 2]"
    assert "-" not in fmt(-3e-9) + fmt_fixed(-0.5) + fmt(-float("inf"))
