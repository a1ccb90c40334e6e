"""The commands: open the window, ``export``, ``screenshot``, ``presets``; each parses, reads, writes."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TypedDict

from qkv_studio.cli.errors import CliError, _os_message
from qkv_studio.cli.inputs import _check_deck, _is_qkv_file, _load, _prepare
from qkv_studio.cli.options import _export_parser, _motion_job, _presets_parser, _screenshot_parser, _window_parser
from qkv_studio.core.presets import list_presets
from qkv_studio.core.sessionfile import atomic_write
from qkv_studio.core.view import View

if TYPE_CHECKING:
    from qkv_studio.app import ModelHead
    from qkv_studio.core.ink import Ink, Notes


# ---- commands ------------------------------------------------------------------------------------------
def cmd_window(argv: list[str]) -> int:
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


def _cmd_export(argv: list[str]) -> int:
    from qkv_studio.cli.outputs import _check_output, _export_format, _run_foreign
    from qkv_studio.export import formats

    args = _export_parser().parse_args(argv)
    out = _check_output(args.output, formats.suffixes(), (args.file, args.deck))
    if args.deck is not None:
        return _export_deck_page(args, out)
    scene, view, _, head = _prepare(args)
    fmt = _export_format(out)
    extra = _motion_job(args, fmt)
    if not fmt.needs_qt:  # numbers, the interactive page: written here, so Qt is never loaded
        try:
            data = fmt.write(formats.ExportJob(scene=scene, stage=view.stage, query=view.query, head=head))
        except ValueError as exc:
            raise CliError(f"cannot write {args.output!r}: {exc}") from None
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

    ink = _annotations(args)[1] if args.ink else None  # (None: no ink asked for)
    options = FigureOptions(stage=view.stage, query=view.query, heading=_figure_heading(args, head))
    if getattr(args, "with_projections", None) is not None and fmt.kind == "figure":
        from dataclasses import replace

        from qkv_studio.core.unprojected import WITH_HEADING, WITHOUT_HEADING

        options = replace(options, heading=WITHOUT_HEADING, compare_with=args.with_projections,
                          compare_heading=options.heading or WITH_HEADING)
    if args.slides:
        from qkv_studio.export.figures import resolve_options
        from qkv_studio.export.slides import export_slides_pdf

        slide_options = resolve_options(scene, options, theme=args.theme, colormap=args.colormap)
        if ink is not None:  # (each page the stage's presentation slide with its ink)
            _run_foreign(lambda: _with_slides(scene, view, args, lambda compose: export_slides_pdf(
                scene, out, options=slide_options, ink=ink, compose=compose, **extra)), out, "export")
            return 0
        _run_foreign(lambda: export_slides_pdf(scene, out, options=slide_options, **extra), out, "export")
        return 0
    if args.slide:
        _run_foreign(lambda: _export_slide(scene, view, out, args, options, ink), out, "export")
        return 0
    if ink is not None:  # a .pptx with ink: each slide the stage's presentation slide
        _run_foreign(lambda: _with_slides(scene, view, args, lambda compose: export_file(
            scene, str(out), width=args.width, theme=args.theme, colormap=args.colormap, options=options,
            ink=ink, compose=compose, **extra)), out, "export")
        return 0
    _run_foreign(lambda: export_file(scene, str(out), width=args.width, theme=args.theme,
                                     colormap=args.colormap, options=options, **extra), out, "export")
    return 0


def _export_deck_page(args: argparse.Namespace, out) -> int:
    """``--deck FILE -o NAME.html``: the lecture's scenes in order, as one interactive page."""
    from qkv_studio.core.deck import read_deck
    from qkv_studio.export import formats
    from qkv_studio.export.page import page_bytes

    fmt = formats.get(out.suffix)
    if fmt is None or fmt.kind != "page":
        raise CliError(f"--deck is for the interactive page: -o NAME{formats.spelled(formats.suffixes('page'))} "
                       f"(each scene of a deck as it opens, one page)")
    if args.file is not None or args.preset is not None or getattr(args, "model", None) is not None:
        raise CliError("give --deck FILE or a scene (FILE, --preset, --model), not both")
    given = [f"--{name}" for name in ("stage", "query", "mask") if getattr(args, name) is not None]
    if args.unscaled:
        given.append("--unscaled")
    if given:
        raise CliError(f"{', '.join(given)} cannot go with --deck: each scene of a deck opens as its file says")
    _check_deck(args.deck)
    deck = read_deck(args.deck)
    documents = [deck.document(i) for i in range(len(deck))]
    from pathlib import Path

    try:
        data = page_bytes([(doc.scene, doc.view) for doc in documents], title=Path(args.deck).stem)
    except ValueError as exc:
        raise CliError(f"cannot write {args.output!r}: {exc}") from None
    try:
        atomic_write(out, data)
    except OSError as exc:
        raise CliError(f"cannot write {args.output!r}: {_os_message(exc)}") from None
    return 0


