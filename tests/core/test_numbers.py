"""CSV and JSON numbers: exactly compute()'s values, full precision, masked cells marked."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from qkv_studio.core import STAGES, load_preset, preset_document
from qkv_studio.core.numbers import all_stages_json, json_text, stage_csv

STAGE_MATRIX = {"vectors": "scores", "scores": "scores", "scaled": "scaled", "weights": "weights",
                "output": "weights"}


def _read_csv(text: str) -> tuple[list[str], list[str], np.ndarray]:
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    assert header[0] == ""
    return header[1:], [r[0] for r in body], np.array([[float(x) for x in r[1:]] for r in body])


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("preset", ["lesson", "causal", "padding", "saturation", "projection"])
def test_csv_is_the_stage_matrix_to_full_precision(preset, stage):
    scene = load_preset(preset)
    keys, queries, values = _read_csv(stage_csv(scene, stage))
    assert keys == list(scene.tokens) and queries == list(scene.tokens)
    expected = getattr(scene.result(), STAGE_MATRIX[stage])
    np.testing.assert_array_equal(values, expected)  # bit for bit, -inf included


def test_csv_of_the_lesson_weights():
    text = stage_csv(load_preset("lesson"), "weights")
    lines = text.splitlines()
    assert lines[0] == ",the,cat,sat,mat"
    sat = lines[3].split(",")
    assert sat[0] == "sat" and [round(float(x), 2) for x in sat[1:]] == [0.06, 0.54, 0.13, 0.27]
    assert len(sat[2]) > 12  # not rounded for display
    assert text.endswith("\n") and "\r" not in text


def test_csv_marks_masked_scores_minus_inf_and_takes_the_stage_from_the_caller():
    scene = load_preset("causal")
    with pytest.raises(TypeError):  # (a Scene has no stage to default to: the view says which)
        stage_csv(scene)
    text = stage_csv(scene, "scores")
    first = text.splitlines()[1].split(",")
    assert first[2:] == ["-inf"] * (scene.n - 1)
    assert math.isinf(float(first[2]))


def test_csv_quotes_awkward_token_names():
    scene = load_preset("lesson").rename_token(1, 'c,a"t')
    keys, queries, _ = _read_csv(stage_csv(scene, "weights"))
    assert keys[1] == 'c,a"t' and queries[1] == 'c,a"t'


def test_csv_refuses_an_unknown_stage():
    with pytest.raises(ValueError, match="unknown stage"):
        stage_csv(load_preset("lesson"), "blend")


@pytest.mark.parametrize("preset", ["lesson", "causal", "padding", "projection", "long"])
def test_json_holds_every_stage_exactly(preset):
    scene, view = preset_document(preset)
    obj = json.loads(json_text(scene, query=view.query, stage=view.stage))
    r = scene.result()
    assert obj["tokens"] == list(scene.tokens)
    for name in ("weights", "output"):
        np.testing.assert_array_equal(np.array(obj[name], dtype=float), getattr(r, name))
    for name in ("scores", "scaled"):
        got = np.array([[-np.inf if x is None else x for x in row] for row in obj[name]], dtype=float)
        np.testing.assert_array_equal(got, getattr(r, name))
    for name, m in zip("QKV", scene.qkv(), strict=False):
        np.testing.assert_array_equal(np.array(obj[name], dtype=float), m)
    assert obj["query"] == {"index": view.query, "token": scene.tokens[view.query]}
    assert obj["stage"] == view.stage and obj["scale"] == scene.scale
    assert obj["d_k"] == scene.d_k and obj["d_v"] == scene.d_v
    assert obj == json.loads(json.dumps(all_stages_json(scene, query=view.query, stage=view.stage)))
    other = all_stages_json(scene, query=1, stage="scaled")  # the view is the caller's, not the scene's
    assert other["query"] == {"index": 1, "token": scene.tokens[1]} and other["stage"] == "scaled"
    with pytest.raises(ValueError, match="out of range"):
        all_stages_json(scene, query=scene.n, stage="weights")


def test_json_masked_scores_are_null_and_the_mask_is_recorded():
    obj = all_stages_json(load_preset("padding"), query=0, stage="weights")
    assert all(row[-2:] == [None, None] for row in obj["scores"])
    assert all(row[-2:] == [0.0, 0.0] for row in obj["weights"])
    assert obj["mask"][0] == [False, False, False, False, True, True]
    assert all_stages_json(load_preset("causal"), query=0, stage="weights")["mask"] == "causal"
    assert obj["fully_masked"] == []


def test_json_is_strict_and_unscaled_is_recorded():
    text = json_text(load_preset("causal").with_scale(False), query=0, stage="weights")
    assert "Infinity" not in text and "NaN" not in text
    obj = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    assert obj["scale"] is False and obj["scaled"][3][:4] == obj["scores"][3][:4]


def test_json_lists_fully_masked_rows():
    scene = load_preset("lesson").toggle_blocked(1, 0)
    for j in (1, 2, 3):
        scene = scene.toggle_blocked(1, j)
    obj = all_stages_json(scene, query=0, stage="weights")
    assert obj["fully_masked"] == [1] and obj["weights"][1] == [0.0] * 4


def test_the_numbers_json_has_every_result_the_stages_reveal():
    from qkv_studio.core.stages import RESULTS

    scene = load_preset("lesson")
    obj = all_stages_json(scene, query=2, stage="weights")
    r = scene.result()
    for name in RESULTS:
        got = np.array([[np.nan if x is None else x for x in row] for row in obj[name]], dtype=float)
        want = np.where(np.isinf(getattr(r, name)), np.nan, getattr(r, name))
        np.testing.assert_allclose(got, want, equal_nan=True)
