"""Driving exported interactive pages in a real browser: Debian's Chromium through Playwright for Python.

Playwright never downloads a browser here (no ``playwright install``): it drives ``/usr/bin/chromium``
(``apt-get install chromium``; ``make test`` installs it when it can).  A missing browser fails the tests
that need it, saying what to install: they never skip.
"""

from __future__ import annotations

import os
import re
import shutil
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from qkv_studio.core.captions import head_note
from qkv_studio.core.scene import Scene
from qkv_studio.core.sessionfile import scene_from_dict
from qkv_studio.core.stages import stage_spec
from qkv_studio.core.view import shown_scene

CHROMIUM = os.environ.get("QKV_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]
#: The sizes the issue names: a phone upright and lying, a tablet, a laptop.
SIZES = {"phone": (390, 844), "phone-lying": (844, 390), "tablet": (820, 1180), "laptop": (1280, 720)}


def chromium_path() -> str:
    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if not path:
        pytest.fail(f"the page tests need Chromium at {CHROMIUM}: run 'make test' as root (it installs it) or "
                    "'sudo apt-get install -y chromium'", pytrace=False)
    return path


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the page tests need Playwright for Python: pip install -e '.[test]'", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=ARGS)
        yield b
        b.close()


class Opened:
    """A page opened from disk, with every request it made (``requests``) and its errors (``errors``)."""

    def __init__(self, browser, path: Path, size=(390, 844), scheme: str = "light", downloads: bool = False,
                 touch: bool = False, policy: bool = False):
        # bypass_csp: the page's own policy would block a request before it is made (and Playwright's polling);
        # without it every request the page tries is seen, so "no request" is the page's doing, not the policy's.
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme,
                                           accept_downloads=downloads, has_touch=touch, is_mobile=touch,
                                           bypass_csp=not policy)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        # (a function, not a string: under the page's own policy Playwright may not evaluate strings)
        self.page.wait_for_function("() => globalThis.qkvApp !== undefined && qkvApp.ready")

    def foreign_requests(self) -> list[str]:
        """Requests to anything but the page's own file (the network, another file)."""
        return [u for u in self.requests if u != self.url]

    def doc(self) -> dict:
        return self.page.evaluate("qkvApp.doc")

    def scene(self) -> Scene:
        """The page's current scene, read by the core (as the app reads the saved file)."""
        return scene_from_dict(session_of(self.doc()))

    def shown(self) -> Scene:
        d = self.doc()
        return shown_scene(scene_from_dict(session_of(d)), d.get("head", 0))

    def cells(self) -> np.ndarray:
        """The heatmap's numbers as the cells hold them (their data-value, every digit)."""
        n = self.page.locator("table.qkv-heatmap tbody tr").count()
        values = self.page.eval_on_selector_all("table.qkv-heatmap td.qkv-cell[data-value]",
                                                "els => els.map(e => e.dataset.value)")
        return np.array([float(v) for v in values]).reshape(n, n)

    def cell_texts(self) -> list[list[str]]:
        return self.page.eval_on_selector_all(
            "table.qkv-heatmap tbody tr", "rows => rows.map(r => [...r.querySelectorAll('td.qkv-cell[data-value]')]"
            ".map(c => c.textContent))")

    def caption(self) -> str:
        return self.page.inner_text(".qkv-caption")

    def close(self) -> None:
        self.context.close()


def session_of(doc: dict) -> dict:
    """A page's scene object as a session file (without the page's own keys)."""
    return {k: v for k, v in doc.items() if k not in ("head", "note")}


def plain(rich: str) -> str:
    """The captions' rich text as a reader sees it: the core's own tags (bold, sub- and superscripts, spans)
    dropped, entities read; anything else (a token spelled like a tag) is text, as the page shows it."""
    return unescape(re.sub(r"</?(b|i|sub|sup|span)( [^<>]*)?>", "", rich))


def core_caption(scene: Scene, stage: str, query: int, head: int = 0) -> str:
    """The app's caption (the stepper's caption_text) for a scene, stage, query and head."""
    shown = shown_scene(scene, head)
    return head_note(scene, head) + stage_spec(stage).caption(shown, shown.result(), query)


def assert_close(page_values: np.ndarray, core_values: np.ndarray, scale: float = 1.0) -> None:
    """Equal to NumPy's to 1e-9 relative; −∞ (masked) exactly where NumPy has it.  ``scale`` bounds the
    size of the terms summed, so a score that cancels to near 0 is held to 1e-12 of its terms."""
    page_values = np.asarray(page_values, dtype=float)
    core_values = np.asarray(core_values, dtype=float)
    assert page_values.shape == core_values.shape
    inf = np.isinf(core_values)
    assert np.array_equal(np.isinf(page_values), inf)
    assert np.array_equal(page_values[inf], core_values[inf])
    np.testing.assert_allclose(page_values[~inf], core_values[~inf], rtol=1e-9, atol=1e-12 * scale)
