"""The command line's options: constants, argument types and the parser of each command.

A new option goes into the parser of its command here; its value is used in :mod:`qkv_studio.cli.commands`.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from qkv_studio import __version__
from qkv_studio.cli.errors import CliError, _brief, _Parser
from qkv_studio.core.stages import STAGES
from qkv_studio.ui import registry as panel_registry

if TYPE_CHECKING:
    from qkv_studio.export.formats import ExportFormat


PROG = "qkv-studio"


COMMANDS = ("export", "screenshot", "presets")


DEFAULT_PRESET = "lesson"


THEMES = ("light", "dark", "projector")


COLORMAPS = ("viridis", "cividis", "magma", "grayscale")


QKV_FILE_SUFFIXES = (".npz", ".safetensors")


WIDTH_RANGE = (100, 7680)


SIZE_RANGE = (200, 7680)


DEFAULT_SIZE = (1600, 900)


PANELS = panel_registry.cli_names()  # (the panel registry imports no Qt)


SLIDE_WIDTH = 1920  # --slide: a 1920×1080 slide unless --width says otherwise


ANIMATIONS = ("stages", "generation")  # --animate


MAX_GENERATE = 256  # --generate N: at ~0.1 s a token, a bound well before it feels like a hang


HEAD_HELP = ("head, counted from 0: of a multi-head scene (a file with \"heads\", e.g. --preset multihead) "
             "0 to heads-1 (export: that head's own Q, K, V columns; screenshot: the split with that head "
             "selected, shown by every view); with --model {ranges} (default 0)")


def _whole(text: str) -> int:
    """int(text), but a number too long for any index (or for Python's 4300-digit limit) is a ValueError."""
    if len(text.strip()) > 18:
        raise ValueError(text)
    return int(text)


def _head(text: str) -> int:
    try:
        return _whole(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (heads are counted from 0), not "
                                         f"'{_brief(text)}'") from None


def _layer(text: str) -> int:
    try:
        return _whole(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (layers are counted from 0), not "
                                         f"'{_brief(text)}'") from None


def _generate_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens, not {text!r}") from None
    if not 0 <= value <= MAX_GENERATE:
        raise argparse.ArgumentTypeError(f"must be 0–{MAX_GENERATE} tokens, not {value}")
    return value


def _int_in(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            value = _whole(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number of pixels, not '{_brief(text)}'") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be {lo}–{hi} pixels, not {value}")
        return value

    return parse


def _cell(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d{1,6})\s*,\s*(\d{1,6})\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"a cell is ROW,COL counted from 0 (e.g. 2,1), not '{_brief(text)}'")
    return int(m.group(1)), int(m.group(2))


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d{1,6})\s*[x×X]\s*(\d{1,6})\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"size must look like 1600x900, not '{_brief(text)}'")
    w, h = int(m.group(1)), int(m.group(2))
    lo, hi = SIZE_RANGE
    if not (lo <= w <= hi and lo <= h <= hi):
        raise argparse.ArgumentTypeError(f"width and height must each be {lo}–{hi} pixels, not {w}x{h}")
    return w, h


# ---- parsers -------------------------------------------------------------------------------------------
def _add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="a session file (*.qkv.json), or q, k, v captured from a model (.npz or .safetensors: "
                        "--layer and --head choose one head)")
    p.add_argument("--preset", metavar="NAME", help=f"a built-in scene (default {DEFAULT_PRESET}; see 'presets')")


def _add_scene_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stage", choices=STAGES, help="the stage to show")
    p.add_argument("--query", metavar="TOKEN|INDEX", help="the query token, by name or 0-based index")
    p.add_argument("--mask", choices=("none", "causal"), help="replace the scene's mask")
    p.add_argument("--unscaled", action="store_true", help="skip the division by √d_k")
    p.add_argument("--without-projections", action="store_true",
                   help="Q = K = V = X: the embeddings dotted directly (a projection-mode scene such as --preset "
                        "projection, or --model's layer input); numbers are that scene's, an image shows it "
                        "beside the learned projections")


