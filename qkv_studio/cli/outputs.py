"""Where a command writes: the output name checked before any work, and a failed writer cleaned up."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qkv_studio.cli.errors import CliError, _brief, _os_message
from qkv_studio.cli.inputs import _check_name

if TYPE_CHECKING:
    from qkv_studio.export.formats import ExportFormat


def _export_format(out: Path) -> ExportFormat:
    """The registered format of an output name that :func:`_check_output` accepted for export."""
    from qkv_studio.export import formats

    fmt = formats.get(out.suffix)
    if fmt is None:  # (not after _check_output with formats.suffixes(): it takes registered endings only)
        raise CliError(f"cannot write '{_brief(str(out), 80)}': no format is registered for {out.suffix!r}")
    return fmt


def _check_output(out: str, suffixes: Sequence[str], inputs: Sequence[str | None] = ()) -> Path:
    """Refuse an output name with the wrong suffix, in a folder that cannot take it, that is a symbolic
    link, or that is one of the command's ``inputs`` (same file, hard link or symlink), before any work."""
    _check_name("output", out)
    p = Path(out)
    suffix = p.suffix.lower()
    if suffix not in suffixes:
        from qkv_studio.export.formats import spelled

        raise CliError(f"cannot write '{_brief(out, 80)}': the name must end in {spelled(list(suffixes))}")
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
