"""The Real model panel, in parts with one job each.

* :mod:`.panel` — :class:`ModelPanel`, the panel itself: the model picker, sentence, layer/head boxes,
  bound to a :class:`ModelRunState`; it composes a :class:`~.panel_jobs.PanelJobs` (Run, Next token,
  progress, Cancel, sampling) and a :class:`~.panel_texts.PanelTexts` (title, captions, status line), each
  given only the widgets and state it uses;
* :mod:`.run_state` — :class:`ModelRunState`, the chosen model, run, layer and head (no widget), and how a
  head reaches the Session;
* :mod:`.steps` — the undo steps: a head shown over the user's edits, a generated token;
* :mod:`.worker` — :class:`ModelWorker`, model runs on a worker thread with progress and cancel;
* :mod:`.next_token` — :class:`NextTokenBars`, a causal model's most likely next tokens;
* :mod:`.head_grid` — :class:`HeadGrid`, a layer's heads as small multiples;
* :mod:`.qk_projection` — :class:`QKProjection`, one head's queries and keys in 2-D.

The models come from :mod:`qkv_studio.core.models.registry`.
"""

from qkv_studio.ui.lesson.model.head_grid import HeadGrid
from qkv_studio.ui.lesson.model.panel import DEFAULT_TEXT, ModelPanel
from qkv_studio.ui.lesson.model.qk_projection import QKProjection
from qkv_studio.ui.lesson.model.run_state import ModelRunState, edit_text

__all__ = ["DEFAULT_TEXT", "HeadGrid", "ModelPanel", "ModelRunState", "QKProjection", "edit_text"]
