"""Autosave: unsaved work survives a crash, a ``kill -9`` or a power cut.

A couple of seconds after the scene changes (debounced, but never postponed for more than
``MAX_DELAY_MS`` while edits keep coming) the current scene is written atomically with
:func:`~qkv_studio.core.write_session` to ``<data>/autosave/<id>.qkv.json``, next to a small
``<id>.meta.json`` naming the file the scene belongs to.  ``<id>.lock`` is a :class:`QLockFile` held
for as long as the window lives: the next start finds entries whose owner died (the lock is stale)
and offers them back (:func:`pending_recovery`), while a second running instance leaves them alone.

The lecture's annotations go with the scene (the session file's optional ``notes`` and ``ink``,
:mod:`qkv_studio.core.ink`), read from the window's :class:`~qkv_studio.state.ink.InkBook` when one is
given: ink drawn on a slide is not a scene edit, but unsaved ink is unsaved work too, so drawing is
autosaved as an edit is, and a recovered entry gives the strokes back, per stage (:class:`Recovered`).

Nothing is kept while neither the scene nor its ink has unsaved changes: saving, undoing back to the
saved state, opening another file, or closing the window cleanly removes the entry.

The writing happens on one background thread (Scene is immutable, so a snapshot can be handed over
as is): a 1024-token scene takes a second or two to serialise and the window must not freeze for it.
Writes queue in order and a newer request supersedes a queued older one.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QLockFile, QObject, QSysInfo, QTimer, Signal

from qkv_studio.core import Scene, SessionFileError, View, read_session, write_session
from qkv_studio.core.ink import EMPTY_INK, NO_NOTES, Ink, Notes
from qkv_studio.core.safe_read import is_regular_or_missing, read_regular
from qkv_studio.core.sessionfile import atomic_write
from qkv_studio.reliability.paths import autosave_dir

if TYPE_CHECKING:  # the thread pool is imported when the first autosave is written, not at start-up
    from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger("qkv_studio.autosave")

DELAY_MS = 2000
MAX_DELAY_MS = 10000
SCENE_SUFFIX = ".qkv.json"
META_SUFFIX = ".meta.json"
LOCK_SUFFIX = ".lock"
META_FORMAT = "qkv-studio-autosave"
META_MAX_BYTES = 64 * 1024
UNREADABLE_FOLDER = "unreadable"  # corrupt autosaves are moved here (kept, never deleted)
# A lock that cannot be read is stale once it is this old: a live instance writes its lock within
# milliseconds of creating it, so only a power cut or a full disk leaves one empty or garbled.
UNREADABLE_LOCK_AGE_S = 5.0


# ---- the background writer -------------------------------------------------------------------------
_pool: ThreadPoolExecutor | None = None
_pool_guard = threading.Lock()


def _submit(fn, *args) -> Future:
    """Run ``fn`` on the one autosave thread (jobs run in submission order)."""
    global _pool
    with _pool_guard:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qkv-autosave")
        return _pool.submit(fn, *args)


@atexit.register
def _shutdown() -> None:  # pragma: no cover - interpreter exit
    if _pool is not None:
        _pool.shutdown(wait=True)


# ---- one autosave entry on disk --------------------------------------------------------------------
class Entry:
    """``<id>.qkv.json`` + ``<id>.meta.json`` + ``<id>.lock`` in the autosave folder."""

    def __init__(self, folder: Path, ident: str) -> None:
        self.folder = Path(folder)
        self.ident = ident
        self._lock: QLockFile | None = None

    def __repr__(self) -> str:
        return f"Entry({str(self.folder)!r}, {self.ident!r})"

    @property
    def scene_file(self) -> Path:
        return self.folder / (self.ident + SCENE_SUFFIX)

    @property
    def meta_file(self) -> Path:
        return self.folder / (self.ident + META_SUFFIX)

    @property
    def lock_file(self) -> Path:
        return self.folder / (self.ident + LOCK_SUFFIX)

    @classmethod
    def create(cls, folder: Path) -> Entry:
        """A new entry owned (locked) by this process; raises OSError if the folder is unusable."""
        import uuid

        folder.mkdir(parents=True, exist_ok=True)
        entry = cls(folder, f"{os.getpid()}-{uuid.uuid4().hex[:10]}")
        if not entry.claim():
            raise OSError(f"cannot create an autosave lock in {folder}")
        return entry

    def claim(self) -> bool:
        """Take the lock: succeeds when no living process holds it, whatever the lock file holds.

        A live instance's :class:`QLockFile` holds an ``flock`` on its lock file, which the kernel
        releases when the process dies, however it dies: so the probe :func:`_owner_gone` decides without
        reading the file — an empty lock (a power cut), garbage, or a pid that now names another
        process.  Only where ``flock`` is unavailable is the old judgement used (Qt's reading of the
        pid, or an unreadable lock a few seconds old).  A lock that is not a regular file (a FIFO would
        block the read) is removed.
        """
        if self._lock is not None:
            return True
        if not self._lock_file_usable():
            return False
        lock = QLockFile(str(self.lock_file))
        lock.setStaleLockTime(0)  # stale only when the owner is gone, never because of its age
        if not lock.tryLock(0):
            gone = _owner_gone(self.lock_file)
            if gone is None:  # no flock here: judge by what the file says
                if not self._unreadable_and_old(lock):
                    return False
                log.warning("autosave: the lock %s cannot be read; treating it as stale", self.lock_file)
                lock.removeStaleLockFile()
            elif not gone:
                return False  # a running instance owns it
            if not lock.tryLock(0):
                return False
        self._lock = lock
        return True

    def _lock_file_usable(self) -> bool:
        if is_regular_or_missing(self.lock_file):
            return True
        try:
            if self.lock_file.is_dir():
                log.warning("autosave: %s is a folder, not a lock; the entry is skipped", self.lock_file)
                return False
            self.lock_file.unlink()  # a pipe, socket or link is no lock of ours: it holds nothing
            log.warning("autosave: removed %s (not a regular file)", self.lock_file)
        except OSError as exc:
            log.warning("autosave: %s is not a regular file and cannot be removed (%s)", self.lock_file, exc)
            return False
        return True

    def _unreadable_and_old(self, lock: QLockFile) -> bool:
        if lock.error() != QLockFile.LockError.LockFailedError:
            return False
        pid, host, _app = lock.getLockInfo()
        if pid > 0 and host:
            # Readable: Qt has judged it; a dead owner on this machine would have been stale already.
            return host == QSysInfo.machineHostName() and not _alive(pid)
        try:
            age = time.time() - self.lock_file.stat().st_mtime
        except OSError:
            return False
        return age >= UNREADABLE_LOCK_AGE_S

    @property
    def claimed(self) -> bool:
        return self._lock is not None

    def release(self) -> None:
        if self._lock is not None:
            self._lock.unlock()
            self._lock = None

    def write(self, scene: Scene, original_path: str, view: View = View(), notes: Notes = NO_NOTES,
              ink: Ink = EMPTY_INK) -> None:
        """Write the scene and view (with the notes and ink), then the metadata, each atomically (raises
        SessionFileError/OSError)."""
        write_session(self.scene_file, scene, view, notes=notes, ink=ink)
        meta = {"format": META_FORMAT, "version": 1, "path": original_path, "saved": time.time(),
                "pid": os.getpid()}
        atomic_write(self.meta_file, json.dumps(meta, ensure_ascii=False).encode("utf-8"))

    def read_meta(self) -> dict:
        try:
            meta = json.loads(read_regular(self.meta_file, META_MAX_BYTES, what="autosave note").decode("utf-8"))
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    def move_aside(self) -> Path | None:
        """Move this entry's files into ``unreadable/`` (kept for the user), drop the lock; the new
        place of the scene file, or None if it could not be moved (then it is left where it was)."""
        target_dir = self.folder / UNREADABLE_FOLDER
        stamp = time.strftime("%Y%m%d-%H%M%S")
        moved = None
        try:
            target_dir.mkdir(exist_ok=True)
            for f in (self.scene_file, self.meta_file):
                if f.exists() or f.is_symlink():
                    dest = target_dir / f"{self.ident}-{stamp}{f.name[len(self.ident):]}"
                    os.replace(f, dest)
                    if f == self.scene_file:
                        moved = dest
        except OSError as exc:
            log.warning("cannot move the unreadable autosave %s aside: %s", self.scene_file, exc)
        self.release()
        return moved

    def remove_files(self) -> None:
        for f in (self.scene_file, self.meta_file):
            try:
                f.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:  # pragma: no cover - a read-only folder
                log.warning("cannot remove %s: %s", f, exc)

    def drop(self) -> None:
        """Remove the files and give up the lock (the lock file goes with it)."""
        self.remove_files()
        self.release()


def _owner_gone(path: Path) -> bool | None:
    """Whether the process that made the lock file ``path`` has ended, judged by the kernel, not the file's
    contents: True (then the file has been removed, if it was still the same file), False (a live process
    holds it), None (``flock`` is not available here: the caller judges by the contents)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return True  # (removed meanwhile: nobody holds it)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError:
            return None  # a file system without flock
        try:  # holding the probe's lock: remove the file only if it is still the one probed
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            return None
        return True
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


