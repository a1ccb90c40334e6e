"""``qkv_studio.widget(q, k, v, tokens=…)``: the interactive page inline in a notebook, on ``anywidget``.

::

    import qkv_studio
    w = qkv_studio.widget(q, k, v, tokens=["the", "cat", "sat", "mat"])   # or widget(scene), widget("lesson")
    w                                  # the view in the cell: pick, step, edit, drag, as on the page
    w.scene, w.weights                 # the student's edits, read back in Python (a Scene; NumPy weights)
    w.scene = w.scene.with_mask("causal")   # an assignment from Python redraws it

The widget runs the page's own front end: its ES module is :func:`qkv_studio.export.page.front_end_js`,
the same text the exported ``.html`` page inlines (one front end, no CDN, nothing to build), so it works
wherever anywidget does (JupyterLab, Notebook 7, VS Code, Colab).  Two traits carry it: ``data`` (the
page's data: the lecturer's scene, the stage registry, the colours; set once) and ``session`` (the
current scene as a session-file object, JSON; the front end sets it after every edit, Python by
assigning :attr:`AttentionWidget.scene`).  A saved notebook also holds a copy of the view that needs no
kernel: the page itself, inline (``text/html``), beside the widget's own output.

``qkv_studio.show()`` stays the Qt window.  Needs ``pip install 'qkv-studio[notebook]'`` (anywidget).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable

import numpy as np

from qkv_studio.core.presets import preset_document
from qkv_studio.core.scene import Scene
from qkv_studio.core.sessionfile import SessionFileError, document_from_dict
from qkv_studio.core.view import View, shown_scene
from qkv_studio.export.page import front_end_css, front_end_js, page_data, page_html, scene_entry

try:
    import anywidget
    import traitlets
except ImportError as exc:  # (the extra is optional: say what to install, once, when it is used)
    _MISSING: ImportError | None = exc
else:
    _MISSING = None

_PAGE_KEYS = ("head", "note")


def _need_anywidget() -> None:
    if _MISSING is not None:
        raise ImportError(f"qkv_studio.widget needs anywidget: pip install 'qkv-studio[notebook]' ({_MISSING})")


if _MISSING is None:

    class AttentionWidget(anywidget.AnyWidget):
        """The interactive view of one scene in a notebook cell (see the module's docstring).

        Traits (synchronised with the front end): ``data`` — the page's data as JSON (the lecturer's
        scene, what *Reset* returns to); ``session`` — the current scene and view as a session-file object
        in JSON, set by the front end after each edit and by :attr:`scene`/:attr:`view` from Python.
        """

        _esm = front_end_js()
        _css = front_end_css()
        data = traitlets.Unicode("").tag(sync=True)
        session = traitlets.Unicode("").tag(sync=True)

        def __init__(self, scene: Scene, view: View = View(), **kwargs) -> None:
            entry = scene_entry(scene, view)
            data = page_data([(scene, view)])
            data["pristine"] = page_html([(scene, view)])  # (what *Save page* fills with the student's version)
            super().__init__(data=json.dumps(data), session=json.dumps(entry), **kwargs)

        # ---- what Python reads ---------------------------------------------------------------------
        def _entry(self) -> dict:
            return json.loads(self.session)

        @property
        def scene(self) -> Scene:
            """The scene as the student left it (the core's Scene: every number exact)."""
            return self._document().scene

        @scene.setter
        def scene(self, scene: Scene) -> None:
            if not isinstance(scene, Scene):
                raise TypeError(f"a widget's scene is a Scene, not {type(scene).__name__}")
            self.session = json.dumps(scene_entry(scene, self.view.fitted(scene)))

        @property
        def view(self) -> View:
            """The query, stage and head the student is looking at."""
            entry = self._entry()
            return View(int(entry["query"]), entry["stage"], int(entry.get("head", 0)))

        @view.setter
        def view(self, view: View) -> None:
            self.session = json.dumps(scene_entry(self.scene, view))

        @property
        def shown(self) -> Scene:
            """The scene the view shows: the selected head's own, for a scene split into heads."""
            return shown_scene(self.scene, self.view.head)

        @property
        def weights(self) -> np.ndarray:
            """The softmax weights the view shows (n × n), computed by the core."""
            return self.shown.result().weights

        def _document(self):
            entry = {k: v for k, v in self._entry().items() if k not in _PAGE_KEYS}
            try:
                return document_from_dict(entry, "the widget")
            except SessionFileError as exc:  # (the front end only sends what it checked; say so if not)
                raise ValueError(f"the widget holds a scene the app refuses: {exc}") from None

        # ---- a saved notebook without a kernel ------------------------------------------------------
        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            if isinstance(data, dict):
                page = page_html([(self.scene, self.view)])
                data["text/html"] = (f'<iframe title="QKV Studio: the attention scene" srcdoc="{html.escape(page)}" '
                                     'style="width:100%;height:760px;border:0" sandbox="allow-scripts allow-downloads">'
                                     '</iframe>')
            return bundle


def widget(q=None, k=None, v=None, tokens: Iterable[str] | None = None, *, x=None, wq=None, wk=None, wv=None,
           mask=None, scale: bool = True, title: str | None = None, query: int | str = 0,
           stage: str = "weights"):
    """The interactive view inline in a notebook: ``widget(q, k, v, tokens=…)``, ``widget(scene)`` or
    ``widget("lesson")`` (a preset's name).  ``query`` (index or token) and ``stage`` are where it opens.
    Returns an :class:`AttentionWidget`; raises SceneError for arrays a scene cannot hold, ImportError
    without anywidget."""
    _need_anywidget()
    view = View()
    if isinstance(q, Scene):
        scene = q
    elif isinstance(q, str) and k is None:
        scene, view = preset_document(q)
    else:
        scene = Scene.from_arrays(q, k, v, tokens, x=x, wq=wq, wk=wk, wv=wv, mask=mask, scale=scale, title=title)
    if query != 0 or stage != "weights" or isinstance(q, Scene):
        view = View(scene.find_token(query), stage).check(scene)
    return AttentionWidget(scene, view)


__all__ = ["widget"] + (["AttentionWidget"] if _MISSING is None else [])
