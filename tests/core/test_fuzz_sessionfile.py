"""Fuzzing the session reader: whatever the bytes, the only outcomes are a Scene or a SessionFileError.

Four generators: raw bytes; arbitrary JSON documents (``st.recursive``); session-shaped objects
whose every field is sometimes right and sometimes anything at all; and the bytes of a good file
with random damage.  Whatever loads must also save and load back to the same scene, because a file
the app opens but cannot save would lose the user's work at the worst moment.
"""

from __future__ import annotations

import json
import math
import os

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from qkv_studio.core import Scene, SessionFileError
from qkv_studio.core.sessionfile import dumps, parse_bytes

from .bad_files import GOOD, GOOD_TEXT

# QKV_FUZZ_EXAMPLES=20000 for a long hunt; CI keeps it quick.
FUZZ = settings(max_examples=int(os.environ.get("QKV_FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# ---- building blocks -------------------------------------------------------------------------------------
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10 ** 500), max_value=10 ** 500),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -0.0, 1e308, -1e308, 5e-324, 2 ** 1023, 2 ** 1024, 10 ** 400]),
)
texts = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", "the", "x" * 65, "\x00", "a\nb", "\u202eevil", "שלום", "😀", "\ud800", "NaN",
                     "weights", "causal", "none", "qkv-studio-session"]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=6),
                               st.dictionaries(texts, children, max_size=6)),
    max_leaves=40,
)


def _matrix(rows: int | None = None):
    width = st.integers(0, 4)
    height = st.just(rows) if rows is not None else st.integers(0, 5)
    return st.tuples(height, width).flatmap(
        lambda hw: st.lists(st.lists(numbers, min_size=hw[1], max_size=hw[1]), min_size=hw[0], max_size=hw[0]))


def _sometimes(good, anything=json_values):
    return st.one_of(good, good, anything)


@st.composite
def session_objects(draw):
    """Objects that get past the format check and stress every field after it."""
    n = draw(st.integers(1, 5))
    obj = {"format": "qkv-studio-session", "version": draw(_sometimes(st.just(1), numbers))}
    obj["tokens"] = draw(_sometimes(st.lists(texts, min_size=n, max_size=n)))
    if draw(st.booleans()):
        obj["Q"], obj["K"], obj["V"] = (draw(_sometimes(_matrix(n), _matrix())) for _ in range(3))
    else:
        obj["X"] = draw(_sometimes(_matrix(n), _matrix()))
        for name in ("Wq", "Wk", "Wv"):
            obj[name] = draw(_sometimes(_matrix()))
    optional = {
        "mask": _sometimes(st.sampled_from(["none", "causal"]) | st.lists(
            st.lists(st.booleans(), min_size=n, max_size=n), min_size=n, max_size=n)),
        "scale": _sometimes(st.booleans()),
        "query": _sometimes(st.integers(-1, n)),
        "stage": _sometimes(st.sampled_from(["vectors", "scores", "scaled", "weights", "output"])),
        "title": _sometimes(texts),
        "description": _sometimes(texts),
        "extra": json_values,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            obj[key] = draw(strategy)
    for key in draw(st.sets(st.sampled_from(sorted(obj)), max_size=2)):
        if draw(st.booleans()):
            del obj[key]
    return obj


def _encode(value) -> bytes:
    # allow_nan: NaN/Infinity tokens reach the reader too; surrogates go out as \\ud800 escapes
    return json.dumps(value, allow_nan=True).encode("utf-8")


def check(data: bytes) -> None:
    """The property: a Scene that also saves and reloads, or one SessionFileError line."""
    try:
        scene, view = parse_bytes(data, "fuzz.qkv.json")
    except SessionFileError as exc:
        message = str(exc)
        assert message.startswith("fuzz.qkv.json: ") and "\n" not in message and len(message) < 400
        return
    assert isinstance(scene, Scene) and 0 <= view.query < scene.n
    for m in (scene.q, scene.k, scene.v, scene.x, scene.wq, scene.wk, scene.wv):
        assert m is None or all(math.isfinite(float(x)) for x in m.ravel())
    again, again_view = parse_bytes(dumps(scene, view).encode("utf-8"), "again")  # what loads must also save
    assert again.same_as(scene) and again_view == view


# ---- the tests ------------------------------------------------------------------------------------------
@FUZZ
@given(st.binary(max_size=3000))
@example(b"")
@example(b"\xef\xbb\xbf")
@example(b"\xff\xfe{\x00}\x00")
@example(b"[" * 100000)
@example(b'{"format": "qkv-studio-session", "version": 1, "tokens": ["a"], "Q": [[' + b"9" * 5000
         + b']], "K": [[1]], "V": [[1]]}')
@example(b'{"format": "qkv-studio-session", "version": ' + b"1" * 5000 + b'}')
def test_random_bytes(data):
    check(data)


@FUZZ
@given(json_values)
def test_random_json_documents(value):
    check(_encode(value))


@FUZZ
@given(session_objects())
@example({"format": "qkv-studio-session", "version": 1, "tokens": ["\ud800"], "Q": [[1]], "K": [[1]], "V": [[1]]})
@example({"format": "qkv-studio-session", "version": 1, "tokens": ["a"], "Q": [[1]], "K": [[1]], "V": [[1]],
          "title": "\udfff"})
def test_session_shaped_objects(obj):
    check(_encode(obj))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["flip", "insert", "delete", "truncate"]),
                          st.integers(0, len(GOOD_TEXT)), st.integers(0, 255)), min_size=1, max_size=8))
def test_damaged_good_files(edits):
    data = bytearray(GOOD_TEXT.encode("utf-8"))
    for op, pos, byte in edits:
        pos = min(pos, len(data))
        if op == "flip" and pos < len(data):
            data[pos] ^= byte or 1
        elif op == "insert":
            data[pos:pos] = bytes([byte])
        elif op == "delete" and pos < len(data):
            del data[pos]
        elif op == "truncate":
            del data[pos:]
    check(bytes(data))


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(GOOD)), json_values, min_size=1, max_size=3))
def test_one_field_of_a_good_file_replaced_by_anything(changes):
    obj = dict(GOOD, **changes)
    assume(obj != GOOD)
    check(_encode(obj))
