"""The X11 check before the window opens: missing system libraries → the one install line, no traceback."""

from __future__ import annotations

import subprocess
import sys

from qkv_studio import platform_check as pc


def test_a_missing_runtime_library_gives_the_apt_get_line(monkeypatch, capsys):
    monkeypatch.setattr(pc, "DLOPENED", {**pc.DLOPENED, "libqkv-missing-test.so.7": "libqkv-missing-test7"})
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(pc.sys, "platform", "linux")
    assert pc.main() == 1
    err = capsys.readouterr().err
    assert "libqkv-missing-test.so.7" in err
    # (one line installs every missing package: the machine's own missing X11 libraries come with it)
    line = err.splitlines()[1]
    assert "sudo apt-get install -y " in line and "libqkv-missing-test7" in line.split("install -y ", 1)[1].split()


def test_ldd_not_found_lines_map_to_debian_packages(tmp_path, monkeypatch):
    fake_ldd = tmp_path / "ldd"
    fake_ldd.write_text("#!/bin/sh\necho '\tlibxcb-icccm.so.4 => not found'\necho '\tlibc.so.6 => /lib/libc.so.6'\n"
                        "echo '\tlibxcb-keysyms.so.1 => not found'\n")
    fake_ldd.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}")
    missing = pc.missing_libraries(tmp_path / "libqxcb.so")
    assert missing[:2] == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert pc.install_line(missing[:2]) == "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1"


def test_no_check_where_qt_would_not_use_x11():
    assert not pc.wants_xcb({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, "linux")
    assert not pc.wants_xcb({"DISPLAY": ":0"}, "darwin")
    assert not pc.wants_xcb({}, "linux")
    assert not pc.wants_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert pc.wants_xcb({"DISPLAY": ":0"}, "linux")
    assert pc.wants_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")


def test_the_window_command_stops_with_the_fix_and_no_traceback(tmp_path):
    code = ("import sys, qkv_studio.platform_check as pc; "
            "pc.DLOPENED['libqkv-missing-test.so.7'] = 'libqkv-missing-test7'; "
            "from qkv_studio.cli import main; sys.exit(main(['--preset', 'lesson']))")
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": ":99", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert "apt-get install -y" in out.stderr and "libqkv-missing-test7" in out.stderr
