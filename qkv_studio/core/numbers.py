"""The numbers behind a scene as CSV or JSON text (pure NumPy/JSON, no Qt).

``stage_csv`` writes the n×n matrix a stage shows (the same matrix as the heatmap: ``vectors`` shows
the scores, ``output`` the weights that blend the values); ``all_stages_json`` gives every stage at
once.  Numbers keep full float precision: each is written with ``repr(float)``, which reads back to
the identical double.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import numpy as np

from qkv_studio.core.scene import Scene
from qkv_studio.core.stages import RESULTS, STAGES

NUMBERS_FORMAT = "qkv-studio-numbers"
NUMBERS_VERSION = 1


def _cell(x: float) -> str:
    """Full precision; a masked score (−∞) is written ``-inf`` (``float("-inf")`` reads it back)."""
    return repr(float(x))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text_cell(text: str) -> str:
    """A text cell (a token) that a spreadsheet will not run as a formula (OWASP, "CSV Injection").

    Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a single quote in
    front (``=HYPERLINK(…)`` → ``'=HYPERLINK(…)``), which spreadsheets show as the text itself.  A
    token that is a plain number (``-1``, ``+2.5``) is left alone: it reads back as that number and no
    spreadsheet runs it.  The numbers of the matrix are never text cells, so they stay numeric.
    """
    if text.startswith(_FORMULA_START) and not _plain_number(text):
        return "'" + text
    return text


def _plain_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and not any(c.isspace() for c in text)


def stage_csv(scene: Scene, stage: str) -> str:
    """The stage's n×n matrix as CSV text.

    The first row is an empty cell then the key tokens; each further row is the query token then its
    values.  Masked score cells are ``-inf``; weights there are exactly ``0.0``.  Tokens that a
    spreadsheet would read as a formula are escaped (:func:`csv_text_cell`).
    """
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}: use one of {', '.join(STAGES)}")
    matrix = scene.result().stage(stage)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    tokens = [csv_text_cell(t) for t in scene.tokens]
    writer.writerow([""] + tokens)
    for token, row in zip(tokens, matrix, strict=False):
        writer.writerow([token] + [_cell(x) for x in row])
    return buf.getvalue()


def _nested(a: np.ndarray) -> list[list[float | None]]:
    """Nested lists of floats, ``None`` (JSON ``null``) where a value is not finite (a masked score)."""
    return [[float(x) if math.isfinite(x) else None for x in row] for row in a.tolist()]


def all_stages_json(scene: Scene, *, query: int, stage: str,
                    head: tuple[int, int] | None = None) -> dict[str, Any]:
    """Every stage of the scene as a JSON-ready object, with the view (``query``, ``stage``) it was exported from.

    Keys: ``format``/``version``; ``tokens``; the effective ``Q``, ``K``, ``V``; ``scores``, ``scaled``,
    ``weights`` (n×n) and ``output`` (n×d_v) as nested lists; ``query`` (``{"index", "token"}``),
    ``stage``, ``mask`` (``"none"``, ``"causal"`` or the boolean matrix, true = blocked), ``scale``,
    ``d_k``, ``d_v`` and ``fully_masked`` (indices of query rows whose every key is blocked); when the
    scene is one head of a multi-head scene, ``head`` = (index counted from 0, number of heads) adds
    ``"head": {"index", "heads"}``.

    JSON has no −∞, so a **masked cell of ``scores`` and ``scaled`` is ``null``**; its weight is ``0``.
    """
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < scene.n:
        raise ValueError(f"query {query} is out of range: there are {scene.n} tokens (0–{scene.n - 1})")
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}: use one of {', '.join(STAGES)}")
    r = scene.result()
    q, k, v = scene.qkv()
    obj = {
        "format": NUMBERS_FORMAT,
        "version": NUMBERS_VERSION,
        "tokens": list(scene.tokens),
        "Q": _nested(q),
        "K": _nested(k),
        "V": _nested(v),
        **{name: _nested(getattr(r, name)) for name in RESULTS},
        "query": {"index": int(query), "token": scene.tokens[query]},
        "stage": stage,
        "mask": scene.mask if isinstance(scene.mask, str) else np.asarray(scene.mask).tolist(),
        "scale": scene.scale,
        "d_k": scene.d_k,
        "d_v": scene.d_v,
        "fully_masked": [int(i) for i in np.flatnonzero(r.fully_masked)],
    }
    if head is not None:
        obj["head"] = {"index": int(head[0]), "heads": int(head[1])}
    return obj


def json_text(scene: Scene, *, query: int, stage: str, head: tuple[int, int] | None = None) -> str:
    """:func:`all_stages_json` as UTF-8-ready text, one matrix row per line (strict JSON, no NaN)."""
    obj = all_stages_json(scene, query=query, stage=stage, head=head)
    parts = []
    for key, val in obj.items():
        if isinstance(val, list) and val and isinstance(val[0], list):
            rows = ",\n    ".join(json.dumps(row, ensure_ascii=False, allow_nan=False) for row in val)
            parts.append(f"  {json.dumps(key)}: [\n    {rows}\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(val, ensure_ascii=False, allow_nan=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
