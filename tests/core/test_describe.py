"""Alt text written from a figure's numbers (core/describe.py): right for every stage, masks and long scenes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qkv_studio.core import STAGES, load_preset, preset_document
from qkv_studio.core.describe import TOP_KEYS, describe
from tests.views import LESSON_VIEW


def test_the_lesson_weights_read_as_the_issue_asks(lesson_scene):
    d = describe(lesson_scene, "weights", 2)
    assert d.text.startswith("Softmax weights for 4 tokens (the, cat, sat, mat); each row sums to 1; "
                             "the query 'sat' puts 0.54 on 'cat', 0.27 on 'mat', 0.13 on 'sat', 0.06 on 'the'")
    assert d.title == "Softmax weights · query 'sat'"
    assert str(d) == d.text and d.text.endswith(".")


def test_the_query_is_the_one_given_not_the_scenes(lesson_scene):
    assert LESSON_VIEW.query == 2  # (the lesson opens on 'sat')
    d = describe(lesson_scene, "weights", 0)
    w = lesson_scene.result().weights[0]
    assert "the query 'the' puts" in d.text
    top = int(np.argmax(w))
    assert f"{w[top]:.2f} on '{lesson_scene.tokens[top]}'" in d.text.split("puts", 1)[1][:20]


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_names_its_numbers(lesson_scene, stage):
    d = describe(lesson_scene, stage, 2)
    r = lesson_scene.result()
    if stage in ("vectors", "scores"):
        assert "Q·Kᵀ" in d.text and "the query 'sat' scores 4 with 'cat', 3 with 'mat'" in d.text
    elif stage == "scaled":
        assert "√dₖ = 1.41" in d.text and f"scores {r.scaled[2, 1]:.3g} with 'cat'" in d.text
    else:
        assert "each row sums to 1" in d.text and "0.54 on 'cat'" in d.text
    if stage == "output":
        out = r.output[2]
        assert "0.54·v(cat) + 0.27·v(mat)" in d.text and f"{out[0]:.3g}" in d.text
    # the extremes of the whole figure
    m = r.stage(stage)
    assert "the highest cell is" in d.text and "the lowest" in d.text
    hi = f"{m.max():.2f}" if stage in ("weights", "output") else f"{m.max():.3g}"
    assert f"highest cell is {hi} (query " in d.text


def test_a_causal_row_names_only_the_keys_it_sees_and_says_how_many_are_blocked():
    scene = load_preset("causal")
    d = describe(scene, "weights", 1)
    assert "causal mask" in d.text and "blocked cells are 0" in d.text
    row = d.text.split("the query 'dog' puts ", 1)[1].split(";")[0]
    named = re.findall(r"on '([^']+)'", row)
    assert sorted(named) == ["dog", "the"]  # the two keys it may see, nothing after it
    assert f"{scene.n - 2} keys are blocked for it" in d.text
    assert "−∞" in describe(scene, "scores", 1).text
    first = describe(scene, "output", 0).text
    assert "blend 1.00·v(the) =" in first  # no blocked key in the blend


def test_a_row_with_every_key_blocked_says_so():
    scene = load_preset("lesson")
    mask = np.zeros((4, 4), dtype=bool)
    mask[1, :] = True
    scene = scene.with_mask(mask)
    d = describe(scene, "weights", 1)
    assert "every key is blocked for the query 'cat', so its weights are all 0" in d.text
    assert "rows with every key blocked sum to 0" in d.text
    assert "custom mask" in d.text


def test_many_tokens_are_summarised():
    scene, view = preset_document("long")
    assert scene.n > 20
    d = describe(scene, "weights", view.query)
    assert f"for {scene.n} tokens (" in d.text and ", …, " in d.text.split(")")[0]
    row = d.text.split("puts ", 1)[1].split(";")[0]
    assert len(re.findall(r" on '", row)) == TOP_KEYS
    w = scene.result().weights[view.query]
    rest = np.sort(w)[:-TOP_KEYS].sum()
    assert f"its other {scene.n - TOP_KEYS} keys share {rest:.2f}" in d.text
    assert len(d.text) < 900
    scores = describe(scene, "scores", view.query).text
    s = scene.result().scores[view.query]
    lo = np.sort(s)[:-TOP_KEYS]
    assert f"its other {scene.n - TOP_KEYS} keys score" in scores
    assert f"{lo.min():.3g}".replace("-", "−") in scores


def test_a_heading_names_the_head_and_bad_input_is_a_value_error(lesson_scene):
    d = describe(lesson_scene, "scores", 2, heading="head 1 (of heads 0–1)")
    assert d.title.startswith("head 1 (of heads 0–1) · ") and d.text.startswith("head 1 (of heads 0–1): Raw scores")
    with pytest.raises(ValueError, match="unknown stage"):
        describe(lesson_scene, "softmax", 2)
    with pytest.raises(ValueError, match="out of range"):
        describe(lesson_scene, "weights", 4)


def test_describe_loads_no_qt():
    code = ("import sys\nfrom qkv_studio.core import load_preset\nfrom qkv_studio.core.describe import describe\n"
            "describe(load_preset('lesson'), 'weights', 2)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'PySide6', 'pyqtgraph', 'superqt'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
