"""Session files: every bad file refused with one clear line, exact round trips, atomic writes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from qkv_studio.core import (
    STAGES,
    Scene,
    SceneError,
    SessionDocument,
    SessionFileError,
    View,
    list_presets,
    load_preset,
    preset_document,
    read_session,
    sessionfile,
    write_session,
)
from qkv_studio.core.sessionfile import document_from_dict, dumps, parse_bytes, scene_from_dict, scene_to_dict

from .bad_files import BAD, BAD_IDS, GOOD, GOOD_TEXT


# ---- the corpus of bad files ---------------------------------------------------------------------------
@pytest.mark.parametrize("make,fragment", [(m, f) for _, m, f in BAD], ids=BAD_IDS)
def test_bad_file_is_refused_with_a_message_naming_file_and_problem(tmp_path, make, fragment):
    path = make(tmp_path)
    with pytest.raises(SessionFileError) as info:
        read_session(path)
    err = info.value
    message = str(err)
    assert message.startswith(f"{path}: "), message  # names the file …
    assert fragment in err.problem, message  # … and the problem
    assert "\n" not in message and len(message) < 300  # one readable line
    assert err.source == str(path)


def test_the_corpus_base_file_itself_is_valid(tmp_path):
    p = tmp_path / "good.qkv.json"
    p.write_text(GOOD_TEXT)
    s, view = read_session(p)
    assert s.tokens == ("the", "cat", "sat", "mat") and view.query == 2 and view.stage == "weights"
    assert [round(w, 2) for w in s.result().weights[2]] == [0.06, 0.54, 0.13, 0.27]


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(SessionFileError, match="no such file") as info:
        read_session(tmp_path / "nope.qkv.json")
    assert str(tmp_path / "nope.qkv.json") in str(info.value)
    with pytest.raises(SessionFileError, match="is a folder"):
        read_session(tmp_path)


def test_unreadable_file(tmp_path, monkeypatch):
    # Simulated: the tests run as root in CI, and root can read a chmod 0 file.
    import qkv_studio.core.safe_read as safe_read

    def denied(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    p = tmp_path / "secret.qkv.json"
    p.write_text(GOOD_TEXT)
    monkeypatch.setattr(safe_read, "_open_fd", denied)  # every file the app reads is opened there
    with pytest.raises(SessionFileError, match="permission denied") as info:
        read_session(p)
    assert str(p) in str(info.value)


def test_nothing_is_executed_reading_a_pickle(tmp_path):
    import pickle

    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self):
            return (Path.touch, (marker,))

    p = tmp_path / "evil.qkv.json"
    p.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(SessionFileError):
        read_session(p)
    assert not marker.exists()


def test_the_size_limit_is_checked_before_reading(tmp_path, monkeypatch):
    p = tmp_path / "big.qkv.json"
    with open(p, "wb") as fh:
        fh.truncate(sessionfile.MAX_BYTES + 1)
    opened = []

    def spy(*args, **kwargs):
        opened.append(args)
        raise AssertionError("the reader opened a file that is too large")

    import qkv_studio.core.safe_read as safe_read

    monkeypatch.setattr(safe_read, "_read_chunk", spy)  # every read of a file's bytes goes through it
    with pytest.raises(SessionFileError, match="larger than 64 MB"):
        read_session(p)
    assert opened == []
    monkeypatch.undo()
    small = tmp_path / "small.qkv.json"
    small.write_text(GOOD_TEXT)
    monkeypatch.setattr(safe_read, "_read_chunk", spy)
    with pytest.raises(AssertionError):  # the spy does see ordinary reads
        read_session(small)
    with pytest.raises(SessionFileError, match="larger than 64 MB"):
        parse_bytes(b" " * (sessionfile.MAX_BYTES + 1), "mem")


# ---- files that look odd but are valid -----------------------------------------------------------------
def test_brackets_and_escapes_inside_strings_do_not_count_as_nesting():
    obj = dict(GOOD, tokens=["[[[[[[[[[[", 'say "hi" \\ [[[[[[[[[[[', "{{{{{{{{{{", "]]]"], title="[" * 50)
    s = parse_bytes(json.dumps(obj).encode(), "odd").scene
    assert s.tokens[0] == "[" * 10 and s.tokens[1].startswith('say "hi"')


def test_nesting_limit_counts_only_real_brackets():
    deep = {"format": "qkv-studio-session", "version": 1, "extra": [[[[[[[[["x"]]]]]]]]]}
    with pytest.raises(SessionFileError, match="nested more than 8"):
        parse_bytes(json.dumps(deep).encode(), "deep")


def test_utf8_bom_unicode_tokens_and_unknown_fields_are_accepted():
    obj = dict(GOOD, tokens=["la", "chatte", "s'assit", "tapis·✓"], comment="a newer field", future={"a": 1})
    s = parse_bytes(b"\xef\xbb\xbf" + json.dumps(obj, ensure_ascii=False).encode(), "bom").scene
    assert s.tokens[3] == "tapis·✓"


def test_optional_fields_have_defaults():
    obj = {k: GOOD[k] for k in ("format", "version", "tokens", "Q", "K", "V")}
    s, view = document_from_dict(obj)
    assert (s.mask, s.scale, view.query, view.stage, s.title, s.description) == ("none", True, 0, "weights", "", "")
    assert scene_from_dict(obj).same_as(s)


def test_projection_file():
    obj = {"format": "qkv-studio-session", "version": 1, "tokens": ["a", "b"],
           "X": [[1, 0], [0, 1]], "Wq": [[1], [2]], "Wk": [[3], [4]], "Wv": [[1, 1], [0, 1]]}
    s = scene_from_dict(obj)
    assert s.mode == "projection"
    np.testing.assert_array_equal(s.qkv()[0], [[1], [2]])


def test_heads_and_wo():
    obj = dict(GOOD, heads=2, Wo=[[1, 0.5, 0], [0, 1, -2]])
    s = scene_from_dict(obj)
    assert s.heads == 2 and s.wo.tolist() == [[1, 0.5, 0], [0, 1, -2]]
    np.testing.assert_allclose(s.multihead().output, s.multihead().concat @ np.array(obj["Wo"]))
    assert scene_from_dict(dict(GOOD, heads=1)).same_as(scene_from_dict(GOOD))  # 1 is the default
    projected = {"format": "qkv-studio-session", "version": 1, "tokens": ["a", "b"], "X": [[1, 0], [0, 1]],
                 "Wq": [[1, 0], [2, 1]], "Wk": [[3, 1], [4, 0]], "Wv": [[1, 1], [0, 1]], "heads": 2, "Wo": [[2], [3]]}
    p = scene_from_dict(projected)
    assert p.mode == "projection" and p.heads == 2 and p.wo.shape == (2, 1)


# ---- round trips ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("heads,wo", [(1, None), (2, None), (1, [[1, 2, 3], [4, 5, 6]]), (2, [[0.1, 1e-300],
                                                                                               [-2.5, 7]])])
def test_heads_and_wo_round_trip_and_defaults_are_left_out(tmp_path, heads, wo):
    scene = scene_from_dict(dict(GOOD, heads=heads, **({} if wo is None else {"Wo": wo})))
    path = tmp_path / "multi.qkv.json"
    view = View(query=2)
    write_session(path, scene, view)
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert ("heads" in obj) == (heads != 1) and ("Wo" in obj) == (wo is not None)
    again, again_view = read_session(path)
    assert again.same_as(scene) and again.heads == heads and again_view == view
    if wo is not None:
        np.testing.assert_array_equal(again.wo, np.array(wo, dtype=float))
    assert dumps(again, again_view) == dumps(scene, view)


def test_the_multihead_preset_carries_its_heads_and_wo():
    s = load_preset("multihead")
    assert s.heads == 2 and s.wo.shape == (8, 8)
    assert s.multihead().output.shape == (6, 8)


@pytest.mark.parametrize("name", [p.name for p in list_presets()])
def test_every_preset_round_trips_exactly(tmp_path, name):
    scene, view = preset_document(name)
    path = tmp_path / f"{name}.qkv.json"
    write_session(path, scene, view)
    again, again_view = read_session(path)
    assert again.same_as(scene) and again_view == view
    assert dumps(again, again_view) == dumps(scene, view)
    for a, b in zip(again.qkv(), scene.qkv(), strict=False):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", [p.name for p in list_presets()])
def test_preset_files_are_in_the_writers_standard_layout(name):
    from qkv_studio.core.presets import preset_path

    assert preset_path(name).read_text(encoding="utf-8") == dumps(*preset_document(name))


FINITE = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.lists(st.text(st.characters(min_codepoint=32, blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8),
             min_size=n, max_size=n),
    hnp.arrays(np.float64, (n, 2), elements=FINITE),
    hnp.arrays(np.float64, (n, 2), elements=FINITE),
    hnp.arrays(np.float64, (n, 3), elements=FINITE),
    hnp.arrays(bool, (n, n)),
    st.integers(0, n - 1),
)), st.booleans(), st.sampled_from(STAGES))
def test_prop_any_scene_round_trips_exactly(args, scale, stage):
    tokens, q, k, v, mask, query = args
    scene = Scene.create(tokens, q=q, k=k, v=v, mask=mask, scale=scale, title="t", description="d")
    view = View(query, stage)
    again, again_view = parse_bytes(dumps(scene, view).encode("utf-8"), "mem")
    assert again.same_as(scene) and again_view == view
    assert np.array_equal(again.q, scene.q) and np.array_equal(again.v, scene.v)
    assert scene_to_dict(again, again_view) == scene_to_dict(scene, view)


def test_a_file_keeps_the_view_beside_the_scene(tmp_path):
    """The file format is unchanged: "query" and "stage" are written and read as the document's view."""
    scene = load_preset("lesson")
    path = tmp_path / "viewed.qkv.json"
    write_session(path, scene, View(query=3, stage="scaled"))
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert (obj["query"], obj["stage"]) == (3, "scaled")
    doc = read_session(path)
    assert isinstance(doc, SessionDocument) and doc.view == View(3, "scaled") and doc.scene.same_as(scene)
    assert not hasattr(doc.scene, "query") and not hasattr(doc.scene, "stage")
    with pytest.raises(SceneError, match="out of range"):  # a view that does not fit is never written
        write_session(path, scene, View(query=4))
    with pytest.raises(TypeError):  # (the old argument order)
        write_session(scene, path, View())
    assert read_session(path).view == View(3, "scaled")
    write_session(path, scene, View(3, "scaled", head=1))  # the selected head is not part of the format
    assert "head" not in json.loads(path.read_text(encoding="utf-8"))
    assert read_session(path).view == View(3, "scaled", head=0)


