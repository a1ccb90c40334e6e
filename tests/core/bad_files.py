"""A corpus of session files that must be refused, shared by the reader's tests and the CLI's tests.

Each entry is ``(id, make, fragment)``: ``make(folder)`` writes the file and returns its path, and
``fragment`` is a piece of the one-line message that says what is wrong.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path

GOOD = {
    "format": "qkv-studio-session",
    "version": 1,
    "tokens": ["the", "cat", "sat", "mat"],
    "Q": [[0, 1], [1, 0], [1, 2], [0.5, 0.5]],
    "K": [[1, 0], [2, 1], [0, 1], [1, 1]],
    "V": [[1, 0], [0, 1], [1, 1], [0.5, -1]],
    "mask": "none",
    "scale": True,
    "query": 2,
    "stage": "weights",
}
GOOD_TEXT = json.dumps(GOOD, indent=1)


def _with(**changes) -> bytes:
    obj = json.loads(json.dumps(GOOD))
    for key, val in changes.items():
        if val is _DROP:
            obj.pop(key, None)
        else:
            obj[key] = val
    return json.dumps(obj).encode()


_DROP = object()


def _text(s: str) -> bytes:
    return s.encode("utf-8")


def _q_cell(literal: str) -> bytes:
    """The good file with Q's first number replaced by some literal JSON text."""
    return _text(json.dumps(GOOD).replace('"Q": [[0, 1]', f'"Q": [[{literal}, 1]', 1))


def _sized(nbytes: int) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        p = folder / "huge.qkv.json"
        with open(p, "wb") as fh:  # sparse: costs no disk and no time
            fh.write(b"{")
            fh.truncate(nbytes)
        return p

    return make


