"""The maths and data of QKV Studio: NumPy only, never Qt.

Public API (stable): ``compute``, ``AttentionResult``, ``Scene``, ``SceneError``, ``STAGES`` and
``STAGE_TITLES`` (from the stage registry :mod:`qkv_studio.core.stages`), ``read_session``,
``write_session``, ``SessionDocument``, ``SessionFileError``, ``list_presets``, ``load_preset``,
``preset_document``, and ``View`` (the selected query and stage, kept beside a Scene).
"""

from qkv_studio.core.attention import (
    AttentionResult,
    RowStats,
    causal_mask,
    compute,
    contributions,
    masked_softmax,
    project,
    resolve_mask,
    row_stats,
    softmax,
    update_rows,
)
from qkv_studio.core.presets import Preset, list_presets, load_preset, preset_document
from qkv_studio.core.scene import MAX_TOKENS, MAX_WIDTH, Scene, SceneError
from qkv_studio.core.sessionfile import (
    SessionDocument,
    SessionFileError,
    read_session,
    scene_from_dict,
    scene_to_dict,
    write_session,
)
from qkv_studio.core.stages import STAGE_TITLES, STAGES, StageSpec, stage_spec
from qkv_studio.core.view import View

__all__ = [
    "AttentionResult", "RowStats", "causal_mask", "compute", "contributions", "masked_softmax", "project",
    "resolve_mask", "row_stats", "softmax", "update_rows", "MAX_TOKENS", "MAX_WIDTH", "STAGE_TITLES", "STAGES", "Scene",
    "SceneError", "StageSpec", "stage_spec", "SessionFileError", "read_session", "scene_from_dict", "scene_to_dict",
    "write_session",
    "Preset", "list_presets", "load_preset", "preset_document", "SessionDocument", "View",
]
