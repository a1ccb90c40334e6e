"""Issue 20, class 6: a deck opens at once — its scenes are read when a lecture reaches them — and a
scene that cannot be read (missing, corrupt, a FIFO) is skipped with a message naming the deck entry
and its file, the lecture going on with the next scene.
"""

import json
import os

import pytest

from qkv_studio.core import STAGES, SessionFileError, load_preset, preset_document, write_session
from qkv_studio.core.deck import read_deck


def deck(folder, *entries, name="d.qkvdeck.json"):
    path = folder / name
    path.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1, "scenes": list(entries)}))
    return path


def to_the_last_stage(window) -> None:
    while window.session.stage != STAGES[-1]:
        window.next_step()


# ---- the deck, without a window ----------------------------------------------------------------------

def test_a_deck_of_sixty_scenes_opens_without_reading_one(tmp_path):
    """The scene files need not exist yet when the deck is opened: each is read when it is asked for."""
    path = deck(tmp_path, *[f"s{i}.qkv.json" for i in range(60)])
    d = read_deck(path)
    assert len(d) == 60
    write_session(tmp_path / "s41.qkv.json", *preset_document("causal"))
    assert d.scene(41).same_as(load_preset("causal")) and d.view_of(41) == preset_document("causal").view
    assert d.path_of(41) == str(tmp_path / "s41.qkv.json")


@pytest.mark.parametrize("kind, fragment", [
    ("missing", "no such file"),
    ("corrupt", "not valid JSON"),
    ("not-a-scene", "not a QKV Studio session"),
    ("folder", "is a folder"),
])
def test_a_bad_scene_is_refused_with_the_deck_its_number_and_its_file(tmp_path, kind, fragment):
    if kind == "corrupt":
        (tmp_path / "bad.qkv.json").write_text('{"format": "qkv-studio-session", "version": 1, "tok')
    elif kind == "not-a-scene":
        (tmp_path / "bad.qkv.json").write_text('{"scenes": []}')
    elif kind == "folder":
        (tmp_path / "bad.qkv.json").mkdir()
    d = read_deck(deck(tmp_path, "preset:lesson", "bad.qkv.json", "preset:causal"))
    assert d.scene(0).same_as(load_preset("lesson")) and d.scene(2).same_as(load_preset("causal"))
    with pytest.raises(SessionFileError) as info:
        d.document(1)
    message = str(info.value)
    assert message.startswith(str(tmp_path / "d.qkvdeck.json") + ": scene 2 (bad.qkv.json): "), message
    assert fragment in message, message
    assert "\n" not in message


def test_a_fifo_scene_is_refused_when_reached_and_never_blocks(child):
    os.mkfifo(child.home / "pipe.qkv.json")
    deck(child.home, "preset:lesson", "pipe.qkv.json")
    code = ("from qkv_studio.core.deck import read_deck\nfrom qkv_studio.core import SessionFileError\n"
            "d = read_deck('d.qkvdeck.json')\nprint('opened', len(d), d.scene(0).tokens[1])\n"
            "try:\n    d.document(1)\nexcept SessionFileError as e:\n    print('refused:', e)\n")
    proc = child.python(code)
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    out = proc.stdout.decode()
    assert out.startswith("opened 2 cat") and "refused: " in out
    assert "scene 2 (pipe.qkv.json): is a named pipe" in out, out


def test_a_deck_naming_a_preset_that_does_not_exist_is_still_refused_at_once(tmp_path):
    with pytest.raises(SessionFileError, match=r"scene 3 \(preset:nope\): no such preset"):
        read_deck(deck(tmp_path, "preset:lesson", "later.qkv.json", "preset:nope"))


# ---- the lecture in the window -----------------------------------------------------------------------

def test_the_lecture_skips_a_missing_and_a_corrupt_scene_each_told_once(qtbot, window, warnings, tmp_path):
    (tmp_path / "corrupt.qkv.json").write_bytes(b"\x00\xff not json")
    path = deck(tmp_path, "preset:lesson", "missing.qkv.json", "corrupt.qkv.json", "preset:causal")
    assert window.open_deck(str(path), ask=False)
    assert window.deck_index == 0 and window.session.scene.same_as(load_preset("lesson"))
    # issue 32: the missing file is told when the deck opens (the corrupt one needs parsing: told when reached)
    assert len(warnings) == 1 and "d.qkvdeck.json: scene 2 (missing.qkv.json): no such file" in warnings[0]
    to_the_last_stage(window)
    window.next_step()
    s = window.session
    assert window.deck_index == 3 and s.scene.mask == "causal" and s.stage == STAGES[0]  # the lecture goes on
    assert len(warnings) == 2
    said = warnings[1]
    assert "Scene 3" in said and "skipped" in said and "missing.qkv.json" not in said
    assert "d.qkvdeck.json: scene 3 (corrupt.qkv.json):" in said
    assert "Traceback" not in said
    assert "skipped 2, 3" in window.statusBar().currentMessage()
    # back over them: to the lesson's last stage, told in the status bar only (the dialogs said it once)
    window.back_step()
    assert window.deck_index == 0 and s.scene.same_as(load_preset("lesson")) and s.stage == STAGES[-1]
    assert len(warnings) == 2 and "skipped scene 3, 2" in window.statusBar().currentMessage()


