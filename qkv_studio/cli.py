"""The ``qkv-studio`` command (also ``python -m qkv_studio``).

::

    qkv-studio [FILE] [--preset NAME] [--presentation] [--deck FILE]     open the window
    qkv-studio export [FILE | --preset NAME] -o OUT [--head N] [--stage …] [--query …] [--mask …]
                      [--unscaled] [--width PX] [--theme NAME] [--colormap NAME]
    qkv-studio export --model NAME --text SENTENCE [--layer L] [--head H] -o OUT [options as above]
    qkv-studio screenshot [FILE | --preset NAME | --model NAME --text SENTENCE [--layer L]] -o OUT.png
                      [--head N] [--size WxH] [--stage …] [--query …] [--presentation] [--theme NAME]
                      [--panel explorer|heads|model|quiz …]

``--head`` always counts from 0: head N of a multi-head scene (a session file with ``"heads"``, such
as the multihead preset), or, with ``--model``, head H of the model's layer, as in transformers.
    qkv-studio presets                                                   list built-in scenes

``--model`` names an entry of the model registry (:mod:`qkv_studio.core.models.registry`; ``minilm``
first): its choices and the layer/head ranges in ``--help`` are read from it.

Exit codes: 0 success; 2 bad input (one line ``qkv-studio: error: …`` on stderr, no output file left
behind); 1 an internal error (also one line, never a traceback); 130 interrupted.

Qt is imported only by the commands that need it (the window, screenshots, image export), so
``presets`` and the CSV/JSON export run without PySide6 being loaded at all.
"""

from __future__ import annotations

import qkv_studio

qkv_studio._pause_gc_for_startup()  # before the heavy imports (see qkv_studio/__init__.py)

import argparse
import os
import re
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from qkv_studio import __version__
from qkv_studio.core.numbers import json_text, stage_csv
from qkv_studio.core.presets import list_presets, load_preset
from qkv_studio.core.scene import STAGES, Scene, SceneError
from qkv_studio.core.sessionfile import SessionFileError, atomic_write, read_session

PROG = "qkv-studio"
COMMANDS = ("export", "screenshot", "presets")
DEFAULT_PRESET = "lesson"
THEMES = ("light", "dark", "projector")
COLORMAPS = ("viridis", "cividis", "magma", "grayscale")
NUMBER_SUFFIXES = (".csv", ".json")
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
QKV_FILE_SUFFIXES = (".npz", ".safetensors")
WIDTH_RANGE = (100, 7680)
SIZE_RANGE = (200, 7680)
DEFAULT_SIZE = (1600, 900)
PANELS = ("explorer", "heads", "model", "quiz")
HEAD_HELP = ("head, counted from 0: of a multi-head scene (a file with \"heads\", e.g. --preset multihead) "
             "0 to heads-1, exporting that head's own Q, K, V columns; with --model {ranges} (default 0)")


