"""Animating a causal model's generation (issue 22, item 1): each generated token's row appearing, one step
each, from ``qkv-studio export --model M --text … --generate N --animate generation -o x.gif|.apng|.mp4``.

A small fake generating model stands in for SmolLM2 (no weights needed): the toy causal model of
``tests/toy_model.py`` whose ``start(text)`` (the registry's generation protocol) appends fixed words.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageSequence

from qkv_studio.cli import main
from qkv_studio.core.models import registry
from qkv_studio.export import motion
from qkv_studio.export.files import export_file
from qkv_studio.export.timeline import MotionOptions, generation_timeline
from qkv_studio.render.figure import FigureOptions
from tests.toy_model import ToyCausal

WIDTH = 640
WORDS = ("on", "the", "mat", "today")


class _Words:
    """A toy :class:`~qkv_studio.core.models.registry.TokenGeneration`: each step appends the next of
    :data:`WORDS` (the whole toy run computed again: no cache, so ``reused`` stays 0)."""

    reused = 0

    def __init__(self, toy: ToyGenerator, text: str) -> None:
        self._toy, self._runs, self._undone = toy, [toy.run(text)], []
        self._prompt = self._runs[0].n

    @property
    def run(self):
        return self._runs[-1]

    @property
    def generated(self) -> int:
        return self.run.n - self._prompt

    def choices(self, k=5, *, temperature=0.0, top_k=0):
        return [(WORDS[self.generated % len(WORDS)], 1.0)]

    def compute(self, *, temperature=0.0, top_k=0, progress=None):
        return self._toy.run(f"{self.run.text} {self.choices()[0][0]}"), np.zeros(1)

    def append(self, run, logits):
        self._runs.append(run)
        return run

    def back(self):
        if len(self._runs) > 1:
            self._undone.append(self._runs.pop())
        return self.run

    def redo(self):
        if self._undone:
            self._runs.append(self._undone.pop())
        return self.run


class ToyGenerator(ToyCausal):
    """The toy causal model, able to generate: each step appends the next of :data:`WORDS`."""

    name = "toygen"
    title = "Toy generating LM"
    label = "ToyGen"

    def start(self, text: str, *, seed=0, progress=None) -> _Words:
        return _Words(self, text)


@pytest.fixture
def toygen(monkeypatch, qapp):
    model = ToyGenerator()
    monkeypatch.setitem(registry.MODELS, model.name, model)
    return model


def _frames(path) -> tuple[list[np.ndarray], list[int]]:
    with Image.open(path) as im:
        frames = [np.asarray(f.convert("RGB")).astype(int) for f in ImageSequence.Iterator(im)]
        im.seek(0)
        durations = []
        for f in ImageSequence.Iterator(im):
            durations.append(f.info["duration"])
    return frames, durations


def test_the_generation_timeline_is_the_prompt_then_a_token_per_step():
    frames = generation_timeline(MotionOptions(fps=10, hold=0.5, generated=3), "weights", 7)
    assert [f.tokens for f in frames] == [4, 5, 6, 7] and all(f.count == 5 and f.still for f in frames)
    for bad in (0, 7, 8):
        with pytest.raises(ValueError, match="needs a prompt"):
            generation_timeline(MotionOptions(generated=bad), "weights", 7)
    with pytest.raises(ValueError, match="whole number"):
        MotionOptions(generated=-1).validated()


def test_a_causal_prefix_is_the_same_rows_as_the_whole(toygen):
    scene = registry.generate(toygen, "the cat sat", 3).head_scene(1, 2)
    part = motion.prefix(scene, 4)
    assert part.tokens == scene.tokens[:4]
    np.testing.assert_allclose(part.result().weights, scene.result().weights[:4, :4], atol=1e-12)


def test_cli_animates_the_generation_row_by_row(toygen, tmp_path):
    out = tmp_path / "gen.apng"
    assert main(["export", "--model", "toygen", "--text", "the cat sat", "--generate", "3", "--layer", "1",
                 "--head", "2", "--animate", "generation", "--fps", "10", "--hold", "0.5", "--width", str(WIDTH),
                 "-o", str(out)]) == 0
    frames, durations = _frames(out)
    assert len(frames) == 4 and durations == [500] * 4  # the prompt, then one picture per generated token
    assert all(f.shape == (360, WIDTH, 3) for f in frames)
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False))
    with Image.open(out) as im:
        description = im.info["Description"]
    assert description.startswith("Generation, one token at a time (3 generated after 3 of the prompt)")
    assert "“mat”" in description
    # Each step is the still figure of the first tokens, the newest token's row outlined, the step named.
    scene = registry.generate(toygen, "the cat sat", 3).head_scene(1, 2)
    heading = "Toy generating LM layer 1 head 2"  # (the command line names the model by its title)
    rects = motion.generation_rects(scene, FigureOptions(heading=heading, query=2).validated(),
                                    motion.frame_size(WIDTH), 3)
    assert len({r[:2] for r in rects.values()}) == 1  # one top-left corner: the grid grows in place
    for k, frame in enumerate(frames):
        step, opts = motion.generation_step(scene, FigureOptions(heading=heading).validated(), 3 + k, 3)
        assert opts.query == 2 + k and step.n == 3 + k
        assert step.tokens[-1] == ("sat", *WORDS)[k]
        # (the step names the token as the figure labels it: the second "the" is "the·2")
        assert opts.heading == heading + " · " + ("the prompt" if k == 0 else
                                                  f"step {k} of 3: + “{step.token_label(2 + k)}”")
        x, y, w, h = rects[3 + k]
        still_path = tmp_path / f"still-{k}.png"
        export_file(step, still_path, width=w, options=opts)
        with Image.open(still_path) as im:
            still = np.asarray(im.convert("RGB")).astype(int)
        assert np.abs(frame[y:y + h, x:x + w] - still).max() <= 2  # (APNG: full colour, exact)


def test_the_generation_gif_and_mp4_have_a_picture_per_step(toygen, tmp_path):
    gif = tmp_path / "gen.gif"
    assert main(["export", "--model", "toygen", "--text", "the cat sat", "--generate", "2", "--animate",
                 "generation", "--fps", "10", "--hold", "1", "--width", str(WIDTH), "-o", str(gif)]) == 0
    frames, durations = _frames(gif)
    assert len(frames) == 3 and durations == [1000] * 3
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    mp4 = tmp_path / "gen.mp4"
    assert main(["export", "--model", "toygen", "--text", "the cat sat", "--generate", "2", "--animate",
                 "generation", "--fps", "10", "--hold", "1", "--width", str(WIDTH), "-o", str(mp4)]) == 0
    reader = imageio_ffmpeg.read_frames(str(mp4))
    meta = next(reader)
    count = sum(1 for _ in reader)
    assert meta["size"] == (WIDTH, 360) and count == 3 * 10  # 3 pictures held 1 s at 10 fps


def test_animate_generation_is_refused_clearly(toygen, tmp_path, capsys):
    out = tmp_path / "g.gif"
    cases = (
        (["--preset", "lesson", "--animate", "generation"], "--animate generation needs --model"),
        (["--model", "toygen", "--text", "a b", "--animate", "generation"], "--generate N"),
        (["--model", "toygen", "--text", "a b", "--generate", "2", "--animate", "generation", "--stages",
          "scores,weights"], "shows one stage"),
        (["--model", "toygen", "--text", "a b", "--generate", "2", "--animate", "sideways"], "invalid choice"),
    )
    for args, fragment in cases:
        assert main(["export", *args, "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert fragment in err and err.count("\n") == 1
    assert main(["export", "--model", "toygen", "--text", "a b", "--generate", "1", "--animate", "generation",
                 "-o", str(tmp_path / "g.png")]) == 2
    assert "--animate is for animations" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