def test_opening_a_deck_names_every_entry_that_cannot_be_read_in_one_message(qtbot, window, warnings, tmp_path):
    """Issue 32 item 5: existence and kind of every entry are checked at once (cheaply: nothing parsed)."""
    os.mkfifo(tmp_path / "pipe.qkv.json")
    (tmp_path / "folder.qkv.json").mkdir()
    (tmp_path / "empty.qkv.json").write_bytes(b"")
    write_session(tmp_path / "good.qkv.json", *preset_document("padding"))
    path = deck(tmp_path, "missing.qkv.json", "good.qkv.json", "pipe.qkv.json", "preset:causal",
                "folder.qkv.json", "empty.qkv.json", "also-missing.qkv.json")
    assert window.open_deck(str(path), ask=False)
    assert window.deck_index == 1 and window.session.scene.same_as(load_preset("padding"))  # the first readable
    assert len(warnings) == 1, warnings
    said = warnings[0]
    for fragment in ("scene 1 (missing.qkv.json): no such file", "scene 3 (pipe.qkv.json): is a named pipe",
                     "scene 5 (folder.qkv.json): is a folder", "scene 6 (empty.qkv.json): the file is empty",
                     "scene 7 (also-missing.qkv.json): no such file", "Scenes 1, 3, 5, 6, 7"):
        assert fragment in said, said
    assert "good.qkv.json" not in said and "unexpected" not in said
    while window.deck_index != 3:  # stepping over them later says nothing more in a dialog
        window.next_step()
    assert window.session.scene.mask == "causal" and len(warnings) == 1


def test_a_scene_written_after_the_deck_was_opened_is_shown(qtbot, window, warnings, tmp_path):
    path = deck(tmp_path, "preset:lesson", "later.qkv.json")
    assert window.open_deck(str(path), ask=False)
    assert len(warnings) == 1 and "scene 2 (later.qkv.json): no such file" in warnings[0]  # (missing when opened)
    write_session(tmp_path / "later.qkv.json", *preset_document("padding"))
    to_the_last_stage(window)
    window.next_step()
    assert window.deck_index == 1 and window.session.scene.same_as(load_preset("padding")) and len(warnings) == 1
    assert window.session.path == str(tmp_path / "later.qkv.json")


def test_a_deck_whose_first_scene_is_bad_opens_on_the_next(qtbot, window, warnings, tmp_path):
    path = deck(tmp_path, "gone.qkv.json", "preset:causal")
    assert window.open_deck(str(path), ask=False)
    assert window.deck_index == 1 and window.session.scene.mask == "causal"
    assert len(warnings) == 1 and "scene 1 (gone.qkv.json): no such file" in warnings[0]
    window.back_step()  # (nothing readable before it: the lecture stays)
    while window.session.stage != STAGES[0]:
        window.back_step()
    window.back_step()
    assert window.deck_index == 1 and window.session.scene.mask == "causal" and len(warnings) == 1


def test_a_deck_of_which_no_scene_can_be_read_is_refused_and_the_scene_stays(qtbot, window, warnings, tmp_path):
    (tmp_path / "corrupt.qkv.json").write_text("[1, 2")
    before = window.session.scene
    assert not window.open_deck(str(deck(tmp_path, "missing.qkv.json", "corrupt.qkv.json")), ask=False)
    assert window.session.scene is before and window.deck is None
    assert len(warnings) == 1 and "none of its 2 scenes can be read" in warnings[0]
    assert "scene 1 (missing.qkv.json)" in warnings[0] and "scene 2 (corrupt.qkv.json)" in warnings[0]


def test_the_window_steps_past_a_missing_a_corrupt_and_a_fifo_scene(child):
    """The whole lecture in its own process (a FIFO that blocked would hang it: the timeout fails it)."""
    home = child.home
    os.mkfifo(home / "pipe.qkv.json")
    (home / "corrupt.qkv.json").write_text('{"format": "qkv-studio-session", "version": 1, "tokens": [')
    deck(home, "preset:lesson", "missing.qkv.json", "corrupt.qkv.json", "pipe.qkv.json", "preset:causal")
    code = ("import json\nfrom PySide6.QtWidgets import QMessageBox\nseen = []\n"
            "QMessageBox.warning = staticmethod(lambda *a, **k: seen.append(a[2]))\n"
            "from qkv_studio.app import ensure_qapp\napp = ensure_qapp(offscreen_if_headless=True)\n"
            "from qkv_studio.ui.window.main_window import MainWindow\nfrom qkv_studio.core import STAGES, load_preset\n"
            "w = MainWindow(load_preset('lesson'), use_settings=False)\n"
            "opened = w.open_deck('d.qkvdeck.json', ask=False)\n"
            "while w.session.stage != STAGES[-1]:\n    w.next_step()\n"
            "w.next_step()\n"
            "print(json.dumps([opened, w.deck_index, w.session.scene.mask, w.session.stage, seen]))\n")
    proc = child.python(code)
    assert proc.returncode == 0, proc.stderr.decode()[-400:]
    opened, index, mask, stage, seen = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert opened and index == 4 and mask == "causal" and stage == STAGES[0]
    assert len(seen) == 2, seen  # on opening: what a stat shows; on reaching it: what only parsing shows
    assert "scene 2 (missing.qkv.json): no such file" in seen[0]
    assert "scene 4 (pipe.qkv.json): is a named pipe" in seen[0]
    assert "scene 3 (corrupt.qkv.json): not valid JSON" in seen[1]
