"""``qkv_studio.widget`` (issue 33 item 5): the page's front end inline in a notebook, on anywidget.

Python's side (the traits both ways), the front end's side of the same protocol driven in Chromium with
a model object of anywidget's shape, a notebook executed by nbclient, and the saved notebook's kernel-free
copy opened in the browser."""

from __future__ import annotations

import json
import re
from html import unescape

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import qkv_studio
from qkv_studio.core import View, load_preset
from qkv_studio.core.scene import SceneError
from qkv_studio.export.page import front_end_js, page_html
from tests.export.page_helpers import Opened

Q = [[0, 1], [1, 0], [1, 2], [0.5, 0.5]]
K = [[1, 0], [2, 1], [0, 1], [1, 1]]
V = [[1, 0], [0, 1], [1, 1], [0.5, -1]]
TOKENS = ["the", "cat", "sat", "mat"]


def test_widget_from_arrays_scene_or_preset():
    w = qkv_studio.widget(Q, K, V, tokens=TOKENS, query="sat")
    assert w.scene.tokens == tuple(TOKENS) and w.view.query == 2
    assert [f"{x:.2f}" for x in w.weights[2]] == ["0.06", "0.54", "0.13", "0.27"]  # the lesson's
    assert qkv_studio.widget(load_preset("multihead")).scene.heads == 2
    assert qkv_studio.widget("causal").scene.mask == "causal"
    with pytest.raises(SceneError):
        qkv_studio.widget(Q, K, V[:3], tokens=TOKENS)


def test_same_front_end_as_the_page():
    w = qkv_studio.widget("lesson")
    esm = w.get_state()["_esm"]
    assert esm == front_end_js()
    assert esm in page_html([(load_preset("lesson"), View())])
    assert "export function render" in esm and "export default { render }" in esm


def test_assignment_from_python_is_synced_and_edits_come_back():
    w = qkv_studio.widget("lesson")
    sent = []
    w.observe(lambda change: sent.append(change["new"]), names="session")
    w.scene = w.scene.with_mask("causal")
    assert json.loads(w.get_state()["session"])["mask"] == "causal" and len(sent) == 1
    np.testing.assert_array_equal(w.weights, load_preset("lesson").with_mask("causal").result().weights)
    # What the front end sends after an edit (anywidget's model.set + save_changes → a comm update).
    edited = json.loads(w.session)
    edited["Q"][2] = [3.0, -1.0]
    edited["stage"] = "output"
    w.set_state({"session": json.dumps(edited)})
    assert w.scene.q[2].tolist() == [3.0, -1.0] and w.view.stage == "output"
    np.testing.assert_array_equal(w.weights[2], w.scene.result().weights[2])


_HOST = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>{css}</style></head><body><div id="w"></div>
<script type="module">
{esm}
const state = {state};
const handlers = {{}};
const model = {{
  get: (key) => state[key], set: (key, value) => {{ state[key] = value; }},
  save_changes: () => {{ globalThis.saved = (globalThis.saved || 0) + 1; }},
  on: (event, cb) => {{ handlers[event] = cb; }},
}};
globalThis.fromPython = (session) => {{ state.session = session; handlers["change:session"](); }};
globalThis.state = state;
render({{ model, el: document.getElementById("w") }});
globalThis.ready = true;
</script></body></html>"""


def test_front_end_half_of_the_widget_in_chromium(browser, tmp_path):
    """The ESM anywidget loads, given a model of anywidget's shape: a student's edit reaches the model
    (and so Python), an assignment from Python redraws the view."""
    w = qkv_studio.widget("lesson")
    state = w.get_state()
    page = tmp_path / "host.html"
    page.write_text(_HOST.format(css=state["_css"], esm=state["_esm"],
                                 state=json.dumps({"data": state["data"], "session": state["session"]})
                                 .replace("<", "\\u003c")),  # (the data holds a whole page: no "</script>" here)
                    encoding="utf-8")
    opened = Opened.__new__(Opened)
    opened.context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    opened.page = opened.context.new_page()
    errors = []
    opened.page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        opened.page.goto(page.resolve().as_uri())
        opened.page.wait_for_function("globalThis.ready === true")
        cell = opened.page.get_by_label("K cat, column 1")
        cell.fill("-2")
        cell.press("Enter")
        sent = opened.page.evaluate("state.session")
        w.set_state({"session": sent})  # as the comm delivers it
        assert w.scene.k[1, 0] == -2.0
        texts = opened.page.eval_on_selector_all(
            "table.qkv-heatmap tbody tr:nth-child(3) td.qkv-cell[data-value]", "cs => cs.map(c => c.textContent)")
        assert texts == [f"{x:.2f}" for x in w.weights[2]]
        w.scene = w.scene.with_scale(False)  # Python assigns …
        opened.page.evaluate("s => fromPython(s)", w.session)  # … the comm delivers it …
        texts = opened.page.eval_on_selector_all(
            "table.qkv-heatmap tbody tr:nth-child(3) td.qkv-cell[data-value]", "cs => cs.map(c => c.textContent)")
        assert texts == [f"{x:.2f}" for x in w.weights[2]]  # … the view shows it
        assert opened.page.get_by_role("checkbox", name="÷ √dₖ").is_checked() is False
        assert errors == []
    finally:
        opened.context.close()


def test_notebook_runs_and_its_saved_copy_opens_without_a_kernel(browser, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import qkv_studio\nw = qkv_studio.widget('lesson')\nw"),
        nbformat.v4.new_code_cell("w.scene = w.scene.with_mask('causal')\n"
                                  "print([round(float(x), 2) for x in w.weights[2]])"),
        nbformat.v4.new_code_cell(
            "import json\nd = json.loads(w.session)\nd['V'][0] = [9.0, 9.0]\nw.set_state({'session': json.dumps(d)})\n"
            "print(w.scene.v[0].tolist(), w.shown.result().output[0].tolist())\nw"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = [o["text"] for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout"]
    assert printed[0].strip() == "[0.09, 0.73, 0.18, 0.0]"
    assert printed[1].strip() == "[9.0, 9.0] [9.0, 9.0]"  # "the" sees only itself under the causal mask
    saved = tmp_path / "lesson.ipynb"
    nbformat.write(nb, saved)
    last = nbformat.read(saved, as_version=4).cells[2].outputs[-1]
    assert "application/vnd.jupyter.widget-view+json" in last["data"]
    frame = last["data"]["text/html"]
    srcdoc = unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1))
    copy = tmp_path / "kernel-free.html"
    copy.write_text(srcdoc, encoding="utf-8")
    opened = Opened(browser, copy)
    try:
        assert opened.doc()["V"][0] == [9.0, 9.0] and opened.doc()["mask"] == "causal"
        assert opened.cell_texts()[0][0] == "1.00"
        assert opened.foreign_requests() == [] and opened.errors == []
    finally:
        opened.close()
