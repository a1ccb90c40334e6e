"""The numbers as file contents: a stage as CSV, every stage as JSON (no Qt: the command line writes
them without loading PySide6).  The layouts are :mod:`qkv_studio.core.numbers`'s (docs/file-formats.md)."""

from __future__ import annotations

from types import ModuleType

from qkv_studio.core import Scene


def _numbers() -> ModuleType:
    try:
        from qkv_studio.core import numbers
    except ImportError as exc:  # only if the module itself is missing; errors inside it propagate
        if exc.name not in ("qkv_studio.core.numbers", None):
            raise
        raise ValueError("CSV/JSON export needs qkv_studio.core.numbers, which is not installed") from exc
    return numbers


def csv_bytes(scene: Scene, stage: str) -> bytes:
    """The stage's n×n matrix as CSV (docs/file-formats.md's layout, full precision), UTF-8."""
    text: str = _numbers().stage_csv(scene, stage)
    return text.encode("utf-8")


def json_bytes(scene: Scene, *, query: int, stage: str, head: tuple[int, int] | None = None) -> bytes:
    """Every stage as JSON (tokens, scores, scaled, weights, output, the view's query and stage, options),
    UTF-8; ``head`` = (index, heads) when the scene is one head of a multi-head scene."""
    text: str = _numbers().json_text(scene, query=query, stage=stage, head=head)
    return text.encode("utf-8")