def _window_parser() -> _Parser:
    p = _Parser(
        prog=PROG,
        description="QKV Studio: see, touch and show self-attention.",
        epilog="commands: 'qkv-studio export …', 'qkv-studio screenshot …', 'qkv-studio presets' "
               "(add --help to any of them)",
    )
    _add_source(p)
    p.add_argument("--presentation", action="store_true", help="start in presentation mode (projector)")
    p.add_argument("--deck", metavar="FILE", help="a slide deck to present")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    return p


def _registered_models() -> tuple:
    from qkv_studio.core.models.registry import models  # (NumPy only; nothing is loaded)

    return models()


def _model_names() -> str:
    """"minilm" or "minilm or smollm2": for messages about --model."""
    return " or ".join(m.name for m in _registered_models())


def _help_text(text: str) -> str:
    return text.replace("%", "%%")  # argparse %-formats help strings


def _add_model_options(p: argparse.ArgumentParser, *, generate: bool = False,
                       shown: str = "the export's tokens include them") -> None:
    entries = _registered_models()
    heads = ", ".join(f"{m.name} 0-{m.n_heads - 1}" for m in entries)
    layers = ", ".join(f"{m.name} 0-{m.n_layers - 1}" for m in entries)
    p.add_argument("--head", type=_head, default=None, metavar="N", help=_help_text(HEAD_HELP.format(ranges=heads)))
    about = "; ".join(
        f"{m.name}: {m.title}, {m.n_layers} layers x {m.n_heads} heads{', causal' if m.causal else ''}, "
        f"{m.description}{' (needs: ' + m.install_hint + ')' if m.install_hint else ''}" for m in entries)
    model = p.add_argument_group(
        "a real model's head",
        _help_text("instead of FILE or --preset: one attention head of a real model on your sentence; layers and "
                   f"heads are counted from 0, as in Hugging Face transformers. Models: {about}"))
    model.add_argument("--model", choices=tuple(m.name for m in entries),
                       help=_help_text("the model: " + ", ".join(f"{m.name} ({m.title})" for m in entries)))
    model.add_argument("--text", metavar="SENTENCE", help="the sentence to run (with --model)")
    model.add_argument("--layer", type=_layer, default=None, metavar="L",
                       help=_help_text(f"layer, 0-based: {layers} (default 0)"))
    if generate:
        from qkv_studio.core.models.registry import generates

        writers = ", ".join(m.name for m in entries if generates(m)) or "none"
        model.add_argument("--generate", type=_generate_count, default=None, metavar="N",
                           help=_help_text(f"append N greedy tokens to the text first (0–{MAX_GENERATE}; models "
                                           f"that generate: {writers}); {shown}"))


def _export_parser() -> _Parser:
    from qkv_studio.export import formats  # (the window's command does not wait for the export registry)

    figures, numbers = "/".join(formats.suffixes("figure")), "/".join(formats.suffixes("numbers"))
    pages = "/".join(formats.suffixes("page"))
    p = _Parser(prog=f"{PROG} export", description=f"Write a stage as an image ({figures}) or the numbers ({numbers}), "
                                                    f"or the scene as an interactive page ({pages}).")
    _add_source(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help=f"output file; its suffix picks the format: {' '.join(formats.suffixes())}")
    _add_scene_options(p)
    _add_model_options(p, generate=True)
    p.add_argument("--width", type=_int_in(*WIDTH_RANGE), metavar="PX",
                   help=f"image width in pixels ({WIDTH_RANGE[0]}–{WIDTH_RANGE[1]}); the height follows")
    p.add_argument("--theme", choices=THEMES, default="light", help="colours of the figure (default light)")
    p.add_argument("--colormap", choices=COLORMAPS, default="viridis",
                   help="colour map for weights (default viridis)")
    _add_motion_options(p)
    p.add_argument("--deck", metavar="FILE",
                   help="with -o NAME.html: a lecture deck's scenes, in order, as one interactive page")
    return p


