"""A seeded random user for the real main window, checking invariants after every action.

Used by ``tests/test_monkey.py`` (a few hundred actions in CI) and by ``make soak``::

    python -m tests.monkey_driver --actions 20000 --seed 1

Actions: typing in cells through the table's own editor and through the model (good numbers and
"abc", "nan", "1e999", "", "-0", huge ones…), pasting blocks (fitting, too big, ragged, with a bad
cell), nudging with Alt+↑/↓, dragging vectors (one undo step per drag), lecture keys, stage steps,
query changes, adding/removing/renaming/moving tokens (empty, 10 000 characters, control
characters, right-to-left, emoji, duplicates), adding/removing dimensions, causal mask and blocked
cells (whole rows too, for fully masked rows), ÷√dₖ, mode switches, themes, undo/redo by menu and by
keys, saving and opening temporary files (also corrupt ones), presets and New; the Real model panel (a
toy causal model: runs, bad sentences, paging layers and heads, editing a head); the presenter view
(rehearsing: the console beside the slide, its keys); ink (drawing, erasing, clearing, undoing, at up to
5 000 points a stroke); exports (figures, numbers, a PowerPoint deck with the ink, and a cancelled one
that must leave nothing behind).

After every action: no NaN in any stage; each weights row sums to 1, or is all 0 when fully masked;
the heatmap shows the Session's matrix; the editors, the calculation table and the token list show the
Session's values; the window's toggles and modified mark agree with the Session.  Every ~200 actions
and at the end, undoing all the way must give back the scene of the last open/load exactly, and
redoing all the way the scene before the undo; the autosave file must hold the Session's scene.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
if __name__ == "__main__" and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import Qt, QtMsgType, qInstallMessageHandler  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMessageBox,
    QTextEdit,
)

from qkv_studio.core import STAGES, Scene, SessionFileError, list_presets, load_preset, preset_document, read_session  # noqa: E402
from qkv_studio.core.scene import MAX_TOKEN_CHARS  # noqa: E402
from qkv_studio.state.changes import ResultChange  # noqa: E402
from qkv_studio.ui.widgets.formatting import fmt, parse_number  # noqa: E402

MAX_TOKENS_SOFT = 10  # keep scenes small so thousands of actions stay fast; presets may be larger
MAX_DIM_SOFT = 6
UNDO_CHECK_EVERY = 200
AUTOSAVE_CHECK_EVERY = 25
TRACE = bool(os.environ.get("QKV_MONKEY_TRACE"))

GOOD_NUMBERS = ["0", "1", "-1", "2.5", " 3 ", "-0", "0.001", "1e3", "−1.5", "1e308", "-1e308", "5e-324",
                "123456789", "1_000", "7."]
BAD_NUMBERS = ["abc", "nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e999", "", "   ", "0x10", "1..2",
               "∞", "1e", "--1", "2,5,6", "1 2"]
GOOD_NAMES = ["cat", "the", "x", "שלום", "مرحبا", "😀", "👩‍💻", "naïve", "a b", "Ĝ", "[PAD]", "t" * 64, "日本語",
              "\u200fRTL-mark"]
BAD_NAMES = ["", "x" * 65, "y" * 10_000, "a\nb", "tab\there", "bell\x07", "nul\x00", "del\x7f", "c1\x85",
             "line\u2028sep"]
LECTURE_KEYS = [Qt.Key_Right, Qt.Key_Left, Qt.Key_Space, Qt.Key_PageDown, Qt.Key_PageUp, Qt.Key_Home,
                Qt.Key_End, Qt.Key_Up, Qt.Key_Down, Qt.Key_1, Qt.Key_2, Qt.Key_3, Qt.Key_5, Qt.Key_9]
SHOWN_STAGE = {"vectors": "scores", "scores": "scores", "scaled": "scaled", "weights": "weights",
               "output": "weights"}


def token_ok(name: str) -> bool:
    """What the app must accept as a token name (independent of its own validation code)."""
    if not 1 <= len(name) <= MAX_TOKEN_CHARS:
        return False
    return not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029" or 0xD800 <= ord(c) <= 0xDFFF
                   for c in name)


def content_equal(a: Scene, b: Scene) -> bool:
    """Exact equality of the content (a Scene holds no navigation: query and stage are the Session's view,
    which undo does not restore)."""
    return a.n == b.n and a.same_as(b)


@dataclass
class Report:
    actions: int = 0
    failures: list[tuple[int, str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    undo_checks: int = 0
    autosave_checks: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"actions: {self.actions}  failures: {len(self.failures)}  undo-all checks: {self.undo_checks}  "
                f"autosave checks: {self.autosave_checks}  ({self.seconds:.1f} s)")


class Failure(AssertionError):
    pass


class MonkeyDriver:
    """Drives one MainWindow; ``run(n)`` performs n random actions and returns a :class:`Report`."""

    def __init__(self, window, seed: int, workdir: str | os.PathLike, *, autosave=None, verbose: bool = False) -> None:
        self.window = window
        self.session = window.session
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.workdir = Path(workdir)
        self.autosave = autosave
        self.verbose = verbose
        self.report = Report()
        self.dialogs: list[str] = []
        self.baseline = self.session.scene
        self.saved_files: list[Path] = []
        self._action = "start"
        self._index = 0
        self._file_serial = 0
        self.actions = [
            (14, self.type_in_cell_editor), (10, self.set_cell_data), (4, self.paste_block), (3, self.nudge_cell),
            (6, self.drag), (8, self.lecture_key), (5, self.stage_action), (5, self.change_query),
            (4, self.add_token), (4, self.remove_token), (6, self.rename_token), (3, self.move_token),
            (3, self.add_dim), (3, self.remove_dim), (3, self.toggle_causal), (5, self.toggle_blocked),
            (2, self.block_whole_row), (3, self.toggle_scale), (6, self.undo), (4, self.redo),
            (2, self.undo_redo_keys), (2, self.save), (1, self.open_saved), (1, self.open_corrupt),
            (0.5, self.open_preset), (0.3, self.new_scene), (1, self.switch_mode), (0.5, self.theme),
            (1, self.huge_values), (0.2, self.presentation),
            (1.5, self.model_panel), (0.4, self.presenter_view), (2.5, self.ink), (0.6, self.export),
        ]
        self._weights = [w for w, _ in self.actions]

    # ---- running ----------------------------------------------------------------------------------
    def run(self, n: int) -> Report:
        start = time.perf_counter()
        with self._capture_exceptions(), self._answer_dialogs(), self._toy_registered():
            self._settle()
            try:
                self._check("start")
            except Failure as exc:
                self._fail(str(exc))
            for i in range(n):
                self._index = i + 1
                _, action = self.rng.choices(self.actions, weights=self._weights)[0]
                self._action = action.__name__
                self.report.counts[self._action] = self.report.counts.get(self._action, 0) + 1
                if TRACE:  # QKV_MONKEY_TRACE=1: name each action before it runs (to find a hard crash)
                    print(f"#{self._index} {self._action} n={self.scene.n} mode={self.scene.mode}",
                          file=sys.stderr, flush=True)
                try:
                    action()
                    self._settle()
                    self._check(self._action)
                    if self._index % UNDO_CHECK_EVERY == 0:
                        self.check_undo_all()
                    if self.autosave is not None and self._index % AUTOSAVE_CHECK_EVERY == 0:
                        self.check_autosave()
                    stack = self.session.undo_stack
                    if stack.count() >= stack.undoLimit() - 20:  # keep the first scene reachable
                        self.check_undo_all()
                        self.save(reopen=True)
                except Failure as exc:
                    self._fail(str(exc))
                except Exception:  # noqa: BLE001 - an exception is a failure, and the run goes on
                    self._fail(traceback.format_exc(limit=6))
                self.report.actions += 1
                if self.verbose and self._index % 1000 == 0:
                    print(f"  … {self._index} actions, {len(self.report.failures)} failures", flush=True)
            try:
                self.check_undo_all()
                if self.autosave is not None:
                    self.check_autosave()
            except Failure as exc:
                self._fail(str(exc))
        self.report.seconds = time.perf_counter() - start
        return self.report

    def _fail(self, message: str) -> None:
        self.report.failures.append((self._index, self._action, message))
        if self.verbose:
            print(f"FAIL #{self._index} {self._action}: {message}", flush=True)

    @contextmanager
    def _toy_registered(self):
        """The toy model the run registers (:meth:`_toy_model`) is taken out of the registry again at the end:
        the registry is the process's, and the tests after this run list its models."""
        from qkv_studio.core.models import registry

        had = "toy" in registry.MODELS
        try:
            yield
        finally:
            if not had:
                registry.MODELS.pop("toy", None)

    @contextmanager
    def _capture_exceptions(self):
        """An exception inside a Qt slot does not reach us as a raise: count it through the hook."""
        old = sys.excepthook

        def hook(etype, value, tb):
            self._fail("exception in a slot: " + "".join(traceback.format_exception(etype, value, tb, limit=8)))

        sys.excepthook = hook
        try:
            yield
        finally:
            sys.excepthook = old

    @contextmanager
    def _answer_dialogs(self):
        """No modal dialog may block: prompts answer Discard, messages are recorded."""
        saved = {name: QMessageBox.__dict__.get(name) for name in
                 ("exec", "warning", "information", "critical", "question")}

        def record(*args, **kwargs):
            text = next((a for a in args if isinstance(a, str) and a != "QKV Studio"), "")
            self.dialogs.append(text)
            return QMessageBox.Ok

        def exec_(box):
            self.dialogs.append(box.text())
            return QMessageBox.Discard

        QMessageBox.exec = exec_
        for name in ("warning", "information", "critical", "question"):
            setattr(QMessageBox, name, staticmethod(record))
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    delattr(QMessageBox, name)
                else:
                    setattr(QMessageBox, name, value)

    def _settle(self) -> None:
        self.session.flush()
        QApplication.processEvents()
        self.session.flush()

    # ---- small helpers ----------------------------------------------------------------------------
    @property
    def scene(self) -> Scene:
        return self.session.scene

    def expect(self, ok: bool, what: str) -> None:
        if not ok:
            raise Failure(what)

    def _editable(self) -> str:
        return self.rng.choice(self.scene.matrix_names())

    def _cell(self, name: str) -> tuple[int, int]:
        m = self.scene.matrix(name)
        return self.rng.randrange(m.shape[0]), self.rng.randrange(m.shape[1])

    def _number_text(self) -> tuple[str, float | None]:
        if self.rng.random() < 0.35:
            return self.rng.choice(BAD_NUMBERS), None
        if self.rng.random() < 0.4:
            text = self.rng.choice(GOOD_NUMBERS)
        else:
            text = repr(round(self.rng.uniform(-5, 5), self.rng.choice([0, 1, 2, 6])))
        return text, parse_number(text)

    def _release_focus(self) -> None:
        """Lecture keys are for the window, not for a text field or a table holding the focus."""
        self.window.activateWindow()
        if QApplication.activeWindow() is not self.window:  # (a closed console or dialog had it: offscreen,
            QTest.qWaitForWindowActive(self.window, 1000)   # no window manager hands it back at once)
        focus = QApplication.focusWidget()  # (after activation, which gives the focus back to where it was)
        if isinstance(focus, (QLineEdit, QAbstractSpinBox, QTextEdit, QAbstractItemView, QComboBox, QAbstractButton)):
            focus.clearFocus()

    @staticmethod
    def _overflows(before: Scene, name: str, row: int, col: int, block) -> bool:
        """Whether putting ``block`` at (row, col) of ``name`` makes a projection X·W beyond a double
        (issue 20: such an edit is refused).  An independent oracle: long double has the range."""
        if before.mode != "projection" or name not in ("X", "Wq", "Wk", "Wv") or block is None:
            return False
        mats = {n: np.array(before.matrix(n), dtype=np.longdouble) for n in ("X", "Wq", "Wk", "Wv")}
        b = np.atleast_2d(np.asarray(block, dtype=np.longdouble))
        mats[name][row:row + b.shape[0], col:col + b.shape[1]] = b
        limit = np.longdouble(np.finfo(np.float64).max)
        return any(bool((np.abs(mats["X"] @ mats[w]) > limit).any()) for w in ("Wq", "Wk", "Wv"))

    def _expect_overflow_refusal(self, before: Scene, what: str) -> None:
        self.expect(self.scene.same_as(before), f"{what}: an overflowing projection was taken")

    def _expect_cell(self, name, row, col, before: Scene, value: float | None, refused_ok: bool = False) -> None:
        after = self.scene.matrix(name)[row, col]
        if value is not None and self._overflows(before, name, row, col, value):
            self._expect_overflow_refusal(before, f"{name}[{row},{col}] = {value!r}")
            return
        if value is None:
            self.expect(self.scene.same_as(before), f"bad text changed the scene ({name}[{row},{col}])")
        elif not refused_ok:
            self.expect(after == value, f"{name}[{row},{col}] is {after!r}, typed {value!r}")

    # ---- actions: cells ---------------------------------------------------------------------------
    def type_in_cell_editor(self) -> None:
        """Open the table's own editor (the delegate's QLineEdit), type, press Return."""
        name = self._editable()
        table = self.window.editors[name].table
        row, col = self._cell(name)
        index = table.model().index(row, col)
        text, value = self._number_text()
        before = self.scene
        table.scrollTo(index)
        table.setCurrentIndex(index)
        table.edit(index)
        editor = table.findChild(QLineEdit)
        self.expect(editor is not None and table.state() == QAbstractItemView.EditingState,
                    f"no cell editor opened in {name}")
        editor.selectAll()
        editor.setText(text)
        QTest.keyClick(editor, Qt.Key_Return)
        QApplication.processEvents()
        if table.state() == QAbstractItemView.EditingState:  # the delegate refused to commit: cancel
            QTest.keyClick(table.findChild(QLineEdit) or table, Qt.Key_Escape)
        self._expect_cell(name, row, col, before, value)
        if value is None:
            msg = self.window.editors[name].message
            self.expect(msg.isVisibleTo(self.window.editors[name]) and msg.text(),
                        f"typing {text!r} into {name} was refused without a message")

    def set_cell_data(self) -> None:
        name = self._editable()
        model = self.window.editors[name].table.model()
        row, col = self._cell(name)
        text, value = self._number_text()
        before = self.scene
        ok = model.setData(model.index(row, col), text)
        taken = value is not None and not self._overflows(before, name, row, col, value)
        self.expect(ok == taken or (value is not None and before.matrix(name)[row, col] == value),
                    f"setData({text!r}) returned {ok}")
        self._expect_cell(name, row, col, before, value)

    def paste_block(self) -> None:
        name = self._editable()
        model = self.window.editors[name].table.model()
        m = self.scene.matrix(name)
        r0, c0 = self._cell(name)
        h, w = self.rng.randint(1, 3), self.rng.randint(1, 3)
        block = np.round(self.np_rng.uniform(-3, 3, size=(h, w)), 2)
        rows = [[repr(float(x)) for x in row] for row in block]
        kind = self.rng.choice(["good", "good", "ragged", "bad cell", "empty", "spaces"])
        if kind == "ragged" and h > 1:
            rows[-1] = rows[-1] + ["1"]
        elif kind == "bad cell":
            rows[self.rng.randrange(h)][self.rng.randrange(w)] = self.rng.choice(["abc", "nan", "1e999", "inf"])
        sep = "," if kind == "spaces" else "\t"
        text = "" if kind == "empty" else "\n".join((sep + " " if sep == "," else sep).join(r) for r in rows) + "\n"
        fits = r0 + h <= m.shape[0] and c0 + w <= m.shape[1]
        should = kind in ("good", "spaces") and fits or (kind == "ragged" and h == 1 and fits)
        before = self.scene
        if should and self._overflows(before, name, r0, c0, block):
            should = False  # X·W beyond a double: refused with a message
        ok = model.paste(model.index(r0, c0), text)
        self.expect(ok == should, f"paste of a {h}×{w} {kind} block at ({r0},{c0}) into {m.shape}: "
                                  f"returned {ok}, expected {should}")
        if should:
            self.expect(np.array_equal(self.scene.matrix(name)[r0:r0 + h, c0:c0 + w], block),
                        "pasted numbers differ from the block")
        else:
            self.expect(self.scene.same_as(before), "a refused paste changed the scene")
            msg = self.window.editors[name].message
            self.expect(bool(msg.text()) and not msg.isHidden(), "a refused paste showed no message")

    def nudge_cell(self) -> None:
        name = self._editable()
        table = self.window.editors[name].table
        row, col = self._cell(name)
        table.setCurrentIndex(table.model().index(row, col))
        old = float(self.scene.matrix(name)[row, col])
        up = self.rng.random() < 0.5
        mods = Qt.AltModifier | (Qt.ShiftModifier if self.rng.random() < 0.3 else Qt.NoModifier)
        step = 1.0 if mods & Qt.ShiftModifier else 0.1
        QTest.keyClick(table, Qt.Key_Up if up else Qt.Key_Down, mods)
        expected = round(old + (step if up else -step), 10)
        if math.isfinite(expected):
            self.expect(self.scene.matrix(name)[row, col] == expected, f"nudge gave {self.scene.matrix(name)[row, col]}"
                                                                       f", expected {expected}")

    def huge_values(self) -> None:
        """Numbers near the float limit: scores overflow, attention must stay finite and honest."""
        name = self._editable()
        row, col = self._cell(name)
        value = self.rng.choice([1e308, -1e308, 1.7e308, 1e154, -1e200])
        before = self.scene
        if self._overflows(before, name, row, col, value):
            messages = []
            self.session.message.connect(messages.append)
            try:
                self.expect(not self.session.set_value(name, row, col, value), "an overflowing projection was taken")
            finally:
                self.session.message.disconnect(messages.append)
            self.expect(self.scene.same_as(before) and any("too large" in m for m in messages),
                        "an overflowing projection was refused without its message")
            return
        self.expect(self.session.set_value(name, row, col, value), "a huge finite number was refused")
        if self.scene.mode == "projection":  # taken: then X·W is right, not saturated (issue 20)
            self.expect(all(np.isfinite(m).all() for m in self.scene.qkv()), "a projection is not finite")

    def drag(self) -> None:
        direct = self.scene.mode == "direct"
        name = self.rng.choice(["Q", "K", "V"])
        row = self.rng.randrange(self.scene.n)
        count = self.session.undo_stack.count()
        index = self.session.undo_stack.index()
        self.session.begin_drag()
        x = y = 0.0
        steps = self.rng.randint(1, 6)
        for _ in range(steps):
            x, y = (round(v, 3) for v in self.np_rng.uniform(-4, 4, 2))
            ok = self.session.drag_vector(name, row, x, y)
            self.expect(ok == direct, f"drag of {name} in {self.scene.mode} mode returned {ok}")
            QApplication.processEvents()
        if direct:
            width = self.scene.matrix(name).shape[1]
            self.expect(self.scene.matrix(name)[row, : min(2, width)].tolist() == [x, y][: min(2, width)],
                        "the dragged vector is not where the drag ended")
            self.expect(self.session.undo_stack.index() <= index + 1, f"one drag made "
                        f"{self.session.undo_stack.index() - index} undo steps (count was {count})")

    # ---- actions: navigation ----------------------------------------------------------------------
    def lecture_key(self) -> None:
        self._release_focus()
        key = self.rng.choice(LECTURE_KEYS)
        s = self.session
        stage_i, query, n = STAGES.index(s.stage), s.query, s.scene.n
        QTest.keyClick(self.window, key)
        expected_stage, expected_query = stage_i, query
        if key in (Qt.Key_Right, Qt.Key_PageDown, Qt.Key_Space):
            expected_stage = min(stage_i + 1, len(STAGES) - 1)
        elif key in (Qt.Key_Left, Qt.Key_PageUp):
            expected_stage = max(stage_i - 1, 0)
        elif key == Qt.Key_Home:
            expected_stage = 0
        elif key == Qt.Key_End:
            expected_stage = len(STAGES) - 1
        elif key == Qt.Key_Up:
            expected_query = max(query - 1, 0)
        elif key == Qt.Key_Down:
            expected_query = min(query + 1, n - 1)
        else:
            digit = int(chr(key)) - 1
            expected_query = digit if digit < n else query
        self.expect(STAGES.index(s.stage) == expected_stage and s.query == expected_query,
                    f"key {int(key):#x}: stage {s.stage} query {s.query}, expected "
                    f"{STAGES[expected_stage]} {expected_query} (focus: {type(QApplication.focusWidget()).__name__} "
                    f"{QApplication.focusWidget() and QApplication.focusWidget().objectName()!r}, active: "
                    f"{type(QApplication.activeWindow()).__name__})")

    def stage_action(self) -> None:
        w = self.window
        choice = self.rng.random()
        if choice < 0.35:
            w.acts.next.trigger()
        elif choice < 0.7:
            w.acts.back.trigger()
        else:
            stage = self.rng.choice(STAGES)
            w.stage_actions[stage].trigger()
            self.expect(self.session.stage == stage, f"stage action {stage} left the stage at {self.session.stage}")

    def change_query(self) -> None:
        i = self.rng.randrange(self.scene.n)
        if self.rng.random() < 0.5:
            view = self.window.tokens_panel.view
            view.setCurrentIndex(view.model().index(i))
        else:
            self.session.set_query(i)
        self.expect(self.session.query == i, f"query {self.session.query}, selected {i}")

    # ---- actions: tokens --------------------------------------------------------------------------
    def add_token(self) -> None:
        if self.scene.n >= MAX_TOKENS_SOFT and self.rng.random() < 0.9:
            return self.remove_token()
        n = self.scene.n
        if self.rng.random() < 0.5:
            self.window.acts.add_token.trigger()
        else:
            self.window.tokens_panel.add_button.click()
        self.expect(self.scene.n == n + 1, "adding a token did not add one")

    def remove_token(self) -> None:
        n = self.scene.n
        self.window.acts.remove_token.trigger()
        if n == 1:
            self.expect(self.scene.n == 1, "the last token was removed")
            panel = self.window.tokens_panel
            self.expect(not panel.message.isHidden() and "token" in panel.message.text(),
                        "removing the last token gave no message")
        else:
            self.expect(self.scene.n == n - 1, "removing a token did not remove one")

    def rename_token(self) -> None:
        i = self.rng.randrange(self.scene.n)
        r = self.rng.random()
        if r < 0.45:
            name = self.rng.choice(GOOD_NAMES)
        elif r < 0.6:
            name = self.rng.choice(self.scene.tokens)  # a duplicate: allowed, labels tell them apart
        else:
            name = self.rng.choice(BAD_NAMES)
        before = self.scene
        model = self.window.tokens_panel.model
        if self.rng.random() < 0.3:
            view = self.window.tokens_panel.view
            index = model.index(i)
            view.setCurrentIndex(index)
            view.edit(index)
            editor = view.findChild(QLineEdit)
            self.expect(editor is not None, "no editor for a token name")
            editor.setText(name)
            QTest.keyClick(editor, Qt.Key_Return)
            QApplication.processEvents()
        else:
            model.setData(model.index(i), name)
        good = token_ok(name)
        if good:
            self.expect(self.scene.tokens[i] == name, f"token name {name[:20]!r} was refused")
            labels = [self.scene.token_label(j) for j in range(self.scene.n)]
            self.expect(len(set(labels)) == len(labels) or len(set(self.scene.tokens)) < self.scene.n,
                        "duplicate names are not distinguishable")
        else:
            self.expect(self.scene.tokens == before.tokens, f"bad token name {name[:20]!r} ({len(name)} "
                                                            f"characters) was accepted")
            panel = self.window.tokens_panel
            self.expect(not panel.message.isHidden() and panel.message.text(),
                        f"bad token name {name[:20]!r} was refused without a message")

    def move_token(self) -> None:
        panel = self.window.tokens_panel
        q = self.session.query
        name = self.scene.tokens[q]
        up = self.rng.random() < 0.5
        (panel.up_button if up else panel.down_button).click()
        target = q - 1 if up else q + 1
        if 0 <= target < self.scene.n:
            self.expect(self.scene.tokens[target] == name and self.session.query == target,
                        "the moved token is not where it was moved")

    # ---- actions: sizes, masks, options -------------------------------------------------------------
    def _group(self) -> tuple[str, str]:
        name = self._editable()
        group = {"Q": "qk", "K": "qk", "V": "v", "X": "model", "Wq": "qk", "Wk": "qk", "Wv": "v"}[name]
        return name, group

    def add_dim(self) -> None:
        name, group = self._group()
        size = self.scene.dim(group)
        if size >= MAX_DIM_SOFT:
            return self.remove_dim()
        self.window.editors[name].add_button.click()
        self.expect(self.scene.dim(group) == size + 1, f"+ on {name} did not add a dimension")

    def remove_dim(self) -> None:
        name, group = self._group()
        size = self.scene.dim(group)
        messages = []
        self.session.message.connect(messages.append)
        try:
            self.window.editors[name].remove_button.click()
        finally:
            self.session.message.disconnect(messages.append)
        if size == 1:
            self.expect(self.scene.dim(group) == 1 and messages, "the last dimension went, or no message said why")
        else:
            self.expect(self.scene.dim(group) == size - 1, f"− on {name} did not remove a dimension")

    def toggle_causal(self) -> None:
        was = isinstance(self.scene.mask, str) and self.scene.mask == "causal"
        self.window.acts.causal.trigger()
        now = isinstance(self.scene.mask, str) and self.scene.mask == "causal"
        self.expect(now != was, "the causal action did not switch the mask")

    def toggle_blocked(self) -> None:
        n = self.scene.n
        row = None if self.rng.random() < 0.2 else self.rng.randrange(n)
        self.expect(self.session.toggle_blocked(row, self.rng.randrange(n)), "toggle_blocked refused")

    def block_whole_row(self) -> None:
        """Block every key of one query: a fully masked row (weights 0, never NaN)."""
        n = self.scene.n
        row = self.rng.randrange(n)
        blocked = self.scene.mask_matrix()
        for col in range(n):
            if not blocked[row, col]:
                self.session.toggle_blocked(row, col)
        self.expect(bool(self.session.result.fully_masked[row]), "a row with every key blocked is not fully masked")

    def toggle_scale(self) -> None:
        was = self.scene.scale
        self.window.acts.scale.trigger()
        self.expect(self.scene.scale != was, "÷√dₖ did not switch")

    def switch_mode(self) -> None:
        s = self.scene
        if s.mode == "projection":
            self.session.replace_scene(s.to_direct(), "Mode: direct")
            self.expect(self.scene.mode == "direct", "switching to direct mode failed")
        else:
            dm = self.rng.randint(1, 4)
            x = np.round(self.np_rng.normal(size=(s.n, dm)), 2)
            wq, wk = (np.round(self.np_rng.normal(size=(dm, s.d_k)), 2) for _ in range(2))
            wv = np.round(self.np_rng.normal(size=(dm, s.d_v)), 2)
            self.session.replace_scene(s.to_projection(x, wq, wk, wv), "Mode: projection")
            self.expect(self.scene.mode == "projection", "switching to projection mode failed")

    def theme(self) -> None:
        w = self.window
        if self.rng.random() < 0.5:
            w.apply_theme(self.rng.choice(list(w.theme_actions)))
        else:
            w.apply_colormap(self.rng.choice(list(w.cmap_actions)))

    def presentation(self) -> None:
        self.window.set_presentation(True, fullscreen=False)
        QApplication.processEvents()
        self.window.set_presentation(False)

    # ---- actions: the model panel, the presenter view, ink, exports (issue 32) -------------------------
    def _toy_model(self):
        from qkv_studio.core.models import registry
        from tests.toy_model import ToyCausal

        if "toy" not in registry.MODELS:
            registry.MODELS["toy"] = ToyCausal()
        return registry.MODELS["toy"]

    def model_panel(self) -> None:
        """Run the toy model on a sentence (or a bad one), page to a head, sometimes edit it."""
        toy = self._toy_model()
        w = self.window
        w.show_panel(w.docks.model)
        panel = w.panels.model
        self.expect(panel.set_model("toy"), "the toy model could not be chosen")
        words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
        text = self.rng.choice(["", "   ", " ".join(self.rng.choices(words, k=self.rng.randint(1, 8)))])
        self.check_undo_all()  # (a head shown with no history before it is the new first scene)
        before = self.scene
        ran = panel.run_text(text)
        self._model_baseline()
        if not text.strip():
            self.expect(not ran and self.scene is before, "an empty sentence was run")
            return
        if not ran:  # (the user kept unsaved edits: the dialog was answered Discard/no)
            self.expect(self.scene is before, "a refused run changed the scene")
            return
        run = panel.run
        self.expect(run is not None and run.tokens == toy.tokenize(text), "the run is not of the sentence")
        layer, head = self.rng.randrange(toy.n_layers), self.rng.randrange(toy.n_heads)
        if panel.select(layer, head) and panel.showing_model_head():
            self.expect(self.scene.same_as(run.head_scene(layer, head)), f"head {layer}.{head} is not shown")
        self._model_baseline()
        if self.rng.random() < 0.3:
            panel.edit_head()
        self._model_baseline()
        self._release_focus()

    def _model_baseline(self) -> None:
        if self.session.undo_stack.count() == 0:  # (the panel showed a head as a new document)
            self.baseline = self.scene

    def presenter_view(self) -> None:
        """Present with the console beside the slide (rehearsing on one screen), use its keys, leave."""
        w = self.window
        p = w.presenter
        p.set_rehearse(True)
        w.set_presentation(True)  # (one screen, rehearsing: the slide and the console as two windows)
        QApplication.processEvents()
        self.expect(p.console_shown(), "rehearsing: no console beside the slide")
        stage = self.session.stage
        QTest.keyClick(p.console, self.rng.choice([Qt.Key_Right, Qt.Key_Left, Qt.Key_Space]))
        self.expect(self.session.stage in STAGES, "a console key left no stage")
        self.expect(bool(p.position_text()), "the console says nothing of where the lecture is")
        if self.rng.random() < 0.5:
            w.set_presentation(False)
            QApplication.processEvents()
            self.expect(not p.console_shown(), "the console stayed after leaving presentation mode")
        else:
            p.set_rehearse(False)
            w.set_presentation(False)
        del stage
        w.activateWindow()  # (the console was the active window; offscreen, no window manager hands it back)
        QApplication.processEvents()

    def ink(self) -> None:
        """Draw (up to 5 000 points), erase, clear, undo or redo ink on the stage shown."""
        from qkv_studio.core.ink import MAX_POINTS, MAX_STROKES, stroke

        book = self.window.presenter.book
        before = book.strokes()
        kind = self.rng.choices(["draw", "erase", "clear", "undo", "redo"], weights=[6, 2, 1, 2, 1])[0]
        if kind == "draw":
            n = self.rng.choice([1, 2, 30, 300, MAX_POINTS])
            x, y = self.rng.random(), self.rng.random()
            steps = self.np_rng.normal(0, 0.004, (n, 2)).cumsum(axis=0) + (x, y)
            pressure = self.np_rng.uniform(0, 1, n) if self.rng.random() < 0.5 else np.ones(n)
            pts = [(float(a), float(b), float(c)) for (a, b), c in zip(steps, pressure, strict=True)]
            s = stroke(pts, self.rng.randint(1, 4), self.rng.choice([0.002, 0.004, 0.01]))
            book.add_stroke(s)
            after = book.strokes()
            if len(before) < MAX_STROKES:
                self.expect(len(after) == len(before) + 1 and after[-1] == s, "a drawn stroke was not kept")
                self.expect(all(0 <= v <= 1 for p in after[-1].points for v in p), "ink outside the slide")
            else:
                self.expect(after == before, "a stroke past the limit was kept")
        elif kind == "erase":
            book.erase_at(self.rng.random(), self.rng.random(), 0.05)
            self.expect(len(book.strokes()) <= len(before), "erasing added ink")
        elif kind == "clear":
            book.clear()
            self.expect(book.strokes() == (), "clearing left ink")
        elif kind == "undo":
            book.undo()
        else:
            book.redo()

    def export(self) -> None:
        """Export the scene: a figure, the numbers, or the slides with the ink — sometimes cancelled."""
        import csv
        import io

        from qkv_studio.export.files import export_file

        suffix = self.rng.choice([".png", ".svg", ".csv", ".json", ".pptx"])
        path = self.workdir / f"export-{self._index}{suffix}"
        if suffix == ".pptx":
            return self._export_slides(path)
        export_file(self.scene, path, width=self.rng.choice([320, 640]))
        self.expect(path.is_file() and path.stat().st_size > 0, f"no {suffix} written")
        if suffix == ".csv":
            rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
            got = np.array([[float(x.replace("−", "-")) for x in r[1:]] for r in rows[1:]])
            want = getattr(self.scene.result(), SHOWN_STAGE.get(self.session.stage, "weights"), None)
            self.expect(got.shape == (self.scene.n, self.scene.n), "the CSV has another shape than the scene")
            del want
        path.unlink()

    def _export_slides(self, path: Path) -> None:
        from PySide6.QtWidgets import QProgressDialog

        from qkv_studio.ui.dialogs.export_dialog import ExportDialog
        from qkv_studio.ui.window.slide_picture import SlideComposer

        d = ExportDialog(self.window, slide_composer=SlideComposer)
        try:
            d.format_combo.setCurrentIndex(d.format_combo.findData(".pptx"))
            d.width_spin.setValue(320)
            cancel = self.rng.random() < 0.3 and d.include_ink and bool(self.window.presenter.book.ink())
            real = QProgressDialog.wasCanceled
            if cancel:
                QProgressDialog.wasCanceled = lambda self: True
            try:
                written = d.export_to(path)
            finally:
                QProgressDialog.wasCanceled = real
            if cancel:
                self.expect(written == [] and not path.exists(), "a cancelled export left a file")
            else:
                self.expect(written == [path] and path.stat().st_size > 0, f"the slides were not written: "
                                                                          f"{self.dialogs[-1:]}")
                path.unlink()
        finally:
            d.reject()
            d.deleteLater()

    # ---- actions: history -------------------------------------------------------------------------
    def undo(self) -> None:
        stack = self.session.undo_stack
        index = stack.index()
        self.window.acts.undo.trigger()
        self.expect(stack.index() == max(index - 1, 0), "undo did not step back")

    def redo(self) -> None:
        stack = self.session.undo_stack
        index = stack.index()
        self.window.acts.redo.trigger()
        self.expect(stack.index() == min(index + 1, stack.count()), "redo did not step forward")

    def undo_redo_keys(self) -> None:
        self._release_focus()
        stack = self.session.undo_stack
        index = stack.index()
        if self.rng.random() < 0.6:
            QTest.keyClick(self.window, Qt.Key_Z, Qt.ControlModifier)
            self.expect(stack.index() == max(index - 1, 0), "Ctrl+Z did not undo")
        else:
            QTest.keyClick(self.window, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
            self.expect(stack.index() == min(index + 1, stack.count()), "Ctrl+Shift+Z did not redo")

    # ---- actions: files ---------------------------------------------------------------------------
    def _new_path(self, stem: str) -> Path:
        self._file_serial += 1
        return self.workdir / f"{stem}-{self._file_serial}.qkv.json"

    def save(self, reopen: bool = False) -> None:
        path = self._new_path("saved")
        self.expect(self.window._write(str(path)), f"saving to {path} failed: {self.dialogs[-1:]}")
        self.expect(not self.session.modified, "still modified after saving")
        saved = read_session(path)
        self.expect(saved.scene.same_as(self.scene), "the saved file differs from the scene")
        self.expect(saved.view == self.session.view, "the saved file's query/stage differ from the window's")
        self.saved_files.append(path)
        if reopen:
            self._open(path)

    def _open(self, path: Path) -> None:
        self.check_undo_all()  # opening clears the history: check it while it exists
        expected, view = read_session(path)
        self.expect(self.window.open_path(str(path)), f"opening {path} failed: {self.dialogs[-1:]}")
        self.expect(self.scene.same_as(expected), "the opened scene differs from the file")
        self.expect(self.session.view == view, "the opened query/stage differ from the file's")
        self.expect(self.session.undo_stack.count() == 0 and not self.session.modified, "history after open")
        self.baseline = self.scene

    def open_saved(self) -> None:
        if not self.saved_files:
            return self.save()
        self._open(self.rng.choice(self.saved_files))

    def open_corrupt(self) -> None:
        path = self._new_path("corrupt")
        source = self.rng.choice(self.saved_files) if self.saved_files else None
        data = source.read_bytes() if source is not None else b'{"format": "qkv-studio-session", "version": 1}'
        kind = self.rng.choice(["truncate", "garbage", "nan", "binary", "wrong shape", "empty"])
        if kind == "truncate":
            data = data[: self.rng.randrange(max(1, len(data) - 1))]
        elif kind == "garbage":
            data = bytes(self.rng.randrange(32, 127) for _ in range(200))
        elif kind == "nan":
            data = data.replace(b"[", b"[NaN, ", 2) if b"[[" in data else b"NaN"
        elif kind == "binary":
            data = bytes(self.rng.randrange(256) for _ in range(300)) + b"\xff\xfe"
        elif kind == "wrong shape":
            data = (b'{"format": "qkv-studio-session", "version": 1, "tokens": ["a", "b"], '
                    b'"Q": [[1, 2]], "K": [[1], [2]], "V": [[1], [2]]}')
        else:
            data = b""
        path.write_bytes(data)
        try:
            read_session(path)
            loadable = True
        except SessionFileError:
            loadable = False
        before, before_path, shown = self.scene, self.session.path, len(self.dialogs)
        opened = self.window.open_path(str(path), ask=False)
        if loadable:  # a truncation can still leave valid JSON; then it is just another file
            self.baseline = self.scene
            self.expect(opened, "a readable file was refused")
        else:
            self.expect(not opened and self.scene is before and self.session.path == before_path,
                        f"a {kind} file was not refused cleanly")
            self.expect(len(self.dialogs) > shown and path.name in self.dialogs[-1],
                        f"a {kind} file was refused without a message naming it")

    def open_preset(self) -> None:
        names = [p.name for p in list_presets()]
        name = self.rng.choice(names)
        if name == "long" and self.rng.random() < 0.7:
            name = "lesson"
        self.check_undo_all()
        self.window.open_preset(name)
        self.expect(self.scene.same_as(load_preset(name)), f"preset {name} did not open")
        self.expect(self.session.view == preset_document(name).view, f"preset {name} opened with another view")
        self.baseline = self.scene

    def new_scene(self) -> None:
        self.check_undo_all()
        self.window.new_scene()
        self.expect(self.scene.same_as(load_preset("lesson")), "New did not give the lesson")
        self.expect(self.session.view == preset_document("lesson").view, "New did not look at the lesson's query")
        self.baseline = self.scene

    # ---- invariants -------------------------------------------------------------------------------
    def _check(self, after: str) -> None:
        s = self.session
        scene = s.scene
        n = scene.n
        r = s.result
        for name in ("scores", "scaled", "weights", "output"):
            arr = getattr(r, name)
            self.expect(not np.isnan(arr).any(), f"NaN in {name} after {after}")
        self.expect(r.weights.shape == (n, n), f"weights are {r.weights.shape} for {n} tokens")
        self.expect(bool(((r.weights >= 0) & (r.weights <= 1)).all()), "a weight outside [0, 1]")
        sums = r.weights.sum(axis=1)
        fully = np.asarray(r.fully_masked, dtype=bool)
        self.expect(np.array_equal(fully, scene.mask_matrix().all(axis=1)), "fully_masked disagrees with the mask")
        self.expect(bool(np.all(sums[fully] == 0)), "a fully masked row has weights")
        self.expect(bool(np.all(np.abs(sums[~fully] - 1) < 1e-9)), f"a weights row does not sum to 1: {sums}")
        # the widgets show the Session's values
        w = self.window
        shown_stage = SHOWN_STAGE[s.stage]
        self.expect(w.heatmap.displayed_stage() == shown_stage, f"heatmap shows {w.heatmap.displayed_stage()} "
                                                                f"at stage {s.stage}")
        self.expect(np.array_equal(w.heatmap.displayed_matrix(), r.stage(shown_stage)),
                    "the heatmap's matrix is not the Session's")
        for name in ("Q", "V") + (("X",) if scene.mode == "projection" else ()):
            model = w.editors[name].table.model()
            m = scene.matrix(name)
            self.expect((model.rowCount(), model.columnCount()) == m.shape,
                        f"{name} editor is {model.rowCount()}×{model.columnCount()}, matrix {m.shape}")
            i, j = self.rng.randrange(m.shape[0]), self.rng.randrange(m.shape[1])
            shown = model.index(i, j).data()
            self.expect(shown == fmt(float(m[i, j])), f"{name}[{i},{j}] shows {shown!r}, value {m[i, j]!r}")
            header = model.headerData(i, Qt.Vertical)
            self.expect(header == scene.token_label(i), f"{name} row {i} is labelled {header!r}")
        calc = w.panels.calc.calc_model
        self.expect(calc.rowCount() == n + 1, f"calculation table has {calc.rowCount()} rows for {n} tokens")
        if "weight" in calc.columns():
            col = calc.columns().index("weight")
            j = self.rng.randrange(n)
            self.expect(calc.index(j, col).data() == f"{r.weights[s.query, j]:.2f}".replace("-", "−"),
                        "calculation table weight differs from the Session")
        tokens = w.tokens_panel.model
        self.expect(tokens.rowCount() == n, "token list length")
        j = self.rng.randrange(n)
        self.expect(tokens.index(j).data() == f"{j + 1}. {scene.token_label(j)}", "token list text")
        self.expect(w.isWindowModified() == s.modified, "the title's modified mark disagrees")
        self.expect(w.acts.causal.isChecked() == (isinstance(scene.mask, str) and scene.mask == "causal"),
                    "the causal action's check mark disagrees")
        self.expect(w.acts.scale.isChecked() == scene.scale, "the ÷√dₖ action's check mark disagrees")
        self.expect(w.stage_actions[s.stage].isChecked(), "the stage menu disagrees")

    def check_undo_all(self) -> None:
        """Undo all the way: the scene of the last open/load, exactly; redo all: where we were."""
        s = self.session
        stack = s.undo_stack
        if stack.count() == 0:
            self.expect(content_equal(s.scene, self.baseline), "no history, yet the scene is not the opened one")
            return
        self.report.undo_checks += 1
        top, current = stack.index(), s.scene
        # The views follow single undo/redo steps in the other actions; for the sweep through the whole
        # history they are held still (hundreds of full redraws would cost minutes), then re-sent the state.
        s.blockSignals(True)
        try:
            stack.setIndex(0)
            first = s.scene
            stack.setIndex(top)
        finally:
            s.blockSignals(False)
        self.expect(content_equal(first, self.baseline), "undoing all the way did not return the first scene")
        self.expect(content_equal(s.scene, current), "redoing all the way did not return to the scene")
        for signal in (s.scene_changed, s.tokens_changed):
            signal.emit()
        s.result_changed.emit(ResultChange.ALL)
        self._settle()
        self._check("undo all, redo all")

    def check_autosave(self) -> None:
        auto = self.autosave
        for _ in range(200):
            if not auto.pending():
                break
            QTest.qWait(5)
        auto.wait()
        self.report.autosave_checks += 1
        if auto.unsaved():  # (the scene, or its ink: unsaved ink is unsaved work too)
            f = auto.file()
            self.expect(f is not None and f.exists(), "unsaved changes but no autosave file")
            doc = read_session(f)
            self.expect(doc.scene.same_as(self.scene), "the autosave file is not the Session's scene")
            book = self.window.presenter.book
            self.expect(_same_ink(doc.ink, book.ink()), f"the autosave file does not hold the ink ("
                                                        f"{ {k: len(v) for k, v in doc.ink.stages.items()} } in the "
                                                        f"file, { {k: len(v) for k, v in book.ink().stages.items()} } "
                                                        f"drawn)")
        else:
            self.expect(auto.file() is None, "nothing unsaved, yet an autosave file is kept")


def _same_ink(a, b) -> bool:
    """The same strokes per stage, their points as a file holds them (4 decimals)."""
    if {k for k, v in a.stages.items() if v} != {k for k, v in b.stages.items() if v}:
        return False
    for stage in a.stages:
        sa, sb = a.strokes(stage), b.strokes(stage)
        if len(sa) != len(sb):
            return False
        for x, y in zip(sa, sb, strict=True):
            if x.colour != y.colour or len(x.points) != len(y.points) or not np.allclose(x.points, y.points,
                                                                                            atol=1e-4):
                return False
    return True


def make_window(scene: Scene | None = None):
    from qkv_studio.ui.window.main_window import MainWindow

    if scene is None:
        scene, view = preset_document("lesson")
    else:
        view = None
    w = MainWindow(scene, use_settings=False, view=view)
    w.resize(1400, 900)
    w.show()
    w.activateWindow()
    QApplication.processEvents()
    return w


def run(actions: int, seed: int, *, workdir: str | os.PathLike | None = None, verbose: bool = False,
        window=None) -> Report:
    """Perform ``actions`` random actions on a (new) main window with autosave attached."""
    from qkv_studio import reliability

    own_dir = None
    if workdir is None:
        own_dir = tempfile.TemporaryDirectory(prefix="qkv-monkey-")
        workdir = own_dir.name
    own_window = window is None
    if own_window:
        window = make_window()
    autosave = None
    try:
        autosave = reliability.attach(window, folder=Path(workdir) / "autosave")
        autosave._timer.setInterval(30)
        driver = MonkeyDriver(window, seed, workdir, autosave=autosave, verbose=verbose)
        return driver.run(actions)
    finally:
        if autosave is not None:
            autosave.discard(wait=True)  # before its folder goes
        if own_window:
            window.session.undo_stack.setClean()
            window.close()
            window.deleteLater()
            QApplication.processEvents()
        if own_dir is not None:
            own_dir.cleanup()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.monkey_driver", description=__doc__.split("\n\n")[0])
    p.add_argument("--actions", type=int, default=20000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    from qkv_studio.app import ensure_qapp

    ensure_qapp(offscreen_if_headless=True)
    warnings: list[str] = []

    def on_qt_message(kind, context, text):
        if kind in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) \
                and "propagateSizeHints" not in text:
            warnings.append(text)

    qInstallMessageHandler(on_qt_message)
    report = run(args.actions, args.seed, verbose=args.verbose)
    for text in warnings:
        report.failures.append((0, "Qt warning", text))
    for index, action, message in report.failures[:20]:
        print(f"failure at action {index} ({action}): {message}")
    if len(report.failures) > 20:
        print(f"… and {len(report.failures) - 20} more")
    print(report.summary())
    print("per action:", ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items())))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