# ---- the Autosave object --------------------------------------------------------------------------
class _State:
    """What the writer thread shares with the Autosave (plain Python: no Qt object across threads)."""

    def __init__(self) -> None:
        self.generation = 0
        self.error: str | None = None
        self.writes = 0


class Autosave(QObject):
    """Writes the Session's scene to the autosave folder a moment after each change.

    ``annotations`` is the window's :class:`~qkv_studio.state.ink.InkBook` (None: no ink or notes): its
    notes and ink are written with the scene, and its unsaved ink keeps an entry as unsaved edits do.
    ``folder`` defaults to :func:`~qkv_studio.reliability.paths.autosave_dir`.  Methods: ``save_now``,
    ``wait``, ``discard`` (clean exit), ``adopt`` (take over an entry recovered after a crash),
    ``file()`` (the autosave file, or None when nothing is kept).

    ``failure_changed(str)`` fires as soon as a write fails (the reason) and again with ``""`` when a
    later write succeeds: :func:`~qkv_studio.reliability.attach` keeps it on the status bar until then.
    """

    # Kept with it by the window's side (reliability.window.attach): what watches the window's close and
    # the disk, and the status bar's label of a failed write.
    close_watcher: QObject | None = None
    disk_watch: QObject | None = None
    failure_label: QObject | None = None

    failure_changed = Signal(str)
    _job_done = Signal()  # emitted on the writer thread; delivered (queued) on the window's thread

    def __init__(self, session, parent: QObject | None = None, *, folder: str | os.PathLike | None = None,
                 delay_ms: int = DELAY_MS, max_delay_ms: int = MAX_DELAY_MS, annotations=None) -> None:
        super().__init__(parent if parent is not None else session)
        self._session = session
        self._book = annotations
        self._folder = Path(folder) if folder is not None else autosave_dir()
        self._max_delay_ms = max_delay_ms
        self._entry: Entry | None = None
        self._adopted: list[Entry] = []
        self._state = _State()
        self._last: Future | None = None
        self._reported: str | None = None
        self._reported_text = ""
        self._disabled_reason: str | None = None
        self._since = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._fire)
        self._job_done.connect(self._check_errors)
        session.scene_changed.connect(self._changed)
        session.query_changed.connect(self._changed)
        session.stage_changed.connect(self._changed)
        session.path_changed.connect(self._changed)
        session.modified_changed.connect(self._on_modified)
        if annotations is not None:
            annotations.changed.connect(self._changed)
            annotations.unsaved_changed.connect(self._on_modified)
        if self.unsaved():
            self._changed()

    # ---- public -----------------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return self._folder

    def file(self) -> Path | None:
        """The autosave file currently kept for this session (None when there is nothing unsaved)."""
        return self._entry.scene_file if self._entry is not None else None

    def pending(self) -> bool:
        """A change is waiting for its autosave."""
        return self._timer.isActive()

    def last_error(self) -> str | None:
        return self._state.error

    def unsaved(self) -> bool:
        """There is work to keep: the scene has unsaved changes, or its ink has."""
        return bool(self._session.modified) or (self._book is not None and self._book.unsaved())

    def save_now(self, *, wait: bool = True) -> bool:
        """Write the current scene now (if it or its ink has unsaved changes); returns False if the write
        failed."""
        self._timer.stop()
        if not self.unsaved():
            return True
        if self._entry is None:
            try:
                self._entry = Entry.create(self._folder)
            except OSError as exc:
                self._fail(f"the folder {self._folder} cannot be used ({exc.strerror or exc})")
                return False
        self._state.generation += 1
        book = self._book  # (Ink and Notes are immutable too: handed to the thread as they are)
        notes, ink = (NO_NOTES, EMPTY_INK) if book is None else (book.notes(), book.ink())
        self._last = _submit(_write_job, self._state, self._state.generation, self._entry,
                             self._session.scene, self._session.path, self._job_done.emit, self._session.view,
                             notes, ink)
        if wait:
            return self.wait()
        return True

    def wait(self, timeout: float | None = 30.0) -> bool:
        """Block until queued writes are done; True when the last one succeeded."""
        if self._last is not None:
            try:
                self._last.result(timeout)
            except Exception:  # noqa: BLE001 - the job records its own errors
                pass
        self._check_errors()
        return self._state.error is None

    def discard(self, *, wait: bool = True) -> None:
        """Nothing left to protect (saved, or the user closed the window): remove the entry."""
        self._timer.stop()
        self._state.generation += 1  # a queued write of the old scene is now pointless
        entries = ([self._entry] if self._entry is not None else []) + self._adopted
        self._entry = None
        self._adopted = []
        for entry in entries:
            self._last = _submit(_drop_job, entry)
        if wait:
            self.wait()

    def adopt(self, entry: Entry) -> None:
        """Take over an entry recovered after a crash: it is removed once this session's own autosave
        holds the work (or when the session is saved or closed)."""
        if entry in self._adopted:
            return
        self._adopted.append(entry)
        if self.unsaved() and self.save_now(wait=True):
            self._drop_adopted()

    # ---- reacting to the session ------------------------------------------------------------------
    def _changed(self, *_: object) -> None:
        if not self.unsaved():
            return
        if not self._timer.isActive():
            self._since.start()
            self._timer.start()
        elif self._since.elapsed() < self._max_delay_ms:
            self._timer.start()  # debounce: restart the countdown while edits keep coming

    def _on_modified(self, _modified: bool) -> None:
        # (the scene or its ink was saved or changed: what is left unsaved decides, either may still be)
        if self.unsaved():
            self._changed()
        else:
            self.discard(wait=False)

    def _fire(self) -> None:
        self._check_errors()
        self.save_now(wait=False)

    def _drop_adopted(self) -> None:
        for entry in self._adopted:
            self._last = _submit(_drop_job, entry)
        self._adopted = []

    # ---- errors -----------------------------------------------------------------------------------
    def failure(self) -> str:
        """The reason the last autosave failed, as shown to the user ("" when the last one succeeded)."""
        return "" if self._reported is None else self._reported_text

    def _check_errors(self) -> None:
        error = self._state.error
        if error is None:
            if self._reported is not None:
                self._reported = None
                self.failure_changed.emit("")
        elif error != self._reported:
            self._reported = error
            self._reported_text = f"Autosave failed: {error}. Save your work (Ctrl+S) to keep it safe."
            self._session.message.emit(self._reported_text)
            self.failure_changed.emit(self._reported_text)

    def _fail(self, reason: str) -> None:
        log.warning("autosave: %s", reason)
        self._state.error = reason
        self._check_errors()


