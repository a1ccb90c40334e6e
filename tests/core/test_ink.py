"""The lecture's annotations (Qt-free): ink strokes per stage, notes, their JSON in session and deck files
and the lecture's stopwatch."""

from __future__ import annotations

import json

import pytest

from qkv_studio.core import load_preset, read_session, write_session
from qkv_studio.core.deck import read_deck, write_deck
from qkv_studio.core.ink import (
    EMPTY_INK,
    Notes,
    Stroke,
    ink_from_json,
    ink_to_json,
    notes_from_json,
    notes_to_json,
    stroke,
)
from qkv_studio.core.sessionfile import SessionFileError, dumps, parse_bytes, scene_to_dict
from qkv_studio.core.stopwatch import Stopwatch, clock_text
from qkv_studio.core.view import View


def test_ink_is_kept_per_stage_and_every_change_is_a_new_ink():
    line = stroke([(0.1, 0.1, 1), (0.5, 0.1, 1)], colour=2)
    ink = EMPTY_INK.with_stroke("scores", line)
    assert ink.strokes("scores") == (line,) and ink.strokes("weights") == ()
    assert EMPTY_INK.strokes("scores") == ()  # (the old one is unchanged: an undo step is before/after)
    both = ink.with_stroke("weights", stroke([(0.2, 0.8, 0.5)]))
    assert len(both.strokes("weights")) == 1 and both.strokes("scores") == (line,)
    assert not both.cleared("weights").strokes("weights") and both.cleared("weights").strokes("scores")


def test_the_eraser_takes_the_strokes_it_touches_only():
    a = stroke([(0.1, 0.1, 1), (0.9, 0.1, 1)])
    b = stroke([(0.1, 0.9, 1), (0.9, 0.9, 1)])
    ink = EMPTY_INK.with_stroke("scores", a).with_stroke("scores", b)
    assert ink.erased_at("scores", 0.5, 0.5) is ink  # (touches nothing: the same Ink, no undo step)
    assert ink.erased_at("scores", 0.5, 0.105).strokes("scores") == (b,)  # (near the segment, not a point)
    assert Stroke(((0.3, 0.3, 1.0),)).near(0.305, 0.3, 0.01)


def test_points_are_clamped_into_the_slide():
    s = stroke([(-0.5, 1.5, 2.0)], colour=3)
    assert s.points == ((0.0, 1.0, 1.0),) and s.colour == 3


def test_ink_and_notes_round_trip_through_json():
    ink = EMPTY_INK.with_stroke("weights", stroke([(0.12345678, 0.5, 0.75), (0.2, 0.6, 1)], 4, 0.006))
    back = ink_from_json(json.loads(json.dumps(ink_to_json(ink))))
    assert back.strokes("weights")[0].points[0] == (0.1235, 0.5, 0.75)
    assert back.strokes("weights")[0].colour == 4 and back.strokes("weights")[0].width == 0.006
    assert ink_to_json(EMPTY_INK) is None and notes_to_json(Notes()) is None
    assert notes_from_json("Ask first").for_stage("scores") == "Ask first"
    per = notes_from_json({"scores": "dot products", "weights": "rows sum to 1"})
    assert per.for_stage("weights") == "rows sum to 1" and per.for_stage("output") == ""
    assert notes_from_json(notes_to_json(per)) == per
    mixed = Notes(text="all", stages={"scores": "own"})  # (the text for every stage without its own)
    again = notes_from_json(notes_to_json(mixed))
    assert again.for_stage("scores") == "own" and again.for_stage("output") == "all"


@pytest.mark.parametrize("value,words", [
    ({"nope": []}, "unknown stage"),
    ({"scores": [{"points": [[0.1, 2.0]]}]}, "between 0 and 1"),
    ({"scores": [{"points": []}]}, "non-empty"),
    ({"scores": [{"points": [[0.1, 0.1]], "colour": 9}]}, "'colour' must be 1–4"),
    ({"scores": [{"points": [[0.1, 0.1]], "pen": 1}]}, "unknown field"),
    ({"scores": [{"points": [[0.1, "x"]]}]}, "finite number"),
    ([1, 2], "must be an object"),
])
def test_bad_ink_is_refused_with_its_place(value, words):
    with pytest.raises(ValueError, match=words):
        ink_from_json(value)


