"""The view state: which query token is selected, which stage is shown and which head is looked at
closely — beside a Scene, never in it.

A :class:`~qkv_studio.core.scene.Scene` is content only (tokens, matrices, mask, options); what the
user is looking at in it is a :class:`View`.  The Session holds one of each; a session file stores
both (its ``query`` and ``stage`` keys are the view), so reading one gives a
:class:`~qkv_studio.core.sessionfile.SessionDocument` of the two.  Changing the view never makes a new
Scene, so the Scene's derived values (projection, attention) are never recomputed for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.stages import STAGES


@dataclass(frozen=True)
class View:
    """The selected query token (an index into the scene's tokens), the stage shown and the selected
    head of a multi-head split (0-based: the one the heads panel shows large; session files do not
    store it, and a split into fewer heads shows its last one)."""

    query: int = 0
    stage: str = "weights"
    head: int = 0

    def with_query(self, query: int) -> View:
        return self if query == self.query else replace(self, query=int(query))

    def with_stage(self, stage: str) -> View:
        return self if stage == self.stage else replace(self, stage=stage)

    def with_head(self, head: int) -> View:
        return self if head == self.head else replace(self, head=int(head))

    def check(self, scene: Scene) -> View:
        """This view, if it fits ``scene``; raises :class:`SceneError` naming ``query`` or ``stage``."""
        q, n = self.query, scene.n
        if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not 0 <= q < n:
            raise SceneError("query", f"query {q} is out of range: there are {n} tokens (0–{n - 1})")
        if self.stage not in STAGES:
            raise SceneError("stage", f"unknown stage {self.stage!r}: use one of {', '.join(STAGES)}")
        return self

    def fitted(self, scene: Scene) -> View:
        """This view with the query moved into ``scene``'s tokens (the last one when it has fewer) and the
        head into its heads (the last one when it has fewer)."""
        query = min(max(int(self.query), 0), scene.n - 1)
        stage = self.stage if self.stage in STAGES else View.stage
        head = min(max(int(self.head), 0), scene.heads - 1)
        if (query, stage, head) == (self.query, self.stage, self.head):
            return self
        return replace(self, query=query, stage=stage, head=head)


def shown_scene(scene: Scene, head: int) -> Scene:
    """The scene the views show: for a scene split into heads, head ``head``'s own (its columns of Q, K,
    V, as :meth:`Scene.head_scene`; the last head when there are fewer), since the unsplit attention of
    the full width is what no head computes; otherwise ``scene`` itself.  Cached per scene and head."""
    if scene.heads == 1:
        return scene
    return scene.head_scene(min(max(int(head), 0), scene.heads - 1))


_SPLIT_BY = {"Q": "k", "K": "k", "Wq": "k", "Wk": "k", "V": "v", "Wv": "v"}


def head_block(scene: Scene, matrix: str, head: int) -> range | None:
    """The columns of ``matrix`` (Q, K, V or their W) that head ``head`` of a split scene takes; None for
    a scene of one head and for the matrices that are not split (X, W^O)."""
    part = _SPLIT_BY.get(matrix)
    if scene.heads == 1 or part is None:
        return None
    width = (scene.d_k if part == "k" else scene.d_v) // scene.heads
    head = min(max(int(head), 0), scene.heads - 1)
    return range(head * width, (head + 1) * width)


def query_after_insert(query: int, index: int, n: int) -> int:
    """The selected query after a token is inserted before ``index`` in ``n`` tokens (it stays on its token)."""
    index = max(0, min(index, n))
    return query + 1 if index <= query else query


def query_after_remove(query: int, index: int, n: int) -> int:
    """The selected query after token ``index`` of ``n`` is removed (the next token when it was the one)."""
    q = query - 1 if index < query else query
    return min(max(q, 0), n - 2)
