"""The lookup tables the cells (and the legend) are coloured from."""

import numpy as np
import pyqtgraph as pg
import pytest

from qkv_studio.render import colormaps
from qkv_studio.render.colormaps import DIVERGING, SEQUENTIAL, lut
from qkv_studio.render.lut_data import TABLES


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_shipped_tables_are_pyqtgraphs_own(name):
    """The tables kept in lut_data are byte for byte what pyqtgraph makes of its maps (guards an
    upgrade of pyqtgraph: regenerate them as lut_data's docstring says)."""
    own = np.ascontiguousarray(pg.colormap.get(name).getLookupTable(0.0, 1.0, 256, alpha=True), dtype=np.uint8)
    assert np.array_equal(lut(name), own)


def test_every_offered_map_has_a_table_without_reading_pyqtgraphs_files(monkeypatch):
    colormaps._LUT_CACHE.clear()
    monkeypatch.setattr(pg.colormap, "get", lambda *a, **k: pytest.fail("read a colour map file"))
    for name in (*SEQUENTIAL, DIVERGING):
        table = lut(name)
        assert table.shape == (256, 4) and table.dtype == np.uint8 and (table[:, 3] == 255).all()
    colormaps._LUT_CACHE.clear()


def test_other_sizes_and_maps_still_come_from_pyqtgraph():
    assert lut("viridis", 16).shape == (16, 4)
    assert lut("plasma").shape == (256, 4)
    with pytest.raises((ValueError, OSError, KeyError)):
        lut("no-such-map")
