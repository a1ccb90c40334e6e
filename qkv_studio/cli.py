"""The ``qkv-studio`` command (also ``python -m qkv_studio``).

::

    qkv-studio [FILE] [--preset NAME] [--presentation] [--deck FILE]     open the window
    qkv-studio export [FILE | --preset NAME] -o OUT [--head N] [--stage …] [--query …] [--mask …]
                      [--unscaled] [--width PX] [--theme NAME] [--colormap NAME]
    qkv-studio export --model NAME --text SENTENCE [--layer L] [--head H] [--generate N] -o OUT [options as above]
    qkv-studio screenshot [FILE | --preset NAME | --model NAME --text SENTENCE [--layer L]] -o OUT.png
                      [--head N] [--size WxH] [--stage …] [--query …] [--presentation] [--theme NAME]
                      [--panel explorer|heads|model|quiz …]

``--head`` always counts from 0: head N of a multi-head scene (a session file with ``"heads"``, such
as the multihead preset), or, with ``--model``, head H of the model's layer, as in transformers.
    qkv-studio presets                                                   list built-in scenes

``--model`` names an entry of the model registry (:mod:`qkv_studio.core.models.registry`; ``minilm``
first): its choices and the layer/head ranges in ``--help`` are read from it.  ``--generate N`` (export,
with a model that generates: a causal one) appends N greedy tokens to the text before the head is taken.

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
from qkv_studio.core.presets import list_presets, preset_document
from qkv_studio.core.safe_read import UnreadableFile, check_path_text
from qkv_studio.core.scene import STAGES, Scene, SceneError
from qkv_studio.core.sessionfile import SessionFileError, atomic_write, display_name, read_session
from qkv_studio.core.view import View
from qkv_studio.export import formats
from qkv_studio.ui import registry as panel_registry

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
MAX_GENERATE = 256  # --generate N: at ~0.1 s a token, a bound well before it feels like a hang
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
def _brief(text: str, limit: int = 40) -> str:
    """A user's string for a message: escaped where it cannot be printed, shortened when it is long."""
    shown = display_name(text) if text else text
    return shown if len(shown) <= limit else f"{shown[:limit - 12]}…({len(text)} characters)"


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


def _add_model_options(p: argparse.ArgumentParser, *, generate: bool = False) -> None:
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
        writers = ", ".join(m.name for m in entries if _generates(m)) or "none"
        model.add_argument("--generate", type=_generate_count, default=None, metavar="N",
                           help=_help_text(f"append N greedy tokens to the text first (0–{MAX_GENERATE}; models "
                                           f"that generate: {writers}); the export's tokens include them"))


def _generates(model) -> bool:
    """True for a registered model that can append tokens (a causal model with ``generate(text, steps)``)."""
    return bool(model.causal) and callable(getattr(model, "generate", None))


def _export_parser() -> _Parser:
    figures, numbers = "/".join(formats.suffixes("figure")), "/".join(formats.suffixes("numbers"))
    p = _Parser(prog=f"{PROG} export", description=f"Write a stage as an image ({figures}) or the numbers ({numbers}).")
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
    animated = "/".join(formats.suffixes("animation"))
    g = p.add_argument_group("animations and decks", f"for -o {animated} (the stages moving, as the window's "
                             "morph) and slide decks")
    g.add_argument("--fps", type=_fps, metavar="N", help="frames per second of an animation (default 30)")
    g.add_argument("--hold", type=_hold, metavar="S", help="seconds each stage is held still (default 1)")
    g.add_argument("--no-loop", action="store_true", help="a GIF/APNG plays once instead of looping")
    g.add_argument("--stages", type=_stages, metavar="A,B,…",
                   help=f"which stages, in order (default all: {','.join(STAGES)})")
    g.add_argument("--slides", action="store_true", help="with -o NAME.pdf: a multi-page PDF, one slide per stage")


def _motion_job(args: argparse.Namespace, fmt: formats.ExportFormat) -> dict:
    """The animation/deck options of ``export`` as export_file's keywords; refused for other formats."""
    given = [name for name, on in (("--fps", args.fps is not None), ("--hold", args.hold is not None),
                                   ("--no-loop", args.no_loop)) if on]
    if given and fmt.kind != "animation":
        raise CliError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for animations "
                       f"({formats.spelled(formats.suffixes('animation'))}), not {fmt.suffix}")
    if args.slides and fmt.suffix != ".pdf":
        raise CliError(f"--slides writes a multi-page PDF: the output must end in .pdf, not {fmt.suffix}")
    if args.stages is not None and fmt.kind not in ("animation", "deck") and not args.slides:
        raise CliError(f"--stages is for animations and decks "
                       f"({formats.spelled(formats.suffixes('animation') + formats.suffixes('deck'))}), "
                       f"not {fmt.suffix}; for one stage use --stage")
    if fmt.kind != "animation":
        return {"stages": args.stages} if fmt.kind == "deck" or args.slides else {}
    from qkv_studio.export.timeline import MotionOptions

    defaults = MotionOptions()
    motion = MotionOptions(fps=args.fps or defaults.fps, hold=defaults.hold if args.hold is None else args.hold,
                           loop=not args.no_loop)
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
    p.add_argument("--theme", choices=THEMES, help="the window's theme")
    p.add_argument("--panel", action="append", choices=panel_registry.cli_names(), default=None, metavar="PANEL",
                   help="open a panel of the View menu first (repeat for several): " + ", ".join(
                       f"{s.cli_name} ({s.title})" for s in panel_registry.panels() if s.cli_name)
                        + "; model is implied by --model")
    _add_model_options(p)
    return p


