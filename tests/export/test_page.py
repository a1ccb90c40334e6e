"""The interactive page as a file (issue 33 item 1): one self-contained HTML file from the registry, the
command line (every scene source) and the Python API; what it holds; what it refuses.  (Its behaviour in a
browser: test_page_browser.py.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qkv_studio
from qkv_studio.core import Scene, View, load_preset, read_session
from qkv_studio.core.deck import write_deck
from qkv_studio.core.sessionfile import scene_from_dict
from qkv_studio.core.stages import STAGES
from qkv_studio.export import formats
from qkv_studio.export.page import MAX_PAGE_TOKENS, front_end_css, front_end_js, page_html


def _data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="qkv-data">(.*?)</script>', html, re.S)
    assert m, "the page holds its data in one JSON block"
    return json.loads(m.group(1))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qkv_studio", *args], capture_output=True, text=True, timeout=120)


def test_registered_as_one_format_without_qt():
    fmt = formats.get(".html")
    assert fmt is not None and fmt.kind == "page" and not fmt.needs_qt
    assert formats.pictures(fmt) == ("page",)
    assert ".html" in formats.suffixes()


def test_one_self_contained_file():
    html = page_html([(load_preset("lesson"), View(query=2, stage="weights"))])
    assert front_end_js() in html and front_end_css() in html
    # Nothing outside the file: no src/href to anything, no @import or url() to fetch, no http(s) anywhere.
    assert not re.search(r"\s(src|href)\s*=", html)
    assert "@import" not in html and "url(" not in html
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", html)  # (the SVG namespace is a name, not a fetch)
    assert "default-src 'none'" in html  # the page's policy forbids any request, should one be written later
    assert html.count("</script>") == 2


def test_opens_on_the_scene_as_exported():
    scene = load_preset("lesson").with_mask("causal").with_scale(False)
    data = _data(page_html([(scene, View(query=1, stage="scores"))]))
    (entry,) = data["scenes"]
    assert entry["query"] == 1 and entry["stage"] == "scores" and entry["mask"] == "causal" and entry["scale"] is False
    assert entry["tokens"] == list(scene.tokens)
    back = scene_from_dict({k: v for k, v in entry.items() if k not in ("head", "note")})
    for a, b in zip(back.qkv(), scene.qkv(), strict=True):
        assert np.array_equal(a, b)  # every digit (JSON keeps a double's repr)
    assert [s["name"] for s in data["stages"]] == list(STAGES)


def test_projection_and_heads_are_kept():
    proj = _data(page_html([(load_preset("projection"), View())]))["scenes"][0]
    assert {"X", "Wq", "Wk", "Wv"} <= set(proj) and "Q" not in proj
    multi = load_preset("multihead")
    entry = _data(page_html([(multi, View(head=1))]))["scenes"][0]
    assert entry["heads"] == multi.heads and entry["head"] == 1


def test_hostile_text_cannot_end_the_script():
    scene = Scene.from_arrays(np.eye(2), np.eye(2), np.eye(2), tokens=["</script><script>alert(1)</script>", "{{js}}"])
    html = page_html([(scene, View())])
    assert html.count("</script>") == 2  # only the page's own two
    assert _data(html)["scenes"][0]["tokens"] == list(scene.tokens)


def test_refuses_what_it_cannot_hold():
    big = Scene.from_arrays(np.ones((MAX_PAGE_TOKENS + 1, 2)), np.ones((MAX_PAGE_TOKENS + 1, 2)),
                            np.ones((MAX_PAGE_TOKENS + 1, 2)))
    with pytest.raises(ValueError, match=f"at most {MAX_PAGE_TOKENS} tokens"):
        page_html([(big, View())])
    huge = Scene.from_arrays([[1e200, 1.0]], [[1e200, 1.0]], [[1.0, 1.0]])
    with pytest.raises(ValueError, match="beyond"):
        page_html([(huge, View())])


def test_python_api_writes_it(tmp_path):
    out = qkv_studio.export(load_preset("lesson"), tmp_path / "lesson.html", stage="output", query="cat")
    entry = _data(out.read_text(encoding="utf-8"))["scenes"][0]
    assert (entry["stage"], entry["query"]) == ("output", 1)


def test_command_line_every_source(tmp_path):
    lesson = tmp_path / "mine.qkv.json"
    qkv_studio.save(load_preset("causal"), lesson, View(query=3, stage="scaled"))
    runs = {
        "preset": ["--preset", "multihead"],
        "file": [str(lesson)],
        "options": ["--preset", "lesson", "--stage", "scores", "--query", "cat", "--mask", "causal"],
    }
    for name, args in runs.items():
        out = tmp_path / f"{name}.html"
        r = _cli("export", *args, "-o", str(out))
        assert r.returncode == 0, r.stderr
        data = _data(out.read_text(encoding="utf-8"))
        assert len(data["scenes"]) == 1
    assert _data((tmp_path / "file.html").read_text())["scenes"][0]["stage"] == "scaled"
    opts = _data((tmp_path / "options.html").read_text())["scenes"][0]
    assert (opts["stage"], opts["query"], opts["mask"]) == ("scores", 1, "causal")
    assert _data((tmp_path / "preset.html").read_text())["scenes"][0]["heads"] == 2


def test_command_line_qkv_file(tmp_path):
    rng = np.random.default_rng(3)
    npz = tmp_path / "captured.npz"
    np.savez(npz, q=rng.normal(size=(5, 4)), k=rng.normal(size=(5, 4)), v=rng.normal(size=(5, 4)),
             tokens=np.array(["▁the", "▁cat", "s", "▁sat", "."]))
    out = tmp_path / "model.html"
    r = _cli("export", str(npz), "-o", str(out))
    assert r.returncode == 0, r.stderr
    entry = _data(out.read_text())["scenes"][0]
    assert entry["tokens"][:2] == ["▁the", "▁cat"]  # the model's own token pieces


def test_command_line_deck_is_one_page_in_order(tmp_path):
    mine = tmp_path / "mine.qkv.json"
    qkv_studio.save(load_preset("projection"), mine)
    deck = tmp_path / "lecture.qkvdeck.json"
    write_deck(["preset:lesson", "preset:causal", "mine.qkv.json"], deck)
    out = tmp_path / "lecture.html"
    r = _cli("export", "--deck", str(deck), "-o", str(out))
    assert r.returncode == 0, r.stderr
    scenes = _data(out.read_text())["scenes"]
    assert [s["tokens"] for s in scenes] == [list(load_preset(p).tokens) for p in ("lesson", "causal", "projection")]
    assert "X" in scenes[2]


def test_command_line_refusals(tmp_path):
    deck = tmp_path / "d.json"
    write_deck(["preset:lesson"], deck)
    r = _cli("export", "--deck", str(deck), "-o", str(tmp_path / "x.png"))
    assert r.returncode != 0 and "--deck is for the interactive page" in r.stderr
    r = _cli("export", "--deck", str(deck), "--stage", "scores", "-o", str(tmp_path / "x.html"))
    assert r.returncode != 0 and "--stage cannot go with --deck" in r.stderr
    r = _cli("export", "--preset", "lesson", "--deck", str(deck), "-o", str(tmp_path / "x.html"))
    assert r.returncode != 0 and "not both" in r.stderr
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "x.png").exists()
    assert "Traceback" not in r.stderr
    broken = tmp_path / "broken.json"
    write_deck(["preset:lesson", "gone.qkv.json"], broken)
    r = _cli("export", "--deck", str(broken), "-o", str(tmp_path / "x.html"))
    assert r.returncode != 0 and "scene 2 (gone.qkv.json)" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.html").exists()


def test_saved_session_format_is_the_apps(tmp_path):
    """The page's scene objects are session files: written as the page's *Save .qkv.json* writes them
    (the page's own keys dropped), the app reads them back."""
    entry = _data(page_html([(load_preset("padding"), View(query=2, stage="output"))]))["scenes"][0]
    path = tmp_path / "back.qkv.json"
    path.write_text(json.dumps({k: v for k, v in entry.items() if k not in ("head", "note")}), encoding="utf-8")
    scene, view = read_session(path)
    assert (view.query, view.stage) == (2, "output")
    assert np.array_equal(scene.mask_matrix(), load_preset("padding").mask_matrix())


def test_front_end_files_ship_in_the_wheel():
    import fnmatch

    import tomllib

    repo = Path(__file__).resolve().parents[2]
    patterns = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "qkv_studio.export.page"]
    files = [p.name for p in (repo / "qkv_studio/export/page").iterdir() if p.suffix != ".py" and p.is_file()]
    assert {"qkv_page.js", "qkv_page.css", "template.html"} <= set(files)
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files)


def test_command_line_real_model_head(tmp_path):
    out = tmp_path / "minilm.html"
    r = _cli("export", "--model", "minilm", "--text", "the cat sat on the mat", "--layer", "2", "--head", "3",
             "-o", str(out))
    assert r.returncode == 0, r.stderr
    entry = _data(out.read_text(encoding="utf-8"))["scenes"][0]
    assert entry["tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]  # its token pieces
    assert entry["title"] == "MiniLM layer 2 head 3"
