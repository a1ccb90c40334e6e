"""Issue 20, class 2: files that are not regular files never hang or exhaust the app.

A FIFO (``os.mkfifo``) blocks ``open`` until a writer comes — forever — and ``/dev/zero`` reports size
0 and never ends.  Every file the app reads (named by the user, listed in a deck, or its own: the
autosave folder, the recovered path, the settings file) is refused or skipped with a message.  Each
case runs in its own process with a timeout and a memory cap, so today's hang is a failure, not a
stuck test run.
"""

import json
import os

import pytest

from qkv_studio.core import preset_document, write_session

from .conftest import one_error_line


def deck(folder, *entries, name="d.qkvdeck.json"):
    path = folder / name
    path.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1, "scenes": list(entries)}))
    return path


# (the deck, then each of its scenes as a lecture reaches them: a deck's scenes are read lazily)
READ_DECK = "import sys; from qkv_studio.core.deck import read_deck\n" \
            "from qkv_studio.core import SessionFileError\n" \
            "try:\n    d = read_deck(sys.argv[1] if len(sys.argv) > 1 else {path!r})\n" \
            "    [d.document(i) for i in range(len(d))]\n" \
            "except SessionFileError as e:\n    print('refused:', e)\nelse:\n    print('read')\n"


def test_a_fifo_as_a_session_is_refused_at_once(child):
    os.mkfifo(child.home / "p.qkv.json")
    one_error_line(child.cli("export", "p.qkv.json", "-o", "w.csv"), "p.qkv.json", "named pipe")
    assert not (child.home / "w.csv").exists()


def test_a_device_as_a_session_is_refused_without_reading_it(child):
    one_error_line(child.cli("export", "/dev/zero", "-o", "w.csv"), "/dev/zero", "device")


@pytest.mark.parametrize("where", ["deck", "deck-scene", "deck-dev-zero"])
def test_a_fifo_or_device_in_a_deck_is_refused_with_its_name(child, where):
    home = child.home
    if where == "deck":
        os.mkfifo(home / "p.qkvdeck.json")
        path, fragment = home / "p.qkvdeck.json", "named pipe"
    elif where == "deck-scene":
        os.mkfifo(home / "slide.qkv.json")
        path, fragment = deck(home, "preset:lesson", "slide.qkv.json"), "scene 2 (slide.qkv.json): is a named pipe"
    else:
        path, fragment = home / "zero-deck", "device"
        os.symlink("/dev/zero", path)
    proc = child.python(READ_DECK.format(path=str(path)), memory_mb=1024)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    assert out.startswith("refused:") and fragment in out, out


def test_the_window_refuses_a_fifo_deck_with_a_message(child):
    os.mkfifo(child.home / "p.qkvdeck.json")
    code = ("from PySide6.QtWidgets import QMessageBox\n"
            "seen = []\n"
            "QMessageBox.warning = staticmethod(lambda *a, **k: seen.append(a[2]))\n"
            "from qkv_studio.app import ensure_qapp\n"
            "app = ensure_qapp(offscreen_if_headless=True)\n"
            "from qkv_studio.ui.window.main_window import MainWindow\n"
            "from qkv_studio.core import load_preset\n"
            "w = MainWindow(load_preset('lesson'), use_settings=False)\n"
            "print(w.open_deck('p.qkvdeck.json', ask=False), repr(seen[-1]))\n")
    proc = child.python(code)
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    assert proc.stdout.decode().startswith("False") and "named pipe" in proc.stdout.decode()


@pytest.mark.parametrize("what", ["scene", "meta", "lock"])
def test_a_fifo_in_the_autosave_folder_never_freezes_start_up(child, what):
    """pending_recovery at start-up, with one of an entry's three files a FIFO."""
    folder = child.home / "autosave"
    folder.mkdir()
    if what != "scene":
        write_session(folder / "123-abc.qkv.json", *preset_document("causal"))
    suffix = {"scene": ".qkv.json", "meta": ".meta.json", "lock": ".lock"}[what]
    os.mkfifo(folder / f"123-abc{suffix}")
    code = ("from qkv_studio.app import ensure_qapp\nensure_qapp(offscreen_if_headless=True)\n"
            "from qkv_studio.reliability.autosave import pending_recovery, take_notices\n"
            f"rec = pending_recovery({str(folder)!r})\n"
            "print('offered' if rec is not None else 'nothing', rec.scene.mask if rec else '', take_notices())\n")
    proc = child.python(code)
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    out = proc.stdout.decode()
    if what == "scene":
        assert out.startswith("nothing") and "named pipe" in out  # skipped, and the user is told
    else:
        assert out.startswith("offered causal"), out  # the work itself is still offered


def test_a_fifo_as_the_recovered_path_is_not_read(child):
    """The autosave's note names a FIFO as the original file: restore opens the autosave alone."""
    fifo = child.home / "orig.qkv.json"
    os.mkfifo(fifo)
    code = ("from qkv_studio.app import ensure_qapp\nensure_qapp(offscreen_if_headless=True)\n"
            "from qkv_studio import reliability\n"
            "from qkv_studio.core import load_preset\n"
            "from qkv_studio.ui.window.main_window import MainWindow\n"
            "w = MainWindow(load_preset('lesson'), use_settings=False)\n"
            f"reliability.restore(w, (load_preset('causal'), {str(fifo)!r}))\n"
            "print(w.session.scene.mask, w.session.modified)\n")
    proc = child.python(code)
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    assert proc.stdout.decode().split() == ["causal", "True"]


def test_a_fifo_as_the_settings_file_never_freezes_start_up(child):
    child.config_dir.mkdir(parents=True)
    os.mkfifo(child.config_dir / "QKV Studio.conf")
    code = ("from qkv_studio.app import ensure_qapp\nensure_qapp(offscreen_if_headless=True)\n"
            "from qkv_studio.ui.window.main_window import MainWindow\n"
            "from qkv_studio.core import load_preset\n"
            "w = MainWindow(load_preset('lesson'))\nw.apply_theme('dark')\nprint('started')\n")
    proc = child.python(code)
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    assert proc.stdout.decode().strip() == "started"
    kept = sorted(p.name for p in child.config_dir.iterdir())
    assert any(n.startswith("QKV Studio.conf.unreadable-") for n in kept), kept  # moved aside, not deleted
