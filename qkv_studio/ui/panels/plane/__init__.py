"""The vector plane: the 2-D plot of the q, k and v vectors whose arrow heads can be dragged.

One job per module:

- :mod:`.widget` — :class:`VectorPlane`, the panel: composes the parts below and follows the Session;
- :mod:`.vectors` — what is drawn: each vector's two plotted coordinates (first two components or PCA);
- :mod:`.arrows` — the arrow items, one curve per set;
- :mod:`.labels` — the labels at the heads, merged where they would overlap;
- :mod:`.view_range` — the range that fits every arrow and label, and when to refit;
- :mod:`.drag` — grabbing and moving heads, snapping (Shift: a grid of 0.5);
- :mod:`.caption` — the header's text and the axes' titles;
- :mod:`.rope_view` — the RoPE view: one rotation pair of q and k before and after RoPE (a RoPE model's head).
"""

from qkv_studio.ui.panels.plane.widget import VectorPlane

__all__ = ["VectorPlane"]