def test_bad_notes_are_refused():
    with pytest.raises(ValueError, match="must be text"):
        notes_from_json(3)
    with pytest.raises(ValueError, match="unknown stage"):
        notes_from_json({"softmax": "x"})


def test_a_session_file_keeps_its_notes_and_ink_and_an_old_file_reads_as_before(tmp_path):
    scene = load_preset("lesson")
    ink = EMPTY_INK.with_stroke("scaled", stroke([(0.3, 0.3, 1), (0.4, 0.5, 1)], 2))
    notes = Notes(stages={"scaled": "Why √dₖ?"})
    path = tmp_path / "talk.qkv.json"
    write_session(path, scene, View(stage="scaled"), notes=notes, ink=ink)
    doc = read_session(path)
    s, v = doc  # (still a pair for every caller)
    assert v.stage == "scaled" and s.same_as(scene)
    assert doc.notes == notes and doc.ink.strokes("scaled")[0].colour == 2
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert obj["notes"] == {"scaled": "Why √dₖ?"} and list(obj["ink"]) == ["scaled"]
    # without annotations nothing new is written, and a file without them has none
    plain = scene_to_dict(scene, View())
    assert "notes" not in plain and "ink" not in plain
    old = parse_bytes(dumps(scene, View()).encode("utf-8"))
    assert old.notes == Notes() and old.ink == EMPTY_INK


def test_a_session_file_with_bad_ink_is_refused_naming_the_file():
    obj = scene_to_dict(load_preset("lesson"), View())
    obj["ink"] = {"weights": [{"points": [[0.5, 7]]}]}
    with pytest.raises(SessionFileError, match=r"talk\.qkv\.json: ink stroke 1 of stage 'weights', point 1"):
        parse_bytes(json.dumps(obj).encode(), "talk.qkv.json")


def test_deck_entries_may_carry_notes_and_old_decks_read_as_before(tmp_path):
    scene_file = tmp_path / "one.qkv.json"
    write_session(scene_file, load_preset("lesson"), View(), notes=Notes("from the file"))
    deck = tmp_path / "talk.deck.json"
    write_deck(["preset:lesson", "one.qkv.json", "one.qkv.json"], deck, [Notes("first"), None, Notes("own")])
    d = read_deck(deck)
    assert d.entries == ("preset:lesson", "one.qkv.json", "one.qkv.json")
    assert [d.notes_of(i).for_stage("scores") for i in range(3)] == ["first", "from the file", "own"]
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1, "scenes": ["preset:causal"]}))
    assert read_deck(deck).notes_of(0) == Notes()
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1,
                                "scenes": [{"scene": "preset:lesson", "notes": 5}]}))
    with pytest.raises(SessionFileError, match="scene 1: 'notes' must be text"):
        read_deck(deck)
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1,
                                "scenes": [{"scene": "preset:lesson", "slide": 2}]}))
    with pytest.raises(SessionFileError, match="unknown field 'slide'"):
        read_deck(deck)


def test_the_stopwatch_counts_pauses_and_resets_on_its_clock():
    now = [100.0]
    watch = Stopwatch(clock=lambda: now[0])
    assert watch.elapsed() == 0 and not watch.running
    watch.start()
    now[0] += 65
    assert watch.elapsed() == 65 and clock_text(watch.elapsed()) == "1:05"
    watch.pause()
    now[0] += 100
    assert watch.elapsed() == 65
    assert watch.toggle() is True
    now[0] += 3600
    assert clock_text(watch.elapsed()) == "1:01:05"
    watch.reset()
    now[0] += 2
    assert watch.elapsed() == 2 and watch.running
