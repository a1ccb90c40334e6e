import pytest


@pytest.fixture
def window(show_window, lesson_scene):
    return show_window(lesson_scene, (1400, 900))


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "autosave"


# ---- real processes with their own HOME and XDG folders (issue 20) ------------------------------------
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # every subprocess: a hang is a failure, never a stuck test run


class Child:
    """Runs ``python -m qkv_studio …`` or a snippet of Python in a fresh process whose HOME, XDG
    folders and temp folder are the test's own; ``home`` is that HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = dict(os.environ)
        self.env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                        XDG_CACHE_HOME=str(home / ".cache"), XDG_RUNTIME_DIR=str(home / "run"),
                        QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO), LC_ALL="C.UTF-8")
        (home / "run").mkdir(parents=True, exist_ok=True, mode=0o700)

    @property
    def config_dir(self) -> Path:
        return self.home / ".config" / "QKV Studio"

    @property
    def autosave_dir(self) -> Path:
        return self.home / ".local/share" / "QKV Studio" / "autosave"

    def cli(self, *args, cwd=None, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
        """The command line; ``args`` may hold bytes (not valid UTF-8) as a terminal could pass them."""
        return self._run([sys.executable, "-m", "qkv_studio", *args], cwd, timeout)

    def python(self, code: str, *, cwd=None, timeout: float = TIMEOUT,
               memory_mb: int = 2048) -> subprocess.CompletedProcess:
        """A snippet of Python, with its address space capped (a runaway read fails, not the machine)."""
        prelude = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({memory_mb << 20}, {memory_mb << 20}))\n"
        return self._run([sys.executable, "-c", prelude + code], cwd, timeout)

    def _run(self, argv, cwd, timeout) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(argv, cwd=cwd or self.home, env=self.env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"hung: {argv[2:][:3]} did not finish in {timeout} s") from exc


@pytest.fixture
def child(tmp_path) -> Child:
    home = tmp_path / "home"
    home.mkdir()
    return Child(home)


def one_error_line(proc: subprocess.CompletedProcess, *fragments: str, code: int = 2) -> str:
    """Assert exit ``code`` and exactly one stderr line ``qkv-studio: error: …`` holding each fragment."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, (proc.returncode, err)
    assert err.count("\n") == 1 and err.startswith("qkv-studio: error: "), err
    assert "unexpected" not in err and "Traceback" not in err, err
    for f in fragments:
        assert f in err, (f, err)
    return err


@pytest.fixture
def tiny_disk(tmp_path):
    """A full file system: a 256 KB tmpfs (root only), filled to the last byte; yields (folder, free())."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for a full disk needs root")
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True,
                          timeout=TIMEOUT)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    filler = mount / "filler"

    def fill() -> None:
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (65536, 4096, 1):  # to the last page: a new file cannot get a byte
                try:
                    while os.write(fd, b"\0" * size):
                        pass
                except OSError:
                    pass
        finally:
            os.close(fd)

    def free() -> None:
        filler.unlink(missing_ok=True)

    fill()
    try:
        yield mount, fill, free
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=TIMEOUT)
