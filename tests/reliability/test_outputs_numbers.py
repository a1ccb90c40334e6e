"""Issue 20, class 7: outputs and numbers — a full disk, projection overflow, CSV injection,
duplicate JSON keys, an output that is a symbolic link."""

import csv
import io
import json
import os

import numpy as np
import pytest

from qkv_studio.core import Scene, SessionFileError, read_session
from qkv_studio.core.deck import read_deck
from qkv_studio.core.numbers import stage_csv
from qkv_studio.core.sessionfile import parse_bytes

from ..core.bad_files import GOOD
from .conftest import one_error_line


# ---- a full disk: our one line only on stderr ----------------------------------------------------------
@pytest.mark.parametrize("argv", [["screenshot", "--preset", "lesson", "--size", "400x300"],
                                  ["export", "--preset", "lesson", "--width", "400"],
                                  ["export", "--preset", "lesson"]],
                         ids=["screenshot-png", "export-png", "export-csv"])
def test_a_full_disk_is_one_line_of_ours(child, tiny_disk, argv):
    mount, _fill, _free = tiny_disk
    out = mount / ("x.csv" if argv == ["export", "--preset", "lesson"] else "x.png")
    err = one_error_line(child.cli(*argv, "-o", str(out)), "No space left on device", str(out))
    assert "libpng" not in err
    assert sorted(p.name for p in mount.iterdir()) == ["filler"]  # no half file, no temporary


# ---- projection mode: X·W without overflow where it is finite, else refused ------------------------------
def projection(x, wq):
    n, d = np.shape(x)
    return Scene.create([f"t{i}" for i in range(n)], x=np.array(x, float), wq=np.array(wq, float),
                        wk=np.ones((d, 1)), wv=np.ones((d, 1)))


def test_the_issue_example_gives_the_true_value():
    s = projection([[1e308, -1e308], [1, 1]], [[2], [1.9]])
    assert s.qkv()[0][0, 0] == pytest.approx(1e307, rel=1e-9)
    assert np.isfinite(s.result().weights).all()


@pytest.mark.parametrize("x,wq,expect", [
    ([[1e308, 1e308, -1e308]], [[1.5], [1.0], [1.5]], 1e308),  # 1.5e308 + 1e308 overflows, the sum does not
    ([[1.7e308, -1.7e308]], [[1.0], [1.0 - 2**-52]], 1.7e308 * 2**-52),  # catastrophic cancellation, exact
    ([[1e-300, 1e-300]], [[1e300], [1e300]], 2.0),  # tiny × huge: no underflow either
])
def test_huge_projections_are_exact_where_the_result_is_a_double(x, wq, expect):
    assert projection(x, wq).qkv()[0][0, 0] == pytest.approx(expect, rel=1e-12)


def test_an_edit_whose_projection_is_no_double_is_refused_with_a_message(qtbot):
    from qkv_studio.state.session import Session

    s = Session(projection([[1e308, 1.0], [1.0, 1.0]], [[1.0], [1.0]]))
    messages = []
    s.message.connect(messages.append)
    before = s.scene
    assert not s.set_value("Wq", 0, 0, 1e300)  # Q[0] would be 1e608
    assert s.scene is before and s.undo_stack.count() == 0
    assert "Q = X·W^Q is too large" in messages[-1] and "row 1" in messages[-1]
    assert s.set_value("Wq", 0, 0, 1.5)  # a finite one is taken
    assert s.scene.qkv()[0][0, 0] == pytest.approx(1.5e308)


def test_a_session_file_whose_projection_is_no_double_is_refused(tmp_path):
    obj = {"format": "qkv-studio-session", "version": 1, "tokens": ["a"], "X": [[1e308, 1e308]],
           "Wq": [[1e10], [1]], "Wk": [[1], [1]], "Wv": [[1], [1]]}
    p = tmp_path / "overflow.qkv.json"
    p.write_text(json.dumps(obj))
    with pytest.raises(SessionFileError, match="too large"):
        read_session(p)


# ---- CSV injection (OWASP) -----------------------------------------------------------------------------
FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "@SUM(1)", "-2+3", "=1", "-cmd|' /C calc'!A0"]


