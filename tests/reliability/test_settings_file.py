"""Issue 20, class 4: a corrupt settings file never stops the app starting.

Each case writes a settings file by hand (as a user, a sync tool or a crash could leave it) into a
fresh HOME, starts a real window in its own process and checks that it starts, ignores the bad value
(logged once) and keeps every good one.
"""

import pytest

START = """
import logging, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="LOG %(name)s %(message)s")
from qkv_studio.app import ensure_qapp
ensure_qapp(offscreen_if_headless=True)
from qkv_studio.ui.window.main_window import MainWindow
from qkv_studio.core import load_preset
w = MainWindow(load_preset("lesson"))
w.show()
# read again: a bad value is still logged only once
w._read_settings(); w.settings_store.recent(); w.settings_store.last_folder()
print("THEME", w.appearance.theme.name)
print("ZOOM", w._zoom)
print("ANIMATE", w.heatmap.animate)
print("RECENT", len(w.settings_store.recent()))
print("FOLDER", w.settings_store.last_folder())
print("STARTED")
"""


def start(child, conf: str):
    child.config_dir.mkdir(parents=True, exist_ok=True)
    (child.config_dir / "QKV Studio.conf").write_text("[General]\n" + conf, encoding="utf-8")
    proc = child.python(START)
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "STARTED" in out, (out[-800:], proc.stderr.decode()[-800:])
    values = dict(line.split(" ", 1) for line in out.splitlines() if " " in line and not line.startswith("LOG"))
    logs = [line for line in out.splitlines() if line.startswith("LOG qkv_studio.settings")]
    return values, logs


@pytest.mark.parametrize("conf,key", [
    ("geometry=hello\n", "geometry"),
    ("geometry=@ByteArray(garbage)\n", "geometry"),
    ("window_state=12\n", "window_state"),
    ("window_state=@ByteArray()\n", "window_state"),
    ("geometry=@Rect(1 2 3 4)\n", "geometry"),
    ("zoom=abc\n", "zoom"),
    ("zoom=nan\n", "zoom"),
    ("zoom=1e999\n", "zoom"),
    ("zoom=100\n", "zoom"),
    ("zoom=true\n", "zoom"),
    ("theme=@ByteArray(dark)\n", "theme"),
    ("colormap=jet\n", "colormap"),
    ("animate=maybe\n", "animate"),
    ("last_folder=@Rect(1 2 3 4)\n", "last_folder"),
])
def test_a_bad_value_is_ignored_logged_once_and_the_rest_kept(child, conf, key):
    values, logs = start(child, conf + "theme=dark\n" * (key != "theme"))
    assert len([line for line in logs if f"ignoring {key}" in line]) == 1, logs
    if key != "theme":
        assert values["THEME"] == "dark"  # the good value next to it still counts
    else:
        assert values["THEME"] == "light"
    assert float(values["ZOOM"]) == 1.0
    assert values["ANIMATE"] == "True"


def test_the_recent_list_is_capped_as_when_written(child):
    many = ", ".join(f"/tmp/f{i}.qkv.json" for i in range(5000))
    values, _ = start(child, f"recent_files={many}\nzoom=1.5\n")
    assert values["RECENT"] == "8" and float(values["ZOOM"]) == 1.5


def test_a_huge_settings_file_is_moved_aside(child):
    child.config_dir.mkdir(parents=True)
    big = child.config_dir / "QKV Studio.conf"
    with open(big, "wb") as fh:
        fh.write(b"[General]\ntheme=dark\n")
        fh.truncate(64 * 1024 * 1024)  # sparse: no disk, but QSettings would read all of it
    proc = child.python(START)
    assert proc.returncode == 0 and "STARTED" in proc.stdout.decode(), proc.stderr.decode()[-800:]
    kept = [p.name for p in child.config_dir.iterdir()]
    assert any(n.startswith("QKV Studio.conf.unreadable-") for n in kept), kept
