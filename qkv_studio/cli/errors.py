"""How the command line fails: one line ``qkv-studio: error: …`` and an exit status."""

from __future__ import annotations

import argparse
from typing import NoReturn

from qkv_studio.core.sessionfile import display_name


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


def _os_message(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__