def _presets_parser() -> _Parser:
    return _Parser(prog=f"{PROG} presets", description="List the built-in scenes.")


# ---- scene preparation ---------------------------------------------------------------------------------
def _load(args: argparse.Namespace) -> tuple[Scene, View, str]:
    """The scene named by FILE or --preset (the lesson when neither), the view it opens with and its
    path ("" for a preset)."""
    if args.file is not None and args.preset is not None:
        raise CliError("give a FILE or --preset NAME, not both")
    if args.file is not None:
        _check_name("FILE", args.file)
        return (*read_session(args.file), args.file)
    return (*preset_document(args.preset if args.preset is not None else DEFAULT_PRESET), "")


def _model_scene(args: argparse.Namespace) -> Scene:
    """The head named by --model/--text/--layer/--head (0-based), computed with NumPy."""
    from qkv_studio.core.models import ModelInputError, ModelUnavailable, get_model

    if args.file is not None or args.preset is not None:
        raise CliError("give a FILE, --preset NAME or --model with --text, only one of them")
    if args.text is None:
        raise CliError("--model needs --text SENTENCE")
    _check_text("--text", args.text)
    steps = getattr(args, "generate", None)
    try:
        model = get_model(args.model)
        if steps is not None and not _generates(model):
            raise CliError(f"--generate needs a model that generates (a causal one); {model.name} does not")
        run = model.run(args.text) if steps is None else model.generate(args.text, steps)
        return run.head_scene(0 if args.layer is None else args.layer, 0 if args.head is None else args.head)
    except (ModelInputError, ModelUnavailable) as exc:
        raise CliError(str(exc)) from None


def _prepare(args: argparse.Namespace) -> tuple[Scene, View, str, tuple[int, int] | None]:
    """Load (taking --head N of a multi-head scene), then apply --stage, --query, --mask and --unscaled.

    Returns the scene, the view (the file's query and stage, or --query's and --stage's), its path ("" for
    a preset or the model) and (N, heads) when one head was taken.
    """
    head = None
    if getattr(args, "model", None) is not None:
        scene, view, path = _model_scene(args), View(), ""
    elif _is_qkv_file(args):
        scene, view, path = _qkv_file_scene(args), View(), ""
    elif any(getattr(args, name, None) is not None for name in ("text", "layer")):
        raise CliError(f"--text and --layer need --model {_model_names()}")
    elif getattr(args, "generate", None) is not None:
        raise CliError(f"--generate needs --model {_model_names()} and --text")
    else:
        scene, view, path = _load(args)
        if getattr(args, "head", None) is not None:
            head = (args.head, scene.heads)
            scene = _head_of(scene, args.head)
    if args.stage is not None:
        view = View(view.query, args.stage).check(scene)
    if args.query is not None:
        view = view.with_query(_find_query(scene, args.query))
    if args.mask is not None:
        scene = scene.with_mask(args.mask)
    if args.unscaled:
        scene = scene.with_scale(False)
    return scene, view, path, head


def _check_text(option: str, text: str) -> None:
    """A user's text (``--text``, ``--query``) must be real text: no NUL byte, nothing that is not UTF-8.

    Bytes that are not valid in the terminal's encoding reach Python as lone surrogates.
    """
    if "\x00" in text:
        raise CliError(f"{option} holds a NUL byte; give plain text")
    try:
        text.encode("utf-8")
    except UnicodeError:
        raise CliError(f"{option} '{_brief(text)}' is not valid UTF-8 text (check the terminal's encoding)") from None


def _check_name(what: str, name: str) -> None:
    """A file name the user gave must be one the system can take (no NUL byte, encodable)."""
    problem = check_path_text(name)
    if problem is not None:
        raise CliError(f"{what} '{_brief(name)}': {problem}")


def _find_query(scene: Scene, query: str) -> int:
    """--query by name or 0-based index; a number of thousands of digits is out of range, not a crash."""
    _check_text("--query", query)
    if re.fullmatch(r"\s*-?[0-9]+\s*", query) and len(query.strip().lstrip("-")) > 18 and query not in scene.tokens:
        raise CliError(f"--query {_brief(query)}: query index is out of range (0–{scene.n - 1})")
    try:
        return scene.find_token(query)
    except SceneError:
        raise
    except ValueError as exc:
        raise CliError(f"--query '{_brief(query)}': {exc}") from None


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


