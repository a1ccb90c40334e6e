"""Before the window opens on Linux/X11: are the system libraries Qt's xcb plug-in needs installed?

Qt ≥ 6.5 loads its X11 plug-in only if ``libxcb-cursor0`` (and, on minimal systems, a few more xcb
libraries) are installed; without them Qt prints "Could not load the Qt platform plugin xcb" and
aborts.  This check finds the missing libraries first and prints the one ``apt-get install`` line
that fixes it.  It never imports Qt, so it also runs where Qt cannot start.

To teach it another library, add its soname and its Debian package to ``DEBIAN_PACKAGES`` (libraries
the plug-in links against are found by ``ldd``; those Qt opens at run time go in ``DLOPENED`` too).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

#: soname → the Debian/Ubuntu package that ships it.
DEBIAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
}
#: Libraries Qt opens at run time (not seen by ``ldd``).
DLOPENED: dict[str, str] = {"libxcb-cursor.so.0": "libxcb-cursor0"}

FEDORA_HINT = "Fedora: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms"


def wants_xcb(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """True when Qt would start its X11 plug-in: Linux, a ``DISPLAY``, and no other platform chosen."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def xcb_plugin() -> Path | None:
    """PySide6's ``libqxcb.so``, found without importing PySide6 (None if absent)."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        plugin = Path(root) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def _not_found_by_ldd(plugin: Path) -> list[str]:
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    try:
        out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libraries(plugin: Path | None = None) -> list[str]:
    """The sonames the xcb plug-in needs that cannot be loaded, in a stable order, each once."""
    plugin = xcb_plugin() if plugin is None else plugin
    missing = _not_found_by_ldd(plugin) if plugin is not None else []
    missing += [name for name in DLOPENED if not _loads(name)]
    return list(dict.fromkeys(missing))


def install_line(missing: list[str]) -> str:
    """``sudo apt-get install …`` for the missing sonames (unknown ones by their soname)."""
    packages = dict.fromkeys(DEBIAN_PACKAGES.get(name, DLOPENED.get(name, name)) for name in missing)
    return "sudo apt-get install -y " + " ".join(packages)


def message(missing: list[str]) -> str:
    """What to tell the user, several lines: what is missing, the command that fixes it."""
    return (f"qkv-studio: error: the window cannot open: Qt's X11 plug-in needs system libraries that are "
            f"not installed ({', '.join(missing)}).\n"
            f"  Debian/Ubuntu: {install_line(missing)}\n"
            f"  {FEDORA_HINT}\n"
            f"  (export and screenshot need no display: QT_QPA_PLATFORM=offscreen works without them)")


def check(env: dict[str, str] | None = None) -> str | None:
    """None when the window can start as far as this check sees; else the message to print."""
    if not wants_xcb(env):
        return None
    missing = missing_libraries()
    return message(missing) if missing else None


def main() -> int:
    """``python -m qkv_studio.platform_check``: exit 0 if fine, else print the fix and exit 1."""
    problem = check()
    if problem is None:
        return 0
    print(problem, file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
