"""What a command reads: the scene from FILE, --preset, --model or a Q/K/V file, and the view options."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from qkv_studio.cli.errors import CliError, _brief, _os_message
from qkv_studio.cli.options import DEFAULT_PRESET, QKV_FILE_SUFFIXES, _model_names
from qkv_studio.core.presets import preset_document
from qkv_studio.core.safe_read import check_path_text
from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.sessionfile import read_session
from qkv_studio.core.view import View


# ---- scene preparation ---------------------------------------------------------------------------------
def _load(args: argparse.Namespace) -> tuple[Scene, View, str]:
    """The scene named by FILE or --preset (the lesson when neither), the view it opens with and its
    path ("" for a preset)."""
    if args.file is not None and args.preset is not None:
        raise CliError("give a FILE or --preset NAME, not both")
    if args.file is not None:
        _check_name("FILE", args.file)
        doc = read_session(args.file)
        args.session_document = doc  # (its notes and ink: --ink reads them here, not from a second read)
        return (*doc, args.file)
    return (*preset_document(args.preset if args.preset is not None else DEFAULT_PRESET), "")


def _model_scene(args: argparse.Namespace) -> Scene:
    """The head named by --model/--text/--layer/--head (0-based), computed with NumPy."""
    from qkv_studio.core.models import ModelInputError, ModelUnavailable, generate, generates, get_model

    if args.file is not None or args.preset is not None:
        raise CliError("give a FILE, --preset NAME or --model with --text, only one of them")
    if args.text is None:
        raise CliError("--model needs --text SENTENCE")
    _check_text("--text", args.text)
    steps = getattr(args, "generate", None)
    try:
        model = get_model(args.model)
        if steps is not None and not generates(model):
            raise CliError(f"--generate needs a model that generates (a causal one); {model.name} does not")
        run = model.run(args.text) if steps is None else generate(model, args.text, steps)
        args.model_run = run  # (--without-projections takes the layer's input from it)
        return run.head_scene(0 if args.layer is None else args.layer, 0 if args.head is None else args.head)
    except (ModelInputError, ModelUnavailable) as exc:
        raise CliError(str(exc)) from None


def _prepare(args: argparse.Namespace, *,
             keep_heads: bool = False) -> tuple[Scene, View, str, tuple[int, int] | None]:
    """Load (taking --head N of a multi-head scene), then apply --stage, --query, --mask and --unscaled.

    Returns the scene, the view (the file's query and stage, or --query's and --stage's), its path ("" for
    a preset or the model) and (N, heads) when one head was taken.  ``keep_heads`` (the window) keeps the
    whole multi-head scene and selects head N in the view instead: every view shows that head.
    """
    head = None
    if getattr(args, "model", None) is not None:
        scene, view, path = _model_scene(args), View(), ""
        if getattr(args, "generate", None):  # the newest token the query: it attends to every earlier key
            view = view.with_query(scene.n - 1)
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
            one = _head_of(scene, args.head)  # (checked, with the command line's messages)
            if keep_heads:
                view = view.with_head(args.head)
            else:
                scene = one
    if args.stage is not None:
        view = View(view.query, args.stage, view.head).check(scene)
    if args.query is not None:
        view = view.with_query(_find_query(scene, args.query))
    if args.mask is not None:
        scene = scene.with_mask(args.mask)
    if args.unscaled:
        scene = scene.with_scale(False)
    if getattr(args, "without_projections", False):
        args.with_projections = scene
        scene = _unprojected(args, scene)
    return scene, view, path, head


def _unprojected(args: argparse.Namespace, scene: Scene) -> Scene:
    """--without-projections: Q = K = V = X of a projection-mode scene, or of --model's layer input."""
    from qkv_studio.core.unprojected import NEEDS_PROJECTION, without_projections

    run = getattr(args, "model_run", None)
    if run is not None:
        from qkv_studio.core.models import ModelInputError

        try:
            bare = run.unprojected_scene(0 if args.layer is None else args.layer)
        except ModelInputError as exc:
            raise CliError(f"--without-projections: {exc}") from None
        return bare.with_scale(scene.scale) if bare.scale != scene.scale else bare
    if scene.mode != "projection":
        raise CliError(f"--without-projections {NEEDS_PROJECTION}; this scene gives Q, K and V directly")
    return without_projections(scene)


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
    for _what, value, count in (("layer", args.layer, model.n_layers), ("head", args.head, model.n_heads)):
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