def _write_job(state: _State, generation: int, entry: Entry, scene: Scene, path: str, done=None,
               view: View = View(), notes: Notes = NO_NOTES, ink: Ink = EMPTY_INK) -> None:
    if generation != state.generation:
        return  # a newer write (or a discard) came in while this one waited
    try:
        entry.write(scene, path, view, notes, ink)
    except (SessionFileError, OSError) as exc:
        state.error = str(exc)
        log.warning("autosave failed: %s", exc)
    except Exception as exc:  # noqa: BLE001 - never let the writer thread die
        state.error = f"{type(exc).__name__}: {exc}"
        log.exception("autosave failed")
    else:
        state.error = None
        state.writes += 1
    if done is not None:  # tell the window now, not when the next edit's timer fires
        try:
            done()
        except RuntimeError:  # the Autosave (and its window) is already gone
            pass


def _drop_job(entry: Entry) -> None:
    try:
        entry.drop()
    except Exception:  # noqa: BLE001
        log.exception("cannot remove autosave %s", entry)


# ---- finding work to recover ------------------------------------------------------------------------
class Recovered(tuple):
    """``(scene, original_path)`` of autosaved work whose owner died, with the entry it came from, the
    ``view`` (query, stage) it was looked at with and the lecture's ``notes`` and ``ink`` (per stage).

    Unpacks like the plain tuple; ``discard()`` deletes it, ``release()`` leaves it for the next start.
    """

    entry: Entry
    saved_at: float
    view: View
    notes: Notes
    ink: Ink

    def __new__(cls, scene: Scene, path: str, entry: Entry, saved_at: float, view: View = View(),
                notes: Notes = NO_NOTES, ink: Ink = EMPTY_INK) -> Recovered:
        self = super().__new__(cls, (scene, path))
        self.entry = entry
        self.saved_at = saved_at
        self.view = view
        self.notes = notes
        self.ink = ink
        return self

    @property
    def scene(self) -> Scene:
        return self[0]

    @property
    def path(self) -> str:
        return self[1]

    def discard(self) -> None:
        self.entry.drop()
        _forget(self)

    def release(self) -> None:
        self.entry.release()
        _forget(self)


