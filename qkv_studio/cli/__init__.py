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

The package: :mod:`~qkv_studio.cli.options` (the parsers), :mod:`~qkv_studio.cli.inputs` (the scene a
command reads), :mod:`~qkv_studio.cli.outputs` (where it writes), :mod:`~qkv_studio.cli.commands` (the
commands) and :mod:`~qkv_studio.cli.errors` (one-line failures); :func:`main` here dispatches.
"""

from __future__ import annotations

import qkv_studio

qkv_studio._pause_gc_for_startup()  # before the heavy imports (see qkv_studio/__init__.py)

import os
import sys

from qkv_studio.cli.commands import DISPATCH, cmd_window
from qkv_studio.cli.errors import CliError
from qkv_studio.cli.options import PROG
from qkv_studio.core import progress
from qkv_studio.core.safe_read import UnreadableFile
from qkv_studio.core.scene import SceneError
from qkv_studio.core.sessionfile import SessionFileError

__all__ = ["CliError", "main"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "unknown error"


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in DISPATCH:
            qkv_studio._resume_gc()  # the window resumes it itself, after its own imports
            with progress.terminal(sys.stderr):  # (a long export says how far it is, on a terminal only)
                return DISPATCH[argv[0]](argv[1:])
        return cmd_window(argv)
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