# ---- animations and decks (-o x.gif|.apng|.mp4|.pptx, --slides) --------------------------------------------
def _fps(text: str) -> int:
    from qkv_studio.export.timeline import FPS_RANGE

    try:
        value = _whole(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of frames per second, not '{_brief(text)}'") from None
    if not FPS_RANGE[0] <= value <= FPS_RANGE[1]:
        raise argparse.ArgumentTypeError(f"must be {FPS_RANGE[0]}–{FPS_RANGE[1]} frames per second, not {value}")
    return value


def _hold(text: str) -> float:
    import math

    from qkv_studio.export.timeline import HOLD_RANGE

    try:
        value = float(text) if len(text.strip()) <= 18 else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and HOLD_RANGE[0] <= value <= HOLD_RANGE[1]):
        raise argparse.ArgumentTypeError(f"must be {HOLD_RANGE[0]:g}–{HOLD_RANGE[1]:g} seconds, not '{_brief(text)}'")
    return value


def _stages(text: str) -> tuple[str, ...]:
    from qkv_studio.export.timeline import parse_stages

    try:
        stages = parse_stages(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(set(stages)) != len(stages):
        raise argparse.ArgumentTypeError(f"name each stage once, not '{_brief(text)}'")
    return stages


def _add_motion_options(p: argparse.ArgumentParser) -> None:
    from qkv_studio.export import formats

    animated = "/".join(formats.suffixes("animation"))
    g = p.add_argument_group("animations and decks", f"for -o {animated} (the stages moving, as the window's "
                             "morph) and slide decks")
    g.add_argument("--fps", type=_fps, metavar="N", help="frames per second of an animation (default 30)")
    g.add_argument("--hold", type=_hold, metavar="S", help="seconds each stage is held still (default 1)")
    g.add_argument("--no-loop", action="store_true", help="a GIF/APNG plays once instead of looping")
    g.add_argument("--stages", type=_stages, metavar="A,B,…",
                   help=f"which stages, in order (default all: {','.join(STAGES)})")
    g.add_argument("--slides", action="store_true", help="with -o NAME.pdf: a multi-page PDF, one slide per stage")
    slide = "/".join(f.suffix for f in formats.formats() if "slide" in formats.pictures(f))
    g.add_argument("--slide", action="store_true",
                   help=f"with -o NAME{slide.replace('/', '|')}: the presentation slide as the audience sees it "
                        "(stage bar, formula, caption, the stage's view and the table) instead of the bare "
                        f"figure; --width sets the slide's width (default {SLIDE_WIDTH}), 16:9")
    g.add_argument("--ink", action="store_true",
                   help="with --slide, --slides or -o NAME.pptx: draw the file's ink (its 'ink' field) on the slide "
                        "where it was drawn; the pages of --slides and of a .pptx are then each stage's "
                        "presentation slide (as --slide draws it) with that stage's ink, --width its width "
                        f"(default {SLIDE_WIDTH})")
    g.add_argument("--animate", choices=ANIMATIONS, default=None,
                   help="what an animation shows: the stages one after another (default), or 'generation': "
                        "with --model and --generate N, each generated token's row appearing, step by step")


def _motion_job(args: argparse.Namespace, fmt: ExportFormat) -> dict:
    """The animation/deck options of ``export`` as export_file's keywords; refused for other formats."""
    from qkv_studio.export import formats

    given = [name for name, on in (("--fps", args.fps is not None), ("--hold", args.hold is not None),
                                   ("--no-loop", args.no_loop)) if on]
    if given and fmt.kind != "animation":
        raise CliError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for animations "
                       f"({formats.spelled(formats.suffixes('animation'))}), not {fmt.suffix}")
    if args.slides and fmt.suffix != ".pdf":
        raise CliError(f"--slides writes a multi-page PDF: the output must end in .pdf, not {fmt.suffix}")
    if args.slide and args.slides:
        raise CliError("give --slide (the slide of one stage) or --slides (a page per stage), not both")
    if args.slide and "slide" not in formats.pictures(fmt):
        having = [f.suffix for f in formats.formats() if "slide" in formats.pictures(f)]
        raise CliError(f"--slide writes a picture of the slide: the output must end in {formats.spelled(having)}, "
                       f"not {fmt.suffix}")
    if args.slide and args.stages is not None:
        raise CliError("--stages is for animations and decks; the slide shows one stage (--stage)")
    if args.ink and not (args.slide or args.slides or fmt.kind == "deck"):
        raise CliError(f"--ink draws the ink on the slide, where it was drawn: give --slide, --slides or "
                       f"-o NAME.pptx (the heatmap figure of {fmt.suffix} is laid out differently)")
    generation = args.animate == "generation"
    if args.animate is not None and fmt.kind != "animation":
        raise CliError(f"--animate is for animations ({formats.spelled(formats.suffixes('animation'))}), "
                       f"not {fmt.suffix}")
    if generation and not getattr(args, "generate", None):
        raise CliError("--animate generation needs --model with --text and --generate N (N ≥ 1): the steps to show")
    if generation and args.stages is not None:
        raise CliError("--animate generation shows one stage (--stage) at every step, not --stages")
    if args.stages is not None and fmt.kind not in ("animation", "deck") and not args.slides:
        raise CliError(f"--stages is for animations and decks "
                       f"({formats.spelled(formats.suffixes('animation') + formats.suffixes('deck'))}), "
                       f"not {fmt.suffix}; for one stage use --stage")
    if fmt.kind != "animation":
        return {"stages": args.stages} if fmt.kind == "deck" or args.slides else {}
    from qkv_studio.export.timeline import MotionOptions

    defaults = MotionOptions()
    motion = MotionOptions(fps=args.fps or defaults.fps, hold=defaults.hold if args.hold is None else args.hold,
                           loop=not args.no_loop, generated=args.generate if generation else 0)
    return {"stages": args.stages, "motion": motion}