def _with_slides(scene, view: View, args: argparse.Namespace, write) -> None:
    """Run ``write(compose)`` with ``compose(stage)`` the window's presentation slide of ``stage`` (the view's
    query), composed offscreen at --width × 9/16 (default 1920 × 1080)."""
    import os

    from qkv_studio.app import _quiet_harmless_qt_messages, ensure_qapp
    from qkv_studio.cli.options import SLIDE_WIDTH
    from qkv_studio.ui.window.slide_picture import SlideComposer

    ensure_qapp(offscreen_if_headless=True)
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        _quiet_harmless_qt_messages()  # (as a screenshot does: the offscreen platform's size hints)
    width = args.width or SLIDE_WIDTH
    composer = SlideComposer()
    try:
        write(lambda stage: composer.compose(scene, view.with_stage(stage), size=(width, round(width * 9 / 16)),
                                             theme=args.theme, colormap=args.colormap))
    finally:
        composer.close()


def _export_slide(scene, view: View, out, args: argparse.Namespace, options, ink=None) -> None:
    """``--slide``: the window's presentation slide of the view, composed offscreen at --width × 9/16,
    with the file's ink on it when ``ink`` (--ink)."""
    from qkv_studio.export.files import export_file

    _with_slides(scene, view, args, lambda compose: export_file(
        scene, str(out), theme=args.theme, colormap=args.colormap, options=options, picture="slide",
        slide=compose(view.stage), ink=ink))


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
    from qkv_studio.cli.outputs import _check_output, _run_foreign  # (the window's command writes no file)

    args = _screenshot_parser().parse_args(argv)
    out = _check_output(args.output, (".png",), (args.file,))
    scene, view, _, _ = _prepare(args, keep_heads=True)  # (--head N: the window selects head N of the split)
    panels = tuple(args.panel or ())
    if getattr(args, "with_projections", None) is not None:  # the window shows the scene, the panel both
        scene = args.with_projections
        panels = panels if "unprojected" in panels else panels + ("unprojected",)
    model: ModelHead | None = None
    if args.model is not None:  # the window in real-model mode: the panel runs the text and shows the head
        layer, head = 0 if args.layer is None else args.layer, 0 if args.head is None else args.head
        model = ((args.model, args.text, layer, head, args.generate) if args.generate else
                 (args.model, args.text, layer, head))
    elif getattr(args, "qkv_head", None) is not None:  # a Q/K/V file: the model panel shows it as a model
        from qkv_studio.core.models.qkv_file import register

        source, layer, head_index = args.qkv_head
        model = (register(source).name, source.text, layer, head_index)
    try:
        from qkv_studio.app import screenshot
    except ImportError:
        raise CliError("screenshots are not available yet") from None
    if args.slide_size is not None and not args.presenter:
        raise CliError("--slide-size is the slide beside the presenter console: give --presenter too")
    extra: _ScreenshotExtra = {}  # (only what was asked for: the presenter console, the file's ink, a cell)
    if args.cell is not None:
        extra["cell"] = _cell_of(args, scene, view)
        view = view.with_query(args.cell[0])
    if args.presenter or args.ink:
        notes, ink = _annotations(args)
        if args.presenter:
            extra["presenter"] = args.slide_size or (1920, 1080)
            extra["notes"] = notes
        if args.ink:
            extra["ink"] = ink
    _run_foreign(lambda: screenshot(scene, str(out), size=args.size, presentation=args.presentation,
                                    theme=args.theme, panels=panels, model=model, view=view, **extra),
                 out, "screenshot")
    return 0


class _ScreenshotExtra(TypedDict, total=False):
    """The options of :func:`qkv_studio.app.screenshot` that a command line gives only when asked."""

    cell: int
    presenter: tuple[int, int]
    notes: Notes
    ink: Ink


def _annotations(args: argparse.Namespace) -> tuple[Notes, Ink]:
    """The notes and ink of the session file or preset named (none for a model's head)."""
    from qkv_studio.core.ink import EMPTY_INK, NO_NOTES
    from qkv_studio.core.presets import preset_document
    from qkv_studio.core.sessionfile import read_session

    if getattr(args, "model", None) is not None or getattr(args, "qkv_head", None) is not None \
            or _is_qkv_file(args):
        if args.ink:
            raise CliError("--ink needs a session file (*.qkv.json) or a preset: a model's head has no ink")
        return NO_NOTES, EMPTY_INK
    doc = getattr(args, "session_document", None)  # (read once by _load: a 64 MB file of ink takes seconds)
    if doc is None:
        doc = read_session(args.file) if args.file is not None else preset_document(args.preset or "lesson")
    return doc.notes, doc.ink


def _cell_of(args: argparse.Namespace, scene, view) -> int:
    """--cell ROW,COL: in range, at a stage that works a cell out; returns the key (the row becomes the query)."""
    from qkv_studio.core.cellwise import CELL_STAGES

    row, col = args.cell
    if row >= scene.n or col >= scene.n:
        raise CliError(f"--cell {row},{col} is outside the {scene.n}×{scene.n} grid (rows and columns 0–{scene.n - 1})")
    if view.stage not in CELL_STAGES:
        raise CliError(f"--cell works a cell of Q·Kᵀ out term by term: give --stage scores or scaled, "
                       f"not {view.stage}")
    return col


def _cmd_presets(argv: list[str]) -> int:
    _presets_parser().parse_args(argv)
    presets = list_presets()
    width = max((len(p.name) for p in presets), default=0)
    for p in presets:
        print(f"{p.name:<{width}}  {p.description}")
    return 0


DISPATCH = {"export": _cmd_export, "screenshot": _cmd_screenshot, "presets": _cmd_presets}