def test_a_cell_starting_with_a_tab_or_cr_is_escaped():
    from qkv_studio.core.numbers import csv_text_cell

    # (tokens cannot hold control characters; the cell escaping still covers them, as OWASP lists them)
    assert csv_text_cell("\tTAB") == "'\tTAB" and csv_text_cell("\rCR") == "'\rCR"
    assert csv_text_cell("-1e5") == "-1e5" and csv_text_cell("-") == "'-"


def test_tokens_that_a_spreadsheet_would_run_are_escaped():
    n = len(FORMULAS)
    scene = Scene.create(FORMULAS, q=np.eye(n), k=np.eye(n), v=np.eye(n))
    rows = list(csv.reader(io.StringIO(stage_csv(scene, "scores"))))
    header = rows[0][1:]
    assert header == ["'" + t for t in FORMULAS]
    assert [r[0] for r in rows[1:]] == header
    for r in rows[1:]:
        for cell in r[1:]:
            float(cell)  # the numbers stay numbers (no quote)


def test_plain_and_numeric_tokens_are_left_as_they_are():
    tokens = ["-1", "+2.5", "the", "cat's", "a=b", " -x"]
    scene = Scene.create(tokens, q=np.eye(6), k=np.eye(6), v=np.eye(6), mask="causal")
    rows = list(csv.reader(io.StringIO(stage_csv(scene, "scores"))))
    assert rows[0][1:] == tokens
    assert rows[1][2] == "-inf"  # a masked score is still the number −∞


def test_the_cli_csv_is_escaped_too(child):
    obj = dict(GOOD, tokens=["=HYPERLINK(1)", "+1+1", "@SUM(1)", "mat"])
    (child.home / "f.qkv.json").write_text(json.dumps(obj))
    proc = child.cli("export", "f.qkv.json", "-o", "f.csv")
    assert proc.returncode == 0, proc.stderr
    header = (child.home / "f.csv").read_text().splitlines()[0]
    assert header == ",'=HYPERLINK(1),'+1+1,'@SUM(1),mat"


# ---- duplicate keys ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,key", [
    ('{"format": "qkv-studio-session", "version": 1, "version": 1, "tokens": ["a"], '
     '"Q": [[1]], "K": [[1]], "V": [[1]]}',
     "version"),
    ('{"format": "qkv-studio-session", "version": 1, "tokens": ["a"], '
     '"Q": [[1]], "K": [[1]], "V": [[1]], "Q": [[2]]}',
     "Q"),
    ('{"format": "qkv-studio-session", "version": 1, "tokens": ["a"], "Q": [[1]], "K": [[1]], "V": [[1]], '
     '"query": 0, "stage": "scores", "stage": "weights"}', "stage"),
])
def test_a_session_with_a_key_given_twice_is_refused(text, key):
    with pytest.raises(SessionFileError, match=f'the key "{key}" appears twice'):
        parse_bytes(text.encode(), "dup.qkv.json")


def test_a_deck_with_a_key_given_twice_is_refused(tmp_path):
    p = tmp_path / "d.qkvdeck.json"
    p.write_text('{"format": "qkv-studio-deck", "version": 1, "scenes": ["preset:lesson"], '
                 '"scenes": ["preset:causal"]}')
    with pytest.raises(SessionFileError, match='"scenes" appears twice'):
        read_deck(p)


def test_the_cli_refuses_a_duplicate_key_session(child):
    text = json.dumps(GOOD)[:-1] + ', "query": 0}'
    (child.home / "dup.qkv.json").write_text(text)
    one_error_line(child.cli("export", "dup.qkv.json", "-o", "x.csv"), "dup.qkv.json", '"query" appears twice')


# ---- an output that is a symbolic link: refused, the link and its target untouched ----------------------
@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_an_output_that_is_a_symlink_is_refused(child, dangling):
    target = child.home / "elsewhere" / "real.csv"
    target.parent.mkdir()
    if not dangling:
        target.write_text("keep me\n")
    link = child.home / "out.csv"
    os.symlink(target, link)
    one_error_line(child.cli("export", "--preset", "lesson", "-o", "out.csv"), "symbolic link", "out.csv")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert (target.read_text() == "keep me\n") if not dangling else not target.exists()


def test_a_symlinked_folder_is_fine(child):
    real = child.home / "real"
    real.mkdir()
    os.symlink(real, child.home / "via")
    proc = child.cli("export", "--preset", "lesson", "-o", "via/w.csv")
    assert proc.returncode == 0, proc.stderr
    assert (real / "w.csv").read_text().startswith(",the,cat")