_CLAIMED: list[Recovered] = []
_NOTICES: list[str] = []


def take_notices() -> list[str]:
    """What :func:`pending_recovery` had to tell the user (autosaves moved aside), once."""
    notes = list(_NOTICES)
    _NOTICES.clear()
    return notes


def _forget(rec: Recovered) -> None:
    if rec in _CLAIMED:
        _CLAIMED.remove(rec)


def claimed() -> list[Recovered]:
    """Recovered entries this process holds and has not yet discarded or handed to a window."""
    return list(_CLAIMED)


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def pending_recovery(folder: str | os.PathLike | None = None) -> Recovered | None:
    """The newest autosaved scene left behind by a process that did not exit cleanly, or None.

    The entry is claimed (its lock is held) so another instance does not offer it too; unreadable or
    empty entries are cleaned up on the way.  Returns ``(scene, original_path)`` (a :class:`Recovered`).
    """
    root = Path(folder) if folder is not None else autosave_dir()
    try:
        names = [p.name for p in root.iterdir()] if root.is_dir() else []
    except OSError:
        return None
    idents = set()
    for name in names:
        for suffix in (SCENE_SUFFIX, META_SUFFIX, LOCK_SUFFIX):
            if name.endswith(suffix) and not name.startswith("."):
                idents.add(name[: -len(suffix)])
    mine = {rec.entry.ident for rec in _CLAIMED}
    for ident in sorted(idents, key=lambda i: _mtime(root / (i + SCENE_SUFFIX)), reverse=True):
        if ident in mine:
            continue
        entry = Entry(root, ident)
        if not entry.claim():
            continue  # a running instance owns it
        if not (entry.scene_file.exists() or entry.scene_file.is_symlink()):
            entry.drop()  # it died before its first autosave, or only debris is left
            continue
        try:
            doc = read_session(entry.scene_file)
        except SessionFileError as exc:
            log.warning("moving an unreadable autosave aside: %s", exc)
            moved = entry.move_aside()
            _NOTICES.append(f"An autosave could not be read ({exc.problem}); it was "
                            + (f"moved to {moved} and kept." if moved is not None else
                               f"left at {entry.scene_file}."))
            continue
        meta = entry.read_meta()
        given = meta.get("path")
        path = given if isinstance(given, str) else ""
        saved = meta.get("saved")
        saved_at = float(saved) if isinstance(saved, (int, float)) and not isinstance(saved, bool) \
            else _mtime(entry.scene_file)
        rec = Recovered(doc.scene, path, entry, saved_at, doc.view, doc.notes, doc.ink)
        _CLAIMED.append(rec)
        return rec
    return None