def _check_output(out: str, suffixes: Sequence[str], inputs: Sequence[str | None] = ()) -> Path:
    """Refuse an output name with the wrong suffix, in a folder that cannot take it, that is a symbolic
    link, or that is one of the command's ``inputs`` (same file, hard link or symlink), before any work."""
    _check_name("output", out)
    p = Path(out)
    suffix = p.suffix.lower()
    if suffix not in suffixes:
        raise CliError(f"cannot write '{_brief(out, 80)}': the name must end in {formats.spelled(suffixes)}")
    try:
        return _check_output_path(out, p, inputs)
    except OSError as exc:  # ENAMETOOLONG, ELOOP, EACCES … from the checks themselves
        raise CliError(f"cannot write '{_brief(out, 80)}': {_os_message(exc)}") from None


def _same_file(a: str, b: str) -> bool:
    """Whether two names reach the same file: one inode (hard link, symlink) or one resolved path."""
    try:
        sa, sb = os.stat(a), os.stat(b)
        if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
            return True
    except (OSError, ValueError):
        pass
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def _check_output_path(out: str, p: Path, inputs: Sequence[str | None]) -> Path:
    for source in inputs:
        if source is not None and _same_file(out, source):
            raise CliError(f"refusing to write '{_brief(out, 80)}': it is the input file '{_brief(source, 80)}' "
                           f"(writing would destroy it); choose another output name")
    if p.is_symlink():
        raise CliError(f"cannot write '{_brief(out, 80)}': it is a symbolic link (to '{_brief(os.readlink(p), 80)}'); "
                       "give the target's own name, or remove the link")
    if p.is_dir():
        raise CliError(f"cannot write {out!r}: it is a folder")
    folder = p.parent if str(p.parent) else Path(".")
    if folder.exists() and not folder.is_dir():
        raise CliError(f"cannot write {out!r}: {str(folder)!r} is a file, not a folder")
    if not folder.is_dir():
        raise CliError(f"cannot write {out!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(f"cannot write {out!r}: permission denied")
    if len(p.name.encode("utf-8", "surrogateescape")) > _name_max(folder):
        raise CliError(f"cannot write '{_brief(out, 80)}': the name is too long for the file system")
    return p


def _name_max(folder: Path) -> int:
    """The longest file name the folder's file system takes (the temporary file adds a few characters)."""
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    return max(1, limit - 20)


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
        scene, view, path, model = source.run().head_scene(0, 0), View(), "", (source.name, source.text, 0, 0)
    else:
        scene, view, path = _load(args)
    if args.deck is not None:
        _check_deck(args.deck)
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
    return int(run_gui(scene, path, presentation=args.presentation, deck=args.deck, view=view, **extra) or 0)


def _check_deck(deck: str) -> None:
    """The --deck file exists and is a regular file (the window reads it, never blocking on a FIFO)."""
    import stat

    _check_name("--deck", deck)
    try:
        st = os.stat(deck)
    except FileNotFoundError:
        raise CliError(f"{_brief(deck, 80)}: no such deck file") from None
    except OSError as exc:
        raise CliError(f"{_brief(deck, 80)}: the deck cannot be read ({_os_message(exc)})") from None
    if not stat.S_ISREG(st.st_mode):
        raise CliError(f"{_brief(deck, 80)}: " + ("is a folder" if stat.S_ISDIR(st.st_mode) else
                                               "is not a regular file (a pipe or a device?)") + ", not a deck file")


def _cmd_export(argv: list[str]) -> int:
    args = _export_parser().parse_args(argv)
    out = _check_output(args.output, formats.suffixes(), (args.file,))
    scene, view, _, head = _prepare(args)
    fmt = formats.get(out.suffix)
    extra = _motion_job(args, fmt)
    if fmt.kind == "numbers" and not fmt.needs_qt:  # written here, so Qt is never loaded
        data = fmt.write(formats.ExportJob(scene=scene, stage=view.stage, query=view.query, head=head))
        try:
            atomic_write(out, data)
        except OSError as exc:
            raise CliError(f"cannot write {args.output!r}: {_os_message(exc)}") from None
        return 0
    try:
        from qkv_studio.export.files import export_file
    except ImportError:
        raise CliError("image export is not available yet") from None
    from qkv_studio.render.figure import FigureOptions

    options = FigureOptions(stage=view.stage, query=view.query, heading=_figure_heading(args, head))
    if args.slides:
        from qkv_studio.export.figures import resolve_options
        from qkv_studio.export.slides import export_slides_pdf

        slide_options = resolve_options(scene, options, theme=args.theme, colormap=args.colormap)
        _run_foreign(lambda: export_slides_pdf(scene, out, options=slide_options, **extra), out, "export")
        return 0
    _run_foreign(lambda: export_file(scene, str(out), width=args.width, theme=args.theme,
                                     colormap=args.colormap, options=options, **extra), out, "export")
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
    out = _check_output(args.output, (".png",), (args.file,))
    scene, view, _, _ = _prepare(args)
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
                                    theme=args.theme, panels=tuple(args.panel or ()), model=model, view=view),
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
    except UnreadableFile as exc:
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
