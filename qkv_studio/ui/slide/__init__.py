"""The presentation slide: a full-screen widget of its own, composed of its own views.

F5 shows a :class:`~.widget.SlideWidget` full screen on the window's screen and Esc hides it; the main
window and its docks never move, so nothing is restored.  The slide's views (heatmap, calculation
table, vector plane, blend) are new instances bound to the same Session and to a
:class:`~.look.SlideLook` (the window's theme and colour map, the slide's own text scale); views keep no
state of their own, so the slide always shows what the window shows.

One module per job:

- :mod:`.look` — the slide's Appearance: the window's theme and colour map, the slide's scale;
- :mod:`.policy` — the one declared layout rule (where the side view stands, or that it is left out);
- :mod:`.measure` — what the rule is given: the views' legible sizes, measured with the fonts;
- :mod:`.views` — the slide's view instances, made when first shown;
- :mod:`.widget` — the slide: the stage bar, formula and caption over the views, the P hint, the
  black screen and the ink.

Adding a view to the slides is one entry in :data:`.views.VIEW_FACTORIES` (and a ``slide_view`` of a
stage in :mod:`qkv_studio.core.stages`), plus its legible size in :mod:`.measure`.
"""

from qkv_studio.ui.slide.look import SlideLook
from qkv_studio.ui.slide.widget import SlideWidget

__all__ = ["SlideLook", "SlideWidget"]
