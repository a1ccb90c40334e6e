"""The interactive page: one self-contained ``.html`` file a student opens from disk, and the data the
notebook widget (:mod:`qkv_studio.notebook`) hands to the same front end.

The front end is two real source files beside this module, ``qkv_page.js`` (one plain ES module: the
numbers, the captions, the view) and ``qkv_page.css``, with the page's skeleton ``template.html``.  A page
inlines all three and the data (:func:`page_data`): the scenes as session-file objects
(:func:`qkv_studio.core.sessionfile.scene_to_dict`, so *Save .qkv.json* writes a file the app opens), the
stage registry's words and formulas (:mod:`qkv_studio.core.stages`: written once, read by both) and the
app's colour tables.  Nothing else is loaded: no font, no script, no request (the page's Content Security
Policy forbids any).  NumPy only, no Qt.

To change what the page shows, edit ``qkv_page.js`` (its tests: ``tests/export/test_page*.py``, which
drive it in Chromium); to hand it more of the app's data, add a key in :func:`page_data`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from importlib import resources

import numpy as np

from qkv_studio.core.presets import description_note
from qkv_studio.core.scene import Scene
from qkv_studio.core.sessionfile import scene_to_dict
from qkv_studio.core.stages import FORMULA, REGISTRY, shown_matrix
from qkv_studio.core.view import View

#: The most tokens a page shows: its heatmap is a table of n² cells, each a touch target.
MAX_PAGE_TOKENS = 128
#: Colour stops taken from the app's 256-entry lookup tables (every 8th, and the last).
_STOPS = tuple(range(0, 256, 8)) + (255,)


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def front_end_js() -> str:
    """The front end's ES module (the page and the notebook widget run this same text)."""
    js = _source("qkv_page.js")
    if "</script" in js.lower():  # (inlined in a <script>: it would end there)
        raise ValueError("qkv_page.js holds a closing script tag; write it as '<\\/script'")
    return js


def front_end_css() -> str:
    """The front end's style sheet."""
    return _source("qkv_page.css")


def _colours() -> dict[str, list[list[int]]]:
    from qkv_studio.render.lut_data import TABLES  # (data only: no Qt)

    def stops(name: str) -> list[list[int]]:
        table = np.frombuffer(bytes.fromhex(TABLES[name]), np.uint8).reshape(256, 4)
        return [[int(c) for c in table[i, :3]] for i in _STOPS]

    return {"sequential": stops("viridis"), "diverging": stops("CET-CBD1")}


def _stages() -> list[dict]:
    out = []
    for spec in REGISTRY:
        out.append({
            "name": spec.name, "title": spec.title, "button": spec.button, "pieces": list(spec.formula_piece),
            "formula": spec.formula, "columns": [list(c) for c in spec.columns], "reveals": list(spec.reveals),
            "matrix": shown_matrix(spec.name), "previews": spec.previews, "signed": spec.signed,
            "row_sums": spec.row_sums, "heatmap": spec.wording.heatmap,
            "heatmap_unscaled": spec.unscaled.heatmap if spec.unscaled is not None else None,
        })
    return out


def check_scene(scene: Scene, where: str = "") -> None:
    """ValueError (one line) for a scene the page cannot hold: too many tokens, or numbers whose products go
    beyond the double range (the app shows those through its log-space path; the page computes plainly)."""
    at = f"{where}: " if where else ""
    if scene.n > MAX_PAGE_TOKENS:
        raise ValueError(f"{at}the interactive page shows at most {MAX_PAGE_TOKENS} tokens; this scene has "
                         f"{scene.n} (export a shorter text, or a figure)")
    with np.errstate(over="ignore", invalid="ignore"):
        if scene.mode == "projection":
            products = [scene.matrix("X") @ scene.matrix(w) for w in ("Wq", "Wk", "Wv")]
        else:
            products = []
        q, k, v = scene.qkv()
        products += [q @ k.T, scene.result().weights @ v]
    if not all(np.isfinite(p).all() for p in products):
        raise ValueError(f"{at}the interactive page computes plainly in doubles and this scene's products go "
                         f"beyond ±1.8e308; export a figure of it instead")


def scene_entry(scene: Scene, view: View) -> dict:
    """One scene of a page: its session-file object with the view, the head shown and the description's
    note (shown while the numbers are the lecturer's)."""
    check_scene(scene)
    view = view.check(scene) if view.head < scene.heads else View(view.query, view.stage).check(scene)
    entry = scene_to_dict(scene, view)
    entry["head"] = int(min(max(view.head, 0), scene.heads - 1))
    note = description_note(scene)
    if note:
        entry["note"] = note
    return entry


def page_data(documents: Iterable[tuple[Scene, View]], title: str = "") -> dict:
    """What the front end shows: ``scenes`` (one per (scene, view), in order), the stage registry's
    ``stages`` and ``formula``, the ``colours`` and a ``title``."""
    scenes = []
    for i, (scene, view) in enumerate(documents):
        try:
            scenes.append(scene_entry(scene, view))
        except ValueError as exc:
            raise ValueError(f"scene {i + 1}: {exc}" if i or scenes else str(exc)) from None
    if not scenes:
        raise ValueError("an interactive page needs at least one scene")
    return {"format": "qkv-studio-page", "version": 1, "title": title or scenes[0].get("title") or "Self-attention",
            "scenes": scenes, "stages": _stages(), "formula": FORMULA, "colours": _colours()}


def _json_for_script(obj) -> str:
    # allow_nan=False: a page never holds NaN/∞ (JSON cannot); "<" escaped so no "</script>" can end the block.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


def page_html(documents: Sequence[tuple[Scene, View]], title: str = "") -> str:
    """The whole page: template, style, data and script in one HTML text."""
    data = page_data(documents, title)
    parts = {"title": html.escape(data["title"]), "css": front_end_css(), "data": _json_for_script(data),
             "js": front_end_js()}
    # (one pass over the template: a token spelled "{{js}}" in the data stays text)
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m.group(1)], _source("template.html"))


def page_bytes(documents: Sequence[tuple[Scene, View]], title: str = "") -> bytes:
    """:func:`page_html` as UTF-8 bytes (what ``-o lesson.html`` writes)."""
    return page_html(documents, title).encode("utf-8")


def export_page(documents: Sequence[tuple[Scene, View]], path, title: str = "") -> None:
    """Write the page of ``documents`` to ``path`` atomically (nothing partial on failure); ValueError for a
    scene it cannot hold, OSError ("cannot write PATH: reason")."""
    from qkv_studio.export.atomic import write_atomic

    write_atomic(path, page_bytes(documents, title))


__all__ = ["MAX_PAGE_TOKENS", "export_page", "check_scene", "front_end_css", "front_end_js", "page_bytes", "page_data",
           "page_html", "scene_entry"]
