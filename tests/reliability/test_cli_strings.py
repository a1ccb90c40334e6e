"""Issue 20, class 3: every string the user gives the command line — paths, names, the query, the
text — and every path operation's error is one line naming what was wrong, exit 2; never
"unexpected …" (exit 1)."""

import os
import sys
import types

import pytest

from qkv_studio import cli

from .conftest import one_error_line

DIGITS = "9" * 5000  # past Python's 4300-digit int-conversion limit
LONG = "a" * 300  # past NAME_MAX (255): ENAMETOOLONG from the first path operation
BAD_NAMES = [("nul", "x\x00y.qkv.json", "NUL byte"), ("surrogate", "x\ud800y.qkv.json", "not valid text")]

CASES = [
    # (id, argv, fragments)
    ("query-5000-digits", ["export", "--query", DIGITS, "-o", "x.csv"], ["--query", "out of range", "5000"]),
    ("query-negative-5000-digits", ["export", "--query", "-" + DIGITS, "-o", "x.csv"], ["--query", "out of range"]),
    ("query-nul", ["export", "--query", "c\x00at", "-o", "x.csv"], ["--query", "NUL byte"]),
    ("query-surrogate", ["export", "--query", "\udcff", "-o", "x.csv"], ["--query", "not valid UTF-8"]),
    ("output-300-chars", ["export", "-o", LONG + ".csv"], ["cannot write", "too long"]),
    ("output-300-chars-png", ["export", "-o", LONG + ".png"], ["cannot write", "too long"]),
    ("screenshot-300-chars", ["screenshot", "-o", LONG + ".png"], ["cannot write", "too long"]),
    ("output-300-char-folder", ["export", "-o", LONG + "/x.csv"], ["cannot write", "too long"]),
    ("output-nul", ["export", "-o", "x\x00.csv"], ["output", "NUL byte"]),
    ("output-surrogate", ["export", "-o", "x\ud800.csv"], ["output", "not valid text"]),
    ("file-300-chars", ["export", LONG + ".qkv.json", "-o", "x.csv"], ["too long"]),
    ("window-file-300-chars", [LONG + ".qkv.json"], ["too long"]),
    ("deck-300-chars", ["--deck", LONG], ["too long"]),
    ("width-5000-digits", ["export", "-o", "x.png", "--width", DIGITS], ["--width", "whole number"]),
    ("head-5000-digits", ["export", "--preset", "multihead", "--head", DIGITS, "-o", "x.csv"], ["--head"]),
    ("layer-5000-digits", ["export", "--model", "minilm", "--text", "hi", "--layer", DIGITS, "-o", "x.csv"],
     ["--layer", "whole number"]),
    ("size-5000-digits", ["screenshot", "-o", "x.png", "--size", DIGITS + "x900"], ["--size"]),
    ("text-nul", ["export", "--model", "minilm", "--text", "a\x00b", "-o", "x.csv"], ["--text", "NUL byte"]),
    ("text-surrogate", ["export", "--model", "minilm", "--text", "caf\udce9", "-o", "x.csv"],
     ["--text", "not valid UTF-8"]),
] + [(f"file-{i}", ["export", name, "-o", "x.csv"], [frag]) for i, name, frag in BAD_NAMES] \
  + [(f"window-file-{i}", [name], [frag]) for i, name, frag in BAD_NAMES] \
  + [(f"deck-{i}", ["--deck", name], ["--deck", frag]) for i, name, frag in BAD_NAMES]


@pytest.mark.parametrize("argv,fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_user_strings_are_one_line_exit_2(tmp_path, capsys, monkeypatch, argv, fragments):
    monkeypatch.chdir(tmp_path)
    opened = []
    monkeypatch.setitem(sys.modules, "qkv_studio.app", types.SimpleNamespace(
        run_gui=lambda *a, **k: opened.append(a) or 0, screenshot=lambda *a, **k: opened.append(a)))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and err.startswith("qkv-studio: error: "), err
    assert "unexpected" not in err
    for f in fragments:
        assert f in err, (f, err)
    assert len(err) < 400  # the 5000 digits or 300 characters are not echoed back whole
    assert os.listdir(tmp_path) == [] and opened == []


@pytest.mark.parametrize("argv,fragments", [
    ([b"export", b"--model", b"minilm", b"--text", b"\xff\xfe not UTF-8", b"-o", b"m.csv"], ["--text", "UTF-8"]),
    ([b"export", b"--query", b"\xe9t\xe9", b"-o", b"q.csv"], ["--query", "UTF-8"]),
    ([b"export", b"caf\xe9.qkv.json", b"-o", b"q.csv"], ["no such file"]),  # a Latin-1 name: a real file name
], ids=["text-latin1", "query-latin1", "file-latin1"])
def test_bytes_that_are_not_utf8_in_a_real_terminal(child, argv, fragments):
    one_error_line(child.cli(*argv), *fragments)
    assert not list(child.home.glob("*.csv"))


def test_a_deck_entry_with_a_nul_or_a_lone_surrogate_is_refused_by_name(tmp_path):
    from qkv_studio.core import SessionFileError
    from qkv_studio.core.deck import read_deck

    for entry, fragment in [("a\\u0000b.qkv.json", "NUL byte"), ("\\ud800.qkv.json", "lone surrogate")]:
        deck = tmp_path / "d.qkvdeck.json"
        deck.write_text(f'{{"format": "qkv-studio-deck", "version": 1, "scenes": ["preset:lesson", "{entry}"]}}')
        with pytest.raises(SessionFileError, match="scene 2") as info:
            read_deck(deck)
        assert fragment in str(info.value)
        str(info.value).encode("utf-8")  # printable: the message itself holds no lone surrogate