class CliError(Exception):
    """A failure reported as one line ``qkv-studio: error: <message>`` with exit status ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and never exits the interpreter."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CliError(message, 2)


# ---- argument types ------------------------------------------------------------------------------------
def _head(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (heads are counted from 0), not {text!r}") from None


def _int_in(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number of pixels, not {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be {lo}–{hi} pixels, not {value}")
        return value

    return parse


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[x×X]\s*(\d+)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"size must look like 1600x900, not {text!r}")
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


def _add_model_options(p: argparse.ArgumentParser) -> None:
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
    model.add_argument("--layer", type=int, default=None, metavar="L",
                       help=_help_text(f"layer, 0-based: {layers} (default 0)"))


def _export_parser() -> _Parser:
    p = _Parser(prog=f"{PROG} export",
                description="Write a stage as an image (.png/.svg/.pdf) or the numbers (.csv/.json).")
    _add_source(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; its suffix picks the format: .png .svg .pdf .csv .json")
    _add_scene_options(p)
    _add_model_options(p)
    p.add_argument("--width", type=_int_in(*WIDTH_RANGE), metavar="PX",
                   help=f"image width in pixels ({WIDTH_RANGE[0]}–{WIDTH_RANGE[1]}); the height follows")
    p.add_argument("--theme", choices=THEMES, default="light", help="colours of the figure (default light)")
    p.add_argument("--colormap", choices=COLORMAPS, default="viridis",
                   help="colour map for weights (default viridis)")
    return p


def _screenshot_parser() -> _Parser:
    p = _Parser(prog=f"{PROG} screenshot", description="Render the window to a PNG without showing it.")
    _add_source(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.png", help="the PNG to write")
    p.add_argument("--size", type=_size, default=DEFAULT_SIZE, metavar="WxH",
                   help=f"window size (default {DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}; each {SIZE_RANGE[0]}–"
                        f"{SIZE_RANGE[1]})")
    _add_scene_options(p)
    p.add_argument("--presentation", action="store_true", help="presentation mode")
    p.add_argument("--theme", choices=THEMES, help="the window's theme")
    p.add_argument("--panel", action="append", choices=PANELS, default=None, metavar="PANEL",
                   help="open a panel of the View menu first (repeat for several): explorer (the √d_k explorer), "
                        "heads (multi-head), model (real model; implied by --model), quiz (Check yourself)")
    _add_model_options(p)
    return p


def _presets_parser() -> _Parser:
    return _Parser(prog=f"{PROG} presets", description="List the built-in scenes.")


# ---- scene preparation ---------------------------------------------------------------------------------
def _load(args: argparse.Namespace) -> tuple[Scene, str]:
    """The scene named by FILE or --preset (the lesson when neither) and its path ("" for a preset)."""
    if args.file is not None and args.preset is not None:
        raise CliError("give a FILE or --preset NAME, not both")
    if args.file is not None:
        return read_session(args.file), args.file
    return load_preset(args.preset if args.preset is not None else DEFAULT_PRESET), ""


def _model_scene(args: argparse.Namespace) -> Scene:
    """The head named by --model/--text/--layer/--head (0-based), computed with NumPy."""
    from qkv_studio.core.models import ModelInputError, ModelUnavailable, get_model

    if args.file is not None or args.preset is not None:
        raise CliError("give a FILE, --preset NAME or --model with --text, only one of them")
    if args.text is None:
        raise CliError("--model needs --text SENTENCE")
    try:
        run = get_model(args.model).run(args.text)
        return run.head_scene(0 if args.layer is None else args.layer, 0 if args.head is None else args.head)
    except (ModelInputError, ModelUnavailable) as exc:
        raise CliError(str(exc)) from None


def _prepare(args: argparse.Namespace) -> tuple[Scene, str, tuple[int, int] | None]:
    """Load (taking --head N of a multi-head scene), then apply --stage, --query, --mask and --unscaled.

    Returns the scene, its path ("" for a preset or the model) and (N, heads) when one head was taken.
    """
    head = None
    if getattr(args, "model", None) is not None:
        scene, path = _model_scene(args), ""
    elif _is_qkv_file(args):
        scene, path = _qkv_file_scene(args), ""
    elif any(getattr(args, name, None) is not None for name in ("text", "layer")):
        raise CliError(f"--text and --layer need --model {_model_names()}")
    else:
        scene, path = _load(args)
        if getattr(args, "head", None) is not None:
            head = (args.head, scene.heads)
            scene = _head_of(scene, args.head)
    if args.stage is not None:
        scene = scene.with_stage(args.stage)
    if args.query is not None:
        scene = scene.with_query(scene.find_token(args.query))
    if args.mask is not None:
        scene = scene.with_mask(args.mask)
    if args.unscaled:
        scene = scene.with_scale(False)
    return scene, path, head


def _is_qkv_file(args: argparse.Namespace) -> bool:
    """FILE is q, k, v from a model (core/models/qkv_file.py's SUFFIXES; named here so that opening a
    session file does not import the models)."""
    return (getattr(args, "preset", None) is None and args.file is not None
            and Path(args.file).suffix.lower() in QKV_FILE_SUFFIXES)


def _qkv_file_scene(args: argparse.Namespace) -> Scene:
    """One head of a Q/K/V file: --layer/--head (0-based), needed only when the file holds more than one.

    The file's model and the head are kept as ``args.qkv_head`` = (model, layer, head) for the figure's
    heading and the screenshot's model panel."""
    from qkv_studio.core.models import ModelInputError
    from qkv_studio.core.models.qkv_file import read_qkv_file

    if getattr(args, "text", None) is not None:
        raise CliError("--text is for --model: a Q/K/V file holds its own tokens")
    model = read_qkv_file(args.file)
    picked = []
    for what, value, count in (("layer", args.layer, model.n_layers), ("head", args.head, model.n_heads)):
        if value is None and count > 1:
            raise CliError(f"{args.file} holds {model.n_layers} layers × {model.n_heads} heads: give --layer L "
                           f"(0–{model.n_layers - 1}) and --head H (0–{model.n_heads - 1}), counted from 0")
        picked.append(0 if value is None else value)
    try:
        scene = model.run().head_scene(*picked)
    except ModelInputError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    args.qkv_head = (model, *picked)
    return scene