def _bytes(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        p = folder / name
        p.write_bytes(data)
        return p

    return make


def _wo_cell(literal: str) -> bytes:
    """The good file split into 2 heads with a 2×2 W^O whose second number is some literal JSON text."""
    obj = dict(GOOD, heads=2, Wo=[[1, 0], [0, 1]])
    return _text(json.dumps(obj).replace('"Wo": [[1, 0]', f'"Wo": [[1, {literal}]', 1))


_many = 1025
BAD: list[tuple[str, Callable[[Path], Path], str]] = [
    ("truncated", _bytes("truncated.qkv.json", _text(GOOD_TEXT[: len(GOOD_TEXT) // 2])), "truncated"),
    ("empty", _bytes("empty.qkv.json", b""), "the file is empty"),
    ("blank", _bytes("blank.qkv.json", b" \n\t\n"), "the file is empty"),
    ("not-json", _bytes("prose.qkv.json", b"the cat sat on the mat\n"), "not valid JSON"),
    ("binary", _bytes("binary.qkv.json", bytes(range(256)) * 4), "binary"),
    ("pickle", _bytes("pickled.qkv.json", pickle.dumps(GOOD, protocol=4)), "binary"),
    ("pickle-protocol-0", _bytes("pickled0.qkv.json", pickle.dumps(GOOD, protocol=0)), "not valid JSON"),
    ("utf16", _bytes("utf16.qkv.json", GOOD_TEXT.encode("utf-16")), "binary"),
    ("top-level-list", _bytes("list.qkv.json", b"[1, 2, 3]"), "top level must be a JSON object"),
    ("wrong-format", _bytes("other.qkv.json", _with(format="jupyter-notebook")), "'format' must be"),
    ("missing-format", _bytes("noformat.qkv.json", _with(format=_DROP)), "it is missing"),
    ("unknown-version", _bytes("v2.qkv.json", _with(version=2)), "version 2 is not supported"),
    ("version-as-text", _bytes("vtext.qkv.json", _with(version="1")), "'version' must be a whole number"),
    ("missing-version", _bytes("nover.qkv.json", _with(version=_DROP)), "missing field 'version'"),
    ("missing-tokens", _bytes("notokens.qkv.json", _with(tokens=_DROP)), "missing field 'tokens'"),
    ("missing-K", _bytes("nok.qkv.json", _with(K=_DROP)), "missing field 'K'"),
    ("projection-missing-Wv", _bytes("nowv.qkv.json", _with(Q=_DROP, K=_DROP, V=_DROP, X=[[1]] * 4, Wq=[[1]],
                                                           Wk=[[1]])), "needs field 'Wv'"),
    ("ragged-rows", _bytes("ragged.qkv.json", _with(Q=[[0, 1], [1], [1, 2], [0.5, 0.5]])),
     "row 2 of Q has 1 number but row 1 has 2"),
    ("qk-width-mismatch", _bytes("width.qkv.json", _with(K=[[1, 0, 0], [2, 1, 0], [0, 1, 0], [1, 1, 0]])),
     "Q rows have 2 numbers but K rows have 3"),
    ("rows-not-tokens", _bytes("rows.qkv.json", _with(V=[[1, 0], [0, 1], [1, 1]])),
     "V has 3 rows but there are 4 tokens"),
    ("empty-matrix", _bytes("emptyq.qkv.json", _with(Q=[])), "Q must be a non-empty list of rows"),
    ("row-not-a-list", _bytes("rowscalar.qkv.json", _with(Q=[1, 2, 3, 4])), "row 1 of Q must be a list"),
    ("zero-width", _bytes("zerowidth.qkv.json", _with(V=[[], [], [], []])), "V rows must have 1–1024 numbers"),
    ("nan", _bytes("nan.qkv.json", _q_cell("NaN")), "NaN is not a finite number"),
    ("infinity", _bytes("inf.qkv.json", _q_cell("Infinity")), "Infinity is not a finite number"),
    ("minus-infinity", _bytes("minf.qkv.json", _q_cell("-Infinity")), "-Infinity is not a finite number"),
    ("1e999", _bytes("1e999.qkv.json", _q_cell("1e999")), "Q row 1, column 1 is not a finite number"),
    ("huge-integer", _bytes("bigint.qkv.json", _q_cell("9" * 5000)), "Q row 1, column 1 is not a finite number"),
    ("number-as-text", _bytes("text.qkv.json", _q_cell('"0"')), "Q row 1, column 1 must be a number, found text"),
    ("number-as-bool", _bytes("bool.qkv.json", _q_cell("true")), "must be a number, found true/false"),
    ("number-as-null", _bytes("null.qkv.json", _q_cell("null")), "must be a number, found null"),
    ("query-out-of-range", _bytes("query.qkv.json", _with(query=4)), "'query' 4 is out of range"),
    ("query-negative", _bytes("queryneg.qkv.json", _with(query=-1)), "'query' -1 is out of range"),
    ("query-as-text", _bytes("querytext.qkv.json", _with(query="sat")), "'query' must be a token index"),
    ("unknown-mask", _bytes("mask.qkv.json", _with(mask="future")), "unknown mask \"future\""),
    ("mask-wrong-size", _bytes("masksize.qkv.json", _with(mask=[[False] * 3] * 3)), "'mask' must be 4×4"),
    ("mask-of-numbers", _bytes("masknum.qkv.json", _with(mask=[[0] * 4] * 4)), "true (blocked) or false"),
    ("unknown-stage", _bytes("stage.qkv.json", _with(stage="blend")), "unknown stage \"blend\""),
    ("scale-not-bool", _bytes("scale.qkv.json", _with(scale="yes")), "'scale' must be true or false"),
    ("too-many-tokens", _bytes("many.qkv.json", _with(tokens=[f"t{i}" for i in range(_many)],
                                                    Q=[[0]] * _many, K=[[0]] * _many, V=[[0]] * _many)),
     "1–1024 names, it holds 1025"),
    ("no-tokens", _bytes("none.qkv.json", _with(tokens=[])), "it holds 0"),
    ("token-not-text", _bytes("tok.qkv.json", _with(tokens=["the", 7, "sat", "mat"])), "token 2 must be text"),
    ("token-too-long", _bytes("long.qkv.json", _with(tokens=["the", "c" * 65, "sat", "mat"])),
     "token 2 must be 1–64 characters"),
    ("deeply-nested", _bytes("nested.qkv.json", b"[" * 100_000 + b"]" * 100_000), "nested more than"),
    ("nested-unclosed", _bytes("nested2.qkv.json", b'{"format": ' + b"[" * 100_000), "nested more than"),
    ("larger-than-64MB", _sized(64 * 1024 * 1024 + 1), "larger than 64 MB"),
    # multi-head: "heads" 1–16 dividing d_k and d_v (here both 2), "Wo" d_v × d_out of finite numbers
    ("heads-zero", _bytes("heads0.qkv.json", _with(heads=0)), "'heads' must be 1–16, found 0"),
    ("heads-17", _bytes("heads17.qkv.json", _with(heads=17)), "'heads' must be 1–16, found 17"),
    ("heads-negative", _bytes("headsneg.qkv.json", _with(heads=-2)), "'heads' must be 1–16, found -2"),
    ("heads-as-text", _bytes("headstext.qkv.json", _with(heads="2")), "'heads' must be a whole number"),
    ("heads-as-float", _bytes("headsfloat.qkv.json", _with(heads=2.0)), "'heads' must be a whole number"),
    ("heads-as-bool", _bytes("headsbool.qkv.json", _with(heads=True)), "'heads' must be a whole number"),
    ("heads-not-dividing-d_k", _bytes("heads3.qkv.json", _with(heads=3)),
     "heads = 3 cannot split d_k = 2 into equal parts"),
    ("heads-not-dividing-d_v", _bytes("heads2dv.qkv.json", _with(heads=2, V=[[1, 0, 0]] * 4)),
     "heads = 2 cannot split d_v = 3"),
    ("Wo-wrong-rows", _bytes("worows.qkv.json", _with(heads=2, Wo=[[1, 0, 0]] * 3)),
     "Wo has 3 rows but the heads' concatenation has d_v = 2 columns"),
    ("Wo-ragged", _bytes("woragged.qkv.json", _with(Wo=[[1, 0], [1]])), "row 2 of Wo has 1 number but row 1 has 2"),
    ("Wo-not-a-matrix", _bytes("wotext.qkv.json", _with(Wo="identity")), "Wo must be a non-empty list of rows"),
    ("Wo-empty-rows", _bytes("woempty.qkv.json", _with(Wo=[[], []])), "Wo rows must have 1–1024 numbers"),
    ("Wo-nan", _bytes("wonan.qkv.json", _wo_cell("NaN")), "NaN is not a finite number"),
    ("Wo-1e999", _bytes("wo1e999.qkv.json", _wo_cell("1e999")), "Wo row 1, column 2 is not a finite number"),
    ("Wo-number-as-text", _bytes("wostr.qkv.json", _wo_cell('"0.5"')), "Wo row 1, column 2 must be a number"),
]
BAD_IDS = [b[0] for b in BAD]
