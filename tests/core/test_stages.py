"""The stage registry: one entry per stage, and every consumer reads it (nothing keeps its own list)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest

from qkv_studio.core import stages
from qkv_studio.core.stages import REGISTRY, StageSpec, shown_matrix, stage_spec
from tests.views import LESSON_VIEW


def test_the_public_names_are_derived_from_the_registry():
    import qkv_studio.core as core

    assert core.STAGES == tuple(s.name for s in REGISTRY) == ("vectors", "scores", "scaled", "weights", "output")
    assert core.STAGE_TITLES == {s.name: s.title for s in REGISTRY}
    assert core.STAGE_TITLES["scores"] == "Q·Kᵀ"


def test_entries_are_frozen_and_complete():
    for spec in REGISTRY:
        assert isinstance(spec, StageSpec)
        with pytest.raises(FrozenInstanceError):
            spec.name = "other"  # type: ignore[misc]
        assert spec.title and spec.button and spec.export_label and spec.formula and spec.columns
        assert callable(spec.caption)
        assert spec.matrix in (None, "scores", "scaled", "weights")
    assert stage_spec("weights").row_sums and not stage_spec("scores").row_sums
    with pytest.raises(ValueError, match="vectors, scores, scaled, weights, output"):
        stage_spec("blend")


def test_the_shown_matrix_and_the_result_agree(lesson_scene):
    r = lesson_scene.result()
    assert shown_matrix("vectors") == "scores"  # (a stage of vectors previews the next stage's matrix)
    assert shown_matrix("output") == "weights"
    for spec in REGISTRY:
        assert r.stage(spec.name) is getattr(r, shown_matrix(spec.name))


def test_every_consumer_lists_the_registry_stages():
    from qkv_studio.export.deck import DECK_STAGES
    from qkv_studio.ui.dialogs.export_dialog import STAGE_LABELS
    from qkv_studio.ui.panels.calc_table import APPEARS, COLUMNS, HEADERS
    from qkv_studio.ui.panels.heatmap_view import SHOWN_STAGE

    names = tuple(s.name for s in REGISTRY)
    assert DECK_STAGES == tuple(s.name for s in REGISTRY if s.in_deck) == ("scores", "scaled", "weights", "output")
    assert tuple(STAGE_LABELS) == names and STAGE_LABELS["weights"] == stage_spec("weights").export_label
    assert tuple(SHOWN_STAGE) == names
    assert COLUMNS == tuple(key for s in REGISTRY for key, _ in s.columns)
    assert HEADERS == {key: heading for s in REGISTRY for key, heading in s.columns}
    assert tuple(dict.fromkeys(APPEARS.values())) == names


def test_the_command_line_accepts_exactly_the_registry_stages(tmp_path, capsys):
    from qkv_studio.cli import main

    for spec in REGISTRY:
        out = tmp_path / f"{spec.name}.csv"
        assert main(["export", "--preset", "lesson", "-o", str(out), "--stage", spec.name]) == 0
        assert out.exists()
    capsys.readouterr()
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "x.csv"), "--stage", "blend"]) == 2
    err = capsys.readouterr().err
    assert "--stage" in err and all(repr(name) in err for name in stages.STAGES)


def test_the_signed_flag_picks_the_colour_scale_and_the_printing():
    from qkv_studio.render.colormaps import DIVERGING, is_signed, scale_for
    from qkv_studio.render.figure import format_value

    m = np.array([[-2.0, 1.0], [0.5, 0.25]])
    for spec in REGISTRY:
        assert is_signed(spec.name) is spec.signed
        sc = scale_for(spec.name, m)
        assert (sc.cmap == DIVERGING) is spec.signed
        assert sc.label == spec.wording.legend
    assert format_value(0.256, "weights") == "0.26" and format_value(0.256, "scores") == "0.256"


@pytest.fixture
def patched(monkeypatch):
    """Replace a registry entry (as adding or changing one does) for the duration of a test."""
    def patch(name: str, **changes) -> StageSpec:
        spec = replace(stage_spec(name), **changes)
        monkeypatch.setitem(stages._BY_NAME, name, spec)
        return spec

    return patch


def test_an_entry_drives_the_stepper(qtbot, lesson_scene, patched):
    from qkv_studio.state.session import Session
    from qkv_studio.ui.panels.stage_stepper import StageStepper

    patched("scores", button="DOT", formula="<i>dot formula</i>",
            caption=lambda scene, result, query: f"caption for {scene.token_label(query)}")
    session = Session(lesson_scene, view=LESSON_VIEW)
    stepper = StageStepper(session)
    qtbot.addWidget(stepper)
    assert stepper.stage_buttons["scores"].text() == "DOT"
    assert stepper.stage_buttons["weights"].text() == stage_spec("weights").button == "softmax"
    session.set_stage("scores")
    session.set_query(1)
    stepper._sync()
    assert stepper.stage_formula.text() == "<i>dot formula</i>"
    assert stepper.caption.text() == f"caption for {lesson_scene.token_label(1)}"
    assert "<span style='color:" in stepper.formula.text().split("softmax(")[1].split("&thinsp;")[0]


def test_an_entry_drives_the_heatmap_and_figure_titles(qtbot, lesson_scene, patched):
    from qkv_studio.render.figure import FigureOptions, figure_title
    from qkv_studio.state.session import Session
    from qkv_studio.ui.panels.heatmap_view import HeatmapView

    words = replace(stage_spec("weights").wording, heatmap="WEIGHTS ON SCREEN", figure="WEIGHTS IN PRINT",
                    meaning="what they mean", legend="the legend")
    patched("weights", wording=words)
    session = Session(lesson_scene, view=LESSON_VIEW)
    view = HeatmapView(session)
    qtbot.addWidget(view)
    session.set_stage("scores")
    session.set_stage("weights")
    session.flush()
    assert "WEIGHTS ON SCREEN" in view.title.text()
    title, meaning = figure_title(lesson_scene, FigureOptions(stage="weights"))
    assert title.startswith("WEIGHTS IN PRINT") and meaning.startswith("what they mean")


def test_the_unscaled_wording_replaces_the_scaled_stage_names(lesson_scene):
    from qkv_studio.render.figure import FigureOptions, figure_title, stage_scale

    off = lesson_scene.with_scale(False)
    spec = stage_spec("scaled")
    assert figure_title(off, FigureOptions(stage="scaled"))[0].startswith(spec.unscaled.figure)
    assert figure_title(lesson_scene, FigureOptions(stage="scaled"))[0].startswith(spec.wording.figure)
    assert stage_scale(off, FigureOptions(stage="scaled")).label == spec.unscaled.legend
    assert stage_spec("weights").words(False) is stage_spec("weights").wording


def test_the_window_offers_every_registry_stage_in_order(show_window, lesson_scene, patched):
    patched("scaled", button="DIVIDE")
    w = show_window(lesson_scene, view=LESSON_VIEW)
    assert list(w.stage_actions) == list(stages.STAGES)
    assert [a.text() for a in w.stage_actions.values()] == [stage_spec(n).button for n in stages.STAGES]
    assert w.stage_actions["scaled"].text() == "DIVIDE" == w.stepper.stage_buttons["scaled"].text()


def test_each_result_is_revealed_from_its_own_stage_on():
    from qkv_studio.core.stages import STAGES, reveals

    at = {"scores": "scores", "scaled": "scaled", "weights": "weights", "output": "output"}
    for what, stage in at.items():
        first = STAGES.index(stage)
        assert [reveals(s, what) for s in STAGES] == [i >= first for i in range(len(STAGES))], what
        assert all(reveals(s, what, all_stages=True) for s in STAGES)
    assert not reveals("vectors", "weights") and not reveals("scores", "output")
    with pytest.raises(ValueError, match="no stage reveals"):
        reveals("output", "colours")
    with pytest.raises(ValueError, match="unknown stage"):
        reveals("blend", "output")


def test_every_stage_carries_its_narration():
    # The speaker notes' formula in words and the alt text's words for the figure live in each StageSpec.
    from qkv_studio.core.describe import describe
    from qkv_studio.core.presets import load_preset

    scene = load_preset("lesson")
    spoken = set()
    for spec in REGISTRY:
        assert spec.spoken.endswith(".") and "<" not in spec.spoken and len(spec.spoken.split()) >= 8, spec.name
        spoken.add(spec.spoken)
        for scale in (True, False):
            wording = spec.words(scale)
            assert "{figure}" in wording.alt, spec.name
            shown = scene if scale else scene.with_scale(False)
            title = describe(shown, spec.name, 0).title
            said = wording.alt.format(figure=wording.figure, sqrt="√")
            assert title.lower().startswith(said.split("√")[0].lower()), (spec.name, title)
    assert len(spoken) == len(REGISTRY)  # each stage says its own


def test_the_alt_text_says_what_the_stage_registry_says():
    from qkv_studio.core.describe import describe
    from qkv_studio.core.presets import load_preset

    scene = load_preset("lesson")
    assert describe(scene, "vectors", 0).title.startswith("Query and key vectors, shown by their dot products (raw")
    assert describe(scene, "scaled", 0).title.startswith("Scaled scores Q·Kᵀ / √dₖ (divided by √dₖ = 1.41)")
    assert "(divided by" not in describe(scene.with_scale(False), "scaled", 0).title
    assert "its output is the blend" in describe(scene, "output", 2).text
    assert "its output is the blend" not in describe(scene, "weights", 2).text