def _screenshot_parser() -> _Parser:
    p = _Parser(prog=f"{PROG} screenshot", description="Render the window to a PNG without showing it.")
    _add_source(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.png", help="the PNG to write")
    p.add_argument("--size", type=_size, default=DEFAULT_SIZE, metavar="WxH",
                   help=f"window size (default {DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}; each {SIZE_RANGE[0]}–"
                        f"{SIZE_RANGE[1]})")
    _add_scene_options(p)
    p.add_argument("--presentation", action="store_true", help="presentation mode")
    p.add_argument("--presenter", action="store_true",
                   help="the presenter console (at --size) beside a slide of --slide-size, instead of the window")
    p.add_argument("--slide-size", type=_size, default=None, metavar="WxH",
                   help="with --presenter: the audience's slide (the projector; default 1920x1080)")
    p.add_argument("--ink", action="store_true", help="draw the file's ink (its 'ink' field) on the slide")
    p.add_argument("--theme", choices=THEMES, help="the window's theme")
    p.add_argument("--panel", action="append", choices=panel_registry.cli_names(), default=None, metavar="PANEL",
                   help="open a panel of the View menu first (repeat for several): " + ", ".join(
                       f"{s.cli_name} ({s.title})" for s in panel_registry.panels() if s.cli_name)
                        + "; model is implied by --model")
    p.add_argument("--cell", type=_cell, metavar="ROW,COL",
                   help="select that cell of Q·Kᵀ (0-based query row, key column; with --stage scores or scaled) "
                        "and work it out term by term, row · column")
    _add_model_options(p, generate=True, shown="the panel presses Next token N times, and the heatmap shows "
                                               "their rows")
    return p


def _presets_parser() -> _Parser:
    return _Parser(prog=f"{PROG} presets", description="List the built-in scenes.")
