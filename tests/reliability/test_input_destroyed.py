"""Issue 20, class 1: a command whose output is one of its inputs is refused (one line, exit 2), and
the input survives byte for byte — whether the output names it directly, by another spelling, by a
hard link or through a symbolic link either way."""

import os

import pytest

from qkv_studio.core import preset_document, write_session

from .conftest import one_error_line


@pytest.fixture
def session(child):
    path = child.home / "s.json"
    write_session(path, *preset_document("causal"))
    return path


@pytest.mark.parametrize("how", ["same-name", "other-spelling", "absolute", "hard-link", "symlink-out-to-in",
                                 "symlink-in-to-out"])
def test_export_onto_its_own_input_is_refused(child, session, how):
    before = session.read_bytes()
    src, out = "s.json", "s.json"
    if how == "other-spelling":
        (child.home / "sub").mkdir()
        out = "sub/../s.json"
    elif how == "absolute":
        out = str(session)
    elif how == "hard-link":
        os.link(session, child.home / "h.json")
        out = "h.json"
    elif how == "symlink-out-to-in":
        os.symlink("s.json", child.home / "l.json")
        out = "l.json"
    elif how == "symlink-in-to-out":
        os.symlink("s.json", child.home / "l.json")
        src = "l.json"
    proc = child.cli("export", src, "-o", out)
    one_error_line(proc, "input file", "destroy")
    assert session.read_bytes() == before
    assert not [p for p in os.listdir(child.home) if p.endswith(".tmp")]


def test_a_screenshot_onto_its_input_is_refused(child):
    odd = child.home / "scene.png"  # a session file may have any name
    write_session(odd, *preset_document("lesson"))
    before = odd.read_bytes()
    one_error_line(child.cli("screenshot", "scene.png", "-o", "scene.png", "--size", "400x300"), "input file")
    assert odd.read_bytes() == before


def test_a_different_file_is_still_written(child, session):
    proc = child.cli("export", "s.json", "-o", "numbers.json")
    assert proc.returncode == 0, proc.stderr
    assert b'"qkv-studio-numbers"' in (child.home / "numbers.json").read_bytes()
