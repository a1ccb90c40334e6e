"""One reader for every file the app reads (issue 32 item 2): a Q/K/V file and the files beside it go
through the safe reader — a FIFO is refused at once, a link to /dev/zero without reading it — and every
JSON parse is bounded in size and depth: a tokens.json or a safetensors file's metadata nested 100 000
deep is a clear message naming the file, never "unexpected RecursionError"."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from qkv_studio.core.models.qkv_file import read_qkv_file
from qkv_studio.core.safe_read import BadJSON, check_kind, hash_regular, json_depth, loads_json
from qkv_studio.core.sessionfile import SessionFileError

from .conftest import one_error_line

DEEP = "[" * 100_000 + "]" * 100_000


def _npz(path, n=3, d=2):
    rng = np.random.default_rng(0)
    np.savez(path, q=rng.normal(size=(n, d)), k=rng.normal(size=(n, d)), v=rng.normal(size=(n, d)))
    return path


def _safetensors(path, metadata: dict[str, str] | None = None, *, header: bytes | None = None):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    save_file({name: rng.normal(size=(3, 2)) for name in "qkv"}, str(path), metadata=metadata)
    if header is not None:  # the file's own JSON header replaced
        data = path.read_bytes()
        size = struct.unpack("<Q", data[:8])[0]
        path.write_bytes(struct.pack("<Q", len(header)) + header + data[8 + size:])
    return path


# ---- the bounded JSON parser --------------------------------------------------------------------------------
def test_json_nested_100000_deep_is_a_message_not_a_recursion_error():
    assert json_depth(DEEP) == 100_000
    with pytest.raises(BadJSON, match="nested more than 64 levels deep"):
        loads_json(DEEP, cap=1 << 20)
    assert loads_json('{"a": [[1, 2], {"b": "[[[[[[[[[[[[[["}]}', cap=100, max_depth=3) == {
        "a": [[1, 2], {"b": "[[[[[[[[[[[[[["}]}  # (brackets in strings do not nest)


@pytest.mark.parametrize("text, fragment", [
    ('{"a": 1', "not valid JSON (line 1, column 8"),
    ("x" * 2000, "larger than"),
    (b"\xff\xfe{}", "not UTF-8"),
    ("1" * 5000, "the JSON text"),  # (Python's digit limit: a ValueError of its own)
])
def test_every_json_failure_is_one_clear_line(text, fragment):
    with pytest.raises(BadJSON) as info:
        loads_json(text, cap=1024 if fragment == "larger than" else 1 << 20)
    assert fragment in info.value.problem and "\n" not in info.value.problem


def test_check_kind_judges_without_opening(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "big").write_bytes(b"x" * 2000)
    (tmp_path / "ok").write_bytes(b"{}")
    assert "named pipe" in check_kind(tmp_path / "pipe", 1000)
    assert check_kind(tmp_path / "empty", 1000) == "the file is empty"
    assert "larger than" in check_kind(tmp_path / "big", 1000)
    assert check_kind(tmp_path / "missing", 1000) == "no such file"
    assert check_kind(tmp_path / "ok", 1000) is None
    assert "device" in check_kind("/dev/zero", 1000)


def test_hashing_refuses_a_device_instead_of_reading_it_forever():
    from qkv_studio.core.safe_read import UnreadableFile

    with pytest.raises(UnreadableFile, match="device"):
        hash_regular("/dev/zero", 1 << 30)


# ---- Q/K/V files and the files beside them --------------------------------------------------------------------
def test_a_tokens_json_nested_100000_deep_is_refused_naming_it(tmp_path):
    path = _npz(tmp_path / "heads.npz")
    (tmp_path / "heads.tokens.json").write_text(DEEP)
    with pytest.raises(SessionFileError) as info:
        read_qkv_file(path)
    message = str(info.value)
    assert "heads.tokens.json" in message and "nested more than" in message and "Recursion" not in message


def test_safetensors_metadata_tokens_nested_100000_deep_is_refused(tmp_path):
    path = _safetensors(tmp_path / "heads.safetensors", {"tokens": DEEP})
    with pytest.raises(SessionFileError, match=r"metadata 'tokens' must be a JSON list of strings \(.*nested"):
        read_qkv_file(path)


def test_a_safetensors_header_nested_deep_is_refused(tmp_path):
    path = _safetensors(tmp_path / "heads.safetensors",
                        header=('{"__metadata__": {"a": "b"}, "x": ' + "[" * 5000 + "]" * 5000 + "}").encode())
    with pytest.raises(SessionFileError, match="not a readable .safetensors file .*nested"):
        read_qkv_file(path)


def test_safetensors_tokens_from_metadata_still_read(tmp_path):
    path = _safetensors(tmp_path / "heads.safetensors", {"tokens": json.dumps(["a", "b", "c"]), "causal": "true"})
    model = read_qkv_file(path)
    assert model.tokens == ("a", "b", "c") and model.causal


def test_a_tokens_json_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    path = _npz(tmp_path / "heads.npz")
    os.mkfifo(tmp_path / "tokens.json")
    with pytest.raises(SessionFileError, match=r"tokens\.json.*named pipe"):
        read_qkv_file(path)


def test_an_npz_that_is_a_fifo_or_a_link_to_dev_zero_is_refused_at_once(child):
    """In a process of its own with its memory capped: a hang or a growing read fails the test."""
    os.mkfifo(child.home / "pipe.npz")
    (child.home / "zero.npz").symlink_to("/dev/zero")
    (child.home / "zero.safetensors").symlink_to("/dev/zero")
    for name, fragment in (("pipe.npz", "named pipe"), ("zero.npz", "device"), ("zero.safetensors", "device")):
        proc = child.cli("export", name, "-o", "out.csv")
        one_error_line(proc, name, fragment)
    assert not (child.home / "out.csv").exists()


def test_the_cli_names_a_deep_tokens_json_in_one_line(child):
    _npz(child.home / "heads.npz")
    (child.home / "tokens.json").write_text(DEEP)
    proc = child.cli("export", "heads.npz", "-o", "out.csv")
    one_error_line(proc, "tokens.json", "nested more than")