def _head_of(scene: Scene, head: int) -> Scene:
    """--head N of a multi-head scene: that head's own columns as a scene (N counted from 0)."""
    if scene.heads == 1:
        raise CliError(f"--head {head}: this scene has one head; --head needs a multi-head scene (a session file "
                       f"with \"heads\", e.g. --preset multihead) or --model {_model_names()}")
    if not 0 <= head < scene.heads:
        raise CliError(f"--head {head} is out of range: this scene has {scene.heads} heads, counted from 0 "
                       f"(0–{scene.heads - 1})")
    return scene.head_scene(head)


def _check_output(out: str, suffixes: Sequence[str]) -> Path:
    """Refuse an output name with the wrong suffix or in a folder that cannot take it, before any work."""
    p = Path(out)
    suffix = p.suffix.lower()
    if suffix not in suffixes:
        names = ", ".join(suffixes[:-1]) + (" or " if len(suffixes) > 1 else "") + suffixes[-1]
        raise CliError(f"cannot write {out!r}: the name must end in {names}")
    if p.is_dir():
        raise CliError(f"cannot write {out!r}: it is a folder")
    folder = p.parent if str(p.parent) else Path(".")
    if folder.exists() and not folder.is_dir():
        raise CliError(f"cannot write {out!r}: {str(folder)!r} is a file, not a folder")
    if not folder.is_dir():
        raise CliError(f"cannot write {out!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(f"cannot write {out!r}: permission denied")
    return p


def _os_message(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _run_foreign(write, out: Path, what: str) -> None:
    """Run an image writer; on failure report one line and remove a half-written new file."""
    existed = out.exists()
    try:
        write()
    except BaseException as exc:
        if not existed:
            try:
                out.unlink()
            except OSError:
                pass
        if isinstance(exc, OSError):
            # errno-style errors get the file name added; others already say what failed
            message = f"cannot write {str(out)!r}: {exc.strerror}" if exc.strerror else str(exc)
            raise CliError(message or f"cannot write {str(out)!r}") from None
        if isinstance(exc, ValueError):
            raise CliError(f"{what} failed: {exc}") from None
        raise


# ---- commands ------------------------------------------------------------------------------------------
def _cmd_window(argv: list[str]) -> int:
    args = _window_parser().parse_args(argv)
    model = None
    if _is_qkv_file(args):  # q, k, v from a model: the Real model panel pages through its layers and heads
        from qkv_studio.core.models.qkv_file import read_qkv_file, register

        source = register(read_qkv_file(args.file))
        scene, path, model = source.run().head_scene(0, 0), "", (source.name, source.text, 0, 0)
    else:
        scene, path = _load(args)
    if args.deck is not None and not Path(args.deck).is_file():
        raise CliError(f"{args.deck}: no such deck file")
    from qkv_studio.platform_check import check

    problem = check()  # Qt's own message for missing X11 libraries names no fix
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    try:
        from qkv_studio.app import run_gui
    except ImportError as exc:
        raise CliError(f"the window cannot start: {exc}", 1) from None
    extra = {} if model is None else {"model": model}
    return int(run_gui(scene, path, presentation=args.presentation, deck=args.deck, **extra) or 0)


def _cmd_export(argv: list[str]) -> int:
    args = _export_parser().parse_args(argv)
    out = _check_output(args.output, IMAGE_SUFFIXES + NUMBER_SUFFIXES)
    scene, _, head = _prepare(args)
    suffix = out.suffix.lower()
    if suffix in NUMBER_SUFFIXES:
        text = stage_csv(scene, scene.stage) if suffix == ".csv" else json_text(scene, head=head)
        try:
            atomic_write(out, text.encode("utf-8"))
        except OSError as exc:
            raise CliError(f"cannot write {args.output!r}: {_os_message(exc)}") from None
        return 0
    try:
        from qkv_studio.export.files import export_file
    except ImportError:
        raise CliError("image export is not available yet") from None
    from qkv_studio.render.figure import FigureOptions

    options = FigureOptions(stage=scene.stage, heading=_figure_heading(args, head))
    _run_foreign(lambda: export_file(scene, str(out), width=args.width, theme=args.theme,
                                     colormap=args.colormap, options=options), out, "export")
    return 0


def _figure_heading(args: argparse.Namespace, head: tuple[int, int] | None) -> str:
    """What an exported figure is of, when it is one head: "head 1 (of heads 0–1)" or the model's."""
    if getattr(args, "model", None):
        from qkv_studio.core.models import get_model

        layer = 0 if args.layer is None else args.layer
        return f"{get_model(args.model).title} layer {layer} head {0 if args.head is None else args.head}"
    if getattr(args, "qkv_head", None) is not None:
        source, layer, head_index = args.qkv_head
        return f"{source.title} layer {layer} head {head_index}"
    if head is not None:
        return f"head {head[0]} (of heads 0–{head[1] - 1})"
    return ""


def _cmd_screenshot(argv: list[str]) -> int:
    args = _screenshot_parser().parse_args(argv)
    out = _check_output(args.output, (".png",))
    scene, _, _ = _prepare(args)
    model = None
    if args.model is not None:  # the window in real-model mode: the panel runs the text and shows the head
        model = (args.model, args.text, 0 if args.layer is None else args.layer,
                 0 if args.head is None else args.head)
    elif getattr(args, "qkv_head", None) is not None:  # a Q/K/V file: the model panel shows it as a model
        from qkv_studio.core.models.qkv_file import register

        source, layer, head_index = args.qkv_head
        model = (register(source).name, source.text, layer, head_index)
    try:
        from qkv_studio.app import screenshot
    except ImportError:
        raise CliError("screenshots are not available yet") from None
    _run_foreign(lambda: screenshot(scene, str(out), size=args.size, presentation=args.presentation,
                                    theme=args.theme, panels=tuple(args.panel or ()), model=model),
                 out, "screenshot")
    return 0


def _cmd_presets(argv: list[str]) -> int:
    _presets_parser().parse_args(argv)
    presets = list_presets()
    width = max((len(p.name) for p in presets), default=0)
    for p in presets:
        print(f"{p.name:<{width}}  {p.description}")
    return 0


_DISPATCH = {"export": _cmd_export, "screenshot": _cmd_screenshot, "presets": _cmd_presets}


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "unknown error"


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in _DISPATCH:
            qkv_studio._resume_gc()  # the window resumes it itself, after its own imports
            return _DISPATCH[argv[0]](argv[1:])
        return _cmd_window(argv)
    except CliError as exc:
        return _fail(str(exc), exc.code)
    except (SessionFileError, SceneError) as exc:
        return _fail(str(exc), 2)
    except SystemExit as exc:  # --help / --version print, then argparse exits: turn it into a status
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:  # `qkv-studio presets | head -1`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, no traceback
        return _fail(f"unexpected {type(exc).__name__}: {exc}", 1)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