# ---- atomic writes -------------------------------------------------------------------------------------
def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("victim", ["fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch, victim):
    path = tmp_path / "mine.qkv.json"
    write_session(path, *preset_document("lesson"))
    before = path.read_bytes()

    def fail(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, victim, fail)
    with pytest.raises(SessionFileError, match="No space left on device") as info:
        write_session(path, *preset_document("long"))
    assert str(path) in str(info.value)
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.qkv.json"]


def test_an_interrupted_write_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "mine.qkv.json"

    def interrupt(*_a):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_session(path, *preset_document("lesson"))
    assert list(tmp_path.iterdir()) == []


def test_writing_into_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(SessionFileError, match="cannot be written"):
        write_session(tmp_path / "no" / "such" / "x.qkv.json", *preset_document("lesson"))
    assert list(tmp_path.iterdir()) == []


def test_writing_over_a_folder_is_refused_and_cleaned_up(tmp_path):
    (tmp_path / "dir.qkv.json").mkdir()
    with pytest.raises(SessionFileError, match="cannot be written"):
        write_session(tmp_path / "dir.qkv.json", *preset_document("lesson"))
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_written_files_get_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "new.qkv.json"
        write_session(path, *preset_document("lesson"))
        assert stat.S_IMODE(path.stat().st_mode) == 0o644  # not mkstemp's 0600
        path.chmod(0o640)
        write_session(path, *preset_document("causal"))
        assert stat.S_IMODE(path.stat().st_mode) == 0o640  # an existing file keeps its mode
    finally:
        os.umask(old)


def test_the_written_text_is_readable_json_with_one_row_per_line(tmp_path):
    path = tmp_path / "x.qkv.json"
    write_session(path, *preset_document("lesson"))
    text = path.read_text(encoding="utf-8")
    obj = json.loads(text)
    assert obj["format"] == "qkv-studio-session" and obj["version"] == 1
    assert "    [1, 2],\n" in text  # sat's query on its own line
    assert text.endswith("}\n")


def test_save_as_proposes_a_file_name_from_the_title_or_the_tokens():
    from qkv_studio.core import Scene
    from qkv_studio.core.sessionfile import suggested_file_name

    q = np.eye(2)
    assert suggested_file_name(Scene.create(("a", "b"), q=q, k=q, v=q, title="MiniLM layer 3 head 5")) == \
        "minilm-layer-3-head-5.qkv.json"
    assert suggested_file_name(Scene.create(("Café", "Über"), q=q, k=q, v=q, title="")) == "cafe-uber.qkv.json"
    assert suggested_file_name(Scene.create(("…", "?"), q=q, k=q, v=q, title="«»")) == "attention.qkv.json"
    long = suggested_file_name(Scene.create(("a", "b"), q=q, k=q, v=q, title="x" * 300))
    assert long == "x" * 60 + ".qkv.json"
